"""orchestrator.gitcli: git runs in the directory it is given, whatever GIT_DIR the caller's shell carries."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from orchestrator.gitcli import git


def test_git_ignores_a_redirecting_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo, other = tmp_path / "repo", tmp_path / "other"
    for d in (repo, other):
        d.mkdir()
        subprocess.run(["git", "init", "-q", str(d)], check=True)
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    monkeypatch.setenv("GIT_PAGER", "false")
    out = git(repo, "rev-parse", "--absolute-git-dir")
    assert out.returncode == 0
    assert Path(out.stdout.decode().strip()) == (repo / ".git").resolve()
    made = git(repo, "commit", "--allow-empty", "-q", "-m", "x", config=("user.name=t", "user.email=t@t.invalid",
                                                                          "commit.gpgsign=false"))
    assert made.returncode == 0, made.stderr
    assert git(repo, "rev-list", "--count", "HEAD").stdout.strip() == b"1"
    assert git(repo, "no-such-subcommand").returncode != 0
