"""Governor.pre on the allow and deny paths: 50 intents x 20 globs, 50 .intentignore patterns.

Run: python bench/bench_pre.py      (target: allow-path p50 <= 40 us, see docs/performance.md)

One long-lived Governor, as `orch serve`, the agent loop and the LangChain middleware hold it: every call proves
freshness with system calls (a ``stat`` of each governance file and of the session file, an ``lstat`` per path
component), exactly as a one-call hook process does. Calls are built before the timed region (``to_call`` is
timed on its own), and the cost of one ``os.stat`` measured in the same run is printed first: this VM's system
calls are slow and its two vCPUs differ, so read figures against it. The last two rows are an agent loop's usual
rhythm: an allowed write right after a ``post`` rewrote the session file (its stat key moved: it is read again), and
the call after that, within 2 s (the key is too recent to prove anything: read again, orchestrator.core.fsutil.racy).
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

from orchestrator.config import workspace  # noqa: E402
from orchestrator.core.fsutil import RACY_NS  # noqa: E402
from orchestrator.core.models import ToolCall  # noqa: E402
from orchestrator.engine.pipeline import Governor  # noqa: E402
from orchestrator.engine.tools import to_call  # noqa: E402

N = 3000


def build(root: Path) -> Governor:
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
    gov = Governor(root, approval_channel="deny")
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


def timed_pre_after_post(gov: Governor, make: Callable[[], ToolCall], *, n: int, skip: int = 0) -> list[float]:
    """Per-call seconds of ``gov.pre`` right after (``skip=0``) or on the ``skip+1``-th call after a ``post`` of
    the same kind rewrote the session file."""
    out = []
    clock = time.perf_counter
    for _ in range(n):
        done = make()
        gov.pre(done)
        gov.sessions.update("bench", lambda s: None)  # what post's read/write stamp does to the session file
        for _ in range(skip):
            gov.pre(make())
        call = make()
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
    with tempfile.TemporaryDirectory() as tmp:
        gov = build(Path(tmp))
        assert gov.pre(new_file()).allowed and gov.pre(edit()).allowed
        assert gov.pre(scope()).error["type"] == "scope-violation"
        assert gov.pre(nobody()).error["type"] == "intent-required"
        # the config was written just now: let the bench measure the steady state, not the racy re-reads
        for path in (gov.workspace.policy_path, gov.workspace.intents_path, gov.workspace.intentignore_path,
                     gov.sessions._path_str("bench")):
            os.utime(path, ns=(0, 0))  # ctime still moves: wait until it is older than fsutil.RACY_NS
        deadline = time.time() + RACY_NS / 1e9 + 0.1
        while time.time() < deadline:
            time.sleep(0.05)
        print("\nGovernor.pre — 50 intents x 20 globs, 50 ignore patterns")
        report("allow: Write, new file", timed_pre(gov, new_file), target="p50 <= 40 us")
        report("allow: Edit, existing 100-line file", timed_pre(gov, edit))
        report("deny: scope-violation", timed_pre(gov, scope))
        report("deny: intent-required", timed_pre(gov, nobody))
        report("allow: Read (not governed)", timed_pre(gov, read))
        report("allow: Write, new file, right after a post", timed_pre_after_post(gov, new_file, n=N // 3))
        report("allow: Write, new file, 2nd call after a post", timed_pre_after_post(gov, new_file, n=N // 3, skip=1))
    t = []
    for _ in range(N):
        t0 = time.perf_counter()
        new_file()
        t.append(time.perf_counter() - t0)
    print()
    report("to_call (building the ToolCall, outside pre)", t)


if __name__ == "__main__":
    main()
