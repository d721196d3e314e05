"""Every word the model reads, as Jinja2 templates beside this file."""

from pathlib import Path

PROMPTS_DIR = Path(__file__).parent
