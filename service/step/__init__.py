"""One ReAct step, in the order it happens: prepare, prompt and fit, call, interpret, stream."""
