"""A tiny JSON-over-HTTP POST with the standard library (no SDK, no extra dependency)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from orchestrator.agent.providers.base import ProviderError


def post_json(url: str, body: dict[str, Any], headers: dict[str, str], *, timeout: float = 120.0) -> dict[str, Any]:
    """POST ``body`` as JSON, return the decoded JSON object. Raises :class:`ProviderError`."""
    data = json.dumps(body).encode("utf-8")
    req = urllib.request.Request(url, data=data, method="POST",
                                 headers={"content-type": "application/json", **headers})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 — URL is configured by the user
            payload = resp.read()
    except urllib.error.HTTPError as exc:
        detail = exc.read()[:2000].decode("utf-8", "replace")
        raise ProviderError(f"HTTP {exc.code} from {url}: {detail}") from None
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise ProviderError(f"cannot reach {url}: {exc}") from None
    try:
        obj = json.loads(payload)
    except ValueError:
        raise ProviderError(f"{url} did not return JSON: {payload[:200]!r}") from None
    if not isinstance(obj, dict):
        raise ProviderError(f"{url} returned {type(obj).__name__}, expected a JSON object")
    return obj
