"""A ``core.hooksPath`` directory inside the workspace is never granted by the scope plan (red team
``RT-hookspath``): with scope ``**`` a script could otherwise plant a hook that the person's own git runs later."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.sandbox import scope_grants
from orchestrator.sandbox.guard import protected_in
from tests.sandbox import corpus, escapes
from tests.sandbox.conftest import needs_landlock

PLANT = "python3 -c \"open('.git'+'hooks/pre-commit','a').write('echo pwned\\n')\""


def _git_repo(root: Path, hooks_path: str) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(["git", "-C", str(root), "config", "core.hooksPath", hooks_path], check=True)


def test_hooks_path_dirs_are_not_granted(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / ".githooks").mkdir(parents=True)
    (root / "tools" / "hooks").mkdir(parents=True)
    (root / "tools" / "gen.py").write_text("x\n")
    (root / "src").mkdir()
    _git_repo(root, "tools/hooks")
    real = os.path.realpath(root)
    grants, _ = scope_grants(real, ["**"])
    assert f"{real}/src" in grants and f"{real}/tools/gen.py" in grants
    assert f"{real}/tools" not in grants and f"{real}/tools/hooks" not in grants  # split child by child
    check = protected_in(real)
    assert check("tools/hooks/pre-commit") == "core.hooksPath" and check("tools/gen.py") is None
    subprocess.run(["git", "-C", str(root), "config", "core.hooksPath", ".githooks"], check=True)
    assert f"{real}/.githooks" not in scope_grants(real, ["**"])[0]


@pytest.fixture()
def repo() -> Iterator[tuple[Path, Path]]:
    base = corpus.new_base()
    try:
        ws = corpus.fresh(base, escapes.make_template(base))
        yield base, ws
    finally:
        shutil.rmtree(base, ignore_errors=True)


@needs_landlock
def test_a_script_cannot_plant_a_hook_in_core_hooks_path(repo: tuple[Path, Path]) -> None:
    from orchestrator.pipeline import Governor
    from orchestrator.tools import to_call

    base, ws = repo
    env = corpus.env_for(base)
    subprocess.run(["git", "config", "core.hooksPath", ".githooks"], cwd=ws, check=True, env=env)
    hook = ws / ".githooks" / "pre-commit"
    hook.parent.mkdir()
    hook.write_text("#!/bin/sh\nexit 0\n")
    intents = ws / ".orchestration" / "active_intents.yaml"
    intents.write_text(intents.read_text().replace(str(corpus.SCOPE).replace("'", '"'), '["**"]'))
    assert '["**"]' in intents.read_text()
    gov = Governor(ws, approval_channel="deny")
    gov.select_intent("INT-1", "s")
    call = to_call("Bash", {"command": PLANT}, session_id="s", agent="claude-code", cwd=str(ws))
    verdict = gov.pre(call, sandbox=True)
    assert verdict.allowed and verdict.command  # runs, wrapped: the kernel is what refuses the write
    proc = subprocess.run(["/bin/bash", "-c", verdict.command], cwd=ws, env=env, capture_output=True, text=True)
    gov.post(call)
    assert "Permission denied" in proc.stderr
    assert hook.read_text() == "#!/bin/sh\nexit 0\n"
