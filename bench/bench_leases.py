"""Two sessions write one file at the same moment, 20 rounds, through the real hook client (issue 22, item 1).

Setup: a tmp git repository, ``orch serve`` running, sessions ``a`` and ``b`` with INT-1 selected. Each round, both
sessions read ``src/shared.py`` the way Claude Code does (``PreToolUse`` / ``PostToolUse`` hook processes around the
read), then both write it *at the same moment* (released by one barrier): a ``PreToolUse`` hook process (``python
-S hookclient.py claude-code``), and if it allowed, the write of what the session read plus its own line, then the
``PostToolUse`` hook process. A write that was allowed but whose line is not in the file at the end was lost.

Prints per run: rounds, writes allowed, lost updates, refusals by type and whether every refusal was structured
(type, hook, message, hint, path; a ``file-busy`` one also names its holder).

Usage: PYTHONPATH=. python bench/bench_leases.py [--rounds 20] [--repo PATH]
``--repo`` runs another checkout's hook client and daemon (e.g. the main branch, for the figures before leases).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
INTENTS = "active_intents:\n  - id: INT-1\n    name: bench\n    status: IN_PROGRESS\n    owned_scope: ['src/**']\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--repo", type=Path, default=REPO, help="the checkout whose orchestrator runs the hooks")
    args = ap.parse_args()
    repo = args.repo.resolve()
    py = sys.executable
    client = repo / "orchestrator" / "hookclient.py"
    env = {**os.environ, "PYTHONPATH": str(repo), "ORCH_DAEMON_IDLE": "300"}
    for name in ("CLAUDE_PROJECT_DIR", "ORCH_APPROVAL_CHANNEL", "ORCH_NO_DAEMON", "ORCH_ROOT"):
        env.pop(name, None)
    tmp = Path(tempfile.mkdtemp(prefix="orch-bench-leases-")).resolve()
    root = tmp / "repo"
    (root / "src").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    orch = [py, "-m", "orchestrator"]
    subprocess.run([*orch, "init", str(root)], env=env, check=True, capture_output=True, cwd=root)
    (root / ".orchestration" / "active_intents.yaml").write_text(INTENTS)
    shared = root / "src" / "shared.py"
    shared.write_text("")
    for s in ("a", "b"):
        subprocess.run([*orch, "intent", "select", "INT-1", "--session", s], env=env, check=True,
                       capture_output=True, cwd=root)

    def hook(session: str, n: str, phase: str, tool: str, tool_input: dict, response: dict | None = None) -> str:
        ev = {"session_id": session, "cwd": str(root), "hook_event_name": phase, "tool_name": tool,
              "tool_input": tool_input, "tool_use_id": f"toolu_{session}_{n}"}
        if response is not None:
            ev["tool_response"] = response
        proc = subprocess.run([py, "-S", str(client), "claude-code"], input=json.dumps(ev).encode(),
                              capture_output=True, env=env, cwd=root)
        if proc.returncode != 0:
            raise SystemExit(f"hook failed: {proc.returncode} {proc.stderr[-300:]!r}")
        return proc.stdout.decode()

    server = subprocess.Popen([*orch, "serve", "--root", str(root)], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, cwd=root)
    allowed: list[str] = []
    refusals: list[dict] = []
    unstructured: list[str] = []
    lock = threading.Lock()
    try:
        hook("a", "warm", "PreToolUse", "Read", {"file_path": str(shared)})  # wait for the daemon
        started = time.perf_counter()
        for rnd in range(args.rounds):
            seen: dict[str, str] = {}
            for s in ("a", "b"):
                read = {"file_path": str(shared)}
                hook(s, f"r{rnd}", "PreToolUse", "Read", read)
                seen[s] = shared.read_text()
                hook(s, f"r{rnd}", "PostToolUse", "Read", read, {"type": "text", "file": {"filePath": str(shared)}})
            barrier = threading.Barrier(2)

            def write(s: str, rnd: int = rnd, seen: dict = seen, barrier: threading.Barrier = barrier) -> None:
                content = seen[s] + f"{s} {rnd}\n"
                tool_input = {"file_path": str(shared), "content": content}
                barrier.wait()
                answer = hook(s, f"w{rnd}", "PreToolUse", "Write", tool_input)
                if answer.strip():
                    reason = json.loads(answer)["hookSpecificOutput"]["permissionDecisionReason"]
                    try:
                        error = json.loads(reason[reason.index("{"):])
                    except ValueError:
                        error = None
                    ok = isinstance(error, dict) and all(error.get(k) for k in ("type", "hook", "message", "hint",
                                                                                 "path"))
                    if ok and error["type"] == "file-busy":
                        ok = bool(error.get("holder", {}).get("session"))
                    with lock:
                        refusals.append(error or {})
                        if not ok:
                            unstructured.append(reason[:200])
                    return
                shared.write_text(content)
                hook(s, f"w{rnd}", "PostToolUse", "Write", tool_input,
                     {"type": "update", "filePath": str(shared), "content": content, "originalFile": seen[s]})
                with lock:
                    allowed.append(f"{s} {rnd}")

            threads = [threading.Thread(target=write, args=(s,)) for s in ("a", "b")]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        wall = time.perf_counter() - started
    finally:
        subprocess.run([*orch, "serve", "--stop", "--root", str(root)], env=env, capture_output=True, cwd=root)
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
    lines = set(shared.read_text().splitlines())
    lost = [w for w in allowed if w not in lines]
    types = Counter(r.get("type", "?") for r in refusals)
    both = args.rounds * 2 - len(refusals) - args.rounds
    print(f"checkout: {repo}; {args.rounds} rounds of two simultaneous writes; load average {os.getloadavg()[0]:.2f};"
          f" wall {wall:.1f} s")
    print(f"writes allowed: {len(allowed)} (rounds where both were allowed: {max(both, 0)}); lost updates: "
          f"{len(lost)}; refusals: {dict(types) or 0}; unstructured refusals: {len(unstructured)}")
    for u in unstructured[:3]:
        print("  " + u)
    return 0 if not lost and not unstructured else 1


if __name__ == "__main__":
    raise SystemExit(main())
