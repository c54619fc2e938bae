"""The analyzer's own labelled corpora (tests/data/shell_*.jsonl, made by tests/data/make_shell_corpora.py):
destructive cores crossed with the wrappers and chains that hide them, read-only commands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.shell import analyze


DATA = Path(__file__).resolve().parents[1] / "data"


def _load(name: str) -> list[dict]:
    return [json.loads(line) for line in (DATA / name).read_text(encoding="utf-8").splitlines() if line.strip()]


NOT_RO = _load("shell_not_read_only.jsonl")
RO = _load("shell_read_only.jsonl")


def test_corpora_are_big_enough() -> None:
    assert len(NOT_RO) >= 200
    assert len(RO) >= 200
    assert len({r["command"] for r in NOT_RO}) == len(NOT_RO)


@pytest.mark.parametrize("row", NOT_RO, ids=lambda r: r["command"][:60])
def test_not_read_only_corpus(row: dict) -> None:
    res = analyze(row["command"])
    assert res.kind != "read_only", res
    if row["kind"] != "not_read_only":
        assert res.kind == row["kind"], res
    for p in row.get("writes", []):
        assert p in res.writes, res
    for p in row.get("deletes", []):
        assert p in res.deletes, res


@pytest.mark.parametrize("row", RO, ids=lambda r: r["command"][:60])
def test_read_only_corpus(row: dict) -> None:
    res = analyze(row["command"])
    assert res.kind == "read_only", res
    assert res.writes == () and res.deletes == ()
