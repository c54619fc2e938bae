"""The intent lifecycle in ``orch tui`` under Textual's Pilot: an agent's proposal (from a real waiting hook
process) accepted as is, edited then accepted, rejected; intents created, edited, finished and archived from the
Intents screen, with their summary."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import yaml
from textual.widgets import DataTable, Input, Label, OptionList, Static, TextArea

from orchestrator.tui.app import ApprovalApp
from orchestrator.tui.intents import IntentForm, IntentsScreen
from orchestrator.config.workspace import Workspace
from tests.adapters.conftest import INTENTS
from tests.adapters.test_propose import PROPOSAL, propose_event, reason_of, spawn_hook
from tests.conftest import make_workspace
from tests.waiting import until

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def ws(tmp_path):  # type: ignore[no-untyped-def]
    return make_workspace(tmp_path / "repo", INTENTS, git=True).resolve()


def queue(app: ApprovalApp) -> OptionList:
    return app.screen.query_one("#queue", OptionList)


def intents_of(ws) -> dict:  # type: ignore[no-untyped-def]
    data = yaml.safe_load((ws / ".orchestration" / "active_intents.yaml").read_text())
    return {i["id"]: i for i in data["active_intents"]}


@contextlib.asynccontextmanager
async def queued_proposal(ws) -> AsyncIterator[tuple[ApprovalApp, Any, Any]]:  # type: ignore[no-untyped-def]
    """The console with an agent's proposal in its queue, from a real hook process waiting for the decision."""
    hook = spawn_hook(ws, propose_event(ws))
    app = ApprovalApp(Workspace.at(ws), watch=False, refresh_seconds=0.2)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: queue(app).option_count == 1, what="the proposal in the queue")
            yield app, pilot, hook
    finally:
        if hook.poll() is None:
            hook.kill()


async def hook_answer(pilot, proc) -> dict:  # type: ignore[no-untyped-def]
    await until(pilot, lambda: proc.poll() is not None, what="the proposing hook to get its answer")
    out, err = proc.communicate()
    assert proc.returncode == 0, err
    return json.loads(out)["hookSpecificOutput"]


async def test_a_proposal_is_shown_and_a_accepts_it_as_proposed(ws) -> None:  # type: ignore[no-untyped-def]
    async with queued_proposal(ws) as (app, pilot, hook):
        parts = app.screen.query_one("#detail-body", Static).content.renderables
        detail = "\n".join(getattr(p, "plain", "") for p in parts)
        assert "Proposed intent: Fix the login crash" in detail and "src/auth/**" in detail
        await pilot.press("s")  # never remembered: a proposal is accepted once
        await until(pilot, lambda: any("accepted once" in n.message for n in app._notifications),
                    what="the refusal to remember")
        await pilot.press("a")
        out = await hook_answer(pilot, hook)
    assert out["permissionDecision"] == "allow"
    new = intents_of(ws)["INT-3"]
    assert new["owned_scope"] == PROPOSAL["owned_scope"] and new["accepted_by"] == "tui"


async def test_e_edits_the_proposal_in_the_form_then_accepts_it(ws) -> None:  # type: ignore[no-untyped-def]
    async with queued_proposal(ws) as (app, pilot, hook):
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, IntentForm), what="the form")
        form = app.screen
        assert form.query_one("#f-name", Input).value == PROPOSAL["name"]
        form.query_one("#f-owned_scope", TextArea).text = "src/auth/**\n../escape/**"
        await pilot.press("ctrl+s")
        await until(pilot, lambda: "invalid glob" in str(form.query_one("#form-error", Label).render()),
                    what="the glob error in the form")
        form.query_one("#f-owned_scope", TextArea).text = "src/auth/**\ntests/auth/**\n"
        await pilot.press("ctrl+s")
        out = await hook_answer(pilot, hook)
    assert out["permissionDecision"] == "allow"
    assert intents_of(ws)["INT-3"]["owned_scope"] == ["src/auth/**", "tests/auth/**"]


async def test_r_rejects_the_proposal_with_a_reason_the_agent_reads(ws) -> None:  # type: ignore[no-untyped-def]
    async with queued_proposal(ws) as (app, pilot, hook):
        await pilot.press("r")
        await pilot.press(*"ask the security team", "enter")
        out = await hook_answer(pilot, hook)
    assert out["permissionDecision"] == "deny" and reason_of(out)["reason"] == "ask the security team"
    assert "INT-3" not in intents_of(ws)


async def test_the_intents_screen_creates_edits_finishes_and_archives(ws) -> None:  # type: ignore[no-untyped-def]
    app = ApprovalApp(Workspace.at(ws), watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("m")
        await until(pilot, lambda: isinstance(app.screen, IntentsScreen), what="the intents screen")
        screen = app.screen
        table = screen.query_one("#intents-list", DataTable)
        await until(pilot, lambda: table.row_count == 2, what="the two intents")
        await until(pilot, lambda: "records: 0" in str(screen.query_one("#intent-summary", Static).content),
                    what="the summary of INT-1")
        await pilot.press("n")
        await until(pilot, lambda: isinstance(app.screen, IntentForm), what="the form")
        await pilot.press(*"Login page")  # the name field has the focus
        app.screen.query_one("#f-owned_scope", TextArea).text = "src/login/**"
        app.screen.query_one("#f-owner", Input).value = "ana"
        await pilot.press("ctrl+s")
        await until(pilot, lambda: "INT-3" in intents_of(ws), what="the new intent in the file")
        assert intents_of(ws)["INT-3"] | {"created_at": None} == {
            "id": "INT-3", "name": "Login page", "status": "IN_PROGRESS", "owner": "ana",
            "owned_scope": ["src/login/**"], "created_at": None}
        await until(pilot, lambda: table.row_count == 3, what="the new row")
        table.move_cursor(row=2)
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, IntentForm), what="the edit form")
        app.screen.query_one("#f-name", Input).value = "Login and logout"
        await pilot.press("ctrl+s")
        await until(pilot, lambda: intents_of(ws)["INT-3"]["name"] == "Login and logout", what="the edit")
        await pilot.press("d")
        await until(pilot, lambda: intents_of(ws)["INT-3"]["status"] == "COMPLETED", what="done")
        await pilot.press("x")
        await until(pilot, lambda: "INT-3" not in intents_of(ws), what="the archive")
        archived = yaml.safe_load((ws / ".orchestration" / "archived_intents.yaml").read_text())
        assert archived["archived_intents"][0]["name"] == "Login and logout"
        await until(pilot, lambda: "(arch.)" in str(table.get_row_at(2)[1]), what="the archived row")
        await pilot.press("e")  # an archived intent does not change
        await until(pilot, lambda: any("archived" in n.message for n in app._notifications), what="the warning")
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, IntentsScreen), what="back to the queue")
