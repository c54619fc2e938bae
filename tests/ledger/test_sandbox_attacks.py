"""redteam3: what a sandboxed command can do to the ledger it may read.

The ledger is readable to sandboxed commands (an agent reads its own history) and owned by the person. Two things a
read descriptor or mere ownership allowed, each through the real hook and the real launcher:

- a ``flock`` on it (tests/engine/test_hang_attacks.py: the writers lock ``run/<ledger>.lock`` now);
- ``setxattr`` — Landlock handles no right for it — of the chain's head cache, which the writers kept as the
  ledger's xattr ``user.orchestrator.heads``: with the size and last hash read from the ledger and one forged head,
  the next record was signed with a merge parent that is no record, and ``orch trace verify`` reported the ledger as
  tampered with. The cache is in the writers' lock file now, in the run directory hidden from sandboxed commands.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.e2e import orch_support
from tests.engine.test_hang_attacks import hook, needs_landlock, sandboxed, ws  # noqa: F401 (the fixture)

#: the attacker: a forged head added to the cache, wherever the ledger's xattr is writable to it
FORGE = ("import os\nl = '.orchestration/agent_trace.jsonl'\nst = os.stat(l)\n"
         "last = open(l, 'rb').read().rstrip(b'\\n').rsplit(b'\\n', 1)[-1]\n"
         "h = last[last.rindex(b'\"hash\":\"') + 8:][:71]\n"
         "head = b'%d %s 1\\n%s\\n%s\\n' % (st.st_size, h, h[7:], b'ab' * 32)\n"
         "try:\n    os.setxattr(l, 'user.orchestrator.heads', head)\n    print('set')\n"
         "except OSError as exc:\n    print('refused', exc.errno)\n")


def write(root: Path, tool_use_id: str, content: str) -> None:
    """A Write of src/app.py through both hooks (one ledger record)."""
    inp = {"file_path": str(root / "src" / "app.py"), "content": content}
    hook(root, {"hook_event_name": "PreToolUse", "tool_use_id": tool_use_id, "tool_name": "Write", "tool_input": inp})
    (root / "src" / "app.py").write_text(content)
    hook(root, {"hook_event_name": "PostToolUse", "tool_use_id": tool_use_id, "tool_name": "Write", "tool_input": inp,
                "tool_response": {"filePath": inp["file_path"]}})


@needs_landlock
def test_a_forged_head_cache_does_not_reach_the_chain(ws: Path) -> None:  # noqa: F811
    write(ws, "toolu_w1", "x = 2\n")
    (ws / "src" / "forge.py").write_text(FORGE)
    done = sandboxed(ws, "python3 src/forge.py")
    assert done.returncode == 0 and done.stdout.split()[0] in ("set", "refused"), done.stdout + done.stderr
    write(ws, "toolu_w2", "x = 3\n")
    records = [json.loads(line) for line in (ws / ".orchestration" / "agent_trace.jsonl").read_text().splitlines()]
    assert len(records) == 2
    assert "merge_parents" not in json.dumps(records[-1])
    verify = orch_support.orch(ws, "trace", "verify", check=False)
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_the_head_cache_lives_in_the_run_directory(ws: Path) -> None:  # noqa: F811
    write(ws, "toolu_w1", "x = 2\n")
    ledger = ws / ".orchestration" / "agent_trace.jsonl"
    assert b"sha256:" in (ws / ".orchestration" / "run" / "agent_trace.jsonl.lock").read_bytes()
    try:
        names = os.listxattr(ledger)
    except OSError:
        pytest.skip("no xattrs on this filesystem")
    assert "user.orchestrator.heads" not in names
