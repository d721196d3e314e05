"""The long-lived parts one app instance works with, chosen once at start-up."""

from dataclasses import dataclass

from service.llm import LiteLLMGateway, LLMGateway
from service.settings import Settings
from tools.catalog import default_registry
from tools.registry import ToolLimits, ToolRegistry
from tools.storage import ObjectStore, open_store


@dataclass(frozen=True)
class Runtime:
    """Settings and back-ends; nothing here holds per-session state."""

    settings: Settings
    llm: LLMGateway
    store: ObjectStore
    registry: ToolRegistry

    @property
    def limits(self) -> ToolLimits:
        """The tool limits the settings ask for."""
        return ToolLimits(
            read_file_max_lines=self.settings.read_file_max_lines,
            read_file_max_bytes=self.settings.read_file_max_bytes,
            list_files_max_entries=self.settings.list_files_max_entries,
        )


def build_runtime(
    settings: Settings,
    llm: LLMGateway | None = None,
    store: ObjectStore | None = None,
    registry: ToolRegistry | None = None,
) -> Runtime:
    """Real back-ends from the settings, unless the caller passes its own."""
    return Runtime(
        settings=settings,
        llm=llm or LiteLLMGateway(),
        store=store or open_store(settings),
        registry=registry or default_registry(),
    )
