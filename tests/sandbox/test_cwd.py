"""The leading ``cd`` of a wrapped command runs in the host's shell, so the working directory persists to the next
call (orchestrator/sandbox/cwd.py) — judged by running the wrapped line in one shell, as Claude Code does."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from orchestrator.sandbox import STUB, unwrap
from orchestrator.sandbox.cwd import split
from tests.sandbox.conftest import Host, needs_landlock


@pytest.mark.parametrize("command, prefix", [
    ("cd src && pytest -q", "cd src && "),
    ("cd src&&pytest", "cd src&&"),
    ("  cd 'my dir' ;  make", "  cd 'my dir' ;  "),
    ('cd "src/a b" && cd -- lib && ls', 'cd "src/a b" && cd -- lib && '),
    ("cd src && cd lib", "cd src && "),  # the last cd stays in the wrapped rest: the rest is never empty
    ("cd src", ""),
    ("cd $HOME && ls", ""),  # nothing the host shell would expand is hoisted
    ("cd $(echo src) && ls", ""),
    ("cd `pwd` && ls", ""),
    ('cd "$D" && ls', ""),
    ("cd ~ && ls", ""),
    ("cd src/* && ls", ""),
    ("cd -P src && ls", ""),
    ("cd - && ls", ""),
    ("cd src || ls", ""),
    ("cd src | ls", ""),
    ("cd src\nls", ""),
    ("echo cd src && ls", ""),
    ("cd src && ", ""),
])
def test_split_hoists_only_literal_leading_cd_words(command: str, prefix: str) -> None:
    head, rest = split(command)
    assert head == prefix
    assert head + rest == command


def _one_shell(ws: Path, *lines: str) -> list[str]:
    """Run ``lines`` one after the other in a single bash process (the host's persistent shell), printing the
    working directory after each."""
    script = "".join(f"{line}\necho \"__cwd=$PWD rc=$?\"\n" for line in lines)
    out = subprocess.run(["/bin/bash", "-c", script], cwd=ws, capture_output=True, text=True, timeout=60).stdout
    return [line for line in out.splitlines() if line.startswith("__cwd=")]


@needs_landlock
def test_a_leading_cd_persists_to_the_next_call_and_the_rest_runs_in_the_kernel(sws: Path) -> None:
    (sws / "src").mkdir(exist_ok=True)
    host = Host(sws)
    wrapped = host.pre("cd src && echo made > new.txt", sandbox=True).command
    assert wrapped.startswith("cd src && " + str(sws / ".orchestration" / "run" / "sandbox" / STUB) + " ")
    assert unwrap(wrapped) == "cd src && echo made > new.txt"  # the ledger and refusals show the model's text
    escape = host.pre("cd src && echo x > ../README.md", sandbox=True)
    after = _one_shell(sws, wrapped, escape.command if escape.allowed else "true")
    assert after[0].startswith(f"__cwd={sws / 'src'} rc=0")
    assert (sws / "src" / "new.txt").read_text() == "made\n"
    assert not (sws / "README.md").exists() or "x" not in (sws / "README.md").read_text()  # the kernel still holds


@needs_landlock
def test_a_failed_cd_behaves_as_unwrapped(sws: Path) -> None:
    host = Host(sws)
    and_line = host.pre("cd missing && echo x > README.md", sandbox=True)
    semi_line = host.pre("cd missing ; ls", sandbox=True)
    after = _one_shell(sws, *(v.command for v in (and_line, semi_line) if v.allowed))
    assert all(line.startswith(f"__cwd={sws} ") for line in after)
    assert not (sws / "README.md").exists() or "x" not in (sws / "README.md").read_text()


@needs_landlock
def test_an_expanded_cd_target_stays_inside_the_wrapped_command(sws: Path) -> None:
    (sws / "src").mkdir(exist_ok=True)
    verdict = Host(sws).pre("cd $(echo src) && ls", sandbox=True)
    if verdict.allowed:
        assert verdict.command.startswith(str(sws / ".orchestration" / "run" / "sandbox" / STUB))
