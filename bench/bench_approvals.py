"""Latency from a decision file being written to the waiting side seeing it (watchdog vs polling).

Run: PYTHONPATH=. python bench/bench_approvals.py [--n 50]

For each mode, the main thread blocks in ``Broker.wait`` (as the hook process does) while a writer
thread, after a random 20-60 ms, stamps t0 and writes the decision atomically (``Broker.decide``,
as ``orch approve`` / the TUI do). The waiter stamps t1 when ``wait`` returns; latency = t1 - t0.
Also measured: the cost of starting and stopping the watchdog observer (paid once per request).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from orchestrator.approvals import ApprovalRequest, Broker, _start_observer


def one(b: Broker, i: int, mode: str) -> float:
    now = time.time()
    rid = f"bench-{mode}-{i}"
    b.submit(ApprovalRequest(id=rid, session_id="bench", tool="Bash", summary="rm -rf x", reasons=["bench"],
                             risk="recursive-delete", created=now, expires=now + 60, command="rm -rf x"))
    t0 = [0.0]

    def write() -> None:
        time.sleep(random.uniform(0.02, 0.06))
        t0[0] = time.perf_counter()
        b.decide(rid, "approve")

    w = threading.Thread(target=write)
    w.start()
    got = b.wait(rid, 10.0, mode=mode)
    t1 = time.perf_counter()
    w.join()
    assert got is not None and got["decision"] == "approve"
    b.resolve(b.load(rid), timed_out=False)
    return (t1 - t0[0]) * 1000


WAITER = """
import sys, time
from orchestrator.approvals import Broker
b = Broker(sys.argv[1])
print("ready", flush=True)
got = b.wait(sys.argv[2], 10.0, mode=sys.argv[3])
print(repr(time.time()), flush=True)
"""


def cross_process(b: Broker, i: int, mode: str) -> float:
    """The waiter is another process (like a hook); wall clocks of both processes are compared."""
    now = time.time()
    rid = f"xproc-{mode}-{i}"
    b.submit(ApprovalRequest(id=rid, session_id="bench", tool="Bash", summary="rm -rf x", reasons=["bench"],
                             risk="recursive-delete", created=now, expires=now + 60, command="rm -rf x"))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    p = subprocess.Popen([sys.executable, "-c", WAITER, str(b.dir.parent), rid, mode], stdout=subprocess.PIPE,
                         text=True, env=env)
    assert p.stdout is not None
    assert p.stdout.readline().strip() == "ready"
    time.sleep(0.05)  # let it reach the wait (and start its observer)
    t0 = time.time()
    b.decide(rid, "approve")
    t1 = float(p.stdout.readline())
    p.wait()
    b.resolve(b.load(rid), timed_out=False)
    return (t1 - t0) * 1000


def fmt(xs: list[float]) -> str:
    return f"min {min(xs):6.2f}  median {statistics.median(xs):6.2f}  max {max(xs):6.2f} ms  (n={len(xs)})"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=50)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        b = Broker(Path(tmp))
        b.dir.mkdir(parents=True)
        for mode in ("watchdog", "poll"):
            one(b, -1, mode)  # warm up (imports)
            xs = [one(b, i, mode) for i in range(args.n)]
            print(f"decision -> waiter, {mode:<8}: {fmt(xs)}")
        for mode in ("watchdog", "poll"):
            xs = [cross_process(b, i, mode) for i in range(max(10, args.n // 3))]
            print(f"decision -> other process, {mode:<8}: {fmt(xs)}")
        costs = []
        for _ in range(args.n):
            t = time.perf_counter()
            obs = _start_observer(b.dir, "x", threading.Event())
            obs.stop()
            obs.join()
            costs.append((time.perf_counter() - t) * 1000)
        print(f"watchdog observer start+stop : {fmt(costs)}")


if __name__ == "__main__":
    main()
