"""The intent lifecycle's costs: a transaction (create / edit / finish) on files of 10, 100 and 500 intents, an
archive, a proposal decided by another thread, and one intent's summary over a ledger of 10,000 records.

None of this is on a hook's path (a hook only loads the compiled intents): these are what a person waits for after
`orch intents new`, a TUI keypress or an accepted proposal, and what a proposing agent's hook spends beyond the
person's own time.

Usage: python bench/bench_intents.py
"""

from __future__ import annotations

import json
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._util import measure, report  # noqa: E402


def intents_file(n: int) -> str:
    lines = ["# the team's intents (a comment that must survive)", "active_intents:"]
    for k in range(n):
        lines += [f"  - id: \"INT-{k:03d}\"", f"    name: \"Task {k}\"  # owner: someone",
                  "    status: \"IN_PROGRESS\"", f"    owned_scope: [\"src/m{k}/**\", \"tests/m{k}/**\"]",
                  "    constraints:", "      - \"keep the API\""]
    return "\n".join(lines) + "\n"


def workspace(base: Path, n: int, name: str = "") -> object:
    from orchestrator.config.workspace import Workspace, init

    root = base / f"ws{n}{name}"
    root.mkdir()
    init(root)
    (root / ".orchestration" / "active_intents.yaml").write_text(intents_file(n))
    return Workspace.at(root)


def bench_transactions(base: Path) -> None:
    from orchestrator.config.intentstore import IntentStore

    for n in (10, 100, 500):
        ws = workspace(base, n)
        store = IntentStore(ws)
        counter = iter(range(10**6))
        reps = 30 if n < 500 else 10
        report(f"create, {n} intents in the file", measure(
            lambda: store.create({"name": f"new {next(counter)}", "owned_scope": ["x/**"]}), n=reps, warmup=2),
            unit="ms")
        report(f"edit (status), {n} intents", measure(
            lambda: store.edit("INT-005", {"status": "BLOCKED" if next(counter) % 2 else "IN_PROGRESS"}),
            n=reps, warmup=2), unit="ms")
    ws = workspace(base, 100, "-archive")
    store = IntentStore(ws)
    ids = iter(f"INT-{k:03d}" for k in range(100))

    def finish_and_archive() -> None:
        iid = next(ids)
        store.finish(iid)
        store.archive([iid])

    report("finish + archive, 100 intents", measure(finish_and_archive, n=30, warmup=2), unit="ms")


def bench_proposal(base: Path) -> None:
    from orchestrator.approvals import Broker, proposal

    ws = workspace(base, 50, "-proposal")
    broker = Broker(ws.shared_run_dir)  # type: ignore[attr-defined]
    fields = proposal.normalise("Docs", ["docs/**"], ["no code"], "the guide is out of date")
    samples = []
    for _ in range(20):
        def person() -> None:
            while True:
                pending = broker.pending()
                if pending:
                    t_decided.append(time.perf_counter())
                    broker.decide(pending[0].id, "approve", by="bench")
                    return
                time.sleep(0.001)

        t_decided: list[float] = []
        thread = threading.Thread(target=person)
        thread.start()
        proposal.propose(ws, broker, fields, session_id="bench", agent="bench", timeout=30)
        samples.append(time.perf_counter() - t_decided[0])
        thread.join()
    report("proposal: decision written -> intent written", samples, unit="ms")


def bench_summary(base: Path) -> None:
    from orchestrator.views.intentsummary import summarize

    ws = workspace(base, 20, "-summary")
    lines = []
    for k in range(10_000):
        rec = {"version": "0.1.0", "id": f"00000000-0000-4000-8000-{k:012d}", "timestamp": "2026-01-01T00:00:00Z",
               "files": [{"path": f"src/m{k % 20}/f{k % 7}.py", "conversations": []}],
               "metadata": {"dev.orchestrator": {"intent_id": f"INT-{k % 20:03d}", "session_id": "s",
                                                 "agent": "bench", "files": [{"path": f"src/m{k % 20}/f{k % 7}.py",
                                                                              "added": 3, "removed": 1}]}}}
        lines.append(json.dumps(rec, separators=(",", ":")))
    ws.ledger_file.write_text("\n".join(lines) + "\n")  # type: ignore[attr-defined]
    report("summary of one intent, ledger of 10,000 records", measure(
        lambda: summarize(ws, "INT-007", git=False), n=10, warmup=1), unit="ms")


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        bench_transactions(base)
        bench_proposal(base)
        bench_summary(base)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
