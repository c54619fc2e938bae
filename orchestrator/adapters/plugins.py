"""The plugin files orchestrator writes for hosts that run no hook commands (opencode, Kilo, pi).

Such a host loads a JavaScript module from the project; ours forwards each tool call to orchestrator over the
daemon's socket or through the committed launcher, and blocks the call when neither answers. The templates live in
``orchestrator/data/templates/``: a host's own part (``opencode-plugin.js`` — opencode's and Kilo's —,
``pi-extension.js``) and the wire client they share (``hook-wire.js``), spliced in where the host's part says
``// @orch-include hook-wire.js``, with ``@ORCH_AGENT@`` replaced by the agent name, so the file written is one
self-contained module (a host loads every ``.js`` of its plugin folder as a plugin: a helper module beside it would
be loaded as one too, and an import that fails makes the host skip the plugin, i.e. run ungoverned).

This module writes, recognises and removes such a file, and probes the launcher it calls (``orch doctor``).
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any, Iterable

from orchestrator.adapters import installer

#: the line that marks a plugin as orchestrator's (its first line names it)
PLUGIN_MARK = "orch:managed"
_INCLUDE = "// @orch-include "
_AGENT = "@ORCH_AGENT@"


def _template(name: str) -> str:
    from importlib import resources

    return resources.files("orchestrator.data").joinpath("templates").joinpath(name).read_text(encoding="utf-8")


def render(template: str, agent: str) -> str:
    """The plugin file as this version writes it for ``agent``: ``template`` with its includes spliced in."""
    lines = []
    for line in _template(template).splitlines(keepends=True):
        lines.append(_template(line[len(_INCLUDE):].strip()) if line.startswith(_INCLUDE) else line)
    return "".join(lines).replace(_AGENT, agent)


def is_ours(path: Path) -> bool:
    """Whether the file at ``path`` is a plugin orchestrator wrote (its first line carries the mark)."""
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            return PLUGIN_MARK in fh.readline()
    except OSError:
        return False


def write(root: Path, rel: str, text: str) -> Path | None:
    """Write the plugin ``root/rel`` (a committed source file, mode 0644) unless it already says ``text``; returns
    the path written, or None."""
    from orchestrator.core.fsutil import atomic_write

    path = root / rel
    try:
        if path.read_text(encoding="utf-8") == text:
            return None
    except (OSError, UnicodeDecodeError):
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text.encode("utf-8"))
    path.chmod(0o644)
    return path


def remove(root: Path, rel: str) -> Path | None:
    """Delete our plugin ``root/rel`` (never a file we did not write) and the folders it leaves empty below
    ``root``; returns the path removed, or None."""
    path = root / rel
    if not path.exists() or not is_ours(path):
        return None
    path.unlink()
    folder = path.parent
    while folder != root and root in folder.parents and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent
    return path


def remove_launcher_if_unused(root: Path, changed: list[Path]) -> None:
    """After an uninstall changed something: drop the launcher when no agent names it any more."""
    launcher = root / installer.LAUNCHER
    if changed and launcher.exists() and not installer._launcher_in_use(root):
        launcher.unlink()
        if not any(launcher.parent.iterdir()):
            launcher.parent.rmdir()
        changed.append(launcher)


def check_file(root: Path, rel: str, text: str, label: str, agent: str) -> Any:
    """``orch doctor``: the plugin is this version's (``ok``), or differs (``warn``)."""
    from orchestrator.core.findings import Finding

    if (root / rel).read_text(encoding="utf-8", errors="replace") != text:
        return Finding(label, "warn", f"{rel} differs from this orchestrator version's (an older install, or edited "
                       "by hand): it may not govern every call", f"orch install {agent}")
    return Finding(label, "ok", f"{rel} is this version's")


def probe(root: Path, agent: str, event: dict[str, Any]) -> Iterable[Any]:
    """Run the launcher as the plugin does when no daemon answers, with a probe event it must refuse."""
    from orchestrator.adapters import checks
    from orchestrator.core.findings import Finding

    label = f"{agent}.hook"
    try:
        proc = checks.run_hook_command(f'"{root}/{installer.LAUNCHER}" {agent}', agent, root, event=event)
    except (OSError, subprocess.TimeoutExpired) as exc:
        yield Finding(label, "fail", f"the launcher the plugin calls did not answer ({exc})",
                      f"orch install {agent}; then orch doctor")
        return
    ok, said = checks.judge_probe(proc)
    if ok:
        yield Finding(label, "ok", "the launcher the plugin calls runs and refused the probe")
    else:
        yield Finding(label, "fail", f"the launcher the plugin calls does not govern calls: {said}",
                      checks._fix_for(said, agent))


def env_set(env: Any, names: Iterable[str]) -> list[str]:
    """The variables of ``names`` set to something true in ``env`` (``""``, ``0`` and ``false`` are unset)."""
    return [name for name in names if str(env.get(name, "")).lower() not in ("", "0", "false")]


def probe_target(root: Path) -> str:
    """The file a doctor probe asks to write: a governance file, which orchestrator must refuse."""
    return os.path.join(str(root), ".orchestration", "doctor-probe.txt")
