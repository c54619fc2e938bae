"""Archivers (orchestrator/shell/rules/archive.py): tar and zip options that run other programs."""

from __future__ import annotations

import pytest

from orchestrator.shell import analyze


@pytest.mark.parametrize("cmd", [
    "tar -cf x.tar --checkpoint=1 --checkpoint-action=exec=sh .", "tar -xf a.tar --to-command=sh",
    "tar -I 'sh -c x' -xf a.tar", "zip -T -TT 'sh -c x' a.zip f",
])
def test_execution_hijacks_are_never_read_only(cmd: str) -> None:
    assert analyze(cmd).kind != "read_only", analyze(cmd)


@pytest.mark.parametrize("cmd", [
    # a --to-command that is not literal
    'tar -xf a.tar --to-command="$CMD"',
])
def test_not_vouched_for(cmd: str) -> None:
    assert analyze(cmd).kind in ("unknown", "destructive"), analyze(cmd)


@pytest.mark.parametrize("cmd", [
    "tar -xf a.tar --to-command=cat", "tar -xf a.tar --to-command cat",
])
def test_read_only_semantics(cmd: str) -> None:
    assert analyze(cmd).kind == "read_only", analyze(cmd)


@pytest.mark.parametrize("cmd", [
    "tar -xf a.tar --to-command='rm -rf x'",
])
def test_still_not_read_only(cmd: str) -> None:
    assert analyze(cmd).kind != "read_only", analyze(cmd)
