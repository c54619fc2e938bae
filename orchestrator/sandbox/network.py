"""The sandbox's network policy: a network namespace per command whose only way out is the egress proxy.

Policy ``sandbox.network`` (an intent's ``network`` key overrides or extends it):

- a mapping (the default)::

      network:
        allow: ["*.internal.example.com", "api.example.com:443"]   # besides the person's registries and remotes
        deny: []                                                     # wins over everything, derived hosts included
        configured: true        # the package managers' registries and the git remotes of the person's configuration
        ports: [22, 53, 80, 443]   # where the kernel refuses a network namespace: TCP ports (Landlock ABI >= 4)

  Each command runs in its own network namespace (loopback only) and reaches other hosts only through the
  workspace's egress proxy (:mod:`orchestrator.egress`), which allows the hosts of ``allow`` and, with
  ``configured``, those of the person's own configuration (:mod:`orchestrator.egress.sources`). Patterns:
  :mod:`orchestrator.egress.hosts`. Where the kernel refuses a namespace (nested in another sandbox, user
  namespaces restricted, ``sandbox.pid_namespace: false``), ``ports`` apply as before: TCP connect only to those
  ports, whatever the host (``orch doctor`` says which holds);
- ``allow``: no namespace, TCP unrestricted (as before);
- ``deny``: a namespace with no way out, and no TCP connect or bind at all (as before);
- a list of ports (the form before egress by host): read as ``{ports: [...]}`` — the hosts are now the proxy's
  decision, the ports the fallback (docs/configuration.md, "Migrating").

An intent's ``network``: ``allow``, ``deny`` or a list of ports replace the policy's; a mapping extends it
(``allow``/``deny`` entries added, ``configured``/``ports`` replaced when given).

Why ``[22, 53, 80, 443]`` as the fallback: package installs and ``git fetch`` speak HTTPS, plain HTTP, SSH and DNS
over TCP; all four are privileged ports, so on a machine where the agent does not run as root, no local process it
controls can listen on them. A proxy named in the hook's environment (``HTTPS_PROXY=http://proxy:3128``) has its
port added.
"""

from __future__ import annotations

import os
import shlex
import sys
from typing import Any

DEFAULT_PORTS = (22, 53, 80, 443)
KEYS = ("allow", "deny", "configured", "ports")
_PROXY_VARS = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")


def _ports(value: Any, where: str) -> list[int]:
    if not isinstance(value, list) or not all(isinstance(p, int) and not isinstance(p, bool) for p in value):
        raise ValueError(f"{where} must be a list of TCP ports, got {value!r}")
    bad = [p for p in value if not 1 <= p <= 65535]
    if bad:
        raise ValueError(f"network ports must be 1..65535, got {bad}")
    return list(value)


def _patterns(value: Any, key: str) -> list[str]:
    from orchestrator.egress.hosts import HostError, parse_entry

    if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
        raise ValueError(f"network.{key} must be a list of host patterns, got {value!r}")
    for pattern in value:
        try:
            parse_entry(pattern)
        except HostError as exc:
            raise ValueError(f"network.{key}: {exc}") from None
    return list(value)


def validate(value: Any) -> Any:
    """``allow``, ``deny``, a list of ports or a mapping of :data:`KEYS`; raises ValueError (schema validators).
    Returns the value unchanged (normalised later by :func:`normalize`)."""
    if isinstance(value, str):
        if value not in ("allow", "deny"):
            raise ValueError(f"network must be 'allow', 'deny', a list of TCP ports or a mapping, got {value!r}")
        return value
    if isinstance(value, list):
        return _ports(value, "network")
    if isinstance(value, dict) or hasattr(value, "model_dump"):
        normalize(value)
        return value
    raise ValueError(f"network must be 'allow', 'deny', a list of TCP ports or a mapping, got {value!r}")


def normalize(value: Any) -> str | dict[str, Any]:
    """``"allow"``, ``"deny"`` or the full mapping (every key present); raises ValueError."""
    if value is None:
        return {"allow": [], "deny": [], "configured": True, "ports": list(DEFAULT_PORTS)}
    if isinstance(value, str):
        return validate(value)  # type: ignore[no-any-return]
    if isinstance(value, list):
        return {"allow": [], "deny": [], "configured": True, "ports": _ports(value, "network")}
    # a pydantic model (the schema's validator), a PolicyView (a loaded policy) or a plain mapping (an intent's key)
    raw = value.model_dump() if hasattr(value, "model_dump") else value.to_dict() if hasattr(value, "to_dict") \
        else value
    if not isinstance(raw, dict):
        raise ValueError(f"network must be 'allow', 'deny', a list of TCP ports or a mapping, got {value!r}")
    unknown = sorted(set(raw) - set(KEYS))
    if unknown:
        raise ValueError(f"network: unknown key(s) {unknown} (known: {', '.join(KEYS)})")
    configured = raw.get("configured", True)
    if not isinstance(configured, bool):
        raise ValueError(f"network.configured must be true or false, got {configured!r}")
    return {"allow": _patterns(raw.get("allow") or [], "allow"), "deny": _patterns(raw.get("deny") or [], "deny"),
            "configured": configured,
            "ports": _ports(raw["ports"], "network.ports") if raw.get("ports") is not None else list(DEFAULT_PORTS)}


def effective(policy: Any, intent: Any = None) -> str | dict[str, Any]:
    """The network setting in force: the policy's, replaced or extended by the intent's ``network`` key. A value
    that slipped past validation fails closed (``deny``)."""
    sb = getattr(policy, "sandbox", None)
    try:
        base = normalize(getattr(sb, "network", None))
    except ValueError:
        return "deny"
    extra = getattr(intent, "extra", None) or {}
    if "network" not in extra:
        return base
    own = extra["network"]
    try:
        if not isinstance(own, dict):
            return normalize(own)
        mine = normalize(own)
    except ValueError:
        return "deny"
    if not isinstance(base, dict):
        base = normalize(None)  # an intent mapping over "allow"/"deny": it starts from the defaults
    assert isinstance(base, dict) and isinstance(mine, dict)
    tag = f"intent {getattr(intent, 'id', '?')} network"
    return {"allow": [(p, "sandbox.network.allow") for p in base["allow"]] + [(p, f"{tag}.allow") for p in mine["allow"]],
            "deny": [(p, "sandbox.network.deny") for p in base["deny"]] + [(p, f"{tag}.deny") for p in mine["deny"]],
            "configured": own.get("configured", base["configured"]),
            "ports": mine["ports"] if "ports" in own else base["ports"]}


def option(policy: Any, intent: Any, abi: int, env: Any = None) -> str | None:
    """The Landlock port rule for this call (``--net``/``--net-fallback``'s value), or None when TCP is left alone
    (``allow``, or ABI < 4: the doctor says so)."""
    value = effective(policy, intent)
    if value == "allow" or abi < 4:
        return None
    if value == "deny":
        return "deny"
    assert isinstance(value, dict)
    ports: set[int] = {int(p) for p in value["ports"]} | proxy_ports(os.environ if env is None else env)
    return ",".join(str(p) for p in sorted(ports))


def _sourced(entries: list[Any], key: str) -> list[tuple[str, str]]:
    return [tuple(e) if isinstance(e, tuple) else (e, key) for e in entries]  # type: ignore[misc]


def launcher_options(policy: Any, intent: Any, abi: int, root: str, run_dir: str, env: Any = None) -> list[str]:
    """The launcher's network options: ``--netns``, ``--egress``/``--egress-plan``/``--egress-env`` (the plan
    written for the proxy, :mod:`orchestrator.egress.plans`), ``--net`` or ``--net-fallback``."""
    value = effective(policy, intent)
    ports = option(policy, intent, abi, env)
    if value == "allow":
        return []
    if value == "deny":
        return ["--netns", "on"] + (["--net", "deny"] if ports else [])
    assert isinstance(value, dict)
    if host_abstract(policy):
        # a network namespace has abstract sockets of its own: the one the person opened would be out of reach
        return ["--net", ports] if ports else []
    from orchestrator.egress import plans, sources, supervise
    from orchestrator.egress.paths import egress_dir

    env = os.environ if env is None else env
    allow = _sourced(value["allow"], "sandbox.network.allow")
    if value["configured"]:
        allow += sources.configured(root, env, cache_dir=os.path.join(run_dir, "cache")).entries
    plan = plans.write(os.path.join(run_dir, "sandbox"), allow, _sourced(value["deny"], "sandbox.network.deny"))
    directory = egress_dir(env)
    supervise.ensure(directory)
    opts = ["--netns", "on", "--egress", str(directory), "--egress-plan", plan]
    for item in proxy_environment():
        opts += ["--egress-env", item]
    return opts + (["--net-fallback", ports] if ports else [])


def host_abstract(policy: Any) -> bool:
    """``sandbox.sockets.allow`` names an abstract socket (``@name``): the command stays in the host's network
    namespace (abstract sockets belong to one), and the TCP port rules apply instead of egress by host."""
    sockets = getattr(getattr(policy, "sandbox", None), "sockets", None)
    return any(str(entry).startswith("@") for entry in getattr(sockets, "allow", ()) or ())


def prestart(policy: Any) -> None:
    """Start the egress proxy ahead of the first command (the daemon's warm-up), when the policy uses it."""
    if isinstance(effective(policy), dict):
        from orchestrator.egress import supervise
        from orchestrator.egress.paths import egress_dir

        supervise.ensure(egress_dir())


#: the forwarder inside the namespace (launcher.c, netns.py)
PROXY_URL = "http://127.0.0.1:3128"
NO_PROXY = "localhost,127.0.0.1,::1"


def proxy_environment() -> list[str]:
    """``NAME=VALUE`` for a command whose only way out is the proxy: the standard variables (both cases), Node's
    switch for ``fetch``, the package managers' own settings (which would otherwise win over the environment), git's
    ``http.proxy`` (a config value wins over the variables) and ssh through a ``ProxyCommand``. ``NO_PROXY`` names
    loopback only: a command's own local servers are reached directly (they are in its namespace)."""
    ssh_proxy = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sshproxy.py")
    proxy_command = f"{shlex.quote(sys.executable)} -I -S {shlex.quote(ssh_proxy)} %h %p"
    ssh = f"ssh -o ControlMaster=no -o ControlPath=none -o ProxyCommand={shlex.quote(proxy_command)}"
    out = [f"{name}={PROXY_URL}" for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
                                              "all_proxy", "npm_config_proxy", "npm_config_https_proxy",
                                              "YARN_HTTP_PROXY", "YARN_HTTPS_PROXY", "PIP_PROXY", "GRPC_PROXY",
                                              "grpc_proxy")]
    out += [f"NO_PROXY={NO_PROXY}", f"no_proxy={NO_PROXY}", "NODE_USE_ENV_PROXY=1",
            f"GIT_CONFIG_PARAMETERS='http.proxy={PROXY_URL}'", f"GIT_SSH_COMMAND={ssh}"]
    return out


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


def summary(options: list[str]) -> dict[str, Any] | None:
    """What verdicts and the ledger show of the launcher's network options (None: unrestricted)."""
    if not options:
        return None
    pairs = dict(zip(options[::2], options[1::2]))
    out: dict[str, Any] = {"namespace": pairs.get("--netns") == "on"}
    if "--egress-plan" in pairs:
        out["egress"] = os.path.basename(pairs["--egress-plan"])[:16]
    if "--net" in pairs:
        out["tcp"] = pairs["--net"]
    if "--net-fallback" in pairs:
        out["fallback_ports"] = pairs["--net-fallback"]
    return out


def explain(summary: dict[str, Any] | None, run_dir: str) -> str:
    """``orch explain``'s network line for a verdict's ``network`` (:func:`summary`): the hosts of its plan."""
    if not summary:
        return "unrestricted (sandbox.network: allow)"
    if not summary.get("namespace"):
        return (f"the host's network (sandbox.sockets.allow names an abstract socket): TCP ports "
                f"{summary.get('tcp', 'unrestricted')} only, to any host")
    if "egress" not in summary:
        return "a namespace of its own with no way out (sandbox.network: deny)"
    from orchestrator.egress import plans

    try:
        allow, deny = plans.load(os.path.join(run_dir, "sandbox", summary["egress"] + plans.SUFFIX))
    except ValueError as exc:
        return f"egress plan {summary['egress']} unreadable ({exc})"
    hosts = ", ".join(f"{host} [{source}]" for host, source in allow) or "no host"
    denied = f"; denied: {', '.join(h for h, _ in deny)}" if deny else ""
    return (f"its own namespace; out only through the egress proxy to: {hosts}{denied} (where no namespace can be "
            f"made: TCP ports {summary.get('fallback_ports', 'unrestricted')})")


def describe(value: str | dict[str, Any] | list[int]) -> str:
    """One line for ``orch doctor`` / ``orch explain``."""
    if value == "allow":
        return "TCP unrestricted (sandbox.network: allow)"
    if value == "deny":
        return "no network at all (sandbox.network: deny)"
    if isinstance(value, list):
        return "TCP connect only to ports " + ", ".join(str(p) for p in value)
    if not isinstance(value, dict):
        return f"unknown network setting {value!r}"
    allow = [e[0] if isinstance(e, tuple) else e for e in value["allow"]]
    hosts = (", ".join(allow) if allow else "no extra hosts") + (
        " plus the registries and git remotes of your configuration" if value["configured"] else "")
    return (f"each command in its own network namespace; out only through the egress proxy to: {hosts} "
            f"(where no namespace can be made: TCP ports {', '.join(str(p) for p in value['ports'])})")
