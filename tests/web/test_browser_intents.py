"""The intent lifecycle in a real browser (Debian's Chromium, Playwright, a CDP virtual authenticator): create, edit,
finish and archive an intent from the page, each change signed by the person's passkey and written by the console
only after it verified the signature; accept an agent's proposal with edits (the waiting side writes the edited
intent); a browser-made signature replayed, or sent for another change, writes nothing; the whole form works from
the keyboard. Screenshots go to ``docs/`` with ``ORCH_UPDATE_SCREENSHOTS=1`` (as in test_browser.py).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from orchestrator.approvals import Broker, proposal
from orchestrator.config import intents as _intents
from orchestrator.config import policy
from orchestrator.config.intentstore import IntentStore
from tests import browser_support
from tests.approval_support import ROOT
from tests.approvals.signed_support import passkey_workspace
from tests.waiting import TIMEOUT, wait_until
from tests.web.support import free_port, served

DOCS = ROOT / "docs"
MS = TIMEOUT * 1000


@pytest.fixture
def scene(tmp_path: Path, person: Any) -> Iterator[tuple[Any, Any, Any, Path]]:
    port = free_port()
    (tmp_path / "repo").mkdir()
    ws = passkey_workspace(tmp_path / "repo", port=port)
    browser_support.register(ws.root, port, person, "alice", timeout=TIMEOUT)
    shots = DOCS if os.environ.get("ORCH_UPDATE_SCREENSHOTS") == "1" else tmp_path
    with served(ws, port) as console:
        person.page.goto(console.url + "/")
        person.page.wait_for_selector("#intents tbody tr button")
        yield ws, console, person.page, shots


def _result(page: Any, text: str) -> None:
    expect(page.locator("#intent-result")).to_contain_text(text, timeout=MS)


def _audit(ws: Any) -> list[dict[str, Any]]:
    path = Broker(ws.shared_run_dir).dir / "audit.jsonl"
    return [e for e in map(json.loads, path.read_text().splitlines()) if e["event"] == "intent-changed"]


def test_create_edit_finish_and_archive_an_intent_in_the_browser(scene: Any) -> None:
    ws, _console, page, shots = scene
    page.click("#intent-new")
    form = page.locator("#intent-form")
    form.get_by_label("Name").fill("Payments")
    form.get_by_label("Owned scope (globs, one per line)").fill("src/pay/**\ntests/pay/**")
    form.get_by_label("Constraints (one per line)").fill("no new dependencies")
    form.get_by_label("Owner").fill("alice")
    page.screenshot(path=str(shots / "console-intent-new.png"), full_page=True)
    form.get_by_role("button", name="Sign and create").click()
    _result(page, "Created INT-4 (signed by alice)")
    intent = _intents.load(ws.intents_file).get("INT-4")
    assert intent.name == "Payments" and intent.owned_scope == ("src/pay/**", "tests/pay/**")
    assert intent.status == "IN_PROGRESS" and intent.constraints == ("no new dependencies",)

    page.get_by_role("button", name="Edit INT-4").click()
    assert form.get_by_label("Owned scope (globs, one per line)").input_value() == "src/pay/**\ntests/pay/**"
    form.get_by_label("Acceptance criteria (one per line)").fill("refunds round-trip")
    form.get_by_label("Owner").fill("")
    form.get_by_role("button", name="Sign and save").click()
    _result(page, "Saved INT-4")
    intent = _intents.load(ws.intents_file).get("INT-4")
    assert intent.acceptance_criteria == ("refunds round-trip",)
    assert "owner" not in ws.intents_file.read_text().split('INT-4')[1]

    page.get_by_role("button", name="Finish INT-4").click()
    form.get_by_label("Status").select_option("CANCELLED")
    form.get_by_role("button", name="Sign and finish").click()
    _result(page, "Finished INT-4")
    assert _intents.load(ws.intents_file).get("INT-4").status == "CANCELLED"
    expect(page.get_by_role("button", name="Archive INT-4")).to_be_visible(timeout=MS)
    page.get_by_role("button", name="Archive INT-4").click()
    form.get_by_role("button", name="Sign and archive").click()
    _result(page, "Archived INT-4")
    assert [a["id"] for a in IntentStore(ws).archived()] == ["INT-4"]
    expect(page.get_by_role("button", name="Edit INT-4")).to_have_count(0, timeout=MS)
    assert [(e["op"], e["by"]) for e in _audit(ws)] == [("new", "alice"), ("edit", "alice"), ("done", "alice"),
                                                         ("archive", "alice")]


def test_a_malformed_change_is_shown_and_nothing_is_signed(scene: Any) -> None:
    ws, _console, page, _shots = scene
    before = ws.intents_file.read_text()
    page.click("#intent-new")
    form = page.locator("#intent-form")
    form.get_by_label("Name").fill("Broken")
    form.get_by_label("Owned scope (globs, one per line)").fill("src/[")
    form.get_by_role("button", name="Sign and create").click()
    _result(page, "owned_scope: invalid glob 'src/['")
    assert ws.intents_file.read_text() == before and not form.is_hidden()


def test_a_browser_signature_replayed_or_sent_for_another_change_writes_nothing(scene: Any) -> None:
    ws, console, page, _shots = scene
    page.get_by_role("button", name="Edit INT-2").click()
    form = page.locator("#intent-form")
    form.get_by_label("Name").fill("Docs and guides")
    with page.expect_request(lambda r: r.method == "POST" and r.url.endswith("/api/intents/apply")) as sent:
        form.get_by_role("button", name="Sign and save").click()
    _result(page, "Saved INT-2")
    made = json.loads(sent.value.post_data or "{}")  # what the browser signed and sent
    assert set(made) == {"operation", "assertion"}  # never the fields: the console applies what it prepared
    headers = {"Origin": console.url, "X-CSRF-Token": console.csrf_token, "Content-Type": "application/json"}

    def post(path: str, body: Any) -> httpx.Response:
        return httpx.post(console.url + path, content=json.dumps(body).encode(), headers=headers)

    text = ws.intents_file.read_text()
    replay = post("/api/intents/apply", made)
    assert replay.status_code == 400 and "no prepared intent change" in replay.json()["error"]["message"]
    wide = post("/api/intents/challenge", {"op": "edit", "intent": "INT-2", "fields": {"owned_scope": ["**"]}})
    forged = post("/api/intents/apply", {"operation": wide.json()["operation"]["nonce"],
                                         "assertion": made["assertion"]})
    assert forged.status_code == 400 and "another request" in forged.json()["error"]["message"]
    assert ws.intents_file.read_text() == text
    assert [e["op"] for e in _audit(ws)] == ["edit"]


def test_the_intent_form_works_from_the_keyboard(scene: Any) -> None:
    ws, _console, page, _shots = scene
    page.focus("#intent-new")
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.name") == "name"
    page.keyboard.type("Keyboard only")
    page.keyboard.press("Tab")  # status
    assert page.evaluate("document.activeElement.tagName") == "SELECT"
    page.keyboard.press("Tab")
    page.keyboard.type("kb/**")
    for _ in range(4):  # constraints, criteria, owner, description
        page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Sign and create"
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineWidth")
    assert float(outline.rstrip("px")) >= 2
    page.keyboard.press("Enter")
    _result(page, "Created INT-4")
    assert _intents.load(ws.intents_file).get("INT-4").owned_scope == ("kb/**",)
    assert page.evaluate("document.activeElement.id") == "intents-heading"
    # Escape closes the form and gives the focus back to the button that opened it
    page.get_by_role("button", name="Edit INT-4").focus()
    page.keyboard.press("Enter")
    page.keyboard.press("Escape")
    assert page.is_hidden("#intent-form")
    assert page.evaluate("document.activeElement.getAttribute('aria-label')") == "Edit INT-4"
    controls = "#intents button, #intent-form input, #intent-form textarea, #intent-form select, #intent-form button"
    unnamed = page.evaluate(f"""[...document.querySelectorAll('{controls}')]
        .filter(e => !(e.textContent.trim() || e.getAttribute('aria-label') || (e.labels && e.labels.length)))
        .map(e => e.outerHTML)""")
    assert unnamed == []


def test_accept_a_proposal_with_edits_in_the_browser(scene: Any) -> None:
    ws, _console, page, shots = scene
    fields = proposal.normalise("Payments", ["src/**"], ["keep the API"], why="the task fits no intent")
    broker = Broker(ws.shared_run_dir)
    results: list[Any] = []
    waiter = threading.Thread(target=lambda: results.append(proposal.propose(
        ws, broker, fields, session_id="s9", agent="claude-code", timeout=2 * TIMEOUT,
        approval=policy.load(ws.policy_file).approval)))
    waiter.start()
    wait_until(lambda: broker.pending(), what="the proposal to be filed")
    (req,) = broker.pending()
    article = page.locator(f"article[data-key='approval:{req.id}']")
    article.get_by_role("button", name="Edit and accept…").click(timeout=MS)
    form = page.locator("#intent-form")
    assert form.get_by_label("Owned scope (globs, one per line)").input_value() == "src/**"
    assert form.get_by_label("Constraints (one per line)").input_value() == "keep the API"
    assert form.locator(".f-status").is_hidden()
    form.get_by_label("Owned scope (globs, one per line)").fill("src/pay/**")
    page.screenshot(path=str(shots / "console-proposal-edit.png"), full_page=True)
    form.get_by_role("button", name="Sign and accept").click()
    waiter.join(timeout=2 * TIMEOUT)
    (result,) = results
    assert result.decision == "approve" and result.by == "alice"
    intent = _intents.load(ws.intents_file).get(result.intent_id)
    assert intent.owned_scope == ("src/pay/**",) and intent.constraints == ("keep the API",)
    resolved = json.loads(broker.resolved_path(req.id).read_text())
    assert resolved["decision"]["intent"] == {"owned_scope": ["src/pay/**"]}  # exactly what was signed
