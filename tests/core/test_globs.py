from __future__ import annotations

import pytest

from orchestrator.core.globs import GlobError, compile_many, first_match, translate


@pytest.mark.parametrize(
    ("patterns", "path", "expected"),
    [
        (["src/**"], "src/a.py", True),
        (["src/**"], "src/a/b/c.py", True),
        (["src/**"], "src", True),
        (["src/**"], "srcx/a.py", False),
        (["src/*.py"], "src/a.py", True),
        (["src/*.py"], "src/sub/a.py", False),
        (["src/**/test_*.py"], "src/test_a.py", True),
        (["src/**/test_*.py"], "src/x/y/test_a.py", True),
        (["**/*.md"], "README.md", True),
        (["**/*.md"], "docs/x/a.md", True),
        (["docs/"], "docs/a/b", True),
        (["docs"], "docs/a", True),
        (["a?.txt"], "ab.txt", True),
        (["a?.txt"], "a/.txt", False),
        (["[ab].txt"], "a.txt", True),
        (["[!ab].txt"], "a.txt", False),
        (["./src/**"], "src/x", True),
        ([], "anything", False),
    ],
)
def test_semantics(patterns: list[str], path: str, expected: bool) -> None:
    assert (compile_many(patterns).fullmatch(path) is not None) is expected


@pytest.mark.parametrize("bad", ["", "  ", "/abs/**", "a/../b", "src/[ab", "src/a**b", "C:\\x", "a\nb"])
def test_invalid_patterns(bad: str) -> None:
    with pytest.raises(GlobError):
        translate(bad)


def test_first_match_names_pattern() -> None:
    assert first_match(["docs/**", "src/*.py"], "src/a.py") == "src/*.py"
    assert first_match(["docs/**"], "src/a.py") is None


def test_static_roots_reduce_globs_to_literal_prefixes():
    from orchestrator.core.globs import static_root, static_roots

    assert static_root("src/app/**/*.py") == "src/app"
    assert static_root("tests/test_*.py") == "tests"
    assert static_root("./README.md") == "README.md"
    assert static_root("**/*.py") == ""
    assert static_roots(["src/app/**", "src/**", "docs/*.md", "README.md"]) == ["README.md", "docs", "src"]
    assert static_roots(["src/**", "*.toml"]) == [""]
