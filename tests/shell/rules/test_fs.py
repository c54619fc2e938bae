"""File-system programs (orchestrator/shell/rules/fs.py): writes, deletes, find, the entries ln/cp/mv/install make."""

from __future__ import annotations

import pytest

from orchestrator.shell import ShellEntry, analyze


@pytest.mark.parametrize("cmd", [
    "find / -delete", "find . -exec rm -rf / \\;", "find . -execdir rm -rf / \\;", "find . -ok rm -rf / \\;",
    "dd if=/dev/zero of=/dev/sda", "chmod -R 777 /",
])
def test_sees_through_to_destructive(cmd: str) -> None:
    assert analyze(cmd).kind == "destructive", analyze(cmd)


@pytest.mark.parametrize("cmd,writes", [
    ("ls | tee a b", ("a", "b")), ("dd if=a of=b", ("b",)), ("touch a b", ("a", "b")), ("mkdir d", ("d",)),
    ("cp a b", ("b",)), ("install a /usr/local/bin/a", ("/usr/local/bin/a",)), ("ln -s a b", ("b",)),
    ("truncate -s0 f", ("f",)), ("chmod +x s.sh", ("s.sh",)), ("chown me f", ("f",)), ("chgrp g f", ("f",)),
])
def test_writes(cmd: str, writes: tuple[str, ...]) -> None:
    res = analyze(cmd)
    assert res.kind in ("mutating", "destructive"), res
    for w in writes:
        assert w in res.writes, res


def test_rm_variable_or_glob_target_is_destructive_and_unresolved() -> None:
    for cmd in ("rm $X", "rm *.txt", "rm \"$DIR\"/a", "rm -f ${FILES[@]}"):
        res = analyze(cmd)
        assert res.kind == "destructive", res
        assert res.unresolved, res


def test_mv_reports_both_sides() -> None:
    res = analyze("mv a.txt b.txt")
    assert res.writes == ("b.txt",) and res.deletes == ("a.txt",)


@pytest.mark.parametrize("cmd", [
    "find . -fprint /etc/passwd",
])
def test_execution_hijacks_are_never_read_only(cmd: str) -> None:
    assert analyze(cmd).kind != "read_only", analyze(cmd)


@pytest.mark.parametrize("cmd", [
    "rm -rf .git", "rm -rf sub/.git/", "mv x /dev/null",
])
def test_more_destructive_forms(cmd: str) -> None:
    assert analyze(cmd).kind == "destructive", analyze(cmd)


@pytest.mark.parametrize("cmd", [
    # commands with missing operands or actions bound to keys
    "ls | rm -rf", "fd -x", "fd --exec-batch",
])
def test_not_vouched_for(cmd: str) -> None:
    assert analyze(cmd).kind in ("unknown", "destructive"), analyze(cmd)


@pytest.mark.parametrize("cmd", [
    "rm -rf /tmp", "rm -rf $TMPDIR", "rm -r /some/path", "TMPDIR=/non-temp rm -rf $TMPDIR/foo",
])
def test_destructive_semantics(cmd: str) -> None:
    assert analyze(cmd).kind == "destructive", analyze(cmd)


@pytest.mark.parametrize("cmd", [
    "fd -x echo",
])
def test_read_only_semantics(cmd: str) -> None:
    assert analyze(cmd).kind == "read_only", analyze(cmd)


@pytest.mark.parametrize("command, entry", [
    ("ln -s a b", (0, "ln", ("a",), True)),
    ("mv a b", (0, "mv", ("a",), True)),
    ("cp -a a b", (0, "cplink", ("a",), True)),
    ("cp -r a b", (0, "cplink", ("a",), True)),  # cp -r copies symlinks as symlinks
    ("cp a b", (0, "copy", ("a",), True)),  # a plain copy dereferences and writes through
    ("cp -L -r a b", (0, "copy", ("a",), True)),
    ("cp --lin a b", (0, "ln", ("a",), True)),  # GNU takes abbreviations: an unknown long option may link
    ("cp -T a b", (0, "copy", ("a",), False)),
    ("install -m 644 a b", (0, "replace", ("a",), True)),
])
def test_entries_a_command_makes_are_reported_with_the_write_order(command: str, entry: tuple) -> None:
    a = analyze(command + " && echo x > b")
    assert a.entries == (ShellEntry(*entry),)
    made = a.entries[0]
    assert (made.write_index, made.op, made.sources, made.named) == entry
    assert a.write_log == ("b", "b")  # duplicates kept, in command order: the pipeline compares them
