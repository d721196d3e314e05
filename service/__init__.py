"""The reactstep server: the HTTP app and MCP, the ReAct step, the reply grammar, the LLM gateway, the
workspace over the tools, and the commands a server installs (`reactstep serve`, `hash-key`)."""
