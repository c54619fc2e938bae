"""The telemetry spool: bounded appends, drop counts, shipped offsets, compaction, crash safety, local reading."""

from __future__ import annotations

import json
import multiprocessing
import os
from pathlib import Path

from orchestrator.telemetry import spool


def _ev(i: int, pad: int = 0) -> dict:
    return {"v": 1, "id": f"e{i:06d}", "ts": 1000.0 + i, "event": "decision", "decision": "allow", "x": "p" * pad}


def test_append_then_batches_ship_each_event_once(tmp_path: Path) -> None:
    run = tmp_path / "run"
    for i in range(10):
        assert spool.append(run, _ev(i))
    tdir = spool.directory(run)
    first = spool.next_batch(tdir, max_events=4)
    assert first is not None and [e["id"] for e in first.events] == ["e000000", "e000001", "e000002", "e000003"]
    # not committed (the collector refused): the same events come again
    again = spool.next_batch(tdir, max_events=4)
    assert again is not None and [e["id"] for e in again.events] == [e["id"] for e in first.events]
    again.commit()
    rest = spool.next_batch(tdir, max_events=100)
    assert rest is not None and [e["id"] for e in rest.events] == [f"e{i:06d}" for i in range(4, 10)]
    rest.commit()
    assert spool.next_batch(tdir) is None
    assert spool.pending_bytes(tdir) == 0


def test_bound_drops_and_counts(tmp_path: Path) -> None:
    run = tmp_path / "run"
    line = len(json.dumps(_ev(0, 200), separators=(",", ":"))) + 1
    bound = line * 5
    results = [spool.append(run, _ev(i, 200), bound) for i in range(8)]
    assert results == [True] * 5 + [False] * 3
    assert spool.dropped(run) == 3
    assert [e["id"] for e in spool.read_events(run)] == [f"e{i:06d}" for i in range(5)]


def test_compaction_keeps_the_unshipped_tail_and_history(tmp_path: Path) -> None:
    run = tmp_path / "run"
    tdir = spool.directory(run)
    for i in range(100):
        spool.append(run, _ev(i, 50))
    batch = spool.next_batch(tdir, max_events=60)
    assert batch is not None
    batch.commit()
    assert not spool.compact(tdir, at=10**9)  # below the threshold: nothing to do
    assert spool.compact(tdir, at=1)
    header = Path(tdir, spool.SPOOL).read_bytes().split(b"\n", 1)[0]
    assert json.loads(header)["event"] == "spool"
    spool.append(run, _ev(100))
    rest = spool.next_batch(tdir, max_events=1000)
    assert rest is not None and [e["id"] for e in rest.events] == [f"e{i:06d}" for i in range(60, 101)]
    # local readers see every event once, the shipped ones too (the previous generation)
    assert [e["id"] for e in spool.read_events(run)] == [f"e{i:06d}" for i in range(101)]
    assert [e["id"] for e in spool.read_events(run, since=1099.0)] == ["e000099", "e000100"]


def test_crash_between_compaction_and_state_sends_nothing_twice(tmp_path: Path) -> None:
    run = tmp_path / "run"
    tdir = spool.directory(run)
    for i in range(10):
        spool.append(run, _ev(i))
    batch = spool.next_batch(tdir, max_events=6)
    assert batch is not None
    batch.commit()
    stale = Path(tdir, spool.STATE).read_bytes()
    assert spool.compact(tdir, at=1)
    Path(tdir, spool.STATE).write_bytes(stale)  # as if the process died before saving the new generation's state
    rest = spool.next_batch(tdir, max_events=100)
    assert rest is not None and [e["id"] for e in rest.events] == [f"e{i:06d}" for i in range(6, 10)]


def test_torn_last_line_waits_then_is_skipped_as_corrupt(tmp_path: Path) -> None:
    run = tmp_path / "run"
    tdir = spool.directory(run)
    spool.append(run, _ev(0))
    with open(Path(tdir, spool.SPOOL), "ab") as fh:
        fh.write(b'{"v":1,"id":"torn"')  # a crash in the middle of a write
    batch = spool.next_batch(tdir)
    assert batch is not None and [e["id"] for e in batch.events] == ["e000000"]
    batch.commit()
    assert spool.next_batch(tdir) is None  # the partial line is not consumed while it may still complete
    spool.append(run, _ev(1))
    batch = spool.next_batch(tdir)
    assert batch is not None and batch.events == [] and batch.corrupt == 1


def _writer(run: str, start: int, n: int) -> None:
    for i in range(start, start + n):
        spool.append(run, _ev(i, 100))


def test_concurrent_writers_and_compaction_lose_nothing(tmp_path: Path) -> None:
    run = str(tmp_path / "run")
    tdir = spool.directory(run)
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(run, k * 1000, 300)) for k in range(3)]
    for p in procs:
        p.start()
    shipped: list[str] = []
    while any(p.is_alive() for p in procs) or spool.pending_bytes(tdir):
        batch = spool.next_batch(tdir, max_events=50)
        if batch is not None:
            shipped += [e["id"] for e in batch.events]
            batch.commit()
            spool.compact(tdir, at=2000)
    for p in procs:
        p.join()
    batch = spool.next_batch(tdir, max_events=10**6)
    if batch is not None:
        shipped += [e["id"] for e in batch.events]
    expected = sorted(f"e{k * 1000 + i:06d}" for k in range(3) for i in range(300))
    assert sorted(shipped) == expected  # each event exactly once
    assert spool.dropped(run) == 0


def test_ship_lock_is_exclusive(tmp_path: Path) -> None:
    tdir = str(tmp_path / "t")
    with spool.ship_lock(tdir, wait=False) as held:
        assert held
        with spool.ship_lock(tdir, wait=False) as other:
            assert not other


def test_spool_files_are_private(tmp_path: Path) -> None:
    run = tmp_path / "run"
    spool.append(run, _ev(0))
    assert os.stat(Path(spool.directory(run), spool.SPOOL)).st_mode & 0o077 == 0


def test_deferred_appends_wait_for_the_caller(tmp_path: Path) -> None:
    """The daemon collects a call's events and writes them once the hook has its answer."""
    run = tmp_path / "run"
    with spool.deferred() as pending:
        assert spool.append(run, _ev(0)) and spool.append(run, _ev(1))
        assert list(spool.read_events(run)) == []
    assert list(spool.read_events(run)) == []
    spool.write_deferred(pending)
    assert [e["id"] for e in spool.read_events(run)] == ["e000000", "e000001"]
    spool.append(run, _ev(2))  # outside the context: written at once
    assert len(list(spool.read_events(run))) == 3
