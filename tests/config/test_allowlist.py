"""approval.allow_commands matches on the shell analyzer's words (one parser for the project)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from orchestrator.config.allowlist import allowlisted, entry_words
from orchestrator.config.schema import Policy


def test_entries_are_split_like_commands() -> None:
    assert entry_words("pytest -k 'a or b'") == ("pytest", "-k", "a or b")
    assert entry_words('pytest -k "a or b"') == ("pytest", "-k", "a or b")
    assert allowlisted("pytest -k 'a or b' -q", ['pytest -k "a or b":*']) == 'pytest -k "a or b":*'
    # an entry that is no single simple command of literal words could never match
    assert entry_words("make; rm -rf x") is None and entry_words("FOO=1 make") is None


@pytest.mark.parametrize("command", ["env pytest", "FOO=1 pytest", "pytest 2>/dev/null", "pytest # x",
                                     "(pytest)", "pytest && ls", 'pytest -k "x"'])
def test_only_one_literal_simple_command_matches(command: str) -> None:
    assert allowlisted(command, ["pytest:*"]) is None


def test_policy_refuses_entries_that_could_never_match() -> None:
    Policy.model_validate({"version": 1, "approval": {"allow_commands": ["pytest:*", "make test"]}})
    for bad in (":*", "make; rm x", "FOO=1 make"):
        with pytest.raises(ValidationError):
            Policy.model_validate({"version": 1, "approval": {"allow_commands": [bad]}})
