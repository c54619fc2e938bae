"""Editors and formatters (orchestrator/shell/rules/editors.py): editors that run commands are unknown."""

from __future__ import annotations

import pytest

from orchestrator.shell import analyze


@pytest.mark.parametrize("cmd", [
    "vim -c ':!rm x' f", 'emacs --batch --eval \'(delete-file "x")\'',
])
def test_code_running_installs_and_editors_are_unknown(cmd: str) -> None:
    assert analyze(cmd).kind == "unknown", analyze(cmd)
