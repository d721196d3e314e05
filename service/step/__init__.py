"""One ReAct step: prompting, budget, the outcome of a reply, loop guard, native tools and streaming."""
