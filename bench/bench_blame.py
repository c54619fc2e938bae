"""Blame fidelity after ungoverned edits: seeded random governed edits through the real post-hook, then one
hand-made insert per file, then `orch trace blame`'s attribution compared with the truth line by line.

The truth is simulated independently of blame: each record's own hunks are applied to an owner list (exactly what
happened), and the hand insert inserts an unowned line. Content is drawn from a small vocabulary so that many lines
repeat (`}`, blank lines, `return None`, ...): the "duplicated lines" figure counts only lines whose text occurs
more than once in the file.

    .venv/bin/python bench/bench_blame.py [--files 200] [--seed 17] [--between]

``--between`` puts the hand insert between two governed edits (a broken chain) instead of after the last one.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace as NS

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from orchestrator.ledger.blame import blame  # noqa: E402
from orchestrator.post import trace  # noqa: E402

VOCAB = ["}", "", "    return None", "    pass", "else:", "    i += 1", "end", "# ---", "{", "  x();"]


def line(rng: random.Random, tag: str) -> str:
    return (rng.choice(VOCAB) if rng.random() < 0.4 else f"{tag} {rng.randrange(10**6)}") + "\n"


def run(files: int, seed: int, between: bool) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-blame-") as d:
        return _run(Path(d), files, seed, between)


def _run(tmp: Path, files: int, seed: int, between: bool) -> dict:
    rng = random.Random(seed)
    (tmp / ".orchestration").mkdir()
    gov = NS(workspace=NS(root=tmp, ledger_file=tmp / ".orchestration" / "agent_trace.jsonl",
                          run_dir=tmp / ".orchestration" / "run"), settings={"ledger_fsync": False})
    n_call = 0
    total = ok = dup_total = dup_ok = 0
    t_blame = 0.0
    for f in range(files):
        rel = f"f{f}.txt"
        lines = [line(rng, "base") for _ in range(rng.randrange(30, 80))]
        truth: list[str | None] = []
        edits = rng.randrange(3, 7)
        hand_at = rng.randrange(1, edits) if between else edits
        for k in range(edits + 1):
            if k == hand_at:  # the one hand-made insert
                pos = rng.randrange(len(lines) + 1)
                lines.insert(pos, line(rng, "human"))
                (tmp / rel).write_text("".join(lines))
                truth.insert(pos, None)
            if k == edits:
                break
            if k > 0:
                op = rng.choice(["replace", "insert", "delete", "replace"])
                i = rng.randrange(len(lines))
                if op == "replace":
                    lines[i:i + rng.randrange(1, 3)] = [line(rng, f"g{k}") for _ in range(rng.randrange(1, 3))]
                elif op == "insert":
                    lines[i:i] = [line(rng, f"g{k}") for _ in range(rng.randrange(1, 4))]
                elif len(lines) > 5:
                    del lines[i:i + rng.randrange(1, 3)]
            n_call += 1
            call = NS(tool="Edit", kind="edit", resolved=[rel], shell=None, cwd=str(tmp), tool_use_id=f"t{n_call}",
                      session_id="s", agent="bench", agent_id=None, intent_id=f"{rel}#{k}", mutation_class=None,
                      model_id=None)
            trace.capture(gov, call)
            (tmp / rel).write_text("".join(lines))
            rec = trace.record(gov, call)
            if rec is None:
                continue
            meta = rec["metadata"]["dev.orchestrator"]["files"][0]
            rid = rec["id"]
            if meta["op"] == "create":
                truth = [rid] * len(lines)
            else:
                for os_, ol, _ns, nl in reversed(meta["hunks"]):
                    start = os_ - 1 if ol else os_
                    truth[start:start + ol] = [rid] * nl
        assert len(truth) == len(lines)
        t0 = time.perf_counter()
        res = blame(tmp, gov.workspace.ledger_file, rel)
        t_blame += time.perf_counter() - t0
        got: list[str | None] = [None] * len(lines)
        for r in res["runs"]:
            for i in range(r["start_line"] - 1, r["end_line"]):
                got[i] = r["record"]["id"] if r["record"] else None
        counts: dict[str, int] = {}
        for x in lines:
            counts[x] = counts.get(x, 0) + 1
        for i, x in enumerate(lines):
            total += 1
            ok += got[i] == truth[i]
            if counts[x] > 1:
                dup_total += 1
                dup_ok += got[i] == truth[i]
    return {"files": files, "lines": total, "correct": ok, "dup_lines": dup_total, "dup_correct": dup_ok,
            "blame_ms": 1000 * t_blame / files}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=200)
    ap.add_argument("--seed", type=int, default=17)
    ap.add_argument("--between", action="store_true")
    a = ap.parse_args()
    for between in ([True] if a.between else [False, True]):
        r = run(a.files, a.seed, between)
        where = "between two governed edits" if between else "after the last governed edit"
        print(f"hand insert {where}: {r['correct']}/{r['lines']} lines correct "
              f"({100 * r['correct'] / r['lines']:.2f}%); duplicated lines {r['dup_correct']}/{r['dup_lines']} "
              f"({100 * r['dup_correct'] / max(r['dup_lines'], 1):.2f}%); blame {r['blame_ms']:.2f} ms/file "
              f"[{a.files} files, seed {a.seed}]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
