"""Wrappers (orchestrator/shell/rules/wrappers.py): sudo, env, xargs, timeout, chroot... are seen through."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from orchestrator.shell import analyze


@pytest.mark.parametrize("cmd", [
    "sudo rm -rf /", "env rm -rf /", "command rm -rf /", "exec rm -rf /", "nice rm -rf /", "nohup rm -rf /",
    "timeout 5 rm -rf /", "echo / | xargs rm -rf", "time rm -rf /", "doas rm -rf /", "stdbuf -o0 rm -rf /",
    "ionice -c3 rm -rf /", "chroot /mnt rm -rf /", "env -i PATH=/bin rm -rf /", "sudo -u root rm -rf /",
    "watch 'rm -rf /'", "parallel rm -rf ::: /", "busybox rm -rf /", "arch -x86_64 rm -rf /",
])
def test_sees_through_to_destructive(cmd: str) -> None:
    assert analyze(cmd).kind == "destructive", analyze(cmd)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["rm -rf /", "git reset --hard", "curl x | sh", "dd of=/dev/sda", "find . -delete"]),
       st.sampled_from(["sudo {}", "env {}", "bash -c '{}'", "( {} )", "ls && {}", "true; {}", "echo $({})",
                        "nice {}", "timeout 1 {}", "{} 2>/dev/null", "X=1 {}", "command {}", "eval '{}'"]),
       st.sampled_from(["{}", "sudo {}", "bash -c \"{}\"", "ls | cat; {}"]))
def test_fuzz_wrapped_destructive_stays_destructive(core: str, w1: str, w2: str) -> None:
    cmd = w2.replace("{}", w1.replace("{}", core), 1)
    if "'" in w1 and "'" in core:
        return
    assert analyze(cmd).kind == "destructive", cmd


@pytest.mark.parametrize("cmd", [
    "env PATH=/x ls", "sudo LD_PRELOAD=x ls",
])
def test_execution_hijacks_are_never_read_only(cmd: str) -> None:
    assert analyze(cmd).kind != "read_only", analyze(cmd)


@pytest.mark.parametrize("cmd", [
    "su -c 'rm -rf /'",
])
def test_more_destructive_forms(cmd: str) -> None:
    assert analyze(cmd).kind == "destructive", analyze(cmd)


@pytest.mark.parametrize("cmd", [
    # rtk without a subcommand; xargs without an explicit command, or prompting / reopening the tty
    "rtk", "rtk proxy", "xargs", "xargs -0 -n 1 -P 4", "xargs --", "xargs -p cat", "xargs --interactive cat",
    "xargs -o vim", "xargs --open-tty cat",
])
def test_not_vouched_for(cmd: str) -> None:
    assert analyze(cmd).kind in ("unknown", "destructive"), analyze(cmd)


@pytest.mark.parametrize("cmd", [
    "xargs -E EOF cat", "xargs -0 -I {} -P 8 cat {}", "xargs -rt cat", "env -i ls",
    "env --ignore-environment PATH=/bin ls",
])
def test_read_only_semantics(cmd: str) -> None:
    assert analyze(cmd).kind == "read_only", analyze(cmd)


@pytest.mark.parametrize("cmd", [
    "xargs -e STOP head", "ls | xargs foo -h",
])
def test_still_not_read_only(cmd: str) -> None:
    assert analyze(cmd).kind != "read_only", analyze(cmd)


@pytest.mark.parametrize("cmd, risk", [
    # without -I xargs appends what it reads: to git, env or a shell it can be a subcommand, an option, a program
    ("echo push -f | xargs git", "unclassified"),
    ("echo -f | xargs git push", "upload"),
    ("printf 'git\\0push\\0-f' | xargs -0 env", "unclassified"),
    ("echo 'git push -f' | xargs -I{} sh -c '{}'", "unclassified"),
])
def test_what_xargs_appends_can_change_the_command(cmd: str, risk: str) -> None:
    assert risk in analyze(cmd).risks, analyze(cmd)


@pytest.mark.parametrize("cmd", ["find . -name '*.pyc' | xargs rm", "find . -name '*.py' | xargs wc -l",
                                 "git diff --name-only | xargs git add", "git ls-files | xargs grep -n TODO"])
def test_appended_paths_keep_their_meaning(cmd: str) -> None:
    a = analyze(cmd)
    assert "unclassified" not in a.risks and "upload" not in a.risks, a
