"""orchestrator's own processes import nothing a sandboxed command could plant in the workspace (redteam2).

``python -m orchestrator serve`` (started by the hook client with the workspace as its working directory) and
``python -m orchestrator mcp`` (started by a host in the project) would otherwise have the workspace first on
``sys.path``; a ``PYTHONPATH`` naming a workspace directory would do the same for the hook client's in-process
evaluation and the daemon it starts. (The sandbox keeps the hook's own ``.venv`` unwritable:
tests/sandbox/test_guard.py.)
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from orchestrator import hookclient



def test_python_m_orchestrator_does_not_import_from_its_working_directory(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    marker = tmp_path / "PWNED"
    for name in ("json", "platform", "typing"):  # packages a project may well have at its top level
        (ws / name).mkdir(parents=True)
        (ws / name / "__init__.py").write_text(f"open({str(marker)!r}, 'w').write({name!r})\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSAFEPATH"}
    proc = subprocess.run([sys.executable, "-m", "orchestrator", "--version"], cwd=ws, env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists(), marker.read_text()


def test_the_hook_client_drops_workspace_entries_from_its_path(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    elsewhere = str(tmp_path / "lib")
    entries = [str(ws / "src"), elsewhere, str(ws), hookclient._package_parent(), sys.prefix]
    assert hookclient.outside(str(ws), entries) == [elsewhere, hookclient._package_parent(), sys.prefix]
    assert hookclient.outside(None, entries) == entries


def test_python_m_orchestrator_ignores_a_pythonpath_inside_its_working_directory(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    marker = tmp_path / "PWNED"
    (ws / "src").mkdir(parents=True)
    for name in ("json", "typing", "argparse"):  # what the CLI imports on its way to --version
        (ws / "src" / f"{name}.py").write_text(f"open({str(marker)!r}, 'w').write({name!r})\n")
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONSAFEPATH"}, "PYTHONPATH": "src"}
    proc = subprocess.run([sys.executable, "-m", "orchestrator", "--version"], cwd=ws, env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists(), marker.read_text()
