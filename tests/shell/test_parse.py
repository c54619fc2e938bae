"""The parser (orchestrator/shell/parse.py): parse errors, nesting limits, tree-sitter crashers and the ASCII
shadow for non-ASCII text."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from orchestrator.shell import analyze


SHELLISH = st.text(alphabet=st.sampled_from(list("abcrmls -/.*$(){}[]|&;<>'\"`\\\n=~#!0129")), max_size=60)


@pytest.mark.parametrize("cmd", [
    "echo 'unterminated", "ls )", "if then fi", "cat <<",
])
def test_parse_errors_are_unknown(cmd: str) -> None:
    assert analyze(cmd).kind in ("unknown", "destructive"), analyze(cmd)


@settings(max_examples=400, deadline=None)
@given(SHELLISH)
def test_fuzz_never_raises_and_parse_errors_are_not_read_only(cmd: str) -> None:
    res = analyze(cmd)
    assert res.kind in ("read_only", "mutating", "destructive", "unknown")
    from orchestrator.shell.parse import _parser
    tree = _parser().parse(cmd.encode("utf-8", "surrogatepass"))
    if tree.root_node.has_error:
        assert res.kind != "read_only", (cmd, res)


def test_pathological_nesting_is_unknown_not_an_exception() -> None:
    res = analyze("echo " + "$(" * 3000 + "ls" + ")" * 3000)
    assert res.kind == "unknown"


def test_tree_sitter_crashers_are_parsed_safely() -> None:
    # tree-sitter-bash 0.25 segfaults on "{" followed by some astral code points; analyze() parses an ASCII
    # shadow instead. Run in a subprocess so a regression fails the test rather than killing pytest.
    code = (
        "from orchestrator.shell import analyze\n"
        "for s in ['{\\U000dc8a0', 'a{\\U0007ffff', 'D#&;\\u0da2w\\n\\U000c1a861\\U00092d1c{\\u2653\\U000dc8a0',\n"
        "          '{\\U000e0000 x', '{\\U0010ffff}']:\n"
        "    assert analyze(s).kind in ('unknown', 'read_only', 'mutating', 'destructive')\n"
        "print('ok')\n")
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root,
                         env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"}, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "ok", (out.returncode, out.stderr[-500:])


def test_non_ascii_paths_are_reported_exactly() -> None:
    assert analyze("rm -rf données/").deletes == ("données/",)
    assert analyze("echo héllo > fïle.txt").writes == ("fïle.txt",)
    assert analyze("touch 😀.md").writes == ("😀.md",)
    assert analyze("ls 😀 && rm -rf /").kind == "destructive"
