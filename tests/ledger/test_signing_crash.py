"""kill -9 at random points of 30 real writer processes (issue 22): no committed record is lost, no unsigned record
is left. A writer appends signed records through the real writer (``ledger.append`` with this machine's signer and
the local anchor) and prints each record's hash once ``append`` returned (committed); the test waits until the
ledger holds a random number of lines past its start, then SIGKILLs the writer mid-stream."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from orchestrator import ledger
from orchestrator.state import keys
from orchestrator.ledger import anchor, signing
from tests.waiting import TIMEOUT, wait_until

WRITER = textwrap.dedent("""\
    import sys, uuid
    sys.path.insert(0, {repo!r})
    from pathlib import Path
    from orchestrator import ledger
    from orchestrator.ledger import anchor, signing
    path = Path(sys.argv[1])
    signer = signing.local_signer()
    where = anchor.for_workspace(path.parent.parent, path)
    rec = {{"version": "0.1.0", "id": "", "timestamp": "2026-11-22T03:00:00.000000Z",
           "tool": {{"name": "orchestrator", "version": "0.1.0"}}, "files": [],
           "metadata": {{ledger.NS: {{"intent_id": "INT-1", "mutation_class": "INTENT_EVOLUTION",
                                     "tool_name": "Edit", "files": [], "pad": "x" * 3000}}}}}}
    print("ready", flush=True)
    while True:
        rec["id"] = str(uuid.uuid4())
        out = ledger.append(path, rec, fsync=False, signer=signer, anchor=where)
        print(out["metadata"][ledger.NS]["chain"]["hash"], flush=True)
""")


def test_kill_9_at_random_points_loses_no_committed_record_and_leaves_none_unsigned(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    orch = root / ".orchestration"
    orch.mkdir(parents=True)
    path = orch / "agent_trace.jsonl"
    keys.add_trusted(orch, keys.own_public_line())
    script = tmp_path / "writer.py"
    script.write_text(WRITER.format(repo=str(Path(__file__).resolve().parents[2])))
    rng = random.Random(22)
    committed: list[str] = []
    torn_runs = 0
    for run in range(30):
        start = path.read_bytes().count(b"\n") if path.exists() else 0
        target = start + rng.randint(1, 25)
        proc = subprocess.Popen([sys.executable, str(script), str(path)], stdout=subprocess.PIPE, text=True)
        try:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"

            def grown() -> bool:
                assert proc.poll() is None, "the writer exited before it was killed"
                return path.exists() and path.read_bytes().count(b"\n") >= target

            wait_until(grown, what=f"run {run}: the ledger to reach {target} lines", interval=0.001)
        finally:
            proc.send_signal(signal.SIGKILL)
            out, _ = proc.communicate(timeout=TIMEOUT)
        committed.extend(h for h in out.split() if h.startswith("sha256:"))
        res = ledger.verify(path, anchor=anchor.for_workspace(root, path))
        if res.torn:
            torn_runs += 1
            ledger.repair(path)
            res = ledger.verify(path, anchor=anchor.for_workspace(root, path))
        assert res.ok, (run, res)
        assert res.legacy == 0 and res.signed == res.records, res
    lines = path.read_bytes().splitlines()
    present = {ledger.line_hash(x) for x in lines}
    assert set(committed) <= present, "a record the writer had committed is gone"
    assert all(signing.parse(x) is not None for x in lines)
    assert len(lines) >= len(committed) >= 30
