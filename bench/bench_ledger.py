"""Benchmarks for the trace ledger (figures for docs/performance.md). Not a test: prints min/median/max.

    PYTHONPATH=$PWD /work/venv/bin/python bench/bench_ledger.py            # everything, 1M-record ledger
    PYTHONPATH=$PWD /work/venv/bin/python bench/bench_ledger.py --records 100000 --only record,append

Sections:
  record   post-hook cost: trace.record() for an edit of a 1,000-line Python file (capture timed separately),
           fsync on and off
  append   throughput of 8 writer processes appending concurrently (fsync on and off), lost/torn check
  big      generate an N-record ledger (lines written directly with a correct chain), then time
           `orch trace --intent X --jsonl`, `orch trace blame FILE`, `orch trace verify` (and --chain-only)
           as separate processes, reporting wall time and peak RSS of each
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from types import SimpleNamespace as NS

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from orchestrator import ledger  # noqa: E402
from orchestrator.post import trace  # noqa: E402


def fmt(xs: list[float], unit: str = "ms", scale: float = 1e3) -> str:
    return (f"min {min(xs) * scale:.3f} / median {statistics.median(xs) * scale:.3f} / "
            f"max {max(xs) * scale:.3f} {unit} (n={len(xs)})")


# ----------------------------------------------------------------------------------------------------- record

def bench_record(n: int = 200) -> None:
    print("== post-hook record() for a 1,000-line file edit")
    for fsync in (True, False):
        with tempfile.TemporaryDirectory() as d:
            root = Path(d)
            subprocess.run(["git", "init", "-q"], cwd=root, check=True)
            (root / ".orchestration").mkdir()
            gov = NS(workspace=NS(root=root, ledger_file=root / ".orchestration" / "agent_trace.jsonl",
                                  run_dir=root / ".orchestration" / "run"), settings={"ledger_fsync": fsync})
            lines = [f"def func_{i}(a, b):\n    if a > {i}:\n        return a + b * {i}\n    return b - a\n\n"
                     for i in range(200)]  # 1,000 lines
            (root / "big.py").write_text("".join(lines))
            rec_t, cap_t = [], []
            for k in range(n):
                call = NS(tool="Edit", kind="edit", resolved=["big.py"], shell=None, cwd=str(root),
                          tool_use_id=f"toolu_{k}", session_id="s", agent="claude-code", agent_id=None,
                          intent_id="INT-1", mutation_class=None, model_id="anthropic/claude-sonnet-4-5")
                t0 = time.perf_counter()
                trace.capture(gov, call)
                t1 = time.perf_counter()
                i = (k * 37) % 200
                lines[i] = lines[i].replace(f"b * {i}", f"b * {i + k + 1}", 1) if k % 2 else \
                    lines[i].replace("return b - a", "return (b - a)  # same", 1)
                (root / "big.py").write_text("".join(lines))
                t2 = time.perf_counter()
                r = trace.record(gov, call)
                t3 = time.perf_counter()
                assert r is not None
                cap_t.append(t1 - t0)
                rec_t.append(t3 - t2)
            ok = ledger.verify(gov.workspace.ledger_file, strict=True)
            assert ok.ok and ok.records == n, ok
            print(f"  fsync={fsync!s:5}  record(): {fmt(rec_t)}")
            print(f"  fsync={fsync!s:5}  capture(): {fmt(cap_t)}")


# ----------------------------------------------------------------------------------------------------- append

WRITER = r"""
import sys, time
sys.path.insert(0, sys.argv[4])
from orchestrator import ledger
path, n, tag, fsync = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[5] == "1"
rec = {"version": "0.1.0", "id": "00000000-0000-4000-8000-000000000000", "timestamp": "2026-01-01T00:00:00.000000Z",
       "tool": {"name": "orchestrator", "version": "0.1.0"},
       "files": [{"path": "src/a.py", "conversations": [{"contributor": {"type": "ai"},
                  "ranges": [{"start_line": 1, "end_line": 9, "content_hash": "sha256:" + "a" * 64}]}]}],
       "metadata": {"dev.orchestrator": {"intent_id": tag, "mutation_class": "INTENT_EVOLUTION",
                                         "tool_name": "Edit", "files": [{"path": "src/a.py", "op": "modify"}]}}}
sys.stdin.readline()  # start together
for i in range(n):
    rec["metadata"]["dev.orchestrator"]["seq"] = i
    ledger.append(path, rec, fsync=fsync)
"""


def bench_append(per_writer: int = 1000, writers: int = 8) -> None:
    print(f"== append throughput, {writers} writer processes x {per_writer} records")
    for fsync in (True, False):
        with tempfile.TemporaryDirectory() as d:
            path = Path(d) / "agent_trace.jsonl"
            script = Path(d) / "w.py"
            script.write_text(WRITER)
            procs = [subprocess.Popen([sys.executable, str(script), str(path), str(per_writer), f"W{k}",
                                       str(ROOT), "1" if fsync else "0"], stdin=subprocess.PIPE)
                     for k in range(writers)]
            time.sleep(1.0)  # let interpreters start
            t0 = time.perf_counter()
            for p in procs:
                p.stdin.write(b"go\n")
                p.stdin.flush()
            for p in procs:
                p.wait()
            dt = time.perf_counter() - t0
            res = ledger.verify(path)
            total = writers * per_writer
            seqs: dict[str, set[int]] = {}
            for _, r in ledger.iter_records(path):
                ns = r["metadata"][ledger.NS]
                seqs.setdefault(ns["intent_id"], set()).add(ns["seq"])
            lost = total - sum(len(v) for v in seqs.values())
            print(f"  fsync={fsync!s:5}  {total / dt:,.0f} records/s ({total} in {dt:.2f} s), verify ok={res.ok} "
                  f"records={res.records}, lost={lost}")


# -------------------------------------------------------------------------------------------------------- big

def generate(path: Path, n: int, n_intents: int = 20, n_files: int = 200) -> None:
    """Write n chained records directly (same bytes ledger.append would produce, verified afterwards)."""
    sample, _ = ledger.make_line({
        "version": "0.1.0", "id": "ID", "timestamp": "TS",
        "vcs": {"type": "git", "revision": "REV"}, "tool": {"name": "orchestrator", "version": "0.1.0"},
        "files": [{"path": "PATH", "conversations": [{"contributor": {"type": "ai", "model_id": "MODEL"},
                                                      "ranges": [{"start_line": 11111, "end_line": 22222,
                                                                  "content_hash": "CH"}]}]}],
        "metadata": {ledger.NS: {"intent_id": "INTENT", "mutation_class": "CLASS", "declared_class": None,
                                 "class_mismatch": False, "evidence": "python: changed body: f",
                                 "session_id": "SESSION", "agent": "claude-code", "agent_id": None,
                                 "tool_name": "Edit", "tool_use_id": "TUID",
                                 "files": [{"path": "PATH", "op": "modify", "added": 3, "removed": 1,
                                            "before": "BEFORE", "after": "AFTER", "lines": 1000,
                                            "hunks": [[11111, 33333, 11111, 33333]]}]}}})
    tmpl = sample[:sample.rindex(b'"chain":')].decode()
    for k, v in (("ID", "{id}"), ("TS", "{ts}"), ("REV", "{rev}"), ("PATH", "{path}"), ("CH", "{ch}"),
                 ("INTENT", "{intent}"), ("CLASS", "{cls}"), ("SESSION", "{sess}"), ("TUID", "{tuid}"),
                 ("BEFORE", "{before}"), ("AFTER", "{after}"), ("MODEL", "anthropic/claude-sonnet-4-5")):
        tmpl = tmpl.replace(f'"{k}"', f'"{v}"')
    for k, v in (("11111", "{s}"), ("22222", "{e}"), ("33333", "{n}")):
        tmpl = tmpl.replace(k, v)
    tmpl = tmpl.replace("{", "{{").replace("}", "}}")
    for f in ("id", "ts", "rev", "path", "s", "e", "n", "ch", "intent", "cls", "sess", "tuid", "before", "after"):
        tmpl = tmpl.replace("{{" + f + "}}", "{" + f + "}")
    prev = ledger.GENESIS
    sha = hashlib.sha256
    after_of: dict[int, str] = {}  # per file: the post-image hash, so the next record's "before" chains to it
    rev = "c" * 40
    t0 = time.perf_counter()
    with open(path, "wb", buffering=1 << 22) as out:
        for i in range(n):
            s = 1 + (i * 7) % 900
            fi = i % n_files
            before = after_of.get(fi, "sha256:" + "0" * 64)
            after = after_of[fi] = "sha256:" + sha(b"after %d" % i).hexdigest()
            body = tmpl.format(id=str(uuid.UUID(int=i, version=4)), ts=f"2026-01-01T00:00:00.{i % 1000000:06d}Z",
                               rev=rev, path=f"src/mod_{fi}.py", s=s, e=s + i % 5, n=1 + i % 5,
                               before=before, after=after,
                               ch="sha256:" + sha(str(i).encode()).hexdigest(), intent=f"INT-{i % n_intents:03d}",
                               cls="AST_REFACTOR" if i % 3 == 0 else "INTENT_EVOLUTION", sess=f"sess-{i % 50}",
                               tuid=f"toolu_{i:08d}").encode()
            blank = body + b'"chain":{"prev":"' + prev.encode() + b'","hash":""}}}}'
            h = "sha256:" + sha(blank).hexdigest()
            out.write(body + b'"chain":{"prev":"' + prev.encode() + b'","hash":"' + h.encode() + b'"}}}}\n')
            prev = h
    print(f"  generated {n:,} records ({path.stat().st_size / 1e6:,.0f} MB) in {time.perf_counter() - t0:.1f} s")


def timed(argv: list[str], cwd: Path, repeat: int = 3) -> tuple[list[float], list[float], int]:
    walls, rss = [], []
    rc = 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             env=dict(os.environ, PYTHONPATH=str(ROOT)))
        _, status, ru = os.wait4(p.pid, 0)
        walls.append(time.perf_counter() - t0)
        rss.append(ru.ru_maxrss / 1024)  # KiB -> MiB on Linux
        rc = os.waitstatus_to_exitcode(status)
        p.returncode = rc
    return walls, rss, rc


def generate_more(path: Path, n: int, more: int) -> None:
    """Append ``more`` records the way the post-hook does (ledger.append: lock, chain, one write)."""
    for i in range(n, n + more):
        ledger.append(path, {"version": "0.1.0", "id": str(uuid.UUID(int=i, version=4)),
                             "timestamp": "2026-01-02T00:00:00.000000Z", "vcs": {"type": "git", "revision": "c" * 40},
                             "tool": {"name": "orchestrator", "version": "0.1.0"},
                             "files": [{"path": "src/mod_7.py", "conversations": [{"contributor": {"type": "ai"},
                                                                                   "ranges": []}]}],
                             "metadata": {ledger.NS: {"intent_id": f"INT-{i % 20:03d}", "tool_name": "Edit"}}},
                      fsync=False)


def bench_big(n: int, repeat: int, index_only: bool = False) -> None:
    print(f"== {n:,}-record ledger")
    with tempfile.TemporaryDirectory() as d:
        root = Path(d)
        (root / ".orchestration").mkdir()
        os.environ["XDG_CONFIG_HOME"] = str(root / "config")  # the index's seal key: not in the real home
        path = root / ".orchestration" / "agent_trace.jsonl"
        generate(path, n)
        (root / "src").mkdir()
        (root / "src" / "mod_7.py").write_text("".join(f"line {i}\n" for i in range(1000)))
        cli = [sys.executable, "-m", "orchestrator.commands.trace", "trace"]
        queries = (("orch trace --intent INT-007 --jsonl", ["--intent", "INT-007", "--jsonl"]),
                   ("orch trace --intent INT-007 (table, last 50)", ["--intent", "INT-007"]),
                   ("orch trace blame src/mod_7.py", ["blame", "src/mod_7.py"]),
                   ("orch trace show <id prefix>", ["show", str(uuid.UUID(int=n // 2, version=4))]),
                   ("orch trace stats --json", ["stats", "--json"]))
        if not index_only:
            for label, args in queries + (("orch trace verify", ["verify"]),
                                          ("orch trace verify --chain-only", ["verify", "--chain-only"])):
                walls, rss, rc = timed(cli + args + ["--no-index"], root, repeat)
                rate = f", {n / statistics.median(walls):,.0f} records/s" if "verify" in label else ""
                print(f"  scan: {label}: {fmt(walls, 's', 1)}; peak RSS max {max(rss):.0f} MiB; exit {rc}{rate}")
        # the index: built once from scratch (what the first query after a clone pays), then served warm
        walls, rss, rc = timed(cli + ["index", "--rebuild"], root, 1)
        print(f"  index build from scratch: {fmt(walls, 's', 1)}; peak RSS {max(rss):.0f} MiB; exit {rc}; "
              f"{os.path.getsize(root / '.orchestration' / 'run' / 'agent_trace.jsonl.index.sqlite') / 1e6:,.0f} MB")
        for label, args in queries:
            walls, rss, rc = timed(cli + args, root, repeat)
            print(f"  index: {label}: {fmt(walls, 's', 2)}; peak RSS max {max(rss):.0f} MiB; exit {rc}")
        generate_more(path, n, 1000)
        walls, rss, rc = timed(cli + ["--intent", "INT-007"], root, 1)
        print(f"  index: 1,000 records appended, then --intent INT-007 (indexes them first): {fmt(walls, 's', 2)}")
        if index_only:
            return
        walls, rss, rc = timed([sys.executable, "-c", "import sys; sys.path.insert(0, %r); from orchestrator "
                                "import ledger; r = ledger.verify(%r, workers=1); print(r); "
                                "raise SystemExit(0 if r.ok else 1)" % (str(ROOT), str(path))], root, 1)
        print(f"  verify single process: {fmt(walls, 's', 1)}; peak RSS {max(rss):.0f} MiB; exit {rc}; "
              f"{n / statistics.median(walls):,.0f} records/s")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", default="record,append,big", help="record,append,big,index (index: big, index only)")
    a = ap.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPU(s)")
    only = set(a.only.split(","))
    if "record" in only:
        bench_record()
    if "append" in only:
        bench_append()
    if "big" in only or "index" in only:
        bench_big(a.records, a.repeat, index_only="big" not in only)


if __name__ == "__main__":
    main()
