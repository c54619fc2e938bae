"""``orch doctor``: is this workspace governed the way its owner thinks it is?

Each check is a function ``(ws: Workspace) -> Iterable[Finding]`` (the contract is the leaf module
:mod:`orchestrator.core.findings`) named in :data:`CHECKS` as ``"module:function"`` and imported only when
doctor runs, so a check may live beside the code it checks (an adapter, the sandbox, the daemon)
without the engine importing the CLI. A finding that is not ``ok`` carries a ``fix``: the command or
edit that resolves it.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Iterable
from dataclasses import asdict

from orchestrator.commands import add_workspace_arg, workspace_of
from orchestrator.core.findings import STATUSES, Check, Finding
from orchestrator.core.output import json_out, out
from orchestrator.config.workspace import Workspace


#: the checks, in the order they are reported ("module:function"; see the module docstring)
CHECKS: list[str] = [
    "orchestrator.commands.doctor:check_config",
    "orchestrator.config.checks:check_sandbox",
    "orchestrator.adapters.checks:check_launcher",
    "orchestrator.adapters.checks:check_hooks",
    "orchestrator.adapters.checks:check_mcp",
    "orchestrator.pre.secrets:check_secrets",
    "orchestrator.adapters.codex_setup:check_codex",
    "orchestrator.adapters.gemini_setup:check_gemini",
    "orchestrator.adapters.copilot_setup:check_copilot",
    "orchestrator.adapters.opencode_setup:check_opencode",
    "orchestrator.adapters.qwen_setup:check_qwen",
    "orchestrator.adapters.cline_setup:check_cline",
    "orchestrator.adapters.readers:check_exposure",
    "orchestrator.adapters.kilo_setup:check_kilo",
    "orchestrator.adapters.pi_setup:check_pi",
    "orchestrator.config.intentignore:check_hooks_path",
    "orchestrator.state.keys:check_signing",
    "orchestrator.approvals.signed:check_passkey",
    "orchestrator.commands.status:check_daemon",
    "orchestrator.telemetry.checks:check_telemetry",
]


def check_config(ws: Workspace) -> Iterable[Finding]:
    """The governance files load and validate."""
    from orchestrator.config import intents
    from orchestrator.config import policy
    from orchestrator.core.errors import OrchestratorError

    from orchestrator.config import intentignore

    for label, load, path in (("config.intents", intents.load, ws.intents_file),
                              ("config.policy", policy.load, ws.policy_file),
                              ("config.intentignore", intentignore.load, ws.intentignore_file)):
        try:
            load(path)
        except OrchestratorError as exc:
            yield Finding(label, "fail", str(exc), exc.hint or "fix the file named above")
        else:
            yield Finding(label, "ok", "loads and validates")


def run_checks(ws: Workspace, checks: Iterable[str] = CHECKS) -> list[Finding]:
    """Run every check; a check that raises is itself a ``fail`` finding (doctor never crashes)."""
    findings: list[Finding] = []
    for ref in checks:
        mod_name, _, func_name = ref.partition(":")
        try:
            func: Check = getattr(importlib.import_module(mod_name), func_name)
            findings.extend(func(ws))
        except Exception as exc:  # noqa: BLE001 — a broken check is reported, not fatal
            findings.append(Finding(ref, "fail", f"the check itself failed: {type(exc).__name__}: {exc}",
                                    "report this as a bug"))
    return findings


def register(parser: argparse.ArgumentParser) -> None:
    add_workspace_arg(parser)
    parser.add_argument("--json", action="store_true", help="print the findings as JSON")


#: where each check's findings are explained (docs/troubleshooting.md has one section per check id prefix)
DOC = "docs/troubleshooting.md"


def doc_anchor(check: str) -> str:
    """The troubleshooting section of a check id (``hooks.claude-code`` -> ``#hooks``)."""
    return f"{DOC}#{check.split('.', 1)[0].split(':', 1)[0]}"


def run(args: argparse.Namespace) -> int:
    ws = workspace_of(args)
    findings = run_checks(ws)
    if args.json:
        json_out([{**asdict(f), "doc": doc_anchor(f.check)} for f in findings])
    else:
        counts = {s: sum(f.status == s for f in findings) for s in STATUSES}
        out(f"orch doctor: {ws.root}")
        width = min(max((len(f.check) for f in findings), default=10), 24)
        for f in findings:
            out(f"  {f.status.upper():4}  {f.check:{width}}  {f.message}")
            if f.status in ("warn", "fail") and f.fix:
                out(f"  {'':4}  {'':{width}}  fix: {f.fix}")
                out(f"  {'':4}  {'':{width}}  see: {doc_anchor(f.check)}")
        verdict = "governed as intended" if not counts["fail"] and not counts["warn"] else \
            "NOT governed as intended" if counts["fail"] else "governed, with warnings"
        out(f"{verdict}: {counts['ok']} ok, {counts['info']} info, {counts['warn']} warnings, "
            f"{counts['fail']} failures")
    return 1 if any(f.status == "fail" for f in findings) else 0
