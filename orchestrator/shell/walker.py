"""The walk over the syntax tree: every node that executes (lists, pipelines, subshells, substitutions,
compound commands, functions), redirections and heredocs; each simple command goes to :mod:`.dispatch`."""
from __future__ import annotations

import posixpath
import re

from orchestrator.shell.parse import _LazyRe, _MAX_DEPTH, _parser, _t
from orchestrator.shell.words import W, _expand_braces, _word_parts
from orchestrator.shell.programs import _DEV_BLOCK, _DEV_NULLISH
from orchestrator.shell.dispatch import _run_argv
from orchestrator.shell.run import _Acc, _Ctx
from orchestrator.shell.rules import secrets as _shell_secrets
from orchestrator.shell import parse as _parse

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (strings at runtime): keep `typing` off the import path
    from typing import Any


def _analyze_into(source: str, acc: _Acc, ctx: _Ctx, depth: int) -> None:
    """Parse ``source`` and fold its effects into ``acc`` (used for the top level and for bash -c/eval)."""
    if depth > _MAX_DEPTH:
        acc.flag("unknown", "command nesting too deep", risk="unparseable")
        return
    if "\x00" in source:
        acc.flag("unknown", "NUL byte in command", risk="unparseable")
        return
    parser = _parser()
    raw = source.encode("utf-8", "surrogatepass")
    # tree-sitter-bash 0.25 segfaults on some astral code points (e.g. "{" + U+DC8A0). Bash treats every
    # non-ASCII character as an ordinary word character, so we parse an ASCII shadow with the same byte
    # length ("a" per byte) and read all node text from the original bytes by offset (_t). The same for the
    # control characters other than tab and newline: to bash a carriage return is a word character, while
    # tree-sitter takes `\<CR><LF>` for a line continuation -- `cd src\<CR><LF>touch x` was one `cd` to the
    # analyzer (exempt from the sandbox) and two commands to bash (redteam2 R2-cr-*).
    shadow = raw if source.isascii() and not _CONTROL.search(source) else b"".join(
        c.encode("utf-8", "surrogatepass") if c < "\x80" and not _CONTROL.match(c)
        else b"a" * len(c.encode("utf-8", "surrogatepass")) for c in source)
    with _parse._LOCK:
        tree = parser.parse(shadow)
    root = tree.root_node
    if root.has_error:
        acc.flag("unknown", "command does not parse cleanly", risk="unparseable")
    prev = getattr(_parse._TLS, "src", None)
    _parse._TLS.src = raw
    try:
        _Walker(acc, depth).walk(root, ctx)
    finally:
        _parse._TLS.src = prev


# Environment variables that make an otherwise read-only program run other code or other binaries.
_EXEC_ENV = frozenset("""PATH LD_PRELOAD LD_LIBRARY_PATH LD_AUDIT BASH_ENV ENV PAGER MANPAGER GIT_PAGER GIT_EDITOR
GIT_SSH GIT_SSH_COMMAND GIT_EXTERNAL_DIFF GIT_ASKPASS SSH_ASKPASS GIT_EXEC_PATH GIT_TEMPLATE_DIR GIT_PROXY_COMMAND
LESSOPEN LESSCLOSE EDITOR VISUAL SUDO_EDITOR PERL5OPT PERL5LIB PERLLIB PYTHONPATH PYTHONSTARTUP PYTHONHOME
PYTHONINSPECT NODE_OPTIONS NODE_PATH RUBYOPT RUBYLIB PROMPT_COMMAND IFS SHELLOPTS BASHOPTS PS4 GCONV_PATH
BROWSER TERMINFO HOSTALIASES ZDOTDIR XDG_CONFIG_HOME HOME CDPATH""".split())
#: ASCII control characters bash reads as word characters (all but tab and newline; NUL is refused above)
_CONTROL = _LazyRe(r"[\x01-\x08\x0b-\x1f\x7f]")
#: a whole word that is one positional parameter: "$@", $*, ${1}, "$2" (a function's arguments: _Walker.call)
_POSITIONAL = _LazyRe(r'"?\$\{?([@*1-9])\}?"?')
_SYSTEM_BIN_DIR = _LazyRe(r"^/(usr/(local/)?)?s?bin/?$|^/opt/homebrew/s?bin/?$")


# ----------------------------------------------------------------------------------------------------------
# tree walking


class _Walker:
    def __init__(self, acc: _Acc, depth: int) -> None:
        self.acc = acc
        self.depth = depth
        self.functions: dict[str, Any] = {}
        self.assigned: set[str] = set()   # variables assigned anywhere in the command (untrusted values)
        self.stage_downloads = False      # the current pipeline stage runs a downloader
        self.stage_output: str | None = None  # literal text the current stage prints (echo/printf)
        self.positional: list[W] | None = None  # a function's arguments while its body is walked for a call
        self.defining = False  # a function's body walked at its definition: "$@" is what each call gives
        self._calling: set[str] = set()

    # -- what rules hand back (through run.Run, which cannot import this module) ----------------------------
    def dispatch(self, argv: list[W], ctx: _Ctx, depth: int, xargs: bool = False) -> None:
        """Analyze one simple command (a wrapper's payload, ``find -exec``...) into this walk's result."""
        _run_argv(self, argv, ctx, depth, xargs=xargs)

    def analyze_code(self, source: str, ctx: _Ctx, depth: int) -> None:
        """Parse and walk a string of shell code (``bash -c``, ``eval``) into this walk's result."""
        _analyze_into(source, self.acc, ctx, depth)

    def isolated(self, argv: list[W], depth: int) -> _Acc:
        """Analyze ``argv`` into an accumulator of its own, in fresh walk state (a command run elsewhere)."""
        acc = _Acc(self.acc.verdict)
        _run_argv(_Walker(acc, depth), argv, _Ctx(), depth)
        return acc

    # -- generic -------------------------------------------------------------------------------------------
    def walk(self, node: Any, ctx: _Ctx) -> None:
        t = node.type
        if t in ("program", "list", "compound_statement", "do_group", "else_clause", "elif_clause"):
            self._walk_seq(node, ctx)
        elif t == "subshell":
            self._walk_seq(node, ctx.copy())
        elif t == "pipeline":
            self._walk_pipeline(node, ctx)
        elif t == "redirected_statement":
            self._walk_redirected(node, ctx)
        elif t == "command":
            self._walk_command(node, ctx)
        elif t == "function_definition":
            self._walk_function(node, ctx)
        elif t in ("variable_assignment", "variable_assignments", "declaration_command", "unset_command"):
            self.subs(node, ctx)
            for a in [node] + list(node.named_children):
                if a.type == "variable_assignment":
                    self.assignment(_t(a))
        elif t in ("test_command", "negated_command", "arithmetic_expansion", "binary_expression",
                   "unary_expression", "parenthesized_expression", "ternary_expression",
                   "postfix_expression"):
            for c in node.named_children:
                if c.type in ("command", "pipeline", "list", "subshell", "redirected_statement",
                              "compound_statement", "test_command", "negated_command"):
                    self.walk(c, ctx)
                else:
                    self.subs(c, ctx)
        elif t in ("if_statement", "while_statement", "for_statement", "c_style_for_statement",
                   "case_statement", "case_item", "until_statement", "select_statement"):
            var = node.child_by_field_name("variable") if t in ("for_statement", "select_statement") else None
            values = [self.word(v) for v in node.children_by_field_name("value")] if var is not None else []
            if var is not None and not (values and all(w.glob and not w.dyn for w in values)):
                # a loop variable holds what the command listed or read (a list of globs only: file names)
                self.assigned.add(_t(var))
            for c in node.named_children:
                self.walk(c, ctx)
        elif t in ("comment", "heredoc_body", "heredoc_start", "heredoc_end"):
            if t == "heredoc_body":
                self.subs(node, ctx)
        elif t == "ERROR":
            self.acc.flag("unknown", "unparsable fragment", risk="unparseable")
            for c in node.named_children:
                self.walk(c, ctx)
        elif t in ("word", "string", "raw_string", "concatenation", "number", "simple_expansion",
                   "expansion", "command_substitution", "process_substitution", "variable_name",
                   "herestring_redirect", "file_redirect", "heredoc_redirect", "ansi_c_string",
                   "translated_string", "arithmetic_expansion", "brace_expression", "array"):
            self.subs(node, ctx)
            if t in ("file_redirect",):
                self._redirect(node, ctx)
        else:
            # Unknown node types: walk children conservatively and say we did not fully understand.
            if node.is_named and node.named_child_count == 0:
                return
            for c in node.named_children:
                self.walk(c, ctx)

    def _walk_seq(self, node: Any, ctx: _Ctx) -> None:
        # `;`, `&&`, `||` and background `&` members all may run: walk each, sharing the cwd.
        kids = node.named_children
        k = 0
        while k < len(kids):
            c = kids[k]
            if c.type == "command" and _t(c).startswith("coproc"):
                end = self._coproc(kids, k, ctx)
                if end is not None:
                    k = end + 1
                    continue
            self.walk(c, ctx)
            k += 1

    def _coproc(self, kids: list[Any], k: int, ctx: _Ctx) -> int | None:
        """`coproc [NAME] { body; }`: tree-sitter-bash splits it into `coproc [NAME] { first` ... `}`
        commands. Re-analyze the body text between the braces; returns the index of the `}` command."""
        words = [w for w in kids[k].named_children]
        texts = [_t(w) for w in words]
        if len(texts) < 2 or texts[0] != "coproc":
            return None
        b = 1 if texts[1] == "{" else 2 if len(texts) > 2 and texts[2] == "{" and \
            re.fullmatch(r"[A-Za-z_]\w*", texts[1]) else 0
        if not b:
            return None
        end = next((j for j in range(k + 1, len(kids)) if kids[j].type == "command" and _t(kids[j]) == "}"), None)
        if end is None:
            self.acc.flag("unknown", "coproc body not parsed", risk="unparseable")
            return k
        body = _parse._TLS.src[words[b].end_byte:kids[end].start_byte].decode("utf-8", "replace")
        _analyze_into(body, self.acc, ctx.copy(), self.depth + 1)
        return end

    def _walk_pipeline(self, node: Any, ctx: _Ctx) -> None:
        # Every stage runs in a subshell: a cd inside a stage does not leak. A stage after a download that
        # executes its stdin as code is "download piped to a shell".
        sub = ctx.copy()
        sub.download = False
        fed: str | None = None
        for idx, c in enumerate(node.named_children):
            self.stage_downloads = False
            self.stage_output = None
            stage = sub.copy()
            stage.stdin = fed
            stage.piped = fed is None and idx > 0
            self.walk(c, stage)
            if self.stage_downloads:
                sub.download = True
            fed = self.stage_output  # `echo 'cmd' | sh`: literal text flows into the next stage

    def _walk_redirected(self, node: Any, ctx: _Ctx) -> None:
        body = node.child_by_field_name("body")
        redirects = [c for c in node.named_children if body is None or c != body]
        # tree-sitter-bash hangs `cd a && echo x > out` as (list) > out: the redirection belongs to the last
        # command, so for lists and pipelines it is resolved after walking the body (cwd changes apply).
        late = body is not None and body.type in ("list", "pipeline")
        if not late:
            self._redirects(redirects, ctx)
        if body is not None:
            bodies = [_t(c) for r in redirects if r.type == "heredoc_redirect"
                      for c in r.named_children if c.type == "heredoc_body"]
            bctx = ctx
            if bodies:
                bctx = ctx.copy()
                bctx.stdin = "\n".join(bodies)
            if any(r.type == "file_redirect" and _redirect_op(r) == "<" for r in redirects):
                bctx = bctx.copy() if bctx is ctx else bctx
                bctx.piped = True
            # tree-sitter-bash attaches words after a redirection target (`rm -rf 2>/dev/null /`) to the
            # redirect node; they are arguments of the command.
            extra = [self.word(w) for r in redirects if r.type == "file_redirect" for w in _redirect_extra(r)]
            if body.type == "command":
                self._walk_command(body, bctx, extra)
            else:
                if extra:
                    self.acc.flag("unknown", "arguments after a redirection of a compound command", risk="unparseable")
                self.walk(body, bctx)
        if late:
            self._redirects(redirects, ctx)

    def _redirects(self, redirects: list[Any], ctx: _Ctx) -> None:
        for r in redirects:
            if r.type != "heredoc_redirect":
                self.subs(r, ctx)
            if r.type == "file_redirect":
                self._redirect(r, ctx)
            elif r.type == "heredoc_redirect":
                text = "".join(_t(c) for c in r.named_children
                               if c.type == "heredoc_body")
                for c in r.named_children:
                    if c.type == "file_redirect":
                        self.subs(c, ctx)
                        self._redirect(c, ctx)
                    elif c.type == "heredoc_body":
                        self.subs(c, ctx)  # $(...) in an unquoted heredoc runs
                    elif c.type not in ("pipeline", "list", "command", "redirected_statement", "heredoc_start",
                                        "heredoc_end", "herestring_redirect"):
                        # e.g. `<<-EOF` followed by `\t...`: tree-sitter puts the body in stray words.
                        self.acc.flag("unknown", "heredoc not parsed cleanly", risk="unparseable")
                    else:
                        if c.type in ("heredoc_start", "heredoc_end", "herestring_redirect"):
                            continue
                        # `cat <<EOF | sh`: the heredoc flows down the pipe; a shell there runs it.
                        stages = c.named_children if c.type == "pipeline" else [c]
                        for st in stages:
                            sub = ctx.copy()
                            sub.stdin = text
                            self.walk(st, sub)

    def _redirect(self, node: Any, ctx: _Ctx) -> None:
        op = ""
        dest = None
        fd_dup = False
        for c in node.children:
            if not c.is_named:
                if dest is None:
                    op += c.type
            elif c.type == "file_descriptor":
                continue
            elif dest is None:
                dest = c
        if op == "<" and dest is not None and self.acc.secrets is not None:
            _shell_secrets.redirect_in(self.acc, self.word(dest))
        if op in ("<", "<<<", "<&", "<&-", ">&-"):
            return
        if dest is None:
            return
        w = self.word(dest)
        if op in (">&", "<&") or (op == ">&" and w.text.isdigit()):
            fd_dup = True
        if fd_dup and (w.text.isdigit() or w.text == "-"):
            return
        if op.startswith(">") or op.startswith("&>") or op == "<>":
            for one in _expand_braces([w]):  # bash refuses an ambiguous `> {a,b}`; judge every spelling anyway
                self.write_target(one, ctx, f"redirection {op}")

    def _walk_function(self, node: Any, ctx: _Ctx) -> None:
        name_node = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        name = _t(name_node) if name_node is not None else ""
        self.functions[name] = body
        if body is not None:
            # A function calling itself (`:(){ :|:& };:`) is a fork bomb pattern.
            if name and _calls_name(body, name):
                self.acc.flag("destructive", f"recursive function {name!r} (fork bomb pattern)")
            saved, self.defining = self.defining, True
            try:
                self.walk(body, ctx.copy())
            finally:
                self.defining = saved

    def call(self, name: str, args: list[W], ctx: _Ctx) -> None:
        """A call of a function defined in the command: its body again, with ``"$@"``/``$1``... standing for the
        call's words. Analyzed at definition only, ``f() { git reset "$1"; }; f --hard`` would be a plain reset
        and ``f() { "$@"; }; f git push -f`` an unknown program (redteam2 R2-fn-*). Not recursive."""
        body = self.functions.get(name)
        if body is None or name in self._calling or not args:
            return
        saved = self.positional
        self._calling.add(name)
        self.positional = args
        try:
            self.walk(body, ctx.copy())
        finally:
            self.positional = saved
            self._calling.discard(name)

    def _arguments(self, node: Any) -> list[W] | None:
        """The call's words a positional parameter stands for (None: ``node`` is not one, or no call is walked)."""
        if self.positional is None:
            return None
        m = _POSITIONAL.fullmatch(_t(node))
        if m is None:
            return None
        n = m.group(1)
        if n in ("@", "*"):
            return list(self.positional)
        return self.positional[int(n) - 1:int(n)]

    def assignment(self, text: str) -> None:
        """Record `NAME=value`; variables that change what programs execute make the command unknown."""
        name = text.split("=", 1)[0].split("[", 1)[0].lstrip("+")
        self.assigned.add(name)
        if name == "PATH" and not text.startswith("PATH+"):
            val = text.split("=", 1)[1].strip("'\"") if "=" in text else ""
            if val and "$" not in val and "`" not in val and \
                    all(_SYSTEM_BIN_DIR.match(d) for d in val.split(":")):
                return  # only system binary directories: cannot point at workspace programs
        if name in _EXEC_ENV or name.startswith(("GIT_CONFIG", "DYLD_", "LD_")):
            self.acc.flag("unknown", f"assignment to {name} changes what later programs execute", risk="hijack")

    # -- words -------------------------------------------------------------------------------------------
    def subs(self, node: Any, ctx: _Ctx) -> None:
        """Walk command/process substitutions nested anywhere inside ``node`` (they execute)."""
        stack = [node]
        while stack:
            n = stack.pop()
            if n.type in ("command_substitution", "process_substitution"):
                sub = ctx.copy()
                for c in n.named_children:
                    self.walk(c, sub)
                continue
            if n.type in ("command", "pipeline", "list", "subshell", "redirected_statement"):
                self.walk(n, ctx)
                continue
            if n.type == "expansion" and re.search(r"@[PE]\}?$", _t(n).rstrip("}")
                                                   + "}"):
                # ${x@P} expands prompt escapes, including $(...) inside the variable's value.
                self.acc.flag("unknown", "prompt expansion ${...@P} can run commands", risk="hijack")
            if n.type == "word" and n.parent is not None and n.parent.type == "expansion":
                # tree-sitter-bash leaves `cmd` inside ${x:-`cmd`} as a plain word: analyze it ourselves.
                txt = _t(n)
                for m in re.finditer(r"`([^`]*)`", txt):
                    _analyze_into(m.group(1), self.acc, ctx.copy(), self.depth + 1)
                if "$(" in txt:
                    self.acc.flag("unknown", "command substitution inside a parameter expansion")
            stack.extend(n.children)

    def word(self, node: Any) -> W:
        text, dyn, glob = _word_parts(node)
        return W(text, dyn, glob, node)

    # -- effects -----------------------------------------------------------------------------------------
    def _path(self, w: W, ctx: _Ctx) -> str:
        p = w.text
        if not w.literal or p.startswith("~"):
            self.acc.unresolved = True
            return p
        if p.startswith("/") or ctx.cwd == "":
            if ".." in p.split("/"):
                self.acc.dotdot = True
            return p
        if ctx.cwd is None:
            self.acc.unresolved = True
            return p
        if ".." in p.split("/"):
            self.acc.dotdot = True
        return posixpath.normpath(posixpath.join(ctx.cwd, p))

    def write_target(self, w: W, ctx: _Ctx, why: str, kind: str = "mutating") -> None:
        if w.literal and _DEV_NULLISH.match(w.text):
            return
        if w.literal and _DEV_BLOCK.match(w.text):
            self.acc.flag("destructive", f"{why} writes to block device {w.text}")
        elif w.text.startswith("/dev/") and w.literal:
            self.acc.flag("mutating", f"{why} writes to device {w.text}")
        path = self._path(w, ctx)
        self.acc.writes.append(path)
        self.acc.flag(kind, f"{why} writes {path}")

    def delete_target(self, w: W, ctx: _Ctx, why: str, kind: str = "mutating") -> None:
        path = self._path(w, ctx)
        self.acc.deletes.append(path)
        self.acc.flag(kind, f"{why} deletes {path}")

    # -- commands ----------------------------------------------------------------------------------------
    def _walk_command(self, node: Any, ctx: _Ctx, extra: list[W] | None = None) -> None:
        argv: list[W] = []
        for c in node.named_children:
            t = c.type
            if t == "variable_assignment":
                self.subs(c, ctx)
                self.assignment(_t(c))
                continue
            if t in ("file_redirect", "herestring_redirect"):
                self.subs(c, ctx)
                if t == "file_redirect":
                    self._redirect(c, ctx)
                    if _redirect_op(c) == "<":
                        ctx = ctx.copy()
                        ctx.piped = True
                else:
                    ctx = ctx.copy()
                    ctx.stdin = " ".join(self.word(w).text for w in c.named_children)
                continue
            if t == "command_name":
                self.subs(c, ctx)
                name = c.named_children[0] if c.named_child_count else c
                argv.extend(self._arguments(name) or [self.word(name)])
                continue
            if t == "subshell":
                self.walk(c, ctx.copy())
                continue
            self.subs(c, ctx)
            given = self._arguments(c)
            argv.extend([self.word(c)] if given is None else given)
        if extra:
            argv.extend(extra)
        if not argv:
            return
        parent = node.parent
        if self.depth == 0 and extra is None and parent is not None and parent.type == "program" and \
                parent.named_child_count == 1 and len(argv) == node.named_child_count and \
                all(w.literal for w in argv):
            # the whole line is this one command of literal words (ShellAnalysis.argv): nothing else to run
            self.acc.argv = tuple(w.text for w in argv)
        _run_argv(self, _expand_braces(argv), ctx, self.depth)


def _redirect_op(node: Any) -> str:
    op = ""
    for c in node.children:
        if c.is_named and c.type != "file_descriptor":
            break
        if not c.is_named:
            op += c.type
    return op


def _redirect_extra(node: Any) -> list[Any]:
    seen_dest = False
    out = []
    for c in node.children:
        if not c.is_named or c.type == "file_descriptor":
            continue
        if not seen_dest:
            seen_dest = True
            continue
        out.append(c)
    return out


def _calls_name(node: Any, name: str) -> bool:
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "command_name" and _t(n) == name:
            return True
        stack.extend(n.children)
    return False
