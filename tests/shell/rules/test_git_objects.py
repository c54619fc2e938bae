"""shell/rules/git_objects.py: which git commands print or copy object contents (tagged ``object-read``)."""

from __future__ import annotations

import pytest

from orchestrator.shell import analyze


@pytest.mark.parametrize("command", [
    "git show", "git show HEAD", "git show HEAD:config/deploy.pem", "git show --stat HEAD:a.pem", "git log -p",
    "git log --patch -1", "git log -U5", "git log -L1,3:a.py", "git log --word-diff", "git whatchanged -p",
    "git diff", "git diff HEAD~1", "git diff --cached", "git diff-tree -p HEAD", "git grep x HEAD", "git grep x",
    "git cat-file -p HEAD:a", "git cat-file --batch-all-objects --batch", "git archive HEAD", "git blame a.py",
    "git annotate a.py", "git format-patch -1 --stdout", "git fast-export HEAD", "git stash show -p",
    "git range-diff a...b", "git -C sub log -p", "git --no-pager show HEAD", "git bundle create x HEAD",
    "git checkout-index -a --prefix=/tmp/x/", "git worktree add ../x", "git clone . /tmp/x",
])
def test_tagged(command: str) -> None:
    assert "object-read" in analyze(command).risks


@pytest.mark.parametrize("command", [
    "git status", "git log", "git log --oneline -5", "git log --stat", "git log --name-only", "git diff --stat",
    "git diff --name-only", "git show --stat HEAD", "git show -s --format=%H", "git branch -a", "git stash list",
    "git stash show", "git ls-files", "git ls-tree HEAD", "git rev-parse HEAD", "git worktree list",
    "git log -- -p", "git commit -m 'log -p'",
])
def test_not_tagged(command: str) -> None:
    assert "object-read" not in analyze(command).risks


def test_the_tag_changes_no_kind() -> None:
    assert analyze("git log -p").kind == "read_only"
    assert analyze("git diff > src/x.patch").kind == "mutating"
