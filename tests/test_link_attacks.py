"""Attacks through links: the hard-link rule (selfguard ``hard-linked-file``), the rule for writes through entries a
command makes itself (``orchestrator.engine.prepare._check_new_entries`` on canonical paths, fed by the shell analysis'
``entries`` / ``write_log``), and a long-lived Governor answering as a fresh one after links appear or vanish.

Passing tests document attacks that are handled; the bypasses and false alarms an adversarial round found (other
spellings of a path, trailing slashes, symlinks copied by ``cp -P/-d/-a``, ``mv`` of a fresh link, relinking twice,
replacing a hard-linked name) were fixed after it and are regression tests now. ``xfail(strict=True)``: a bind mount
that aliases a governance file — long-lived and fresh Governors agree, and making one needs privileges and a
person's approval (docs/security.md). Helpers: tests/freshness_support.py.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from orchestrator.config import confcache
from orchestrator.engine.pipeline import Governor
from orchestrator.engine.tools import to_call
from tests.freshness_support import assert_same, bind, compare, in_private_mount_namespace, warm, warm_governor, write

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux: hard links, mounts, /proc")

INTENTS = ".orchestration/active_intents.yaml"
POLICY = ".orchestration/policy.yaml"


# ---------------------------------------------------------------------------------------------------- helpers
def bash(command: str, session: str = "s1", cwd: str | None = None) -> Any:
    fields: dict[str, Any] = {"session_id": session}
    if cwd is not None:
        fields["cwd"] = cwd
    return to_call("Bash", {"command": command}, **fields)


def edit(path: str, old: str = "x", new: str = "y", session: str = "s1") -> Any:
    return to_call("Edit", {"file_path": path, "old_string": old, "new_string": new}, session_id=session)


def fresh(ws: Path, call: Any) -> Any:
    confcache.clear_memory()
    return Governor(ws, approval_channel="deny").pre(call)


@pytest.fixture
def kept(ws: Path) -> Governor:
    """A long-lived Governor whose memos are warm."""
    (ws / "src" / "a" / "b").mkdir(parents=True)
    return warm_governor(ws, "src/a/b/new.py")


@pytest.fixture
def gov(ws: Path) -> Governor:
    g = Governor(ws, approval_channel="deny")
    g.select_intent("INT-001", "s1")
    return g


def _run(ws: Path, command: str) -> None:
    subprocess.run(["bash", "-c", command], cwd=ws, check=True, capture_output=True)


# ================================================================ hard-link rule: handled (long-lived and fresh agree)
def test_hard_link_made_after_the_path_was_memoised(kept: Governor, ws: Path) -> None:
    target = ws / "src" / "a" / "b" / "x.yaml"
    target.write_text("a: 1\n")
    warm(kept, "src/a/b/x.yaml")
    os.link(target, ws / "docs" / "other.yaml")
    assert_same(kept, ws, lambda: write("src/a/b/x.yaml"))
    kept_, fresh_ = compare(kept, ws, lambda: write("src/a/b/x.yaml"))
    assert kept_[1] == "hard-linked-file"


def test_hard_link_removed_again_both_allow(kept: Governor, ws: Path) -> None:
    target = ws / "src" / "a" / "b" / "x.yaml"
    target.write_text("a: 1\n")
    os.link(target, ws / "docs" / "other.yaml")
    assert not kept.pre(write("src/a/b/x.yaml")).allowed
    os.unlink(ws / "docs" / "other.yaml")
    assert_same(kept, ws, lambda: write("src/a/b/x.yaml"), fresh_denies=False)
    assert kept.pre(write("src/a/b/x.yaml")).allowed


def assert_refused(ws: Path, command: str) -> None:
    """A fresh Governor refuses ``command``; if it did not, running it proves the harm (the intents rewritten)."""
    v = fresh(ws, bash(command))
    if v.allowed:
        _run(ws, command)
        assert (ws / INTENTS).read_text() == "active_intents: []\n"
    assert v.decision == "deny", v


@pytest.mark.parametrize("spelling", ["src/a/b/x.yaml", "./src/a/b/x.yaml", "src/a/../a/b/x.yaml",
                                      "{ws}/src/a/b/x.yaml", "src//a/b/x.yaml"])
def test_hard_linked_file_every_spelling(kept: Governor, ws: Path, spelling: str) -> None:
    os.link(ws / INTENTS, ws / "src" / "a" / "b" / "x.yaml")
    raw = spelling.format(ws=ws)
    assert_same(kept, ws, lambda: write(raw))


def test_edit_of_a_symlink_to_a_hard_linked_file(kept: Governor, ws: Path) -> None:
    os.link(ws / INTENTS, ws / "docs" / "hl.yaml")
    os.symlink("../../../docs/hl.yaml", ws / "src" / "a" / "b" / "cfg.yaml")
    kept_, fresh_ = compare(kept, ws, lambda: edit("src/a/b/cfg.yaml"))
    assert kept_ == fresh_ and fresh_[0] == "deny"  # scope (docs/ is not INT-001's) or hard-linked-file


def test_symlink_to_a_hard_linked_file_in_scope(kept: Governor, ws: Path) -> None:
    os.link(ws / INTENTS, ws / "src" / "hl.yaml")
    os.symlink("../../hl.yaml", ws / "src" / "a" / "b" / "cfg.yaml")
    kept_, fresh_ = compare(kept, ws, lambda: edit("src/a/b/cfg.yaml"))
    assert kept_ == fresh_ and fresh_[1] == "hard-linked-file"


def test_hard_link_made_by_a_previous_command_is_refused_next(gov: Governor, ws: Path) -> None:
    assert gov.pre(bash(f"ln {INTENTS} src/x.yaml")).allowed  # only adds a name in scope
    _run(ws, f"ln {INTENTS} src/x.yaml")
    for call in (write("src/x.yaml"), edit("./src/x.yaml"), bash("echo '#' >> ./src/x.yaml"),
                 bash("cp src/app.py src/x.yaml"), bash("truncate -s 0 src/x.yaml")):
        v = fresh(ws, call)
        assert v.error["type"] == "hard-linked-file", (call, v)


def test_hard_link_to_a_file_outside_the_workspace_counts(gov: Governor, ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n")
    os.link(outside, ws / "src" / "o.txt")
    assert fresh(ws, write("src/o.txt")).error["type"] == "hard-linked-file"


@pytest.mark.parametrize("command", [
    f"ln {INTENTS} src/x.yaml && echo '#' >> src/x.yaml",
    f"ln -t src {INTENTS} && echo '#' >> src/active_intents.yaml",
    f"link {INTENTS} src/x.yaml && echo '#' >> src/x.yaml",
    f"cp --link {INTENTS} src/x.yaml && echo '#' >> src/x.yaml",
    "cp -rl .orchestration src/snap && echo '#' >> src/snap/active_intents.yaml",
    "cp -al .orchestration src/snap && echo '#' >> src/snap/active_intents.yaml",
    f"ln -sfn ../{POLICY} src/x && echo '#' > src/x",
    f"env ln {INTENTS} src/x.yaml && echo '#' >> src/x.yaml",
    f"sudo ln {INTENTS} src/x.yaml && echo '#' >> src/x.yaml",
    f"bash -c 'ln {INTENTS} src/x.yaml' && echo '#' >> src/x.yaml",
    f"bash -c 'ln {INTENTS} src/x.yaml && echo z >> src/x.yaml'",
    f"echo {INTENTS} src/x.yaml | xargs ln && echo '#' >> src/x.yaml",
    "find .orchestration -name active_intents.yaml -exec ln {} src/x.yaml \\; && echo '#' >> src/x.yaml",
    f"command ln {INTENTS} src/x.yaml && echo '#' >> src/x.yaml",
    f"/bin/ln {INTENTS} src/x.yaml && echo '#' >> src/x.yaml",
    f"ln {INTENTS} src/x.yaml; echo '#' | tee -a src/x.yaml",
    "ln -s ../.orchestration src/o && cd src && echo '#' > o/policy.yaml",
    "ln -s ../.orchestration src/o && cd src/o && echo '#' > policy.yaml",
    "cd src && ln -s ../.orchestration o && cd .. && echo '#' > src/o/policy.yaml",
    "ln -s ../.orchestration src/o && cp src/app.py src/o/policy.yaml",
    f"ln -s ../{POLICY} src/y && sed -i --follow-symlinks s/a/b/ src/y",
    f"ln -s ../{POLICY} src/y && : > \"src/y\"",
    f"ln -s ../{POLICY} src/t && mv src/t src/y && echo '#' > src/y",  # mv deletes: approval (default policy)
    "tar -C src -xf evil.tar && echo '#' > src/lnk",  # unresolved: approval
    "git apply evil.diff && echo '#' > src/lnk",
])
def test_link_then_write_in_one_command_is_not_allowed(gov: Governor, ws: Path, command: str) -> None:
    v = fresh(ws, bash(command))
    assert v.decision == "deny", v


# ================================================================ link-in-same-command rule: NOT handled
_SPELLING_REASON = ("shell._Walker._path returns relative paths unnormalised when the command has no cd "
                    "(ctx.cwd == ''), and _Acc.result compares raw strings: the link 'src/x' and the write "
                    "'./src/x' / 'src//x' / '{ws}/src/x' / 'src/../src/x' differ, so the command stays 'mutating'")


@pytest.mark.parametrize("command", [
    f"ln {INTENTS} src/x.yaml && printf 'active_intents: []\\n' > ./src/x.yaml",
    f"ln {INTENTS} ./src/x.yaml && printf 'active_intents: []\\n' > src/x.yaml",
    f"ln {INTENTS} src/x.yaml && printf 'active_intents: []\\n' > src//x.yaml",
    f"ln {INTENTS} src/x.yaml && printf 'active_intents: []\\n' > src/../src/x.yaml",
    f"ln {INTENTS} src/x.yaml && printf 'active_intents: []\\n' > {{ws}}/src/x.yaml",
    f"link {INTENTS} src/x.yaml && printf 'active_intents: []\\n' > ./src/x.yaml",
    f"cp --link {INTENTS} src/x.yaml && printf 'active_intents: []\\n' > ./src/x.yaml",
    f"ln -sfn ../{INTENTS} src/x.yaml && printf 'active_intents: []\\n' > ./src/x.yaml",
    "ln -s ../.orchestration src/o && printf 'active_intents: []\\n' > ./src/o/active_intents.yaml",
    "cp -al .orchestration src/snap && printf 'active_intents: []\\n' > ./src/snap/active_intents.yaml",
])
def test_link_then_write_with_another_spelling(gov: Governor, ws: Path, command: str) -> None:
    command = command.format(ws=ws)
    assert_refused(ws, command)


@pytest.mark.parametrize("command", [
    f"ln -s ../{INTENTS} src/ && printf 'active_intents: []\\n' > src/active_intents.yaml",
    f"ln -t src/ {INTENTS} && printf 'active_intents: []\\n' > src/active_intents.yaml",
    f"ln {INTENTS} src/ && printf 'active_intents: []\\n' > src/active_intents.yaml",
])
def test_link_into_a_directory_named_with_a_trailing_slash(gov: Governor, ws: Path, command: str) -> None:
    assert_refused(ws, command)


@pytest.mark.parametrize("command", [
    f"ln -s ../{INTENTS} src/t && cp -P src/t src/y && printf 'active_intents: []\\n' > src/y",
    f"ln -s ../{INTENTS} src/t && cp -d src/t src/y && printf 'active_intents: []\\n' > src/y",
    f"ln -s ../{INTENTS} src/t && cp -a src/t src/y && printf 'active_intents: []\\n' > src/y",
    f"ln -s ../{INTENTS} src/t && rsync -a src/t src/y && printf 'active_intents: []\\n' > src/y",
])
def test_symlink_copied_as_a_symlink_then_written(gov: Governor, ws: Path, command: str) -> None:
    if "rsync" in command and shutil.which("rsync") is None:
        pytest.skip("no rsync")
    assert_refused(ws, command)


def test_existing_symlink_copied_then_written(gov: Governor, ws: Path) -> None:
    os.symlink(f"../{INTENTS}", ws / "src" / "t")  # an earlier call: writing src/t itself is refused (resolved)
    assert fresh(ws, write("src/t")).decision == "deny"
    command = "cp -P src/t src/y && printf 'active_intents: []\\n' > src/y"
    assert_refused(ws, command)


def test_rsync_link_dest_then_write(gov: Governor, ws: Path) -> None:
    if shutil.which("rsync") is None:
        pytest.skip("no rsync")
    command = (f"rsync -a --link-dest={ws}/.orchestration .orchestration/ src/snap/ && "
               "printf 'active_intents: []\\n' > src/snap/active_intents.yaml")
    assert_refused(ws, command)


def test_mv_of_a_fresh_link_when_deletes_are_not_destructive(ws: Path) -> None:
    policy = ws / POLICY
    policy.write_text(policy.read_text().replace("delete_is_destructive: true", "delete_is_destructive: false"))
    g = Governor(ws, approval_channel="deny")
    g.select_intent("INT-001", "s1")
    command = f"ln {INTENTS} src/t && mv src/t src/y && printf 'active_intents: []\\n' > src/y"
    assert_refused(ws, command)


# ================================================================ bind mounts: "hard links" nlink cannot see
@pytest.mark.xfail(strict=True, reason="a bind mount aliases a governance file or directory: the path has no "
                   "governance name and the files keep st_nlink 1, so neither selfguard rule sees it (long-lived and fresh "
                   "agree: both allow; making a mount needs privileges, and `mount` is unknown)")
@pytest.mark.parametrize("source, target, written", [
    (".orchestration", "src/a/b", "src/a/b/active_intents.yaml"),  # a directory alias
    (INTENTS, "src/x.yaml", "src/x.yaml"),  # a file alias
])
def test_bind_mount_of_governance_into_scope(ws: Path, source: str, target: str, written: str) -> None:
    if target.endswith(".yaml"):
        (ws / target).write_text("")
    else:
        (ws / target).mkdir(parents=True)

    def body() -> dict:
        bind(ws / source, ws / target)
        gov = Governor(ws, approval_channel="deny")
        gov.select_intent("INT-001", "s1")
        kept_, fresh_ = compare(gov, ws, lambda: write(written))
        return {"kept": kept_, "fresh": fresh_}

    result = in_private_mount_namespace(body)
    assert result["kept"] == result["fresh"]
    assert result["fresh"][0] == "deny", result


def test_mount_command_itself_needs_a_person(gov: Governor, ws: Path) -> None:
    assert fresh(ws, bash("mount --bind .orchestration src")).decision == "deny"


# ================================================================ false alarms a normal developer would hit
def test_plain_symlink_use_is_allowed(gov: Governor, ws: Path) -> None:
    for command in ("ln -s ../README.md src/README.md", "ln -sfn app.py src/current && ls -l src/current",
                    "ln -s app.py src/main.py && cat src/main.py", "cp -s app.py src/alias.py"):
        assert fresh(ws, bash(command)).allowed, command


def test_removing_a_hard_linked_name_is_allowed_with_delete_tool(gov: Governor, ws: Path) -> None:
    os.link(ws / "src" / "app.py", ws / "src" / "app2.py")
    v = fresh(ws, to_call("Delete", {"file_path": "src/app2.py"}, session_id="s1"))
    assert v.error is None or v.error["type"] != "hard-linked-file"


def test_relinking_a_symlink_twice_is_not_a_write_through_it(gov: Governor, ws: Path) -> None:
    assert fresh(ws, bash("ln -sfn app.py src/current && ln -sfn app.py src/current")).allowed


def test_symlink_into_a_directory_then_write_a_sibling(gov: Governor, ws: Path) -> None:
    (ws / "src" / "lib").mkdir()
    assert fresh(ws, bash("ln -s ../app.py src/lib && echo 'x = 2' > src/lib/other.py")).allowed


@pytest.mark.parametrize("command", ["cp src/app.py src/new.py && mv -f src/new.py src/app.py",
                                     "ln -sf new.py src/app.py"])
def test_replacing_a_hard_linked_name(ws: Path, command: str) -> None:
    policy = ws / POLICY  # so that the mv's delete of its source does not need a person
    policy.write_text(policy.read_text().replace("delete_is_destructive: true", "delete_is_destructive: false"))
    g = Governor(ws, approval_channel="deny")
    g.select_intent("INT-001", "s1")
    os.link(ws / "src" / "app.py", ws / "docs" / "app_backup.py")  # e.g. `cp -al` snapshot, pnpm/uv stores
    v = fresh(ws, bash(command))
    assert v.allowed, v
