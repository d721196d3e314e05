"""litellm never reaches for its price map on GitHub: the gateway sets LITELLM_LOCAL_MODEL_COST_MAP as it
loads, before any path (the internal-call mark, model facts, token counts) can import litellm."""

import json
import os
import subprocess
import sys

PROBE = """
import json, sys
looked_up = []

def refuse_other_hosts(event, args):
    # Recorded and stopped before any packet leaves: the test itself never reaches past loopback.
    if event == "socket.getaddrinfo" and str(args[0]) not in ("127.0.0.1", "::1", "localhost"):
        looked_up.append(str(args[0]))
        raise OSError("the network is off for this probe")

sys.addaudithook(refuse_other_hosts)
from reactstep.service.llm import gateway
gateway.internal_call_mark()  # the path that imported litellm first, before the fix
gateway.provider_of("openai/gpt-4o-mini")
gateway.count_tokens("openai/gpt-4o-mini", [{"role": "user", "content": "hello"}])
print(json.dumps(sorted(set(looked_up))))
"""


def test_importing_and_using_litellm_looks_up_no_host() -> None:
    env = {key: value for key, value in os.environ.items() if key != "LITELLM_LOCAL_MODEL_COST_MAP"}
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == []
    assert "model cost map" not in done.stderr
