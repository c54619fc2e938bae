"""What a shell command actually changed (orchestrator/post/changes.py + trace.record), with real files, real git
repositories, real commands and real hook processes."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace


from orchestrator import ledger
from orchestrator.adapters.claude_code import tool_result
from orchestrator.engine.pipeline import Governor
from orchestrator.post import changes, preimage, trace
from orchestrator.shell import analyze
from orchestrator.engine.tools import to_call
from tests.approval_support import wait_for_requests
from tests.conftest import make_workspace
from tests.waiting import TIMEOUT

GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com"}
ROOT = Path(__file__).resolve().parents[2]


def _repo(tmp_path: Path) -> Path:
    root = make_workspace(tmp_path / "repo", git=True)
    (root / "docs" / "guide.md").write_text("a\nb\nc\n", encoding="utf-8")
    (root / "src" / "lib.py").write_text("def f():\n    return 1\n", encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=root, check=True, env=GIT_ENV)
    return root


def _bash(root: Path, command: str) -> dict:
    """Run ``command`` as Claude Code's Bash tool would; its ``tool_response``."""
    done = subprocess.run(["bash", "-c", command], cwd=root, capture_output=True, text=True, env=GIT_ENV, timeout=60)
    assert done.returncode == 0, done.stderr
    return {"stdout": done.stdout, "stderr": done.stderr, "interrupted": False}


def _ns(rec: dict) -> dict:
    return rec["metadata"][ledger.NS]


def _meta(rec: dict, path: str) -> dict:
    return next(m for m in _ns(rec)["files"] if m["path"] == path)


def _ranges(rec: dict, path: str) -> list[tuple[int, int]]:
    f = next(f for f in rec["files"] if f["path"] == path)
    return [(r["start_line"], r["end_line"]) for c in f["conversations"] for r in c["ranges"]]


# ------------------------------------------------------------------------------------------ snapshot / compare

def test_snapshot_sees_creates_modifies_deletes_and_restored_mtimes(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    gov = Governor(root)
    (root / "src" / "old.txt").write_text("old\n")
    (root / "src" / "keep.txt").write_text("keep\n")
    past = time.time() - 3600
    for name in ("old.txt", "keep.txt", "app.py"):
        os.utime(root / "src" / name, (past, past))
    snap = changes.snapshot(gov, ["src"])
    assert changes.changed(gov, snap) == ([], [], False)
    st = os.stat(root / "src" / "app.py")
    (root / "src" / "app.py").write_text("x = 2\nprint(x)\n")  # same size
    os.utime(root / "src" / "app.py", ns=(st.st_atime_ns, st.st_mtime_ns))  # mtime put back: ctime moved
    (root / "src" / "new.txt").write_text("new\n")
    (root / "src" / "old.txt").unlink()
    os.symlink("keep.txt", root / "src" / "link")
    assert changes.changed(gov, snap) == (["src/app.py", "src/link", "src/new.txt"], ["src/old.txt"], False)


def test_a_racy_file_is_compared_by_content(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    gov = Governor(root)
    (root / "src" / "hot.py").write_text("a = 1\n")  # changed just now: within RACY_NS of the snapshot
    snap = changes.snapshot(gov, ["src"])
    assert "src/hot.py" in snap["racy"]
    (root / "src" / "hot.py").write_text("a = 2\n")
    # a filesystem whose clock did not tick in between would give the same signature: simulate it
    snap["files"]["src/hot.py"] = changes._sig(os.stat(root / "src" / "hot.py"))
    assert changes.changed(gov, snap)[0] == ["src/hot.py"]


def test_whole_tree_scan_skips_git_internals_and_run_state_but_sees_git_config(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    gov = Governor(root)
    snap = changes.snapshot(gov, [""])
    assert not any(p.startswith((".git/objects", ".orchestration/run")) for p in snap["files"])
    (root / ".orchestration" / "run" / "x").write_text("runtime")
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "x"], cwd=root, check=True, env=GIT_ENV)
    assert changes.changed(gov, snap) == ([], [], False)
    with open(root / ".git" / "config", "a") as fh:
        fh.write("[alias]\n\tx = !sh\n")
    assert changes.changed(gov, snap)[0] == [".git/config"]


def test_whole_tree_of_a_git_repository_uses_git_status(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    gov = Governor(root)
    (root / "src" / "dirty.py").write_text("d = 1\n")           # untracked before
    (root / "src" / "lib.py").write_text("def f():\n    return 3\n")  # modified before
    (root / "docs" / "guide.md").unlink()                         # deleted before
    (root / ".gitignore").write_text("*.log\n")
    snap = changes.snapshot(gov, [""])
    assert snap["mode"] == "git"
    assert {"src/dirty.py", "src/lib.py", "docs/guide.md", ".git/config"} <= set(snap["files"])
    assert "src/app.py" not in snap["files"]  # clean: the git index is its snapshot
    assert changes.changed(gov, snap) == ([], [], False)
    (root / "src" / "app.py").write_text("x = 9\n")               # clean -> modified
    (root / "src" / "dirty.py").unlink()                          # untracked -> gone
    (root / "docs" / "guide.md").write_text("back\n")             # deleted -> recreated
    (root / "src" / "build.log").write_text("ignored\n")          # ignored: not seen in git mode (documented)
    assert changes.changed(gov, snap) == (["docs/guide.md", "src/app.py"], ["src/dirty.py"], False)


def test_a_workspace_without_git_is_walked(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "plain")
    gov = Governor(root)
    snap = changes.snapshot(gov, [""])
    assert "mode" not in snap and "src/app.py" in snap["files"]
    (root / "src" / "app.py").write_text("x = 2\n")
    assert changes.changed(gov, snap)[0] == ["src/app.py"]


def test_scan_roots() -> None:
    gov = SimpleNamespace()
    intent = SimpleNamespace(owned_scope=["src/**", "tests/test_*.py"])
    unknown = SimpleNamespace(shell=analyze("pytest -q"), resolved=[])
    assert changes.scan_roots(gov, unknown, intent, None) == [""]
    bounded = SimpleNamespace(shell=analyze("touch src/a.py"), resolved=["src/a.py"])
    assert changes.scan_roots(gov, bounded, intent, None) == ["src/a.py"]
    tree_writer = SimpleNamespace(shell=analyze("git checkout main"), resolved=[])
    assert changes.scan_roots(gov, tree_writer, intent, None) == [""]
    # in the sandbox (#12a sets call.sandboxed) the kernel bounds it: the scope and policy's writable places
    policy = SimpleNamespace(sandbox=SimpleNamespace(writable=[".pytest_cache", "/tmp", "build/**"]))
    sandboxed = SimpleNamespace(shell=analyze("pytest -q"), resolved=[], sandboxed=True)
    assert changes.scan_roots(gov, sandboxed, intent, policy) == [".pytest_cache", "build", "src", "tests"]


# ------------------------------------------------------------------------------------------ through the pipeline

SCRIPT = ("#!/bin/sh\nprintf 'x = 1\\nprint(x)\\ny = 2\\n' > src/app.py\nprintf 'a\\nB\\nc\\n' > docs/guide.md\n"
          "echo hi > src/made.txt\nrm src/lib.py\n")


def test_an_unknown_command_is_traced_with_exact_ranges_and_out_of_scope_changes_reported(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / "src" / "run.sh").write_text(SCRIPT)
    gov = Governor(root, approval_channel="allow", persist_preimages=True)
    gov.select_intent("INT-001", "s")
    cmd = "sh src/run.sh"
    assert gov.pre(to_call("Bash", {"command": cmd}, session_id="s", cwd=str(root), tool_use_id="tu1")).allowed
    preimage._MEM.clear()  # the post-hook runs in another process: only the persisted snapshot survives
    result = _bash(root, cmd)
    rec = gov.post(to_call("Bash", {"command": cmd}, session_id="s", cwd=str(root), tool_use_id="tu1"),
                   tool_result(result))
    assert rec is not None
    # tracked files that were clean: the index blob is the before-content, so ranges are exact
    assert _ranges(rec, "src/app.py") == [(3, 3)]
    assert _ranges(rec, "docs/guide.md") == [(2, 2)]
    assert _ranges(rec, "src/made.txt") == [(1, 1)] and _meta(rec, "src/made.txt")["op"] == "create"
    assert _meta(rec, "src/lib.py")["op"] == "delete"
    assert all(_meta(rec, p).get("unnamed") for p in ("src/app.py", "docs/guide.md", "src/made.txt"))
    assert _meta(rec, "docs/guide.md").get("out_of_scope") and not _meta(rec, "src/app.py").get("out_of_scope")
    assert _ns(rec)["out_of_scope"] == ["docs/guide.md"] and _ns(rec)["scan"] == {"roots": ["."], "mode": "git"}
    warning = trace.warning(rec)
    assert warning["type"] == "out-of-scope-change" and warning["paths"] == ["docs/guide.md"]
    assert warning["intent"] == "INT-001" and warning["hint"]
    assert ledger.verify(gov.workspace.ledger_file).ok
    # orch trace --out-of-scope lists it
    out = subprocess.run([sys.executable, "-m", "orchestrator", "trace", "--out-of-scope", "--jsonl"], cwd=root,
                         capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    assert out.returncode == 0, out.stderr
    assert [json.loads(line)["id"] for line in out.stdout.splitlines()] == [rec["id"]]
    table = subprocess.run([sys.executable, "-m", "orchestrator", "trace", "--out-of-scope"], cwd=root,
                           capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    assert "OUT OF SCOPE" in table.stdout


def test_a_command_that_changed_nothing_leaves_no_record(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    gov = Governor(root, approval_channel="allow")
    gov.select_intent("INT-001", "s")
    cmd = "python3 -c 'import os'"
    call = to_call("Bash", {"command": cmd}, session_id="s", cwd=str(root))
    assert analyze(cmd).kind == "unknown" and gov.pre(call).allowed
    assert gov.post(call, tool_result(_bash(root, cmd))) is None
    assert gov.workspace.ledger_file.read_text() == ""


def test_a_modified_file_that_was_already_dirty_is_attributed_whole_and_says_so(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / "src" / "lib.py").write_text("def f():\n    return 2\n")  # dirty before the command: no clean blob
    gov = Governor(root, approval_channel="allow")
    gov.select_intent("INT-001", "s")
    cmd = "python3 -c \"open('src/lib.py', 'a').write('# end\\n')\""  # unknown: the analyzer names no target
    call = to_call("Bash", {"command": cmd}, session_id="s", cwd=str(root))
    assert gov.pre(call).allowed
    rec = gov.post(call, tool_result(_bash(root, cmd)))
    assert _ranges(rec, "src/lib.py") == [(1, 3)]
    assert "no pre-image" in _meta(rec, "src/lib.py").get("evidence", _ns(rec)["evidence"])


def test_a_destructive_command_approved_in_the_tui_leaves_a_record(tmp_path: Path) -> None:
    from orchestrator.approvals import Broker

    root = _repo(tmp_path)
    gov = Governor(root, approval_channel="tui")
    gov.select_intent("INT-001", "s")
    cmd = "rm -rf src"

    def approve() -> None:
        [found] = wait_for_requests(gov.workspace, 1)  # in the approvals dir shared by a repository's worktrees
        Broker(gov.workspace.shared_run_dir).decide(found.name.split(".")[0], "approve")

    t = threading.Thread(target=approve)
    t.start()
    os.environ["ORCH_APPROVAL_TIMEOUT"] = str(2 * TIMEOUT)  # longer than the approver's wait: it never times out
    try:
        verdict = gov.pre(to_call("Bash", {"command": cmd}, session_id="s", cwd=str(root), tool_use_id="tu5"))
    finally:
        os.environ.pop("ORCH_APPROVAL_TIMEOUT", None)
        t.join()
    assert verdict.allowed, verdict
    rec = gov.post(to_call("Bash", {"command": cmd}, session_id="s", cwd=str(root), tool_use_id="tu5"),
                   tool_result(_bash(root, cmd)))
    assert rec is not None
    assert {m["path"]: m["op"] for m in _ns(rec)["files"]} == {"src/app.py": "delete", "src/lib.py": "delete"}


def test_a_command_a_person_approved_through_agent_ask_leaves_a_record(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    gov = Governor(root, approval_channel="agent-ask")
    gov.select_intent("INT-001", "s")
    cmd = "rm src/lib.py && python3 -c \"open('docs/z.md', 'w').write('z\\n')\""
    verdict = gov.pre(to_call("Bash", {"command": cmd}, session_id="s", cwd=str(root), tool_use_id="tu9"))
    assert verdict.decision == "ask", verdict
    # the person says yes in the agent's own prompt; the agent runs it; the post-hook comes
    rec = gov.post(to_call("Bash", {"command": cmd}, session_id="s", cwd=str(root), tool_use_id="tu9"),
                   tool_result(_bash(root, cmd)))
    assert rec is not None
    ops = {m["path"]: m["op"] for m in _ns(rec)["files"]}
    assert ops == {"src/lib.py": "delete", "docs/z.md": "create"}
    assert _ns(rec)["out_of_scope"] == ["docs/z.md"]


def test_claude_code_post_hook_process_warns_about_out_of_scope_changes(tmp_path: Path) -> None:
    """Real `orch hook claude-code` processes for PreToolUse and PostToolUse (one process each, as Claude Code
    runs them): the post answer carries the structured warning as additionalContext."""
    root = _repo(tmp_path).resolve()
    (root / "src" / "run.sh").write_text(SCRIPT)
    Governor(root).select_intent("INT-001", "sess")
    # the fallback (no sandbox): the command runs as given and really writes outside the scope, which the post-hook
    # reports (with the sandbox the PreToolUse answer would wrap it and the kernel refuse that write)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ORCH_APPROVAL_CHANNEL": "allow", "ORCH_SANDBOX": "off"}
    base = {"session_id": "sess", "cwd": str(root), "tool_name": "Bash", "tool_use_id": "toolu_1",
            "tool_input": {"command": "sh src/run.sh", "description": "run"}, "transcript_path": "/nonexistent"}
    hook = [sys.executable, "-m", "orchestrator", "hook", "claude-code"]
    pre = subprocess.run(hook, input=json.dumps({**base, "hook_event_name": "PreToolUse"}), capture_output=True,
                         text=True, env=env, cwd=root, timeout=60)
    assert pre.returncode == 0 and pre.stdout.strip() == "", pre
    result = _bash(root, "sh src/run.sh")
    post = subprocess.run(hook, input=json.dumps({**base, "hook_event_name": "PostToolUse", "tool_response": {
        "stdout": result["stdout"], "stderr": "", "interrupted": False, "isImage": False}}),
        capture_output=True, text=True, env=env, cwd=root, timeout=60)
    assert post.returncode == 0, post
    out = json.loads(post.stdout)["hookSpecificOutput"]
    assert out["hookEventName"] == "PostToolUse"
    assert out["additionalContext"].startswith("[orchestrator:out-of-scope-change]")
    assert "docs/guide.md" in out["additionalContext"]
    recs = [json.loads(line) for line in (root / ".orchestration" / "agent_trace.jsonl").read_text().splitlines()]
    assert len(recs) == 1 and _ns(recs[0])["out_of_scope"] == ["docs/guide.md"]


def test_orphaned_pre_images_are_swept(tmp_path: Path) -> None:
    d = tmp_path / "preimages"
    d.mkdir()
    old, new = d / "old.json", d / "new.json"
    old.write_text("{}")
    new.write_text("{}")
    past = time.time() - preimage.PREIMAGE_TTL_SECONDS - 60
    os.utime(old, (past, past))
    preimage._sweep(d)
    assert not old.exists() and new.exists()


def test_the_audit_finds_nothing_ungoverned_after_a_traced_script(tmp_path: Path) -> None:
    """What the scan records is what `orch trace audit` checks the working tree against: a script's changes,
    traced by the scan, leave nothing unexplained (without the scan they all would be)."""
    from orchestrator.ledger.audit import audit

    root = _repo(tmp_path)
    (root / "src" / "run.sh").write_text(SCRIPT)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)
    subprocess.run(["git", "commit", "-qm", "script"], cwd=root, check=True, env=GIT_ENV)
    gov = Governor(root, approval_channel="allow")
    gov.select_intent("INT-001", "s")
    call = to_call("Bash", {"command": "sh src/run.sh"}, session_id="s", cwd=str(root), tool_use_id="tu7")
    assert gov.pre(call).allowed
    gov.post(to_call("Bash", {"command": "sh src/run.sh"}, session_id="s", cwd=str(root), tool_use_id="tu7"),
             tool_result(_bash(root, "sh src/run.sh")))
    assert audit(root, gov.workspace.ledger_file)["ungoverned"] == []
