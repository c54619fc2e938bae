"""Shared helpers for the benchmark scripts: a governed workspace, timing statistics and printing."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from pathlib import Path


def measure(fn: Callable[[], object], *, n: int = 2000, warmup: int = 200) -> list[float]:
    """Run ``fn`` ``n`` times after ``warmup`` runs; per-call seconds."""
    for _ in range(warmup):
        fn()
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def report(label: str, samples: list[float], *, unit: str = "us", target: str = "") -> dict[str, float]:
    """Print min/median/max (and p90, p99) of ``samples`` in ``unit``; return them."""
    scale = {"us": 1e6, "ms": 1e3, "s": 1.0}[unit]
    s = sorted(samples)
    fig = {"min": s[0] * scale, "p50": statistics.median(s) * scale,
           "p90": s[int(len(s) * 0.9)] * scale, "p99": s[min(len(s) - 1, int(len(s) * 0.99))] * scale,
           "max": s[-1] * scale}
    extra = f"   target {target}" if target else ""
    print(f"{label:<48} min {fig['min']:9.2f}  p50 {fig['p50']:9.2f}  p90 {fig['p90']:9.2f}  "
          f"p99 {fig['p99']:9.2f}  max {fig['max']:9.2f} {unit}{extra}")
    return fig


def governed(root: Path, scope: str = "src/**", intent: str = "INT-1", name: str = "bench") -> Path:
    """``orch init`` in ``root`` (created if missing) with one IN_PROGRESS intent owning ``scope``; returns ``root``."""
    from orchestrator.config import workspace

    root.mkdir(parents=True, exist_ok=True)
    workspace.init(root)
    (root / ".orchestration" / "active_intents.yaml").write_text(
        f"active_intents:\n  - id: {intent}\n    name: {name}\n    status: IN_PROGRESS\n"
        f"    owned_scope: ['{scope}']\n", encoding="utf-8")
    return root


def paired(cases: dict[str, list[str]], n: int, cwd: Path, *, width: int = 28) -> dict[str, list[float]]:
    """Run every command of ``cases`` once per round, in turn, for ``n`` rounds after 3 warm-up rounds (so machine
    load drifts into all of them alike); print min/p50/max per case; the samples in ms, by label."""
    import subprocess

    def once(argv: list[str]) -> float:
        t0 = time.perf_counter()
        subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        return (time.perf_counter() - t0) * 1e3

    samples: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(3):
        for argv in cases.values():
            once(argv)
    for _ in range(n):
        for label, argv in cases.items():
            samples[label].append(once(argv))
    for label, s in samples.items():
        s2 = sorted(s)
        print(f"  {label:<{width}} min {s2[0]:6.1f}  p50 {statistics.median(s2):6.1f}  max {s2[-1]:6.1f} ms")
    return samples


def cpu_seconds(pid: int | None = None) -> float:
    """User + system CPU seconds: of the finished children of this process (``pid`` None), or of the running
    process ``pid`` (a server such as the egress proxy, which is no child of the bench)."""
    import os
    import resource

    if pid is None:
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime
    total = 0
    try:  # schedstat: nanoseconds on a CPU, per thread (stat's ticks are 10 ms: too coarse for one launch)
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/schedstat", encoding="ascii") as fh:
                total += int(fh.read().split()[0])
    except OSError:
        pass
    return total / 1e9


def cpu(cases: dict[str, list[str]], n: int, cwd: Path, *, server: int | None = None) -> dict[str, list[float]]:
    """The CPU time (user + system, of the process and its children; plus the process ``server`` when given) each
    case costs, in ms per run: unlike wall time it hardly moves with the machine's load (the 2 cores are shared
    with other sessions' test suites). Prints the medians; returns the samples by label."""
    import subprocess

    def used() -> float:
        return cpu_seconds() + (cpu_seconds(server) if server is not None else 0.0)

    per: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(n):
        for label, argv in cases.items():
            before = used()
            subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
            per[label].append((used() - before) * 1e3)
    print("CPU time per run (user + system, children" + (", and the server process" if server else "") +
          "), median:")
    for label, values in per.items():
        print(f"  {label:<40} {statistics.median(values):6.2f} ms")
    return per


def load() -> str:
    """The load averages (1, 5, 15 min), for a figure measured on a shared machine."""
    import os

    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())
