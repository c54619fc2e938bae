"""``orch install opencode`` / ``orch uninstall opencode`` and the ``orch doctor`` check of the opencode install —
and, parametrised by :class:`PluginHost`, the same for Kilo CLI, opencode's fork
(:mod:`~orchestrator.adapters.kilo_setup`).

opencode (verified with 1.18.33, tests/e2e/test_opencode.py) runs no hook commands; it loads every
``.opencode/plugin/*.js`` of the project. Install writes:

- ``.opencode/plugin/orchestrator.js`` (:data:`~orchestrator.adapters.managed.OPENCODE_PLUGIN`), rendered from
  ``orchestrator/data/templates/opencode-plugin.js`` (:mod:`orchestrator.adapters.plugins`): it names no machine
  path and reaches orchestrator through the daemon socket or the committed launcher
  (:data:`~orchestrator.adapters.installer.LAUNCHER`, written too), and throws — blocks the call — when neither
  answers;
- the ``orchestrator`` MCP server in the ``mcp`` section of ``opencode.json`` (opencode reads no ``.mcp.json``):
  ``{"type": "local", "command": ["sh", "-c", "<launcher> mcp", "orchestrator"], "environment":
  {"ORCH_MCP_HOOKED": "1"}}`` — the plugin records the selection per session;
- (``orch install opencode``, through :func:`orchestrator.adapters.readers.cover`) Kilo's copy of the plugin,
  ``.kilo/plugin/orchestrator.js``: Kilo CLI reads ``opencode.json`` (so it would get our MCP server) but not
  ``.opencode/plugin/``, so a repository installed for opencode alone was open to Kilo (0 of 7 unsafe calls stopped,
  tests/e2e/test_kilo.py). ``orch uninstall opencode`` removes it again unless Kilo's own ``kilo.json`` still names
  our server (:attr:`PluginHost.companions`).

No trust step: opencode loads project plugins as they are. What keeps them from running: ``opencode --pure`` (or
``OPENCODE_PURE``: "run without external plugins"), ``OPENCODE_DISABLE_PROJECT_CONFIG``, and a plugin that fails to
load (opencode logs it and goes on without it): the doctor check names the first two and compares the plugin
with this version's template.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable, Mapping

from orchestrator.adapters import installer, plugins
from orchestrator.adapters.managed import KILO_PLUGIN, OPENCODE_PLUGIN, SERVER

AGENT = "opencode"
CONFIG_FILE = "opencode.json"
SCHEMA = "https://opencode.ai/config.json"
#: the line that marks the plugin as orchestrator's (its first line names it)
PLUGIN_MARK = plugins.PLUGIN_MARK
TEMPLATE = "opencode-plugin.js"


class PluginHost:
    """Where an opencode-like CLI (opencode, Kilo) keeps its plugin and MCP servers, and what turns them off."""

    __slots__ = ("agent", "plugin", "config_file", "schema", "ungoverned_env", "reads", "companions", "binary",
                 "label", "verified")

    def __init__(self, agent: str, plugin: str, config_file: str, schema: str, ungoverned_env: tuple[str, ...],
                 reads: tuple[str, ...], companions: tuple[str, ...] = (), *, binary: str, label: str,
                 verified: str) -> None:
        self.agent = agent
        #: the CLI's command, its name for people, and the version the e2e tests verified (``orch doctor``)
        self.binary = binary
        self.label = label
        self.verified = verified
        self.plugin = plugin
        #: where install registers the MCP server
        self.config_file = config_file
        self.schema = schema
        #: environment variables with which the CLI loads no project plugin (so nothing is governed)
        self.ungoverned_env = ungoverned_env
        #: the project files the CLI reads MCP servers from (one naming ours without the plugin: ungoverned)
        self.reads = reads
        #: the other hosts that read :attr:`config_file` too (``orch install`` writes their plugin as well:
        #: :func:`orchestrator.adapters.readers.cover`); uninstall removes it once no file they read names our server
        self.companions = companions


OPENCODE = PluginHost(AGENT, OPENCODE_PLUGIN, CONFIG_FILE, SCHEMA,
                      ("OPENCODE_PURE", "OPENCODE_DISABLE_PROJECT_CONFIG"), ("opencode.json", "opencode.jsonc"),
                      companions=("kilo",), binary="opencode", label="opencode", verified="1.18.33")
KILO = PluginHost("kilo", KILO_PLUGIN, "kilo.json", "https://app.kilo.ai/config.json",
                  ("KILO_PURE", "KILO_DISABLE_PROJECT_CONFIG"),
                  ("kilo.json", "kilo.jsonc", "opencode.json", "opencode.jsonc"),
                  binary="kilo", label="Kilo CLI", verified="7.7.7")
HOSTS = {host.agent: host for host in (OPENCODE, KILO)}


def plugin_text(host: PluginHost = OPENCODE) -> str:
    """The plugin as this version writes it for ``host`` (``orchestrator/data/templates/opencode-plugin.js``)."""
    return plugins.render(TEMPLATE, host.agent)


def mcp_entry() -> dict[str, Any]:
    """The ``orchestrator`` server for the ``mcp`` section: the portable launcher, no machine path."""
    shared = installer.mcp_server_entry(AGENT, scope="shared")
    return {"type": "local", "command": [shared["command"], *shared["args"]],
            "environment": {"ORCH_MCP_HOOKED": "1"}, "enabled": True}


def _is_our_server(entry: Any) -> bool:
    return isinstance(entry, dict) and isinstance(entry.get("command"), list) and \
        installer.LAUNCHER in " ".join(map(str, entry["command"]))


def our_server(root: Path, rel: str) -> dict[str, Any] | None:
    """Our MCP server in the ``mcp`` section of ``root/rel``, or None."""
    path = root / rel
    if not path.exists():
        return None
    try:
        data = installer._load(path)
    except Exception:  # noqa: BLE001 - a file the CLI cannot read either names nothing
        return None
    servers = data.get("mcp")
    entry = servers.get(SERVER) if isinstance(servers, dict) else None
    return entry if _is_our_server(entry) else None


def install(root: str | os.PathLike[str], *, python: str | None = None, mcp: bool = True,
            scope: str = "shared", host: PluginHost = OPENCODE) -> list[Path]:
    """Write the plugin, the launcher and (``mcp``) the MCP server; returns the files written."""
    if scope != "shared":
        from orchestrator.core.errors import UsageError

        raise UsageError(f"{host.agent} has no machine-local settings file; install it with --scope shared",
                         hint=f"the plugin {host.plugin} names only the committed launcher {installer.LAUNCHER}")
    root = Path(root)
    written = installer.write_launcher(root, python=python)
    path = plugins.write(root, host.plugin, plugin_text(host))
    if path is not None:
        written.append(path)
    if mcp:
        config = root / host.config_file
        data = installer._load(config)
        if not data:
            data = {"$schema": host.schema}
        servers = data.get("mcp")
        if not isinstance(servers, dict):
            servers = data["mcp"] = {}
        servers[SERVER] = mcp_entry()
        if installer._save(config, data):
            written.append(config)
    return written


def uninstall(root: str | os.PathLike[str], *, host: PluginHost = OPENCODE) -> list[Path]:
    """Remove what :func:`install` added: our MCP server, then each plugin (the host's, its companions') that no file
    its CLI reads still needs — a CLI reading our server without the plugin would run ungoverned; the launcher when no
    agent names it."""
    root = Path(root)
    changed: list[Path] = []
    config = root / host.config_file
    if our_server(root, host.config_file) is not None:
        data = installer._load(config)
        del data["mcp"][SERVER]
        if not data["mcp"]:
            del data["mcp"]
        if set(data) <= {"$schema"}:
            config.unlink()
        else:
            installer._save(config, data)
        changed.append(config)
    for each in (host, *(HOSTS[name] for name in host.companions)):
        if not any(our_server(root, rel) for rel in each.reads):
            removed = plugins.remove(root, each.plugin)
            if removed is not None:
                changed.append(removed)
    plugins.remove_launcher_if_unused(root, changed)
    return changed


def notes(root: Path, host: PluginHost = OPENCODE) -> list[str]:
    """What `orch install opencode` (or kilo) tells the user."""
    pure = "opencode --pure" if host is OPENCODE else "kilo --pure"
    said = [
        f"{host.agent} loads {host.plugin} from the project as it is (no trust step): commit it with "
        f"{installer.LAUNCHER} and {host.config_file}.",
        f"  Never run `{pure}` (or with {' / '.join(host.ungoverned_env)} set): {host.agent} then loads no project "
        "plugin, so nothing is governed.",
    ]
    said.append("The agent selects its intent with the MCP tool orchestrator_select_active_intent. `orch doctor` runs "
                "the launcher the plugin calls and checks the plugin and the MCP server.")
    return said


def probe_event(root: Path) -> dict[str, Any]:
    """A ``write`` to a governance file, which orchestrator must refuse (``orch doctor``'s probe)."""
    from orchestrator.engine.pipeline import PROBE_SESSION

    return {"hook_event_name": "tool.execute.before", "tool": "write", "sessionID": PROBE_SESSION,
            "callID": "doctor-probe", "cwd": str(root), "args": {"filePath": plugins.probe_target(root),
                                                                 "content": "probe"}}


def check_opencode(ws: Any, env: Mapping[str, str] | None = None) -> Iterable[Any]:
    """``orch doctor``: is orchestrator's plugin in place, this version's, answered by the launcher, with its MCP
    server, and will opencode load it?"""
    return check_host(ws, OPENCODE, env)


def check_host(ws: Any, host: PluginHost, env: Mapping[str, str] | None = None) -> Iterable[Any]:
    """``orch doctor`` for one opencode-like ``host`` (see :func:`check_opencode`)."""
    from orchestrator.core.findings import Finding

    env = os.environ if env is None else env
    root = Path(ws.root)
    label = f"{host.agent}.plugin"
    naming = [rel for rel in host.reads if our_server(root, rel) is not None]
    if not (root / host.plugin).exists():
        if naming:
            yield Finding(label, "fail", f"{', '.join(naming)} names orchestrator's MCP server but {host.plugin} is "
                          f"missing: {host.agent} would run here UNGOVERNED (it reads {naming[0]}; nothing checks "
                          "its tool calls)", f"orch install {host.agent}")
        return
    yield plugins.check_file(root, host.plugin, plugin_text(host), label, host.agent)
    for name in plugins.env_set(env, host.ungoverned_env):
        yield Finding(label, "fail", f"{name} is set in this environment: {host.agent} loads no project plugin, so "
                      "its tool calls are not governed", f"unset {name}")
    yield from plugins.probe(root, host.agent, probe_event(root))
    yield from _check_mcp(root, host, naming)
    from orchestrator.adapters.hostcli import version_finding

    yield version_finding(f"{host.agent}.version", host.label, host.binary, host.verified, env)


def _check_mcp(root: Path, host: PluginHost, naming: list[str]) -> Iterable[Any]:
    from orchestrator.adapters import checks
    from orchestrator.core.findings import Finding

    label = f"{host.agent}.mcp"
    if not naming:
        yield Finding(label, "warn", f"no `orchestrator` MCP server in {host.config_file}: the agent cannot select "
                      "an intent", f"orch install {host.agent}")
        return
    server = our_server(root, naming[0]) or {}
    ok, said = checks.probe_mcp({"command": server["command"][0], "args": server["command"][1:],
                                 "env": server.get("environment") or {}}, root)
    if ok:
        yield Finding(label, "ok", f"the orchestrator MCP server in {naming[0]} starts and answers ({said})")
    else:
        yield Finding(label, "fail", f"the orchestrator MCP server in {naming[0]} does not start: {said}: the agent "
                      "cannot select an intent", f"orch install {host.agent}")
