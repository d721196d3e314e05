"""The client side, apart from the server: the CLI, the reference loop, its shell tools, traces and replay."""
