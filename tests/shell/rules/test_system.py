"""System and macOS tools (orchestrator/shell/rules/system.py): kill, multi-command CLIs, lipo/sips/plutil."""

from __future__ import annotations

import pytest

from orchestrator.shell import analyze


@pytest.mark.parametrize("cmd", [
    "kill -9 -1",
])
def test_sees_through_to_destructive(cmd: str) -> None:
    assert analyze(cmd).kind == "destructive", analyze(cmd)


@pytest.mark.parametrize("cmd", [
    # a multi-command CLI without a subcommand; bare pre-commit == pre-commit run (runs the hooks)
    "diskutil", "tmutil", "spctl", "sample", "pre-commit",
])
def test_not_vouched_for(cmd: str) -> None:
    assert analyze(cmd).kind in ("unknown", "destructive"), analyze(cmd)


@pytest.mark.parametrize("cmd", [
    "lipo bin -verify_arch x86_64 arm64", "plutil file.plist", "sips image.png", "spctl --status",
    "spctl --disable-status",
])
def test_read_only_semantics(cmd: str) -> None:
    assert analyze(cmd).kind == "read_only", analyze(cmd)


@pytest.mark.parametrize("cmd", [
    "lipo -create a b -output c", "sips -s format jpeg image.png", "plutil -convert xml1 f.plist",
])
def test_still_not_read_only(cmd: str) -> None:
    assert analyze(cmd).kind != "read_only", analyze(cmd)
