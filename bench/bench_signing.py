"""Benchmarks for the signed ledger (issue 22 item 2; figures for docs/performance.md). Not a test: prints figures.

    PYTHONPATH=$PWD .venv/bin/python bench/bench_signing.py

- the import of ``cryptography``'s Ed25519 (a fresh process, what the first signed append of a hook process pays);
- the per-record signing cost: ``make_line`` of a typical post-hook record with and without a signer (target
  <= 0.3 ms per record), and ``ledger.append`` (fsync off) without a key, with a key, with key + local anchor;
- the verification cost per line (signatures checked vs not).

The key and anchors go to a throw-away ``XDG_CONFIG_HOME`` / ``XDG_STATE_HOME``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
_TMP = tempfile.mkdtemp(prefix="bench-signing-")
os.environ["XDG_CONFIG_HOME"] = os.path.join(_TMP, "config")
os.environ["XDG_STATE_HOME"] = os.path.join(_TMP, "state")

from bench._util import measure, report  # noqa: E402
from orchestrator import ledger
from orchestrator.state import keys  # noqa: E402
from orchestrator.ledger import anchor, signing  # noqa: E402
from orchestrator.ledger.format import make_line  # noqa: E402


def record(i: int) -> dict:
    """A record shaped like the post-hook's for a small Edit (about 1.2 KB on disk)."""
    return {
        "version": "0.1.0", "id": str(uuid.uuid4()), "timestamp": "2026-11-25T18:00:00.000000Z",
        "vcs": {"type": "git", "revision": "a" * 40}, "tool": {"name": "orchestrator", "version": "0.1.0"},
        "files": [{"path": "src/app.py", "conversations": [{"contributor": {"type": "ai", "model_id": "m"},
                                                             "ranges": [{"start_line": 1, "end_line": 2,
                                                                         "content_hash": "sha256:" + "b" * 64}]}]}],
        "metadata": {ledger.NS: {
            "intent_id": "INT-1", "mutation_class": "INTENT_EVOLUTION", "declared_class": None,
            "class_mismatch": False, "evidence": "python: changed literal(s)", "session_id": str(uuid.uuid4()),
            "agent": "claude-code", "agent_id": None, "tool_name": "Edit", "tool_use_id": f"toolu_{i}",
            "files": [{"path": "src/app.py", "op": "modify", "added": 2, "removed": 1, "before": "sha256:" + "c" * 64,
                       "after": "sha256:" + "d" * 64, "lines": 3, "hunks": [[1, 1, 1, 2]],
                       "line_hashes": [["0123456789", "abcdefabcd"]], "context": [[None, "0011223344"]],
                       "removed_hashes": ["5566778899"]}]}},
    }


def bench_import() -> None:
    code = ("import time; t = time.perf_counter(); "
            "from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey; "
            "from cryptography.hazmat.primitives import serialization; "
            "print((time.perf_counter() - t) * 1e3)")
    xs = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
          for _ in range(15)]
    xs.sort()
    print(f"{'import cryptography Ed25519 (fresh process)':<48} min {xs[0]:9.2f}  p50 {xs[len(xs) // 2]:9.2f}  "
          f"max {xs[-1]:9.2f} ms")
    t0 = time.perf_counter()
    signing.local_signer()
    print(f"{'first local_signer(): key created + loaded':<48} {(time.perf_counter() - t0) * 1e3:9.2f} ms")
    t0 = time.perf_counter()
    keys._cache.clear()
    signing.local_signer()
    print(f"{'local_signer(): key loaded from disk':<48} {(time.perf_counter() - t0) * 1e3:9.2f} ms")


def bench_sign() -> None:
    signer = signing.local_signer()
    rec = record(0)
    prev = "sha256:" + "e" * 64
    lid = "sha256:" + "f" * 64
    plain = report("make_line, unsigned", measure(lambda: make_line(rec, prev)), unit="us")
    signed = report("make_line, signed", measure(lambda: make_line(rec, prev, signer=signer, ledger_id=lid)),
                    unit="us", target="<= 300 us")
    print(f"{'=> signing adds (p50)':<48} {signed['p50'] - plain['p50']:9.2f} us per record")
    report("local_signer() cached (stat + lookup)", measure(signing.local_signer), unit="us")
    with tempfile.TemporaryDirectory() as d:
        orch = Path(d) / ".orchestration"
        orch.mkdir()
        keys.add_trusted(orch, keys.own_public_line())
        where = anchor.anchor_path(orch / "x.jsonl", None)
        for label, kw, name in (("append (fsync off), unsigned", {}, "a.jsonl"),
                                ("append (fsync off), signed", {"signer": signer}, "b.jsonl"),
                                ("append (fsync off), signed + anchor", {"signer": signer, "anchor": where},
                                 "agent_trace.jsonl")):
            path = orch / name
            k = iter(range(10 ** 9))
            report(label, measure(lambda: ledger.append(path, record(next(k)), fsync=False, **kw), n=2000,
                                  warmup=100), unit="us")
        for name in ("a.jsonl", "agent_trace.jsonl"):
            path = orch / name
            n = sum(1 for _ in open(path, "rb"))
            for sigs in (False, True):
                t0 = time.perf_counter()
                res = ledger.verify(path, signatures=sigs)
                dt = time.perf_counter() - t0
                assert res.ok, res
                what = "signatures checked" if sigs else "signatures not checked"
                print(f"{f'verify {name} ({n} lines), {what}':<48} {dt / n * 1e6:9.2f} us per line "
                      f"({res.signed} signed, {res.legacy} legacy)")


if __name__ == "__main__":
    bench_import()
    bench_sign()
