from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.agent import AgentLoop
from orchestrator.agent.providers import ProviderError, from_env
from orchestrator.agent.providers.anthropic import AnthropicProvider
from orchestrator.agent.providers.openai import OpenAIProvider
from orchestrator.engine.pipeline import Governor

from .fake_server import FakeAPI


def _anthropic_tool_turn(*uses: tuple[str, str, dict]) -> dict:
    return {"id": "msg", "type": "message", "role": "assistant", "model": "claude-fake", "stop_reason": "tool_use",
            "content": [{"type": "text", "text": "working"}] +
                       [{"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in uses]}


def test_anthropic_provider_drives_a_governed_loop(gov: Governor, ws: Path) -> None:
    replies = [
        (200, _anthropic_tool_turn(("tu_1", "write_file", {"path": "src/a.py", "content": "a = 1\n"}))),
        (200, _anthropic_tool_turn(("tu_2", "select_active_intent", {"intent_id": "INT-1"}),
                                   ("tu_3", "write_file", {"path": "src/a.py", "content": "a = 1\n"}))),
        (200, {"type": "message", "role": "assistant", "model": "claude-fake", "stop_reason": "end_turn",
               "content": [{"type": "text", "text": "all done"}]}),
    ]
    with FakeAPI(replies) as api:
        provider = AnthropicProvider("sk-test", model="claude-fake", base_url=api.url)
        result = AgentLoop(gov, provider, session_id="an").run("create src/a.py")
    assert result.answer == "all done" and result.stopped == "answer"
    assert (ws / "src" / "a.py").read_text() == "a = 1\n"
    first, second, third = api.requests
    assert first["path"] == "/v1/messages"
    assert first["headers"]["x-api-key"] == "sk-test" and first["headers"]["anthropic-version"] == "2023-06-01"
    assert first["body"]["model"] == "claude-fake" and "select_active_intent" in first["body"]["system"]
    assert {t["name"] for t in first["body"]["tools"]} >= {"read_file", "write_file", "run_command"}
    assert all("input_schema" in t for t in first["body"]["tools"])
    # the denial went back as a tool_result error carrying the verdict JSON
    denial = second["body"]["messages"][-1]
    assert denial["role"] == "user" and denial["content"][0]["type"] == "tool_result"
    assert denial["content"][0]["tool_use_id"] == "tu_1" and denial["content"][0]["is_error"] is True
    assert '"type": "intent-required"' in denial["content"][0]["content"]
    # two results of one turn travel in a single user message, in order
    results = third["body"]["messages"][-1]["content"]
    assert [b["tool_use_id"] for b in results] == ["tu_2", "tu_3"] and not any(b["is_error"] for b in results)
    assert third["body"]["messages"][-2]["content"][1]["type"] == "tool_use"


def _openai_turn(content: str | None, calls: list[tuple[str, str, dict]] | None = None) -> dict:
    msg: dict = {"role": "assistant", "content": content}
    if calls:
        msg["tool_calls"] = [{"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
                             for i, n, a in calls]
    return {"id": "c", "model": "gpt-fake", "choices": [{"index": 0, "message": msg,
                                                          "finish_reason": "tool_calls" if calls else "stop"}]}


def test_openai_provider_drives_a_governed_loop(gov: Governor, ws: Path) -> None:
    gov.select_intent("INT-1", "oa")
    replies = [
        (200, _openai_turn(None, [("c1", "write_file", {"path": "README.md", "content": "x"})])),
        (200, _openai_turn("README is out of scope; writing in src instead",
                           [("c2", "write_file", {"path": "src/notes.txt", "content": "x\n"})])),
        (200, _openai_turn("done")),
    ]
    with FakeAPI(replies) as api:
        provider = OpenAIProvider("sk-oa", model="gpt-fake", base_url=api.url + "/v1")
        result = AgentLoop(gov, provider, session_id="oa").run("write a note")
    assert result.answer == "done"
    assert (ws / "README.md").read_text() == "# repo\n" and (ws / "src" / "notes.txt").read_text() == "x\n"
    first, second, _third = api.requests
    assert first["path"] == "/v1/chat/completions" and first["headers"]["authorization"] == "Bearer sk-oa"
    assert first["body"]["messages"][0]["role"] == "system"
    assert first["body"]["tools"][0]["type"] == "function" and "parameters" in first["body"]["tools"][0]["function"]
    tool_msg = second["body"]["messages"][-1]
    assert tool_msg["role"] == "tool" and tool_msg["tool_call_id"] == "c1"
    assert '"type": "scope-violation"' in tool_msg["content"]
    assistant = second["body"]["messages"][-2]
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"path": "README.md", "content": "x"}


def test_http_errors_become_provider_errors(gov: Governor) -> None:
    with FakeAPI([(401, {"type": "error", "error": {"type": "authentication_error"}})]) as api:
        with pytest.raises(ProviderError, match="HTTP 401"):
            AgentLoop(gov, AnthropicProvider("bad", base_url=api.url)).run("x")


def test_unreachable_server_is_a_provider_error() -> None:
    with FakeAPI([]) as api:
        url = api.url
    with pytest.raises(ProviderError, match="cannot reach"):
        OpenAIProvider("k", base_url=url, timeout=2).complete("", [{"role": "user", "content": "x"}], [])


def test_openai_bad_arguments_do_not_crash() -> None:
    from orchestrator.agent.providers.openai import parse_reply

    reply = parse_reply({"choices": [{"message": {"content": None, "tool_calls": [
        {"id": "c", "function": {"name": "write_file", "arguments": "{not json"}}]}}]})
    assert reply.tool_calls[0].input == {"_unparsed_arguments": "{not json"}


def test_from_env_uses_a_provider_only_when_a_key_is_set() -> None:
    assert from_env({}) is None
    p = from_env({"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "http://127.0.0.1:1/v1", "OPENAI_MODEL": "m"})
    assert isinstance(p, OpenAIProvider) and p.model == "m" and p.base_url == "http://127.0.0.1:1/v1"
    p = from_env({"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k2"})
    assert isinstance(p, AnthropicProvider) and p.base_url == "https://api.anthropic.com"
