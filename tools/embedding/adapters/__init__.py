"""The code-search adapters: LoRA deltas merged into MiniLM's weights at first use (lora.py)."""
