"""What scanning the workspace's siblings for secret files costs on the hook's hot path (issue 21, remaining gaps).

Usage: python bench/bench_sibling_secrets.py [--runs N]

Builds, in a temp dir, ``parent/ws`` (a workspace of 2,000 files) beside sibling projects of 2,000 files each (a
``src/`` tree three levels deep, a ``node_modules/`` and a ``.git/`` that the scan skips, a ``.env``), then times in
fresh processes (a one-shot hook process: nothing memoised) and in one process (the daemon: the directory memo
warm):

- ``workspace``: :func:`orchestrator.secrets.patterns.find_secret_files` as before (the workspace + the home's credentials);
- ``siblings``: :func:`orchestrator.secrets.scan.sibling_secrets` alone (depth 3 below the parent, budget 5,000 entries).

Prints milliseconds (median of N runs) for 2, 8 and 20 siblings.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

PROBE = r"""
import sys, time, json
t0 = time.perf_counter()
from orchestrator.secrets import patterns as secrets, scan as secret_scan
m = secrets.matcher()
root = sys.argv[1]
t1 = time.perf_counter()
ws = secrets.find_secret_files(root, m)
t2 = time.perf_counter()
sib = secret_scan.sibling_secrets(root, m, secrets._SKIP_DIRS)
t3 = time.perf_counter()
ws2 = secrets.find_secret_files(root, m)
t4 = time.perf_counter()
sib2 = secret_scan.sibling_secrets(root, m, secrets._SKIP_DIRS)
t5 = time.perf_counter()
print(json.dumps({"ws": (t2 - t1) * 1e3, "sib": (t3 - t2) * 1e3, "ws_warm": (t4 - t3) * 1e3,
                  "sib_warm": (t5 - t4) * 1e3, "found": len(sib)}))
"""


def _project(path: Path, files: int) -> None:
    per_dir = 50
    for i in range(files):
        d = path / "src" / f"a{i // (per_dir * 10)}" / f"b{(i // per_dir) % 10}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"f{i}.py").write_text("x = 1\n")
    for skipped in ("node_modules/pkg", ".git/objects/ab"):
        (path / skipped).mkdir(parents=True, exist_ok=True)
        for i in range(200):
            (path / skipped / f"o{i}").write_text("x")
    (path / ".env").write_text("TOKEN=x\n")


def measure(siblings: int, runs: int) -> dict[str, float]:
    import json

    base = Path(tempfile.mkdtemp(prefix="orch-bench-siblings-", dir="/var/tmp"))
    try:
        parent = base / "parent"
        _project(parent / "ws", 2000)
        for i in range(siblings):
            _project(parent / f"other{i}", 2000)
        # let the directory keys age past fsutil.RACY_NS, so the warm runs may remember them
        old = time.time() - 10
        for dirpath, _dirs, _files in os.walk(parent):
            os.utime(dirpath, (old, old))
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        got: dict[str, list[float]] = {"ws": [], "sib": [], "ws_warm": [], "sib_warm": []}
        found = 0
        for _ in range(runs):
            out = subprocess.run([sys.executable, "-c", PROBE, str(parent / "ws")], capture_output=True, text=True,
                                 check=True, env=env)
            data = json.loads(out.stdout)
            found = data.pop("found")
            for k, v in data.items():
                got[k].append(v)
        res = {k: statistics.median(v) for k, v in got.items()}
        res["found"] = found
        return res
    finally:
        shutil.rmtree(base, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    print(f"{'siblings':>8} {'files':>7} {'workspace ms':>13} {'+siblings ms':>13} {'warm ws':>8} "
          f"{'warm sib':>9} {'found':>6}")
    for n in (2, 8, 20):
        r = measure(n, args.runs)
        print(f"{n:>8} {2000 * n:>7} {r['ws']:>13.1f} {r['sib']:>13.1f} {r['ws_warm']:>8.1f} {r['sib_warm']:>9.1f} "
              f"{int(r['found']):>6}")


if __name__ == "__main__":
    main()
