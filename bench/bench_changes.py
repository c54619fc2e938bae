"""What a shell command changed: the cost of the stat snapshot (pre) and the compare (post) in a big repository.

Generates a git repository of N files (default 100,000: 100 packages x 10 modules x 100 files) in a temp dir
(kept under --dir between runs: generating it takes about a minute here), then times, for a command that changed
nothing:

- ``snapshot`` + ``changed`` (orchestrator/post/changes.py) with the scan bounded to a 1,000-file scope, a
  10,000-file scope, and the whole tree (the fallback for a command the analyzer cannot bound and no sandbox),
  both by walking every directory and the way a git repository is scanned (``git status`` twice: ``mode: git``);
- the JSON round trip of the snapshot (what a one-process-per-event hook pays to hand it from pre to post);
- ``git status --porcelain -z -uall`` over the same paths, the alternative considered;
- the whole path through ``Governor.pre`` + ``Governor.post`` for an analyzer-bounded command in the 1,000-file
  scope (a ``pytest``-like unknown command without a sandbox is the whole-tree row).

Prints min / p50 / max in ms. Run: ``.venv/bin/python bench/bench_changes.py [--files N] [--dir PATH] [--runs R]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _util import governed  # noqa: E402

from orchestrator.engine.pipeline import Governor  # noqa: E402
from orchestrator.post import changes  # noqa: E402
from orchestrator.engine.tools import to_call  # noqa: E402

GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@x"}


def generate(root: Path, n: int) -> None:
    """A git repository of ``n`` small Python files, committed."""
    if (root / ".bench-complete").exists():
        return
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    per_dir = 100
    for i in range(max(1, n // per_dir)):
        sub = root / f"pkg{i // 10:03d}" / f"mod{i % 10}"
        sub.mkdir(parents=True, exist_ok=True)
        for j in range(per_dir):
            (sub / f"f{j}.py").write_text(f"x = {j}\n")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(root), "commit", "-qm", "init"], check=True, env=GIT_ENV)
    governed(root, "pkg000/**", name="one package")
    (root / ".bench-complete").write_text("")


def timed(fn, runs: int) -> tuple[list[float], object]:
    out, value = [], None
    for _ in range(runs):
        t = time.perf_counter()
        value = fn()
        out.append((time.perf_counter() - t) * 1000)
    return out, value


def row(label: str, ms: list[float]) -> None:
    print(f"{label:<58} min {min(ms):8.1f}  p50 {statistics.median(ms):8.1f}  max {max(ms):8.1f} ms")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "orch-bench-changes"))
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    root = Path(args.dir) / f"repo-{args.files}"
    t = time.perf_counter()
    generate(root, args.files)
    print(f"repository: {root} ({args.files} files; ready in {time.perf_counter() - t:.1f} s)")
    print(f"load average: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    gov = Governor(root, approval_channel="allow")
    scopes = {"1,000-file scope (pkg000)": ["pkg000"],
              "10,000-file scope (pkg000..pkg009)": [f"pkg{i:03d}" for i in range(10)],
              "whole tree by walking every directory (a workspace without git)":
                  sorted(e.name for e in os.scandir(root) if e.name not in (".git", ".orchestration")),
              "whole tree with git status (unbounded command, no sandbox, git repo)": [""]}
    for label, roots in scopes.items():
        snaps, snap = timed(lambda roots=roots: changes.snapshot(gov, roots), args.runs)
        comps, result = timed(lambda snap=snap: changes.changed(gov, snap), args.runs)
        assert result[0] == [] and result[1] == [], result  # nothing changed
        text = json.dumps(snap)
        dumps, _ = timed(lambda snap=snap: json.dumps(snap), args.runs)
        loads, _ = timed(lambda text=text: json.loads(text), args.runs)
        print(f"-- {label}: {len(snap['files'])} files, snapshot {len(text) / 1e6:.1f} MB as JSON")
        row("   pre: snapshot", snaps)
        row("   post: compare (changed nothing)", comps)
        row("   pre+post in one process", [a + b for a, b in zip(snaps, comps)])
        row("   + JSON dump/load (hook processes: pre and post differ)",
            [a + b + c + d for a, b, c, d in zip(snaps, comps, dumps, loads)])
        git = [r for r in roots if r] or []
        gs, _ = timed(lambda git=git: subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "-z", "-uall", "--", *git], capture_output=True,
            check=True), args.runs)
        row("   alternative: git status --porcelain -z -uall (once)", gs)
    # the whole pipeline, analyzer-bounded command in the scope (no pre-image of a big tree to hand over)
    gov.select_intent("INT-1", "bench")
    cmd = "sed -i 's/x/x/' pkg000/mod0/f1.py"

    def through() -> None:
        call = to_call("Bash", {"command": cmd}, session_id="bench", cwd=str(root))
        v = gov.pre(call)
        assert v.allowed, v
        gov.post(to_call("Bash", {"command": cmd}, session_id="bench", cwd=str(root)))

    ms, _ = timed(through, args.runs)
    row("Governor.pre + post, bounded command (targets only)", ms)
    print(f"load average: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
