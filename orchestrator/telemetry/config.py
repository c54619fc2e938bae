"""Telemetry settings: the policy's ``telemetry:`` section plus the standard OpenTelemetry environment variables.

Standard library only (``orch doctor``, ``orch status`` and the daemon read it without the SDK). What a team commits
(policy) sets the defaults; a machine's ``OTEL_*`` variables win, as the OpenTelemetry specification expects:

- ``OTEL_SDK_DISABLED=true`` stops export (events are still spooled while ``telemetry.enabled``);
- ``OTEL_LOGS_EXPORTER`` / ``OTEL_METRICS_EXPORTER``: ``otlp`` (default) or ``none``;
- ``OTEL_EXPORTER_OTLP_PROTOCOL`` (and the ``_LOGS_`` / ``_METRICS_`` forms): ``http/protobuf`` (default),
  ``http/json`` or ``grpc``;
- ``OTEL_EXPORTER_OTLP_ENDPOINT`` / ``_LOGS_ENDPOINT`` / ``_METRICS_ENDPOINT``, ``_HEADERS``, ``_TIMEOUT``,
  ``_COMPRESSION``, ``_CERTIFICATE``: read by the SDK's exporters themselves;
- ``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``: win over the resource attributes below;
- ``OTEL_BLRP_SCHEDULE_DELAY`` (ms between two shipping passes, default 1000) and
  ``OTEL_BLRP_MAX_EXPORT_BATCH_SIZE`` (events per request, default 512), the batch log processor's variables.

Each may also be given prefixed with ``ORCH_`` (``ORCH_OTEL_EXPORTER_OTLP_ENDPOINT``): Claude Code removes every
``OTEL_*`` variable from the environment of its hooks (so that its own telemetry settings do not leak into
subprocesses), and the daemon a hook starts inherits that environment. An unprefixed variable wins.
"""

from __future__ import annotations

import os
import platform
import socket
from collections.abc import Mapping
from typing import Any

PROTOCOLS = ("http/protobuf", "http/json", "grpc")
DEFAULT_PROTOCOL = "http/protobuf"
#: the ``telemetry:`` defaults (mirrors :class:`orchestrator.config.schema.TelemetryPolicy`)
DEFAULTS: dict[str, Any] = {"enabled": False, "include_commands": False, "spool_max_bytes": 32 * 1024 * 1024,
                            "endpoint": None, "protocol": None, "service_name": None, "resource_attributes": {}}


class Settings:
    """The resolved settings of one workspace (see the module docstring for the precedence)."""

    __slots__ = ("enabled", "include_commands", "spool_max_bytes", "endpoint", "service_name",
                 "resource_attributes", "env", "_policy_protocol")

    def __init__(self, section: Mapping[str, Any] | None = None, env: Mapping[str, str] | None = None) -> None:
        data = {**DEFAULTS, **(section or {})}
        self.env = otel_env(os.environ if env is None else env)
        self.enabled = bool(data["enabled"])
        self.include_commands = bool(data["include_commands"])
        self.spool_max_bytes = int(data["spool_max_bytes"])
        self.endpoint = data["endpoint"]
        self.service_name = data["service_name"]
        self.resource_attributes = dict(data["resource_attributes"] or {})
        self._policy_protocol = data["protocol"]

    def enabled_copy(self) -> Settings:
        """These settings with ``enabled`` forced on (an explicit export: ``orch trace export --otlp``)."""
        copy = Settings(None, self.env)
        for name in self.__slots__:
            setattr(copy, name, getattr(self, name))
        copy.enabled = True
        return copy

    def exporting(self, signal: str) -> bool:
        """Whether ``signal`` (``logs`` / ``metrics``) is exported: telemetry on, SDK not disabled, exporter not
        ``none``."""
        if not self.enabled or self.env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
            return False
        chosen = self.env.get(f"OTEL_{signal.upper()}_EXPORTER", "otlp").strip().lower() or "otlp"
        return chosen != "none"

    def protocol(self, signal: str) -> str:
        """The OTLP protocol of ``signal``: the signal's variable, the general one, the policy, the default."""
        for value in (self.env.get(f"OTEL_EXPORTER_OTLP_{signal.upper()}_PROTOCOL"),
                      self.env.get("OTEL_EXPORTER_OTLP_PROTOCOL"), self._policy_protocol):
            if value and value.strip():
                return value.strip().lower()
        return DEFAULT_PROTOCOL

    def endpoint_for(self, signal: str) -> str | None:
        """The endpoint of ``signal``: ``OTEL_EXPORTER_OTLP_<SIGNAL>_ENDPOINT`` as is, else the base URL of
        ``OTEL_EXPORTER_OTLP_ENDPOINT`` or the policy's ``endpoint`` plus ``/v1/<signal>`` (HTTP; gRPC takes the base
        URL), else None: the exporter's default (``http://localhost:4318``)."""
        own = self.env.get(f"OTEL_EXPORTER_OTLP_{signal.upper()}_ENDPOINT", "").strip()
        if own:
            return own
        base = self.env.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip() or self.endpoint
        if not base:
            return None
        if self.protocol(signal) == "grpc":
            return str(base)
        return str(base).rstrip("/") + f"/v1/{signal}"

    def env_resource(self) -> dict[str, str]:
        """``OTEL_RESOURCE_ATTRIBUTES`` (``key=value,...``, values percent-decoded) and ``OTEL_SERVICE_NAME``."""
        from urllib.parse import unquote

        attrs: dict[str, str] = {}
        for item in self.env.get("OTEL_RESOURCE_ATTRIBUTES", "").split(","):
            key, eq, value = item.partition("=")
            if eq and key.strip():
                attrs[key.strip()] = unquote(value.strip())
        name = self.env.get("OTEL_SERVICE_NAME", "").strip()
        if name:
            attrs["service.name"] = name
        return attrs


PREFIX = "ORCH_"


def otel_env(env: Mapping[str, str]) -> dict[str, str]:
    """The ``OTEL_*`` variables of ``env``, the ``ORCH_OTEL_*`` forms filling the gaps (see the module docstring)."""
    out = {k[len(PREFIX):]: v for k, v in env.items() if k.startswith(PREFIX + "OTEL_")}
    out.update({k: v for k, v in env.items() if k.startswith("OTEL_")})
    return out


def apply_to_process(env: Mapping[str, str]) -> None:
    """Make the ``OTEL_*`` values of ``env`` visible to the SDK, which reads ``os.environ`` itself (headers,
    certificates, compression): set those the process lacks. Called by the processes that ship, never by a hook."""
    for key, value in env.items():
        if key.startswith("OTEL_") and key not in os.environ:
            os.environ[key] = value


def settings(policy: Any, env: Mapping[str, str] | None = None) -> Settings:
    """The settings of a loaded policy (a :class:`~orchestrator.config.policy.PolicyView`; a compiled policy cached by an
    older release has no ``telemetry`` key: telemetry is then off)."""
    section: Any = getattr(policy, "telemetry", None)
    if section is not None and not isinstance(section, Mapping):
        section = section.to_dict()
    return Settings(section, env)


def env_int(env: Mapping[str, str], name: str, default: int) -> int:
    """A positive integer variable; ``default`` when unset or malformed."""
    try:
        value = int(env.get(name, ""))
    except ValueError:
        return default
    return value if value > 0 else default


_ARCH = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64", "i386": "x86", "i686": "x86",
         "ppc64le": "ppc64", "s390x": "s390x"}


def resource_attributes(root: str | os.PathLike[str], cfg: Settings) -> dict[str, Any]:
    """The resource attributes of a workspace, per the semantic conventions: ``service.*``, ``host.*``, ``os.type``,
    ``vcs.*`` (repository URL without credentials, name, branch, revision) and the worktree
    (``orchestrator.worktree.path`` / ``.name``); the policy's ``resource_attributes`` win over them, and
    ``OTEL_RESOURCE_ATTRIBUTES`` / ``OTEL_SERVICE_NAME`` over everything (applied by the exporter)."""
    from orchestrator._version import __version__
    from orchestrator.vcs.revision import head_revision
    from orchestrator.vcs.worktrees import git_dirs, worktree_of

    root = os.path.realpath(os.fspath(root))
    attrs: dict[str, Any] = {
        "service.name": cfg.service_name or "orchestrator", "service.version": __version__,
        "host.name": socket.gethostname(), "host.arch": _ARCH.get(platform.machine().lower(), platform.machine()),
        "os.type": platform.system().lower(), "orchestrator.worktree.path": root,
        "orchestrator.worktree.name": os.path.basename(root),
    }
    import uuid

    attrs["service.instance.id"] = str(uuid.uuid5(uuid.NAMESPACE_URL, f"orchestrator:{attrs['host.name']}:{root}"))
    wt = worktree_of(root)
    if wt is not None:
        if wt.branch:
            attrs["vcs.ref.head.name"] = wt.branch
            attrs["vcs.ref.head.type"] = "branch"
        dirs = git_dirs(root)
        url = remote_url(dirs[1]) if dirs else None
        if url:
            attrs["vcs.repository.url.full"] = url
            attrs["vcs.repository.name"] = url.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
    revision = head_revision(root)
    if revision:
        attrs["vcs.ref.head.revision"] = revision
    attrs.update(cfg.resource_attributes)
    return attrs


def remote_url(common_dir: str, remote: str = "origin") -> str | None:
    """The URL of ``remote`` in the repository's ``config`` (read with the stdlib), without user or password."""
    import configparser

    parser = configparser.RawConfigParser(strict=False)
    try:
        parser.read(os.path.join(common_dir, "config"), encoding="utf-8")
        url = parser.get(f'remote "{remote}"', "url", fallback=None)
    except (configparser.Error, OSError, UnicodeDecodeError):
        return None
    if not url:
        return None
    return strip_credentials(url.strip())


def strip_credentials(url: str) -> str:
    """``https://user:token@host/x`` → ``https://host/x`` (an scp-like ``git@host:x`` has no secret: kept)."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    host, slash, path = rest.partition("/")
    return f"{scheme}://{host.rpartition('@')[2]}{slash}{path}"
