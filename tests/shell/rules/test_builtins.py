"""Shell builtins (orchestrator/shell/rules/builtins.py): cd handling (documented choice: literal cd is applied;
dynamic cd makes later paths unresolved), alias/hash that change what a name runs, trap bodies."""

from __future__ import annotations

import pytest

from orchestrator.shell import analyze


def test_cd_literal_is_applied_to_relative_targets() -> None:
    res = analyze("cd sub && rm x")
    assert res.deletes == ("sub/x",) and not res.unresolved
    assert analyze("cd a; cd b; touch c").writes == ("a/b/c",)
    assert analyze("cd /srv/app && touch f").writes == ("/srv/app/f",)
    assert analyze("cd a && echo x > out").writes == ("a/out",)


def test_cd_dynamic_makes_relative_targets_unresolved() -> None:
    for cmd in ("cd \"$D\" && rm x", "cd - && rm x", "cd && rm x", "popd; rm x"):
        res = analyze(cmd)
        assert res.unresolved, (cmd, res)
        assert res.deletes == ("x",)


def test_cd_in_subshell_does_not_leak() -> None:
    assert analyze("(cd sub && ls); rm x").deletes == ("x",)


def test_absolute_target_unaffected_by_cd() -> None:
    assert analyze("cd sub && rm /tmp/x").deletes == ("/tmp/x",)


def test_redirect_after_cd_in_list_uses_new_cwd() -> None:
    assert analyze("cd a && echo x > out").writes == ("a/out",)
    assert analyze("cd a; ls | tee t").writes == ("a/t",)


@pytest.mark.parametrize("cmd", [
    "alias ls='rm -rf /'; ls", "hash -p /tmp/x ls; ls",
])
def test_execution_hijacks_are_never_read_only(cmd: str) -> None:
    assert analyze(cmd).kind != "read_only", analyze(cmd)


@pytest.mark.parametrize("cmd", [
    "trap 'rm -rf /' EXIT",
])
def test_code_fed_as_data_is_analyzed(cmd: str) -> None:
    assert analyze(cmd).kind == "destructive", analyze(cmd)
