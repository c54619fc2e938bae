"""Rules for formatters (rewrite files unless told to check) and interactive editors."""
from __future__ import annotations

from orchestrator.shell.words import _has, _split_opts

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (strings at runtime): keep `typing` off the import path
    from typing import Callable
    from orchestrator.shell.run import _Run


def _formatter(run: _Run) -> None:
    """Formatters/linters: --check/--diff are read-only, otherwise they rewrite files."""
    text = [a.text for a in run.args]
    if any(t in ("--check", "--diff", "--version", "--help", "-h", "check", "--dry-run", "-l", "--list-different")
           for t in text) and not any(t in ("-w", "--write", "format") or t.startswith("--fix") for t in text):
        return
    if run.name == "isort" and any(t in ("-c", "--check-only", "--check", "-d", "--diff", "--show-files",
                                         "--show-config") for t in text):
        return
    if run.name in ("terraform", "packer", "tofu", "cargo") and text[:1] == ["fmt"]:
        if any(t in ("-check", "--check", "-write=false") for t in text):
            return
        run.acc.unresolved = True
        run.flag("mutating", f"{run.name} fmt rewrites files")
        return
    if run.name == "ruff" and not text:
        return
    if run.name == "ruff" and text and text[0] in ("check", "lint", "rule", "version", "help", "linter", "config",
                                                   "analyze") and \
            not any(t.startswith(("--fix", "--unsafe-fixes")) for t in text):
        return
    if run.name == "ruff" and text and text[0] == "format" and "--check" not in text and "--diff" not in text:
        run.acc.unresolved = True
        run.flag("mutating", "ruff format rewrites files")
        return
    if run.name == "prettier" and not any(t in ("--write", "-w") for t in text):
        return
    run.acc.unresolved = True
    run.flag("mutating", f"{run.name} rewrites files")


def _editor(run: _Run) -> None:
    from orchestrator.shell.rules import servers

    if servers.code_extension(run) or servers.editor_server(run):
        return  # the person's running editor would do it (servers.py)
    opts, pos = _split_opts(run.args, ("-c", "-S", "-u", "-i", "--cmd", "--eval", "-l", "--load"))
    if _has(opts, "--version", "--help", "-h") and not pos:
        return
    if _has(opts, "-c", "--cmd", "-S", "--eval", "-l", "--load", "-x", "--batch", "-s") or \
            any(p.text.startswith("+") for p in pos):
        run.flag("unknown", f"{run.name} runs editor commands (which can run shell commands)")
    for p in pos:
        if not p.text.startswith("+"):
            run.write(p, f"{run.name} edits")
    run.flag("mutating", f"{run.name} is an interactive editor")


def _sudoedit(run: _Run) -> None:
    for p in run.args:
        if not p.text.startswith("-"):
            run.write(p, "sudoedit")


def _markdownlint(run: _Run) -> None:
    if any(a.text == "--fix" for a in run.args):
        run.flag("mutating", "markdownlint --fix rewrites files")


RULES: dict[str, Callable[[_Run], None]] = {
    "black": _formatter, "ruff": _formatter, "prettier": _formatter, "gofmt": _formatter, "rustfmt": _formatter,
    "isort": _formatter, "markdownlint": _markdownlint,
    "vi": _editor, "vim": _editor, "nvim": _editor, "nano": _editor, "emacs": _editor, "code": _editor,
    "sudoedit": _sudoedit,
}
