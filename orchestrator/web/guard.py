"""The console's request guard: one ASGI middleware that answers a bad request itself or calls the app.

Every request: the ``Host`` header must name the console (``localhost``/``127.0.0.1``/``[::1]`` at its port, or the
public origins it was started with): a page on another site that rebinds its DNS name to 127.0.0.1 reads nothing.
Every state-changing request (any method but GET/HEAD): POST only; an ``Origin`` header that is one of the
console's origins; ``Sec-Fetch-Site`` (when the browser sends it) ``same-origin``; the per-process CSRF token in
``X-CSRF-Token`` (the page reads it from its own HTML, which no other origin can read); a JSON body of at most
:data:`MAX_BODY` bytes (read here, so an endpoint never sees more). Nothing is decided by GET: GET routes only read.

Answers carry a strict Content-Security-Policy (scripts, styles and connections only from the console itself: no
CDN, no inline script), ``X-Frame-Options: DENY`` and ``no-store`` caching.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

MAX_BODY = 64 * 1024
SAFE_METHODS = ("GET", "HEAD")
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "manifest-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"cache-control", b"no-store"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return value.decode("latin-1")
    return None


async def _answer(send: Send, status: int, error_type: str, message: str, hint: str = "") -> None:
    body = json.dumps({"error": {"type": error_type, "message": message, **({"hint": hint} if hint else {})}})
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), *SECURITY_HEADERS]})
    await send({"type": "http.response.body", "body": body.encode()})


class Guard:
    """Host, Origin, CSRF and body-size checks in front of the console app (see the module docstring)."""

    def __init__(self, app: ASGIApp, *, hosts: Iterable[str], origins: Iterable[str], csrf_token: str) -> None:
        self.app = app
        self.hosts = {h.lower() for h in hosts}
        self.origins = {o.rstrip("/").lower() for o in origins}
        self.csrf_token = csrf_token

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            if scope["type"] == "lifespan":
                await self.app(scope, receive, send)
            return  # no websockets
        host = (_header(scope, b"host") or "").lower()
        if host not in self.hosts:
            await _answer(send, 421, "host-refused", f"this console does not answer for host {host[:80]!r}",
                          "open the console at the address `orch console` printed")
            return
        method = scope["method"]
        if method in SAFE_METHODS:
            await self.app(scope, receive, _with_headers(send))
            return
        refusal = self._refusal(scope, method)
        if refusal is not None:
            await _answer(send, 403, *refusal)
            return
        body = await _read_body(receive)
        if body is None:
            await _answer(send, 413, "body-too-large", f"request bodies are limited to {MAX_BODY} bytes")
            return
        await self.app(scope, _replay(body), _with_headers(send))

    def _refusal(self, scope: Scope, method: str) -> tuple[str, str, str] | None:
        """Why a state-changing request is refused (type, message, hint), or None."""
        if method != "POST":
            return "method-refused", f"{method} is not accepted here", "state changes are POST requests"
        origin = (_header(scope, b"origin") or "").rstrip("/").lower()
        if not origin or origin not in self.origins:
            return ("origin-refused", f"request from origin {origin[:80] or '(none)'!r} refused",
                    "decisions are only accepted from the console's own page")
        site = _header(scope, b"sec-fetch-site")
        if site is not None and site not in ("same-origin", "none"):
            return "origin-refused", f"cross-site request refused (Sec-Fetch-Site: {site[:20]})", ""
        token = _header(scope, b"x-csrf-token") or ""
        if not hmac.compare_digest(token.encode(), self.csrf_token.encode()):
            return ("csrf-refused", "missing or wrong CSRF token",
                    "reload the page (the token changes when the console restarts)")
        ctype = (_header(scope, b"content-type") or "").split(";")[0].strip().lower()
        if ctype != "application/json":
            return "content-type-refused", "request bodies must be application/json", ""
        return None


async def _read_body(receive: Receive) -> bytes | None:
    """The whole body, or None once it exceeds :data:`MAX_BODY` (not read further)."""
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            return None
        chunks.append(chunk)
        if not message.get("more_body"):
            break
    return b"".join(chunks)


def _replay(body: bytes) -> Receive:
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if sent:
            return {"type": "http.disconnect"}
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return receive


def _with_headers(send: Send) -> Send:
    async def wrapped(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            names = {k.lower() for k, _ in message.get("headers", ())}
            message = {**message, "headers": [*message.get("headers", ()),
                                              *((k, v) for k, v in SECURITY_HEADERS if k not in names)]}
        await send(message)

    return wrapped


__all__ = ["CSP", "Guard", "MAX_BODY"]
