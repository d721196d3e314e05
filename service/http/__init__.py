"""The HTTP face of the server: the app, its endpoints and /mcp, bodies, keys, admission and serving."""
