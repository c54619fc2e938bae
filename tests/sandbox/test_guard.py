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
    from orchestrator.engine.pipeline import Governor
    from orchestrator.engine.tools import to_call

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


_OWN = """
import json, sys
from orchestrator.engine.pipeline import Governor
from orchestrator.sandbox import scope_grants
from orchestrator.sandbox.guard import own_python
from orchestrator.engine.tools import to_call
ws = sys.argv[1]
gov = Governor(ws, approval_channel="deny")
gov.select_intent("INT-1", "s")
verdict = gov.pre(to_call("Bash", {"command": sys.argv[2]}, session_id="s", agent="claude-code", cwd=ws),
                  sandbox=True)
print(json.dumps({"own": own_python(ws), "grants": scope_grants(ws, ["**"])[0], "command": verdict.command}))
"""


@needs_landlock
@pytest.mark.parametrize("how", ["scope", "writable-entry"])
def test_the_hooks_own_python_inside_the_workspace_is_not_granted(repo: tuple[Path, Path], how: str) -> None:
    """orchestrator installed in the project's own ``.venv`` (redteam2 ``R2-own-python``): with scope ``**`` a
    script could drop a ``.pth`` into its site-packages, which the next hook call would run unsandboxed. Nor does
    ``sandbox.writable: [.venv]`` (a person letting ``pip install`` write the project's venv) grant it: the hook's
    own launcher (the Python one, and launcher.c the compiled one is built from) would be a command's to rewrite
    (issue 28, the launcher built where no command can reach)."""
    import json
    import sys
    import sysconfig

    base, ws = repo
    env = corpus.env_for(base)
    if how == "scope":
        intents = ws / ".orchestration" / "active_intents.yaml"
        intents.write_text(intents.read_text().replace(str(corpus.SCOPE).replace("'", '"'), '["**"]'))
    else:
        (ws / ".orchestration" / "policy.yaml").write_text("version: 1\nsandbox:\n  writable: ['{tmp}', .venv]\n")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(ws / ".venv")], check=True)
    py = ws / ".venv" / "bin" / "python"
    site = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               capture_output=True, text=True, check=True).stdout.strip())
    # this orchestrator and its dependencies, seen from the project's venv (as an install there would be)
    (site / "orch.pth").write_text(f"{Path(__file__).resolve().parents[2]}\n{sysconfig.get_path('purelib')}\n")
    plant = f"python3 -c \"open('{site}/zz.pth','w').write('import os')\" ; echo ok > src/fine.txt"
    out = json.loads(subprocess.run([str(py), "-c", _OWN, str(ws), plant], capture_output=True, text=True,
                                    check=True, env=env, cwd=ws).stdout)
    real = os.path.realpath(ws)
    assert ".venv" in out["own"]
    if how == "scope":
        assert not any(g == f"{real}/.venv" or g.startswith(f"{real}/.venv/") for g in out["grants"])
        assert f"{real}/src" in out["grants"]
    proc = subprocess.run(["/bin/bash", "-c", out["command"]], cwd=ws, env=env, capture_output=True, text=True)
    assert "Permission denied" in proc.stderr
    assert not (site / "zz.pth").exists() and (ws / "src" / "fine.txt").read_text() == "ok\n"


@needs_landlock
def test_a_worktree_inside_the_scope_keeps_its_launcher(repo: tuple[Path, Path]) -> None:
    """``git worktree add build/wt``: a command of the outer worktree (scope ``build/**``…) cannot rewrite the inner
    one's compiled launcher or specs in place — the inner worktree's next wrapped command would run the planted file
    outside any sandbox (found in review: the launcher is trusted by inode, the spec by name)."""
    from orchestrator import sandbox
    from orchestrator.engine.pipeline import Governor

    base, ws = repo
    env = corpus.env_for(base)
    subprocess.run(["git", "worktree", "add", "-q", "build/wt", "-b", "feat"], cwd=ws, env=env, check=True)
    inner = ws / "build" / "wt"

    def wrapped(root: Path, command: str) -> str:
        gov = Governor(root, approval_channel="deny")
        plan = sandbox.plan_for(str(root), gov.policy, "s", gov.workspace.run_dir, corpus.SCOPE)
        plan.prepare()
        return plan.wrap(command)

    wrapped(inner, "true")  # the inner worktree's launcher and a spec exist now
    run = inner / ".orchestration" / "run" / "sandbox"
    before = {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()}
    assert any(n.startswith("launcher-") for n in before) and any(n.endswith(".spec") for n in before)
    real = os.path.realpath(ws)
    grants = scope_grants(real, corpus.SCOPE)[0]
    assert f"{real}/build/wt" not in grants
    assert not any(g.startswith(f"{real}/build/wt/.orchestration") for g in grants)
    attack = ("for f in build/wt/.orchestration/run/sandbox/*; do printf 'planted' > \"$f\"; done; "
              "mkdir -p build/wt/.orchestration/run/x; echo x > build/wt/.orchestration/planted; "
              "echo ok > build/wt/README.md; echo ok > src/new.py")
    proc = subprocess.run(["/bin/bash", "-c", wrapped(ws, attack)], cwd=ws, env=env, capture_output=True, text=True)
    # Landlock refuses the inner .orchestration/; its run dir is not even in sight (hidden in the command's mount
    # namespace, sandbox/hidden.py)
    assert "planted: Permission denied" in proc.stderr, proc.stderr
    assert "sandbox/*: No such file or directory" in proc.stderr, proc.stderr
    assert {p.name: p.read_bytes() for p in run.iterdir() if p.is_file()} == before
    assert not (inner / ".orchestration" / "run" / "x").exists()
    assert not (inner / ".orchestration" / "planted").exists()
    # the rest of the scope stays writable (only the worktree's parents are granted child by child)
    assert (ws / "src" / "new.py").read_text() == "ok\n" and (inner / "README.md").read_text() == "ok\n"
