"""The ledger queries behind `orch trace` (filters, lookup, export) on a real ledger written by ledger.append."""

from __future__ import annotations

import argparse
from datetime import datetime, timezone
from pathlib import Path

import pytest

from orchestrator import ledger
from orchestrator.core.errors import OrchestratorError, UsageError
from orchestrator.ledger import query
from tests.ledger.test_ledger import rec


@pytest.fixture
def led(tmp_path: Path) -> Path:
    path = tmp_path / ".orchestration" / "agent_trace.jsonl"
    for i in range(3):
        ledger.append(path, rec(i), fsync=False)
    return path


def test_filters_of_reads_only_the_attributes_present() -> None:
    f = query.Filters.of(argparse.Namespace(intent="INT-1", limit=5))
    assert f == query.Filters(intent="INT-1")


def test_parse_since_and_bad_input_are_usage_errors() -> None:
    now = datetime(2026, 1, 31, 12, 0, tzinfo=timezone.utc)
    assert query.parse_since("2h", now) == "2026-01-31T10:00:00.000000Z"
    assert query.parse_since("2026-01-31", now) == "2026-01-31T00:00:00.000000Z"
    with pytest.raises(UsageError, match="--since"):
        query.parse_since("yesterday-ish", now)
    with pytest.raises(UsageError, match="--class"):
        query.build_filter(query.Filters(cls="bogus"), Path("/"))


def test_find_record_by_line_and_id_prefix(led: Path) -> None:
    records = [r for _, r in ledger.iter_records(led)]
    assert query.find_record(led, "L2") == (2, records[1])
    assert query.find_record(led, records[2]["id"][:8]) == (3, records[2])
    with pytest.raises(UsageError):
        query.find_record(led, "abc")
    with pytest.raises(OrchestratorError, match="no record"):
        query.find_record(led, "ffffffff")


def test_export_drops_the_chain_and_pure_drops_our_metadata(led: Path) -> None:
    _, r = query.find_record(led, "L1")
    kept = query.export_record(r, pure=False)
    assert "chain" not in kept["metadata"][ledger.NS] and kept["id"] == r["id"]
    assert "metadata" not in query.export_record(r, pure=True) or ledger.NS not in query.export_record(
        r, pure=True)["metadata"]
