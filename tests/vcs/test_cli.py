"""orchestrator.vcs.cli: git runs in the directory it is given, whatever GIT_DIR the caller's shell carries."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from orchestrator.vcs.cli import git


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


def test_cat_blobs_reads_names_with_spaces_and_reports_missing_ones(tmp_path: Path) -> None:
    from orchestrator.vcs.cli import cat_blobs

    repo = tmp_path / "repo"
    (repo / "a dir").mkdir(parents=True)
    (repo / "a dir" / "f x.txt").write_bytes(b"one\ntwo\n")
    (repo / "bin").write_bytes(bytes(range(256)))
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    git(repo, "add", "-A")
    assert git(repo, "commit", "-qm", "x", config=("user.name=t", "user.email=t@t", "commit.gpgsign=false")
               ).returncode == 0
    names = ["HEAD:a dir/f x.txt", "HEAD:no such file.txt", "HEAD:bin", "HEAD:a dir", "HEAD:a dir/f x.txt"]
    got = cat_blobs(repo, names)
    assert got == {"HEAD:a dir/f x.txt": b"one\ntwo\n", "HEAD:no such file.txt": None,
                   "HEAD:bin": bytes(range(256)), "HEAD:a dir": None}
    assert cat_blobs(repo, []) == {}
