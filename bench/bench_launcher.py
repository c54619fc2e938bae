"""What the portable launcher costs per hook call: the shared install's command vs the local (absolute) one.

Both run exactly as Claude Code runs them (``sh -c COMMAND``, ``CLAUDE_PROJECT_DIR`` set, the event on stdin), with
``ORCH_NO_DAEMON=1`` so no daemon is started and both pay the same in-process evaluation: the difference is the
launcher (one ``sh`` start, reading ``.orchestration/run/hook-python``, an ``exec``). Paired runs (shared, local,
shared, local...) so machine load drifts into both. Also the secrets pre-hook's cost per Read call in-process.

Usage: PYTHONPATH=. python bench/bench_launcher.py [-n 20]
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

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from orchestrator.config import workspace  # noqa: E402
from orchestrator.adapters import installer  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=20)
    n = ap.parse_args().n
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        workspace.init(root)
        (root / "src").mkdir()
        (root / "src" / "a.py").write_text("x = 1\n")
        installer.write_launcher(root)
        shared = installer.launcher_command("claude-code")
        local = installer.hook_command("claude-code")
        event = json.dumps({"hook_event_name": "PreToolUse", "session_id": "bench", "tool_name": "Read",
                            "cwd": str(root), "tool_input": {"file_path": str(root / "src" / "a.py")}})
        env = {**os.environ, "CLAUDE_PROJECT_DIR": str(root), "ORCH_NO_DAEMON": "1"}
        times: dict[str, list[float]] = {"shared (launcher)": [], "local (absolute)": []}
        for i in range(n + 2):
            for label, cmd in (("shared (launcher)", shared), ("local (absolute)", local)):
                t0 = time.perf_counter()
                proc = subprocess.run(["sh", "-c", cmd], input=event, capture_output=True, text=True, cwd=root,
                                      env=env)
                dt = time.perf_counter() - t0
                assert proc.returncode == 0, proc.stderr
                if i >= 2:  # two warm-up rounds (page cache, the launcher's remembered interpreter)
                    times[label].append(dt)
        for label, samples in times.items():
            s = sorted(samples)
            print(f"{label:<20} cold hook (Read, no daemon)  min {s[0] * 1e3:7.1f}  p50 "
                  f"{statistics.median(s) * 1e3:7.1f}  max {s[-1] * 1e3:7.1f} ms")
        diff = statistics.median(times["shared (launcher)"]) - statistics.median(times["local (absolute)"])
        print(f"launcher overhead (median difference): {diff * 1e3:+.1f} ms")

        from orchestrator.engine.pipeline import Governor
        from orchestrator.pre import secrets
        from orchestrator.engine.tools import to_call

        gov = Governor(root)
        pol = gov.policy
        call = to_call("Read", {"file_path": str(root / "src" / "a.py")}, session_id="b", cwd=str(root))
        gov.prepare(call)
        k = 20000
        t0 = time.perf_counter()
        for _ in range(k):
            secrets.check_call(call, pol, str(root))
        print(f"secrets pre-hook per Read (in process): {(time.perf_counter() - t0) / k * 1e6:.1f} us")


if __name__ == "__main__":
    main()
