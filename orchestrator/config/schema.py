"""Schemas of the versioned governance files, validated with pydantic v2.

Loaded rarely (on change) and imported lazily: nothing on the per-call hot path imports this module
once the compiled form is cached. Extra keys are accepted, as real ``active_intents.yaml`` files in
the wild carry ``description``, ``created_at``, ``related_specs`` and more.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class Status(str, Enum):
    """Lifecycle of an intent. Only IN_PROGRESS intents can authorise mutations."""

    PENDING = "PENDING"
    IN_PROGRESS = "IN_PROGRESS"
    BLOCKED = "BLOCKED"
    ON_HOLD = "ON_HOLD"
    COMPLETED = "COMPLETED"
    CANCELLED = "CANCELLED"
    ABANDONED = "ABANDONED"


class Intent(BaseModel):
    """One business intent: what an agent may work on, and where."""

    model_config = ConfigDict(extra="allow", str_strip_whitespace=True)

    id: str = Field(min_length=1)
    name: str = Field(min_length=1)
    status: Status
    owned_scope: list[str] = Field(default_factory=list)
    constraints: list[str] = Field(default_factory=list)
    acceptance_criteria: list[str] = Field(default_factory=list)
    description: str | None = None

    @field_validator("id", "name", mode="before")
    @classmethod
    def _scalar_to_str(cls, v: Any) -> Any:
        # YAML turns `id: 001` into an int; an id is a name, keep it textual
        return str(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v

    @field_validator("status", mode="before")
    @classmethod
    def _status_upper(cls, v: Any) -> Any:
        return v.strip().upper().replace("-", "_").replace(" ", "_") if isinstance(v, str) else v

    @field_validator("owned_scope", "constraints", "acceptance_criteria", mode="before")
    @classmethod
    def _must_be_list(cls, v: Any) -> Any:
        if v is None:
            return []
        if not isinstance(v, list):
            raise ValueError(f"must be a list, got {type(v).__name__}")
        return v

    @model_validator(mode="after")
    def _network_valid(self) -> Intent:
        # `network: allow|deny|[ports]` replaces sandbox.network for this intent, a mapping extends it
        # (orchestrator/sandbox/network.py)
        extra = self.model_extra or {}
        if "network" in extra:
            from orchestrator.sandbox.network import validate

            validate(extra["network"])
        return self

    @field_validator("owned_scope")
    @classmethod
    def _globs_valid(cls, v: list[str]) -> list[str]:
        from orchestrator.core.globs import GlobError, translate

        for pattern in v:
            try:
                translate(pattern)
            except GlobError as exc:
                raise ValueError(f"invalid glob {pattern!r}: {exc}") from None
        return v


class IntentsFile(BaseModel):
    """The whole ``active_intents.yaml``."""

    model_config = ConfigDict(extra="allow")

    active_intents: list[Intent] = Field(default_factory=list)

    @field_validator("active_intents", mode="before")
    @classmethod
    def _list(cls, v: Any) -> Any:
        if v is None:
            return []
        if not isinstance(v, list):
            raise ValueError(f"must be a list of intents, got {type(v).__name__}")
        return v


Channel = Literal["tui", "passkey", "agent-ask", "deny", "allow"]
_ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"


def _origin_error(origin: str) -> str | None:
    """Why ``origin`` cannot be a console origin (scheme://host[:port], https unless loopback), or None."""
    from urllib.parse import urlsplit

    parts = urlsplit(origin)
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path not in ("", "/") \
            or parts.query or parts.fragment or parts.username:
        return f"{origin!r} is not an origin (scheme://host[:port])"
    if parts.scheme == "http" and parts.hostname not in ("localhost", "127.0.0.1", "::1"):
        return f"{origin!r}: beyond loopback the console is served over https"
    return None


class PasskeyPolicy(BaseModel):
    """The WebAuthn relying party of the console (channel ``passkey``; docs/console.md)."""

    model_config = ConfigDict(extra="forbid")

    # the console's host name (an IP address cannot be a relying party: open the page at http://localhost:PORT)
    rp_id: str = Field(default="localhost", pattern=r"^[a-z0-9](?:[a-z0-9.-]{0,251}[a-z0-9])?$")
    # where the page is served: an assertion made on any other origin is refused by the hook
    origins: list[str] = Field(default_factory=lambda: ["http://localhost:8470"], min_length=1)
    # "required": the authenticator must verify the person (PIN, biometrics), not only their presence
    user_verification: Literal["required", "preferred"] = "required"

    @model_validator(mode="after")
    def _origins(self) -> PasskeyPolicy:
        from urllib.parse import urlsplit

        for origin in self.origins:
            error = _origin_error(origin)
            if error:
                raise ValueError(error)
            host = urlsplit(origin).hostname or ""
            if host != self.rp_id and not host.endswith("." + self.rp_id):
                raise ValueError(f"origin {origin!r} is not on the relying party {self.rp_id!r} (or below it)")
        self.origins = [o.rstrip("/") for o in self.origins]
        return self


class NtfyPolicy(BaseModel):
    """An ntfy topic (self-hosted or ntfy.sh) that gets a push with a `view` action opening the console."""

    model_config = ConfigDict(extra="forbid")

    server: str = Field(default="https://ntfy.sh", pattern=r"^https?://")
    topic: str | None = Field(default=None, pattern=r"^[A-Za-z0-9_-]{1,64}$")
    # the topic (a capability on a public server) or an access token, read from these environment variables
    topic_env: str | None = Field(default=None, pattern=_ENV_NAME)
    token_env: str | None = Field(default=None, pattern=_ENV_NAME)
    priority: int = Field(default=4, ge=1, le=5)


class WebhookPolicy(BaseModel):
    """A generic webhook: a JSON POST per pending item (e.g. into a chat tool)."""

    model_config = ConfigDict(extra="forbid")

    url: str | None = Field(default=None, pattern=r"^https?://")
    # a webhook URL is often itself a credential: keep it in the environment instead of the policy
    url_env: str | None = Field(default=None, pattern=_ENV_NAME)
    # HMAC-SHA256 key of the X-Orchestrator-Signature header, so the receiver can check the sender
    secret_env: str | None = Field(default=None, pattern=_ENV_NAME)


class NotifyPolicy(BaseModel):
    """Reaching the person where they are when a call waits (docs/console.md, "Pushes")."""

    model_config = ConfigDict(extra="forbid")

    # the console as the person reaches it (their tunnel's URL): every push opens it
    url: str = Field(default="http://localhost:8470", pattern=r"^https?://")
    # what a push may carry: "summary" (kind of call, risk, where, for whom) or "command" (also the command text
    # or the target paths, secret-looking values redacted); never a diff or file contents
    content: Literal["summary", "command"] = "summary"
    ntfy: NtfyPolicy | None = None
    webhook: WebhookPolicy | None = None


class ApprovalPolicy(BaseModel):
    """How destructive calls are decided."""

    model_config = ConfigDict(extra="forbid")

    channel: Channel = "agent-ask"
    timeout_seconds: float = Field(default=300, gt=0)
    on_timeout: Literal["deny"] = "deny"
    # grants a reviewer may remember ("for this session/intent"); these classes are always asked again
    forbid_remember: list[str] = Field(default_factory=lambda: ["force-push", "recursive-delete", "history-rewrite"])
    grant_ttl_seconds: float = Field(default=3600, gt=0)
    # shell commands that never ask (in the spirit of Claude Code's `Bash(pytest:*)`): "pytest:*" matches a single
    # simple command whose words start with `pytest`, "make test" exactly `make test` (see docs/configuration.md).
    # They still run sandboxed where available and still pass scope/protection checks; destructive ones still ask.
    allow_commands: list[str] = Field(default_factory=list)
    # a host that can end its turn with a call deferred (Claude Code print mode, `claude -p`): "wait" blocks up to
    # timeout_seconds as everywhere; "defer" files the request and ends the turn at once, and the call runs when
    # the session is resumed after a person decided (channel passkey; docs/console.md, "Headless runs")
    headless: Literal["wait", "defer"] = "wait"
    # how long a deferred request stays decidable
    defer_seconds: float = Field(default=86400, gt=0)
    # channel passkey: the relying party and the pushes
    passkey: PasskeyPolicy = Field(default_factory=PasskeyPolicy)
    notify: NotifyPolicy = Field(default_factory=NotifyPolicy)

    @field_validator("allow_commands")
    @classmethod
    def _allow_entries(cls, v: list[str]) -> list[str]:
        from orchestrator.config.allowlist import entry_error

        for entry in v:
            error = entry_error(entry)
            if error is not None:
                raise ValueError(error)
        return v


def _secret_env() -> list[str]:
    from orchestrator.sandbox.envpolicy import SECRET_ENV

    return list(SECRET_ENV)


class NetworkPolicy(BaseModel):
    """``sandbox.network`` as a mapping: each command in its own network namespace, out only through the egress
    proxy to the hosts allowed here and (``configured``) the person's registries and git remotes; ``ports`` where
    no namespace can be made (orchestrator/sandbox/network.py)."""

    model_config = ConfigDict(extra="forbid")

    # host patterns: "example.com", "*.example.com" (subdomains), an address or network, any of them with ":PORT"
    allow: list[str] = Field(default_factory=list)
    # denied whatever allows them (derived hosts included)
    deny: list[str] = Field(default_factory=list)
    # the package managers' registries and the repository's git remotes, from the person's own configuration
    configured: bool = True
    # TCP ports (Landlock ABI >= 4) where the kernel refuses a network namespace
    ports: list[int] = Field(default_factory=lambda: [22, 53, 80, 443])


class SocketsPolicy(BaseModel):
    """Servers outside the sandbox that a sandboxed command may reach (orchestrator/sandbox/hidden.py)."""

    model_config = ConfigDict(extra="forbid")

    # pathname UNIX sockets (or directories of them) left reachable: every other bound socket is hidden in the
    # command's mount namespace. Absolute, ~/..., $VAR (the hook's environment: "$SSH_AUTH_SOCK") or
    # workspace-relative; "@name" opens abstract sockets (all of them: Landlock cannot open one name)
    allow: list[str] = Field(default_factory=list)

    @field_validator("allow")
    @classmethod
    def _allow(cls, v: Any) -> Any:
        from orchestrator.sandbox.hidden import validate

        return validate(v)


class SandboxPolicy(BaseModel):
    """The kernel sandbox for shell commands the analyzer cannot vouch for (orchestrator.sandbox)."""

    model_config = ConfigDict(extra="forbid")

    # false: never sandbox; such commands go to the approval channel as before
    enabled: bool = True
    # written besides the intent's scope: "{tmp}" (a private TMPDIR), absolute paths, workspace-relative caches
    writable: list[str] = Field(default_factory=lambda: ["{tmp}", "/tmp", "/dev/shm", ".pytest_cache",
                                                         "node_modules/.cache"])
    # name patterns dropped even from names the allow-list keeps (`*` matches anything; case-insensitive): API keys,
    # tokens, passwords. Replaces the built-in list (orchestrator.sandbox.envpolicy.SECRET_ENV); [] drops none
    env_scrub: list[str] = Field(default_factory=_secret_env)
    # names a sandboxed command inherits besides the built-in allow-list (envpolicy.ENV_ALLOW): a glob keeps names
    # (their values still checked for credentials); an exact name passes as it is (NPM_TOKEN for a private registry)
    env_keep: list[str] = Field(default_factory=list)
    # the network: a mapping (NetworkPolicy, the default: egress by host through the proxy), "allow" (unrestricted),
    # "deny" (nothing), or a list of TCP ports (the form before egress by host: read as {ports: [...]})
    network: Literal["allow", "deny"] | list[int] | NetworkPolicy = Field(default_factory=NetworkPolicy)
    # each command in its own PID namespace with a fresh /proc (other processes' environment out of reach; what a
    # command leaves running ends with it). false: background servers outlive the command, /proc/PID/environ of
    # the agent's processes is readable again (docs/security.md)
    pid_namespace: bool = True
    # servers outside the sandbox (docker, ssh-agent, tmux, D-Bus, X11, a database): hidden unless allowed here
    sockets: SocketsPolicy = Field(default_factory=SocketsPolicy)

    @field_validator("network")
    @classmethod
    def _network(cls, v: Any) -> Any:
        from orchestrator.sandbox.network import validate

        return validate(v)


class SecretsPolicy(BaseModel):
    """Read protection: which files agents may not read, search, copy or send (see orchestrator/secrets/patterns.py)."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = True
    # start from orchestrator's default patterns (env files, private keys, cloud/SSH credentials)
    defaults: bool = True
    # more secret patterns (a name like ".env.prod", "~/..." for the home directory, or a root-relative path)
    patterns: list[str] = Field(default_factory=list)
    # exemptions, winning over every pattern (e.g. "config/dev.env")
    allow: list[str] = Field(default_factory=list)


class TelemetryPolicy(BaseModel):
    """OTLP export of decisions and ledger records (docs/telemetry.md); the ``OTEL_*`` variables win over these."""

    model_config = ConfigDict(extra="forbid")

    # off by default: nothing is spooled or exported
    enabled: bool = False
    # command text in decision events (never file contents); off like Claude Code's prompt logging
    include_commands: bool = False
    # the spool's bound: events past it are dropped and counted (orch doctor, orch status)
    spool_max_bytes: int = Field(default=32 * 1024 * 1024, ge=64 * 1024)
    # the collector's base URL (e.g. http://collector:4318) when OTEL_EXPORTER_OTLP_ENDPOINT is not set
    endpoint: str | None = None
    protocol: Literal["http/protobuf", "http/json", "grpc"] | None = None
    # service.name when OTEL_SERVICE_NAME is not set (default "orchestrator")
    service_name: str | None = None
    # extra resource attributes (e.g. team, deployment.environment.name); OTEL_RESOURCE_ATTRIBUTES wins
    resource_attributes: dict[str, str] = Field(default_factory=dict)


class Policy(BaseModel):
    """``.orchestration/policy.yaml``: every knob, with safe defaults."""

    model_config = ConfigDict(extra="forbid")

    version: int = 1
    # how tools that no registry knows are treated: as possible mutations (default), refused, or reads
    unknown_tools: Literal["mutating", "deny", "read"] = "mutating"
    # explicit kinds for tool names (e.g. an MCP tool known to be read-only)
    tools: dict[str, Literal["read", "write", "edit", "delete", "exec", "meta", "unknown"]] = Field(
        default_factory=dict
    )
    # a plain file delete through a delete tool counts as destructive (needs approval)
    delete_is_destructive: bool = True
    stale_check: bool = True
    approval: ApprovalPolicy = Field(default_factory=ApprovalPolicy)
    sandbox: SandboxPolicy = Field(default_factory=SandboxPolicy)
    ledger_fsync: bool = True
    secrets: SecretsPolicy = Field(default_factory=SecretsPolicy)
    # cloud/cluster/registry/forge commands that change remote state (terraform apply, kubectl delete, npm publish,
    # gh pr merge...): ask a person through the approval channel, deny outright, or allow (see orchestrator/shell/rules/outside.py)
    outside_world: Literal["ask", "deny", "allow"] = "ask"
    telemetry: TelemetryPolicy = Field(default_factory=TelemetryPolicy)
