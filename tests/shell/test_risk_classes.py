"""The approval risk classes among ShellAnalysis.risks, and the structured programs / argv of an analysis."""

from __future__ import annotations

import pytest

from orchestrator.shell import RISKS, analyze
from orchestrator.shell.analysis import APPROVAL_CLASSES


def test_approval_classes_are_risk_keys() -> None:
    assert APPROVAL_CLASSES <= set(RISKS)
    # policy approval.forbid_remember defaults to these names
    assert {"force-push", "history-rewrite", "recursive-delete"} <= APPROVAL_CLASSES


@pytest.mark.parametrize("command, risk", [
    ("git push --force origin main", "force-push"), ("git push -f", "force-push"),
    ("git push origin +main", "force-push"), ("git push --mirror", "force-push"),
    ("git push --force-with-lease", "force-push"), ("git push origin :old", "history-rewrite"),
    ("git push -d origin old", "history-rewrite"), ("git reset --hard HEAD~1", "history-rewrite"),
    ("git rebase -i main", "history-rewrite"), ("git filter-branch --all", "history-rewrite"),
    ("git commit --amend", "history-rewrite"), ("git branch -D x", "history-rewrite"),
    ("git clean -fd", "history-rewrite"), ("git checkout -- a.py", "history-rewrite"),
    ("git restore a.py", "history-rewrite"), ("rm -rf build", "recursive-delete"),
    ("rm -r /", "recursive-delete"), ("find . -delete", "recursive-delete"), ("rm a.txt", "file-delete"),
    ("unlink a", "file-delete"), ("rmdir d", "file-delete"), ("shred -u k", "file-delete"),
    ("sudo -u x env A=1 timeout 5 nice rm -fr build", "recursive-delete"),
    ("sh -c 'cd x && git reset --hard'", "history-rewrite"),
])
def test_risk_class_tags(command: str, risk: str) -> None:
    assert risk in analyze(command).risks


@pytest.mark.parametrize("command", ["git push", "git push --dry-run --force", "git reset HEAD", "git commit -m x",
                                     "git branch new", "git clean -n", "git restore --staged a", "ls", "mv a b"])
def test_no_class_for_ordinary_commands(command: str) -> None:
    assert not APPROVAL_CLASSES & analyze(command).risks


def test_programs_are_unwrapped_simple_commands() -> None:
    assert analyze("env FOO=1 timeout 5 git -C x push -f").programs == (("git", "push"),)
    assert analyze("nice -n 5 pytest -q tests; make test").programs == (("pytest", "tests"), ("make", "test"))
    assert analyze("bash -c 'npm run build'").programs == (("bash", "npm run build"), ("npm", "run"))


@pytest.mark.parametrize("command, argv", [
    ("pytest -x tests/", ("pytest", "-x", "tests/")), ("pytest -k 'a or b'", ("pytest", "-k", "a or b")),
    ("FOO=1 pytest", None), ("pytest > out", None), ("pytest; ls", None), ("(pytest)", None), ("ls *.py", None),
    ("echo $HOME", None), ("a | b", None), ("bash -c 'ls'", ("bash", "-c", "ls")), ("", None),
])
def test_argv_of_one_literal_simple_command(command: str, argv: tuple[str, ...] | None) -> None:
    assert analyze(command).argv == argv
