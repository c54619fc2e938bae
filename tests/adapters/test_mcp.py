"""The `orchestrator` MCP server, driven by the official MCP client (in-process and over real stdio)."""
from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from orchestrator.adapters.mcp import McpBackend, build_server
from orchestrator.engine.pipeline import Governor

REPO_ROOT = Path(__file__).resolve().parents[2]


def _text(result) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def _call(server, name: str, args: dict) -> tuple[bool, str]:
    async def go():
        async with Client(server) as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            assert tools == {"select_active_intent", "list_intents", "record_lesson", "propose_intent"}
            result = await client.call_tool(name, args)
            return bool(result.is_error), _text(result)

    return asyncio.run(go())


def test_unhooked_selection_records_for_env_session(ws: Path, monkeypatch) -> None:
    monkeypatch.setenv("ORCH_SESSION_ID", "mcp-client-1")
    monkeypatch.delenv("ORCH_MCP_HOOKED", raising=False)
    is_error, text = _call(build_server(ws), "select_active_intent", {"intent_id": "INT-1"})
    assert not is_error and text.startswith('<intent_context id="INT-1"')
    assert Governor(ws).sessions.get("mcp-client-1")["intent_id"] == "INT-1"


def test_hooked_selection_only_renders(ws: Path) -> None:
    is_error, text = _call(build_server(ws, hooked=True, session_id="s"), "select_active_intent",
                           {"intent_id": "INT-1"})
    assert not is_error and "src/**" in text
    assert Governor(ws).sessions.get("s")["intent_id"] is None  # the PreToolUse hook records, not the server


def test_invalid_intent_is_a_structured_tool_error(ws: Path) -> None:
    for hooked in (True, False):
        is_error, text = _call(build_server(ws, hooked=hooked), "select_active_intent", {"intent_id": "INT-2"})
        assert is_error
        error = json.loads(text[text.index("{"):])
        assert error["type"] == "intent-invalid" and error["available"] == ["INT-1"]


def test_list_intents_and_record_lesson(ws: Path) -> None:
    is_error, text = _call(build_server(ws), "list_intents", {})
    assert not is_error
    assert [(i["id"], i["status"]) for i in json.loads(text)] == [("INT-1", "IN_PROGRESS"), ("INT-2", "PENDING")]
    is_error, text = _call(build_server(ws), "record_lesson", {"text": "run the tests first", "intent_id": "INT-1"})
    assert not is_error and text == "lesson recorded"
    assert "run the tests first" in (ws / "AGENTS.md").read_text()
    assert McpBackend(ws).record_lesson("run the tests first", "INT-1") == "lesson already recorded"


def test_orch_mcp_over_stdio(ws: Path) -> None:
    """`orch mcp` as a real subprocess speaking MCP on stdio, as Claude Code starts it from .mcp.json."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "orchestrator", "mcp"], cwd=str(ws),
                                   env={**os.environ, "PYTHONPATH": str(REPO_ROOT), "ORCH_MCP_HOOKED": "1"})

    async def go():
        async with Client(params) as client:
            result = await client.call_tool("select_active_intent", {"intent_id": "INT-1"})
            return result

    result = asyncio.run(go())
    assert not result.is_error and '<intent_context id="INT-1"' in _text(result)


def _propose_over_stdio(ws: Path, decide, **env: str):
    """`orch mcp` (unhooked: a plain MCP client) proposes; ``decide(request)`` is the person, in this process."""
    from orchestrator.approvals import Broker
    from orchestrator.config.workspace import Workspace
    from tests.waiting import wait_until

    params = StdioServerParameters(command=sys.executable, args=["-m", "orchestrator", "mcp"], cwd=str(ws),
                                   env={**os.environ, "PYTHONPATH": str(REPO_ROOT), "ORCH_SESSION_ID": "plain-1",
                                        "ORCH_APPROVAL_TIMEOUT": "120", **env})
    broker = Broker(Workspace.at(ws).shared_run_dir)

    async def go():
        async with Client(params) as client:
            call = asyncio.ensure_future(client.call_tool("propose_intent", {
                "name": "Docs refresh", "owned_scope": ["docs/**"], "why": "the guide is out of date"}))
            request = await asyncio.to_thread(wait_until, broker.pending, what="the proposal")
            await asyncio.to_thread(decide, broker, request[0])
            return await call

    return asyncio.run(go())


def test_unhooked_proposal_blocks_until_accepted_then_selects_for_the_env_session(ws: Path) -> None:
    from orchestrator.approvals import proposal

    result = _propose_over_stdio(ws, lambda b, r: proposal.accept(b, r.id, {"owned_scope": ["docs/guide/**"]},
                                                                    by="tui"))
    assert not result.is_error, _text(result)
    assert _text(result).startswith("A person accepted your proposal: intent INT-3 is IN_PROGRESS and selected")
    assert Governor(ws).sessions.get("plain-1")["intent_id"] == "INT-3"
    assert Governor(ws).intents().get("INT-3").owned_scope == ("docs/guide/**",)


def test_unhooked_rejection_is_a_structured_tool_error_with_the_reason(ws: Path) -> None:
    from orchestrator.approvals import proposal

    result = _propose_over_stdio(ws, lambda b, r: proposal.reject(b, r.id, "docs are frozen", by="tui"))
    assert result.is_error
    text = _text(result)
    error = json.loads(text[text.index("{"):])
    assert error["type"] == "proposal-rejected" and error["reason"] == "docs are frozen"
    assert Governor(ws).intents().get("INT-3") is None


def test_a_host_whose_hook_lets_the_tool_through_gets_the_intent_and_is_told_to_select_it(ws: Path) -> None:
    """Gemini CLI, Copilot CLI, opencode, Cursor: the hook passes the tool (a handshake), the server waits itself;
    it cannot know the session, so the model is told to select the new intent (its hook records that)."""
    from orchestrator.approvals import proposal

    result = _propose_over_stdio(ws, lambda b, r: proposal.accept(b, r.id, by="tui"), ORCH_MCP_HOOKED="1")
    text = _text(result)
    assert not result.is_error, text
    assert "intent INT-3 is IN_PROGRESS. Call select_active_intent with intent_id 'INT-3'" in text
    assert Governor(ws).sessions.get("plain-1").get("intent_id") is None
