"""The escape and second red-team corpora's network attacks under egress by host (the default policy).

Those corpora run with ``sandbox.network: allow`` (tests/sandbox/escapes.py: the listener must be reachable, so that
they show the environment scrub, not the network rule, keeping the session's tokens from it). Here the same
templates keep the default network policy — each command in its own network namespace, out only through the egress
proxy — and every entry that talks to the listener (its command names ``{port}``), or sends project data
somewhere code hides, runs governed as a host runs it.
The judge is the listener, standing in for the attacker's server on the host: it receives no token of the agent's
environment, no secret and no plain project data, whatever the decision was. That includes the entries the red-team
corpus keeps as known gaps for ``network: allow`` (code the analyzer cannot see into, sending project data over an
allowed port: ``test_redteam2.KNOWN``'s ``_CODE`` entries).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sandbox import escapes, test_redteam2
from tests.sandbox.conftest import needs_landlock
from tests.sandbox.test_pidns import _can_isolate

pytestmark = [needs_landlock, pytest.mark.skipif(not _can_isolate(), reason="the kernel refuses namespaces here")]


def _default_network(template: Path) -> Path:
    import yaml

    policy_file = template / ".orchestration" / "policy.yaml"
    policy = yaml.safe_load(policy_file.read_text()) or {}
    policy.get("sandbox", {}).pop("network", None)  # the default: egress by host
    policy_file.write_text(yaml.safe_dump(policy))
    return template


def _entries() -> list[object]:
    out = []
    for name, entries in (("escapes", escapes.load()), ("redteam2", test_redteam2.ENTRIES)):
        out += [pytest.param(name, e, id=e["id"]) for e in entries
                if "{port}" in e["cmd"] or test_redteam2.KNOWN.get(e["id"]) == test_redteam2._CODE]
    return out


@pytest.fixture(scope="module")
def projects() -> Iterator[dict[str, tuple[Path, Path, escapes.Listener]]]:
    escape = escapes.project_for(lambda base: _default_network(escapes.make_template(base)))
    redteam = escapes.project_for(lambda base: _default_network(test_redteam2.make_template(base)))
    yield {"escapes": next(escape), "redteam2": next(redteam)}
    for gen in (escape, redteam):
        gen.close()


def test_the_selection_covers_the_network_attacks() -> None:
    ids = {p.id for p in _entries()}  # type: ignore[attr-defined]
    assert len(ids) >= 100
    assert {k for k, why in test_redteam2.KNOWN.items() if why == test_redteam2._CODE} <= ids


@pytest.mark.parametrize("corpus_name, entry", _entries())
def test_the_listener_on_the_host_receives_nothing(projects: dict[str, tuple[Path, Path, escapes.Listener]],
                                                   corpus_name: str, entry: dict[str, str]) -> None:
    base, template, listener = projects[corpus_name]
    result = escapes.run(base, template, entry, listener, markers=(test_redteam2.PLAIN,))
    assert not result["sent"], result
