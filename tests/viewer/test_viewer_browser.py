"""The viewer's page in a real browser: Debian's headless chromium, driven by selenium through the
system's chromedriver (no driver download). The page for a recorded trace shows each step, expands a
long observation, moves between steps with the keyboard, marks the step a report names (one written
by a real strict replay too), fits a 375 px wide window, and asks for nothing over the network.
Screenshots are saved beside the page."""

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from reactstep.client.cli.main import main
from reactstep.client.traces.format import load_trace
from reactstep.tools.store.local import LocalStore
from tests.viewer.conftest import HOSTILE, LONG_FILE, REPLIES, record, serving

CHROMEDRIVER = Path("/usr/bin/chromedriver")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
STEPS = "#steps > .step"
DIFF = "--- recorded\n+++ replayed\n@@ -1 +1 @@\n-Be brief.\n+Be terse.\n"
REPORT = {"ok": False, "diverged_at": 2, "diffs": [{"part": "system prompt", "diff": DIFF}]}
CHROMIUM_FLAGS = [
    "--headless=new",
    "--no-sandbox",  # root in a container has no user namespace for the sandbox
    "--disable-dev-shm-usage",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",  # the browser's own calls home, which are not the page's
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless chromium through /usr/bin/chromedriver; a skip that says what to install otherwise."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("selenium is not installed: pip install -e '.[dev]'")
    if CHROMIUM is None or not CHROMEDRIVER.exists():
        pytest.skip(
            "no chromium or chromedriver here: apt-get install chromium chromium-driver (scripts/install-dev)"
        )
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    with pytest.MonkeyPatch.context() as env:
        env.setenv("SE_OFFLINE", "true")  # Selenium Manager must not fetch a driver or a browser
        driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture(scope="module")
def page(recorded_trace: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The page for the recorded trace with a report naming step 2, written by `reactstep view`."""
    folder = tmp_path_factory.mktemp("page")
    (folder / "report.json").write_text(json.dumps(REPORT))
    out = folder / "trace.html"
    code = main(["view", str(recorded_trace), "--report", str(folder / "report.json"), "-o", str(out)])
    assert code == 0
    return out


def opened(browser: Any, page: Path, width: int) -> Any:
    browser.set_window_size(width, 900)
    browser.get(page.as_uri())
    return browser


def screenshot(browser: Any, width: int, path: Path) -> None:
    """The whole page, the window made as tall as it (then the next test sets its own size)."""
    height = browser.execute_script("return document.documentElement.scrollHeight")
    browser.set_window_size(width, height + 200)
    browser.save_screenshot(str(path))


def active_step(browser: Any) -> str | None:
    found: str | None = browser.execute_script("return document.activeElement.getAttribute('data-step')")
    return found


def test_each_recorded_step_is_shown(browser: Any, page: Path, recorded_trace: Path) -> None:
    opened(browser, page, 1280)
    records = load_trace(recorded_trace)
    shown = browser.execute_script(f"return document.querySelectorAll('{STEPS}').length")
    assert shown == sum(record["kind"] == "react_step" for record in records) == 4
    assert browser.find_element("id", "project-version").text == "0"
    assert browser.find_element("id", "cost").text == "4 steps without a price"  # openai/scripted
    lint = browser.find_element("id", "step-2").find_element("css selector", "pre.observation")
    assert lint.get_attribute("textContent") == HOSTILE  # shown as text, not run
    assert browser.title == "reactstep trace: make main return 43"
    width, inner = browser.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
    assert width <= inner == 1280
    browser.find_element("id", "divergence-link").click()
    screenshot(browser, 1280, page.with_name("viewer-1280.png"))


def test_a_long_observation_expands_to_its_full_text(browser: Any, page: Path, recorded_trace: Path) -> None:
    opened(browser, page, 1280)
    full = next(
        record["response"]["observation"]
        for record in load_trace(recorded_trace)[1:]
        if record["kind"] == "execute_action"
    )
    step = browser.find_element("id", "step-1")
    observation = step.find_element("css selector", "pre.observation")
    button = step.find_element("css selector", "button.more")
    assert (button.get_attribute("aria-expanded"), button.text) == (
        "false",
        "Show all ({} lines, {} characters)".format(full.count("\n") + 1, len(full)),
    )
    assert "# line 59" not in observation.get_attribute("textContent")
    button.click()
    assert observation.get_attribute("textContent") == full
    assert "# line 59" in observation.text  # on screen, not only in the DOM
    assert button.get_attribute("aria-expanded") == "true"


def test_the_keyboard_moves_between_steps_with_focus_shown(browser: Any, page: Path) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    opened(browser, page, 1280)
    visited = []
    for key in ["j", "j", Keys.ARROW_DOWN, "k", Keys.ARROW_UP, "k"]:
        ActionChains(browser).send_keys(key).perform()
        visited.append(active_step(browser))
    assert visited == ["1", "2", "3", "2", "1", "1"]
    outline = browser.execute_script("return getComputedStyle(document.activeElement).outlineStyle")
    assert outline == "solid"


def test_the_report_marks_the_diverging_step_and_the_marker_leads_there(browser: Any, page: Path) -> None:
    opened(browser, page, 1280)
    marked = browser.find_elements("css selector", ".step.diverged")
    assert [step.get_attribute("data-step") for step in marked] == ["2"]
    assert "diverged here" in marked[0].text
    diff = marked[0].find_element("css selector", ".divergence pre.diff")
    assert diff.get_attribute("textContent") == DIFF
    assert [line.text for line in diff.find_elements("css selector", ".del, .add")] == [
        "-Be brief.",
        "+Be terse.",
    ]
    link = browser.find_element("id", "divergence-link")
    assert link.text == "Go to step 2"
    link.click()
    assert active_step(browser) == "2"


def test_a_phone_width_window_does_not_scroll_sideways(browser: Any, page: Path) -> None:
    opened(browser, page, 375)
    unfolded = browser.execute_script(  # the widest text there is, unfolded
        "document.querySelectorAll('details').forEach(function (d) { d.open = true; });"
        "var more = document.querySelectorAll('button.more'); more.forEach(function (b) { b.click(); });"
        "return more.length"
    )
    assert unfolded >= 2
    width, inner = browser.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
    assert inner == 375
    assert width <= inner
    screenshot(browser, 375, page.with_name("viewer-375.png"))


def test_nothing_leaves_the_page(browser: Any, page: Path) -> None:
    opened(browser, page, 1280)
    browser.get_log("browser")  # what earlier pages logged
    browser.refresh()
    assert browser.execute_script("return performance.getEntriesByType('resource').length") == 0
    policy = browser.find_element("css selector", 'meta[http-equiv="Content-Security-Policy"]')
    assert policy.get_attribute("content").startswith("default-src 'none'; style-src 'sha256-")
    assert (
        browser.execute_script(f"return document.querySelectorAll('{STEPS}').length") == 4
    )  # the script ran
    assert [entry for entry in browser.get_log("browser") if entry["level"] != "INFO"] == []
    assert os.path.getsize(page) < 200_000


def test_a_report_that_matched_says_so_and_marks_no_step(
    browser: Any, recorded_trace: Path, tmp_path: Path
) -> None:
    (tmp_path / "report.json").write_text(json.dumps({"ok": True, "diverged_at": None, "diffs": []}))
    out = tmp_path / "ok.html"
    assert main(["view", str(recorded_trace), "--report", str(tmp_path / "report.json"), "-o", str(out)]) == 0
    opened(browser, out, 1280)
    banner = browser.find_element("id", "banner")
    assert (banner.get_attribute("class"), banner.text) == (
        "banner ok",
        "The replay followed the recording to its end.",
    )
    assert browser.find_elements("css selector", ".step.diverged, #divergence-link") == []


def test_a_real_replay_report_marks_the_step_whose_observation_changed(browser: Any, tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "objects")
    store.put("demo", "src/app.py", LONG_FILE)
    server_tools_only = [reply for reply in REPLIES if "lint(" not in reply]  # replay runs no client tool
    with serving(tmp_path, store, server_tools_only) as url:
        trace = record(url, tmp_path / "trace.jsonl", tools=())
        store.put("demo", "src/app.py", LONG_FILE.replace(b"return 42", b"return 41"))
        replayed = ["replay", str(trace), "--server", url, "--report", str(tmp_path / "report.json")]
        assert main([*replayed, "--ignore-version"]) == 1  # diverged
    report = json.loads((tmp_path / "report.json").read_text())
    assert (report["diverged_at"], report["part"]) == (1, "observation")
    assert main(["view", str(trace), "--report", str(tmp_path / "report.json")]) == 0
    opened(browser, tmp_path / "trace.html", 1280)
    browser.find_element("id", "divergence-link").click()
    assert active_step(browser) == "1"
    marked = browser.find_element("css selector", ".step.diverged")
    assert marked.get_attribute("data-step") == "1"
    changed = [
        line.text for line in marked.find_elements("css selector", ".divergence .del, .divergence .add")
    ]
    assert "-    2 |     return 42" in changed and "+    2 |     return 41" in changed


def test_a_trace_that_holds_only_a_step_error_shows_it_as_a_card(browser: Any, tmp_path: Path) -> None:
    session = {"kind": "session", "version": 2, "project_id": "demo", "session_id": "s", "user_query": "q"}
    refused = {
        "kind": "step_error",
        "step": 1,
        "request": {},
        "response": {
            "status": 403,
            "code": "api_base_not_allowed",
            "message": "not allowed",
            "stream": False,
        },
    }
    trace = tmp_path / "refused.jsonl"
    trace.write_text(json.dumps(session) + "\n" + json.dumps(refused) + "\n")
    assert main(["view", str(trace)]) == 0
    opened(browser, tmp_path / "refused.html", 1280)
    [card] = browser.find_elements("css selector", STEPS)
    assert card.get_attribute("data-step") == "1"
    assert card.find_element("css selector", ".badge.error").text == "step_error"
    assert card.find_element("css selector", "pre").text == "403 api_base_not_allowed: not allowed"


def test_a_priced_run_shows_its_cost_and_each_steps(browser: Any, tmp_path: Path) -> None:
    session = {"kind": "session", "version": 2, "project_id": "demo", "session_id": "s", "user_query": "q"}

    def answered(step: int, cost: float | None) -> dict[str, Any]:
        usage: dict[str, Any] = {"prompt_tokens": 1000, "completion_tokens": 50, "total_tokens": 1050}
        if cost is not None:
            usage["cost_usd"] = cost
        response = {"session_id": "s", "status": "format_error", "thought": "", "model": "m", "usage": usage}
        return {"kind": "react_step", "step": step, "request": {}, "response": response}

    trace = tmp_path / "priced.jsonl"
    records = [session, answered(1, 0.00018), answered(2, 0.00018), answered(3, None)]
    trace.write_text("".join(json.dumps(record) + "\n" for record in records))
    assert main(["view", str(trace)]) == 0
    opened(browser, tmp_path / "priced.html", 1280)
    assert browser.find_element("id", "cost").text == "$0.000360 · 1 step without a price"
    labels = [bar.get_attribute("aria-label") for bar in browser.find_elements("css selector", ".bar")]
    assert labels[0] == "tokens: 1000 in · 50 out · $0.000180"
    assert labels[4] == "tokens: 1000 in · 50 out"
