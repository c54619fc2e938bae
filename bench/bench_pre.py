"""Governor.pre on the allow and deny paths: 50 intents x 20 globs, 50 .intentignore patterns.

Run: python bench/bench_pre.py      (target: allow-path p50 <= 20 us)
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _util import measure, report  # noqa: E402

from orchestrator import workspace  # noqa: E402
from orchestrator.pipeline import Governor  # noqa: E402
from orchestrator.tools import to_call  # noqa: E402


def build(root: Path) -> Governor:
    workspace.init(root)
    lines = ["active_intents:"]
    for i in range(50):
        lines += [f"  - id: INT-{i:03d}", f"    name: intent {i}", "    status: IN_PROGRESS", "    owned_scope:"]
        lines += [f"      - 'pkg{i}/mod{j}/**/*.py'" for j in range(19)] + [f"      - 'pkg{i}/**'"]
    (root / ".orchestration" / "active_intents.yaml").write_text("\n".join(lines) + "\n")
    ignore = [f"vendor{k}/" if k % 2 else f"*.gen{k}" for k in range(50)]
    (root / ".orchestration" / ".intentignore").write_text("\n".join(ignore) + "\n")
    (root / "pkg49" / "mod3" / "deep").mkdir(parents=True)
    gov = Governor(root, approval_channel="deny")
    gov.select_intent("INT-049", "bench")
    return gov


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        gov = build(Path(tmp))
        raw = {"file_path": "pkg49/mod3/deep/new_file.py", "content": "x = 1\n"}
        allow = lambda: gov.pre(to_call("Write", raw, session_id="bench"))  # noqa: E731
        assert allow().allowed, allow()
        deny_scope = lambda: gov.pre(to_call("Write", {"file_path": "pkg1/x.py"}, session_id="bench"))  # noqa: E731
        assert deny_scope().error["type"] == "scope-violation"
        deny_intent = lambda: gov.pre(to_call("Write", raw, session_id="nobody"))  # noqa: E731
        assert deny_intent().error["type"] == "intent-required"
        read = lambda: gov.pre(to_call("Read", {"file_path": "pkg49/mod3/x.py"}, session_id="bench"))  # noqa: E731
        print("Governor.pre — 50 intents x 20 globs, 50 ignore patterns")
        report("allow (Write in scope, incl. to_call)", measure(allow), target="p50 <= 20 us")
        report("deny: scope-violation", measure(deny_scope))
        report("deny: intent-required", measure(deny_intent))
        report("allow: Read (not governed)", measure(read))


if __name__ == "__main__":
    main()
