"""The ReAct system prompt as an MCP prompt: the words react_step sends, the question."""

from reactstep.service.step.prompt import PromptParts, render_messages


def react_prompt(question: str) -> str:
    """The system prompt and the question as one text: MCP prompts have no system role."""
    parts = PromptParts(manifest="", user_query=question, final_step=False, native=True)
    return "\n\n".join(str(message["content"]) for message in render_messages(parts, []))
