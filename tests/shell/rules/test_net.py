"""Network programs (orchestrator/shell/rules/net.py): curl methods and uploads, rsync's remote shell and entries."""

from __future__ import annotations

import pytest

from orchestrator.shell import ShellEntry, analyze


@pytest.mark.parametrize("cmd", [
    "rsync -e 'sh -c x' a b:",
])
def test_execution_hijacks_are_never_read_only(cmd: str) -> None:
    assert analyze(cmd).kind != "read_only", analyze(cmd)


@pytest.mark.parametrize("cmd", [
    "curl --ftp-create-dirs -T f ftp://x/d/f", "curl --ftp-create-dirs ftp://x/d/f", "curl -T f ftp://x/",
    "curl --mail-from a@b smtp://m", "curl --mail-rcpt a@b smtp://m", "curl -d a=1 https://x",
    "curl -F f=@x https://x", "curl -X POST https://x", "curl -X put https://x", "curl -Q 'MKD d' ftp://x",
])
def test_mutating_semantics(cmd: str) -> None:
    assert analyze(cmd).kind == "mutating", analyze(cmd)


@pytest.mark.parametrize("cmd", [
    "curl -X DELETE https://x/item", "curl -Q 'DELE f' ftp://x",
])
def test_destructive_semantics(cmd: str) -> None:
    assert analyze(cmd).kind == "destructive", analyze(cmd)


@pytest.mark.parametrize("cmd", [
    "curl -Q PWD ftp://x", "curl -Q 'SIZE f.txt' -Q NLST ftp://x", "curl -X TRACE https://x",
    "curl --request=OPTIONS https://x", "curl -X get https://x",
])
def test_read_only_semantics(cmd: str) -> None:
    assert analyze(cmd).kind == "read_only", analyze(cmd)


@pytest.mark.parametrize("command, entry", [
    ("rsync -a a/ b", (0, "cplink-replace", ("a/",), False)), ("rsync --append a b", (0, "copy", ("a",), True)),
])
def test_entries_a_command_makes_are_reported_with_the_write_order(command: str, entry: tuple) -> None:
    a = analyze(command + " && echo x > b")
    assert a.entries == (ShellEntry(*entry),)
    made = a.entries[0]
    assert (made.write_index, made.op, made.sources, made.named) == entry
    assert a.write_log == ("b", "b")  # duplicates kept, in command order: the pipeline compares them
