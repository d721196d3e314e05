"""Everything a tool touches: the registry, object storage, and one module per tool."""
