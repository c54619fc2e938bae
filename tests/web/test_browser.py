"""The console in a real browser (Debian's Chromium, Playwright, a CDP virtual authenticator): register a passkey
through ``orch approver add``, approve a call a REAL hook process waits on (the hook answers within a second of
the click), reject another with a reason the agent receives; assertions the browser made, replayed onto another
call or used after their request expired, approve nothing. The whole flow works from the keyboard alone.

Screenshots: written to ``docs/`` when ``ORCH_UPDATE_SCREENSHOTS=1`` (docs/console.md shows them), else to the
test's tmp dir — the flow that produces them runs every time.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from orchestrator.approvals import Broker, approvers
from orchestrator.config.workspace import Workspace
from tests import browser_support
from tests.approval_support import ROOT
from tests.approvals.signed_support import (
    answer_of,
    daemon_for,
    forge,
    passkey_workspace,
    pending_request,
    refused,
    spawn_hook,
    still_pending,
)
from tests.waiting import TIMEOUT, wait_until
from tests.web.support import free_port, served

DOCS = ROOT / "docs"


@dataclass
class Setup:
    ws: Workspace
    port: int
    person: Any  # tests.web.conftest.Authenticated
    shots: Path

    @property
    def url(self) -> str:
        return f"http://localhost:{self.port}"

    def shot(self, name: str) -> None:
        self.person.page.screenshot(path=str(self.shots / name), full_page=True)


def register(ws: Workspace, port: int, person: Any, name: str = "alice") -> str:
    return browser_support.register(ws.root, port, person, name, timeout=TIMEOUT)


@pytest.fixture
def setup(tmp_path: Path, person: Any) -> Iterator[Setup]:
    port = free_port()
    (tmp_path / "repo").mkdir()
    ws = passkey_workspace(tmp_path / "repo", port=port)
    shots = DOCS if os.environ.get("ORCH_UPDATE_SCREENSHOTS") == "1" else tmp_path
    yield Setup(ws, port, person, shots)


def _item(page: Any, request_id: str) -> Any:
    selector = f"article[data-key='approval:{request_id}']"
    page.wait_for_selector(selector + " button.primary:not([disabled])")
    return page.locator(selector)


def test_register_approve_and_reject_in_the_browser(setup: Setup) -> None:
    ws, person = setup.ws, setup.person
    message = register(ws, setup.port, person)
    assert "commit" in message
    (alice,) = approvers.load(ws.orch_dir).by_credential.values()
    assert alice.name == "alice" and alice.rp_id == "localhost"
    assert person.credentials()[0]["rpId"] == "localhost"
    with served(ws, setup.port), daemon_for(ws) as env:  # hooks ask the daemon, as installed hooks do
        # the first sandboxed command of a workspace compiles its launcher (~1 s, once): not the approval's cost
        warm = spawn_hook(ws, "python3 -c pass", tool_use_id="warm", env=env)
        assert answer_of(warm)["permissionDecision"] == "allow"
        page = person.page
        page.goto(setup.url + "/")
        proc = spawn_hook(ws, "rm -rf build", tool_use_id="toolu_rm", env=env)
        req = pending_request(ws)
        item = _item(page, req.id)
        assert "rm -rf build" in item.locator("pre code").text_content()
        facts = item.locator("dl.facts").inner_text()
        for expected in ("recursive-delete", "claude-code", "s1", "INT-1", ws.root.name, "Bash"):
            assert expected in facts
        setup.shot("console-pending.png")
        clicked = time.monotonic()
        item.locator("button.primary").click()
        answer = answer_of(proc)
        elapsed = time.monotonic() - clicked
        assert answer.get("permissionDecision", "allow") == "allow"
        assert elapsed <= 1.0, f"the hook answered {elapsed:.2f} s after the click"
        resolved = Broker(ws.shared_run_dir).resolved_path(req.id).read_text()
        assert '"by": "alice"' in resolved
        page.wait_for_selector(f"article[data-key='approval:{req.id}']", state="detached")

        proc2 = spawn_hook(ws, "git push --force origin main", tool_use_id="toolu_push", env=env)
        req2 = pending_request(ws)
        item2 = _item(page, req2.id)
        item2.get_by_role("button", name="Reject…").click()
        reason = "never force-push main; open a pull request"
        item2.locator("textarea").fill(reason)
        setup.shot("console-reject.png")
        item2.locator("form.reject-form button[type=submit]").click()
        answer2 = answer_of(proc2)
        assert answer2["permissionDecision"] == "deny" and reason in answer2["permissionDecisionReason"]
        page.wait_for_selector("#pending-empty", state="visible")
        page.select_option("#activity-since", "24h")
        page.click("#activity-form button")
        expect(page.locator("#activity")).to_contain_text("Activity since", timeout=TIMEOUT * 1000)
        setup.shot("console-overview.png")


def test_browser_assertions_replayed_or_expired_approve_nothing(setup: Setup) -> None:
    ws, person = setup.ws, setup.person
    register(ws, setup.port, person)
    with served(ws, setup.port):
        page = person.page
        page.goto(setup.url + "/")
        first = spawn_hook(ws, "rm -rf build", tool_use_id="toolu_a")
        req_a = pending_request(ws)
        with page.expect_request(lambda r: r.method == "POST" and r.url.endswith("/decide")) as sent:
            _item(page, req_a.id).locator("button.primary").click()
        made = json.loads(sent.value.post_data or "{}")  # what the browser signed for request A
        assert made["assertion"]["type"] == "public-key"
        assert answer_of(first).get("permissionDecision", "allow") == "allow"
        # replayed onto another call (another command, another request)
        second = spawn_hook(ws, "git push --force origin main", tool_use_id="toolu_b")
        req_b = pending_request(ws)
        forge(ws, req_b, {**made, "id": req_b.id, "session_id": req_b.session_id, "by": "console"})
        assert "another request" in refused(ws, req_b)[0]["error"]
        # replayed onto the same request id again: the replay guard has it
        from orchestrator.approvals.passkey import ReplayGuard

        assert ReplayGuard(Broker(ws.shared_run_dir).dir).used(req_a.id)
        assert still_pending(ws, req_b) and second.poll() is None
        second.kill()
        second.wait()


def test_a_decision_signed_for_a_request_that_expired_is_never_used(setup: Setup) -> None:
    """Headless, deferred (Claude Code print mode): the person signs, but the request expires before the session
    resumes — the resumed call files a new request and is deferred again, never approved by the old signature."""
    ws, person = setup.ws, setup.person
    ws.policy_file.write_text(ws.policy_file.read_text() + "  headless: defer\n  defer_seconds: 6\n")
    register(ws, setup.port, person)
    env = {"CLAUDE_CODE_ENTRYPOINT": "sdk-cli"}
    with served(ws, setup.port):
        page = person.page
        page.goto(setup.url + "/")
        assert answer_of(spawn_hook(ws, "rm -rf build", env=env))["permissionDecision"] == "defer"
        req = pending_request(ws)
        item = _item(page, req.id)
        item.locator("button.primary").click()
        expect(item.locator(".result")).to_contain_text(re.compile(r"Approved|expired"), timeout=TIMEOUT * 1000)
        assert Broker(ws.shared_run_dir).decision_path(req.id).exists() or "expired" in item.inner_text()
        wait_until(lambda: time.time() > req.expires, what="the deferred request to expire")
        resumed = answer_of(spawn_hook(ws, "rm -rf build", env=env))  # same session, tool_use_id and input
        assert resumed["permissionDecision"] == "defer"
        fresh = pending_request(ws)
        assert fresh.id != req.id


def test_the_whole_decision_works_from_the_keyboard(setup: Setup) -> None:
    ws, person = setup.ws, setup.person
    register(ws, setup.port, person)
    with served(ws, setup.port):
        page = person.page
        page.goto(setup.url + "/")
        proc = spawn_hook(ws, "rm -rf build")
        req = pending_request(ws)
        _item(page, req.id)
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.textContent") == "Skip to pending decisions"
        page.keyboard.press("Enter")
        labels = []
        for _ in range(40):  # tab through the page until the reject button has the focus
            page.keyboard.press("Tab")
            labels.append(page.evaluate("document.activeElement.textContent"))
            if labels[-1] == "Reject…":
                break
        assert labels[-1] == "Reject…" and "Approve once" in labels, labels
        outline = page.evaluate("getComputedStyle(document.activeElement).outlineWidth")
        assert float(outline.rstrip("px")) >= 2, "the focused button shows a visible focus ring"
        page.keyboard.press("Enter")
        assert page.evaluate("document.activeElement.tagName") == "TEXTAREA"
        assert page.evaluate("document.activeElement.labels.length") == 1
        page.keyboard.type("use the file tools")
        page.keyboard.press("Tab")
        page.keyboard.press("Enter")
        answer = answer_of(proc)
        assert answer["permissionDecision"] == "deny" and "use the file tools" in answer["permissionDecisionReason"]
        # every button and form control has an accessible name; live regions announce results
        unnamed = page.evaluate("""[...document.querySelectorAll('button, textarea, select, a')]
            .filter(e => !(e.textContent.trim() || e.getAttribute('aria-label') || (e.labels && e.labels.length)))
            .map(e => e.outerHTML)""")
        assert unnamed == []
        assert page.get_attribute("#announcer", "aria-live") == "polite"
