"""MCP: the tool registry for IDE agents as the SDK's server, over stdio and behind /mcp/{project_id}."""
