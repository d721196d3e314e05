"""MCP: the tool registry for IDE agents as the official SDK's server, over stdio and behind
/mcp/{project_id}; the one folder that imports the `mcp` SDK."""
