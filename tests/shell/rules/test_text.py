"""Text tools (orchestrator/shell/rules/text.py): sed, awk, sort, rg, less, man and the code their options run."""

from __future__ import annotations

import pytest

from orchestrator.shell import analyze


@pytest.mark.parametrize("cmd,writes", [
    ("sed -i s/a/b/ f", ("f",)),
])
def test_writes(cmd: str, writes: tuple[str, ...]) -> None:
    res = analyze(cmd)
    assert res.kind in ("mutating", "destructive"), res
    for w in writes:
        assert w in res.writes, res


@pytest.mark.parametrize("cmd", [
    "rg --pre 'sh -c x' foo", "less '+!rm -rf /' f", "man -P 'rm -rf /' ls", "sort --compress-program=sh f",
    'awk \'BEGIN { while (("ls" | getline l) > 0) print l }\'', "sed -n 'e rm -rf /' f", "sed 's/x/rm -rf \\//e' f",
])
def test_execution_hijacks_are_never_read_only(cmd: str) -> None:
    assert analyze(cmd).kind != "read_only", analyze(cmd)


@pytest.mark.parametrize("cmd", [
    "sort -o out.txt in.txt",
])
def test_mutating_semantics(cmd: str) -> None:
    assert analyze(cmd).kind == "mutating", analyze(cmd)


@pytest.mark.parametrize("cmd", [
    "sort -o - in.txt", 'awk \'{print > "/dev/stdin"}\' f', 'awk \'{print $1 > "/dev/stderr"}\' f',
])
def test_read_only_semantics(cmd: str) -> None:
    assert analyze(cmd).kind == "read_only", analyze(cmd)


@pytest.mark.parametrize("cmd", [
    'awk \'{print > "/dev/stderr"; print > "out"}\' f',
])
def test_still_not_read_only(cmd: str) -> None:
    assert analyze(cmd).kind != "read_only", analyze(cmd)
