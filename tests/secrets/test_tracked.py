"""orchestrator/secrets/tracked.py and the secrets pre-hook: git commands that print objects ask a person only where
the repository tracks a secret file (issue 21, remaining gaps), on real git repositories."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from orchestrator.secrets import patterns as secrets
from orchestrator.secrets import tracked as tracked_secrets
from orchestrator.engine.pipeline import Governor
from orchestrator.engine.tools import to_call
from tests.conftest import make_workspace

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@x", "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}


def _git(root: Path, *args: str) -> None:
    import os

    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env={**os.environ, **GIT_ENV})


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = make_workspace(tmp_path / "repo", git=True)
    _git(root, "add", "src")
    _git(root, "commit", "-qm", "init")
    tracked_secrets._MEMO.clear()
    return root


def _track_env(root: Path) -> None:
    (root / "config").mkdir()
    (root / "config" / ".env").write_text("TOKEN=x\n")
    _git(root, "add", "-f", "config/.env")
    _git(root, "commit", "-qm", "env")


def _pre(root: Path, command: str) -> tuple[str, dict]:
    gov = Governor(root, approval_channel="deny")
    gov.select_intent("INT-001", "s1")
    v = gov.pre(to_call("Bash", {"command": command}, session_id="s1", cwd=str(root)))
    return v.decision, v.error or {}


def _matcher() -> secrets.SecretMatcher:
    return secrets.matcher()


def test_no_tracked_secret_no_list(repo: Path) -> None:
    assert tracked_secrets.tracked(str(repo), _matcher()) == []


def test_a_tracked_secret_is_listed_from_the_index_and_head(repo: Path) -> None:
    _track_env(repo)
    assert tracked_secrets.tracked(str(repo), _matcher()) == ["config/.env"]
    # removed from the index but still in HEAD: `git show HEAD:config/.env` prints it, so it still counts
    _git(repo, "rm", "-q", "--cached", "config/.env")
    tracked_secrets._MEMO.clear()
    assert tracked_secrets.tracked(str(repo), _matcher()) == ["config/.env"]


def test_not_a_worktree_top_has_nothing_tracked(tmp_path: Path) -> None:
    assert tracked_secrets.tracked(str(tmp_path), _matcher()) == []


@pytest.mark.parametrize("command", ["git log -p -1", "git grep x HEAD", "git show HEAD", "git diff HEAD~1",
                                    "git format-patch -1 --stdout", "git cat-file --batch-all-objects --batch",
                                    "git stash show -p", "git fast-export HEAD", "git log -U3 --all"])
def test_object_printing_commands_ask_where_a_secret_is_tracked(repo: Path, command: str) -> None:
    _track_env(repo)
    decision, error = _pre(repo, command)
    assert (decision, error.get("type")) == ("deny", "approval-denied")  # channel deny: what a person would decide
    assert any("config/.env" in r and "tracks secret files" in r for r in error["reasons"]), error


@pytest.mark.parametrize("command", ["git log -p -1", "git grep x HEAD", "git show HEAD", "git diff", "git status",
                                     "git log --oneline", "git diff --stat"])
def test_nothing_asks_where_no_secret_is_tracked(repo: Path, command: str) -> None:
    assert _pre(repo, command)[0] == "allow"


@pytest.mark.parametrize("command", ["git status", "git log --oneline -3", "git diff --stat", "git show --stat HEAD",
                                     "git branch -a", "git log --name-only"])
def test_commands_that_print_no_object_content_do_not_ask_even_then(repo: Path, command: str) -> None:
    _track_env(repo)
    assert _pre(repo, command)[0] == "allow"


def test_the_approval_risk_class_is_secret_read(repo: Path) -> None:
    from orchestrator.approvals import risk_class

    _track_env(repo)
    gov = Governor(repo, approval_channel="deny")
    gov.select_intent("INT-001", "s1")
    call = to_call("Bash", {"command": "git log -p"}, session_id="s1", cwd=str(repo))
    gov.pre(call)
    assert risk_class(call) == "secret-read"


def test_the_memo_answers_without_git_until_the_index_or_head_changes(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tracked_secrets, "RACY_NS", 0)  # play a fine clock instead of waiting for a coarse one
    m = _matcher()
    assert tracked_secrets.tracked(str(repo), m) == []
    assert (repo / ".orchestration" / "run" / tracked_secrets.MEMO_NAME).is_file()
    tracked_secrets._MEMO.clear()  # a new hook process: only the memo file
    runs: list[list[str]] = []
    real = subprocess.run

    def counting(argv: list[str], *a: object, **k: object) -> object:
        runs.append(argv)
        return real(argv, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(tracked_secrets.subprocess, "run", counting)
    assert tracked_secrets.tracked(str(repo), m) == []
    assert runs == []
    _track_env(repo)  # a commit: index, ref and HEAD's tree change
    runs.clear()
    assert tracked_secrets.tracked(str(repo), m) == ["config/.env"]
    assert [a[3] for a in runs] == ["ls-files", "ls-tree"]


def test_a_racy_key_is_recomputed(repo: Path) -> None:
    # the index was written just now: within RACY_NS its stat key proves nothing, so git runs and nothing is stored
    m = _matcher()
    assert tracked_secrets.tracked(str(repo), m) == []
    assert not (repo / ".orchestration" / "run" / tracked_secrets.MEMO_NAME).exists()


def test_doctor_names_tracked_and_history_only_secrets(repo: Path) -> None:
    from orchestrator.pre.secrets import check_secrets
    from orchestrator.config.workspace import Workspace

    (repo / "old.pem").write_text("k")
    _git(repo, "add", "-f", "old.pem")
    _git(repo, "commit", "-qm", "key")
    _git(repo, "rm", "-q", "old.pem")
    _git(repo, "commit", "-qm", "gone")
    _track_env(repo)
    (finding,) = list(check_secrets(Workspace(repo)))
    assert finding.status == "warn"
    assert "tracked now: config/.env" in finding.message and "in the history only: old.pem" in finding.message
    assert "filter-repo" in finding.fix and "rotate" in finding.fix


def test_doctor_is_ok_without_committed_secrets(repo: Path) -> None:
    from orchestrator.pre.secrets import check_secrets
    from orchestrator.config.workspace import Workspace

    (finding,) = list(check_secrets(Workspace(repo)))
    assert finding.status == "ok"


def test_the_hooks_own_git_never_starts_core_fsmonitor(repo: Path, tmp_path: Path) -> None:
    """A git-mode sandboxed command can set ``core.fsmonitor`` in .git/config while it runs (the guardian restores it
    only afterwards); the hook's git runs (this list, the post-hook's status) are outside the sandbox and must not
    start it (git starts it whenever it loads the index)."""
    from orchestrator.post import changes

    _track_env(repo)
    marker = tmp_path / "fsmonitor-ran"
    _git(repo, "config", "core.fsmonitor", f"touch {marker}; echo")
    subprocess.run(["git", "ls-files"], cwd=repo, capture_output=True, check=False)
    assert marker.exists()  # the plant works on this git: it runs whatever loads the index
    marker.unlink()
    tracked_secrets._MEMO.clear()
    (repo / ".orchestration" / "run" / tracked_secrets.MEMO_NAME).unlink(missing_ok=True)
    assert tracked_secrets.tracked(str(repo), _matcher()) == ["config/.env"]
    assert changes._git_dirty(str(repo), frozenset(), changes.PRE_WAIT) is not None
    assert not marker.exists()
