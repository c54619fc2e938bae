from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest

from orchestrator.core.errors import UsageError
from orchestrator.post import lessons


def test_appends_under_existing_heading_and_keeps_content(tmp_path: Path) -> None:
    md = tmp_path / "AGENTS.md"
    md.write_text("# Agents\n\nRules here.\n")
    assert lessons.record(md, "first lesson")
    assert lessons.record(md, "second lesson", "INT-1")
    text = md.read_text()
    assert text.startswith("# Agents\n\nRules here.\n")
    assert text.count("## Lessons") == 1
    assert lessons.relevant(md, "INT-1") == ["first lesson", "second lesson"]
    assert lessons.relevant(md, "INT-2") == ["first lesson"]


def test_rejects_empty_and_huge(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        lessons.record(tmp_path / "A.md", "   ")
    with pytest.raises(UsageError):
        lessons.record(tmp_path / "A.md", "x" * 3000)


def _add(args: tuple[str, int]) -> bool:
    return lessons.record(Path(args[0]), f"lesson number {args[1]}")


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    md = tmp_path / "AGENTS.md"
    with multiprocessing.get_context("fork").Pool(4) as pool:
        assert all(pool.map(_add, [(str(md), i) for i in range(40)]))
    assert sorted(lessons.relevant(md, None, limit=100)) == sorted(f"lesson number {i}" for i in range(40))


def test_a_symlinked_agents_md_is_refused_never_copied(tmp_path: Path) -> None:
    """Issue 28 audit: the lesson is written back by an atomic rename; reading through a link would copy the link's
    target (any file the link names) into AGENTS.md."""
    secret = tmp_path / "secret.txt"
    secret.write_text("token=abc\n")
    agents = tmp_path / "AGENTS.md"
    agents.symlink_to(secret)
    with pytest.raises(UsageError):
        lessons.record(agents, "keep it small")
    assert agents.is_symlink() and secret.read_text() == "token=abc\n"
