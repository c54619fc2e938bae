"""``orch install cline`` / ``orch uninstall cline`` and the ``orch doctor`` check of the Cline install.

Cline (verified with 3.0.65, tests/e2e/test_cline.py) loads every ``.cline/plugins/*.js`` of the project (and
``~/.cline/plugins/``) in a plugin subprocess, with no trust step. Install writes:

- ``.cline/plugins/orchestrator.js`` (:data:`~orchestrator.adapters.managed.CLINE_PLUGIN`), the template
  ``orchestrator/data/templates/cline-plugin.js``: it names no machine path, reaches orchestrator through the daemon
  socket or the committed launcher (written too) and skips — refuses — a call when neither answers in time;
- the ``orchestrator`` MCP server in the **user's** ``cline_mcp_settings.json`` (``$CLINE_MCP_SETTINGS_PATH``, else
  ``$CLINE_DATA_DIR/settings/``, else ``~/.cline/data/settings/``): Cline reads no project MCP file (not
  ``.mcp.json``, not ``.cline/``). One entry serves every repository: it runs the launcher of the repository Cline
  works in and **starts only where that repository has orchestrator's Cline plugin** — elsewhere it exits with a
  message, so no repository gets orchestrator's handshake without the guard that enforces it. Its ``timeout``
  (seconds) is set: Cline's default 3 s initialize budget can drop a server that starts cold, and
  ``propose_intent`` waits inside the MCP call for a person (a plugin hook has 3 s).

Uninstall removes the plugin (and the launcher when no agent names it); the user-level MCP entry stays (other
repositories may use it; here it no longer starts).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable, Mapping

from orchestrator.adapters import installer, plugins
from orchestrator.adapters.managed import CLINE_PLUGIN, SERVER

AGENT = "cline"
LABEL = "Cline"
#: the version tests/e2e/test_cline.py runs (tests/e2e/package.json)
VERIFIED = "3.0.65"
#: seconds Cline gives the MCP server (initialize and each request): ``propose_intent`` waits there for a person (up
#: to the policy's approval timeout, 300 s by default; the plugin's 3 s cannot), so a generous bound
MCP_TIMEOUT_S = 600
MCP_FILE = "cline_mcp_settings.json"


def plugin_text() -> str:
    """The plugin as this version writes it (``orchestrator/data/templates/cline-plugin.js``)."""
    return plugins.render("cline-plugin.js", AGENT)


def mcp_settings_path(env: Mapping[str, str] | None = None) -> Path:
    """Where Cline reads its MCP servers (as Cline 3.0.65 resolves it)."""
    env = os.environ if env is None else env
    if env.get("CLINE_MCP_SETTINGS_PATH", "").strip():
        return Path(env["CLINE_MCP_SETTINGS_PATH"].strip())
    if env.get("CLINE_DATA_DIR", "").strip():
        return Path(env["CLINE_DATA_DIR"].strip()) / "settings" / MCP_FILE
    base = Path(env["CLINE_DIR"].strip()) if env.get("CLINE_DIR", "").strip() else \
        Path(env.get("HOME") or os.path.expanduser("~")) / ".cline"
    return base / "data" / "settings" / MCP_FILE


def mcp_entry() -> dict[str, Any]:
    """The user-level ``orchestrator`` server: the launcher of the repository Cline works in, started only where that
    repository has orchestrator's Cline plugin (no machine path: it holds for every clone)."""
    script = (f'root=$(git rev-parse --show-toplevel 2>/dev/null || pwd); '
              f'if [ -f "$root/{CLINE_PLUGIN}" ]; then exec "$root/{installer.LAUNCHER}" mcp; fi; '
              f'echo "orchestrator: $root is not governed for Cline (no {CLINE_PLUGIN}): its MCP server does not '
              f'start here; run orch install cline there" >&2; exit 1')
    return {"command": "sh", "args": ["-c", script, SERVER], "env": {"ORCH_MCP_HOOKED": "1"},
            "timeout": MCP_TIMEOUT_S, "disabled": False}


def _is_our_server(entry: Any) -> bool:
    return isinstance(entry, dict) and installer.LAUNCHER in " ".join(map(str, entry.get("args") or [])) and \
        CLINE_PLUGIN in " ".join(map(str, entry.get("args") or []))


def install_mcp(env: Mapping[str, str] | None = None) -> Path | None:
    """Register (or refresh) the user-level MCP server; returns the file when it changed."""
    return installer.save_mcp_server(mcp_settings_path(env), mcp_entry())


def install(root: str | os.PathLike[str], *, python: str | None = None, mcp: bool = True,
            scope: str = "shared") -> list[Path]:
    """Write the plugin, the launcher and (``mcp``) the user-level MCP server; returns the files written."""
    if scope != "shared":
        from orchestrator.core.errors import UsageError

        raise UsageError("cline has no machine-local settings file; install it with --scope shared",
                         hint=f"the plugin {CLINE_PLUGIN} names only the committed launcher {installer.LAUNCHER}")
    root = Path(root)
    written = installer.write_launcher(root, python=python)
    plugin = plugins.write(root, CLINE_PLUGIN, plugin_text())
    if plugin is not None:
        written.append(plugin)
    if mcp:
        changed = install_mcp()
        if changed is not None:
            written.append(changed)
    return written


def uninstall(root: str | os.PathLike[str]) -> list[Path]:
    """Remove the plugin (and the launcher when no agent names it); the user-level MCP entry stays."""
    root = Path(root)
    removed = plugins.remove(root, CLINE_PLUGIN)
    changed = [removed] if removed is not None else []
    plugins.remove_launcher_if_unused(root, changed)
    return changed


def notes(root: Path) -> list[str]:
    """What ``orch install cline`` tells the user."""
    return [
        f"Cline loads {CLINE_PLUGIN} from the project as it is (no trust step): commit it with {installer.LAUNCHER}.",
        f"The MCP server is registered for your user in {mcp_settings_path()} (Cline reads no project MCP file); it "
        "starts only in repositories installed for Cline.",
        "Cline gives a plugin 3 s per call: a call orchestrator cannot answer in 2.5 s (a person deciding in "
        "`orch tui`) is refused with the reason and can be retried. The agent selects its intent with "
        "orchestrator__select_active_intent. `orch doctor` runs the launcher the plugin calls and checks the MCP "
        "server.",
    ]


def probe_event(root: Path) -> dict[str, Any]:
    """An ``editor`` write to a governance file, which orchestrator must refuse (``orch doctor``'s probe)."""
    from orchestrator.engine.pipeline import PROBE_SESSION

    return {"hook_event_name": "beforeTool", "tool": "editor", "toolCallId": "doctor-probe",
            "sessionID": PROBE_SESSION, "agentId": "doctor", "cwd": str(root),
            "input": {"path": plugins.probe_target(root), "new_text": "probe"}}


def check_cline(ws: Any, env: Mapping[str, str] | None = None) -> Iterable[Any]:
    """``orch doctor``: is orchestrator's Cline plugin in place, this version's, answered by the launcher, and does
    Cline see the MCP server?"""
    from orchestrator.adapters import checks
    from orchestrator.adapters.hostcli import version_finding
    from orchestrator.core.findings import Finding

    env = os.environ if env is None else env
    root = Path(ws.root)
    path = root / CLINE_PLUGIN
    if not path.exists():
        return
    yield plugins.check_file(root, CLINE_PLUGIN, plugin_text(), "cline.plugin", AGENT)
    yield from plugins.probe(root, AGENT, probe_event(root))
    settings = mcp_settings_path(env)
    data = checks._load(settings) or {}
    server = (data.get("mcpServers") or {}).get(SERVER) if isinstance(data.get("mcpServers"), dict) else None
    if not isinstance(server, dict) or not _is_our_server(server):
        yield Finding("cline.mcp", "warn", f"no orchestrator MCP server in {settings} (Cline reads MCP servers from "
                      "there only): the agent cannot select an intent, so every mutation is refused",
                      "orch install cline")
    elif server.get("disabled") is True:
        yield Finding("cline.mcp", "warn", f"the orchestrator MCP server is disabled in {settings}",
                      f"set \"disabled\": false for {SERVER} in {settings}, or orch install cline")
    else:
        ok, said = checks.probe_mcp(server, root)
        yield Finding("cline.mcp", "ok" if ok else "fail", f"the orchestrator MCP server in {settings} "
                      + (f"starts here and answers ({said})" if ok else f"does not start here: {said}"),
                      "" if ok else "orch install cline; see docs/troubleshooting.md")
    yield from _failopen(env, Finding)
    yield version_finding("cline.version", LABEL, "cline", VERIFIED, env)


#: Cline runs a session WITHOUT its plugins when the plugin host does not start within this many ms (its default,
#: ``CLINE_PLUGIN_IMPORT_TIMEOUT_MS``); orchestrator asks for at least the second figure
PLUGIN_IMPORT_DEFAULT_MS = 4000
PLUGIN_IMPORT_MIN_MS = 30000


def _failopen(env: Mapping[str, str], finding: Any) -> Iterable[Any]:
    """``cline.failopen``: what makes Cline run without orchestrator's plugin, and what is done about it."""
    raw = env.get("CLINE_PLUGIN_IMPORT_TIMEOUT_MS", "")
    try:
        import_ms = int(raw) if raw.strip() else PLUGIN_IMPORT_DEFAULT_MS
    except ValueError:
        import_ms = PLUGIN_IMPORT_DEFAULT_MS
    if import_ms < PLUGIN_IMPORT_MIN_MS:
        yield finding("cline.failopen", "warn", f"Cline runs a session WITHOUT its plugins (nothing governed, a line "
                      f"in its log) when the plugin host does not start within {import_ms} ms, which a loaded machine "
                      "reaches", f"export CLINE_PLUGIN_IMPORT_TIMEOUT_MS={PLUGIN_IMPORT_MIN_MS} wherever cline runs")
    else:
        yield finding("cline.failopen", "ok", f"the plugin host may take {import_ms} ms to start "
                      "(CLINE_PLUGIN_IMPORT_TIMEOUT_MS); a throw or a hook over 3 s fails Cline's run, and "
                      "orchestrator's plugin never throws and refuses a call it has no answer for in 2.5 s")
