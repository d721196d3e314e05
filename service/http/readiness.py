"""What /readyz reports: each back-end, ready or why not, within a fixed deadline.

    storage     the object store answers (local dir writable | S3 bucket HEAD)
    vectors     a Qdrant server answers (only with REACTSTEP_VECTOR_BACKEND=qdrant; the embedded
                store is opened by the first search, so `ask` and `upload` can share its directory)
    llm         the default LLM endpoint answers HTTP, any status (when REACTSTEP_LLM_API_BASE is set);
                `configured` for a hosted model with its key (not probed: no traffic to the provider);
                `unconfigured` when neither is there (requests must then bring their own llm_config)
    embeddings  the default remote embedding endpoint answers HTTP (only when its api_base is set)
Probes run side by side; one that has not answered by READINESS_TIMEOUT_S is unavailable.
The llm verdict without a probe needs litellm's tables: a serving app loads them in the background as it
starts and reads `warming` (status `warming`, 503) until they are in, probed endpoint or not, so even the
first /readyz answers within the deadline and a step after `ready` does not wait for them.
The service is ready when every check is `ok`, `configured` or `unconfigured`.
"""

import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Literal

import httpx

from reactstep.contract.health import Readiness
from reactstep.service.errors import ServiceError
from reactstep.service.redaction import scrub
from reactstep.service.runtime import Runtime

Probe = Callable[[], None]
READY = ("ok", "configured", "unconfigured")
READINESS_TIMEOUT_S = 2.0  # within a load balancer's usual probe timeout (often 5 s), with room to spare
WARMING = "warming"


def check_readiness(runtime: Runtime) -> Readiness:
    """Probe every configured back-end; the service is ready when all answer."""
    probes = _probes(runtime)
    timeout_s = READINESS_TIMEOUT_S
    pool = ThreadPoolExecutor(max_workers=len(probes), thread_name_prefix="readyz")
    try:
        futures = {name: pool.submit(_outcome, probe) for name, probe in probes.items()}
        deadline = time.monotonic() + timeout_s
        checks = {name: _result(future, deadline, timeout_s) for name, future in futures.items()}
    finally:
        pool.shutdown(wait=False, cancel_futures=True)  # a hung probe must not hold the answer
    if "llm" not in checks:
        checks["llm"] = runtime.llm_check.verdict(deadline - time.monotonic())
    elif checks["llm"] == "ok" and not runtime.llm_check.warm(deadline - time.monotonic()):
        checks["llm"] = WARMING  # the endpoint answers, but a step would still wait for litellm
    return Readiness(status=_status(checks.values()), checks=checks)


def _status(checks: Iterable[str]) -> Literal["ready", "unavailable", "warming"]:
    """ready when every check is; warming when the only ones not ready are warming."""
    waiting = [value for value in checks if value not in READY]
    if not waiting:
        return "ready"
    return "warming" if all(value == WARMING for value in waiting) else "unavailable"


def _probes(runtime: Runtime) -> dict[str, Probe]:
    settings = runtime.settings
    probes: dict[str, Probe] = {"storage": runtime.store.check}
    if settings.vector_backend == "qdrant":
        probes["vectors"] = lambda: runtime.vectors.get().check()
    if settings.llm_api_base:
        probes["llm"] = _http_probe(settings.llm_api_base, READINESS_TIMEOUT_S)
    if settings.embedding_api_base and not settings.embedding_model.startswith("local/"):
        probes["embeddings"] = _http_probe(settings.embedding_api_base, READINESS_TIMEOUT_S)
    return probes


def _http_probe(api_base: str, timeout_s: float) -> Probe:
    def probe() -> None:
        # Any answer, a 401 or 404 included, shows the endpoint is up; only silence is not.
        httpx.get(api_base.rstrip("/") + "/models", timeout=timeout_s, follow_redirects=False)

    return probe


def _outcome(probe: Probe) -> str:
    try:
        probe()
    except ServiceError as exc:  # a back-end's own words: str() of a store's or vector store's failure
        return f"unavailable: {scrub(str(exc))[:300]}"
    except httpx.TransportError as exc:  # httpx names the cause ("[Errno 111] Connection refused")
        return f"unavailable: {scrub(str(exc))[:300] or type(exc).__name__}"
    except Exception as exc:  # a probe that fails some other way is still a dependency not ready
        return f"unavailable: {type(exc).__name__}"
    return "ok"


def _result(future: "Future[str]", deadline: float, timeout_s: float) -> str:
    try:
        return future.result(timeout=max(deadline - time.monotonic(), 0.0))
    except TimeoutError:
        return f"unavailable: no answer within {timeout_s:g}s"
