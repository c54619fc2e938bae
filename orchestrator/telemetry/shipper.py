"""The daemon's telemetry loop: ship the workspace's spool in batches, off every hook's path.

A thread of ``orch serve`` (:class:`orchestrator.daemon.server.Daemon`): every ``OTEL_BLRP_SCHEDULE_DELAY`` milliseconds
(default 1000) it rereads the policy (cheap: the compiled-config cache), and when telemetry is on and events wait,
sends them with :func:`orchestrator.telemetry.export.ship`. A collector that is down or slow delays only this
thread: the exporter's own retries, then an exponential back-off of the loop (up to :data:`MAX_BACKOFF` seconds);
events stay in the spool until accepted. The SDK is imported on the first pass that has something to send.
When the daemon stops, one last pass runs (bounded by the exporter's timeout) so a normal exit leaves nothing behind.
"""

from __future__ import annotations

import os
import threading
import time
import traceback
from pathlib import Path
from typing import Any

from orchestrator.telemetry import spool
from orchestrator.telemetry.config import env_int, otel_env, settings

#: seconds, the longest wait between two attempts while the collector refuses
MAX_BACKOFF = 60.0


class Shipper:
    """Ships one workspace's spool from a background thread; :meth:`stop` ends it after a last pass."""

    def __init__(self, root: str | os.PathLike[str], env: Any = None) -> None:
        self.root = Path(root)
        self.run_dir = self.root / ".orchestration" / "run"
        self.env = os.environ if env is None else env
        self.delay = env_int(otel_env(self.env), "OTEL_BLRP_SCHEDULE_DELAY", 1000) / 1000.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._exporter: Any = None
        self._key: Any = None
        self.backoff = 0.0
        #: observed by tests and ``orch status``: passes run, events sent, the last error
        self.passes = 0
        self.sent = 0
        self.last_error: str | None = None

    def start(self) -> Shipper:
        self._thread = threading.Thread(target=self._loop, daemon=True, name="orch-telemetry-shipper")
        self._thread.start()
        return self

    def stop(self, timeout: float = 15.0) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout)

    def _loop(self) -> None:
        while not self._stop.wait(self.backoff or self.delay):
            self.run_once()
        if not self.backoff:
            self.run_once()  # the daemon is exiting: send what waits, unless the collector is known to be down
        self._close()

    def run_once(self) -> int:
        """One pass: events sent (0 when off, idle, failed or another shipper is busy)."""
        self.passes += 1
        try:
            cfg = self._settings()
            if cfg is None or not (cfg.exporting("logs") or cfg.exporting("metrics")):
                return 0
            if spool.pending_bytes(spool.directory(self.run_dir)) == 0 and spool.dropped(self.run_dir) == 0:
                return 0
            from orchestrator.telemetry import export

            exporter = self._exporter_for(cfg)
            result = export.ship(self.run_dir, exporter, probe=bool(self.backoff))
            exporter.flush_metrics()
            if result.failed:
                self.backoff = min(MAX_BACKOFF, max(self.delay, self.backoff * 2 or self.delay * 2))
                self.last_error = "the collector refused or could not be reached"
            else:
                self.backoff = 0.0
            self.sent += result.sent
            return result.sent
        except Exception as exc:  # noqa: BLE001 - the loop must survive anything: events wait in the spool
            self.last_error = f"{type(exc).__name__}: {exc}"
            self.backoff = min(MAX_BACKOFF, max(self.delay, self.backoff * 2 or self.delay * 2))
            _log(self.run_dir, exc)
            return 0

    def _settings(self) -> Any:
        from orchestrator.config import policy

        pol = policy.load(self.root / ".orchestration" / "policy.yaml",
                          cache_dir=str(self.run_dir / "cache"))
        cfg = settings(pol, self.env)
        return cfg if cfg.enabled else None

    def _exporter_for(self, cfg: Any) -> Any:
        from orchestrator.telemetry import export

        key = (cfg.endpoint, cfg.protocol("logs"), cfg.protocol("metrics"), cfg.service_name,
               tuple(sorted(cfg.resource_attributes.items())), cfg.exporting("logs"), cfg.exporting("metrics"))
        if self._exporter is None or key != self._key:
            self._close()
            self._exporter, self._key = export.Exporter(self.root, cfg), key
        return self._exporter

    def _close(self) -> None:
        if self._exporter is not None:
            try:
                self._exporter.flush_metrics(force=True)
                self._exporter.shutdown()
            except Exception:  # noqa: BLE001
                pass
            self._exporter = None


def _log(run_dir: Path, exc: BaseException) -> None:
    try:
        with open(run_dir / "errors.log", "a", encoding="utf-8") as fh:
            fh.write(f"--- {time.strftime('%Y-%m-%dT%H:%M:%S')} telemetry shipper\n"
                     f"{''.join(traceback.format_exception(exc))}")
    except OSError:
        pass
