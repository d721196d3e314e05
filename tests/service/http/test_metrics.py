"""GET /metrics: what the app counted, per app, in Prometheus' text format, read back with
prometheus_client's own parser."""

from collections.abc import Callable

import pytest
from prometheus_client.parser import text_string_to_metric_families
from starlette.testclient import TestClient

from reactstep.client.traces.scripted_llm import Fault, ScriptedLLMServer
from reactstep.service.http.auth import key_entry

REACT, EXECUTE = "/api/agent/react_step", "/api/agent/execute_action"
STEP = {"project_id": "demo", "session_id": "s", "user_query": "What does main() return?"}
SERVICE_KEY = "rsk_metrics-key-0123456789abcdef"


def action(tool: str, **args: str) -> dict[str, object]:
    return {"project_id": "demo", "session_id": "s", "tool_name": tool, "tool_args": args}


def samples(client: TestClient, **headers: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample /metrics shows: (name, labels) -> value."""
    response = client.get("/metrics", headers=headers)
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
    }


def value(
    found: dict[tuple[str, frozenset[tuple[str, str]]], float], name: str, **labels: str
) -> float | None:
    return found.get((name, frozenset(labels.items())))


def test_requests_are_counted_by_route_template_and_status(make_client: Callable[..., TestClient]) -> None:
    client = make_client()
    assert client.get("/api/projects/demo/files/src/app.py").status_code == 200
    assert client.get("/api/projects/demo/files/src/nope.py").status_code == 404
    assert client.get("/no/such/route").status_code == 404
    found = samples(client)
    route = "/api/projects/{project_id}/files/{path}"
    assert value(found, "reactstep_http_requests_total", method="GET", route=route, status="200") == 1
    assert value(found, "reactstep_http_requests_total", method="GET", route=route, status="404") == 1
    assert value(found, "reactstep_http_requests_total", method="GET", route="unmatched", status="404") == 1
    histogram = "reactstep_http_request_duration_seconds_count"
    assert value(found, histogram, method="GET", route=route, status="200") == 1
    # the scrape itself is counted once it is answered, so it is not in its own answer
    assert value(found, "reactstep_http_requests_total", method="GET", route="/metrics", status="200") is None


@pytest.mark.parametrize(
    ("method", "key", "status"), [("POST", False, 401), ("BREW", False, 401), ("GET", True, 405)]
)
def test_a_refused_request_counts_under_its_route(
    make_client: Callable[..., TestClient], method: str, key: bool, status: int
) -> None:
    client = make_client(api_keys=[key_entry(SERVICE_KEY, "demo")])
    bearer = {"authorization": f"Bearer {SERVICE_KEY}"}
    assert client.request(method, REACT, headers=bearer if key else {}).status_code == status
    found = samples(client, **bearer)
    label = method if method != "BREW" else "other"  # any token may be a method: labels stay a closed set
    assert value(found, "reactstep_http_requests_total", method=label, route=REACT, status=str(status)) == 1


def test_tool_runs_and_their_errors_are_counted_per_tool(make_client: Callable[..., TestClient]) -> None:
    client = make_client()
    for body in (
        action("read_file", file_path="src/app.py"),
        action("read_file", file_path="src/missing.py"),
        action("list_files"),
        action("no_such_tool"),
    ):
        assert client.post(EXECUTE, json=body).status_code == 200
    found = samples(client)
    assert value(found, "reactstep_tool_duration_seconds_count", tool="read_file") == 2
    assert value(found, "reactstep_tool_errors_total", tool="read_file") == 1
    assert value(found, "reactstep_tool_duration_seconds_count", tool="list_files") == 1
    assert value(found, "reactstep_tool_errors_total", tool="list_files") is None
    assert value(found, "reactstep_tool_errors_total", tool="unknown") == 1  # never the name sent


def test_llm_attempts_retries_and_tokens_are_counted_per_provider(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    llm_server.push(Fault(status=503, retry_after="0"), "Thought: done\nFinal Answer: 42")
    client = make_client(llm_max_retries=2)
    response = client.post(REACT, json=STEP)
    assert response.status_code == 200
    usage = response.json()["usage"]
    found = samples(client)
    calls = "reactstep_llm_call_duration_seconds_count"
    assert value(found, calls, provider="openai", outcome="llm_unavailable") == 1
    assert value(found, calls, provider="openai", outcome="ok") == 1
    assert value(found, "reactstep_llm_retries_total", provider="openai") == 1
    assert (
        value(found, "reactstep_llm_tokens_total", provider="openai", kind="prompt") == usage["prompt_tokens"]
    )
    completion = value(found, "reactstep_llm_tokens_total", provider="openai", kind="completion")
    assert completion == usage["completion_tokens"] > 0


def test_what_priced_replies_cost_is_counted_per_provider(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    llm_server.push("Thought: done\nFinal Answer: 42", "Thought: done\nFinal Answer: 42")
    client = make_client()
    unpriced = client.post(REACT, json=STEP)  # openai/scripted: no price in litellm's table
    assert "cost_usd" not in unpriced.json()["usage"]
    assert value(samples(client), "reactstep_llm_cost_usd_total", provider="openai") is None
    priced = client.post(REACT, json={**STEP, "llm_config": {"model": "openai/gpt-4o-mini"}})
    usage = priced.json()["usage"]
    assert usage["cost_usd"] == round(
        usage["prompt_tokens"] * 0.15e-6 + usage["completion_tokens"] * 0.6e-6, 8
    )
    found = value(samples(client), "reactstep_llm_cost_usd_total", provider="openai")
    assert found == pytest.approx(usage["cost_usd"], abs=1e-9)


def test_index_runs_and_embedded_chunks_are_counted(make_client: Callable[..., TestClient]) -> None:
    client = make_client()
    first = client.post("/api/projects/demo/index", json={})
    assert first.status_code == 200
    assert client.post("/api/projects/nope/index", json={}).status_code == 404
    found = samples(client)
    assert value(found, "reactstep_index_jobs_total", kind="run", outcome="ok") == 1
    assert value(found, "reactstep_index_jobs_total", kind="run", outcome="project_not_found") == 1
    embedded = value(found, "reactstep_index_chunks_embedded_total", kind="run")
    assert embedded == first.json()["embedded"] > 0


def test_admission_refusals_are_counted_by_reason(make_client: Callable[..., TestClient]) -> None:
    client = make_client(max_body_bytes=100)
    chunks = iter([b'{"project_id": "demo", ', b" " * 200])  # chunked: no length to refuse it by
    response = client.post(EXECUTE, content=chunks, headers={"content-type": "application/json"})
    assert response.status_code == 413
    found = samples(client)
    assert value(found, "reactstep_admission_rejections_total", reason="payload_too_large") == 1
    assert value(found, "reactstep_admission_active") == 0
    assert value(found, "reactstep_admission_waiting") == 0


def test_each_app_counts_only_its_own_requests(make_client: Callable[..., TestClient]) -> None:
    first, second = make_client(), make_client()
    assert first.get("/healthz").status_code == 200
    healthz = {"method": "GET", "route": "/healthz", "status": "200"}
    assert value(samples(first), "reactstep_http_requests_total", **healthz) == 1
    assert value(samples(second), "reactstep_http_requests_total", **healthz) is None


@pytest.mark.parametrize(
    ("headers", "status"), [({}, 401), ({"authorization": f"Bearer {SERVICE_KEY}"}, 200)]
)
def test_metrics_need_a_service_key_when_keys_are_configured(
    make_client: Callable[..., TestClient], headers: dict[str, str], status: int
) -> None:
    client = make_client(api_keys=[key_entry(SERVICE_KEY, "demo")])  # any key: it names no project
    assert client.get("/metrics", headers=headers).status_code == status
