"""Where git subcommands write (orchestrator/shell/rules/git_writes.py), .git/config and hooks as governance files
(selfguard + orchestrator/vcs/hooks.py), and the held-out escape corpus run through the real pipeline in a real
git repository: nothing changes on disk outside the intent's scope."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest

from orchestrator.vcs import hooks as githooks
from orchestrator.engine.pipeline import Governor
from orchestrator.pre import selfguard
from orchestrator.shell import analyze
from orchestrator.engine.tools import to_call
from tests.conftest import make_workspace

DATA = Path(__file__).resolve().parents[2] / "data"
CORPUS = [json.loads(line) for line in (DATA / "shell_write_escapes.jsonl").read_text(encoding="utf-8").splitlines()
          if line.strip()]
GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "GIT_CONFIG_NOSYSTEM": "1"}


# ------------------------------------------------------------------------------------------------ the analyzer

@pytest.mark.parametrize("cmd,writes", [
    ("git config alias.x '!sh'", [".git/config"]),
    ("git config --local user.name x", [".git/config"]),
    ("git config --worktree core.pager x", [".git/config.worktree"]),
    ("git config --global core.pager x", ["~/.gitconfig"]),
    ("git config --system core.pager x", ["/etc/gitconfig"]),
    ("git config --file=src/x.cfg a.b c", ["src/x.cfg"]),
    ("git config set alias.x y", [".git/config"]),
    ("git config --unset-all alias.x", [".git/config"]),
    ("git --git-dir=../o.git config a.b c", ["../o.git/config"]),
    ("git -C src config a.b c", ["src/.git/config"]),
    ("cd src && git config a.b c", ["src/.git/config"]),
    ("git remote add evil /tmp/e", [".git/config"]),
    ("git remote rename a b", [".git/config"]),
    ("git submodule add https://h/lib.git vendor/lib", [".git/config", ".gitmodules", "vendor/lib"]),
    ("git submodule init", [".git/config"]),
    ("git init", [".git"]),
    ("git init ../x", ["../x/.git"]),
    ("git init --bare ../x.git", ["../x.git"]),
    ("git init --separate-git-dir ../sep src/r", ["src/r/.git", "../sep"]),
    ("git clone . ../x", ["../x"]),
    ("git clone https://host/org/proj.git", ["proj"]),
    ("git clone --bare https://host/org/proj.git/", ["proj.git"]),
    ("git clone -b main --depth 1 https://host/a/b c", ["c"]),
    ("git worktree add ../wt", ["../wt"]),
    ("git worktree add -b topic ../wt main", ["../wt"]),
    ("git worktree move wt ../wt2", ["../wt2"]),
    ("git bundle create ../all.bundle --all", ["../all.bundle"]),
    ("git archive -o ../x.tar HEAD", ["../x.tar"]),
    ("git archive --output=../x.zip HEAD", ["../x.zip"]),
    ("git format-patch -o ../p HEAD~2", ["../p"]),
    ("git format-patch HEAD~2", ["."]),
    ("git diff --output=../d.patch", ["../d.patch"]),
    ("git log -p --output ../l.txt", ["../l.txt"]),
    ("git bugreport -o ../r", ["../r"]),
    ("git checkout-index -a --prefix=../exp/", ["../exp"]),
    ("git merge-file src/a.py base.py other.py", ["src/a.py"]),
    ("git fast-export --export-marks=../m --all", ["../m"]),
    ("git maintenance register", ["~/.gitconfig"]),
    ("git --work-tree=../o checkout main -- .", ["../o"]),
    ("git --git-dir=../o.git commit -m x", ["../o.git"]),
    ("git -C .. init x", ["../x/.git"]),
    ("git -C /tmp clone /r y", ["/tmp/y"]),
])
def test_git_write_targets(cmd: str, writes: list[str]) -> None:
    res = analyze(cmd)
    assert res.kind != "read_only", res
    for w in writes:
        assert w in res.writes, res


@pytest.mark.parametrize("cmd,deletes", [
    ("git -C .. rm -rf other", ["../other"]),
    ("git worktree remove ../wt", ["../wt"]),
    ("git worktree move wt ../wt2", ["wt"]),
])
def test_git_delete_targets(cmd: str, deletes: list[str]) -> None:
    res = analyze(cmd)
    for d in deletes:
        assert d in res.deletes, res


@pytest.mark.parametrize("cmd", [
    "git config alias.st '!sh -c x'", "git config core.pager 'less; touch X'", "git config core.hooksPath h",
    "git config core.sshCommand x", "git config filter.x.smudge x", "git config diff.x.textconv x",
    "git config include.path ../x", "git config credential.helper '!x'", "git config remote.o.uploadpack x",
    "git config core.fsmonitor x", "git config --global alias.x '!x'", "git config something.new x",
    "git config $KEY x", "git config -e", "git -c alias.x='!sh' x", "git -c core.hooksPath=h commit -m x",
    "git clone -u x . y", "git clone --template=t . y", "git clone -c core.hooksPath=h . y",
    "git init --template=t y", "git archive --remote=. --exec=x HEAD",
])
def test_configuration_that_runs_code_is_tagged_hijack(cmd: str) -> None:
    assert "hijack" in analyze(cmd).risks, analyze(cmd)


@pytest.mark.parametrize("cmd", [
    "git config user.name 'A B'", "git config --file src/x.cfg alias.x y", "git config color.ui auto",
])
def test_harmless_configuration_is_not_hijack(cmd: str) -> None:
    res = analyze(cmd)
    assert "hijack" not in res.risks and res.writes, res


@pytest.mark.parametrize("cmd", [
    "git config --get user.name", "git config user.name", "git config --list", "git config list",
    "git config get user.name", "git config --get-regexp alias", "git config --blob HEAD:x --get a.b",
    "git remote -v", "git remote show origin", "git -C src status", "git -C .. log --oneline", "git archive HEAD",
    "git diff", "git log -p", "git format-patch --stdout HEAD~1", "git --git-dir=.git log",
])
def test_git_reads_stay_read_only(cmd: str) -> None:
    res = analyze(cmd)
    assert res.kind == "read_only", res


@pytest.mark.parametrize("cmd", [
    "git clone -u 'x' . y", "GIT_DIR=../o git commit -m x", "GIT_WORK_TREE=../o git checkout -f",
    "git -C $D clone x y" if False else "git config -e", "git clone ext::sh\\ -c\\ x y",
])
def test_git_commands_that_run_code_or_move_the_repository_are_unknown(cmd: str) -> None:
    assert analyze(cmd).kind == "unknown", analyze(cmd)


def test_dynamic_minus_c_makes_targets_unresolved() -> None:
    res = analyze("git -C $D init x")
    assert res.unresolved


def test_git_push_set_upstream_is_not_a_config_write() -> None:
    # branch.<name>.remote/merge hold no command; refusing `git push -u` would fail everyday work
    assert ".git/config" not in analyze("git push -u origin main").writes
    assert ".git/config" not in analyze("git branch -u origin/main").writes


# ----------------------------------------------------------------------------------------------- selfguard

@pytest.mark.parametrize("path,pattern", [
    (".git/config", ".git/**"), (".git/hooks/pre-commit", ".git/**"), ("src/.git/config", "**/.git/config"),
    ("vendor/x/.git/config.worktree", "**/.git/config"), ("a/b/.git/hooks/x", "**/.git/hooks/**"),
    ("a/.git/hooks", "**/.git/hooks/**"),
])
def test_git_config_and_hooks_are_governance_at_any_depth(path: str, pattern: str) -> None:
    assert selfguard.protected_by(path) == pattern


@pytest.mark.parametrize("path", ["src/.git", "src/fixture/.git/HEAD", "src/.gitignore", "src/git/config",
                                  "src/.github/workflows/x"])
def test_nested_repository_internals_other_than_config_and_hooks_are_not(path: str) -> None:
    assert selfguard.protected_by(path) is None


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env={**os.environ, **GIT_ENV})


def test_hooks_path_from_the_repository_config(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "repo", git=True)
    assert githooks.hook_dirs(str(root)) == ()
    _git(root, "config", "core.hooksPath", ".githooks")
    assert githooks.hook_dirs(str(root)) == (".githooks",)
    # a change of the config file is seen at once (stat-keyed cache)
    _git(root, "config", "core.hooksPath", "tools/hooks")
    assert githooks.hook_dirs(str(root)) == ("tools/hooks",)
    # through an include; absolute; outside the workspace is not reported (it cannot be written anyway)
    (root / "extra.cfg").write_text('[core]\n\thooksPath = "./.husky/_" ; comment\n', encoding="utf-8")
    _git(root, "config", "include.path", "../extra.cfg")
    assert set(githooks.hook_dirs(str(root))) == {"tools/hooks", ".husky/_"}
    _git(root, "config", "core.hooksPath", str(tmp_path / "elsewhere"))
    assert githooks.hook_dirs(str(root)) == (".husky/_",)


def test_hooks_path_of_a_linked_worktree(tmp_path: Path) -> None:
    main = make_workspace(tmp_path / "main", git=True)
    _git(main, "add", "-A")
    _git(main, "commit", "-qm", "init")
    _git(main, "worktree", "add", "-q", str(tmp_path / "wt"))
    _git(main, "config", "core.hooksPath", "hooks-dir")
    assert githooks.hook_dirs(str(tmp_path / "wt")) == ("hooks-dir",)


def test_selfguard_refuses_writes_into_the_hooks_path(tmp_path: Path) -> None:
    root = make_workspace(tmp_path / "repo", intents=_ALL_SCOPE, git=True)
    _git(root, "config", "core.hooksPath", ".githooks")
    gov = Governor(root, approval_channel="deny")
    gov.select_intent("INT-001", "s")
    for tool, inp in (("Write", {"file_path": str(root / ".githooks/pre-commit"), "content": "x"}),
                      ("Bash", {"command": "cp src/app.py .githooks/pre-push"}),
                      ("Write", {"file_path": str(root / "src/.git/hooks/x"), "content": "x"})):
        v = gov.pre(to_call(tool, inp, session_id="s", cwd=str(root)))
        assert v.decision == "deny" and v.error["type"] == "governance-file", v
    ok = gov.pre(to_call("Write", {"file_path": str(root / "src/x.py"), "content": "x"}, session_id="s",
                         cwd=str(root)))
    assert ok.allowed


def test_a_hooks_path_at_the_root_covers_only_hook_names(tmp_path: Path) -> None:
    assert selfguard.hooks_pattern("pre-commit", (".",))
    assert selfguard.hooks_pattern("src/app.py", (".",)) is None
    assert selfguard.hooks_pattern("h/x", ("h",)) and selfguard.hooks_pattern("h", ("h",))
    assert selfguard.hooks_pattern("hx/y", ("h",)) is None


_ALL_SCOPE = """\
active_intents:
  - id: INT-001
    name: Everything
    status: IN_PROGRESS
    owned_scope: ["**"]
"""


# ------------------------------------------------------------------- the held-out corpus, through the pipeline

def _tree(top: Path, skip: Path) -> dict[str, str]:
    """Every entry under ``top`` (not under ``skip``) -> a digest of its type and content."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(top):
        d = Path(dirpath)
        if d == skip or skip in d.parents:
            dirnames[:] = []
            continue
        for name in dirnames + filenames:
            p = d / name
            rel = p.relative_to(top).as_posix()
            if p.is_symlink():
                out[rel] = "link:" + os.readlink(p)
            elif p.is_file():
                out[rel] = hashlib.sha256(p.read_bytes()).hexdigest() + oct(p.stat().st_mode)
            elif p.is_dir():
                out[rel] = "dir"
    return out


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("escapes") / "outer"
    root = make_workspace(base / "repo", git=True)
    (root / "docs" / "guide.md").write_text("# guide\n", encoding="utf-8")
    (base / "sentinel.txt").write_text("outside\n", encoding="utf-8")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "init")
    return base


@pytest.mark.parametrize("row", CORPUS, ids=lambda r: r["command"][:60])
def test_escape_corpus_changes_nothing_outside_the_scope(row: dict, template: Path, tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    subprocess.run(["cp", "-a", str(template), str(outer)], check=True)
    root = outer / "repo"
    if row.get("setup") == "hooks_path":
        (root / ".githooks").mkdir()
        (root / ".githooks" / "pre-commit").write_text("#!/bin/sh\n", encoding="utf-8")
        _git(root, "config", "core.hooksPath", ".githooks")
    home = tmp_path / "home"
    home.mkdir()
    gov = Governor(root, approval_channel="deny")
    gov.select_intent("INT-001", "s")
    intent = gov.intents().get("INT-001")
    before = _tree(outer, root / ".orchestration")
    call = to_call("Bash", {"command": row["command"]}, session_id="s", cwd=str(root))
    verdict = gov.pre(call)
    if row["outcome"] == "deny":
        assert verdict.decision == "deny", verdict
        types = row["type"] if isinstance(row["type"], list) else [row["type"]]
        assert verdict.error["type"] in types, verdict
    else:
        assert verdict.allowed, verdict
    if verdict.allowed:  # run it for real, as the agent would, and trace it
        env = {**os.environ, **GIT_ENV, "HOME": str(home)}
        done = subprocess.run(["bash", "-c", row["command"]], cwd=root, env=env, capture_output=True, timeout=60)
        assert done.returncode == 0, done.stderr
        gov.post(to_call("Bash", {"command": row["command"]}, session_id="s", cwd=str(root)))
    after = _tree(outer, root / ".orchestration")
    changed = {p for p in set(before) | set(after) if before.get(p) != after.get(p)}
    outside = sorted(p for p in changed if not (p.startswith("repo/") and intent.owns(p[len("repo/"):])))
    # git itself may refresh its own bookkeeping (index, logs) on a read; config and hooks must never change
    # (.git/orchestration/: orchestrator's own state shared by the worktrees, e.g. the write leases)
    outside = [p for p in outside if not p.startswith(("repo/.git/index", "repo/.git/logs/", "repo/.git/objects/",
                                                       "repo/.git/orchestration"))]
    assert outside == [], outside
    assert not list(home.iterdir()), "nothing may be written to the home directory"


def test_doctor_asks_for_the_hooks_path_in_intentignore(tmp_path: Path) -> None:
    from orchestrator.commands.doctor import run_checks
    from orchestrator.config.workspace import Workspace

    root = make_workspace(tmp_path / "repo", git=True)
    ws = Workspace.at(root)
    [f] = run_checks(ws, ["orchestrator.config.intentignore:check_hooks_path"])
    assert f.status == "ok"
    _git(root, "config", "core.hooksPath", ".githooks")
    [f] = run_checks(ws, ["orchestrator.config.intentignore:check_hooks_path"])
    assert f.status == "warn" and ".githooks/" in f.fix
    with open(ws.intentignore_path, "a", encoding="utf-8") as fh:
        fh.write("\n.githooks/\n")
    [f] = run_checks(ws, ["orchestrator.config.intentignore:check_hooks_path"])
    assert f.status == "ok", f
