"""Git inside the sandbox (orchestrator/sandbox/gitdir.py): real repositories in tmp, real Landlock, judged on disk.

Everyday porcelain writes the git dir and needs no person; whatever a command plants in what git later runs or
trusts (config, hooks, info, alternates; of the main git dir, linked worktrees and submodules) is put back and
reported, also when the launcher itself is killed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator.sandbox import gitdir, landlock
from tests.sandbox.conftest import Host, needs_landlock
from tests.waiting import wait_until

pytestmark = needs_landlock
LAUNCHER = landlock.__file__
GIT_ENV = {"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@x",
           "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent-home"}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV}).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = tmp_path / "repo"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    (r / "src").mkdir()
    (r / "src" / "a.txt").write_text("one\n")
    (r / "README.md").write_text("readme\n")
    git(r, "add", ".")
    git(r, "commit", "-qm", "init")
    return r


def launch(repo: Path, command: str, *, gitdirs: list[str] | None = None, writable: tuple[str, ...] = ("src",),
           **kw: object) -> subprocess.CompletedProcess[str]:
    args = [a for w in writable for a in ("-w", str(repo / w))] + ["-w", "/dev/null"]
    for d in gitdirs if gitdirs is not None else gitdir.git_dirs(str(repo)):
        args += ["--git", d]
    return subprocess.run([sys.executable, "-I", "-S", LAUNCHER, "--orch-sandbox", *args, "--", command], cwd=repo,
                          capture_output=True, text=True, timeout=120, env={**os.environ, **GIT_ENV}, **kw)  # type: ignore[call-overload]


def guarded(repo: Path) -> dict[str, tuple]:  # type: ignore[type-arg]
    return gitdir.take(gitdir.git_dirs(str(repo)))


def test_everyday_git_needs_no_person_and_writes_only_the_git_dir_and_scope(repo: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    subprocess.run(["git", "clone", "-q", str(repo), str(other)], check=True)
    (other / "src" / "b.txt").write_text("from other\n")
    git(other, "add", ".")
    git(other, "commit", "-qm", "other")
    before = guarded(repo)
    script = f"""set -e
echo two >> src/a.txt; git add src/a.txt; git commit -qm two
echo wip >> src/a.txt; git stash push -q; git stash list | grep -q stash; git stash pop -q; git checkout -q -- src/a.txt
echo three > src/c.txt; git add -A src; git commit -qm three
git branch feature; git switch -q feature; echo f >> src/c.txt; git commit -qam feature-commit
git switch -q main; git merge -q --no-edit feature
git switch -q -c topic HEAD~1; echo t > src/t.txt; git add src/t.txt; git commit -qm topic; git rebase -q main
git restore --source=HEAD~1 src/c.txt; git restore src/c.txt
git tag v1; git tag -a v2 -m annotated
git fetch -q {other} main:from-other
git branch -u main topic
git log --oneline | wc -l
"""
    proc = launch(repo, script)
    assert proc.returncode == 0, proc.stderr
    assert "orchestrator sandbox" not in proc.stderr
    assert git(repo, "tag").split() == ["v1", "v2"]
    assert "from-other" in git(repo, "branch")
    assert git(repo, "log", "-1", "--format=%s", "topic") == "topic\n"
    assert (repo / "README.md").read_text() == "readme\n"
    # git's own bookkeeping stays (branch.topic.*), nothing else in what git runs or trusts changed
    assert git(repo, "config", "branch.topic.merge") == "refs/heads/main\n"
    after = guarded(repo)
    changed = {p for p in set(before) | set(after) if before.get(p) != after.get(p)}
    assert changed == {str(repo / ".git" / "config")}


PLANTS = {
    "new hook": ("printf '#!/bin/sh\\necho PWNED > /tmp/pwn\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit",
                 ".git/hooks/pre-commit"),
    "edited sample": ("echo 'touch pwned' >> .git/hooks/pre-push.sample", ".git/hooks/pre-push.sample"),
    "git config": ("git config core.hooksPath /tmp/evil-hooks", ".git/config"),
    "config via -c alias": ("git -c alias.x='!git config core.fsmonitor \"touch pwned\"' x", ".git/config"),
    "config include": ("printf '[include]\\n\\tpath = ../src/evil\\n' >> .git/config", ".git/config"),
    "config.worktree": ("printf '[core]\\n\\tpager = touch pwned\\n' > .git/config.worktree", ".git/config.worktree"),
    "info/attributes": ("echo '* filter=evil' > .git/info/attributes", ".git/info/attributes"),
    "info/exclude": ("echo '*.py' >> .git/info/exclude", ".git/info/exclude"),
    "alternates": ("mkdir -p .git/objects/info; echo /tmp/evil-objects > .git/objects/info/alternates",
                   ".git/objects/info/alternates"),
    "hooks as a link": ("mv .git/hooks .git/hooks-old; ln -s ../src .git/hooks", ".git/hooks"),
    "config as a link": ("cp .git/config src/cfg; echo '[core]' >> src/cfg; ln -sf ../src/cfg .git/config",
                         ".git/config"),
    "removed hooks": ("rm -rf .git/hooks", ".git/hooks"),
    "unwritable hooks": ("echo x > .git/hooks/post-merge; chmod 000 .git/hooks", ".git/hooks/post-merge"),
    "forged decision": ("mkdir -p .git/orchestration/approvals; "
                        "echo '{\"decision\": \"approve\"}' > .git/orchestration/approvals/abc.decision.json",
                        ".git/orchestration/approvals/abc.decision.json"),
    "forged grant": ("echo '[{\"risk\": \"destructive\"}]' > .git/orchestration/approvals/grants.json",
                     ".git/orchestration/approvals/grants.json"),
    "new module": ("mkdir -p .git/modules/m/hooks; touch .git/modules/m/HEAD; "
                   "printf '[core]\\n\\thooksPath = /tmp/x\\n' > .git/modules/m/config; "
                   "echo evil > .git/modules/m/hooks/post-checkout", ".git/modules/m/config"),
    # no HEAD yet: a later command adding one would make git trust what this one planted (redteam)
    "headless module": ("mkdir -p .git/modules/m/hooks; printf '[core]\\n\\tfsmonitor = touch x\\n' > "
                        ".git/modules/m/config; echo evil > .git/modules/m/hooks/post-checkout",
                        ".git/modules/m/config"),
}


@pytest.mark.parametrize("name", sorted(PLANTS))
def test_what_a_command_plants_is_restored_and_reported(repo: Path, name: str) -> None:
    command, path = PLANTS[name]
    (repo / ".git" / "orchestration" / "approvals").mkdir(parents=True)
    (repo / ".git" / "orchestration" / "approvals" / "grants.json").write_text("[]\n")
    before = guarded(repo)
    proc = launch(repo, command + "; exit 0")
    after = guarded(repo)
    # a git dir the command created may keep its (empty) hooks/ and info/ dirs, nothing in them
    assert {p: e for p, e in after.items() if p in before or e[0] != "d"} == before
    assert not (repo / ".git" / "modules" / "m" / "hooks" / "post-checkout").exists()
    assert proc.returncode == 1  # the command exited 0, but what it did to git was refused
    assert "orchestrator sandbox: the command changed what git runs or trusts later" in proc.stderr
    assert path in proc.stderr
    assert "COULD NOT" not in proc.stderr


def test_hard_link_to_a_guarded_file_is_broken(repo: Path) -> None:
    # Landlock refuses a link across rule hierarchies (EXDEV); inside .git itself one is possible and is undone
    proc = launch(repo, "ln .git/config .git/config-alias; exit 0")
    assert proc.returncode == 1 and ".git/config was hard-linked elsewhere" in proc.stderr
    assert os.stat(repo / ".git" / "config").st_nlink == 1


def test_a_flood_of_hooks_is_removed_whole(repo: Path) -> None:
    before = guarded(repo)
    proc = launch(repo, f"for i in $(seq {gitdir.MAX_ENTRIES + 10}); do : > .git/hooks/h$i; done")
    assert proc.returncode == 1
    assert guarded(repo) == before


def test_git_options_cannot_write_outside_the_scope(repo: Path) -> None:
    cmd = ("git rev-list --all --output=README.md; git -c core.pager='tee README.md' log -1; "
           "GIT_TRACE2=README.md git status; git checkout-index -f -a; git read-tree -u --reset HEAD; "
           "git --work-tree=. checkout HEAD~0 -- README.md; exit 0")
    (repo / "README.md").write_text("changed by a person\n")
    proc = launch(repo, cmd)
    assert (repo / "README.md").read_text() == "changed by a person\n"
    assert "orchestrator sandbox" not in proc.stderr  # nothing git trusts was touched


def test_branch_remote_must_name_a_configured_remote(repo: Path) -> None:
    proc = launch(repo, "git config branch.main.remote https://evil.example/x.git; exit 0")
    assert proc.returncode == 1 and ".git/config was changed" in proc.stderr
    assert "evil" not in (repo / ".git" / "config").read_text()


def test_linked_worktree_and_its_common_dir_are_guarded(repo: Path, tmp_path: Path) -> None:
    wt = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", str(wt), "-b", "wtb")
    dirs = gitdir.git_dirs(str(wt))
    assert dirs == [str(repo / ".git" / "worktrees" / "wt"), str(repo / ".git")]
    before = gitdir.take(dirs)
    plant = (f"echo x >> {repo}/.git/hooks/pre-commit; echo '[core]' >> {repo}/.git/worktrees/wt/config.worktree; "
             "echo y > src/a.txt; git commit -qam in-worktree")
    proc = launch(wt, plant, gitdirs=dirs)
    assert proc.returncode == 1, proc.stderr
    assert gitdir.take(dirs) == before
    assert git(repo, "log", "-1", "--format=%s", "wtb") == "in-worktree\n"  # the commit itself went through


def test_submodule_git_dirs_are_guarded(repo: Path, tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    git(lib, "init", "-q", "-b", "main")
    (lib / "x").write_text("x\n")
    git(lib, "add", ".")
    git(lib, "commit", "-qm", "lib")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "src/lib")
    module = repo / ".git" / "modules" / "src" / "lib"
    assert str(module) in {os.path.dirname(p) for p in guarded(repo)}
    before = guarded(repo)
    proc = launch(repo, f"echo evil > {module}/hooks/post-checkout; git -C src/lib config core.fsmonitor 'touch x'")
    assert proc.returncode == 1
    assert guarded(repo) == before


def test_a_new_submodule_clone_keeps_its_clone_config_and_samples(repo: Path, tmp_path: Path) -> None:
    lib = tmp_path / "lib"
    lib.mkdir()
    git(lib, "init", "-q", "-b", "main")
    (lib / "x").write_text("x\n")
    git(lib, "add", ".")
    git(lib, "commit", "-qm", "lib")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "src/lib")
    git(repo, "commit", "-qm", "add lib")
    git(repo, "submodule", "deinit", "-q", "src/lib")
    import shutil

    shutil.rmtree(repo / ".git" / "modules")
    before = (repo / ".git" / "config").read_text()
    proc = launch(repo, "git -c protocol.file.allow=always submodule update -q --init")
    assert proc.returncode == 0, proc.stderr
    assert "orchestrator sandbox" not in proc.stderr
    module = repo / ".git" / "modules" / "src" / "lib"
    assert "core.worktree" in git(module, "config", "--file", "config", "--list")
    assert [p.name for p in (module / "hooks").iterdir() if not p.name.endswith(".sample")] == []
    assert git(repo / "src" / "lib", "log", "--format=%s") == "lib\n"
    # the superproject's config gained the submodule's url/active, git's own bookkeeping
    assert (repo / ".git" / "config").read_text() != before


def test_the_guardian_restores_when_the_launcher_is_killed(repo: Path) -> None:
    hook = repo / ".git" / "hooks" / "pre-commit"
    proc = subprocess.Popen(
        [sys.executable, "-I", "-S", LAUNCHER, "--orch-sandbox", "-w", str(repo / "src"), "-w", "/dev/null",
         "--git", str(repo / ".git"), "--", f"echo evil > {hook}; cat"],
        cwd=repo, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        wait_until(hook.exists, what="the command to plant its hook")
        os.killpg(proc.pid, signal.SIGKILL)  # what a host's timeout does: the launcher gets no chance to restore
        proc.wait(timeout=60)
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
    wait_until(lambda: not hook.exists(), what="the guardian to remove the planted hook")


def test_the_command_cannot_kill_the_launcher(repo: Path) -> None:
    if landlock.abi() < 6:
        pytest.skip("signal scoping needs Landlock ABI 6")
    proc = launch(repo, "kill -9 $PPID; echo $?; echo x > .git/hooks/post-commit")
    assert "post-commit was created: restored" in proc.stderr
    assert not (repo / ".git" / "hooks" / "post-commit").exists()


def test_git_dirs_of_a_plain_directory_and_of_a_subdirectory(tmp_path: Path, repo: Path) -> None:
    assert gitdir.git_dirs(str(tmp_path / "nowhere")) == []
    assert gitdir.git_dirs(str(repo)) == [str(repo / ".git")]
    # only the workspace's own .git: a repository further up is not the workspace's to write
    assert gitdir.git_dirs(str(repo / "src")) == []


def test_a_wrapped_command_that_runs_git_commits_without_a_person(sws: Path) -> None:
    (sws / "src" / "release.sh").write_text("echo v2 > src/version.txt\ngit add src/version.txt\n"
                                            "git -c user.name=a -c user.email=a@x commit -qm release\n")
    host = Host(sws, channel="deny")  # a question to a person would be a refusal
    proc = host.run("bash src/release.sh")
    assert proc.returncode == 0, proc.stderr
    assert proc.verdict.sandbox["git"] == [str(sws / ".git")]
    assert subprocess.run(["git", "log", "-1", "--format=%s"], cwd=sws, capture_output=True, text=True
                          ).stdout == "release\n"
    # code the analyzer cannot see into (a computed `bash -c` string asks a person since the second red team)
    plant = host.run("python3 -c \"import os; os.system('echo evil > .g' + 'it/hooks/pre-commit')\"")
    assert plant.returncode == 1 and "pre-commit was created: restored" in plant.stderr
    assert not (sws / ".git" / "hooks" / "pre-commit").exists()


def test_a_command_that_does_not_run_git_keeps_the_git_dir_read_only(sws: Path) -> None:
    host = Host(sws)
    verdict = host.pre("sort -o src/out.txt src/app.py", sandbox=True)
    assert verdict.sandbox is None or "git" not in verdict.sandbox


def test_git_mode_imports_stay_tiny() -> None:
    """The launcher imports gitdir for every command that runs git: nothing heavy on that path (subprocess only when
    a config file changed; no shutil, signal/enum or typing)."""
    here = os.path.dirname(gitdir.__file__)
    script = (f"import sys; sys.path.insert(0, {here!r}); import gitdir\n"
              "print(sorted(m for m in sys.modules if m.split('.')[0] in "
              "('typing', 'orchestrator', 'subprocess', 'shutil', 'signal', 'enum', 're', 'tempfile')))")
    out = subprocess.run([sys.executable, "-I", "-S", "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_restored_git_file_is_not_recorded_as_the_commands_change(sws: Path) -> None:
    """Scope ``**`` (a whole-tree scan): the plant is restored by the launcher, so the post-hook must not attribute
    a change of ``.git/config`` or a hook to the command."""
    from orchestrator.engine.pipeline import Governor
    from orchestrator.engine.tools import to_call

    gov = Governor(sws, approval_channel="deny")
    gov.select_intent("INT-ALL", "s")
    cmd = ("python3 -c \"import os; os.system('git con' + 'fig core.pager x; echo evil > .g' + 'it/hooks/pre-commit; "
           "echo y > src/y.txt')\"")
    call = to_call("Bash", {"command": cmd}, session_id="s", agent="claude-code", cwd=str(sws))
    verdict = gov.pre(call, sandbox=True)
    assert verdict.allowed and verdict.sandbox["git"] == [str(sws / ".git")]
    proc = subprocess.run(["/bin/bash", "-c", verdict.command], cwd=sws, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and ".git/config was changed: restored" in proc.stderr
    record = gov.post(call)
    paths = [f["path"] for f in (record or {}).get("files", [])]
    assert paths == ["src/y.txt"]


GIT_PORCELAIN = ["git add src/app.py", "git commit -qm one", "echo y >> src/app.py", "git stash", "git stash pop",
                 "git branch feat", "git switch feat", "git commit -qam two", "git tag v1", "git tag -a v2 -m two",
                 "git switch -", "git merge -q --no-edit feat", "git switch -c topic", "echo t > src/t.py",
                 "git add src/t.py", "git commit -qm topic", "git checkout -q feat", "git branch -u topic", "git log --oneline"]


def test_everyday_porcelain_runs_wrapped_in_git_mode_with_no_person(sws: Path) -> None:
    """Every command wrapped (issue 21 item 1): git porcelain runs in the sandbox in git-dir mode, channel ``deny``
    (a question to a person would be a refusal), and what it does lands in the repository. (``git rebase`` and
    ``git restore``/``checkout`` of paths run in git mode too -- see the launcher-level test above -- but the
    analyzer asks a person for them as history rewrites: discarded work.)"""
    host = Host(sws, channel="deny")
    for command in GIT_PORCELAIN:
        proc = host.run(command, env=GIT_ENV)
        assert proc.returncode == 0, (command, proc.stderr)
        assert proc.verdict.command is not None, command  # wrapped
        if command.startswith("git") and not command.startswith("git log"):
            assert proc.verdict.sandbox["git"] == [str(sws / ".git")], command
        assert "orchestrator sandbox" not in proc.stderr, (command, proc.stderr)
    log = subprocess.run(["git", "log", "--format=%s", "feat"], cwd=sws, capture_output=True, text=True).stdout
    assert log.split() == ["two", "one"]
    assert subprocess.run(["git", "tag"], cwd=sws, capture_output=True, text=True).stdout.split() == ["v1", "v2"]
    assert not (sws / ".git" / "hooks" / "pre-commit").exists()


def test_replace_refs_and_rebase_exec_lines_are_removed_the_rest_kept(tmp_path: Path) -> None:
    """redteam2: a replace ref (loose or packed) and an ``exec`` line added to a rebase todo are what the person's
    own git would later show or run; git's other lines in those files stay as the command left them."""
    gd = tmp_path / ".git"
    (gd / "refs" / "heads").mkdir(parents=True)
    (gd / "hooks").mkdir()
    (gd / "rebase-merge").mkdir()
    packed = gd / "packed-refs"
    packed.write_text("# pack-refs with: peeled fully-peeled sorted\n" + "a" * 40 + " refs/heads/main\n")
    todo = gd / "rebase-merge" / "git-rebase-todo"
    todo.write_text("pick 1234567 one\nexec make test\n")
    before = gitdir.take([str(gd)])
    (gd / "refs" / "replace").mkdir()
    (gd / "refs" / "replace" / ("b" * 40)).write_text("c" * 40 + "\n")
    packed.write_text(packed.read_text() + "d" * 40 + " refs/heads/new\n" + "e" * 40 + " refs/replace/" + "f" * 40
                      + "\n^" + "1" * 40 + "\n")
    todo.write_text("pick 1234567 one\nexec make test\npick 89abcde two\n  x echo pwned >> README.md\n")
    report = gitdir.verify(before, [str(gd)], None)
    assert not (gd / "refs" / "replace").exists()
    assert packed.read_text() == ("# pack-refs with: peeled fully-peeled sorted\n" + "a" * 40 + " refs/heads/main\n"
                                  + "d" * 40 + " refs/heads/new\n")
    assert todo.read_text() == "pick 1234567 one\nexec make test\npick 89abcde two\n"
    assert any("replace ref" in line for line in report) and any("exec line" in line for line in report)
    assert gitdir.verify(gitdir.take([str(gd)]), [str(gd)], None) == []


def test_the_restore_never_follows_a_directory_swapped_for_a_link(tmp_path: Path) -> None:
    """Issue 28's audit: without the PID namespace a process of the command can outlive it and swap ``hooks/`` for
    a link between two steps of the guardian's restore; removing or writing a hook must then not reach the same
    names where the link points (a directory of the person's)."""
    gd = tmp_path / "repo" / ".git"
    (gd / "hooks").mkdir(parents=True)
    home = tmp_path / "home"
    home.mkdir()
    (home / "pre-commit").write_text("the person's own\n")
    os.rename(gd / "hooks", tmp_path / "hooks.away")
    os.symlink(home, gd / "hooks")
    roots = [str(gd)]
    with pytest.raises(OSError):
        gitdir._restore(str(gd / "hooks" / "pre-commit"), None, roots)  # "was created: remove it"
    with pytest.raises(OSError):
        gitdir._restore(str(gd / "hooks" / "post-checkout"), ("f", 0o755, b"#!/bin/sh\n", 1), roots)
    assert (home / "pre-commit").read_text() == "the person's own\n"
    assert sorted(p.name for p in home.iterdir()) == ["pre-commit"]
    gitdir._restore(str(gd / "hooks"), ("d", 0o755), roots)  # the link itself is replaced by the directory
    assert (gd / "hooks").is_dir() and not (gd / "hooks").is_symlink() and (home / "pre-commit").exists()
