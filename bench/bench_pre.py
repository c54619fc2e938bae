"""Governor.pre on the allow and deny paths: 50 intents x 20 globs, 50 .intentignore patterns.

Run: python bench/bench_pre.py      (target: allow-path p50 <= 20 us)

Two modes of the same Governor: ``live`` (a long-lived process: inotify-backed caches, see
orchestrator/livecache.py; what `orch serve`, the agent loop and the LangChain middleware use) and ``stat``
(``live=False``: every call proves freshness with system calls, as a one-call hook process does). Calls are
built before the timed region (``to_call`` is timed on its own), and the cost of one ``os.stat`` measured in
the same run is printed first: this VM's system calls are slow and its two vCPUs differ, so read figures
against it.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import report  # noqa: E402

from orchestrator import workspace  # noqa: E402
from orchestrator.models import ToolCall  # noqa: E402
from orchestrator.pipeline import Governor  # noqa: E402
from orchestrator.tools import to_call  # noqa: E402

N = 3000


def build(root: Path, live: bool | None = True) -> Governor:
    workspace.init(root)
    lines = ["active_intents:"]
    for i in range(50):
        lines += [f"  - id: INT-{i:03d}", f"    name: intent {i}", "    status: IN_PROGRESS", "    owned_scope:"]
        lines += [f"      - 'pkg{i}/mod{j}/**/*.py'" for j in range(19)] + [f"      - 'pkg{i}/**'"]
    (root / ".orchestration" / "active_intents.yaml").write_text("\n".join(lines) + "\n")
    ignore = [f"vendor{k}/" if k % 2 else f"*.gen{k}" for k in range(50)]
    (root / ".orchestration" / ".intentignore").write_text("\n".join(ignore) + "\n")
    (root / "pkg49" / "mod3" / "deep").mkdir(parents=True, exist_ok=True)
    (root / "pkg49" / "mod3" / "deep" / "existing.py").write_text("".join(f"line {i}\n" for i in range(100)))
    gov = Governor(root, approval_channel="deny", live=live)
    gov.select_intent("INT-049", "bench")
    return gov


def timed_pre(gov: Governor, make: Callable[[], ToolCall], *, n: int = N, warmup: int = 300) -> list[float]:
    """Per-call seconds of ``gov.pre`` alone, each on a fresh call built beforehand."""
    for _ in range(warmup):
        gov.pre(make())
    calls = [make() for _ in range(n)]
    out = []
    clock = time.perf_counter
    for call in calls:
        t0 = clock()
        gov.pre(call)
        out.append(clock() - t0)
    return out


def stat_cost(n: int = 20000) -> list[float]:
    path = __file__
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        os.stat(path)
        out.append(time.perf_counter() - t0)
    return out


def main() -> None:
    report("calibration: one os.stat in this run", stat_cost())
    raw = {"file_path": "pkg49/mod3/deep/new_file.py", "content": "x = 1\n"}
    new_file = lambda: to_call("Write", raw, session_id="bench")  # noqa: E731
    edit = lambda: to_call("Edit", {"file_path": "pkg49/mod3/deep/existing.py"}, session_id="bench")  # noqa: E731
    scope = lambda: to_call("Write", {"file_path": "pkg1/x.py"}, session_id="bench")  # noqa: E731
    nobody = lambda: to_call("Write", raw, session_id="nobody")  # noqa: E731
    read = lambda: to_call("Read", {"file_path": "pkg49/mod3/x.py"}, session_id="bench")  # noqa: E731
    for live in (True, False):
        with tempfile.TemporaryDirectory() as tmp:
            gov = build(Path(tmp), live=live)
            assert gov.pre(new_file()).allowed and gov.pre(edit()).allowed
            assert gov.pre(scope()).error["type"] == "scope-violation"
            assert gov.pre(nobody()).error["type"] == "intent-required"
            mode = "live" if live else "stat"
            print(f"\nGovernor.pre [{mode}] — 50 intents x 20 globs, 50 ignore patterns")
            report(f"[{mode}] allow: Write, new file", timed_pre(gov, new_file),
                   target="p50 <= 20 us" if live else "")
            report(f"[{mode}] allow: Edit, existing 100-line file", timed_pre(gov, edit))
            report(f"[{mode}] deny: scope-violation", timed_pre(gov, scope))
            report(f"[{mode}] deny: intent-required", timed_pre(gov, nobody))
            report(f"[{mode}] allow: Read (not governed)", timed_pre(gov, read))
            assert (gov._live is not None) == live
    t = []
    for _ in range(N):
        t0 = time.perf_counter()
        new_file()
        t.append(time.perf_counter() - t0)
    print()
    report("to_call (building the ToolCall, outside pre)", t)


if __name__ == "__main__":
    main()
