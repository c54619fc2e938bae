"""The LangChain middleware governs a real ``create_agent`` run (fake chat model, real tools, real files)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain.agents")

from langchain.agents import create_agent  # noqa: E402
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel  # noqa: E402
from langchain_core.messages import AIMessage, ToolMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402

from orchestrator.config import workspace  # noqa: E402
from orchestrator.adapters.langchain import OrchestratorMiddleware  # noqa: E402
from orchestrator.agent import ApprovalDecision  # noqa: E402
from orchestrator.engine.pipeline import Governor  # noqa: E402

INTENTS = """\
active_intents:
  - id: "INT-7"
    name: "notes"
    status: "IN_PROGRESS"
    owned_scope: ["notes/**", "tmp/**"]
"""


class ToolCallingFake(FakeMessagesListChatModel):
    """A fake chat model that replays AIMessages (with tool calls) and accepts bind_tools."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> ToolCallingFake:  # type: ignore[override]
        return self


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("ORCH_APPROVAL_CHANNEL", raising=False)
    (tmp_path / "notes").mkdir()
    (tmp_path / "tmp").mkdir()
    (tmp_path / "tmp" / "junk.txt").write_text("junk\n")
    (tmp_path / "README.md").write_text("# readme\n")
    workspace.init(tmp_path)
    (tmp_path / ".orchestration" / "active_intents.yaml").write_text(INTENTS)
    return tmp_path


def _tools(gov: Governor) -> list[Any]:
    root = Path(gov.root)

    @tool
    def write_file(path: str, content: str) -> str:
        """Write a file."""
        (root / path).write_text(content)
        return f"wrote {path}"

    @tool
    def run_command(command: str) -> str:
        """Run a shell command."""
        import subprocess

        return subprocess.run(command, shell=True, cwd=root, capture_output=True, text=True).stdout

    return [write_file, run_command]


def _call(name: str, args: dict[str, Any], cid: str) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": cid, "type": "tool_call"}])


def test_create_agent_run_is_governed(ws: Path) -> None:
    gov = Governor(ws)
    model = ToolCallingFake(responses=[
        _call("write_file", {"path": "notes/a.md", "content": "first\n"}, "c1"),
        _call("select_active_intent", {"intent_id": "INT-7"}, "c2"),
        _call("write_file", {"path": "notes/a.md", "content": "first\n"}, "c3"),
        _call("write_file", {"path": "README.md", "content": "overwritten\n"}, "c4"),
        AIMessage(content="done"),
    ])
    agent = create_agent(model, tools=_tools(gov), middleware=[OrchestratorMiddleware(gov, session_id="lc")])
    state = agent.invoke({"messages": [{"role": "user", "content": "write a note"}]})
    tool_msgs = {m.tool_call_id: m for m in state["messages"] if isinstance(m, ToolMessage)}
    assert tool_msgs["c1"].status == "error" and "intent-required" in tool_msgs["c1"].content
    assert tool_msgs["c1"].artifact["orchestrator"]["error"]["type"] == "intent-required"
    assert tool_msgs["c2"].status == "success" and "<intent_context" in tool_msgs["c2"].content
    assert tool_msgs["c3"].status == "success" and tool_msgs["c3"].content == "wrote notes/a.md"
    assert tool_msgs["c4"].status == "error"
    verdict = json.loads(tool_msgs["c4"].content[tool_msgs["c4"].content.index("{"):])
    assert verdict["type"] == "scope-violation" and verdict["path"] == "README.md"
    assert state["messages"][-1].content == "done"
    assert (ws / "notes" / "a.md").read_text() == "first\n"
    assert (ws / "README.md").read_text() == "# readme\n"
    assert gov.sessions.get("lc")["intent_id"] == "INT-7"   # the middleware's own handshake tool
    # post ran: the session holds a stamp of the file it wrote
    assert "notes/a.md" in gov.sessions.get("lc")["reads"]


def test_ask_goes_to_the_approver_or_back_to_the_model(ws: Path) -> None:
    gov = Governor(ws)
    gov.select_intent("INT-7", "lc")
    rm = _call("run_command", {"command": "rm -rf tmp/*"}, "r1")

    agent = create_agent(ToolCallingFake(responses=[rm, AIMessage(content="ok")]), tools=_tools(gov),
                         middleware=[OrchestratorMiddleware(gov, session_id="lc")])
    state = agent.invoke({"messages": [{"role": "user", "content": "clean"}]})
    msg = next(m for m in state["messages"] if isinstance(m, ToolMessage))
    assert msg.status == "error" and "approval-required" in msg.content
    assert (ws / "tmp" / "junk.txt").exists()

    approved = OrchestratorMiddleware(gov, session_id="lc", approver=lambda r: ApprovalDecision(True, "fine"))
    agent = create_agent(ToolCallingFake(responses=[rm, AIMessage(content="ok")]), tools=_tools(gov),
                         middleware=[approved])
    state = agent.invoke({"messages": [{"role": "user", "content": "clean"}]})
    msg = next(m for m in state["messages"] if isinstance(m, ToolMessage))
    assert msg.status == "success" and not (ws / "tmp" / "junk.txt").exists()


def test_session_defaults_to_the_thread_id(ws: Path) -> None:
    gov = Governor(ws)
    model = ToolCallingFake(responses=[_call("select_active_intent", {"intent_id": "INT-7"}, "s"),
                                       _call("record_lesson", {"text": "notes go in notes/"}, "l"),
                                       _call("write_file", {"path": "notes/b.md", "content": "b\n"}, "w"),
                                       AIMessage(content="ok")])
    agent = create_agent(model, tools=_tools(gov), middleware=[OrchestratorMiddleware(gov)])
    agent.invoke({"messages": [{"role": "user", "content": "x"}]},
                 config={"configurable": {"thread_id": "thread-42"}})
    assert (ws / "notes" / "b.md").read_text() == "b\n"
    assert gov.sessions.get("thread-42")["intent_id"] == "INT-7"
    assert "- [INT-7] notes go in notes/" in (ws / "AGENTS.md").read_text()


async def _ainvoke(agent: Any) -> Any:
    return await agent.ainvoke({"messages": [{"role": "user", "content": "x"}]})


def test_async_path_is_governed_too(ws: Path) -> None:
    import asyncio

    gov = Governor(ws)
    model = ToolCallingFake(responses=[_call("write_file", {"path": "notes/c.md", "content": "c\n"}, "w"),
                                       AIMessage(content="ok")])
    agent = create_agent(model, tools=_tools(gov), middleware=[OrchestratorMiddleware(gov, session_id="lc2")])
    state = asyncio.run(_ainvoke(agent))
    msg = next(m for m in state["messages"] if isinstance(m, ToolMessage))
    assert msg.status == "error" and "intent-required" in msg.content
    assert not (ws / "notes" / "c.md").exists()


def test_sandbox_shell_wraps_commands_it_cannot_vouch_for(ws: Path) -> None:
    from orchestrator.sandbox import landlock

    if landlock.abi() < 1:
        pytest.skip("this kernel has no Landlock")
    (ws / ".orchestration" / "policy.yaml").write_text("version: 1\nsandbox:\n  writable: ['{tmp}']\n")
    (ws / "notes" / "gen.py").write_text("open('notes/a.md', 'w').write('a')\nopen('README.md', 'w').write('x')\n")
    gov = Governor(ws, approval_channel="deny")
    model = ToolCallingFake(responses=[_call("select_active_intent", {"intent_id": "INT-7"}, "s"),
                                       _call("run_command", {"command": "python3 notes/gen.py; echo rc=$?"}, "r"),
                                       AIMessage(content="done")])
    agent = create_agent(model, tools=_tools(gov), middleware=[OrchestratorMiddleware(gov, sandbox_shell=True)])
    out = agent.invoke({"messages": [{"role": "user", "content": "go"}]}, {"configurable": {"thread_id": "t"}})
    results = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert "rc=1" in results[-1].content  # ran unasked (channel deny), and the write outside the scope failed
    assert (ws / "notes" / "a.md").read_text() == "a"
    assert (ws / "README.md").read_text() == "# readme\n"
