"""Whether a model can be called with what the server holds: an endpoint, a key, or the provider's key
in the environment. `/readyz` reports the default model `unconfigured` when none of them is there, and
`reactstep ask` says so before any call."""

import threading
from concurrent.futures import Future, ThreadPoolExecutor

from reactstep.service.llm.gateway import missing_provider_keys, provider_of, warm_up
from reactstep.service.settings import Settings

EXAMPLE = "REACTSTEP_LLM_MODEL=openai/my-model REACTSTEP_LLM_API_BASE=http://127.0.0.1:8080/v1"


def llm_problem(settings: Settings, model: str | None = None) -> str | None:
    """Why `model` (the default model when None) cannot be called with the server's settings, or None."""
    model = model or settings.llm_model
    if settings.llm_api_base:
        return None  # an OpenAI-compatible endpoint; it may want no key at all
    same_provider = provider_of(model) == provider_of(settings.llm_model)
    if settings.llm_api_key is not None and same_provider:
        return None
    missing = missing_provider_keys(model)
    if not missing:
        return None
    keys = " or ".join(["REACTSTEP_LLM_API_KEY", *missing] if same_provider else missing)
    return (
        f"no LLM is configured for {model}: set REACTSTEP_LLM_MODEL and REACTSTEP_LLM_API_BASE for an "
        f"OpenAI-compatible server (e.g. {EXAMPLE}), or {keys} for the hosted model"
    )


class DefaultLLMCheck:
    """/readyz's `llm` verdict when nothing is probed: `configured` or `unconfigured`. The first
    answer imports litellm (seconds, more on a loaded machine), so a serving app makes it on a thread
    of its own as it starts and reads `warming` until it is in; an app run without its lifespan
    (in-process) answers at once."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._lock = threading.Lock()
        self._serving = False
        self._future: Future[str] | None = None

    def serve(self) -> "Future[str]":
        """Begin the verdict in the background, and make it there from now on (the app's start calls
        this), litellm loaded first: the first step does not pay for it (1.4 s of a 1.6 s first step)."""
        self._serving = True
        return self._started()

    def verdict(self, wait_s: float) -> str:
        """The verdict; when serving, waiting at most `wait_s` for it (`warming` after that)."""
        if not self._serving:
            return self._verdict()
        try:
            return self._started().result(timeout=max(wait_s, 0.0))
        except TimeoutError:
            return "warming"

    def warm(self, wait_s: float) -> bool:
        """Whether litellm is loaded (always, in-process), waiting at most `wait_s` for it."""
        if not self._serving or self._future is None:
            return True
        try:
            self._future.result(timeout=max(wait_s, 0.0))
        except TimeoutError:
            return False
        return True

    def _started(self) -> "Future[str]":
        """The background verdict, begun now if it was not yet."""
        with self._lock:
            if self._future is None:
                pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="llm-check")
                self._future = pool.submit(self._warm_verdict)
                pool.shutdown(wait=False)
            return self._future

    def _warm_verdict(self) -> str:
        warm_up()  # imported anyway by the verdict for a hosted model, not for an api_base: now by both
        return self._verdict()

    def _verdict(self) -> str:
        return "unconfigured" if llm_problem(self._settings) else "configured"
