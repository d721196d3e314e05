"""MCP: the tool registry for IDE agents, over streamable HTTP at /mcp/{project_id} and over stdio."""
