"""Benchmark orchestrator.shell.analyze against the peer corpora (Dippy, dcg, safety-net).

Usage:  python bench/bench_shell.py [--misses LABEL] [--peer NAME] [--limit N]

The corpora live in ``../shared/corpora`` relative to the repository root (CI checks out shared/ beside
the clone); set ORCH_SHARED to the directory that contains ``corpora/`` to override.
Each peer's labels mean something different (see corpora/README.md), so agreement is scored per peer:

* Dippy ``safe``  -> we should say read_only;   Dippy ``ask`` -> we should say anything but read_only.
* dcg / safety-net ``destructive`` -> destructive or unknown; ``safe`` -> anything but destructive.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

FILES = {"dippy": "dippy.jsonl", "dcg": "dcg.jsonl", "safety_net": "safety_net.jsonl"}
TARGETS = {  # (peer, label): (predicate description, minimum agreement %)  -- from issue 6
    ("dippy", "safe"): (">= 97% read_only", 97.0),
    ("dippy", "ask"): (">= 98% not read_only", 98.0),
    ("safety_net", "destructive"): (">= 98% destructive|unknown", 98.0),
    ("dcg", "destructive"): (">= 95% destructive|unknown", 95.0),
    ("dcg", "safe"): ("<= 5% destructive", 95.0),
    ("safety_net", "safe"): ("<= 5% destructive", 95.0),
}


# Documented, intentional disagreements (docs/security.md). Each is a rule about *kinds* of commands, matched
# against the misses after the fact: the analyzer itself never looks at these patterns. The bench prints how
# many misses each explains and how many remain unexplained.
INTENTIONAL: list[tuple[str, str, str, str]] = [
    # (peer, label, category, regex on the command)
    ("dippy", "safe", "writes local files (curl -o/-O/-D/-c/--trace, downloads, format-patch, archive -o, "
     "script/sample -file, exports)",
     r"^curl|download|format-patch|archive -|^sample|^script |export|^npm pack|save|-o |history="),
    ("dippy", "safe", "runs project or build code (cargo check/clippy/doc, terraform test, uv run tools, "
     "bare pre-commit = pre-commit run, xargs sh -c with {} substitution)",
     r"^cargo (check|c\b|clippy|doc)|uv run|terraform test|-c '.*\{\}'|^pre-commit$"),
    ("dippy", "safe", "rewrites workspace files (fmt, lock/sync/venv, update, vendor, refresh, providers lock)",
     r"fmt|uv (sync|lock|venv)|cargo (update|generate|vendor)|refresh|providers lock|uv pip$"),
    ("dippy", "safe", "writes credentials, config or state (get-credentials, tokens, login, workspace select, "
     "dmesg -n, security *-keychain -s)",
     r"credentials|token|login|logout|workspace select|dmesg|owner|get-access|receive-message|stop-query|"
     r"generate-credential"),
    ("dippy", "safe", "workspace scripts stay unknown (./script --help runs a workspace file)",
     r"unknown-|anything|mystery|^rtk$"),
    ("dippy", "safe", "peer vouches, semantics say otherwise: -safe mode still allows SQL writes; GNU xargs -e "
     "takes no separate value (STOP is the command); sed -f / fzf preview run unmodelled code; git rerere "
     "records resolutions; sqlcmd open launches an app",
     r" -safe |-safe mydb.db$|^xargs -e |^sed -f|execute cat|^git rerere|^sqlcmd open"),
    ("dippy", "ask", "reads only; peer asks for other reasons (dry-run/check modes, brew services/audit, "
     "find -ok with a read-only command, openssl/xxd inspection, container exec/wait of a read, compose "
     "export to stdout, an fzf binding that runs echo, empty -c code, a shell fed a read-only heredoc)",
     r"dry-run|--stat|clean -n|^'?\w[\w-]*'?$|^xargs|-ok|openssl|xxd|wait|^\s*$|-c ''|^bash -c$|^python -c|"
     r"^fd -|exec mycontainer|json.tool|sample-config|list-keychains|default-keychain|login-keychain|"
     r"services|audit|bundle env|install --list|browse|presign|unzip -[pcx]|rm -rf$|sudo ls|"
     r"SELECT 1; SELECT 2|cms -S|verify|^ansible|^auth0|print > \"/dev/stderr\"|execute-silent:echo|"
     r"curl --(ftp|mail)|export web|cache verify|^rtk|^profiles|^tmutil|^spctl|^(ba|z)?sh <<EOF\necho"),
    ("safety_net", "destructive", "semantics differ: command -v only looks names up; git clean -n is a dry "
     "run; parallel with literal read-only inputs; rm -rf of a relative path inside the workspace",
     r"^command -|clean -nf|^parallel bash -c|^rm -rf \d+ "),
    ("safety_net", "safe", "we are stricter: a plain --force/-f overrides --force-with-lease; rm -r of "
     "absolute non-temp paths, of /tmp itself or $TMPDIR itself; TMPDIR reassigned in the same command; "
     "find . -exec rm -r {} can reach '.'",
     r"force-with-lease|--track|--recurse-submodules|rm -r|rm -R|rm -rf|find \. -exec rm"),
    ("dcg", "safe", "we are stricter or the dcg pack is disabled by default (docker/kubectl deletes, rebase, "
     "globbed temp deletes, srm)",
     r"^docker (rm|rmi|system prune)|^kubectl delete|rebase|force-with-lease|rm -rf /(var/)?tmp/\*|^srm|"
     r"disable|rmSync|<<-EOF"),
    ("dcg", "destructive", "recursive delete inside the workspace or temp dir is mutating (deletes listed, scope "
     "and approval apply); push to a named branch is an ordinary push; quoted heredoc/print is data; "
     "ambiguous program names (split); package uninstall/publish is mutating; others",
     r"^rm |git push (origin |master)|cat <<|print\(|^split |uninstall|publish|dig axfr|truncate table|"
     r"^echo yes|invalidation|activate|route53|_cluster/settings|vault|force-with-lease-if-includes"),
]


def corpora_dir() -> Path:
    base = os.environ.get("ORCH_SHARED")
    shared = Path(base) if base else ROOT.parent / "shared"
    return shared / "corpora"


def agrees(peer: str, label: str, kind: str) -> bool:
    if peer == "dippy":
        if label == "safe":
            return kind == "read_only"
        return kind != "read_only"  # ask / destructive
    if label == "destructive":
        return kind in ("destructive", "unknown")
    return kind != "destructive"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--misses", metavar="LABEL", help="print disagreeing commands for this label")
    ap.add_argument("--peer", help="only this peer (dippy, dcg, safety_net)")
    ap.add_argument("--limit", type=int, default=400)
    ap.add_argument("--explain", action="store_true",
                    help="group disagreements by the documented intentional categories")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    from orchestrator import shell  # noqa: E402  (timed: import cost of the module itself)
    t1 = time.perf_counter()
    shell.analyze("true")  # first call imports tree-sitter and builds the parser
    t2 = time.perf_counter()
    print(f"import orchestrator.shell: {(t1 - t0) * 1e3:.2f} ms; first analyze (tree-sitter import + parser):"
          f" {(t2 - t1) * 1e3:.2f} ms")

    cdir = corpora_dir()
    if not cdir.is_dir():
        print(f"corpora not found at {cdir} (set ORCH_SHARED)", file=sys.stderr)
        return 2
    costs: list[float] = []
    ok_all = True
    for peer, fname in FILES.items():
        if args.peer and args.peer != peer:
            continue
        rows = [json.loads(line) for line in (cdir / fname).read_text(encoding="utf-8").splitlines() if line]
        stats: dict[str, list[int]] = {}
        kinds: dict[str, dict[str, int]] = {}
        misses: list[tuple[str, str]] = []
        all_misses: dict[str, list[tuple[str, str]]] = {}
        for r in rows:
            cmd, label = r["command"], r["expected"]
            shell.api._analyze_cached.cache_clear()
            t = time.perf_counter_ns()
            res = shell.analyze(cmd)
            costs.append((time.perf_counter_ns() - t) / 1e3)
            good = agrees(peer, label, res.kind)
            st = stats.setdefault(label, [0, 0])
            st[0] += good
            st[1] += 1
            kinds.setdefault(label, {}).setdefault(res.kind, 0)
            kinds[label][res.kind] += 1
            if not good:
                all_misses.setdefault(label, []).append((res.kind, cmd))
            if not good and args.misses == label:
                misses.append((res.kind, cmd))
        for label, (good, total) in sorted(stats.items()):
            pct = 100.0 * good / total
            tgt = TARGETS.get((peer, label))
            verdict = ""
            if tgt:
                met = pct >= tgt[1]
                ok_all &= met
                verdict = f"target {tgt[0]}: {'MET' if met else 'MISSED'}"
            dist = ", ".join(f"{k} {v}" for k, v in sorted(kinds[label].items()))
            print(f"{peer:11s} {label:12s} agree {good:5d}/{total:5d} = {pct:6.2f}%  [{dist}]  {verdict}")
        if args.explain:
            import re
            for label, ms in sorted(all_misses.items()):
                left = list(ms)
                for p, lab, cat, rx in INTENTIONAL:
                    if p != peer or lab != label:
                        continue
                    hit = [m for m in left if re.search(rx, m[1])]
                    left = [m for m in left if m not in hit]
                    if hit:
                        print(f"    {label}: {len(hit):4d} intentional - {cat}")
                print(f"    {label}: {len(left):4d} not covered by a documented category"
                      + (": " + "; ".join(repr(c) for _, c in left[:40]) if left else ""))
        for kind, cmd in misses[: args.limit]:
            print(f"   MISS [{kind}] {cmd!r}")
    costs.sort()
    n = len(costs)
    if n:
        print(f"analyze cost per command (cold cache, {n} commands): min {costs[0]:.1f} µs, "
              f"p50 {costs[n // 2]:.1f} µs, p90 {costs[int(n * 0.9)]:.1f} µs, max {costs[-1]:.1f} µs")
        shell.api._analyze_cached.cache_clear()
        shell.analyze("git status && ls -la")
        t = time.perf_counter_ns()
        for _ in range(10000):
            shell.analyze("git status && ls -la")
        print(f"cached repeat: {(time.perf_counter_ns() - t) / 1e3 / 10000:.2f} µs per call")
    print("all targets met" if ok_all else "SOME TARGETS MISSED")
    return 0 if ok_all else 1


if __name__ == "__main__":
    raise SystemExit(main())
