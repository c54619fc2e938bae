"""The git rule: destructive and mutating subcommands, configuration that runs code, commit messages as data."""

from __future__ import annotations

import pytest

from orchestrator.shell import ShellEntry, analyze


@pytest.mark.parametrize("cmd", [
    "git checkout -- f", "git checkout .", "git checkout HEAD -- src", "git restore f", "git reset --hard",
    "git clean -fd", "git push --force", "git push -f origin x", "git push --force --force-with-lease",
    "git push -f --force-with-lease",
    "git push origin +main", "git push origin :old", "git rebase main", "git branch -D x", "git stash drop",
    "git stash clear", "git filter-branch --all", "git reflog expire --all", "git gc --prune=now",
])
def test_git_destructive(cmd: str) -> None:
    assert analyze(cmd).kind == "destructive", analyze(cmd)


@pytest.mark.parametrize("cmd", ["git add .", "git commit -m x", "git checkout main", "git switch -c x",
                                 "git restore --staged f", "git reset HEAD f", "git push", "git stash pop",
                                 "git branch new", "git tag v1", "git pull --rebase",
                                 "git push --force-with-lease", "git push --force-with-lease=main:abc origin main",
                                 "git checkout --track origin/x", "git checkout --track=direct main"])
def test_git_mutating(cmd: str) -> None:
    assert analyze(cmd).kind == "mutating", analyze(cmd)


def test_safe_git_config_overrides_stay_read_only() -> None:
    assert analyze("git -c color.ui=always log --oneline").kind == "read_only"
    assert analyze("git -c core.quotepath=false status").kind == "read_only"


def test_tree_writing_git_commands_and_dotdot_are_reported() -> None:
    assert analyze("git checkout main && echo x > f").entries == (ShellEntry(-1, "ln", (), False),)
    assert analyze("git stash -u").kind == "destructive"  # it deletes untracked files it never names
    assert analyze("ln -s ../x y").dotdot is False  # a ".." in a source is read, not written through
    assert analyze("ln -s x y && echo > y/../z").dotdot is True
    assert analyze("CDPATH=/tmp cd x").kind == "unknown"


@pytest.mark.parametrize("cmd", [
    "git status; git reset --hard", "git -C repo reset --hard", "git --no-pager push --force",
])
def test_sees_through_to_destructive(cmd: str) -> None:
    assert analyze(cmd).kind == "destructive", analyze(cmd)


def test_commit_message_is_data() -> None:
    res = analyze("git commit -m 'rm -rf / && git push --force'")
    assert res.kind == "mutating"
    assert res.deletes == ()


@pytest.mark.parametrize("cmd", [
    "git -c core.pager='rm -rf /' log", "git -c alias.st='!rm x' st", "git -c core.fsmonitor=./evil status",
    "git --exec-path=/tmp log", "git grep -O'rm -rf /' foo", "git difftool -x 'rm -rf /'",
])
def test_execution_hijacks_are_never_read_only(cmd: str) -> None:
    assert analyze(cmd).kind != "read_only", analyze(cmd)


@pytest.mark.parametrize("cmd", [
    "git submodule foreach 'rm -rf .'",
])
def test_code_fed_as_data_is_analyzed(cmd: str) -> None:
    assert analyze(cmd).kind == "destructive", analyze(cmd)


@pytest.mark.parametrize("cmd", [
    # checkout option values given as separate words are branch names / pathspecs to git; git -c editor/pager:
    # only vouched for when they cannot run or are themselves read-only
    "git checkout --track direct main", "git checkout --recurse-submodules on-demand main",
    "git checkout --track main file.txt", "git -c core.editor=vim commit", "git -c core.pager='rm -rf x' log",
])
def test_not_vouched_for(cmd: str) -> None:
    assert analyze(cmd).kind in ("unknown", "destructive"), analyze(cmd)


@pytest.mark.parametrize("cmd", [
    "git push --force-with-lease", "git push --force-with-lease origin main",
    "git push --force-with-lease=refs/heads/main", "git checkout --track origin/x",
])
def test_mutating_semantics(cmd: str) -> None:
    assert analyze(cmd).kind == "mutating", analyze(cmd)


@pytest.mark.parametrize("cmd", [
    "git push --force --force-with-lease", "git push -f --force-with-lease",
])
def test_destructive_semantics(cmd: str) -> None:
    assert analyze(cmd).kind == "destructive", analyze(cmd)


@pytest.mark.parametrize("cmd", [
    "git -c core.editor=vim log", "git -c core.pager=less log",
])
def test_read_only_semantics(cmd: str) -> None:
    assert analyze(cmd).kind == "read_only", analyze(cmd)
