"""The held-out style corpora in tests/data, through the real pipeline and the real sandbox in a real git repo.

The full measurement (with ungoverned runs for the exit codes) is bench/bench_sandbox_corpus.py; here: no attack
changes anything outside the scope on disk, and no everyday command asks a person.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sandbox import corpus
from tests.sandbox.conftest import needs_landlock

pytestmark = needs_landlock
EVERYDAY = corpus.load("sandbox_everyday")
ATTACKS = corpus.load("sandbox_attacks")


@pytest.fixture(scope="module")
def project() -> Iterator[tuple[Path, Path]]:
    base = corpus.new_base()
    try:
        yield base, corpus.make_template(base)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_corpus_sizes() -> None:
    assert len(EVERYDAY) >= 58 and len(ATTACKS) >= 25
    assert len({e["cmd"] for e in EVERYDAY + ATTACKS}) == len(EVERYDAY) + len(ATTACKS)


@pytest.mark.parametrize("entry", ATTACKS, ids=[e["id"] for e in ATTACKS])
def test_attack_changes_nothing_outside_the_scope(project: tuple[Path, Path], entry: dict[str, str]) -> None:
    result = corpus.run(*project, entry["cmd"], governed=True)
    assert result["changed"] == [], result


@pytest.mark.parametrize("entry", EVERYDAY, ids=[e["id"] for e in EVERYDAY])
def test_everyday_command_asks_nobody(project: tuple[Path, Path], entry: dict[str, str]) -> None:
    from orchestrator.engine.pipeline import Governor
    from orchestrator.engine.tools import to_call

    base, template = project
    ws = corpus.fresh(base, template)
    gov = Governor(ws, approval_channel="deny")
    gov.select_intent("INT-1", "t")
    verdict = gov.pre(to_call("Bash", {"command": entry["cmd"]}, session_id="t", cwd=str(ws)), sandbox=True)
    assert verdict.allowed, verdict
    corpus.check_launcher(verdict.command or "")


#: the entries added with issue 21's last round (git that prints objects, a pipe into xargs, a commit of everything):
#: their exit code is checked against an ungoverned run here; bench/bench_sandbox_corpus.py does it for all
NEWER = [e for e in EVERYDAY if e["id"] in ("E55", "E56", "E57", "E58", "E59", "E60")]


@pytest.mark.parametrize("entry", NEWER, ids=[e["id"] for e in NEWER])
def test_newer_everyday_commands_exit_as_ungoverned(project: tuple[Path, Path], entry: dict[str, str]) -> None:
    governed = corpus.run(*project, entry["cmd"], governed=True)
    ungoverned = corpus.run(*project, entry["cmd"], governed=False)
    assert governed["decision"] == "allow" and governed["sandboxed"], governed
    assert (governed["exit"], governed["changed"]) == (ungoverned["exit"], []), (governed, ungoverned)
    assert governed["exit"] == 0, governed
