"""What /readyz reports: each back-end, ready or why not."""

from typing import Any

from tools.errors import StoreUnavailable
from tools.storage import ObjectStore


def check_readiness(store: ObjectStore) -> dict[str, Any]:
    """Probe every back-end; the service is ready when all answer."""
    checks: dict[str, str] = {}
    try:
        store.check()
        checks["storage"] = "ok"
    except StoreUnavailable as exc:
        checks["storage"] = f"unavailable: {exc}"
    ready = all(value == "ok" for value in checks.values())
    return {"status": "ready" if ready else "unavailable", "checks": checks}
