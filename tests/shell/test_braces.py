"""Brace expansion in the shell analyzer (orchestrator/shell/braces.py), checked against real bash."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from orchestrator.shell import braces
from orchestrator.shell import analyze

BASH = shutil.which("bash")

# words as an agent would type them; the expected expansion is whatever the real bash on this machine says
WORDS = [
    "src/{a,b}", "src/{a,../X}", "src/{a,{b,../c}}", "{a,b}{c,d}", "x{,.bak}", "a{b,c}d{e,f}g", "{1..3}",
    "{3..1}", "{01..10..3}", "{a..e}", "{e..a..2}", "{-2..2}", "x{1..2}{a,b}", "{a}", "{}", "{a,}", "{,}",
    "x{", "x}", "{{a,b}", "{a,b}}", "a\\{b,c}", "'{a,b}'", "\"{a,b}\"", "src/{a,\"b c\"}", "{a..3}", "{1..3..0}",
    "pre{a,b}/../{c,d}post", "{a,b\\,c}", "{a,'b,c'}", "~/{a,b}", "{*.py,x}", "{a..a}", "{1..1}",
]


def _bash_words(word: str) -> list[str]:
    out = subprocess.run([BASH, "--norc", "--noprofile", "-c", f"printf '%s\\0' START {word}"], capture_output=True,
                         env={"HOME": "/home/u", "PATH": "/usr/bin:/bin", "LC_ALL": "C"}, cwd="/", check=True)
    return out.stdout.decode().split("\0")[1:-1]  # START: printf with no word prints its format once


@pytest.mark.skipif(BASH is None, reason="bash not installed")
@pytest.mark.parametrize("word", WORDS)
def test_expansion_matches_bash(word: str) -> None:
    expected = _bash_words(word)
    if any(c in word for c in "*~"):
        pytest.skip("pathname/tilde expansion comes after brace expansion (bash applies both)")
    res = analyze(f"touch -- {word}")
    assert list(res.writes) == list(dict.fromkeys(expected)), (res, expected)


def test_quoted_and_escaped_braces_stay_literal() -> None:
    assert analyze("touch 'src/{a,../X}'").writes == ("src/{a,../X}",)
    assert analyze('touch "src/{a,../X}"').writes == ("src/{a,../X}",)
    assert analyze("touch src/\\{a,../X}").writes == ("src/{a,../X}",)


def test_targets_leaving_the_scope_are_seen() -> None:
    assert analyze("touch src/{a,../X}").writes == ("src/a", "src/../X")
    assert analyze("rm -f src/{a,../../X}").deletes == ("src/a", "src/../../X")
    assert analyze("echo hi > src/{../X,a}").writes == ("src/../X", "src/a")
    # the copy's destination is the last word *after* expansion
    assert analyze("cp x src/{a,b}/../../../Y").writes == ("src/b/../../../Y",)
    assert analyze("cd src && touch {a,../../X}").writes == ("src/a", "../X")


def test_expanded_literal_targets_are_resolved_not_unresolved() -> None:
    res = analyze("touch src/{a,b}.py")
    assert res.writes == ("src/a.py", "src/b.py") and not res.unresolved


def test_dynamic_parts_stay_unresolved() -> None:
    res = analyze("touch src/{a,$X}")
    assert "src/a" in res.writes and res.unresolved
    res = analyze("touch src/{a,$(pwd)}")
    assert res.unresolved
    res = analyze("touch src/{a,*.py}")
    assert res.unresolved


def test_too_many_expansions_are_not_enumerated() -> None:
    res = analyze("touch {1..100000}")
    assert res.unresolved and res.writes == ("{1..100000}",)
    many = "{a,b}" * 10  # 1024 words
    res = analyze(f"touch x{many}")
    assert res.unresolved and len(res.writes) == 1
    with pytest.raises(braces.TooMany):
        braces.expand_marked([(c, 0) for c in many], limit=100)


def test_find_exec_placeholder_is_not_an_expansion() -> None:
    res = analyze("find src -name '*.pyc' -exec rm {} +")
    assert res.kind != "read_only" and res.unresolved


def test_braces_in_a_program_name_and_nested_shells() -> None:
    assert analyze("bash -c 'touch src/{a,../X}'").writes == ("src/a", "src/../X")
    assert analyze("{rm,-rf,/}").kind == "unknown"  # bash runs `rm -rf /`; tree-sitter cannot parse it: fail closed
    assert analyze("x{rm,-rf} /").kind == "unknown"  # `xrm x-rf /`: an unknown program
