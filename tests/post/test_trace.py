"""post/trace: capture + record against real files, a real git repo and the real ledger (gov is a tiny stand-in)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from types import SimpleNamespace as NS

import jsonschema
import pytest

from orchestrator import ledger
from orchestrator.adapters.claude_code import tool_result
from orchestrator.core.diffing import Hunk, hash_lines, split_lines
from orchestrator.core.models import ToolResult
from orchestrator.post import preimage, trace

SCHEMA = json.loads(ledger.schema_path().read_text())
CC = Path("/work/shared/protocols/claude-code")


def make_gov(root: Path, *, fsync: bool = True) -> NS:
    (root / ".orchestration").mkdir(exist_ok=True)
    ws = NS(root=root, ledger_file=root / ".orchestration" / "agent_trace.jsonl",
            run_dir=root / ".orchestration" / "run")
    return NS(workspace=ws, settings={"ledger_fsync": fsync})


def make_call(tool: str = "Edit", paths: tuple[str, ...] = ("a.py",), **kw) -> NS:
    base = dict(tool=tool, kind="edit", resolved=list(paths), shell=None, cwd=None, tool_use_id=None,
                session_id="sess-1", agent="claude-code", agent_id=None, intent_id="INT-7", mutation_class=None,
                model_id="anthropic/claude-sonnet-4-5")
    base.update(kw)
    return NS(**base)


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "a.py").write_text("x = 1\nprint(x)\n")
    subprocess.run(["git", "add", "a.py"], cwd=tmp_path, check=True)
    subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "init"], cwd=tmp_path,
                   check=True)
    return tmp_path


def all_lines(gov: NS) -> list[dict]:
    raw = gov.workspace.ledger_file.read_bytes().splitlines()
    out = [json.loads(x) for x in raw]
    for o in out:
        jsonschema.validate(o, SCHEMA)
    return out


def test_edit_with_capture_records_ranges_class_and_metadata(repo: Path) -> None:
    gov = make_gov(repo)
    call = make_call(tool_use_id="toolu_1", mutation_class="refactor")
    trace.capture(gov, call)
    assert (gov.workspace.run_dir / "preimages" / "toolu_1.json").exists()
    (repo / "a.py").write_text("x = 2\ny = 3\nprint(x)\n")
    rec = trace.record(gov, call)
    assert rec is not None
    (f,) = rec["files"]
    conv = f["conversations"][0]
    assert f["path"] == "a.py"
    assert conv["contributor"] == {"type": "ai", "model_id": "anthropic/claude-sonnet-4-5"}
    assert [(r["start_line"], r["end_line"]) for r in conv["ranges"]] == [(1, 2)]
    assert conv["ranges"][0]["content_hash"] == hash_lines(["x = 2", "y = 3"])
    ns = rec["metadata"][ledger.NS]
    assert ns["intent_id"] == "INT-7" and ns["session_id"] == "sess-1" and ns["tool_use_id"] == "toolu_1"
    assert ns["mutation_class"] == "INTENT_EVOLUTION"  # x's value changed
    assert ns["declared_class"] == "AST_REFACTOR" and ns["class_mismatch"] is True
    import hashlib
    (m,) = ns["files"]
    assert {k: m[k] for k in ("path", "op", "added", "removed", "lines", "hunks")} == \
        {"path": "a.py", "op": "modify", "added": 2, "removed": 1, "lines": 3, "hunks": [[1, 1, 1, 2]]}
    assert m["before"] == "sha256:" + hashlib.sha256(b"x = 1\nprint(x)\n").hexdigest()
    assert m["after"] == "sha256:" + hashlib.sha256((repo / "a.py").read_bytes()).hexdigest()
    assert ns["evidence"].startswith("python:")
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True).stdout.strip()
    assert rec["vcs"] == {"type": "git", "revision": head}
    assert not (gov.workspace.run_dir / "preimages" / "toolu_1.json").exists()  # cleaned after record
    assert ledger.verify(gov.workspace.ledger_file, strict=True).ok
    assert len(all_lines(gov)) == 1


def test_no_file_contents_in_the_ledger(repo: Path) -> None:
    gov = make_gov(repo)
    call = make_call(tool_use_id="t2")
    trace.capture(gov, call)
    (repo / "a.py").write_text("x = 1\nprint(x)\nSECRET_TOKEN = 'correct-horse-battery'\n")
    trace.record(gov, call)
    text = gov.workspace.ledger_file.read_text()
    assert "correct-horse-battery" not in text and "print(x)" not in text


def test_same_tool_use_id_is_never_recorded_twice(repo: Path) -> None:
    gov = make_gov(repo)
    call = make_call(tool_use_id="toolu_dup")
    trace.capture(gov, call)
    (repo / "a.py").write_text("x = 5\nprint(x)\n")
    snap = dict(preimage._MEM[call.tool_use_id])
    assert trace.record(gov, call) is not None
    # The post-hook delivered again (e.g. a retry), even with the tool's own pre-image: its capture is gone, so it
    # is refused as unpaired (issue 28) ...
    with pytest.raises(trace.Unpaired):
        trace.record(gov, call, ToolResult(original="x = 1\nprint(x)\n"))
    # ... and two deliveries that both found the capture (two processes read it from disk) make one record.
    preimage.keep(call.tool_use_id, snap)
    assert trace.record(gov, call, ToolResult(original="x = 1\nprint(x)\n")) is None
    assert len(all_lines(gov)) == 1


def test_unchanged_file_produces_no_record(repo: Path) -> None:
    gov = make_gov(repo)
    call = make_call(tool_use_id="t3")
    trace.capture(gov, call)
    assert trace.record(gov, call) is None
    assert not gov.workspace.ledger_file.exists()


def test_claude_code_edit_fixture_uses_original_file_without_capture(repo: Path) -> None:
    payload = json.loads((CC / "PostToolUse-Edit.json").read_text())
    gov = make_gov(repo)
    (repo / "src").mkdir()
    (repo / "src" / "app.py").write_text("x = 2\ny = 3\nprint(x)\n")  # the state after Claude Code's Edit
    call = make_call(paths=("src/app.py",), tool_use_id=payload["tool_use_id"], session_id=payload["session_id"],
                     pairless=True)  # an event no pre-hook can be found for (as Cursor's afterFileEdit)
    rec = trace.record(gov, call, tool_result(payload["tool_response"]))
    r = rec["files"][0]["conversations"][0]["ranges"]
    # structuredPatch says: -x = 1 / +x = 2 / +y = 3 -> new lines 1..2
    assert [(x["start_line"], x["end_line"]) for x in r] == [(1, 2)]
    assert rec["metadata"][ledger.NS]["files"][0]["op"] == "modify"


def test_claude_code_write_create_fixture(repo: Path) -> None:
    payload = json.loads((CC / "PostToolUse-Write.json").read_text())
    gov = make_gov(repo)
    (repo / "src").mkdir()
    call = make_call(tool="Write", paths=("src/new.py",), tool_use_id=payload["tool_use_id"])
    trace.capture(gov, call)
    (repo / "src" / "new.py").write_text(payload["tool_input"]["content"])
    rec = trace.record(gov, call, tool_result(payload["tool_response"]))
    f = rec["files"][0]
    assert [(x["start_line"], x["end_line"]) for x in f["conversations"][0]["ranges"]] == [(1, 2)]
    ns = rec["metadata"][ledger.NS]
    assert ns["files"][0]["op"] == "create" and ns["mutation_class"] == "INTENT_EVOLUTION"


def test_tool_hunks_give_the_ranges_when_no_pre_image_is_known(repo: Path) -> None:
    gov = make_gov(repo)
    (repo / "a.py").write_text("x = 2\ny = 3\nprint(x)\n")  # no capture, no pre-image from the tool
    rec = trace.record(gov, make_call(tool_use_id="t-h", pairless=True), ToolResult(hunks=[Hunk(1, 1, 1, 2)]))
    assert [(x["start_line"], x["end_line"]) for x in rec["files"][0]["conversations"][0]["ranges"]] == [(1, 2)]
    ns = rec["metadata"][ledger.NS]
    assert ns["evidence"] == "no pre-image (ranges from the agent's patch)"
    assert (ns["files"][0]["added"], ns["files"][0]["removed"]) == (2, 1)


def test_tool_pre_image_is_trusted_over_the_capture_and_created_keeps_an_existing_capture(repo: Path) -> None:
    gov = make_gov(repo)
    call = make_call(tool_use_id="t-o")
    trace.capture(gov, call)  # a.py: "x = 1\nprint(x)\n"
    (repo / "a.py").write_text("x = 1\nprint(x)\nz = 0\n")
    # the tool says the file held only "z = 0\n" before: its pre-image wins, so lines 1-2 are the change
    rec = trace.record(gov, call, ToolResult(original="z = 0\n"))
    assert [(x["start_line"], x["end_line"]) for x in rec["files"][0]["conversations"][0]["ranges"]] == [(1, 2)]
    call2 = make_call(tool_use_id="t-c")
    trace.capture(gov, call2)
    (repo / "a.py").write_text("x = 1\nprint(x)\nz = 0\nw = 1\n")
    # "created" while the capture saw the file: the capture stands (a modify of line 4, not a create)
    rec2 = trace.record(gov, call2, ToolResult(created=True, original="ignored\n"))
    assert rec2["metadata"][ledger.NS]["files"][0]["op"] == "modify"
    assert [(x["start_line"], x["end_line"]) for x in rec2["files"][0]["conversations"][0]["ranges"]] == [(4, 4)]


def test_record_takes_a_tool_result_not_an_agent_dict(repo: Path) -> None:
    gov = make_gov(repo)
    with pytest.raises(TypeError, match="ToolResult"):
        trace.record(gov, make_call(tool_use_id="t-d"), {"originalFile": "x"})  # type: ignore[arg-type]


def test_bash_writes_deletes_and_rename_via_shell_analysis(repo: Path) -> None:
    gov = make_gov(repo)
    (repo / "old.txt").write_text("one\ntwo\n")
    (repo / "gone.txt").write_text("bye\n")
    shell = NS(writes=("out.txt", "new.txt"), deletes=("gone.txt", "old.txt"), kind="mutating")
    call = make_call(tool="Bash", paths=(), shell=shell, cwd=str(repo), tool_use_id="toolu_sh",
                     command="echo hi > out.txt && rm gone.txt && mv old.txt new.txt")
    trace.capture(gov, call)
    subprocess.run("echo hi > out.txt && rm gone.txt && mv old.txt new.txt", shell=True, cwd=repo, check=True)
    rec = trace.record(gov, call)
    ops = {m["path"]: m for m in rec["metadata"][ledger.NS]["files"]}
    assert ops["out.txt"]["op"] == "create"
    assert ops["gone.txt"]["op"] == "delete"
    assert ops["new.txt"]["op"] == "rename" and ops["new.txt"]["from"] == "old.txt"
    assert "old.txt" not in ops
    assert rec["metadata"][ledger.NS]["tool_name"] == "Bash"
    assert ledger.verify(gov.workspace.ledger_file, strict=True).ok


def test_separate_process_post_hook_reads_the_persisted_preimage(repo: Path) -> None:
    """Claude Code runs pre and post hooks in different processes: the snapshot must come from disk."""
    gov = make_gov(repo)
    call = make_call(tool_use_id="toolu_x")
    big = "".join(f"line {i}\n" for i in range(300))
    (repo / "a.py").write_text(big)
    trace.capture(gov, call)
    preimage._MEM.clear()  # what a fresh process would see
    lines = split_lines(big)
    lines[150:152] = ["changed A\n", "changed B\n", "changed C\n"]
    (repo / "a.py").write_text("".join(lines))
    rec = trace.record(gov, make_call(tool_use_id="toolu_x"))
    rng = rec["files"][0]["conversations"][0]["ranges"]
    assert [(x["start_line"], x["end_line"]) for x in rng] == [(151, 153)]
    assert rec["metadata"][ledger.NS]["files"][0]["removed"] == 2


def test_call_without_tool_use_id_gets_a_capture_key(repo: Path) -> None:
    gov = make_gov(repo, fsync=False)
    call = make_call()
    trace.capture(gov, call)
    assert call.capture_key
    (repo / "a.py").write_text("x = 1\nprint(x)\nprint(x)\n")
    rec = trace.record(gov, call, None)
    assert rec["metadata"][ledger.NS]["call_id"] == call.capture_key
    with pytest.raises(trace.Unpaired):  # same call again: its capture is used up
        trace.record(gov, call, None)


def test_paths_outside_workspace_and_governance_state_are_ignored(repo: Path) -> None:
    gov = make_gov(repo)
    shell = NS(writes=("../outside.txt", ".orchestration/x", "$VAR/y"), deletes=())
    call = make_call(tool="Bash", paths=(), shell=shell, cwd=str(repo), tool_use_id="toolu_o")
    trace.capture(gov, call)
    (repo / ".orchestration" / "x").write_text("x")
    assert trace.record(gov, call) is None


def test_bash_glob_delete_is_expanded_before_the_command_runs(repo: Path) -> None:
    gov = make_gov(repo)
    (repo / "build" / "sub").mkdir(parents=True)
    for name in ("a.o", "b.o", "sub/c.o"):
        (repo / "build" / name).write_text(name + "\n")
    shell = NS(writes=(), deletes=("build/*",), kind="destructive")
    call = make_call(tool="Bash", paths=(), shell=shell, cwd=str(repo), tool_use_id="toolu_rm",
                     command="rm -rf build/*")
    trace.capture(gov, call)
    subprocess.run("rm -rf build/*", shell=True, cwd=repo, check=True)
    rec = trace.record(gov, call)
    ops = {m["path"]: m["op"] for m in rec["metadata"][ledger.NS]["files"]}
    assert ops == {"build/a.o": "delete", "build/b.o": "delete", "build/sub/c.o": "delete"}
    assert rec["metadata"][ledger.NS]["mutation_class"] == "INTENT_EVOLUTION"
