"""``orch install opencode`` / ``orch uninstall opencode`` and the ``orch doctor`` check of the opencode install.

opencode (verified with 1.18.33, tests/e2e/test_opencode.py) runs no hook commands; it loads every
``.opencode/plugin/*.js`` of the project. Install writes:

- ``.opencode/plugin/orchestrator.js`` (:data:`~orchestrator.adapters.managed.OPENCODE_PLUGIN`), the template
  ``orchestrator/data/templates/opencode-plugin.js``: it names no machine path and reaches orchestrator through the
  daemon socket or the committed launcher (:data:`~orchestrator.adapters.installer.LAUNCHER`, written too), and
  throws — blocks the call — when neither answers;
- the ``orchestrator`` MCP server in the ``mcp`` section of ``opencode.json`` (opencode reads no ``.mcp.json``):
  ``{"type": "local", "command": ["sh", "-c", "<launcher> mcp", "orchestrator"], "environment":
  {"ORCH_MCP_HOOKED": "1"}}`` — the plugin records the selection per session.

No trust step: opencode loads project plugins as they are. What keeps them from running: ``opencode --pure`` (or
``OPENCODE_PURE``: "run without external plugins"), ``OPENCODE_DISABLE_PROJECT_CONFIG``, and a plugin that fails to
load (opencode logs it and goes on without it): the doctor check names the first two and compares the plugin
with this version's template.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any, Iterable, Mapping

from orchestrator.adapters import installer
from orchestrator.adapters.managed import OPENCODE_PLUGIN, SERVER

AGENT = "opencode"
CONFIG_FILE = "opencode.json"
SCHEMA = "https://opencode.ai/config.json"
#: the line that marks the plugin as orchestrator's (its first line names it)
PLUGIN_MARK = "orch:managed"
#: environment variables with which opencode loads no project plugin (so nothing is governed)
UNGOVERNED_ENV = ("OPENCODE_PURE", "OPENCODE_DISABLE_PROJECT_CONFIG")


def plugin_text() -> str:
    """The plugin as this version writes it (``orchestrator/data/templates/opencode-plugin.js``)."""
    from importlib import resources

    return resources.files("orchestrator.data").joinpath("templates").joinpath(
        "opencode-plugin.js").read_text(encoding="utf-8")


def mcp_entry() -> dict[str, Any]:
    """The ``orchestrator`` server for opencode.json's ``mcp`` section: the portable launcher, no machine path."""
    shared = installer.mcp_server_entry(AGENT, scope="shared")
    return {"type": "local", "command": [shared["command"], *shared["args"]],
            "environment": {"ORCH_MCP_HOOKED": "1"}, "enabled": True}


def _is_our_server(entry: Any) -> bool:
    return isinstance(entry, dict) and isinstance(entry.get("command"), list) and \
        installer.LAUNCHER in " ".join(map(str, entry["command"]))


def _is_our_plugin(path: Path) -> bool:
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            return PLUGIN_MARK in fh.readline()
    except OSError:
        return False


def install(root: str | os.PathLike[str], *, python: str | None = None, mcp: bool = True,
            scope: str = "shared") -> list[Path]:
    """Write the plugin, the launcher and (``mcp``) the MCP server; returns the files written."""
    if scope != "shared":
        from orchestrator.core.errors import UsageError

        raise UsageError("opencode has no machine-local settings file; install it with --scope shared",
                         hint=f"the plugin {OPENCODE_PLUGIN} names only the committed launcher {installer.LAUNCHER}")
    from orchestrator.core.fsutil import atomic_write

    root = Path(root)
    written = installer.write_launcher(root, python=python)
    path = root / OPENCODE_PLUGIN
    text = plugin_text()
    try:
        same = path.read_text(encoding="utf-8") == text
    except (OSError, UnicodeDecodeError):
        same = False
    if not same:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, text.encode("utf-8"))
        path.chmod(0o644)  # a committed source file, readable like the others
        written.append(path)
    if mcp:
        config = root / CONFIG_FILE
        data = installer._load(config)
        if not data:
            data = {"$schema": SCHEMA}
        servers = data.get("mcp")
        if not isinstance(servers, dict):
            servers = data["mcp"] = {}
        servers[SERVER] = mcp_entry()
        if installer._save(config, data):
            written.append(config)
    return written


def uninstall(root: str | os.PathLike[str]) -> list[Path]:
    """Remove what :func:`install` added (our plugin, our MCP server; the launcher when no agent names it)."""
    root = Path(root)
    changed: list[Path] = []
    path = root / OPENCODE_PLUGIN
    if path.exists() and _is_our_plugin(path):
        path.unlink()
        changed.append(path)
        for folder in (path.parent, path.parent.parent):  # .opencode/plugin, .opencode: only when left empty
            if folder != root and folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
    config = root / CONFIG_FILE
    if config.exists():
        data = installer._load(config)
        servers = data.get("mcp")
        if isinstance(servers, dict) and _is_our_server(servers.get(SERVER)):
            del servers[SERVER]
            if not servers:
                del data["mcp"]
            if set(data) <= {"$schema"}:
                config.unlink()
            else:
                installer._save(config, data)
            changed.append(config)
    launcher = root / installer.LAUNCHER
    if changed and launcher.exists() and not installer._launcher_in_use(root):
        launcher.unlink()
        if not any(launcher.parent.iterdir()):
            launcher.parent.rmdir()
        changed.append(launcher)
    return changed


def notes(root: Path) -> list[str]:
    """What `orch install opencode` tells the user."""
    return [
        f"opencode loads {OPENCODE_PLUGIN} from the project as it is (no trust step): commit it with "
        f"{installer.LAUNCHER} and {CONFIG_FILE}.",
        "  Never run `opencode --pure` (or with OPENCODE_PURE / OPENCODE_DISABLE_PROJECT_CONFIG set): opencode then "
        "loads no project plugin, so nothing is governed.",
        "The agent selects its intent with the MCP tool orchestrator_select_active_intent. `orch doctor` runs the "
        "launcher the plugin calls and checks the plugin and the MCP server.",
    ]


def probe_event(root: Path) -> dict[str, Any]:
    """A ``write`` to a governance file, which orchestrator must refuse (``orch doctor``'s probe)."""
    from orchestrator.engine.pipeline import PROBE_SESSION

    return {"hook_event_name": "tool.execute.before", "tool": "write", "sessionID": PROBE_SESSION,
            "callID": "doctor-probe", "cwd": str(root),
            "args": {"filePath": str(root / ".orchestration" / "doctor-probe.txt"), "content": "probe"}}


def check_opencode(ws: Any, env: Mapping[str, str] | None = None) -> Iterable[Any]:
    """``orch doctor``: is orchestrator's plugin in place, this version's, answered by the launcher, with its MCP
    server, and will opencode load it?"""
    from orchestrator.adapters import checks
    from orchestrator.core.findings import Finding

    env = os.environ if env is None else env
    root = Path(ws.root)
    path = root / OPENCODE_PLUGIN
    data = installer._load(root / CONFIG_FILE) if (root / CONFIG_FILE).exists() else {}
    server = (data.get("mcp") or {}).get(SERVER) if isinstance(data.get("mcp"), dict) else None
    if not path.exists():
        if _is_our_server(server):
            yield Finding("opencode.plugin", "fail", f"{CONFIG_FILE} names orchestrator's MCP server but "
                          f"{OPENCODE_PLUGIN} is missing: opencode's tool calls are not governed",
                          "orch install opencode")
        return
    if path.read_text(encoding="utf-8", errors="replace") != plugin_text():
        yield Finding("opencode.plugin", "warn", f"{OPENCODE_PLUGIN} differs from this orchestrator version's "
                      "(an older install, or edited by hand): it may not govern every call", "orch install opencode")
    else:
        yield Finding("opencode.plugin", "ok", f"{OPENCODE_PLUGIN} is this version's")
    for name in UNGOVERNED_ENV:
        if env.get(name, "").lower() not in ("", "0", "false"):
            yield Finding("opencode.plugin", "fail", f"{name} is set in this environment: opencode loads no "
                          "project plugin, so its tool calls are not governed", f"unset {name}")
    yield from _probe(root, checks, Finding)
    if isinstance(server, dict) and _is_our_server(server):
        ok, said = checks.probe_mcp({"command": server["command"][0], "args": server["command"][1:],
                                     "env": server.get("environment") or {}}, root)
        if ok:
            yield Finding("opencode.mcp", "ok", f"the orchestrator MCP server in {CONFIG_FILE} starts and answers "
                          f"({said})")
        else:
            yield Finding("opencode.mcp", "fail", f"the orchestrator MCP server in {CONFIG_FILE} does not start: "
                          f"{said}: the agent cannot select an intent", "orch install opencode")
    else:
        yield Finding("opencode.mcp", "warn", f"no `orchestrator` MCP server in {CONFIG_FILE}: the agent cannot "
                      "select an intent", "orch install opencode")


def _probe(root: Path, checks: Any, finding: Any) -> Iterable[Any]:
    """Run the launcher as the plugin does when no daemon answers, with a probe it must refuse."""
    command = f'"{root}/{installer.LAUNCHER}" {AGENT}'
    try:
        proc = checks.run_hook_command(command, AGENT, root, event=probe_event(root))
    except (OSError, subprocess.TimeoutExpired) as exc:
        yield finding("opencode.hook", "fail", f"the launcher the plugin calls did not answer ({exc})",
                      "orch install opencode; then orch doctor")
        return
    ok, said = checks.judge_probe(proc)
    if ok:
        yield finding("opencode.hook", "ok", "the launcher the plugin calls runs and refused the probe")
    else:
        yield finding("opencode.hook", "fail", f"the launcher the plugin calls does not govern calls: {said}",
                      checks._fix_for(said, AGENT))
