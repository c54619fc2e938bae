"""A real OTLP/HTTP receiver on 127.0.0.1 for the telemetry tests: decodes what arrives with the official
``opentelemetry-proto`` messages, from protobuf (``application/x-protobuf``) or JSON (``application/json``, parsed
into the same messages by protobuf's ``json_format``), gzip or not.

``down`` / ``up`` close and reopen the listening socket on the same port, so a test can show a collector that is
unreachable for a while.
"""
from __future__ import annotations

import gzip
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

_MESSAGES = {"/v1/logs": (ExportLogsServiceRequest, ExportLogsServiceResponse),
             "/v1/metrics": (ExportMetricsServiceRequest, ExportMetricsServiceResponse)}


def value(v: AnyValue) -> Any:
    """An OTLP ``AnyValue`` as a Python value."""
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [value(x) for x in v.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: value(kv.value) for kv in v.kvlist_value.values}
    return getattr(v, kind) if kind else None


def attributes(kvs: Any) -> dict[str, Any]:
    return {kv.key: value(kv.value) for kv in kvs}


class Receiver:
    """Collects decoded export requests; ``logs()`` flattens the log records, ``metrics()`` the metric names."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, Any]] = []  # (path, content type, decoded request)
        self.lock = threading.Lock()
        self.port = _free_port()
        self._server: ThreadingHTTPServer | None = None
        self.up()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def up(self) -> None:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                kinds = _MESSAGES.get(self.path)
                if kinds is None:
                    self.send_response(404)
                    self.end_headers()
                    return
                ctype = (self.headers.get("Content-Type") or "").split(";")[0]
                request = kinds[0]()
                if ctype == "application/json":
                    json_format.Parse(body, request, ignore_unknown_fields=False)
                    answer, answer_type = b"{}", "application/json"
                else:
                    request.ParseFromString(body)
                    answer, answer_type = kinds[1]().SerializeToString(), "application/x-protobuf"
                with receiver.lock:
                    receiver.requests.append((self.path, ctype, request))
                self.send_response(200)
                self.send_header("Content-Type", answer_type)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def down(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def logs(self) -> list[dict[str, Any]]:
        """Every received log record: ``event_name``, ``body``, ``attributes``, ``resource``, ``scope``,
        ``time_unix_nano``, ``severity``, ``content_type``."""
        out = []
        with self.lock:
            requests = list(self.requests)
        for path, ctype, req in requests:
            if path != "/v1/logs":
                continue
            for rl in req.resource_logs:
                resource = attributes(rl.resource.attributes)
                for sl in rl.scope_logs:
                    for lr in sl.log_records:
                        out.append({"event_name": lr.event_name, "body": value(lr.body),
                                    "attributes": attributes(lr.attributes), "resource": resource,
                                    "scope": sl.scope.name, "time_unix_nano": lr.time_unix_nano,
                                    "severity": lr.severity_text, "content_type": ctype})
        return out

    def metrics(self) -> dict[str, list[Any]]:
        """Metric name -> its data points (the last request's last, cumulative)."""
        out: dict[str, list[Any]] = {}
        with self.lock:
            requests = list(self.requests)
        for path, _ctype, req in requests:
            if path != "/v1/metrics":
                continue
            for rm in req.resource_metrics:
                for sm in rm.scope_metrics:
                    for m in sm.metrics:
                        kind = m.WhichOneof("data")
                        out[m.name] = list(getattr(m, kind).data_points)
        return out

    def close(self) -> None:
        self.down()

    def __enter__(self) -> Receiver:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
