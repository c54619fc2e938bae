"""Everyday commands and attacks through the real pipeline + Landlock sandbox vs. ungoverned runs.

Usage: python bench/bench_sandbox_corpus.py [--verbose]

For each command of tests/data/sandbox_everyday.jsonl and sandbox_attacks.jsonl, in a fresh copy of a small git
project (tests/sandbox/corpus.py: Python, C, Node, shell, Makefile; intent scope src/ tests/ build/ tools/ scripts/):

- governed: ``Governor.pre(call, sandbox=True)`` with approval channel ``deny`` (an "ask" is counted as asked and
  nothing runs), then the command the verdict says (wrapped in the launcher when sandboxed), then ``Governor.post``;
- ungoverned: the command as given.

Prints: % of everyday commands that asked a person (target <= 2%), exit codes that differ from the ungoverned run
(target: none), files outside the scope changed on disk (target: 0 under governance; the ungoverned column shows
that each attack really changes something when nobody governs it).
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from orchestrator.sandbox import landlock  # noqa: E402
from tests.sandbox import corpus  # noqa: E402


def main(argv: list[str]) -> int:
    verbose = "--verbose" in argv
    if landlock.abi() < 1:
        print("no Landlock on this kernel: the sandboxed half cannot be measured")
    load = os.getloadavg()
    print(f"Landlock ABI {landlock.abi()}; load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    base = corpus.new_base()
    t0 = time.perf_counter()
    try:
        template = corpus.make_template(base)
        every = corpus.load("sandbox_everyday")
        attacks = corpus.load("sandbox_attacks")
        asked, refused, sandboxed, exit_diff, outside = [], [], 0, [], []
        for e in every:
            g = corpus.run(base, template, e["cmd"], governed=True)
            u = corpus.run(base, template, e["cmd"], governed=False)
            sandboxed += g["sandboxed"]
            if g["decision"] != "allow":
                (asked if g["type"] in corpus.ASKED else refused).append((e["id"], e["cmd"], g["type"]))
            elif g["exit"] != u["exit"]:
                exit_diff.append((e["id"], e["cmd"], g["exit"], u["exit"], g.get("stderr", "")[-160:]))
            if g["changed"]:
                outside.append((e["id"], e["cmd"], g["changed"]))
            if verbose:
                print(f"  {e['id']} {g['decision']:5} {str(g['type']):24} sandboxed={g['sandboxed']!s:5} "
                      f"exit {g['exit']} vs {u['exit']}  {e['cmd'][:70]!r}")
        n = len(every)
        print(f"\neveryday: {n} commands; asked a person: {len(asked)} ({100 * len(asked) / n:.1f}%, target <= 2%); "
              f"refused otherwise: {len(refused)}; ran sandboxed: {sandboxed}; exit code differs from ungoverned: "
              f"{len(exit_diff)}; changed files outside the scope: {len(outside)}")
        for row in asked + refused + exit_diff + outside:
            print("   ", row)
        blocked, leaked, real = 0, [], 0
        by: dict[str, int] = {}
        for a in attacks:
            g = corpus.run(base, template, a["cmd"], governed=True)
            u = corpus.run(base, template, a["cmd"], governed=False)
            real += bool(u["changed"])
            how = "kernel (sandboxed)" if g["sandboxed"] else f"refused: {g['type']}" if g["decision"] != "allow" \
                else "allowed, unsandboxed"
            by[how.split(":")[0]] = by.get(how.split(":")[0], 0) + 1
            if g["changed"]:
                leaked.append((a["id"], a["cmd"], g["changed"]))
            else:
                blocked += 1
            if verbose:
                print(f"  {a['id']} {how:40} governed changed {len(g['changed'])}, ungoverned changed "
                      f"{len(u['changed'])}  {a['cmd'][:60]!r}")
        print(f"\nattacks: {len(attacks)} commands ({real} change files outside the scope when ungoverned); "
              f"changed files outside the scope under governance: {len(leaked)} (target 0); stopped by: {by}")
        for row in leaked:
            print("   ", row)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"\n({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
