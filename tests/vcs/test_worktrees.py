"""Worktree-wide runtime state: found by reading ``.git`` with the stdlib, in real repositories made by real git."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from orchestrator.vcs import worktrees
from orchestrator.approvals import ApprovalRequest, Broker
from orchestrator.config.workspace import Workspace, init
from tests.approval_support import git, make_worktrees


def test_main_and_linked_worktrees_share_one_runtime_dir(tmp_path: Path) -> None:
    main, linked = make_worktrees(tmp_path)
    # the main worktree's .orchestration/run (never in the git dir, which a git command's sandbox makes writable)
    assert main.shared_run_dir == linked.shared_run_dir == Path(main.root).resolve() / ".orchestration" / "run"
    assert main.approvals_dir == main.run_dir / "approvals"
    # what stays per worktree: sessions, ledger, intents
    assert main.run_dir != linked.run_dir and main.ledger_file != linked.ledger_file
    assert linked.intents_file.read_text() == main.intents_file.read_text()  # its own checkout of the same file


def test_git_dirs_match_git(tmp_path: Path) -> None:
    main, linked = make_worktrees(tmp_path)
    for ws in (main, linked):
        gitdir, common = worktrees.git_dirs(ws.root)
        want_gitdir = git(ws.root, "rev-parse", "--path-format=absolute", "--git-dir").strip()
        want_common = git(ws.root, "rev-parse", "--path-format=absolute", "--git-common-dir").strip()
        assert (gitdir, common) == (str(Path(want_gitdir).resolve()), str(Path(want_common).resolve()))


def test_worktrees_lists_every_checkout_with_its_branch(tmp_path: Path) -> None:
    main, linked = make_worktrees(tmp_path)
    git(main.root, "worktree", "add", "-q", "--detach", str(tmp_path / "detached"))
    found = {Path(w.path).name: w for w in worktrees.worktrees(linked.root)}
    assert set(found) == {"main", "linked", "detached"}
    assert (found["main"].branch, found["main"].main) == ("main", True)
    assert (found["linked"].branch, found["linked"].main) == ("feature", False)
    assert found["detached"].branch is None and len(found["detached"].head or "") == 40
    assert found["linked"].label() == "linked (feature)"
    assert found["detached"].label().startswith("detached (detached ")
    # governed(): only checkouts holding .orchestration/ (the detached one has it from the commit too), here first
    assert [Path(p).name for p, _wt in worktrees.governed(linked.root)][0] == "linked"


def test_no_sharing_outside_a_worktree_top(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    init(plain)
    ws = Workspace.at(plain)
    assert ws.shared_run_dir == ws.run_dir and worktrees.git_dirs(plain) is None
    assert worktrees.governed(plain) == [(str(plain.resolve()), None)]
    # a governed sub-directory of a repository keeps its own run/ too
    repo = tmp_path / "repo"
    (repo / "sub").mkdir(parents=True)
    git(repo, "init", "-q")
    init(repo / "sub")
    sub = Workspace.at(repo / "sub")
    assert sub.shared_run_dir == sub.run_dir


def test_a_gitdir_file_that_points_nowhere_shares_nothing(tmp_path: Path) -> None:
    root = tmp_path / "broken"
    root.mkdir()
    init(root)
    (root / ".git").write_text("gitdir: /nonexistent/.git/worktrees/x\n")
    ws = Workspace.at(root)
    assert ws.shared_run_dir == ws.run_dir


def _approved_before(run_dir: Path, rid: str) -> None:
    """A broker in ``run_dir`` as an older version left it: a request a person approved for the session."""
    old = Broker(run_dir)
    now = time.time()
    req = ApprovalRequest(id=rid, session_id="s1", tool="Bash", summary="make clean", reasons=["x"],
                          risk="unknown-command", created=now, expires=now + 60, command="make clean",
                          signature="exec:make")
    old.submit(req)
    old.decide(req.id, "approve", scope="session")


def test_legacy_approvals_move_to_the_shared_dir_once(tmp_path: Path) -> None:
    """From a linked worktree's own run/approvals (before worktree-wide approvals; governance, so trusted) to the
    main worktree's .orchestration/run/approvals."""
    main, linked = make_worktrees(tmp_path)
    legacy = Path(linked.root) / ".orchestration" / "run"
    _approved_before(legacy, "abc-000001")
    ws = Workspace.at(linked.root)  # a fresh process's view after the upgrade
    moved = Broker(ws.shared_run_dir)  # the first look at the shared dir moves the old one
    assert not (legacy / "approvals").exists()
    assert moved.dir == ws.approvals_dir == main.run_dir / "approvals" and moved.dir.is_dir()
    [grant] = moved.grants()
    assert grant["worktree"] == str(Path(linked.root).resolve())  # bound to the worktree it was given in
    look = {"session_id": "s1", "intent_id": None, "risk": "unknown-command", "signature": "exec:make"}
    assert moved.find_grant(**look, worktree=str(Path(linked.root).resolve())) is not None
    assert moved.find_grant(**look, worktree="/elsewhere") is None


def test_broker_state_in_the_git_dir_is_never_carried_over(tmp_path: Path) -> None:
    """The git dir is writable for a git-mode command while it runs: a grant found in the old place
    (<common>/orchestration/approvals, a real dir or a link into the scope) may be forged and is never moved into
    the trusted one (tests/sandbox/test_broker_state.py runs the whole attack)."""
    main, linked = make_worktrees(tmp_path)
    legacy = Path(main.root) / ".git" / "orchestration"
    _approved_before(legacy, "abc-000003")
    scope_dir = Path(main.root) / "src" / "approvals"
    scope_dir.mkdir(parents=True)
    for ws in (Workspace.at(linked.root), Workspace.at(main.root)):
        shared = Broker(ws.shared_run_dir)
        assert shared.grants() == [] and shared.pending() == []
        assert (legacy / "approvals" / "grants.json").exists()  # left where it was, never read
    os.rename(legacy / "approvals", legacy / "approvals.old")
    os.symlink(scope_dir, legacy / "approvals")
    Broker(Workspace.at(linked.root).shared_run_dir).pending()
    assert not (main.run_dir / "approvals").is_symlink()


def test_a_repository_without_a_governed_main_worktree_shares_in_the_user_state_dir(tmp_path: Path) -> None:
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    seed = tmp_path / "seed"
    git(tmp_path, "clone", "-q", str(bare), str(seed))
    git(seed, "commit", "-q", "--allow-empty", "-m", "x")
    git(seed, "push", "-q", "origin", "HEAD:main")
    git(bare, "worktree", "add", "-q", str(tmp_path / "a"), "main")
    init(tmp_path / "a")
    ws = Workspace.at(tmp_path / "a")
    assert ws.shared_run_dir == worktrees.state_dir(str(bare.resolve()))
    assert str(ws.shared_run_dir).startswith(os.environ["XDG_STATE_HOME"])  # the tests' throw-away state dir


def test_grants_bind_to_their_worktree(tmp_path: Path) -> None:
    main, linked = make_worktrees(tmp_path)
    broker = Broker(linked.shared_run_dir)
    now = time.time()
    req = ApprovalRequest(id="abc-000002", session_id="same-id", tool="Bash", summary="make clean", reasons=["x"],
                          risk="unknown-command", created=now, expires=now + 60, command="make clean",
                          signature="exec:make", intent_id="INT-1", worktree=str(linked.root), branch="feature")
    broker.submit(req)
    broker.decide(req.id, "approve", scope="intent")
    look = {"session_id": "same-id", "intent_id": "INT-1", "risk": "unknown-command", "signature": "exec:make"}
    assert broker.find_grant(**look, worktree=str(linked.root)) is not None
    assert broker.find_grant(**look, worktree=str(main.root)) is None


def test_hook_path_resolves_the_common_dir_without_git(tmp_path: Path) -> None:
    """Reading .git costs a few stats and reads: no git subprocess, no GitPython on the hook path."""
    _main, linked = make_worktrees(tmp_path)
    script = ("import sys, json\nfrom orchestrator.config.workspace import Workspace\n"
              "ws = Workspace.at(sys.argv[1])\nprint(json.dumps([str(ws.shared_run_dir), "
              "sorted(m for m in sys.modules if m.split('.')[0] in ('git', 'subprocess'))]))\n")
    out = subprocess.run([sys.executable, "-c", script, str(linked.root)], capture_output=True, text=True,
                         check=True)
    shared, heavy = json.loads(out.stdout)
    assert shared.endswith("/main/.orchestration/run") and heavy == []


def test_no_agent_can_write_the_shared_broker(tmp_path: Path) -> None:
    """Decisions are files: from a linked worktree the broker lies outside the workspace, in the main one under .git/."""
    from orchestrator.engine.pipeline import Governor
    from orchestrator.engine.tools import to_call

    main, linked = make_worktrees(tmp_path)
    forged = str(main.approvals_dir / "abc-000001.decision.json")
    for ws, expected in ((linked, "path-outside-workspace"), (main, "governance-file")):
        gov = Governor(ws.root, approval_channel="deny")
        gov.select_intent("INT-1", session_id="s")
        for tool, inp in (("Write", {"file_path": forged, "content": "{}"}),
                          ("Bash", {"command": f"echo '{{}}' > {forged}"})):
            verdict = gov.pre(to_call(tool, inp, session_id="s", cwd=str(ws.root)))
            assert (verdict.decision, verdict.error["type"]) == ("deny", expected), (ws, tool)
