"""The write-escape corpus (tests/data/sandbox_escapes.jsonl), judged on disk (issue 21; tests/sandbox/escapes.py).

Every command runs the way a host runs it after ``Governor.pre(call, sandbox=True)``: nothing changes outside the
scope, in governance files, in ``.git/config|hooks|info``, in ``$HOME`` or outside the workspace; no secret reaches
stdout or stderr; no session token and no secret reaches a listener on 127.0.0.1. The figures (and how each command
was stopped): ``python bench/bench_escapes.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sandbox import escapes
from tests.sandbox.conftest import needs_landlock

pytestmark = needs_landlock
ENTRIES = escapes.load()
CLASSES = {"named", "shell-string", "runs-code", "embedded-language", "program-option", "bash-evaluation",
           "control-flow", "wrapper", "links", "hijack", "home", "governance", "git-config", "git-hooks",
           "outside-scope", "outside-workspace", "outside-process", "secret-read", "env-exfiltration"}


@pytest.fixture(scope="module")
def project() -> Iterator[tuple[Path, Path, escapes.Listener]]:
    yield from escapes.project_for(escapes.make_template)


def test_the_corpus_covers_every_class_of_the_issue() -> None:
    assert len(ENTRIES) >= 300
    assert {e["class"] for e in ENTRIES} == CLASSES
    assert len({e["id"] for e in ENTRIES}) == len(ENTRIES)
    assert set(escapes.KNOWN) <= {e["id"] for e in ENTRIES}


def _param(entry: dict[str, str]) -> object:
    marks = [pytest.mark.xfail(strict=True, reason=escapes.KNOWN[entry["id"]])] if entry["id"] in escapes.KNOWN \
        else []
    return pytest.param(entry, id=entry["id"], marks=marks)


@pytest.mark.parametrize("entry", [_param(e) for e in ENTRIES])
def test_escape_changes_nothing_prints_no_secret_sends_no_token(
        project: tuple[Path, Path, escapes.Listener], entry: dict[str, str]) -> None:
    base, template, listener = project
    result = escapes.run(base, template, entry, listener)
    assert not escapes.failed(result), result
