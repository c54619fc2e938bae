"""What writing beneath the workspace root without following links costs (orchestrator/core/beneath.py).

The post-hook's restores and reverts open every path component with ``O_NOFOLLOW`` through ``openat`` (one system
call per component) instead of one ``open`` that resolves the path in the kernel (issue 28). Printed per depth:
``beneath.replace`` (lstat the entry, unlink it, create it with ``O_EXCL``, write) against a plain ``open(path,
"wb")`` write of the same bytes, and ``beneath.lstat`` against ``os.lstat``. Only a swap restore or a revert pays it
(rare events), never the pre-hook.

Usage: PYTHONPATH=. python bench/bench_beneath.py [-n 5000]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from _util import report  # noqa: E402

from orchestrator.core import beneath  # noqa: E402

DATA = b"x = 1\n" * 100


def timed(fn, n: int) -> list[float]:
    for _ in range(200):
        fn()
    samples = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return samples


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("-n", type=int, default=5000)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="orch-bench-beneath-"))
    try:
        for depth in (1, 3, 6):
            rel = "/".join(["d"] * (depth - 1) + ["f.py"])
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            full = str(root / rel)

            def plain() -> None:
                with open(full, "wb") as fh:
                    fh.write(DATA)

            report(f"depth {depth}: open(path, 'wb') + write", timed(plain, args.n))
            report(f"depth {depth}: beneath.replace", timed(lambda: beneath.replace(root, rel, DATA), args.n))
            report(f"depth {depth}: os.lstat", timed(lambda: os.lstat(full), args.n))
            report(f"depth {depth}: beneath.lstat", timed(lambda: beneath.lstat(root, rel), args.n))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
