"""Governance telemetry: every decision and ledger record as an event, exported over OTLP (docs/telemetry.md).

The package is split so that the hook never pays for export:

- :mod:`~orchestrator.telemetry.events` builds an event (a flat JSON-able dict) from a decision or a ledger record;
- :mod:`~orchestrator.telemetry.spool` appends it to a bounded, crash-safe spool under ``.orchestration/run/telemetry/``
  (one ``O_APPEND`` write, like the ledger), counts what the bound drops, tracks what was shipped, and reads events
  back (:func:`~orchestrator.telemetry.spool.read_events`, for local views such as ``orch trace stats``);
- :mod:`~orchestrator.telemetry.config` resolves the settings (policy ``telemetry:`` plus the standard ``OTEL_*``
  variables) and the resource attributes;
- :mod:`~orchestrator.telemetry.export` (the only module importing the OpenTelemetry SDK, the ``orchestrator[otel]``
  extra) turns spooled events into OTLP log records and metrics and ships them in batches;
- :mod:`~orchestrator.telemetry.shipper` is the daemon's background loop around it.

The engine (``engine/pipeline.py``) imports only ``events`` and ``spool`` (standard library), and only when telemetry is on.
This ``__init__`` imports nothing, so importing a submodule stays cheap; :func:`backfill_command` loads ``export``
when called.

May import: ``core``, ``state``, ``vcs``, ``config``; the OpenTelemetry SDK only in ``export``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from pathlib import Path
    from typing import Any


def backfill_command(root: Path, records: Iterable[Mapping[str, Any]]) -> int:
    """``orch trace export --otlp``: send ``records`` (the filtered ledger) as record events; exit code 0."""
    from orchestrator.core.output import err
    from orchestrator.telemetry.export import backfill_ledger

    n, protocol = backfill_ledger(root, records)
    err(f"exported {n} record(s) over OTLP ({protocol})")
    return 0
