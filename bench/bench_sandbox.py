"""The sandbox launcher's cost: one sandboxed shell command vs. `python -S -c pass` and an unsandboxed `bash -c`.

Usage: python bench/bench_sandbox.py [N]

Prints min/median/max wall time of starting a process (each timed separately, interleaved, so load drifts hit all
alike), the launcher's ratio to `python -S -c pass` (target <= 2x) and the engine-side cost of computing the plan and
wrapped command inside `Governor.pre` (a real governed workspace with 40 top-level entries and scope `**`, the worst
case for the governance exclusion). Also prints `uptime`: the numbers are noisy on a shared machine.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._util import report  # noqa: E402
from orchestrator.sandbox import landlock  # noqa: E402


def spawn(argv: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main(argv: list[str]) -> int:
    n = int(argv[0]) if argv else 60
    if landlock.abi() < 1:
        print("no Landlock on this kernel: nothing to measure")
        return 0
    print(f"Landlock ABI {landlock.abi()}; {n} runs each; load: {os.getloadavg()[0]:.2f} "
          f"{os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    tmp = Path(tempfile.mkdtemp(prefix="orch-bench-sandbox-"))
    scope = tmp / "src"
    scope.mkdir()
    launcher = [sys.executable, "-I", "-S", landlock.__file__, "--orch-sandbox", "-w", str(scope), "-w", "/dev/null",
                "--tmp", str(tmp / "private"), "--", "true"]
    cases = {
        "python -S -c pass": [sys.executable, "-S", "-c", "pass"],
        "bash -c true (unsandboxed)": ["/bin/bash", "-c", "true"],
        "launcher -- true (sandboxed)": launcher,
    }
    samples: dict[str, list[float]] = {k: [] for k in cases}
    for _ in range(3):  # warm the page cache
        for argv in cases.values():
            spawn(argv)
    for _ in range(n):
        for label, argv in cases.items():
            samples[label].append(spawn(argv))
    figs = {label: report(label, s, unit="ms") for label, s in samples.items()}
    ratio = figs["launcher -- true (sandboxed)"]["p50"] / figs["python -S -c pass"]["p50"]
    print(f"launcher / python -S -c pass (median): {ratio:.2f}x   target <= 2x")
    extra = figs["launcher -- true (sandboxed)"]["p50"] - figs["bash -c true (unsandboxed)"]["p50"]
    print(f"added to a shell command (median): {extra:.1f} ms")
    engine(tmp)
    print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    return 0


def engine(tmp: Path) -> None:
    """Governor.pre for `pytest` with sandbox=True (plan + wrap) vs. without (the fallback's verdict)."""
    from bench._util import governed, measure
    from orchestrator.engine.pipeline import Governor
    from orchestrator.engine.tools import to_call

    ws = tmp / "repo"
    ws.mkdir()
    governed(ws, "**", intent="I", name="all")
    for i in range(40):
        (ws / f"dir{i}").mkdir()
    gov = Governor(ws, approval_channel="allow")
    gov.select_intent("I", "s")

    def pre(sandbox: bool) -> None:
        verdict = gov.pre(to_call("Bash", {"command": "pytest -q"}, session_id="s", cwd=str(ws)), sandbox=sandbox)
        assert verdict.allowed and (verdict.command is not None) == sandbox

    report("Governor.pre('pytest -q'), no sandbox", measure(lambda: pre(False), n=300, warmup=30))
    report("Governor.pre('pytest -q'), sandbox plan+wrap", measure(lambda: pre(True), n=300, warmup=30))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
