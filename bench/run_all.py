"""Run the whole benchmark suite: every ``bench/bench_*.py``, one after the other.

Usage: python bench/run_all.py [NAME ...]        (e.g. `python bench/run_all.py pre hook`)

Each script prints its own figures (min / median / max; process timings also as a ratio to
``python -S -c pass`` measured in the same run). Output is also saved to bench/out/latest.txt.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    wanted = set(argv)
    scripts = sorted(p for p in HERE.glob("bench_*.py") if not wanted or p.stem[len("bench_"):] in wanted)
    header = (f"# orchestrator benchmarks — {time.strftime('%Y-%m-%d %H:%M:%S')}\n"
              f"# python {platform.python_version()} on {platform.machine()}, {platform.system()} "
              f"{platform.release()}, {os.cpu_count()} cpus\n")
    lines = [header]
    print(header, flush=True)
    failed = 0
    for script in scripts:
        print(f"## {script.name}", flush=True)
        t0 = time.perf_counter()
        env = {**os.environ, "PYTHONPATH": str(HERE.parent) + os.pathsep + os.environ.get("PYTHONPATH", "")}
        proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env)
        text = proc.stdout + (f"\n[stderr]\n{proc.stderr}" if proc.returncode else "")
        print(text, flush=True)
        print(f"({script.name}: {time.perf_counter() - t0:.1f} s, exit {proc.returncode})\n", flush=True)
        lines += [f"## {script.name}\n", text, "\n"]
        failed += proc.returncode != 0
    out = HERE / "out"
    out.mkdir(exist_ok=True)
    (out / "latest.txt").write_text("".join(lines))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
