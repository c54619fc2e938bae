"""Reading the ledger's last lines (what the console shows) without reading the whole file."""

from __future__ import annotations

import json

from orchestrator.ledger.read import tail_lines


def test_tail_reads_only_the_last_lines(tmp_path) -> None:
    p = tmp_path / "l.jsonl"
    p.write_bytes(b"".join(f'{{"n": {i}}}\n'.encode() for i in range(5000)))
    got = tail_lines(p, 7, block=64)
    assert [json.loads(x)["n"] for x in got] == list(range(4993, 5000))
    assert tail_lines(tmp_path / "missing", 5) == [] and tail_lines(p, 0) == []
    p.write_bytes(b'{"n": 1}\n\n{"n": 2}')  # blank line, no trailing newline
    assert [json.loads(x)["n"] for x in tail_lines(p, 10)] == [1, 2]
