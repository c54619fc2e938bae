"""IgnoreRules evaluates pathspec's compiled regexes itself; it must agree with pathspec exactly."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from pathspec import GitIgnoreSpec

from orchestrator.config.intentignore import IgnoreRules, _validate

LINES = ["secrets/", "*.pem", "!keep.pem", "/build", "docs/**/private/*", "!docs/**/private/ok.md", "a/b/",
         "*.log", "!important.log", "x?", "generated/**", "!generated/README.md", "node_modules", "[ab]c"]
SEGMENTS = ["secrets", "a", "b", "docs", "private", "x1", "keep.pem", "k.pem", "build", "ok.md", "z.log",
            "important.log", "generated", "README.md", "node_modules", "ac", "src"]


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(st.sampled_from(LINES), min_size=1, max_size=8),
       parts=st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=4))
def test_agrees_with_pathspec(lines: list[str], parts: list[str]) -> None:
    text = "\n".join(lines)
    spec = GitIgnoreSpec.from_lines(lines)
    rules = IgnoreRules(_validate(Path(".intentignore"), text))
    path = "/".join(parts)
    expected = spec.check_file(path)
    ours = rules.match(path)
    assert bool(ours[0]) == bool(expected.include)
    if expected.include:
        assert rules.protected_by(path) is not None


def test_names_the_pattern() -> None:
    rules = IgnoreRules(_validate(Path(".intentignore"), "# c\n\nsecrets/\n*.pem\n!keep.pem\n"))
    assert rules.protected_by("secrets/x/y") == "secrets/"
    assert rules.protected_by("a/k.pem") == "*.pem"
    assert rules.protected_by("a/keep.pem") is None
    assert rules.protected_by("secrets") == "secrets/"  # as a directory (rm -r secrets)
    assert rules.protected_by("src/a.py") is None
