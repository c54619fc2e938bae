"""What one running console serves: :class:`Console` (workspace, origins, CSRF token, item sources).

The page is one HTML file with its CSS and a small vanilla script, all served from ``orchestrator/web/static/``
(no CDN, no build step); the CSRF token reaches the page in a ``<meta>`` element (:meth:`Console.page`).
"""

from __future__ import annotations

import html
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from orchestrator.approvals import Broker
from orchestrator.approvals.approvers import b64url
from orchestrator.approvals.passkey import PasskeyError, Settings, load_approvers
from orchestrator.core.errors import OrchestratorError
from orchestrator.web.intents import HeldOps
from orchestrator.web.items import SOURCES, Source
from orchestrator.config.workspace import Workspace

STATIC = Path(__file__).resolve().parent / "static"
DEFAULT_PORT = 8470
WEBAUTHN_TIMEOUT_MS = 120_000


class Console:
    """One console process: the workspace it serves, its origins and CSRF token, the item sources.

    ``origins`` are the URLs the page is reached at (``http://localhost:8470``; a tunnel's ``https://…``): requests
    must come from one of them, and a passkey assertion names one of them (the hook accepts only the origins in
    policy ``approval.passkey.origins``). ``hosts`` are the ``Host`` headers answered (derived from the origins and
    the loopback names of the port)."""

    def __init__(self, workspace: Workspace, *, origins: list[str], port: int, csrf_token: str | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.workspace = workspace
        self.clock = clock
        self.broker = Broker(workspace.shared_run_dir, clock=clock)
        self.port = port
        self.origins = [o.rstrip("/") for o in origins]
        self.hosts = hosts_of(self.origins, port)
        self.csrf_token = csrf_token or b64url(os.urandom(32))
        self.sources: dict[str, Source] = {kind: factory(self) for kind, factory in SOURCES.items()}
        self.intent_ops = HeldOps()

    @property
    def url(self) -> str:
        """The canonical address of the page (the first origin)."""
        return self.origins[0]

    def policy(self) -> Any:
        """The workspace's policy (raises ConfigError when it is broken)."""
        from orchestrator.config import policy

        return policy.load(self.workspace.policy_file)

    def settings(self) -> Settings:
        """The passkey relying party of the policy (defaults when the policy is unreadable)."""
        try:
            return Settings.from_policy(self.policy().approval)
        except OrchestratorError:
            return Settings()

    def forbid_remember(self) -> frozenset[str] | None:
        """Risk classes never remembered; None (remember nothing) when the policy is unreadable."""
        try:
            return frozenset(self.policy().approval.forbid_remember)
        except OrchestratorError:
            return None

    def signing_options(self, challenge: bytes) -> dict[str, Any]:
        """The WebAuthn request options for ``challenge``: this relying party, its registered approvers' credentials
        (raises :class:`PasskeyError` when none is registered: nobody could sign)."""
        settings = self.settings()
        approvers = load_approvers(self.workspace.orch_dir).for_rp(settings.rp_id)
        if not approvers:
            raise PasskeyError(f"no approver's passkey is registered for {settings.rp_id!r}",
                               hint="register one with `orch approver add NAME`")
        return {"challenge": b64url(challenge), "rpId": settings.rp_id, "timeout": WEBAUTHN_TIMEOUT_MS,
                "userVerification": "required" if settings.user_verification else "preferred",
                "allowCredentials": [{"type": "public-key", "id": a.credential_id} for a in approvers]}

    def page(self) -> str:
        """``index.html`` with the CSRF token and the workspace name filled in (escaped)."""
        text = (STATIC / "index.html").read_text(encoding="utf-8")
        return (text.replace("{{csrf}}", html.escape(self.csrf_token, quote=True))
                    .replace("{{workspace}}", html.escape(self.workspace.root.name, quote=True)))

    def source(self, kind: str) -> Source:
        try:
            return self.sources[kind]
        except KeyError:
            raise OrchestratorError(f"unknown kind of pending item {kind[:40]!r}") from None


def hosts_of(origins: list[str], port: int) -> list[str]:
    """The ``Host`` values to answer: each origin's ``host[:port]`` and the loopback names at ``port``."""
    hosts = {f"localhost:{port}", f"127.0.0.1:{port}", f"[::1]:{port}"}
    for origin in origins:
        rest = origin.split("://", 1)[-1]
        hosts.add(rest.split("/", 1)[0].lower())
    return sorted(hosts)


__all__ = ["DEFAULT_PORT", "STATIC", "WEBAUTHN_TIMEOUT_MS", "Console", "hosts_of"]
