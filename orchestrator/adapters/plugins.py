"""What the installers of plugin-governed agents share (Cline's ``.cline/plugins/``; opencode's and its forks' plugins
work the same way): writing orchestrator's plugin file, removing it, and ``orch doctor``'s probe of the launcher it
calls.

A plugin file is committed source that names no machine path: it reaches orchestrator over the daemon socket or
through the committed launcher (:data:`orchestrator.adapters.installer.LAUNCHER`), and its first line carries
``orch:managed`` so that uninstall removes only ours.
"""
from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path
from typing import Any, Iterable

#: the mark on a plugin's first line
PLUGIN_MARK = "orch:managed"


def template(name: str) -> str:
    """A plugin template of ``orchestrator/data/templates/``."""
    from importlib import resources

    return resources.files("orchestrator.data").joinpath("templates").joinpath(name).read_text(encoding="utf-8")


def is_ours(path: Path) -> bool:
    """Whether the file at ``path`` is a plugin orchestrator wrote (its first line)."""
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            return PLUGIN_MARK in fh.readline()
    except OSError:
        return False


def write(root: Path, rel: str, text: str) -> Path | None:
    """Write the plugin ``rel`` under ``root`` (readable, like the project's other sources); the path when it
    changed, None when it already said exactly that."""
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


def remove(root: Path, rel: str, *, depth: int = 2) -> list[Path]:
    """Remove our plugin ``rel`` (and up to ``depth`` folders it leaves empty), then the launcher when no agent names
    it any more; returns what was removed."""
    from orchestrator.adapters import installer

    path = root / rel
    if not (path.exists() and is_ours(path)):
        return []
    path.unlink()
    changed = [path]
    folder = path.parent
    for _ in range(depth):
        if folder == root or not folder.is_dir() or any(folder.iterdir()):
            break
        folder.rmdir()
        folder = folder.parent
    launcher = root / installer.LAUNCHER
    if launcher.exists() and not installer._launcher_in_use(root):
        launcher.unlink()
        if not any(launcher.parent.iterdir()):
            launcher.parent.rmdir()
        changed.append(launcher)
    return changed


def probe(root: Path, agent: str, event: dict[str, Any], refused: str) -> Iterable[Any]:
    """``<agent>.hook``: run the launcher as the plugin does when no daemon answers, with ``event`` (a write to a
    governance file), and check that the answer refuses it (``refused``: text the agent's refusal contains)."""
    from orchestrator.adapters import checks
    from orchestrator.core.findings import Finding

    command = f"{shlex.quote(str(root / os.path.normpath(checks.installer.LAUNCHER)))} {agent}"
    try:
        proc = checks.run_hook_command(command, agent, root, event=event)
    except (OSError, subprocess.TimeoutExpired) as exc:
        yield Finding(f"{agent}.hook", "fail", f"the launcher the plugin calls did not answer ({exc})",
                      f"orch install {agent}; then orch doctor")
        return
    ok, said = checks.judge_probe(proc)
    if ok and refused in proc.stdout + proc.stderr:
        yield Finding(f"{agent}.hook", "ok", "the launcher the plugin calls runs and refused the probe")
    else:
        yield Finding(f"{agent}.hook", "fail", f"the launcher the plugin calls does not govern calls: {said}",
                      checks._fix_for(said, agent))


__all__ = ["PLUGIN_MARK", "is_ours", "probe", "remove", "template", "write"]
