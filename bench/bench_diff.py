"""The post-hook's line diff (``orchestrator.core.diffing.diff_hunks``) on its worst case: a big file whose changed middle
is full of repeated lines (half the lines of a brace-heavy JS file re-indented). difflib is near-quadratic there;
above ``diffing._BIG`` line pairs the diff goes to ``git diff --no-index --histogram``.

    .venv/bin/python bench/bench_diff.py
"""

from __future__ import annotations

import random
import sys
import time
from difflib import SequenceMatcher
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from orchestrator.core.diffing import diff_hunks  # noqa: E402


def case(n: int) -> tuple[list[str], list[str]]:
    rng = random.Random(n)
    pool = ["}\n", "\n", "return x;\n", "i++;\n", "if (a) {\n", "});\n", "const y = 1;\n"]
    old = ["  " + rng.choice(pool) for _ in range(n)]
    new = [("    " + ln.lstrip(" ")) if i % 2 else ln for i, ln in enumerate(old)]
    return old, new


def main() -> None:
    print(f"{'lines':>6}  {'diff_hunks':>11}  {'hunks':>6}  {'difflib alone (autojunk=False)':>31}")
    for n in (500, 1000, 2000, 4000, 8000):
        old, new = case(n)
        t0 = time.perf_counter()
        hunks = diff_hunks(old, new)
        ours = time.perf_counter() - t0
        if n <= 2000:
            t0 = time.perf_counter()
            SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
            plain = f"{time.perf_counter() - t0:9.3f} s"
        else:
            plain = "(skipped: minutes)"
        print(f"{n:>6}  {ours:9.3f} s  {len(hunks):>6}  {plain:>31}")


if __name__ == "__main__":
    main()
