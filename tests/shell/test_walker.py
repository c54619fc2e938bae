"""The walk over the syntax tree (orchestrator/shell/walker.py): lists, pipelines, subshells, substitutions,
compound commands, functions, coproc, redirections, heredocs and assignments that change what runs."""

from __future__ import annotations

import pytest

from orchestrator.shell import analyze


@pytest.mark.parametrize("cmd", [
    "ls; rm -rf /", "ls && rm -rf /", "false || rm -rf /", "cat f | rm -rf /", "(rm -rf /)", "{ rm -rf /; }",
    "echo $(rm -rf /)", "echo `rm -rf /`", 'echo "$(rm -rf /)"', "cat <(rm -rf /)", "X=1 rm -rf /",
    "if true; then rm -rf /; fi", "for i in 1; do rm -rf /; done", "while true; do rm -rf /; done",
    "f() { rm -rf /; }; f", "cat <<EOF\n$(rm -rf /)\nEOF", ":(){ :|:& };:", "echo x > /dev/sda",
])
def test_sees_through_to_destructive(cmd: str) -> None:
    assert analyze(cmd).kind == "destructive", analyze(cmd)


@pytest.mark.parametrize("cmd", [
    "grep 'rm -rf' notes.md", "rg \"git push --force\"", "echo 'rm -rf /'", "printf 'rm -rf /\\n'",
    "cat <<'EOF'\nrm -rf /\nEOF", "git log --grep='reset --hard'", "ls 2>/dev/null", "ls >/dev/null 2>&1",
    "echo hi 1>&2", "awk '$1 > 5' f", "python3 -c 'print(1)'",
])
def test_data_is_not_code(cmd: str) -> None:
    assert analyze(cmd).kind == "read_only", analyze(cmd)


@pytest.mark.parametrize("cmd,writes", [
    ("echo x > f", ("f",)), ("echo x >> f", ("f",)), ("ls &> f", ("f",)), ("echo x >| f", ("f",)),
])
def test_writes(cmd: str, writes: tuple[str, ...]) -> None:
    res = analyze(cmd)
    assert res.kind in ("mutating", "destructive"), res
    for w in writes:
        assert w in res.writes, res


def test_read_write_redirect_is_never_read_only() -> None:
    # tree-sitter-bash does not parse `<>`: the parse error makes it unknown, which is fail-closed.
    assert analyze("cat <> f").kind in ("unknown", "mutating")


def test_devnull_is_not_a_write() -> None:
    assert analyze("ls > /dev/null 2>/dev/null").writes == ()
    assert analyze("cmd_x 2>/dev/null").writes == ()


def test_redirect_target_variable_is_unresolved() -> None:
    res = analyze("echo x > \"$OUT\"")
    assert res.kind == "mutating" and res.unresolved and res.writes == ("\"$OUT\"",) or res.writes


@pytest.mark.parametrize("cmd", [
    "GIT_PAGER='rm -rf ~' git log", "PAGER='sh -c x' man ls", "LD_PRELOAD=/tmp/x.so ls", "PATH=/tmp/evil:$PATH ls",
    "export PATH=/tmp:$PATH; ls", "BASH_ENV=/tmp/x bash -c ls", "GIT_SSH_COMMAND='rm -rf /' git fetch",
])
def test_execution_hijacks_are_never_read_only(cmd: str) -> None:
    assert analyze(cmd).kind != "read_only", analyze(cmd)


@pytest.mark.parametrize("cmd", [
    "echo ${x:-`rm -rf /`}",
])
def test_code_fed_as_data_is_analyzed(cmd: str) -> None:
    assert analyze(cmd).kind == "destructive", analyze(cmd)


def test_stray_heredoc_parse_is_unknown() -> None:
    # `<<-EOF` followed by a literal backslash-t: tree-sitter leaves the body in stray words.
    assert analyze("bash <<-EOF\n\\trm -rf /etc\nEOF").kind == "unknown"


def test_prompt_expansion_is_unknown() -> None:
    assert analyze("x='$(rm -rf /)'; echo ${x@P}").kind == "unknown"


@pytest.mark.parametrize("cmd", [
    # a PATH that puts the current directory first
    "PATH=.:/bin ls",
])
def test_not_vouched_for(cmd: str) -> None:
    assert analyze(cmd).kind in ("unknown", "destructive"), analyze(cmd)


@pytest.mark.parametrize("cmd", [
    "coproc { rm -rf /; }",
])
def test_destructive_semantics(cmd: str) -> None:
    assert analyze(cmd).kind == "destructive", analyze(cmd)


@pytest.mark.parametrize("cmd", [
    "coproc { echo hi; }", "coproc NAME { cat; }", "coproc cat", "PATH=/usr/bin:/bin ls",
])
def test_read_only_semantics(cmd: str) -> None:
    assert analyze(cmd).kind == "read_only", analyze(cmd)


def test_a_carriage_return_is_a_word_character_as_in_bash() -> None:
    """redteam2 R2-cr-*: tree-sitter took `\\<CR><LF>` for a line continuation, bash for an escaped CR and a newline:
    `cd src\\<CR><LF>cp x README.md` was one bare `cd` (exempt from the sandbox) to the analyzer."""
    from orchestrator.sandbox.exempt import exempt
    from orchestrator.shell import analyze

    hidden = analyze("echo hi\\\r\ngit push -f origin main")
    assert "force-push" in hidden.risks, hidden
    cmd = "cd src\\\r\ncp docs/plan.md README.md"
    assert exempt(analyze(cmd), cmd) is None
    assert exempt(analyze("cd src"), "cd src") == "cwd"
