"""The sandbox's network policy: which TCP ports a sandboxed command may connect to (Landlock ABI >= 4).

Policy ``sandbox.network`` (overridable per intent with an intent key ``network``):

- ``allow``: TCP is not restricted;
- ``deny``: no TCP connect and no bind at all (a command that must not talk to anything, a local server included);
- a list of ports (the default, :data:`DEFAULT_PORTS`): TCP connect only to those ports, whatever the address;
  binding stays free (a test suite may still start a server; what it listens on is reachable only by those who
  can already run code here).

Why the default is ``[22, 53, 80, 443]``: package installs (``pip``, ``npm``, ``cargo``, ``apt``) and ``git fetch``
speak HTTPS (443), plain HTTP (80, mirrors), SSH (22, git remotes) and DNS over TCP (53, the fallback of large
answers; DNS over UDP is not TCP, so Landlock does not see it). All four are privileged ports: on a machine where
the agent does not run as root, no local process it controls can *listen* on them, so an "attacker" listener on
127.0.0.1 (the usual way a held-out check stands in for an exfiltration endpoint) is unreachable, while the
registries stay reachable. Landlock filters by port, not by address: HTTPS to any host stays open, which is why
uploads also ask a person (:mod:`orchestrator.shell.rules.net`, risk ``upload``). A proxy named in the hook's
environment (``HTTPS_PROXY=http://proxy:3128``) has its port added, so installs behind it keep working.
"""

from __future__ import annotations

import os
from typing import Any

DEFAULT_PORTS = (22, 53, 80, 443)
_PROXY_VARS = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")


def validate(value: Any) -> Any:
    """``allow``, ``deny`` or a list of TCP ports (1..65535); raises ValueError otherwise (schema validators)."""
    if isinstance(value, str):
        if value not in ("allow", "deny"):
            raise ValueError(f"network must be 'allow', 'deny' or a list of TCP ports, got {value!r}")
        return value
    if isinstance(value, list) and all(isinstance(p, int) and not isinstance(p, bool) for p in value):
        bad = [p for p in value if not 1 <= p <= 65535]
        if bad:
            raise ValueError(f"network ports must be 1..65535, got {bad}")
        return value
    raise ValueError(f"network must be 'allow', 'deny' or a list of TCP ports, got {value!r}")


def effective(policy: Any, intent: Any = None) -> str | list[int]:
    """The network setting in force: the intent's ``network`` key, else ``sandbox.network``."""
    extra = getattr(intent, "extra", None) or {}
    if "network" in extra:
        try:
            return validate(extra["network"])  # type: ignore[no-any-return]
        except ValueError:
            return "deny"  # validated when the intents load; a value that slipped past fails closed
    sb = getattr(policy, "sandbox", None)
    value = getattr(sb, "network", None)
    return list(DEFAULT_PORTS) if value is None else value  # type: ignore[no-any-return]


def option(policy: Any, intent: Any, abi: int, env: Any = None) -> str | None:
    """The launcher's ``--net`` value for this call, or None when TCP is left alone (``allow``, or ABI < 4: the
    doctor says so)."""
    value = effective(policy, intent)
    if value == "allow" or abi < 4:
        return None
    if value == "deny":
        return "deny"
    ports: set[int] = {int(p) for p in value} | proxy_ports(os.environ if env is None else env)
    return ",".join(str(p) for p in sorted(ports))


def proxy_ports(env: Any) -> set[int]:
    """Ports of the proxies the hook's environment names (``HTTPS_PROXY=http://proxy:3128`` -> 3128)."""
    from urllib.parse import urlsplit

    out: set[int] = set()
    for name in _PROXY_VARS:
        url = env.get(name)
        if not url:
            continue
        try:
            parts = urlsplit(url if "://" in url else "http://" + url)
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            continue
        out.add(port)
    return out


def describe(value: str | list[int]) -> str:
    """One line for ``orch doctor`` / ``orch explain``."""
    if value == "allow":
        return "TCP unrestricted (sandbox.network: allow)"
    if value == "deny":
        return "no TCP connect or bind (sandbox.network: deny)"
    return "TCP connect only to ports " + ", ".join(str(p) for p in value)
