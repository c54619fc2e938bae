"""The write-escape corpus through the real pipeline and the real kernel sandbox, judged on disk (issue 21).

Usage: python bench/bench_escapes.py [--verbose] [--ungoverned] [--kernel-only] [ID-PREFIX...]

For each command of tests/data/sandbox_escapes.jsonl (tests/sandbox/escapes.py: a fresh copy of a small git project,
scope src/ tests/ build/ tools/ scripts/, secrets in .env and a fake home, session tokens in the environment, a
listener on 127.0.0.1): Governor.pre(call, sandbox=True) with approval channel deny, then what the verdict says, run
as a host runs it, then Governor.post. Prints how each was stopped (refused by the analyzer / held by the kernel /
ran unwrapped) and every failure of the judge: a file changed outside the scope, in governance, in .git/config|hooks|
info, in $HOME or outside the workspace; a secret on stdout/stderr; a token or secret at the listener. With
--ungoverned, also runs each command ungoverned and counts how many really do damage when nobody governs them; with
--kernel-only, also runs each command wrapped with the analyzer's refusals switched off (the kernel alone).
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from orchestrator.sandbox import landlock  # noqa: E402
from tests.sandbox import corpus, escapes  # noqa: E402


def main(argv: list[str]) -> int:
    verbose = "--verbose" in argv
    ungoverned = "--ungoverned" in argv
    kernel_only = "--kernel-only" in argv
    prefixes = [a for a in argv if not a.startswith("--")]
    load = os.getloadavg()
    print(f"Landlock ABI {landlock.abi()}; load {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    entries = [e for e in escapes.load() if not prefixes or e["id"].startswith(tuple(prefixes))]
    base = corpus.new_base()
    listener = escapes.Listener()
    t0 = time.perf_counter()
    try:
        template = escapes.make_template(base)
        how: Counter[str] = Counter()
        by_class: Counter[str] = Counter()
        failures, known, damage, kernel_fail = [], [], 0, []
        for e in entries:
            r = escapes.run(base, template, e, listener)
            stopped = "kernel (wrapped)" if r["sandboxed"] else "unwrapped" if r["decision"] == "allow" \
                else f"refused ({r['type']})"
            how[stopped.split(" (")[0] if stopped.startswith("refused") else stopped] += 1
            by_class[e["class"]] += 1
            if escapes.failed(r):
                (known if e["id"] in escapes.KNOWN else failures).append((e["id"], e["cmd"][:80], r["changed"],
                                                                          r["leaked"], r["sent"]))
            if ungoverned:
                u = escapes.run(base, template, e, listener, governed=False)
                damage += escapes.failed(u)
            if kernel_only:
                k = escapes.run(base, template, e, listener, governed="kernel")
                if escapes.failed(k):
                    kernel_fail.append((e["id"], e["cmd"][:80], k["changed"], k["leaked"], k["sent"]))
            if verbose:
                print(f"  {e['id']:45} {stopped:40} {'FAIL' if escapes.failed(r) else 'ok'}")
        n = len(entries)
        print(f"\nescape corpus: {n} commands in {len(by_class)} classes ({dict(sorted(by_class.items()))})")
        print(f"stopped by: {dict(how)}")
        if ungoverned:
            print(f"ungoverned, the judge finds damage in {damage} of {n}")
        if kernel_only:
            print(f"kernel alone (analyzer refusals off, every command wrapped): judge failures {len(kernel_fail)}")
            for row in kernel_fail:
                print("    kernel-only:", row)
        print(f"judge failures under governance: {len(failures)} (target 0); known gaps: {len(known)}")
        for row in failures + known:
            print("   ", row)
    finally:
        listener.close()
        shutil.rmtree(base, ignore_errors=True)
    print(f"\n({time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
