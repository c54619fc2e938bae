"""The Governor as a whole: fail-closed boundary, sessions across processes, the decorator."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.core.errors import IntentError
from orchestrator.core.models import Kind
from orchestrator.engine.pipeline import HOOKS, Denied, Governor
from orchestrator.pre import scope
from orchestrator.engine.tools import to_call

ROOT = Path(__file__).resolve().parents[2]


def test_hook_order_is_documented_order() -> None:
    assert [h.NAME for h in HOOKS] == ["selfguard", "gatekeeper", "scope", "intentignore", "approval", "lease",
                                         "stale"]


def test_injected_hook_exception_denies_with_internal_error(gov: Governor, ws: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    gov.select_intent("INT-001", "s1")

    def boom(ctx: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(scope, "check", boom)
    v = gov.pre(to_call("Write", {"file_path": "src/a.py"}, session_id="s1"))
    assert v.decision == "deny"
    assert v.error["type"] == "internal-error" and v.error["hook"] == "scope"
    assert "disk on fire" in v.error["message"]
    log = (ws / ".orchestration" / "run" / "errors.log").read_text()
    assert "RuntimeError: disk on fire" in log


@pytest.mark.parametrize("bad", ["active_intents: [\n", "- a\n", "active_intents:\n  - id: A\n    status: NOPE\n"])
def test_malformed_intents_deny_with_config_error(ws: Path, bad: str) -> None:
    (ws / ".orchestration" / "active_intents.yaml").write_text(bad)
    v = Governor(ws).pre(to_call("Write", {"file_path": "src/a.py"}))
    assert v.decision == "deny" and v.error["type"] == "config-error"
    assert v.error["file"].endswith("active_intents.yaml")


def test_malformed_policy_denies(ws: Path) -> None:
    (ws / ".orchestration" / "policy.yaml").write_text("approval:\n  channel: yolo\n")
    v = Governor(ws).pre(to_call("Write", {"file_path": "src/a.py"}))
    assert v.error["type"] == "config-error" and "approval.channel" in v.error["message"]


def test_file_tool_without_target_is_refused(gov: Governor) -> None:
    gov.select_intent("INT-001", "s1")
    assert gov.pre(to_call("Write", {"content": "x"}, session_id="s1")).error["type"] == "malformed-call"


def test_select_intent_errors_are_structured(gov: Governor) -> None:
    with pytest.raises(IntentError) as exc:
        gov.select_intent("NOPE", "s1")
    assert exc.value.to_dict()["available"] == ["INT-001", "INT-003"]
    with pytest.raises(IntentError) as exc:
        gov.select_intent("INT-002", "s1")
    assert exc.value.to_dict()["status"] == "PENDING"


def test_two_processes_share_one_session(ws: Path) -> None:
    """Selection in one process is seen by another (Claude Code runs one hook process per event)."""
    code = (
        "import sys, json; from orchestrator.engine.pipeline import Governor; from orchestrator.engine.tools import to_call;"
        "g = Governor(sys.argv[1]);"
        "g.select_intent('INT-001', 'shared') if sys.argv[2] == 'select' else None;"
        "v = g.pre(to_call('Write', {'file_path': 'src/z.py'}, session_id=sys.argv[3]));"
        "print(json.dumps(v.to_dict()))"
    )
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    run = lambda *a: json.loads(subprocess.run([sys.executable, "-c", code, str(ws), *a],  # noqa: E731
                                               capture_output=True, text=True, env=env, check=True).stdout)
    assert run("no", "shared")["decision"] == "deny"
    assert run("select", "shared")["decision"] == "allow"
    assert run("no", "shared")["decision"] == "allow"       # a fresh process sees the selection
    assert run("no", "other")["decision"] == "deny"         # another session does not


def test_corrupt_session_file_grants_nothing(gov: Governor, ws: Path) -> None:
    gov.select_intent("INT-001", "s1")
    (ws / ".orchestration" / "run" / "sessions" / "s1.json").write_text("{not json")
    assert gov.pre(to_call("Write", {"file_path": "src/a.py"}, session_id="s1")).error["type"] == "intent-required"


def test_session_ids_cannot_traverse(gov: Governor, ws: Path) -> None:
    gov.select_intent("INT-001", "../../evil")
    assert not (ws.parent / "evil.json").exists()
    # kept inside the sessions directory, under its sanitised name plus a hash of the id (no two ids share a file)
    assert list((ws / ".orchestration" / "run" / "sessions").glob("*evil~*.json"))


def test_govern_decorator(gov: Governor, ws: Path) -> None:
    @gov.govern(session_id="py")
    def write_file(path: str, content: str) -> str:
        (ws / path).write_text(content)
        return "ok"

    with pytest.raises(Denied) as exc:
        write_file("src/a.py", "x")
    assert exc.value.to_dict()["type"] == "intent-required"
    gov.select_intent("INT-001", "py")
    assert write_file("src/a.py", "x") == "ok"
    assert (ws / "src" / "a.py").read_text() == "x"
    with pytest.raises(Denied) as exc:
        write_file(path="docs/a.md", content="x")
    assert exc.value.to_dict()["type"] == "scope-violation"
    assert not (ws / "docs" / "a.md").exists()


def test_govern_decorator_custom_kind(gov: Governor) -> None:
    @gov.govern(tool="make_report", kind=Kind.READ, path_arg="target")
    def make_report(target: str) -> int:
        return 1

    assert make_report("anything.txt") == 1


def test_lessons_via_governor(gov: Governor, ws: Path) -> None:
    gov.select_intent("INT-001", "s1")
    assert gov.record_lesson("Run the tests before editing app.py", session_id="s1")
    assert not gov.record_lesson("Run  the tests before editing app.py ", session_id="s1")  # duplicate
    text = (ws / "AGENTS.md").read_text()
    assert "## Lessons" in text and "- [INT-001] Run the tests before editing app.py (" in text
    ctx = gov.select_intent("INT-001", "s2")
    assert "<item>Run the tests before editing app.py</item>" in ctx


def test_post_stamps_the_hash_of_what_is_on_disk(gov: Governor, ws: Path) -> None:
    """post() reuses the ledger record's after-hash for the read-stamp; it must equal the file's real hash."""
    from orchestrator.core.fsutil import file_hash

    gov.select_intent("INT-001", "s1")
    call = to_call("Write", {"file_path": "src/app.py"}, session_id="s1")
    assert gov.pre(call).allowed
    (ws / "src" / "app.py").write_text("changed = True\n")
    record = gov.post(call)
    assert record is not None
    stamp = gov.sessions.get("s1")["reads"]["src/app.py"]
    assert stamp == file_hash(ws / "src" / "app.py")
    delete = to_call("Bash", {"command": "rm src/app.py"}, session_id="s1")
    gov.approval_channel = "allow"
    gov._policy_override = None
    assert gov.pre(delete).allowed
    (ws / "src" / "app.py").unlink()
    gov.post(delete)
    assert "src/app.py" not in gov.sessions.get("s1")["reads"]


def test_post_takes_a_tool_result_and_a_failed_one_is_not_traced(gov: Governor, ws: Path) -> None:
    from orchestrator.core.models import ToolResult

    gov.select_intent("INT-001", "s1")
    call = to_call("Write", {"file_path": "src/app.py"}, session_id="s1", tool_use_id="t-fail")
    assert gov.pre(call).allowed
    (ws / "src" / "app.py").write_text("changed = True\n")
    assert gov.post(call, ToolResult.failure()) is None
    assert "src/app.py" not in gov.sessions.get("s1").get("reads", {})  # a failed call stamps nothing
    assert not gov.workspace.ledger_file.exists() or "t-fail" not in gov.workspace.ledger_file.read_text()
    ok = to_call("Write", {"file_path": "src/app.py"}, session_id="s1", tool_use_id="t-ok")
    assert gov.pre(ok).allowed
    (ws / "src" / "app.py").write_text("changed = 2\n")
    assert gov.post(ok, ToolResult()) is not None


def test_post_with_a_dict_still_works_for_one_release_with_a_deprecation_warning(gov: Governor, ws: Path) -> None:
    """The former ``Governor.post(call, dict)``: read for its failure flags only, with a warning naming the way."""
    gov.select_intent("INT-001", "s1")
    for n, (result, traced) in enumerate([({"ok": True}, True), ({"is_error": True}, False), ({"error": "x"}, False),
                                          ({"success": False}, False), ({"ok": False, "stdout": "x"}, True)]):
        call = to_call("Write", {"file_path": f"src/f{n}.py"}, session_id="s1", tool_use_id=f"t{n}")
        assert gov.pre(call).allowed
        (ws / "src" / f"f{n}.py").write_text(f"v = {n}\n")
        with pytest.warns(DeprecationWarning, match="ToolResult"):
            record = gov.post(call, result)  # type: ignore[arg-type]
        assert (record is not None) is traced, result
