"""Issue 21: what wrapping EVERY shell command costs — the launch, a wrapped `ls`, and a 100,000-file scope.

Usage: python bench/bench_every_command.py [-n RUNS] [--files N] [--dir PATH] [--skip-big]

1. Launch, paired runs (each round runs every case once, in turn, so machine load drifts into all of them):
   ``sh -c "python -S -c pass"`` (what a host pays for the cheapest Python hook), the launcher stub running
   ``true`` with a real plan (read plan, a secret in the workspace: reads handled), ``bash -c ls`` and the same
   ``ls`` wrapped; the launcher in use (compiled, else the Python stub: orchestrator/sandbox/compiled.py) and, on
   the same spec, the Python launcher beside it (``ORCH_SANDBOX_LAUNCHER=python`` makes the engine use only it). Targets: launcher <= 2x the Python hook; wrapped ``ls`` <= 10 ms more than unwrapped (median of
   the paired differences).
2. A committed git repository of N files (default 100,000; kept under --dir between runs), intent scope ``**``:
   end to end in one process (``Governor.pre`` + running what the verdict says + ``Governor.post``, the change
   detection included) for ``ls``, ``git status`` and ``grep`` (read-only: before issue 21 they ran unwrapped, now
   wrapped with the read plan — no scan), ``python3 -c pass`` (runs code: wrapped with the scope, scanned, as
   before), and a script that changes 3 files (the record must name exactly those 3).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import governed, paired  # noqa: E402

from orchestrator.engine.pipeline import Governor  # noqa: E402
from orchestrator.sandbox import compiled, landlock  # noqa: E402
from orchestrator.engine.tools import to_call  # noqa: E402


def launch(n: int) -> None:
    # a private parent: the deny list covers the workspace's siblings too (one rule per sibling on each path to a
    # secret), so a workspace directly in /var/tmp would measure whatever other runs left there
    tmp = Path(tempfile.mkdtemp(prefix="orch-bench-every-", dir="/var/tmp")) / "ws"
    tmp.mkdir()
    governed(tmp, "src/**", intent="I", name="src")
    (tmp / "src").mkdir(exist_ok=True)
    (tmp / ".env").write_text("K=v\n")  # a secret: reads are handled, one rule per sibling on its path
    gov = Governor(tmp, approval_channel="deny")
    gov.select_intent("I", "s")

    def wrapped(command: str) -> str:
        verdict = gov.pre(to_call("Bash", {"command": command}, session_id="s", cwd=str(tmp)), sandbox=True)
        assert verdict.command, verdict
        return verdict.command

    true, ls = wrapped("true"), wrapped("ls")
    stub = true.split(" ")[0]
    from orchestrator.sandbox import options_of

    opts = options_of(true) or []
    print(f"the plan: {len(opts) // 2} launcher options ({sum(o == '-r' for o in opts[::2])} read grants: one per "
          "sibling on each path from / to a secret)")
    kind, detail = compiled.state(os.path.dirname(stub))
    print(f"launcher in use: {kind} ({os.path.basename(detail) if kind == 'compiled' else detail}); the Python "
          f"launcher is measured beside it ({compiled.PYTHON_STUB}, same spec)")

    def python_stub(command: str) -> str:  # the same line through the Python launcher
        return command.replace(f"/{compiled.STUB} ", f"/{compiled.PYTHON_STUB} ", 1)

    no_pidns = _no_pidns_variant(os.path.dirname(stub))

    def variant(command: str) -> str:  # the same line through the compiled launcher built without the namespace
        return command.replace(f"/{compiled.STUB} ", f"/{os.path.basename(no_pidns)} ", 1) if no_pidns else command

    cases = {
        'sh -c "python -S -c pass"': ["sh", "-c", f"{sys.executable} -S -c pass"],
        "launcher stub -- true": ["bash", "-c", true],
        "same, no namespaces": ["bash", "-c", variant(true)],
        "python launcher -- true": ["bash", "-c", python_stub(true)],
        "bash -c ls": ["bash", "-c", "ls"],
        "bash -c <wrapped ls>": ["bash", "-c", ls],
        "bash -c <python-wrapped ls>": ["bash", "-c", python_stub(ls)],
    }
    samples = paired(cases, n, tmp)
    ratio = statistics.median(samples["launcher stub -- true"]) / statistics.median(samples['sh -c "python -S -c pass"'])
    diffs = [w - u for w, u in zip(samples["bash -c <wrapped ls>"], samples["bash -c ls"])]
    print(f"launcher / sh -c 'python -S -c pass' (medians): {ratio:.2f}x   target <= 2x")
    print(f"wrapped ls - unwrapped ls (median of {n} paired differences): {statistics.median(diffs):.1f} ms"
          f"   target <= 10 ms")
    if no_pidns:
        ns = [a - b for a, b in zip(samples["launcher stub -- true"], samples["same, no namespaces"])]
        print(f"  the mount and PID namespaces + own /proc (median of {n} paired differences): {statistics.median(ns):+.1f} ms")
    py_ratio = statistics.median(samples["python launcher -- true"]) / statistics.median(
        samples['sh -c "python -S -c pass"'])
    py_diffs = [w - u for w, u in zip(samples["bash -c <python-wrapped ls>"], samples["bash -c ls"])]
    print(f"  (Python launcher: {py_ratio:.2f}x; wrapped ls {statistics.median(py_diffs):+.1f} ms)")
    pre_hook(gov, tmp, n)


def _no_pidns_variant(directory: str) -> str | None:
    """The compiled launcher built with -DORCH_NO_PIDNS (no mount or PID namespace) beside the real one (same spec dir), or None."""
    from orchestrator.sandbox import build

    out = os.path.join(directory, "orch-sandbox-no-pidns")
    return out if build.build(out, extra_flags=("-DORCH_NO_PIDNS",)) is None else None


def pre_hook(gov: Governor, tmp: Path, n: int) -> None:
    """What installing the launcher adds to each pre-hook once the binary is there (compiled.install's checks): in a
    long-lived process (the daemon: the binary's hash check memoised by its stat key) and as a new hook process
    pays it (the memo empty: one read and sha256 of the binary and of the record)."""
    from orchestrator.sandbox import build

    directory = str(tmp / ".orchestration" / "run" / "sandbox")
    compiled.install(directory)
    for label, cold in (("long-lived process", False), ("new process (hash checked)", True)):
        per = []
        for _ in range(n * 10):
            if cold:
                build._verified.clear()
            t0 = time.perf_counter()
            compiled.install(directory)
            per.append((time.perf_counter() - t0) * 1e6)
        per.sort()
        print(f"pre-hook: compiled.install() with the binary in place, {label}: p50 {statistics.median(per):.0f} us"
              f" (min {per[0]:.0f})")
    from orchestrator.sandbox import envpolicy

    rule = envpolicy.Rule()
    env = dict(os.environ)
    t0 = time.perf_counter()
    for _ in range(n * 10):
        for name, value in env.items():
            rule.reason(name, value)
    print(f"the Python launcher's scrub of this environment ({len(env)} variables): "
          f"{(time.perf_counter() - t0) * 1e6 / (n * 10):.0f} us per launch")


def big(root: Path, runs: int) -> None:
    from bench_changes import generate

    t0 = time.perf_counter()
    generate(root, FILES)
    print(f"repository: {FILES} files ({time.perf_counter() - t0:.0f} s to generate or reuse)")
    governed(root, "**", intent="ALL", name="everything")
    gov = Governor(root, approval_channel="deny")
    gov.select_intent("ALL", "s")
    env = {**os.environ}

    def end_to_end(command: str, sandbox: bool) -> tuple[float, object]:
        t = time.perf_counter()
        call = to_call("Bash", {"command": command}, session_id="s", cwd=str(root))
        verdict = gov.pre(call, sandbox=sandbox)
        assert verdict.allowed, verdict
        subprocess.run(["bash", "-c", verdict.command or command], cwd=root, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        record = gov.post(call)
        return (time.perf_counter() - t) * 1e3, record

    for command in ("ls", "git status --short", "grep -rl 'x = 99' pkg000"):
        before, after = [], []
        for _ in range(runs):  # paired: the unwrapped path (before issue 21 for a read-only command) then the new one
            before.append(end_to_end(command, False)[0])
            after.append(end_to_end(command, True)[0])
        diff = statistics.median(a - b for a, b in zip(after, before))
        print(f"  {command:<28} unwrapped p50 {statistics.median(before):7.1f} ms   wrapped p50 "
              f"{statistics.median(after):7.1f} ms   added {diff:+7.1f} ms (target <= 100)")
    # runs code: wrapped with the scope and scanned after, exactly as before issue 21 (the same path)
    took = statistics.median(end_to_end("python3 -c pass", True)[0] for _ in range(runs))
    print(f"  {'python3 -c pass':<28} wrapped (scope plan + change detection, as before issue 21) p50 {took:7.1f} ms")
    npkg = max(1, FILES // 1000)
    files = [f"pkg{p:03d}/mod{m}/f7.py" for p, m in ((0, 1), (npkg // 2, 2), (npkg - 1, 3))]
    script = "python3 -c \"import sys\nfor f in sys.argv[1:]: open(f, 'a').write('y = 1\\n')\" " + " ".join(files)
    took, record = end_to_end(script, True)
    got = sorted(f["path"] for f in (record or {}).get("files", []))  # type: ignore[union-attr]
    print(f"  a script changing 3 files: {took:7.1f} ms; recorded {got} — exactly those 3: {got == sorted(files)}")
    subprocess.run(["git", "-C", str(root), "checkout", "-q", "--", *files], check=True)


FILES = 100_000


def main(argv: list[str]) -> int:
    global FILES
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=30)
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "orch-bench-changes"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--skip-big", action="store_true")
    args = ap.parse_args(argv)
    FILES = args.files
    if landlock.abi() < 1:
        print("no Landlock on this kernel: nothing to measure")
        return 0
    load = os.getloadavg()
    print(f"Landlock ABI {landlock.abi()}; load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    launch(args.n)
    if not args.skip_big:
        big(Path(args.dir) / f"repo-{args.files}", args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
