"""Issue 28 item 5: what egress by host costs — the network namespace and bridge per launch, a connection through the
proxy, and a 200 MiB download through it.

Usage: python bench/bench_egress.py [-n RUNS] [--mib 200]

1. Launch, paired runs on one plan (a governed workspace, the read plan, the compiled launcher): the launcher with its
   network options (``--netns on --egress …``: a network namespace, ``lo`` up, the listener, the registration with
   the proxy, the forwarder) against the same spec with today's port rules instead (``--net 22,53,80,443``), both
   running ``true``; and ``bash -c ls`` wrapped against unwrapped. Targets: namespace + bridge <= 2 ms (median of
   the paired differences); wrapped ``ls`` - unwrapped <= 10 ms (the existing launcher bar).
2. A connection: inside one sandboxed command, CONNECT through ``127.0.0.1:3128`` and a 1-byte request and answer
   to a local upstream (tests/egress/support.py's stand-in), N times in sequence; the same script outside the sandbox connecting to the upstream directly. Target:
   the proxy adds <= 5 ms per connection (medians).
3. A download of --mib MiB through the forwarder and the proxy, checked byte for byte (sha256). Target >= 100 MB/s.

The machine's 2 cores are shared (other sessions' test suites): beside every wall-clock figure the bench prints the
CPU time it cost (user + system of the commands, plus the proxy process's own, from ``/proc/PID/task/*/schedstat``),
which hardly moves with the load, and the load average before and after.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import cpu, cpu_seconds, governed, load  # noqa: E402

from orchestrator import sandbox  # noqa: E402
from orchestrator.sandbox import compiled  # noqa: E402
from tests.egress.support import Upstream, pattern  # noqa: E402  (the tests' stand-in upstream)
from orchestrator.engine.pipeline import Governor  # noqa: E402
from orchestrator.engine.tools import to_call  # noqa: E402

CLIENT = textwrap.dedent("""\
    import hashlib, socket, statistics, sys, time
    mode, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    def connect():
        if mode == "direct":
            return socket.create_connection(("127.0.0.2", port))
        s = socket.create_connection(("127.0.0.1", 3128))
        s.sendall(f"CONNECT 127.0.0.2:{port} HTTP/1.1\\r\\n\\r\\n".encode())
        head = b""
        while not head.endswith(b"\\r\\n\\r\\n"):
            head += s.recv(1)
        assert head.startswith(b"HTTP/1.1 200"), head
        return s
    if n > 0:
        times = []
        for _ in range(n):
            t = time.perf_counter()
            s = connect(); s.sendall(b"x"); s.shutdown(socket.SHUT_WR); assert s.recv(8).startswith(b"1 "); s.close()
            times.append(time.perf_counter() - t)
        print(statistics.median(times) * 1e3)
    else:
        size = -n
        s = connect(); t = time.perf_counter(); s.sendall(f"download {size}".encode())
        h, got = hashlib.sha256(), 0
        while chunk := s.recv(1 << 20):
            h.update(chunk); got += len(chunk)
        dt = time.perf_counter() - t
        print(got, h.hexdigest(), got / dt / 1e6)
""")


def _time(argv: list[str], cwd: Path) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return (time.perf_counter() - t0) * 1e3


def _workspace() -> tuple[Path, Governor]:
    root = Path(tempfile.mkdtemp(prefix="orch-bench-egress-", dir="/var/tmp")) / "ws"
    root.mkdir()
    governed(root, "src/**", intent="I", name="src")
    (root / "src").mkdir(exist_ok=True)
    policy = root / ".orchestration" / "policy.yaml"
    policy.write_text(policy.read_text() + "sandbox:\n  network:\n    allow: ['127.0.0.2']\n")
    return root, Governor(root, approval_channel="deny")


def wrapped(gov: Governor, root: Path, command: str) -> str:
    verdict = gov.pre(to_call("Bash", {"command": command}, session_id="b", cwd=str(root)), sandbox=True)
    assert verdict.command, verdict
    return str(verdict.command)


def without_egress(command: str) -> list[str]:
    """The same launch with today's port rules instead of the namespace and the bridge."""
    opts = sandbox.options_of(command) or []
    kept: list[str] = []
    pairs = list(zip(opts[::2], opts[1::2]))
    for name, value in pairs:
        if name in ("--netns", "--egress", "--egress-plan", "--egress-env"):
            continue
        kept += ["--net" if name == "--net-fallback" else name, value]
    directory = os.path.dirname(command.split()[0])
    spec = sandbox._write_spec(directory, kept)
    return [command.split()[0], os.path.basename(spec)[:-len(".spec")], "--", "true"]


def launch(n: int, root: Path, gov: Governor) -> None:
    true, ls = wrapped(gov, root, "true"), wrapped(gov, root, "ls")
    argv_egress = true.split()[:3] + ["true"]  # the launcher itself (the line is `STUB ID -- 'true'`)
    subprocess.run(argv_egress, cwd=root, check=True)  # the proxy is up before the first timed run
    argv_ports = without_egress(true)
    cases = {"launcher + namespace + bridge (true)": argv_egress, "launcher, port rules (true)": argv_ports,
             "bash -c ls": ["bash", "-c", "ls"], "bash -c <wrapped ls>": ["bash", "-c", ls]}
    samples: dict[str, list[float]] = {k: [] for k in cases}
    for i in range(n + 3):
        for label, argv in cases.items():
            dt = _time(argv, root)
            if i >= 3:
                samples[label].append(dt)
    for label, s in samples.items():
        print(f"  {label:<40} p50 {statistics.median(s):6.2f} ms   p90 {sorted(s)[int(len(s) * 0.9)]:6.2f} ms")
    ns = [a - b for a, b in zip(samples["launcher + namespace + bridge (true)"], samples["launcher, port rules (true)"])]
    ls_diff = [a - b for a, b in zip(samples["bash -c <wrapped ls>"], samples["bash -c ls"])]
    print(f"namespace + bridge per launch (median of {n} paired differences): {statistics.median(ns):+.2f} ms"
          "   target <= 2 ms")
    print(f"wrapped ls - unwrapped ls (median of {n} paired differences): {statistics.median(ls_diff):+.2f} ms"
          "   target <= 10 ms")
    # the Python launcher (no compiler; git mode) on the same specs: its forwarder is a Python process of its own
    python = [[os.path.join(os.path.dirname(argv[0]), compiled.PYTHON_STUB), *argv[1:]]
              for argv in (argv_egress, argv_ports)]
    per = cpu({"launcher + namespace + bridge (true)": argv_egress, "launcher, port rules (true)": argv_ports,
               "Python launcher + namespace + bridge": python[0], "Python launcher, port rules": python[1]},
              n, root, server=proxy_pid())
    med = {k: statistics.median(v) for k, v in per.items()}
    print("namespace + bridge per launch, CPU (difference of the medians, the proxy's share included): "
          f"{med['launcher + namespace + bridge (true)'] - med['launcher, port rules (true)']:+.2f} ms; "
          f"Python launcher {med['Python launcher + namespace + bridge'] - med['Python launcher, port rules']:+.2f} ms")


def proxy_pid() -> int | None:
    """The running egress proxy's pid (its ``info.json``), for its share of the CPU time."""
    import json

    from orchestrator.egress.paths import INFO, egress_dir

    try:
        return int(json.loads((egress_dir() / INFO).read_text())["pid"])
    except (OSError, ValueError, KeyError):
        return None


def _used(server: int | None) -> float:
    return cpu_seconds() + (cpu_seconds(server) if server is not None else 0.0)


def connection(n: int, root: Path, gov: Governor, up: Upstream) -> None:
    (root / "src" / "client.py").write_text(CLIENT)
    through, direct, cpu_through, cpu_direct, cpu_proxy = [], [], [], [], []
    server = proxy_pid()
    for _ in range(3):  # paired rounds of n sequential connections each
        before, before_proxy = _used(server), cpu_seconds(server) if server else 0.0
        proc = subprocess.run(["bash", "-c", wrapped(gov, root, f"python3 src/client.py proxy {up.port} {n}")],
                              cwd=root, capture_output=True, text=True, check=True)
        cpu_through.append((_used(server) - before) * 1e3 / n)
        cpu_proxy.append(((cpu_seconds(server) if server else 0.0) - before_proxy) * 1e3 / n)
        through.append(float(proc.stdout))
        before = _used(None)
        proc = subprocess.run([sys.executable, "src/client.py", "direct", str(up.port), str(n)], cwd=root,
                              capture_output=True, text=True, check=True)
        cpu_direct.append((_used(None) - before) * 1e3 / n)
        direct.append(float(proc.stdout))
    print(f"  connection + 1-byte exchange, direct (unsandboxed)  p50 {statistics.median(direct):6.3f} ms")
    print(f"  connection + 1-byte exchange, through the proxy     p50 {statistics.median(through):6.3f} ms")
    print(f"the proxy per connection: {statistics.median(through) - statistics.median(direct):+.3f} ms"
          "   target <= 5 ms")
    print(f"  CPU per connection (the command's process tree and the proxy; launch amortised over {n}): "
          f"through the proxy {statistics.median(cpu_through):.3f} ms, direct {statistics.median(cpu_direct):.3f} ms;"
          f" the proxy process alone {statistics.median(cpu_proxy):.3f} ms")


def download(mib: int, root: Path, gov: Governor, up: Upstream) -> None:
    size = mib * 1024 * 1024
    expected = hashlib.sha256(pattern(size))  # (made once: the upstream then only sends it)
    rates, cpus = [], []
    server = proxy_pid()
    for _ in range(3):
        before = _used(server)
        proc = subprocess.run(["bash", "-c", wrapped(gov, root, f"python3 src/client.py proxy {up.port} -{size}")],
                              cwd=root, capture_output=True, text=True, check=True)
        cpus.append(_used(server) - before)
        got, digest, rate = proc.stdout.split()
        assert int(got) == size and digest == expected.hexdigest(), proc.stdout + proc.stderr
        rates.append(float(rate))
    print(f"{mib} MiB through the forwarder and the proxy, byte-exact: {statistics.median(rates):.0f} MB/s "
          f"(runs: {', '.join(f'{r:.0f}' for r in rates)})   target >= 100 MB/s")
    cpu_s = statistics.median(cpus)
    print(f"  CPU for the download (client incl. sha256, forwarder, proxy): {cpu_s:.2f} s "
          f"= {size / cpu_s / 1e6:.0f} MB per CPU-second")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=100)
    ap.add_argument("--mib", type=int, default=200)
    args = ap.parse_args()
    root, gov = _workspace()
    up = Upstream("127.0.0.2")
    print(f"(before: {load()})")
    print("1. launch")
    launch(args.n, root, gov)
    print("2. connection")
    connection(args.n, root, gov, up)
    print("3. download")
    download(args.mib, root, gov, up)
    print(f"(after: {load()})")


if __name__ == "__main__":
    main()
