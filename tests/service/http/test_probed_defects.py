"""Defects an operator's probing found, each pinned: Allow on 405, Retry-After passed on, integral
floats for integers, and S3 attempts counted as configured."""

import socket
from collections.abc import Callable
from typing import Any

import pytest
from botocore.exceptions import EndpointConnectionError
from pydantic import SecretStr
from starlette.testclient import TestClient

from reactstep.client.traces.scripted_llm import Fault, ScriptedLLMServer
from reactstep.tools.store.s3_clients import S3Config, make_s3_client
from tests.service.step.test_react_step import step_body

REACT = "/api/agent/react_step"


def test_a_wrong_method_answers_405_with_the_methods_allowed(make_client: Callable[..., TestClient]) -> None:
    response = make_client().get(REACT)
    assert response.status_code == 405
    assert response.headers["allow"] == "POST"
    assert response.json()["error"]["code"] == "method_not_allowed"


def test_a_rate_limited_provider_s_retry_after_reaches_the_client(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    llm_server.push(Fault(status=429, retry_after="7"))
    response = make_client(llm_max_retries=0).post(REACT, json=step_body())
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "llm_rate_limited"
    assert response.headers["retry-after"] == "7"


def test_a_503_without_the_provider_s_retry_after_sends_none(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer
) -> None:
    llm_server.push(Fault(status=429))
    response = make_client(llm_max_retries=0).post(REACT, json=step_body())
    assert (response.status_code, response.json()["error"]["code"]) == (503, "llm_rate_limited")
    assert "retry-after" not in response.headers


@pytest.mark.parametrize(
    ("value", "status"),
    [(0.0, 200), (0, 200), (0.5, 422), ("0", 422), (False, 422)],
)
def test_an_integral_float_is_an_integer_as_json_schema_says(
    make_client: Callable[..., TestClient], llm_server: ScriptedLLMServer, value: Any, status: int
) -> None:
    response = make_client().post(REACT, json=step_body(max_iterations_left=value))
    assert response.status_code == status
    if status == 200:
        assert response.json()["status"] == "max_iterations_reached"
    assert llm_server.requests == []


def test_s3_makes_exactly_the_configured_number_of_attempts() -> None:
    with socket.socket() as probe:  # a loopback port nobody listens on: every attempt is refused
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = S3Config(
        endpoint_url=f"http://127.0.0.1:{port}",
        region="us-east-1",
        access_key_id=SecretStr("test"),
        secret_access_key=SecretStr("test"),
        max_attempts=2,
    )
    client = make_s3_client(config)
    attempts: list[str] = []
    client.meta.events.register("before-send.s3", lambda **kwargs: attempts.append(kwargs["request"].url))
    with pytest.raises(EndpointConnectionError):
        client.head_object(Bucket="reactstep", Key="projects/p/a.py")
    assert len(attempts) == 2
