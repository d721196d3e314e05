"""The reply grammar: a model's raw reply read into one tool call or a final answer, never evaluated."""
