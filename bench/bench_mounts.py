"""Issue 28 (items 1, 6, 7): what the command's own mount namespace costs — the launch, and the pre-hook's lists.

Usage: python bench/bench_mounts.py [-n RUNS] [--sockets N] [--files N] [--dir PATH] [--skip-big]

1. Launch, paired runs (each round runs every case once, in turn): ``sh -c "python -S -c pass"`` (the bar's
   reference), and the same real plan (a workspace with a secret: reads handled; scope ``src/**`` with a protected
   ``src/vendor/``) through
   - **main**: the launcher as it was before (revision ``--base``'s package, built by its own build and its Python
     launcher), on the plan without the new options;
   - **mounts, no lists**: this launcher on the same plan (the mount namespace is made whatever the PID namespace
     says; Landlock's scopes on ABI >= 6);
   - **mounts**: this launcher with the plan's lists — the run dirs hidden, every bound socket covered (``--sockets``
     listening sockets are started first, standing in for a desktop's docker, agents, D-Bus...), the protected
     paths read-only;
   for the compiled launcher and the Python one, and ``bash -c ls`` against the same ``ls`` wrapped. Bars: launcher
   <= 2x the Python hook; wrapped ``ls`` - unwrapped <= 10 ms. Then the CPU time of each case (user + system of the
   children), which the load of other processes hardly moves.
2. The pre-hook: ``hidden.namespace`` per call (``/proc/net/unix`` read and matched, the run dirs, the protected
   walk of the scope) on that workspace; then on a committed repository of ``--files`` files (scope ``**``, the
   default ``.intentignore`` plus ``vendor/``), cold (a new process) and warm (the directory memo, as the daemon).
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import cpu, governed, paired  # noqa: E402

from orchestrator.engine.pipeline import Governor  # noqa: E402
from orchestrator.sandbox import compiled, hidden, landlock, options_of, protected  # noqa: E402
from orchestrator.engine.tools import to_call  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
NEW = ("--hide", "--cover", "--ro", "--abstract")


def _without_lists(opts: list[str]) -> list[str]:
    return [w for i, w in enumerate(opts) if w not in NEW and (i == 0 or opts[i - 1] not in NEW)]


def _base_launchers(directory: Path, base: str) -> dict[str, Path]:
    """The launchers of revision ``base`` beside the real ones: ``launcher-base`` (compiled by that revision's own
    build) and ``orch-sandbox-base-python`` (a stub running that revision's Python launcher). Its package is
    extracted with ``git archive``."""
    import tarfile

    out: dict[str, Path] = {}
    src = directory / "base-src"
    shutil.rmtree(src, ignore_errors=True)
    src.mkdir()
    archive = subprocess.run(["git", "-C", str(REPO), "archive", base, "orchestrator"], capture_output=True,
                             check=True).stdout
    with tarfile.open(fileobj=__import__("io").BytesIO(archive)) as tar:
        tar.extractall(src)  # noqa: S202 — our own repository's archive
    binary = directory / "launcher-base"
    code = ("import sys; sys.path.insert(0, sys.argv[1]); from orchestrator.sandbox import build; "
            "sys.exit(1 if build.build(sys.argv[2]) else 0)")
    if subprocess.run([sys.executable, "-c", code, str(src), str(binary)], capture_output=True,
                      check=False).returncode == 0:
        out["compiled"] = binary
    stub = directory / "orch-sandbox-base-python"
    stub.write_text(landlock.stub_text(sys.executable, str(src / "orchestrator" / "sandbox")))
    stub.chmod(0o755)
    out["python"] = stub
    return out


def _servers(n: int) -> tuple[list[socket.socket], str]:
    where = tempfile.mkdtemp(prefix="orch-bench-sockets-")
    out = []
    for i in range(n):
        s = socket.socket(socket.AF_UNIX)
        s.bind(os.path.join(where, f"s{i}.sock"))
        s.listen(1)
        out.append(s)
    return out, where


def launch(n: int, sockets: int, base: str) -> Path:
    tmp = Path(tempfile.mkdtemp(prefix="orch-bench-mounts-", dir="/var/tmp")) / "ws"
    tmp.mkdir()
    subprocess.run(["git", "init", "-q", str(tmp)], check=True)
    governed(tmp, "src/**", intent="I", name="src")
    (tmp / "src" / "vendor").mkdir(parents=True)
    (tmp / "src" / "vendor" / "lib.js").write_text("v\n")
    with open(tmp / ".orchestration" / ".intentignore", "a") as fh:
        fh.write("src/vendor/\n")
    (tmp / ".env").write_text("K=v\n")
    gov = Governor(tmp, approval_channel="deny")
    gov.select_intent("I", "s")

    def plan(command: str) -> list[str]:
        verdict = gov.pre(to_call("Bash", {"command": command}, session_id="s", cwd=str(tmp)), sandbox=True)
        assert verdict.command, verdict
        return [w for w in (options_of(verdict.command) or [])]

    full = plan("echo x > src/a.txt")  # the scope plan: the protected path is listed
    kinds = {k: full.count(k) for k in NEW}
    print(f"the plan: {len(full) // 2} launcher options; --hide {kinds['--hide']}, --cover {kinds['--cover']} "
          f"(with {sockets} bound sockets started for the bench), --ro {kinds['--ro']}")
    directory = tmp / ".orchestration" / "run" / "sandbox"
    stub = Path(compiled.install(str(directory)) or "")
    assert compiled.state(str(directory))[0] == "compiled", compiled.state(str(directory))
    old = _base_launchers(directory, base)

    def line(launcher: Path, opts: list[str], command: str) -> list[str]:
        spec = os.path.basename(compiled.write_spec(str(directory), opts))[:-len(".spec")]
        return ["bash", "-c", f"{launcher} {spec} -- '{command}'"]

    bare = _without_lists(full)
    cases = {'sh -c "python -S -c pass"': ["sh", "-c", f"{sys.executable} -S -c pass"]}
    for kind, launcher in (("compiled", stub), ("python", directory / compiled.PYTHON_STUB)):
        if kind in old:
            cases[f"{kind}: main"] = line(old[kind], bare, "true")
        cases[f"{kind}: mounts, no lists"] = line(launcher, bare, "true")
        cases[f"{kind}: mounts"] = line(launcher, full, "true")
    cases["bash -c ls"] = ["bash", "-c", "ls"]
    cases["bash -c <wrapped ls>"] = line(stub, full, "ls")
    if "compiled" in old:
        cases["bash -c <main-wrapped ls>"] = line(old["compiled"], bare, "ls")
    samples = paired(cases, n, tmp, width=30)
    ref = statistics.median(samples['sh -c "python -S -c pass"'])
    for kind in ("compiled", "python"):
        p50 = statistics.median(samples[f"{kind}: mounts"])
        print(f"{kind} launcher with the lists / sh -c 'python -S -c pass': {p50 / ref:.2f}x   target <= 2x")
        for label in (f"{kind}: mounts, no lists", f"{kind}: mounts"):
            if f"{kind}: main" in samples:
                d = [a - b for a, b in zip(samples[label], samples[f"{kind}: main"])]
                print(f"  {label} - main (median of {n} paired differences): {statistics.median(d):+.2f} ms")
    diffs = [w - u for w, u in zip(samples["bash -c <wrapped ls>"], samples["bash -c ls"])]
    print(f"wrapped ls - unwrapped ls (median of {n} paired differences): {statistics.median(diffs):.1f} ms"
          "   target <= 10 ms")
    if "bash -c <main-wrapped ls>" in samples:
        d = [w - u for w, u in zip(samples["bash -c <main-wrapped ls>"], samples["bash -c ls"])]
        print(f"  (main's launcher: {statistics.median(d):.1f} ms)")
    cpu(cases, n, tmp)
    hook(gov, tmp, n)
    return tmp


def hook(gov: Governor, tmp: Path, n: int) -> None:
    """What computing the lists adds to each pre-hook (a warm process: the daemon)."""
    rules = gov.ignore_rules()
    grants = [str(tmp / "src")]
    run_dir = gov.workspace.run_dir
    for label, fn in (("hidden.namespace (the whole list)",
                       lambda: hidden.namespace(str(tmp), gov.policy, run_dir, grants, rules)),
                      ("  hidden.bound_sockets (/proc/net/unix)", hidden.bound_sockets),
                      ("  hidden.run_dirs", lambda: hidden.run_dirs(str(tmp), run_dir)),
                      ("  protected.read_only (scope src/**)", lambda: protected.read_only(str(tmp), grants, rules))):
        for _ in range(20):
            fn()
        t0 = time.perf_counter()
        for _ in range(n * 20):
            fn()
        print(f"pre-hook: {label:<42} {(time.perf_counter() - t0) * 1e6 / (n * 20):8.0f} us per call")


def big(root: Path, runs: int, files: int) -> None:
    from bench_changes import generate

    t0 = time.perf_counter()
    generate(root, files)
    print(f"repository: {files} files ({time.perf_counter() - t0:.0f} s to generate or reuse), scope **")
    governed(root, "**", intent="ALL", name="everything")
    ignore = root / ".orchestration" / ".intentignore"
    if "vendor/" not in ignore.read_text():
        with open(ignore, "a") as fh:
            fh.write("vendor/\n")
    gov = Governor(root, approval_channel="deny")
    from orchestrator.sandbox import scope_grants

    grants, _ = scope_grants(str(root), ["**"])
    rules = gov.ignore_rules()
    cold, warm = [], []
    for _ in range(runs):
        protected.clear()
        t = time.perf_counter()
        paths, truncated = protected.read_only(str(root), grants, rules)
        cold.append((time.perf_counter() - t) * 1e3)
        t = time.perf_counter()
        protected.read_only(str(root), grants, rules)
        warm.append((time.perf_counter() - t) * 1e3)
    print(f"  protected.read_only, cold (a new hook process): p50 {statistics.median(cold):7.1f} ms; warm (the "
          f"daemon's memo): p50 {statistics.median(warm):7.1f} ms; {len(paths)} paths, truncated {truncated}")


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=30)
    ap.add_argument("--sockets", type=int, default=50)
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "orch-bench-changes"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--base", default="main", help="the revision whose launchers are 'main' (before this change)")
    ap.add_argument("--skip-big", action="store_true")
    args = ap.parse_args(argv)
    if landlock.abi() < 1:
        print("no Landlock on this kernel: nothing to measure")
        return 0
    load = os.getloadavg()
    print(f"Landlock ABI {landlock.abi()}; load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    servers, where = _servers(args.sockets)
    try:
        launch(args.n, args.sockets, args.base)
    finally:
        for s in servers:
            s.close()
        shutil.rmtree(where, ignore_errors=True)
    if not args.skip_big:
        big(Path(args.dir) / f"repo-{args.files}", args.runs, args.files)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
