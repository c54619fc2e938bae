"""Reaching the person where they are: an ntfy push and a generic webhook when an item waits for a decision.

Configured in policy ``approval.notify`` (docs/configuration.md): ``url`` (the console as the person reaches it,
e.g. through the team's tunnel: every push opens it), ``content`` (``summary``: what kind of call, where, for whom
— or ``command``: also the command text or the target paths), ``ntfy`` (``server``, ``topic`` or ``topic_env``,
``token_env``, ``priority``) and ``webhook`` (``url`` or ``url_env``, ``secret_env``).

A push is **plumbing, never a decision**: its only action is ``view`` (open the page, where the passkey signs);
no ``http`` action (whoever can publish to the topic writes those, and the publisher of a reply is not visible:
docs/security.md). What is sent never includes a diff or file contents, and every text goes through
:func:`orchestrator.approvals.redact.redact`. Secrets the channels need (an ntfy access token, a webhook URL that
is itself a credential, the webhook's HMAC key) are named by environment variable, never written in policy.

Sending never blocks or decides anything: failures are returned (and audited by the caller), each request has a
short timeout, and :func:`send_async` runs them in a daemon thread. stdlib only (``urllib``), imported lazily.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from orchestrator.approvals.redact import redact

TIMEOUT_SECONDS = 5.0
MAX_TEXT = 400
USER_AGENT = "orchestrator-approvals"


@dataclass(frozen=True)
class Push:
    """What one pending item says to the person: a title, a short message, the page to open, a few facts."""

    item_id: str
    kind: str  # "approval" (later: "intent-proposal")
    title: str
    message: str
    url: str
    facts: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Sent:
    target: str  # "ntfy" / "webhook"
    ok: bool
    detail: str


def _get(cfg: Any, key: str, default: Any = None) -> Any:
    if cfg is None:
        return default
    if isinstance(cfg, Mapping):
        value = cfg.get(key, default)
    else:
        value = getattr(cfg, key, default)
    return default if value is None else value


def _from_env(cfg: Any, key: str, env: Mapping[str, str]) -> str | None:
    """``cfg[key]``, else the environment variable named by ``cfg[key + '_env']``."""
    direct = _get(cfg, key)
    if direct:
        return str(direct)
    name = _get(cfg, key + "_env")
    return env.get(str(name)) or None if name else None


def approval_push(req: Any, *, base_url: str, content: str = "summary") -> Push:
    """The push of an approval request (:class:`~orchestrator.approvals.ApprovalRequest`)."""
    where = req.where() if hasattr(req, "where") else "-"
    title = f"Approval needed: {req.risk} ({req.agent})"
    if getattr(req, "proposal", None):
        title = f"Intent proposed by {req.agent}: {str(req.proposal.get('name'))[:80]}"
    parts = [f"{req.tool} in {where}"]
    if req.intent_id:
        parts.append(f"intent {req.intent_id}")
    parts.append(f"session {req.session_id[:12]}")
    message = ", ".join(parts)
    facts: dict[str, Any] = {"risk": req.risk, "agent": req.agent, "tool": req.tool, "session": req.session_id,
                             "intent": req.intent_id, "worktree": where, "expires": req.expires}
    if content == "command":
        what = req.command if req.command else " ".join(req.paths)
        shown = redact(what)
        if len(shown) > MAX_TEXT:
            shown = shown[:MAX_TEXT] + "…"
        message += f"\n{shown}"
        facts["command" if req.command else "paths"] = shown
    url = base_url.rstrip("/") + f"/#item={req.id}"
    return Push(req.id, "intent-proposal" if getattr(req, "proposal", None) else "approval", title, message, url,
                facts)


def _post(url: str, body: bytes, headers: dict[str, str], timeout: float) -> tuple[bool, str]:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, data=body, method="POST",
                                     headers={"Content-Type": "application/json", "User-Agent": USER_AGENT,
                                              **headers})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as resp:  # noqa: S310 - the policy's own URL
            return 200 <= resp.status < 300, f"HTTP {resp.status}"
    except urllib.error.HTTPError as exc:
        return False, f"HTTP {exc.code}"
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return False, f"unreachable: {reason}"


def send_ntfy(cfg: Any, push: Push, env: Mapping[str, str], timeout: float = TIMEOUT_SECONDS) -> Sent:
    """Publish ``push`` to the ntfy topic (JSON publishing to the server root; one ``view`` action)."""
    server = str(_get(cfg, "server", "https://ntfy.sh")).rstrip("/")
    topic = _from_env(cfg, "topic", env)
    if not topic:
        return Sent("ntfy", False, "no topic (approval.notify.ntfy.topic or topic_env)")
    body = {"topic": topic, "title": push.title, "message": push.message, "tags": ["lock"],
            "priority": int(_get(cfg, "priority", 4)), "click": push.url,
            "actions": [{"action": "view", "label": "Open the console", "url": push.url, "clear": True}]}
    headers = {}
    token_env = _get(cfg, "token_env")
    if token_env and env.get(str(token_env)):
        headers["Authorization"] = f"Bearer {env[str(token_env)]}"
    ok, detail = _post(server, json.dumps(body).encode(), headers, timeout)
    return Sent("ntfy", ok, f"{server} topic {topic[:3]}…: {detail}")


def send_webhook(cfg: Any, push: Push, env: Mapping[str, str], timeout: float = TIMEOUT_SECONDS) -> Sent:
    """POST the push as JSON; with ``secret_env`` an ``X-Orchestrator-Signature: sha256=<hmac>`` header."""
    url = _from_env(cfg, "url", env)
    if not url:
        return Sent("webhook", False, "no url (approval.notify.webhook.url or url_env)")
    payload = {"type": f"orchestrator.{push.kind}.pending", "id": push.item_id, "title": push.title,
               "message": push.message, "url": push.url, **push.facts}
    body = json.dumps(payload, sort_keys=True).encode()
    headers = {}
    secret_env = _get(cfg, "secret_env")
    if secret_env and env.get(str(secret_env)):
        mac = hmac.new(env[str(secret_env)].encode(), body, hashlib.sha256).hexdigest()
        headers["X-Orchestrator-Signature"] = f"sha256={mac}"
    ok, detail = _post(url, body, headers, timeout)
    host = url.split("/")[2] if "://" in url else "?"
    return Sent("webhook", ok, f"{host}: {detail}")


def targets(notify: Any) -> list[str]:
    """The configured channels (``ntfy``, ``webhook``), for "who was asked"."""
    return [name for name in ("ntfy", "webhook") if _get(notify, name) is not None]


def send(notify: Any, push: Push, env: Mapping[str, str] | None = None) -> list[Sent]:
    """Send ``push`` to every configured channel; never raises."""
    env = os.environ if env is None else env
    out = []
    for name, fn in (("ntfy", send_ntfy), ("webhook", send_webhook)):
        cfg = _get(notify, name)
        if cfg is None:
            continue
        try:
            out.append(fn(cfg, push, env))
        except Exception as exc:  # noqa: BLE001 - a push never breaks the approval
            out.append(Sent(name, False, f"failed: {exc!r}"))
    return out


def send_async(notify: Any, push: Push, done: Callable[[list[Sent]], None] | None = None,
               env: Mapping[str, str] | None = None) -> threading.Thread | None:
    """:func:`send` in a daemon thread (None when nothing is configured); ``done`` gets the results."""
    if not targets(notify):
        return None
    snapshot = dict(os.environ if env is None else env)

    def run() -> None:
        results = send(notify, push, snapshot)
        if done is not None:
            done(results)

    thread = threading.Thread(target=run, name="orch-notify", daemon=True)
    thread.start()
    return thread


__all__ = ["Push", "Sent", "approval_push", "send", "send_async", "send_ntfy", "send_webhook", "targets"]
