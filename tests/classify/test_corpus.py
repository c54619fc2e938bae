"""The labelled classification corpus (tests/data/classify/): agreement with the reviewer's labels, per language.

``bench/bench_classify.py -v`` prints the same figures and lists every disagreement.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from orchestrator.classify.mutation import AST_REFACTOR, classify
from orchestrator.core.diffing import changed_ranges

DATA = Path(__file__).parents[1] / "data" / "classify"


def _agreement(name: str) -> tuple[float, int, Counter[str]]:
    rows = [json.loads(x) for x in (DATA / name).read_text(encoding="utf-8").splitlines() if x.strip()]
    ok = 0
    langs: Counter[str] = Counter()
    for r in rows:
        langs[r["lang"]] += 1
        _, hunks = changed_ranges(r["old"], r["new"])
        cls, _ = classify(r["path"], r["old"], r["new"], hunks)
        ok += ("R" if cls == AST_REFACTOR else "E") == r["label"]
    return ok / len(rows), len(rows), langs


def test_corpus_agreement_at_least_90_percent() -> None:
    share, n, langs = _agreement("corpus.jsonl")
    assert n >= 150 and set(langs) == {"python", "js/ts", "yaml/json/toml", "markdown", "shell"}
    assert share >= 0.90, share


def test_heldout_agreement() -> None:
    """heldout.jsonl was measured once at 87.8%, then its misses were fixed (so it is no longer held out: 100%);
    heldout2.jsonl was written after those fixes and measured once at 91.1%. Both stay as floors."""
    share, n, _ = _agreement("heldout.jsonl")
    assert n >= 40 and share >= 0.95, share
    share, n, _ = _agreement("heldout2.jsonl")
    assert n >= 45 and share >= 0.90, share


def test_corpus_regenerates_identically() -> None:
    import importlib.util
    for script, out in (("make_corpus.py", "corpus.jsonl"), ("make_heldout.py", "heldout.jsonl"),
                        ("make_heldout2.py", "heldout2.jsonl")):
        spec = importlib.util.spec_from_file_location("m", DATA / script)
        assert spec and spec.loader
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        rows = mod.rows() if hasattr(mod, "rows") else [
            {"lang": a, "path": b, "name": c, "old": d, "new": e, "label": f} for a, b, c, d, e, f in mod.ROWS]
        assert [json.loads(x) for x in (DATA / out).read_text(encoding="utf-8").splitlines()] == rows
