"""The LLM gateway (the only litellm importer), its chat completions, clients, config, network guard and
embeddings."""
