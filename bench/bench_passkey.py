"""What a passkey-signed decision costs the approval hook (channel passkey, issue 29).

Run: PYTHONPATH=. python bench/bench_passkey.py [--n 15]

1. **cold check**: a fresh interpreter imports py_webauthn and checks one assertion (what a hook process without
   the daemon pays once, after the person clicked): import time and total, median of ``--n`` processes;
2. **warm check**: the check alone in a process that has imported it (the daemon), median of 500;
3. **decision → answer**: a REAL hook process (the installed client) waits; the console's decision is written
   (``Broker.decide`` with the assertion); the time until the hook exits with its answer, median of ``--n``, with
   the hook evaluating in process and with the daemon answering (which loaded py_webauthn at start); the sandbox
   launcher compiled beforehand, as in any workspace after its first command;
4. **intent change from the page**: a real console (uvicorn, real HTTP): ``POST /api/intents/challenge`` (the store's
   dry run, validation, the operation held) and ``POST /api/intents/apply`` (the assertion checked, the nonce
   consumed, the change written under the intents lock, the audit line), median of ``--n`` edits.

The assertions come from a software authenticator with real P-256 keys (tests/approvals/softkey.py).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from orchestrator.approvals.approvers import load  # noqa: E402
from orchestrator.approvals.passkey import Settings, challenge, check_assertion  # noqa: E402
from tests.approvals.signed_support import (  # noqa: E402
    answer_of,
    daemon_for,
    decide,
    passkey_workspace,
    pending_request,
    sign,
    spawn_hook,
)
from tests.approvals.softkey import SoftKey, approvers_file  # noqa: E402

COLD = """
import json, sys, time
t0 = time.perf_counter()
from orchestrator.approvals.approvers import load
from orchestrator.approvals.passkey import Settings, check_assertion
t1 = time.perf_counter()
import webauthn  # noqa: F401 - what check_assertion imports on its first call
t2 = time.perf_counter()
data = json.loads(sys.stdin.read())
check_assertion(data["assertion"], bytes.fromhex(data["challenge"]), load(sys.argv[1]), Settings())
t3 = time.perf_counter()
print(json.dumps({"import_ms": (t2 - t1) * 1000, "total_ms": (t3 - t0) * 1000}))
"""


def cold(n: int, tmp: Path) -> None:
    key = SoftKey()
    approvers_file(tmp, key)
    imports, totals = [], []
    for i in range(n):
        ch = challenge({"bench": i})
        out = subprocess.run([sys.executable, "-c", COLD, str(tmp)], capture_output=True, text=True, check=True,
                             input=json.dumps({"assertion": key.assertion(ch), "challenge": ch.hex()}),
                             env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
        got = json.loads(out.stdout)
        imports.append(got["import_ms"])
        totals.append(got["total_ms"])
    print(f"cold check (fresh process): py_webauthn import {statistics.median(imports):.0f} ms, "
          f"import + check {statistics.median(totals):.0f} ms (median of {n})")


def warm(tmp: Path, n: int = 500) -> None:
    key = SoftKey()
    approvers_file(tmp, key)
    found = load(tmp)
    pairs = [(key.assertion(ch := challenge({"warm": i})), ch) for i in range(n)]
    check_assertion(*pairs[0], found, Settings())
    started = time.perf_counter()
    for assertion, ch in pairs:
        check_assertion(assertion, ch, found, Settings())
    print(f"warm check (daemon): {(time.perf_counter() - started) / n * 1e6:.0f} µs per assertion (ES256, {n})")


def end_to_end(n: int, tmp: Path, *, daemon: bool) -> None:
    import contextlib

    alice = SoftKey("alice")
    ws = passkey_workspace(tmp, alice)
    with contextlib.ExitStack() as stack:
        env = stack.enter_context(daemon_for(ws)) if daemon else {}
        answer_of(spawn_hook(ws, "python3 -c pass", tool_use_id="warm", env=env))  # compiles the launcher once
        times = []
        for i in range(n):
            proc = spawn_hook(ws, "rm -rf build", tool_use_id=f"bench-{i}", env=env)
            req = pending_request(ws)
            assertion = sign(alice, req)
            started = time.perf_counter()
            decide(ws, req, assertion)
            assert answer_of(proc).get("permissionDecision", "allow") == "allow"
            times.append((time.perf_counter() - started) * 1000)
    where = "the daemon answers (as installed hooks)" if daemon else "the hook evaluates in process"
    print(f"decision written -> hook answered, {where}: median {statistics.median(times):.0f} ms, "
          f"max {max(times):.0f} ms ({n} calls)")


def intent_changes(n: int, tmp: Path) -> None:
    import httpx

    from orchestrator.approvals.approvers import unb64url
    from tests.web.support import free_port, served

    port = free_port()
    alice = SoftKey("alice", origin=f"http://localhost:{port}")
    ws = passkey_workspace(tmp, alice, port=port)
    prepare, apply = [], []
    with served(ws, port) as console:
        headers = {"Origin": console.url, "X-CSRF-Token": console.csrf_token, "Content-Type": "application/json"}
        for i in range(n + 1):
            started = time.perf_counter()
            got = httpx.post(console.url + "/api/intents/challenge", headers=headers, json={
                "op": "edit", "intent": "INT-2", "fields": {"name": f"Docs {i}"}}).json()
            middle = time.perf_counter()
            body = {"operation": got["operation"]["nonce"], "assertion": alice.assertion(unb64url(got["challenge"]))}
            signed = time.perf_counter()
            assert httpx.post(console.url + "/api/intents/apply", headers=headers, json=body).status_code == 200
            if i:  # the first loads py_webauthn in the console
                prepare.append((middle - started) * 1000)
                apply.append((time.perf_counter() - signed) * 1000)
    print(f"intent change from the page: prepare (dry run, held) median {statistics.median(prepare):.0f} ms, "
          f"apply (verify, write, audit) median {statistics.median(apply):.0f} ms, max {max(apply):.0f} ms ({n})")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as d:
        base = Path(d)
        for sub in ("cold", "warm", "e2e", "daemon", "intents"):
            (base / sub).mkdir()
        print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        cold(args.n, base / "cold")
        warm(base / "warm")
        end_to_end(args.n, base / "e2e", daemon=False)
        end_to_end(args.n, base / "daemon", daemon=True)
        intent_changes(args.n, base / "intents")


if __name__ == "__main__":
    main()
