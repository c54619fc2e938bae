"""Telemetry settings: policy defaults, the standard OTEL_* variables winning, resource attributes."""

from __future__ import annotations

import subprocess
from pathlib import Path

from orchestrator.telemetry.config import Settings, resource_attributes, strip_credentials


def test_defaults_are_off_and_http_protobuf() -> None:
    cfg = Settings(None, {})
    assert not cfg.enabled and not cfg.exporting("logs")
    assert cfg.protocol("logs") == "http/protobuf" and cfg.endpoint_for("logs") is None


def test_environment_wins_over_policy() -> None:
    policy = {"enabled": True, "protocol": "http/json", "endpoint": "http://collector:4318/"}
    assert Settings(policy, {}).protocol("logs") == "http/json"
    assert Settings(policy, {}).endpoint_for("logs") == "http://collector:4318/v1/logs"
    assert Settings(policy, {}).endpoint_for("metrics") == "http://collector:4318/v1/metrics"
    env = {"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "http/protobuf"}
    assert Settings(policy, env).protocol("logs") == "grpc"
    assert Settings(policy, env).protocol("metrics") == "http/protobuf"
    assert Settings(policy, {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://x:4318"}).endpoint_for("logs") == \
        "http://x:4318/v1/logs"
    assert Settings(policy, {"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "http://y/logs"}).endpoint_for("logs") == "http://y/logs"
    assert Settings(None, {}).endpoint_for("logs") is None
    env = {"OTEL_RESOURCE_ATTRIBUTES": "team=core,deployment.environment.name=a%20b,bad", "OTEL_SERVICE_NAME": "s"}
    assert Settings(None, env).env_resource() == {"team": "core", "deployment.environment.name": "a b",
                                                   "service.name": "s"}
    assert Settings({**policy, "protocol": "grpc"}, {}).endpoint_for("logs") == "http://collector:4318/"


def test_exporters_can_be_turned_off_the_standard_way() -> None:
    on = {"enabled": True}
    assert Settings(on, {}).exporting("logs") and Settings(on, {}).exporting("metrics")
    assert not Settings(on, {"OTEL_SDK_DISABLED": "true"}).exporting("logs")
    assert not Settings(on, {"OTEL_LOGS_EXPORTER": "none"}).exporting("logs")
    assert Settings(on, {"OTEL_LOGS_EXPORTER": "none"}).exporting("metrics")
    assert not Settings(on, {"OTEL_METRICS_EXPORTER": "none"}).exporting("metrics")
    assert Settings(None, {}).enabled_copy().exporting("logs")


def test_credentials_never_leave_in_the_repository_url() -> None:
    assert strip_credentials("https://bob:ghp_secret@github.com/acme/app.git") == "https://github.com/acme/app.git"
    assert strip_credentials("git@github.com:acme/app.git") == "git@github.com:acme/app.git"
    assert strip_credentials("https://github.com/acme/app") == "https://github.com/acme/app"


def test_resource_attributes_of_a_git_worktree(tmp_path: Path) -> None:
    root = tmp_path / "app"
    subprocess.run(["git", "init", "-q", "-b", "feature/x", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "remote", "add", "origin", "https://u:tok@example.com/acme/app.git"],
                   check=True)
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q",
                    "--allow-empty", "-m", "init"], check=True)
    head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    attrs = resource_attributes(root, Settings({"enabled": True, "resource_attributes": {"team": "core"}}, {}))
    assert attrs["service.name"] == "orchestrator" and attrs["service.version"]
    assert attrs["vcs.repository.url.full"] == "https://example.com/acme/app.git"
    assert attrs["vcs.repository.name"] == "app"
    assert attrs["vcs.ref.head.name"] == "feature/x" and attrs["vcs.ref.head.revision"] == head
    assert attrs["orchestrator.worktree.path"] == str(root.resolve()) and attrs["orchestrator.worktree.name"] == "app"
    assert attrs["host.name"] and attrs["os.type"] and attrs["team"] == "core"


def test_orch_prefixed_variables_get_through_hosts_that_strip_otel() -> None:
    """Claude Code removes OTEL_* from its hooks' environment; ORCH_OTEL_* fill the gaps, OTEL_* win."""
    env = {"ORCH_OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:4318", "ORCH_OTEL_EXPORTER_OTLP_PROTOCOL": "http/json",
           "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf", "ORCH_APPROVAL_CHANNEL": "deny"}
    cfg = Settings({"enabled": True}, env)
    assert cfg.endpoint_for("logs") == "http://a:4318/v1/logs" and cfg.protocol("logs") == "http/protobuf"
    assert "ORCH_APPROVAL_CHANNEL" not in cfg.env and "APPROVAL_CHANNEL" not in cfg.env
