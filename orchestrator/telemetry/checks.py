"""What ``orch doctor``, ``orch status`` and ``orch telemetry status`` say about a workspace's telemetry."""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from orchestrator.telemetry import spool

if TYPE_CHECKING:
    from orchestrator.core.findings import Finding
    from orchestrator.config.workspace import Workspace


def summary(ws: Workspace) -> dict[str, Any]:
    """Telemetry at a glance: on or off, protocol and endpoint, bytes waiting, dropped events, last shipment."""
    from orchestrator.config import policy
    from orchestrator.core.errors import OrchestratorError
    from orchestrator.telemetry.config import settings

    try:
        cfg = settings(policy.load(ws.policy_file))
    except OrchestratorError:
        cfg = None
    tdir = spool.directory(ws.run_dir)
    state = spool.load_state(tdir)
    endpoint = None
    if cfg is not None:
        endpoint = (cfg.env.get("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT") or cfg.env.get("OTEL_EXPORTER_OTLP_ENDPOINT")
                    or cfg.endpoint)
    return {"enabled": bool(cfg and cfg.enabled), "protocol": cfg.protocol("logs") if cfg else None,
            "endpoint": endpoint, "exporting": bool(cfg and (cfg.exporting("logs") or cfg.exporting("metrics"))),
            "pending_bytes": spool.pending_bytes(tdir), "dropped": spool.dropped(ws.run_dir),
            "shipped_at": state.get("shipped_at"), "sent_total": state.get("sent_total", 0),
            "last_error": state.get("last_error"), "last_error_message": state.get("last_error_message")}


def check_telemetry(ws: Workspace) -> Iterable[Finding]:
    """``orch doctor``: telemetry's state, dropped events (a collector down for too long), a missing SDK."""
    from orchestrator.core.findings import Finding
    from orchestrator.telemetry.export import available

    s = summary(ws)
    if not s["enabled"]:
        if s["dropped"]:
            yield Finding("telemetry", "info", f"off; {s['dropped']} event(s) were dropped while it was on")
        else:
            yield Finding("telemetry", "ok", "off (policy telemetry.enabled: false)")
        return
    if not available():
        yield Finding("telemetry", "fail", "telemetry is on but the OpenTelemetry SDK is not installed: events are "
                      "spooled, never shipped", "pip install 'orchestrator[otel]'")
    if s["dropped"]:
        yield Finding("telemetry.dropped", "warn",
                      f"{s['dropped']} event(s) dropped: the spool reached its bound "
                      f"(telemetry.spool_max_bytes) while nothing shipped it",
                      "check the collector (OTEL_EXPORTER_OTLP_ENDPOINT) and run `orch telemetry flush`")
    waiting = s["pending_bytes"]
    shipped = s["shipped_at"]
    when = f"last shipped {int(time.time() - shipped)} s ago" if isinstance(shipped, (int, float)) else "never shipped"
    status = "warn" if waiting and isinstance(s["last_error"], (int, float)) and (
        not isinstance(shipped, (int, float)) or s["last_error"] > shipped) else "ok"
    yield Finding("telemetry", status, f"on, {s['protocol']} to {s['endpoint'] or 'the SDK default endpoint'}; "
                  f"{waiting} byte(s) waiting, {when}, {s['dropped']} dropped",
                  "" if status == "ok" else f"the last export failed ({s['last_error_message']}): check the collector, "
                                            "then `orch telemetry flush`")
