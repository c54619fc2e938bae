"""Agreement of the computed mutation class with the labelled sets in tests/data/classify/ (corpus + held-out).

Prints agreement per language and overall, whole-file and region mode (the pair embedded in a bigger file and
classified on the diff's hunks, as the post-hook does), and lists the disagreements (`-v`).

    .venv/bin/python bench/bench_classify.py [-v]
"""

from __future__ import annotations

import json
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from orchestrator.classify.mutation import AST_REFACTOR, classify  # noqa: E402
from orchestrator.core.diffing import changed_ranges  # noqa: E402

DATA = ROOT / "tests" / "data" / "classify"


def load(name: str = "corpus.jsonl") -> list[dict]:
    return [json.loads(x) for x in (DATA / name).read_text(encoding="utf-8").splitlines() if x.strip()]


def agreement(rows: list[dict]) -> tuple[dict[str, list[int]], list[tuple[dict, str, str]]]:
    """{lang: [agree, total]} and the disagreements (row, computed label, evidence)."""
    per: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    bad = []
    for r in rows:
        _, hunks = changed_ranges(r["old"], r["new"])
        cls, ev = classify(r["path"], r["old"], r["new"], hunks)
        got = "R" if cls == AST_REFACTOR else "E"
        per[r["lang"]][1] += 1
        if got == r["label"]:
            per[r["lang"]][0] += 1
        else:
            bad.append((r, got, ev))
    return per, bad


def main() -> int:
    for name in ("corpus.jsonl", "heldout.jsonl", "heldout2.jsonl"):
        rows = load(name)
        t0 = time.perf_counter()
        per, bad = agreement(rows)
        dt = time.perf_counter() - t0
        total = [sum(v[0] for v in per.values()), sum(v[1] for v in per.values())]
        print(f"== {name}")
        for lang, (ok, n) in sorted(per.items()):
            print(f"{lang:16s} {ok:4d}/{n:<4d} {100 * ok / n:5.1f}%")
        print(f"{'overall':16s} {total[0]:4d}/{total[1]:<4d} {100 * total[0] / total[1]:5.1f}%   "
              f"({1000 * dt / len(rows):.2f} ms per pair)")
        if "-v" in sys.argv:
            for r, got, ev in bad:
                print(f"  [{r['lang']}] {r['name']}: labelled {r['label']}, computed {got} — {ev}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
