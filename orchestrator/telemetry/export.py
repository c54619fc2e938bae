"""OTLP export of spooled telemetry events with the OpenTelemetry SDK (the ``orchestrator[otel]`` extra).

The only module of orchestrator that imports the SDK; loaded by whoever ships (the daemon's
:mod:`~orchestrator.telemetry.shipper`, ``orch telemetry flush``, ``orch trace export --otlp``), never by a hook.

An event becomes one OTLP log record: ``event_name`` ``orchestrator.decision`` / ``orchestrator.record``, the event's
time as timestamp, a one-line body, and the attributes of :data:`ATTRIBUTES` (its id as ``log.record.uid``, so a
backend can deduplicate what at-least-once delivery sent twice). Metrics (:class:`Metrics`): decision and record
counters, the hook latency and approval-wait histograms, and the spool's dropped-event counter.

Protocols: ``http/protobuf`` (``opentelemetry-exporter-otlp-proto-http``), ``http/json``
(``opentelemetry-exporter-otlp-json-http``, still a beta package) and ``grpc``
(``opentelemetry-exporter-otlp-proto-grpc``, installed separately: ``orchestrator[otel-grpc]``).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from orchestrator.core.errors import OrchestratorError
from orchestrator.telemetry import spool
from orchestrator.telemetry.config import Settings, env_int, resource_attributes

#: event key -> log record attribute (docs/telemetry.md, "What is exported")
ATTRIBUTES: dict[str, str] = {
    "id": "log.record.uid",
    "decision": "orchestrator.decision", "type": "orchestrator.decision.type", "hook": "orchestrator.hook",
    "intent": "orchestrator.intent.id", "session": "session.id", "agent": "orchestrator.agent.name",
    "agent_id": "orchestrator.agent.id", "tool": "orchestrator.tool.name",
    "tool_use_id": "orchestrator.tool_use_id", "kind": "orchestrator.tool.kind",
    "governed": "orchestrator.governed", "sandboxed": "orchestrator.sandboxed",
    "latency_ms": "orchestrator.latency_ms", "approval": "orchestrator.approval.outcome",
    "approval_wait_ms": "orchestrator.approval.wait_ms", "paths": "orchestrator.core.paths",
    "command": "orchestrator.command",
    "record_id": "orchestrator.record.id", "hash": "orchestrator.record.hash",
    "mutation_class": "orchestrator.mutation_class", "files": "orchestrator.files",
    "file_count": "orchestrator.file_count", "lines_added": "orchestrator.lines.added",
    "lines_removed": "orchestrator.lines.removed", "revision": "orchestrator.revision",
}
SCOPE = "orchestrator.core.governance"


class TelemetryUnavailable(OrchestratorError):
    """The OpenTelemetry SDK (or the chosen protocol's exporter) is not installed."""

    type = "telemetry-unavailable"


def _require(module: str, extra: str = "otel") -> Any:
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise TelemetryUnavailable(f"OTLP export needs {module} ({exc})",
                                   hint=f"pip install 'orchestrator[{extra}]'") from None


def available() -> bool:
    """Whether the SDK and the HTTP exporter are importable (``orch doctor``)."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None
               for m in ("opentelemetry.sdk", "opentelemetry.exporter.otlp.proto.http"))


_EXPORTERS = {
    ("logs", "http/protobuf"): ("opentelemetry.exporter.otlp.proto.http._log_exporter", "OTLPLogExporter", "otel"),
    ("logs", "http/json"): ("opentelemetry.exporter.otlp.json.http._log_exporter", "OTLPLogExporter", "otel"),
    ("logs", "grpc"): ("opentelemetry.exporter.otlp.proto.grpc._log_exporter", "OTLPLogExporter", "otel-grpc"),
    ("metrics", "http/protobuf"): ("opentelemetry.exporter.otlp.proto.http.metric_exporter", "OTLPMetricExporter",
                                   "otel"),
    ("metrics", "http/json"): ("opentelemetry.exporter.otlp.json.http.metric_exporter", "OTLPMetricExporter", "otel"),
    ("metrics", "grpc"): ("opentelemetry.exporter.otlp.proto.grpc.metric_exporter", "OTLPMetricExporter",
                          "otel-grpc"),
}


def exporter_for(signal: str, cfg: Settings) -> Any:
    """The SDK's OTLP exporter of ``signal`` for the configured protocol (the SDK reads the other ``OTEL_*``)."""
    protocol = cfg.protocol(signal)
    spec = _EXPORTERS.get((signal, protocol))
    if spec is None:
        raise TelemetryUnavailable(f"unknown OTLP protocol {protocol!r} for {signal}",
                                   hint="use http/protobuf, http/json or grpc (OTEL_EXPORTER_OTLP_PROTOCOL)")
    module, name, extra = spec
    kwargs: dict[str, Any] = {}
    endpoint = cfg.endpoint_for(signal)
    if endpoint:
        kwargs["endpoint"] = endpoint
    timeout = cfg.env.get(f"OTEL_EXPORTER_OTLP_{signal.upper()}_TIMEOUT") or cfg.env.get("OTEL_EXPORTER_OTLP_TIMEOUT")
    if timeout:
        try:
            kwargs["timeout"] = float(timeout)  # seconds, as the Python SDK reads the variable
        except ValueError:
            pass
    return getattr(_require(module, extra), name)(**kwargs)


def make_resource(root: str | os.PathLike[str], cfg: Settings) -> Any:
    """Resource attributes (:func:`orchestrator.telemetry.config.resource_attributes`) under the SDK's own and the
    ``OTEL_RESOURCE_ATTRIBUTES`` / ``OTEL_SERVICE_NAME`` variables (which win)."""
    resources = _require("opentelemetry.sdk.resources")
    ours = resources.Resource(resource_attributes(root, cfg))
    return resources.Resource.create({}).merge(ours).merge(resources.Resource(cfg.env_resource()))


def _body(ev: Mapping[str, Any]) -> str:
    if ev.get("event") == "record":
        return (f"record {ev.get('mutation_class', '?')}: {ev.get('file_count', 0)} file(s) "
                f"+{ev.get('lines_added', 0)} -{ev.get('lines_removed', 0)} ({ev.get('intent', 'no intent')})")
    why = f" {ev['type']} by {ev.get('hook', '?')}" if ev.get("type") else ""
    return f"{ev.get('decision', '?')}{why}: {ev.get('tool', '?')}"


def log_records(events: Iterable[Mapping[str, Any]], resource: Any) -> list[Any]:
    """The SDK log records of ``events`` (``ReadableLogRecord``, what an exporter's ``export`` takes)."""
    logs_api = _require("opentelemetry._logs")
    sdk_logs = _require("opentelemetry.sdk._logs")
    from opentelemetry.context import Context
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope

    from orchestrator._version import __version__

    scope = InstrumentationScope(SCOPE, __version__)
    info, warn = logs_api.SeverityNumber.INFO, logs_api.SeverityNumber.WARN
    empty = Context()  # no active span: skips the context lookup per record
    now = time.time_ns()
    out = []
    for ev in events:
        attrs = {ATTRIBUTES[k]: v for k, v in ev.items() if k in ATTRIBUTES and v is not None}
        refused = ev.get("decision") in ("deny", "ask")
        rec = logs_api.LogRecord(
            timestamp=int(float(ev.get("ts") or 0) * 1e9) or now, observed_timestamp=now, context=empty,
            severity_number=warn if refused else info, severity_text="WARN" if refused else "INFO",
            body=_body(ev), attributes=attrs, event_name=f"orchestrator.{ev.get('event', 'event')}")
        out.append(sdk_logs.ReadableLogRecord(rec, resource, scope))
    return out


class Metrics:
    """Counters and histograms fed from shipped events, exported by the SDK's metric pipeline (cumulative)."""

    def __init__(self, exporter: Any, resource: Any, interval_ms: int) -> None:
        metrics_sdk = _require("opentelemetry.sdk.metrics")
        export_sdk = _require("opentelemetry.sdk.metrics.export")
        from orchestrator._version import __version__

        # the reader's own timer is kept long: flush() exports after every shipping pass, at most once per interval
        self.reader = export_sdk.PeriodicExportingMetricReader(exporter, export_interval_millis=max(interval_ms, 1000))
        self.provider = metrics_sdk.MeterProvider(resource=resource, metric_readers=[self.reader])
        meter = self.provider.get_meter(SCOPE, __version__)
        self.decisions = meter.create_counter("orchestrator.decisions", unit="{decision}",
                                              description="governance decisions")
        self.records = meter.create_counter("orchestrator.records", unit="{record}", description="ledger records")
        self.lines = meter.create_counter("orchestrator.record.lines", unit="{line}",
                                          description="lines added and removed by recorded mutations")
        self.latency = meter.create_histogram("orchestrator.hook.duration", unit="s",
                                              description="pre-hook evaluation time per decision")
        self.approval_wait = meter.create_histogram("orchestrator.approval.wait", unit="s",
                                                    description="time an approval took to be decided")
        self.dropped = meter.create_counter("orchestrator.telemetry.dropped", unit="{event}",
                                            description="events the spool's bound refused")

    def observe(self, events: Iterable[Mapping[str, Any]]) -> None:
        for ev in events:
            base = {"orchestrator.agent.name": ev.get("agent") or "unknown",
                    "orchestrator.intent.id": ev.get("intent") or "none"}
            if ev.get("event") == "decision":
                attrs = {**base, "orchestrator.decision": ev.get("decision") or "unknown",
                         "orchestrator.decision.type": ev.get("type") or "none",
                         "orchestrator.hook": ev.get("hook") or "none"}
                self.decisions.add(1, attrs)
                self.latency.record(float(ev.get("latency_ms") or 0) / 1000.0,
                                    {**base, "orchestrator.decision": attrs["orchestrator.decision"]})
                if ev.get("approval"):
                    self.approval_wait.record(float(ev.get("approval_wait_ms") or 0) / 1000.0,
                                              {**base, "orchestrator.approval.outcome": ev["approval"]})
            elif ev.get("event") == "record":
                attrs = {**base, "orchestrator.mutation_class": ev.get("mutation_class") or "unknown"}
                self.records.add(1, attrs)
                self.lines.add(int(ev.get("lines_added") or 0), {**attrs, "orchestrator.lines.direction": "added"})
                self.lines.add(int(ev.get("lines_removed") or 0),
                               {**attrs, "orchestrator.lines.direction": "removed"})

    def flush(self, timeout_ms: int = 10_000) -> bool:
        return bool(self.reader.force_flush(timeout_ms))

    def shutdown(self) -> None:
        self.provider.shutdown()


class _LastError(logging.Handler):
    """Keeps the first warning the SDK's exporters logged since :meth:`reset` (they return only SUCCESS / FAILURE,
    and their last message is a generic "failed"; the first names the cause): ``orch telemetry status`` and
    ``orch doctor`` show it."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.message: str | None = None

    def reset(self) -> None:
        self.message = None

    def emit(self, record: logging.LogRecord) -> None:
        if self.message is not None:
            return
        try:
            self.message = record.getMessage()[:500]
        except Exception:  # noqa: BLE001 - a log handler never raises
            pass


class Exporter:
    """Log records and metrics of one workspace, over the configured protocol."""

    def __init__(self, root: str | os.PathLike[str], cfg: Settings) -> None:
        self.root = root
        self.cfg = cfg
        from orchestrator.telemetry.config import apply_to_process

        apply_to_process(cfg.env)
        self.errors = _LastError()
        logging.getLogger("opentelemetry.exporter").addHandler(self.errors)
        self.resource = make_resource(root, cfg)
        self.logs = exporter_for("logs", cfg) if cfg.exporting("logs") else None
        interval = env_int(cfg.env, "OTEL_METRIC_EXPORT_INTERVAL", 60_000)
        self.metrics = Metrics(exporter_for("metrics", cfg), self.resource, interval) \
            if cfg.exporting("metrics") else None
        self.metrics_interval = interval / 1000.0
        self._metrics_flushed = 0.0

    def export(self, events: Sequence[Mapping[str, Any]]) -> bool:
        """Send ``events`` as one request; True when the collector accepted them."""
        self.errors.reset()
        if self.logs is not None and events:
            result = self.logs.export(log_records(events, self.resource))
            if getattr(result, "name", str(result)) != "SUCCESS":
                return False
        if self.metrics is not None:
            self.metrics.observe(events)
        return True

    def count_dropped(self, n: int) -> None:
        if self.metrics is not None and n > 0:
            self.metrics.dropped.add(n)

    def flush_metrics(self, *, force: bool = False) -> bool:
        """Export the metrics now (``force``) or when the export interval passed since the last time."""
        if self.metrics is None:
            return True
        if not force and time.monotonic() - self._metrics_flushed < self.metrics_interval:
            return True
        self._metrics_flushed = time.monotonic()
        return self.metrics.flush()

    def shutdown(self) -> None:
        logging.getLogger("opentelemetry.exporter").removeHandler(self.errors)
        if self.metrics is not None:
            self.metrics.shutdown()
        if self.logs is not None:
            self.logs.shutdown()


class ShipResult:
    """What one shipping pass did: events sent, batches, whether a batch failed, corrupt lines skipped."""

    __slots__ = ("sent", "batches", "failed", "corrupt", "busy")

    def __init__(self) -> None:
        self.sent = self.batches = self.corrupt = 0
        self.failed = False
        self.busy = False  #: another shipper held the workspace's ship lock

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__}


#: events in the first batch after a failure: a collector still down is found without encoding a full batch
PROBE_BATCH = 8


def ship(run_dir: str | os.PathLike[str], exporter: Exporter, *, wait: bool = False,
         max_batches: int | None = None, probe: bool = False) -> ShipResult:
    """Send what the spool holds past the shipped position, batch by batch, committing each accepted batch;
    stop at the first refused one (it is sent again next time). ``probe``: the last attempt failed, so the first
    batch is small (:data:`PROBE_BATCH`)."""
    result = ShipResult()
    tdir = spool.directory(run_dir)
    size = env_int(exporter.cfg.env, "OTEL_BLRP_MAX_EXPORT_BATCH_SIZE", 512)
    with spool.ship_lock(tdir, wait=wait) as held:
        if not held:
            result.busy = True
            return result
        while max_batches is None or result.batches < max_batches:
            batch = spool.next_batch(tdir, PROBE_BATCH if probe and not result.batches else size)
            if batch is None:
                break
            if not exporter.export(batch.events):
                result.failed = True
                spool.note(tdir, last_error=time.time(), last_error_message=exporter.errors.message or
                           f"export to {exporter.cfg.endpoint_for('logs') or 'the default endpoint'} failed")
                break
            batch.commit()
            result.sent += len(batch.events)
            result.corrupt += batch.corrupt
            result.batches += 1
            spool.compact(tdir)
        dropped = spool.dropped(run_dir)
        reported = int(spool.load_state(tdir).get("dropped_reported") or 0)
        if dropped > reported:
            exporter.count_dropped(dropped - reported)
            spool.note(tdir, dropped_reported=dropped)
        if result.sent:
            spool.note(tdir, shipped_at=time.time(), sent_total=int(spool.load_state(tdir).get("sent_total") or 0)
                       + result.sent)
    return result


def backfill(root: str | os.PathLike[str], records: Iterable[Mapping[str, Any]], exporter: Exporter,
             batch_size: int = 512) -> int:
    """Export ledger records as record events (``orch trace export --otlp``): the same event, and so the same
    ``log.record.uid`` (the record id), as the live export, so sending twice is idempotent for a backend that
    deduplicates. Returns the number sent; raises :class:`OrchestratorError` when the collector refuses a batch."""
    from orchestrator.telemetry import events

    sent = 0
    batch: list[dict[str, Any]] = []
    for rec in records:
        batch.append(events.record(dict(rec)))
        if len(batch) >= batch_size:
            sent += _send(exporter, batch, sent)
            batch = []
    if batch:
        sent += _send(exporter, batch, sent)
    exporter.flush_metrics(force=True)
    return sent


def backfill_ledger(root: str | os.PathLike[str], records: Iterable[Mapping[str, Any]]) -> tuple[int, str]:
    """``orch trace export --otlp``: :func:`backfill` with the workspace's settings, exporting even where live
    telemetry is off (an explicit request; the ``OTEL_*`` variables still apply). Returns (sent, protocol)."""
    from pathlib import Path

    from orchestrator.config import policy
    from orchestrator.telemetry.config import settings

    cfg = settings(policy.load(Path(root) / ".orchestration" / "policy.yaml")).enabled_copy()
    exporter = Exporter(root, cfg)
    try:
        return backfill(root, records, exporter), cfg.protocol("logs")
    finally:
        exporter.shutdown()


def _send(exporter: Exporter, batch: list[dict[str, Any]], sent: int) -> int:
    if not exporter.export(batch):
        raise OrchestratorError(f"the collector refused a batch after {sent} record(s) were sent",
                                hint="check OTEL_EXPORTER_OTLP_ENDPOINT and the collector; rerunning the backfill "
                                     "sends the same record ids again")
    return len(batch)
