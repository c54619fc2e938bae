"""vcs.head_revision reads .git directly; checked against `git rev-parse` on real repositories."""

from __future__ import annotations

import subprocess
from pathlib import Path

from orchestrator.vcs.revision import head_revision


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=cwd, check=True,
                          capture_output=True, text=True).stdout.strip()


def commit(repo: Path, msg: str) -> str:
    (repo / "f").write_text(msg)
    git(repo, "add", "f")
    git(repo, "commit", "-qm", msg)
    return git(repo, "rev-parse", "HEAD")


def test_no_repo_and_unborn_branch(tmp_path: Path) -> None:
    assert head_revision(tmp_path) is None
    git(tmp_path, "init", "-q")
    assert head_revision(tmp_path) is None  # no commit yet


def test_loose_ref_subdir_detached_and_packed(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    first = commit(tmp_path, "one")
    assert head_revision(tmp_path) == first
    (tmp_path / "sub" / "deep").mkdir(parents=True)
    assert head_revision(tmp_path / "sub" / "deep") == first
    second = commit(tmp_path, "two")
    assert head_revision(tmp_path) == second
    git(tmp_path, "pack-refs", "--all")
    assert not any((tmp_path / ".git" / "refs" / "heads").iterdir())
    assert head_revision(tmp_path) == second
    git(tmp_path, "checkout", "-q", "--detach", first)
    assert head_revision(tmp_path) == first


def test_worktree_gitfile_with_commondir(tmp_path: Path) -> None:
    main = tmp_path / "main"
    main.mkdir()
    git(main, "init", "-q")
    commit(main, "one")
    git(main, "branch", "side")
    wt = tmp_path / "wt"
    git(main, "worktree", "add", "-q", str(wt), "side")
    assert (wt / ".git").is_file()
    side_head = commit(wt, "side commit")
    assert head_revision(wt) == side_head == git(wt, "rev-parse", "HEAD")
    assert head_revision(main) != side_head
    git(main, "pack-refs", "--all")
    assert head_revision(wt) == side_head
