"""reactstep's HTTP service: the app, the ReAct step, the LLM gateway, the CLI and the reference client."""
