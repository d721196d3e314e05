"""Budgets per service key, against `reactstep serve` processes and the scripted OpenAI server on
loopback (it counts the calls that reach it): a step that would pass a key's limit is refused with
429 before the model is called; the answer carries the key's budget and the step's cost; a lent LLM
key is not counted; two replicas on one S3 bucket stay within the documented bound together."""

import hashlib
import json
import os
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest

from reactstep.client.traces.scripted_llm import Reply, ScriptedLLMServer
from reactstep.service.backends import s3_client
from reactstep.service.settings import Settings
from tests.served import serving

PRICED = "openai/gpt-4o-mini"  # litellm's offline table: $0.15 / $0.60 per million tokens
UNPRICED = "openai/scripted"  # no price in the table: counted in tokens only
PROMPT, COMPLETION, MAX_TOKENS = 1000, 50, 50  # what the scripted server reports; the steps' cap
ANSWER = "Thought: done\nFinal Answer: 42"


def make_key(name: str) -> str:
    return f"rsk_{name}-{uuid.uuid4().hex}"


def entry(key: str, limits: str = "") -> str:
    digest = hashlib.sha256(key.encode()).hexdigest()
    return f"sha256:{digest}:*" + (f":{limits}" if limits else "")


KEYS = {
    "tokens": (
        make_key("tokens"),
        "tokens_per_day=2500",
    ),  # two steps of 1050 (each holds ~1330 first), not a third
    "rate": (make_key("rate"), "requests_per_minute=2"),
    "usd": (make_key("usd"), "usd_per_day=0.0005"),
    "unpriced": (make_key("unpriced"), "tokens_per_day=100000,usd_per_day=0.000001"),
    "stream": (make_key("stream"), "tokens_per_day=1500"),
    "lent": (make_key("lent"), "tokens_per_day=1"),  # no step fits in it
    "cancel": (make_key("cancel"), "tokens_per_day=2000"),  # one step's most, not two
    "free": (make_key("free"), ""),
}


def base_env(llm: ScriptedLLMServer, data_dir: Path, keys: list[str]) -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if not name.startswith("REACTSTEP_")}
    return env | {
        "REACTSTEP_DATA_DIR": str(data_dir),
        "REACTSTEP_LLM_MODEL": PRICED,
        "REACTSTEP_LLM_API_BASE": llm.base_url,
        "REACTSTEP_LLM_TIMEOUT_S": "20",
        "REACTSTEP_LLM_MAX_RETRIES": "0",
        "REACTSTEP_API_KEYS": json.dumps(keys),
        "REACTSTEP_APPROVAL_SECRET": "budgets-secret-0123456789abcdef",
        "HF_HUB_OFFLINE": "1",
    }


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as server:
        yield server


@pytest.fixture(scope="module")
def server(llm: ScriptedLLMServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One `reactstep serve` on a local store, with every key of KEYS, and a project 'demo'."""
    env = base_env(llm, tmp_path_factory.mktemp("budgets"), [entry(*pair) for pair in KEYS.values()])
    with serving(env) as (url, _):
        created = httpx.put(f"{url}/api/projects/demo", headers=auth(KEYS["free"][0]), timeout=30)
        assert created.status_code == 201, created.text
        yield url


def auth(key: str) -> dict[str, str]:
    return {"authorization": f"Bearer {key}"}


def reply(prompt: int = PROMPT) -> Reply:
    return Reply(text=ANSWER, prompt_tokens=prompt, completion_tokens=COMPLETION)


def step(url: str, key: str, model: str = PRICED, **extra: Any) -> httpx.Response:
    body = {
        "project_id": "demo",
        "session_id": "budget",
        "user_query": "what is the answer?",
        "llm_config": {"model": model, "max_tokens": MAX_TOKENS},
        **extra,
    }
    return httpx.post(f"{url}/api/agent/react_step", json=body, headers=auth(key), timeout=60)


def seconds_to_midnight() -> float:
    return 86400 - time.time() % 86400


def test_a_key_at_its_token_budget_is_refused_before_the_model_is_called(
    server: str, llm: ScriptedLLMServer
) -> None:
    key = KEYS["tokens"][0]
    llm.push(reply(), reply())
    first, second = step(server, key), step(server, key)
    assert [first.status_code, second.status_code] == [200, 200], second.text
    assert first.json()["budget"]["tokens_left"] == 2500 - 1050
    assert second.json()["budget"] == {
        "tokens_left": 400,
        "resets_at": time.strftime("%Y-%m-%dT00:00:00Z", time.gmtime(time.time() + 86400)),
        "priced": True,
    }
    calls = len(llm.requests)
    refused = step(server, key)
    assert refused.status_code == 429
    error = refused.json()["error"]
    assert error["code"] == "budget_exhausted"
    assert error["details"]["limit"] == "tokens_per_day"
    assert error["details"]["value"] == 2500
    assert error["details"]["spent"] == 2100
    assert "tokens_per_day is 2500" in error["message"]
    # nothing frees the budget before midnight UTC: Retry-After says so (to within the test's own time)
    assert abs(int(refused.headers["retry-after"]) - seconds_to_midnight()) < 5
    assert len(llm.requests) == calls  # the model was not asked


def test_a_streamed_step_at_its_budget_is_refused_with_json_and_a_streamed_one_reports_it(
    server: str, llm: ScriptedLLMServer
) -> None:
    key = KEYS["stream"][0]
    llm.push(reply())
    with httpx.stream(
        "POST",
        f"{server}/api/agent/react_step",
        json={
            "project_id": "demo",
            "session_id": "s",
            "user_query": "q",
            "stream": True,
            "llm_config": {"max_tokens": MAX_TOKENS},
        },
        headers=auth(key),
        timeout=60,
    ) as answer:
        events = answer.read().decode()
    result = json.loads(events.split("event: result\ndata: ")[1].split("\n")[0])
    assert result["budget"]["tokens_left"] == 1500 - 1050
    calls = len(llm.requests)
    refused = step(server, key, stream=True)
    assert (refused.status_code, refused.headers["content-type"]) == (429, "application/json")
    assert refused.json()["error"]["code"] == "budget_exhausted"
    assert len(llm.requests) == calls


def test_a_stream_the_client_closes_counts_its_most(server: str, llm: ScriptedLLMServer) -> None:
    """The provider may bill a call the client walked away from: it is counted at the step's most."""
    key = KEYS["cancel"][0]
    llm.push(Reply(text="Thought: " + "slowly " * 40 + "\nFinal Answer: 42", chunk_delay_s=0.1))
    body = {"project_id": "demo", "session_id": "budget", "user_query": "what is the answer?", "stream": True}
    body["llm_config"] = {"model": PRICED, "max_tokens": MAX_TOKENS}
    with httpx.stream(
        "POST", f"{server}/api/agent/react_step", json=body, headers=auth(key), timeout=60
    ) as answer:
        for line in answer.iter_lines():
            if line.startswith("event: thought"):
                break  # the client leaves while the model is still writing
    deadline = time.monotonic() + 10
    while (refused := step(server, key)).json()["error"]["details"]["held"]:  # it settles once closed
        assert time.monotonic() < deadline, refused.text
        time.sleep(0.2)
    assert refused.status_code == 429
    details = refused.json()["error"]["details"]
    assert details["spent"] == details["step_most"]  # the same prompt: the closed step's most was counted


def test_requests_per_minute(server: str, llm: ScriptedLLMServer) -> None:
    key = KEYS["rate"][0]
    if time.time() % 60 > 45:  # the three requests fall within one minute of the clock
        time.sleep(61 - time.time() % 60)
    llm.push(reply(), reply())
    answers = [step(server, key) for _ in range(2)]
    assert [answer.json()["budget"]["requests_left"] for answer in answers] == [1, 0]
    calls = len(llm.requests)
    refused = step(server, key)
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "rate_limited"
    assert refused.json()["error"]["details"] == {"limit": "requests_per_minute", "value": 2}
    assert 1 <= int(refused.headers["retry-after"]) <= 60 - int(time.time() % 60) + 1
    assert len(llm.requests) == calls


def test_dollars_at_litellm_prices(server: str, llm: ScriptedLLMServer) -> None:
    key = KEYS["usd"][0]
    llm.push(reply(), reply())
    first, second = step(server, key), step(server, key)
    cost = PROMPT * 0.15e-6 + COMPLETION * 0.6e-6  # 0.00018
    assert first.json()["usage"]["cost_usd"] == pytest.approx(cost, abs=1e-12)
    assert first.json()["budget"]["usd_left"] == pytest.approx(0.0005 - cost, abs=1e-9)
    assert second.json()["budget"]["usd_left"] == pytest.approx(0.0005 - 2 * cost, abs=1e-9)
    calls = len(llm.requests)
    refused = step(server, key)  # 0.00036 spent + this step's most (its prompt and 50 tokens) > 0.0005
    assert refused.status_code == 429
    assert refused.json()["error"]["details"]["limit"] == "usd_per_day"
    assert len(llm.requests) == calls


def test_a_model_without_a_price_counts_tokens_only_and_says_so(server: str, llm: ScriptedLLMServer) -> None:
    key = KEYS["unpriced"][0]
    llm.push(reply(), reply())
    answers = [step(server, key, model=UNPRICED) for _ in range(2)]  # far past its dollars, were it priced
    assert [answer.status_code for answer in answers] == [200, 200]
    first, second = (answer.json() for answer in answers)
    assert "cost_usd" not in first["usage"]
    assert first["budget"]["priced"] is False
    assert first["budget"]["usd_left"] == 0.000001
    assert [first["budget"]["tokens_left"], second["budget"]["tokens_left"]] == [100000 - 1050, 100000 - 2100]


def test_a_lent_llm_key_is_the_callers_own_money(server: str, llm: ScriptedLLMServer) -> None:
    key = KEYS["lent"][0]
    assert step(server, key).status_code == 429
    llm.push(reply())
    calls = len(llm.requests)
    lent = step(server, key, user_api_keys={"llmKey": "sk-the-callers-own-key"})
    assert lent.status_code == 200, lent.text
    assert "budget" not in lent.json()
    assert len(llm.requests) == calls + 1
    assert llm.authorizations[-1] == "Bearer sk-the-callers-own-key"


def test_a_key_without_limits_gets_no_budget(server: str, llm: ScriptedLLMServer) -> None:
    llm.push(reply())
    answer = step(server, KEYS["free"][0])
    assert answer.status_code == 200
    assert "budget" not in answer.json()
    assert answer.json()["usage"]["cost_usd"] == pytest.approx(0.00018, abs=1e-12)


LIMIT = 10_500  # ten steps of 1050 would pass it; each step holds its prompt count + 50 first


def test_two_replicas_on_one_bucket_stay_within_the_limit(s3_server: str, tmp_path: Path) -> None:
    """Sixteen clients step at once on two replicas until the key's day is spent: the replicas admit
    steps only while spent + held + a step's most fit, so the spent total never passes the limit
    (the scripted server counts fewer prompt tokens than the server does: docs/budgets.md)."""
    key = make_key("replicas")
    bucket = f"budgets-{uuid.uuid4().hex[:12]}"
    creator = Settings(
        storage_backend="s3",
        s3_endpoint_url=s3_server,
        s3_region="us-east-1",
        s3_access_key_id="test",
        s3_secret_access_key="test",
    )
    s3_client(creator).create_bucket(Bucket=bucket)
    s3 = {
        "REACTSTEP_STORAGE_BACKEND": "s3",
        "REACTSTEP_S3_ENDPOINT_URL": s3_server,
        "REACTSTEP_S3_BUCKET": bucket,
        "REACTSTEP_S3_REGION": "us-east-1",
        "REACTSTEP_S3_ACCESS_KEY_ID": "test",
        "REACTSTEP_S3_SECRET_ACCESS_KEY": "test",
    }
    slow = Reply(text=ANSWER, prompt_tokens=PROMPT, completion_tokens=COMPLETION, delay_s=0.2)
    limited = [entry(key, f"tokens_per_day={LIMIT}")]
    with ScriptedLLMServer([slow] * 40) as llm, ExitStack() as stack:
        urls = [
            stack.enter_context(serving(base_env(llm, tmp_path / name, limited) | s3))[0] for name in "ab"
        ]
        assert httpx.put(f"{urls[0]}/api/projects/demo", headers=auth(key), timeout=30).status_code == 201

        def client(number: int) -> list[httpx.Response]:
            """Steps until refused for the day; a refusal only for the steps in flight is retried."""
            answers = [step(urls[number % 2], key)]
            while answers[-1].status_code == 200 or (
                answers[-1].status_code == 429 and int(answers[-1].headers["retry-after"]) <= 2
            ):
                if answers[-1].status_code == 429:
                    time.sleep(0.3)  # the steps in flight settle soon
                answers.append(step(urls[number % 2], key))
            return answers

        with ThreadPoolExecutor(16) as pool:
            runs = list(pool.map(client, range(16)))
        calls = len(llm.requests)
    answers = [answer for run in runs for answer in run]
    admitted = [answer for answer in answers if answer.status_code == 200]
    refused = [answer.json()["error"] for answer in answers if answer.status_code != 200]
    assert {error["code"] for error in refused} == {"budget_exhausted"}
    spent = sum(answer.json()["usage"]["total_tokens"] for answer in admitted)
    assert spent == len(admitted) * (PROMPT + COMPLETION)
    # each client's last answer: the day spent, nothing held, and not one more step fits
    last = [run[-1].json()["error"]["details"] for run in runs]
    assert {(details["spent"], details["held"]) for details in last} == {(spent, 0)}
    most = last[0]["step_most"]
    assert PROMPT + COMPLETION < most <= 2 * (PROMPT + COMPLETION)  # so nine steps fit, not ten
    assert len(admitted) == 9
    assert spent == 9450 <= LIMIT
    assert calls == len(admitted)  # no refused step reached the model
