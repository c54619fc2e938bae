"""``orch telemetry status|flush``: the telemetry spool of a workspace, and shipping it without a daemon.

``status`` shows whether telemetry is on, where it goes, what waits in the spool and how many events the bound
dropped. ``flush`` ships the spool now, in the foreground (CI jobs, hosts that run no daemon such as the reference
loop): it waits for a running daemon's pass to finish rather than sending anything twice. See docs/telemetry.md.
"""

from __future__ import annotations

import argparse

from orchestrator.commands import add_workspace_arg, workspace_of
from orchestrator.core.output import err, json_out, out


def register(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="verb", metavar="VERB")
    for name, text in (("status", "telemetry settings, spooled bytes, dropped events"),
                       ("flush", "ship the spool now (no daemon needed)")):
        p = sub.add_parser(name, help=text)
        add_workspace_arg(p)
        p.add_argument("--json", action="store_true", help="machine-readable output")
    add_workspace_arg(parser)
    parser.add_argument("--json", action="store_true", default=argparse.SUPPRESS)


def run(args: argparse.Namespace) -> int:
    ws = workspace_of(args)
    if getattr(args, "verb", None) == "flush":
        return _flush(ws, getattr(args, "json", False))
    from orchestrator.telemetry.checks import summary

    data = summary(ws)
    if getattr(args, "json", False):
        json_out(data)
        return 0
    out(f"telemetry: {'on' if data['enabled'] else 'off'}"
        + (f", {data['protocol']} to {data['endpoint'] or 'the SDK default endpoint'}" if data["enabled"] else ""))
    out(f"spool: {data['pending_bytes']} byte(s) waiting, {data['sent_total']} event(s) shipped, "
        f"{data['dropped']} dropped")
    if isinstance(data["last_error"], (int, float)) and (not isinstance(data["shipped_at"], (int, float))
                                                         or data["last_error"] > data["shipped_at"]):
        out(f"last export failed: {data['last_error_message']}")
    return 0


def _flush(ws: object, as_json: bool) -> int:
    from orchestrator.config import policy
    from orchestrator.core.errors import OrchestratorError
    from orchestrator.telemetry import export
    from orchestrator.telemetry.config import settings
    from orchestrator.config.workspace import Workspace

    assert isinstance(ws, Workspace)
    cfg = settings(policy.load(ws.policy_file))
    if not cfg.enabled:
        raise OrchestratorError("telemetry is off in this workspace", hint="set telemetry.enabled: true in "
                                ".orchestration/policy.yaml (docs/telemetry.md)")
    exporter = export.Exporter(ws.root, cfg)
    try:
        result = export.ship(ws.run_dir, exporter, wait=True)
        exporter.flush_metrics(force=True)
    finally:
        exporter.shutdown()
    if as_json:
        json_out(result.to_dict())
    else:
        out(f"shipped {result.sent} event(s) in {result.batches} batch(es)"
            + (f", skipped {result.corrupt} corrupt line(s)" if result.corrupt else ""))
    if result.failed:
        err("the collector refused a batch or could not be reached; the rest stays in the spool")
        return 1
    return 0
