"""What git-dir mode costs per sandboxed command (orchestrator/sandbox/gitdir.py), and what the network rule costs.

Paired runs of the real launcher (``python -I -S landlock.py --orch-sandbox ...``) in a fresh repository (git's
default hooks/*.sample, info/exclude, a config): the same command with and without ``--git .git`` (the snapshot,
the guardian fork, the child fork, the verify), and with and without ``--net 22,53,80,443``. Also the snapshot and
the verify alone, in process, and the verify of a changed config (git's own parser, run twice).

Usage: PYTHONPATH=. python bench/bench_gitdir.py [-n 30]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench._util import measure, report  # noqa: E402
from orchestrator.sandbox import gitdir, landlock  # noqa: E402

ENV = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@x", "GIT_COMMITTER_NAME": "b",
       "GIT_COMMITTER_EMAIL": "b@x"}


def paired(root: Path, command: str, a: list[str], b: list[str], n: int) -> tuple[list[float], list[float]]:
    base = [sys.executable, "-I", "-S", landlock.__file__, "--orch-sandbox", "-w", str(root / "src"), "-w",
            "/dev/null"]
    ta: list[float] = []
    tb: list[float] = []
    for i in range(n + 2):
        for opts, out in ((a, ta), (b, tb)):
            t0 = time.perf_counter()
            proc = subprocess.run([*base, *opts, "--", command], cwd=root, capture_output=True, env=ENV)
            dt = time.perf_counter() - t0
            assert proc.returncode == 0, proc.stderr
            if i >= 2:
                out.append(dt)
    return ta, tb


def line(label: str, with_: list[float], without: list[float]) -> None:
    w, wo = statistics.median(with_), statistics.median(without)
    print(f"{label:<44} without {wo * 1e3:6.1f} ms  with {w * 1e3:6.1f} ms  (+{(w - wo) * 1e3:.1f} ms median)")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("-n", type=int, default=30)
    n = ap.parse_args().n
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        (root / "src").mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        (root / "src" / "a.txt").write_text("a\n")
        subprocess.run(["git", "add", "."], cwd=root, check=True)
        subprocess.run(["git", "commit", "-qm", "init"], cwd=root, check=True, env=ENV)
        dirs = gitdir.git_dirs(str(root))
        entries = gitdir.take(dirs)
        print(f"guarded entries in a fresh repository: {len(entries)} "
              f"({sum(len(e[2]) for e in entries.values() if e[0] == 'f')} bytes)")
        git = ["--git", dirs[0]]
        line("`true` (launcher, --git vs none)", *paired(root, "true", git, [], n))
        line("`git status --short`", *paired(root, "git status --short", git, [], n))
        line("`git commit --allow-empty` (needs --git)", *paired(
            root, "git commit -q --allow-empty -m x", git, git, n)[:1], paired(root, "true", [], [], n)[0])
        line("`true` (--net 22,53,80,443 vs none)", *paired(root, "true", ["--net", "22,53,80,443"], [], n))
        report("snapshot (gitdir.take), in process", measure(lambda: gitdir.take(dirs), n=300, warmup=30))
        report("verify, nothing changed, in process",
               measure(lambda: gitdir.verify(entries, dirs, None), n=300, warmup=30))
        cfg = root / ".git" / "config"
        old = cfg.read_bytes()

        def changed_config() -> None:
            cfg.write_bytes(old + b'[branch "x"]\n\tmerge = refs/heads/x\n')
            gitdir.verify(entries, dirs, "git")

        report("verify, config changed (git parses it twice)", measure(changed_config, n=30, warmup=3), unit="ms")


if __name__ == "__main__":
    main()
