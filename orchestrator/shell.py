"""Static analysis of a Bash command line: is it read-only, which paths does it write or delete?

The analyzer parses the command with tree-sitter-bash (a real parser, not regexes) and walks every simple
command it will execute: list members (``;`` ``&&`` ``||``), pipeline stages, subshells, ``$(...)`` and
backticks (also inside double quotes and unquoted heredocs), process substitutions, ``if``/``for``/``while``
bodies and function bodies. For each simple command it strips wrappers (``sudo``, ``env``, ``timeout``,
``xargs``...), recurses into code strings (``bash -c``, ``eval``, ``find -exec``), and looks the program up
in per-program rules. Anything it cannot vouch for is ``unknown`` -- the pipeline asks, never allows.

Public API (see docs/CONTRACT.md): :func:`analyze` and :class:`ShellAnalysis`.

``cd`` handling (documented choice): a literal ``cd DIR`` (or ``pushd DIR``) earlier in the same list changes
the directory used for later *relative* targets, so ``cd sub && rm x`` reports ``sub/x``. A ``cd`` whose
target is not literal (``cd "$D"``, ``cd -``, bare ``cd``, ``popd``) makes later relative targets
unresolved (``unresolved=True``) and they are reported as written. A ``cd`` inside ``( ... )`` does not leak
out of the subshell.

The module imports only the standard library at import time; tree-sitter is imported on first use.
"""
from __future__ import annotations

import functools
import posixpath
import re
from dataclasses import dataclass

from orchestrator import outside as _outside
from orchestrator import shell_secrets as _shell_secrets
TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (strings at runtime): keep `typing` off the import path
    from typing import Any, Callable, Iterable

__all__ = ["ShellAnalysis", "analyze"]

class _LazyRe:
    """A regex compiled on first use: keeps module import cheap (the hook process imports us every call)."""

    __slots__ = ("_args", "_rx")

    def __init__(self, *args: Any) -> None:
        self._args = args
        self._rx = None

    def __getattr__(self, name: str) -> Any:
        if self._rx is None:
            object.__setattr__(self, "_rx", re.compile(*self._args))
        return getattr(self._rx, name)


_KINDS = ("read_only", "mutating", "unknown", "destructive")
_RANK = {k: i for i, k in enumerate(_KINDS)}
_MAX_DEPTH = 8          # nesting of bash -c / eval / find -exec recursion
_MAX_LEN = 100_000      # longer inputs are refused (unknown) rather than parsed


@dataclass(frozen=True)
class ShellAnalysis:
    """What a shell command does to the file system, as far as static analysis can tell.

    kind: "read_only" | "mutating" | "destructive" | "unknown" (destructive implies mutating;
    unknown means "could not vouch for it" and must never be auto-allowed).
    writes / deletes: target paths as written in the command, relative to its cwd (a literal
    ``cd`` earlier in the command is applied).
    reasons: short human-readable explanations, most severe first.
    unresolved: a target contained a variable, glob, substitution or unknown cwd.
    """

    kind: str
    writes: tuple[str, ...] = ()
    deletes: tuple[str, ...] = ()
    reasons: tuple[str, ...] = ()
    unresolved: bool = False
    #: directory entries the command makes: ``(index into write_log or -1 for "anywhere", op, sources, named)``.
    #: op: "ln" (a link), "mv" / "cplink" (a move or a link-preserving copy: a link if a source holds one),
    #: "cplink-replace" (rsync -a), "replace" (install, rsync, sed -i: renamed over, not written through) or
    #: "copy" (cp, rsync --inplace: written through). ``sources`` are paths like those of ``write_log``; ``named``
    #: says that into an existing directory the entry is DIR/<basename of each source> (else: anything in DIR).
    #: The pipeline compares them with ``write_log`` on canonical paths (Governor._check_new_entries).
    entries: tuple[tuple[int, str, tuple[str, ...], bool], ...] = ()
    #: a write target or a ``cd`` went through ``..``: lexically simplified, which is wrong through a new link
    dotdot: bool = False
    #: every write target in command order, duplicates kept (``writes`` is the deduplicated view)
    write_log: tuple[str, ...] = ()
    #: structured risk categories (see :data:`RISKS`), for policy decisions that must not parse ``reasons``
    risks: frozenset[str] = frozenset()
    #: secret files the command reads, copies or sends: ``(path as written, pattern, "read"|"copy"|"send")``
    #: (rules in :mod:`orchestrator.shell_secrets`; the secrets pre-hook refuses the command on them)
    secrets: tuple[tuple[str, str, str], ...] = ()

    @property
    def read_only(self) -> bool:
        return self.kind == "read_only"

    @property
    def destructive(self) -> bool:
        return self.kind == "destructive"


# ----------------------------------------------------------------------------------------------------------
# parser (lazy, module-level cache)

_PARSER: Any = None
_LOCK: Any = None  # a tree-sitter Parser is not safe to share between threads (MCP server, TUI)
_TLS: Any = None   # per-thread stack top: the original bytes of the source being walked (see _t)


def _parser() -> Any:
    global _PARSER, _LOCK, _TLS
    if _PARSER is None:
        import threading

        import tree_sitter_bash
        from tree_sitter import Language, Parser

        _LOCK = threading.Lock()
        _TLS = threading.local()
        _PARSER = Parser(Language(tree_sitter_bash.language()))
    return _PARSER


def analyze(command: str, secrets: Any = None) -> ShellAnalysis:
    """Analyze one shell command line (may contain lists, pipes, heredocs...). Never raises.

    ``secrets`` is the :class:`orchestrator.secrets.SecretMatcher` naming secret files (None: the defaults)."""
    try:
        if secrets is None:
            from orchestrator.secrets import matcher

            secrets = matcher()
        if not isinstance(command, str):
            return ShellAnalysis("unknown", reasons=("command is not a string",), unresolved=True)
        if len(command) > _MAX_LEN:
            return ShellAnalysis("unknown", reasons=("command too long to analyze",), unresolved=True)
        return _analyze_cached(command, secrets)
    except Exception as exc:  # fail closed: anything unexpected is "unknown"
        return ShellAnalysis("unknown", reasons=(f"analyzer error: {type(exc).__name__}",), unresolved=True)


@functools.lru_cache(maxsize=2048)
def _analyze_cached(command: str, secrets: Any = None) -> ShellAnalysis:
    if not command.strip():
        # Fail closed: an empty command usually means the adapter could not find the real one.
        return ShellAnalysis("unknown", reasons=("empty command",))
    acc = _Acc()
    acc.secrets = secrets
    _analyze_into(command, acc, _Ctx(), 0)
    return acc.result()


def _analyze_into(source: str, acc: "_Acc", ctx: "_Ctx", depth: int) -> None:
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
    # length ("a" per byte) and read all node text from the original bytes by offset (_t).
    shadow = raw if source.isascii() else b"".join(
        c.encode("utf-8", "surrogatepass") if c < "\x80" else b"a" * len(c.encode("utf-8", "surrogatepass"))
        for c in source)
    with _LOCK:
        tree = parser.parse(shadow)
    root = tree.root_node
    if root.has_error:
        acc.flag("unknown", "command does not parse cleanly", risk="unparseable")
    prev = getattr(_TLS, "src", None)
    _TLS.src = raw
    try:
        _Walker(acc, depth).walk(root, ctx)
    finally:
        _TLS.src = prev


def _t(node: Any) -> str:
    """The original text of a node (the tree was parsed from the ASCII shadow of the same length)."""
    return _TLS.src[node.start_byte:node.end_byte].decode("utf-8", "replace")


# ----------------------------------------------------------------------------------------------------------
# accumulation


#: the vocabulary of ``ShellAnalysis.risks``: what kind of danger made a command more than read-only.
#: Approval policy keys on these (e.g. "runs-code" alone may run unasked inside the sandbox).
RISKS: dict[str, str] = {
    "runs-code": "runs local or project code whose effects the analyzer cannot see (tests, builds, scripts)",
    "destructive": "deletes trees, rewrites history, force-pushes or otherwise destroys work",
    "outside-world": "changes state outside this machine's workspace (publish, deploy, cloud/cluster, remote push)",
    "secret-read": "reads a protected secret",
    "exfiltration": "sends local data to another host",
    "hijack": "environment, options or configuration make a program run other code",
    "unparseable": "the command could not be parsed or analyzed",
    "unresolved-target": "a target path depends on a variable, glob or substitution",
    "unclassified": "an unknown or destructive reason no category above names (the approval policy always asks)",
}


class _Acc:
    __slots__ = ("rank", "writes", "deletes", "reasons", "unresolved", "entries", "dotdot", "risks", "secrets",
                 "secret_hits")

    def __init__(self) -> None:
        self.rank = 0
        self.writes: list[str] = []
        self.deletes: list[str] = []
        self.reasons: list[tuple[int, str]] = []
        self.unresolved = False
        self.entries: list[tuple[int, str, tuple[str, ...], bool]] = []  # see ShellAnalysis.entries
        self.dotdot = False
        self.risks: set[str] = set()
        self.secrets: Any = None  # a SecretMatcher: shell_secrets records hits when set
        self.secret_hits: list[tuple[str, str, str]] = []

    def flag(self, kind: str, reason: str, risk: str | None = None) -> None:
        """Raise the command's kind to at least ``kind``, with a reason and (optionally) a :data:`RISKS` key."""
        if risk is not None:
            self.risks.add(risk)
        elif kind == "unknown":
            self.risks.add("unclassified")  # a reason nobody categorised: never waved through by a risk policy
        if kind == "destructive":
            self.risks.add("destructive")
        r = _RANK[kind]
        if r > self.rank:
            self.rank = r
        if r > 0 and len(self.reasons) < 32:
            item = (r, reason)
            if item not in self.reasons:
                self.reasons.append(item)

    def result(self) -> ShellAnalysis:
        reasons = tuple(t for _, t in sorted(self.reasons, key=lambda x: -x[0]))
        return ShellAnalysis(
            _KINDS[self.rank],
            tuple(dict.fromkeys(self.writes)),
            tuple(dict.fromkeys(self.deletes)),
            reasons,
            self.unresolved,
            entries=tuple(self.entries),
            dotdot=self.dotdot,
            write_log=tuple(self.writes),
            risks=frozenset(self.risks | {"unresolved-target"} if self.unresolved else self.risks),
            secrets=tuple(dict.fromkeys(self.secret_hits)),
        )


# Internal records are plain slotted classes: @dataclass costs ~1 ms per class at import time, and this
# module is imported by every hook process.
class _Ctx:
    """Walk state: cwd ("" = the command's own cwd; None = unknown after a dynamic cd) and whether an
    earlier pipeline stage fetched data from the network."""

    __slots__ = ("cwd", "download", "stdin", "piped")

    def __init__(self, cwd: str | None = "", download: bool = False, piped: bool = False) -> None:
        self.cwd = cwd
        self.download = download
        self.stdin: str | None = None  # heredoc / here-string text fed to the current command
        # stdin comes from somewhere we cannot read (an earlier pipeline stage, a `<` redirection): a
        # program that executes its stdin (sqlite3 dot-commands...) cannot be vouched for.
        self.piped = piped

    def copy(self) -> "_Ctx":
        return _Ctx(self.cwd, self.download, self.piped)  # stdin text is deliberately not inherited


class W:
    """One shell word after quote removal. dyn: contains an expansion/substitution; glob: unquoted glob."""

    __slots__ = ("text", "dyn", "glob", "node")

    def __init__(self, text: str, dyn: bool = False, glob: bool = False, node: Any = None) -> None:
        self.text = text
        self.dyn = dyn
        self.glob = glob
        self.node = node

    def __repr__(self) -> str:
        return f"W({self.text!r}, dyn={self.dyn}, glob={self.glob})"

    @property
    def literal(self) -> bool:
        return not self.dyn and not self.glob


# Environment variables that make an otherwise read-only program run other code or other binaries.
_EXEC_ENV = frozenset("""PATH LD_PRELOAD LD_LIBRARY_PATH LD_AUDIT BASH_ENV ENV PAGER MANPAGER GIT_PAGER GIT_EDITOR
GIT_SSH GIT_SSH_COMMAND GIT_EXTERNAL_DIFF GIT_ASKPASS SSH_ASKPASS GIT_EXEC_PATH GIT_TEMPLATE_DIR GIT_PROXY_COMMAND
LESSOPEN LESSCLOSE EDITOR VISUAL SUDO_EDITOR PERL5OPT PERL5LIB PERLLIB PYTHONPATH PYTHONSTARTUP PYTHONHOME
PYTHONINSPECT NODE_OPTIONS NODE_PATH RUBYOPT RUBYLIB PROMPT_COMMAND IFS SHELLOPTS BASHOPTS PS4 GCONV_PATH
BROWSER TERMINFO HOSTALIASES ZDOTDIR XDG_CONFIG_HOME HOME CDPATH""".split())
_SYSTEM_BIN_DIR = _LazyRe(r"^/(usr/(local/)?)?s?bin/?$|^/opt/homebrew/s?bin/?$")
_DEV_NULLISH = _LazyRe(r"^/dev/(null|stdout|stderr|stdin|tty|fd/\d+|zero)$")
_DEV_BLOCK = _LazyRe(r"^/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk|rdisk|md|dm-|loop|mapper/|sr)")
_GLOB_CHARS = _LazyRe(r"[*?\[]")


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
        body = _TLS.src[words[b].end_byte:kids[end].start_byte].decode("utf-8", "replace")
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
            self.walk(body, ctx.copy())

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
                argv.append(self.word(c.named_children[0] if c.named_child_count else c))
                continue
            if t == "subshell":
                self.walk(c, ctx.copy())
                continue
            self.subs(c, ctx)
            argv.append(self.word(c))
        if extra:
            argv.extend(extra)
        if not argv:
            return
        _run_argv(self, _expand_braces(argv), ctx, self.depth)


def _expand_braces(words: list[W]) -> list[W]:
    """The words after bash brace expansion (``src/{a,../X}`` is two words; see :mod:`orchestrator.braces`)."""
    if not any("{" in w.text and w.node is not None for w in words):
        return words
    from orchestrator import braces

    out: list[W] = []
    for w in words:
        many = braces.expand(w.node, _t) if "{" in w.text and w.node is not None else None
        out.extend([w] if many is None else [W(text, dyn, glob) for text, dyn, glob in many])
    return out


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


_ESCAPE_RE = _LazyRe(r"\\(.)", re.S)


def _word_parts(node: Any) -> tuple[str, bool, bool]:
    """(text after quote removal, has expansion, has unquoted glob) for one word-like node."""
    t = node.type
    raw = _t(node)
    if t == "word":
        glob = bool(_GLOB_CHARS.search(raw.replace("\\*", "").replace("\\?", "").replace("\\[", "")))
        brace = "{" in raw and "}" in raw and "," in raw
        return _ESCAPE_RE.sub(r"\1", raw), False, glob or brace
    if t == "number":
        return raw, False, False
    if t == "raw_string":
        return raw[1:-1], False, False
    if t == "ansi_c_string":
        body = raw[2:-1]
        try:
            body = body.encode("latin-1", "backslashreplace").decode("unicode_escape")
        except Exception:
            pass
        return body, False, False
    if t in ("string", "translated_string"):
        parts: list[str] = []
        dyn = False
        inner = node
        if t == "translated_string" and node.named_child_count:
            inner = node.named_children[0]
        for c in inner.named_children:
            if c.type == "string_content":
                parts.append(re.sub(r"\\([$`\"\\\n])", r"\1", _t(c)))
            else:
                dyn = True
                parts.append(_t(c))
        if not inner.named_children and len(raw) >= 2:
            return "", False, False
        return "".join(parts), dyn, False
    if t == "concatenation":
        out: list[str] = []
        dyn = glob = False
        for c in node.children:
            s, d, g = _word_parts(c)
            out.append(s)
            dyn |= d
            glob |= g
        return "".join(out), dyn, glob
    if t in ("simple_expansion", "expansion", "command_substitution", "process_substitution",
             "arithmetic_expansion"):
        return raw, True, False
    if t == "brace_expression":
        return raw, False, True
    if not node.is_named:
        return raw, False, bool(_GLOB_CHARS.search(raw))
    return raw, True, False


# ----------------------------------------------------------------------------------------------------------
# option parsing helpers


def _split_opts(args: list[W], valued: Iterable[str] = (), stop_at_first_pos: bool = False
                ) -> tuple[dict[str, list[str]], list[W]]:
    """Split GNU-style options from positionals. Short clusters are split into single letters.

    ``valued`` names options taking a value ("-o", "--output"). Returns ({opt: [values]}, positionals).
    """
    valued = set(valued)
    opts: dict[str, list[str]] = {}
    pos: list[W] = []
    i = 0
    n = len(args)
    while i < n:
        a = args[i]
        s = a.text
        if s == "--" and not a.dyn:
            pos.extend(args[i + 1:])
            break
        if s.startswith("--") and len(s) > 2 and not a.dyn:
            name, eq, val = s.partition("=")
            if eq:
                opts.setdefault(name, []).append(val)
            elif name in valued and i + 1 < n:
                opts.setdefault(name, []).append(args[i + 1].text)
                i += 1
            else:
                opts.setdefault(name, []).append("")
        elif s.startswith("-") and len(s) > 1 and not a.dyn:
            j = 1
            while j < len(s):
                o = "-" + s[j]
                if o in valued:
                    rest = s[j + 1:]
                    if rest:
                        opts.setdefault(o, []).append(rest)
                    elif i + 1 < n:
                        opts.setdefault(o, []).append(args[i + 1].text)
                        i += 1
                    else:
                        opts.setdefault(o, []).append("")
                    break
                opts.setdefault(o, []).append("")
                j += 1
        else:
            pos.append(a)
            if stop_at_first_pos:
                pos.extend(args[i + 1:])
                break
        i += 1
    return opts, pos


def _has(opts: dict[str, list[str]], *names: str) -> bool:
    return any(n in opts for n in names)


# ----------------------------------------------------------------------------------------------------------
# program tables

# Programs that never modify files by themselves (given no redirection; rules below override these).
_READ_ONLY = frozenset("""
ls ll la l dir vdir exa eza lsd tree cat bat batcat tac nl head tail less more most wc grep egrep fgrep rg ag
ack pwd echo printf which whereis type hash whatis apropos man info help date cal uptime free stat file du df
ps pgrep pstree top htop btop sort uniq cut paste join comm fold fmt column expand unexpand tr rev tsort jq yq
gron diff diff3 sdiff cmp colordiff delta test [ [[ true false : uname whoami id groups hostname sha1sum
sha224sum sha256sum sha384sum sha512sum md5sum md5 shasum b2sum cksum sum crc32 basename dirname realpath
readlink locate mlocate plocate fd fdfind printenv nproc lscpu lsblk lsusb lspci lsmod lsof ss
netstat dig host nslookup whois ping ping6 traceroute tracepath mtr getconf locale tty logname users who w
last lastlog sleep seq yes expr factor bc dc numfmt od hexdump xxd strings base32 base64 basenc look vmstat
iostat mpstat sar sw_vers system_profiler mdfind mdls uuidgen cloc tokei scc jless fx glow mdcat csvlook xsv
qsv tldr cheat shellcheck hadolint yamllint jsonlint actionlint nm objdump readelf otool size
getent finger pinky namei envsubst tput clear dirs jobs let wait shift times getopts compgen ulimit diffstat
wdiff lesspipe zcat zless zmore zgrep zegrep zfgrep bzcat bzgrep bzless xzcat xzgrep xzless lzcat zstdcat
lz4cat pv
""".split())

# Programs whose output only goes to stdout unless an option says otherwise (handled by rules below).
_SHELLS = frozenset("sh bash zsh dash ksh mksh fish ash busybox_sh tcsh csh yash".split())
_INTERPRETERS = frozenset("""python python2 python3 pypy pypy3 node nodejs deno bun perl ruby php lua luajit
Rscript R julia tclsh osascript irb jshell groovy scala elixir erl pwsh powershell""".split())
_DOWNLOADERS = frozenset("curl wget fetch aria2c http https xh httpie lwp-request GET".split())

# Flags of wrappers that consume a value, so the value is not taken as the wrapped program.
_WRAPPERS: dict[str, frozenset[str]] = {
    "sudo": frozenset("-u -g -C -D -h -p -r -t -U -T --user --group --chdir --host --prompt --role --type "
                      "--other-user --command-timeout --close-from".split()),
    "doas": frozenset("-u -C".split()),
    "nice": frozenset("-n --adjustment".split()),
    "ionice": frozenset("-c -n -p -P -u --class --classdata".split()),
    "nohup": frozenset(),
    "arch": frozenset("-d -e --arch".split()),
    "setsid": frozenset(),
    "time": frozenset("-f -o --format --output".split()),
    "command": frozenset(),
    "builtin": frozenset(),
    "exec": frozenset("-a".split()),
    "stdbuf": frozenset("-i -o -e --input --output --error".split()),
    "unbuffer": frozenset(),
    "caffeinate": frozenset("-t -w".split()),
    "taskset": frozenset(),
    "chrt": frozenset(),
    "flock": frozenset("-w -E --timeout --conflict-exit-code".split()),
    "torsocks": frozenset(),
    "proxychains": frozenset("-f".split()),
    "proxychains4": frozenset("-f".split()),
    "firejail": frozenset(),
    "catchsegv": frozenset(),
    "noglob": frozenset(),
    "nocorrect": frozenset(),
    "rlwrap": frozenset(),
    "coproc": frozenset(),
    "run0": frozenset("-u --user".split()),
    "pkexec": frozenset("--user".split()),
}


class _Run:
    """Context for one simple command: the walker, the argv, and helpers used by program rules."""

    __slots__ = ("wk", "ctx", "depth", "name", "args", "xargs")

    def __init__(self, wk: _Walker, ctx: _Ctx, depth: int, name: str, args: list[W], xargs: bool) -> None:
        if xargs:
            # `{}` (find -exec, xargs -I{}, parallel) is replaced by paths we cannot see.
            args = [W(a.text, True, a.glob, a.node) if "{}" in a.text else a for a in args]
        self.wk, self.ctx, self.depth, self.name, self.args, self.xargs = wk, ctx, depth, name, args, xargs

    @property
    def acc(self) -> _Acc:
        return self.wk.acc

    def flag(self, kind: str, reason: str, risk: str | None = None) -> None:
        self.wk.acc.flag(kind, reason, risk)

    def write(self, w: W, why: str | None = None, kind: str = "mutating") -> None:
        self.wk.write_target(w, self.ctx, why or self.name, kind)

    def delete(self, w: W, why: str | None = None, kind: str = "mutating") -> None:
        self.wk.delete_target(w, self.ctx, why or self.name, kind)

    def extra_targets(self, why: str) -> None:
        """xargs/find -exec append targets we cannot see: mark unresolved."""
        self.wk.acc.unresolved = True

    def sub(self, argv: list[W], xargs: bool | None = None) -> None:
        _run_argv(self.wk, argv, self.ctx, self.depth, xargs=self.xargs if xargs is None else xargs)

    def code(self, text: str, why: str) -> None:
        """Recurse into a string of shell code (bash -c, eval)."""
        _analyze_into(text, self.wk.acc, self.ctx.copy(), self.depth + 1)


def _prog_name(w: W) -> str:
    s = w.text
    if "/" in s:
        s = s.rstrip("/").rsplit("/", 1)[-1]
    return s


def _run_argv(wk: _Walker, argv: list[W], ctx: _Ctx, depth: int, xargs: bool = False) -> None:
    """Dispatch one simple command (after assignments and redirections were taken out)."""
    if not argv:
        return
    head = argv[0]
    if head.dyn or head.glob:
        wk.acc.flag("unknown", f"program name is not literal: {head.text[:60]}", risk="unresolved-target")
        wk.acc.unresolved = True
        return
    name = _prog_name(head)
    args = argv[1:]
    if "/" in head.text and not _SYSTEM_BIN.match(head.text):
        # `./ls` or `tools/cat` is whatever file sits there (the agent may have just written it): never
        # read-only. The name is still analyzed so `./rm -rf /` stays destructive.
        wk.acc.flag("unknown", f"program {head.text[:60]!r} is not a system binary", risk="runs-code")
    run = _Run(wk, ctx, depth, name, args, xargs)
    if wk.acc.secrets is not None:
        _shell_secrets.check_argv(run)
    if name in _outside.TABLE:
        _outside.check(run)
    if name in wk.functions:
        return  # body already analyzed at definition
    if name in _DOWNLOADERS:
        wk.stage_downloads = True
    if name in ("echo", "printf") and all(a.literal for a in args):
        out = " ".join(a.text for a in args if not (name == "echo" and a.text in ("-n", "-e", "-E")))
        if name == "printf" or "-e" in (a.text for a in args):
            out = out.replace("\\n", "\n").replace("\\t", "\t")
        wk.stage_output = out
    if any(a.text[:1] in _UNICODE_DASHES for a in args if not a.dyn):
        # `git reset ‐‐hard` with U+2010: not an option to the program, and a classic way to fool matchers.
        wk.acc.flag("unknown", f"{name}: an argument starts with a unicode dash")
        return
    rule = _RULES.get(name)
    # `--help` / `--version` as the only argument of a program we know prints and exits.
    if len(args) == 1 and args[0].text in _HELP_ARGS and not args[0].dyn and (
            rule is not None or name in _SERVICE_CLIS or name in _READ_ONLY or name in _WRAPPERS
            or name in _INTERPRETERS or name in _SHELLS or re.fullmatch(r"python[0-9.]*", name)):
        return
    if len(args) == 1 and args[0].text in ("--help", "-h", "--version", "-V") and not args[0].dyn and \
            not xargs and "/" not in head.text and name not in _POWER and name not in _DISK_TOOLS and \
            not name.startswith("mkfs") and name not in ("init", "telinit"):
        # A program looked up on PATH asked only for help/version prints and exits. A workspace script
        # shadowing that name would have to be installed on PATH outside the workspace, which the pipeline
        # refuses; `./tool --help` runs a workspace file and stays unknown.
        return
    if rule is not None:
        rule(run)
        return
    if name in _WRAPPERS:
        _wrapper(run)
        return
    if name in _SHELLS:
        _shell(run)
        return
    if re.fullmatch(r"python[0-9.]*|pypy[0-9.]*", name) or name in _INTERPRETERS:
        _interpreter(run)
        return
    if name in _READ_ONLY:
        return
    if any(a.text[:1] in _UNICODE_DASHES for a in args if not a.dyn):
        # `git reset ‐‐hard` with U+2010: not an option to the program, and a classic way to fool matchers.
        wk.acc.flag("unknown", f"{name}: an argument starts with a unicode dash")
        return
    if name == "mdadm" and any(a.text in ("--detail", "-D", "--examine", "-E", "--query", "-Q", "--version",
                                          "--help") for a in args) and \
            not any(a.text in ("--zero-superblock", "--create", "-C", "--remove", "--fail", "--stop", "-S")
                    for a in args):
        return
    if name.startswith("mkfs") or name in _DISK_TOOLS:
        run.flag("destructive", f"{name} can destroy disks or file systems")
        return
    if name in _POWER:
        run.flag("destructive", f"{name} stops or restarts the machine")
        return
    svc = _SERVICE_CLIS.get(name)
    if svc is not None:
        _service_cli(run, svc)
        return
    wk.acc.flag("unknown", f"unknown program {name!r}", risk="runs-code")


_UNICODE_DASHES = frozenset("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe63\uff0d")
_SYSTEM_BIN = _LazyRe(r"^/(usr/(local/)?)?s?bin/[^/]+$|^/opt/homebrew/bin/[^/]+$|^/bin/[^/]+$|"
                      r"^/usr/libexec/[^/]+$|^/home/linuxbrew/\.linuxbrew/bin/[^/]+$")
_HELP_ARGS = frozenset("--help -h -help --version -version -V help version -?".split())
_DISK_TOOLS = frozenset("fdisk sfdisk cfdisk gdisk sgdisk parted wipefs mkswap blkdiscard badblocks mke2fs "
                        "mkdosfs mkntfs mke2fs newfs newfs_apfs newfs_hfs newfs_msdos zap-disk "
                        "diskutil_erase cryptsetup zpool_destroy lvremove vgremove pvremove mdadm "
                        "hdparm".split())
_POWER = frozenset("shutdown reboot halt poweroff".split())


# ----------------------------------------------------------------------------------------------------------
# wrappers, shells, interpreters


def _wrapper(run: _Run) -> None:
    name, args = run.name, run.args
    valued = _WRAPPERS[name]
    if name == "command":
        # command -v / -V only looks the name up.
        opts, pos = _split_opts(args, stop_at_first_pos=True)
        if _has(opts, "-v", "-V"):
            return
        run.sub(pos)
        return
    if name == "time" or name == "builtin" or name == "noglob" or name == "nocorrect":
        opts, pos = _split_opts(args, valued, stop_at_first_pos=True)
        run.sub(pos)
        return
    if name == "flock":
        opts, pos = _split_opts(args, valued, stop_at_first_pos=True)
        # flock FILE CMD... / flock -c 'cmd' FILE
        if "-c" in opts or "--command" in opts:
            for v in opts.get("-c", []) + opts.get("--command", []):
                run.code(v, "flock -c")
            return
        run.sub(pos[1:])
        return
    if name in ("taskset", "chrt"):
        opts, pos = _split_opts(args, (), stop_at_first_pos=True)
        run.sub(pos[1:])
        return
    if name in ("sudo", "doas", "run0", "pkexec"):
        opts, pos = _split_opts(args, valued, stop_at_first_pos=True)
        if _has(opts, "-l", "--list", "-v", "--validate", "-k", "--reset-timestamp", "-K", "-V", "--version",
                "-h", "--help") and not pos:
            return
        if _has(opts, "-e", "--edit") or name == "sudoedit":
            for p in pos:
                run.write(p, "sudo -e")
            return
        if _has(opts, "-s", "--shell", "-i", "--login") and not pos:
            run.flag("unknown", f"{name} opens an interactive shell")
            return
        if _has(opts, "-s", "--shell", "-i", "--login"):
            run.code(" ".join(w.text for w in pos), name)
            return
        while pos and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", pos[0].text):
            run.wk.assignment(pos[0].text)
            pos = pos[1:]  # sudo VAR=value cmd
        if not pos:
            return
        run.sub(pos)
        return
    opts, pos = _split_opts(args, valued, stop_at_first_pos=True)
    if name == "exec" and not pos:
        return  # `exec 3>file`: redirections only (handled by the walker)
    if not pos:
        return
    run.sub(pos)


def _env(run: _Run) -> None:
    args = run.args
    i = 0
    rest: list[W] = []
    while i < len(args):
        a = args[i]
        s = a.text
        if s in ("-u", "--unset", "-C", "--chdir") and i + 1 < len(args):
            if s in ("-C", "--chdir"):
                run.ctx = run.ctx.copy()
                run.ctx.cwd = None
            i += 2
            continue
        if s in ("-S", "--split-string") and i + 1 < len(args):
            run.code(" ".join(_shq(w.text) if j else w.text for j, w in enumerate(args[i + 1:])), "env -S")
            return
        if s.startswith("--split-string=") or (s.startswith("-S") and len(s) > 2):
            head = s.split("=", 1)[1] if s.startswith("--") else s[2:]
            run.code(" ".join([head] + [_shq(w.text) for w in args[i + 1:]]), "env -S")
            return
        if s == "--":
            rest = args[i + 1:]
            break
        if s.startswith("-") and not a.dyn:
            i += 1
            continue
        if "=" in s and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", s):
            run.wk.assignment(s)
            i += 1
            continue
        rest = args[i:]
        break
    while rest and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", rest[0].text):
        rest = rest[1:]
    if rest:
        run.sub(rest)


def _shq(s: str) -> str:
    import shlex
    return shlex.quote(s)


def _shell(run: _Run) -> None:
    name, args = run.name, run.args
    i = 0
    code: str | None = None
    code_w: W | None = None
    while i < len(args):
        s = args[i].text
        if args[i].dyn:
            break
        if s == "-c" or (s.startswith("-") and not s.startswith("--") and "c" in s[1:] and s[1:].isalpha()):
            if i + 1 < len(args):
                code_w = args[i + 1]
                code = code_w.text
            else:
                code = ""
            break
        if s in ("-o", "-O", "+o", "+O", "--rcfile", "--init-file"):
            i += 2
            continue
        if s.startswith("-") or s.startswith("+"):
            if s in ("--version", "--help"):
                return
            i += 1
            continue
        break
    if code is not None and run.xargs and (not code or "{}" in code or code.strip() in (":::", "::::")):
        run.flag("unknown", f"{name} -c runs code taken from its input", risk="runs-code")
        run.acc.unresolved = True
        return
    if code is not None:
        if code_w is not None and code_w.dyn:
            if _contains_download(code_w):
                run.flag("destructive", f"{name} -c runs code fetched from the network")
                return
            run.flag("unknown", f"{name} -c with a non-literal script", risk="runs-code")
            run.acc.unresolved = True
            return
        run.code(code, f"{name} -c")
        return
    rest = args[i:]
    if rest:
        if any(w.node is not None and w.node.type == "process_substitution" and _contains_download(w)
               for w in rest[:1]):
            run.flag("destructive", f"{name} runs code fetched from the network")
            return
        run.flag("unknown", f"{name} runs a script file ({rest[0].text[:60]})", risk="runs-code")
        return
    # A shell reading commands from stdin.
    if run.ctx.download:
        run.flag("destructive", f"download piped into {name}")
        return
    if run.ctx.stdin is not None and name != "fish":
        run.code(run.ctx.stdin, f"{name} <<heredoc")  # the heredoc / here-string is the script
        return
    run.flag("unknown", f"{name} executes commands from stdin", risk="runs-code")


def _contains_download(w: W) -> bool:
    node = w.node
    if node is None:
        return any(d in w.text for d in ("curl", "wget"))
    stack = [node]
    while stack:
        n = stack.pop()
        if n.type == "command_name":
            if _prog_name(W(_t(n))) in _DOWNLOADERS:
                return True
        stack.extend(n.children)
    return False


_PY_SAFE_MODULES = frozenset("json sys math re base64 datetime time platform hashlib textwrap string itertools "
                             "collections functools pprint decimal fractions statistics random uuid "
                             "unicodedata calendar binascii struct html keyword operator numbers "
                             "copy enum typing dataclasses zlib locale".split())
_PY_DANGEROUS = _LazyRe(
    r"\b(open|exec|eval|compile|__import__|importlib|os|subprocess|shutil|pathlib|Path|socket|urllib|requests|"
    r"http|ctypes|getattr|setattr|delattr|globals|locals|vars|system|popen|remove|unlink|rmtree|rmdir|"
    r"write_text|write_bytes|mkdir|makedirs|rename|replace|chmod|chown|input|breakpoint|pickle|marshal|"
    r"tempfile|sqlite3|pty|signal|multiprocessing|threading|asyncio|builtins|__builtins__|__class__|"
    r"__subclasses__|__globals__|code|codecs|io|fileinput|glob|zipfile|tarfile|webbrowser|setuptools|pip|"
    r"runpy|site|sysconfig)\b")
_INLINE_DESTRUCTIVE = _LazyRe(
    r"rmtree|rmSync|rmdirSync|unlinkSync|rm_rf|rm_r\b|FileUtils\.rm|os\.remove|os\.unlink|unlink\s*\(|"
    r"remove_dir_all|Remove-Item", re.I)
# Shell text inside inline code only matters when the code can execute it (system/exec/subprocess...).
_INLINE_SHELL_DESTRUCTIVE = _LazyRe(
    r"\brm\s+-[a-zA-Z]*[rRf]|del\s+/[sq]|format\s+c:|mkfs|"
    r"git\s+(reset\s+--hard|clean\s+-[a-z]*f|push\s+(-f|--force))|DROP\s+(TABLE|DATABASE)", re.I)
_INLINE_EXEC = _LazyRe(r"system|exec|spawn|popen|subprocess|child_process|Process|`|\bsh\b|shell")


def _interpreter(run: _Run) -> None:
    name, args = run.name, run.args
    is_py = name.startswith("python") or name.startswith("pypy")
    code: str | None = None
    code_dyn = False
    i = 0
    flag_code = {"-c"} if is_py else {"-e", "-E", "--eval", "-p", "--print", "-r", "-x"}
    if name in ("deno", "bun") and args and args[0].text == "eval":
        code = " ".join(a.text for a in args[1:])
        code_dyn = any(a.dyn for a in args[1:])
        i = len(args)
    while code is None and i < len(args):
        a = args[i]
        s = a.text
        if a.dyn:
            break
        if s in ("--version", "-V", "-VV", "--help", "-h", "-v") and len(args) == 1:
            if s == "-v" and is_py:
                break
            return
        if s in flag_code or (is_py and s.startswith("-") and not s.startswith("--") and s.endswith("c")
                              and s[1:].isalpha()):
            if i + 1 < len(args):
                code = args[i + 1].text
                code_dyn = args[i + 1].dyn
            else:
                code = ""
            break
        if not is_py and s.startswith("-") and not s.startswith("--") and "e" in s[1:] and s[1:].isalpha():
            # perl -pe / -ne / -pie: code follows; -i means edit files in place
            if "i" in s[1:] and name in ("perl", "ruby"):
                files = [w for w in args[i + 2:] if not w.text.startswith("-")]
                for f in files:
                    run.write(f, f"{name} -i")
                if not files:
                    run.flag("mutating", f"{name} -i edits files in place")
            code = args[i + 1].text if i + 1 < len(args) else ""
            code_dyn = i + 1 < len(args) and args[i + 1].dyn
            break
        if is_py and s == "-m" and i + 1 < len(args):
            mod = args[i + 1].text
            # Only modules that do not import or run user code (pydoc/timeit import and execute).
            if mod in ("json.tool", "calendar", "tokenize", "sysconfig", "platform"):
                if mod == "json.tool":
                    outs = [w for w in args[i + 2:] if not w.text.startswith("-")]
                    if len(outs) >= 2:
                        run.write(outs[1], "python -m json.tool")
                return
            if mod in ("pip", "pip3"):
                _pip(_Run(run.wk, run.ctx, run.depth, "pip", args[i + 2:], run.xargs))
                return
            run.flag("unknown", f"{name} -m {mod} runs a module", risk="runs-code")
            return
        if s.startswith("-") and s != "-":
            if s in ("-W", "-X", "--require", "-r", "-I", "--import") and i + 1 < len(args):
                i += 2
                continue
            i += 1
            continue
        break
    if code is None:
        rest = args[i:]
        if rest and rest[0].text != "-":
            run.flag("unknown", f"{name} runs a script ({rest[0].text[:60]})", risk="runs-code")
            return
        if run.ctx.download:
            run.flag("destructive", f"download piped into {name}")
            return
        if run.ctx.stdin is None:
            run.flag("unknown", f"{name} executes code from stdin", risk="runs-code")
            return
        code = run.ctx.stdin  # a heredoc / here-string is the program: judge it like inline code
    if name in ("perl", "ruby") and not code_dyn:
        inplace = any(re.fullmatch(r"-[a-zA-Z]*i\S*", a.text) for a in args[:i + 1]) or \
            any(a.text.startswith("-i") for a in args[:i])
        if inplace:
            files = [w for w in args[i + 2:] if not w.text.startswith("-")]
            for f in files:
                run.write(f, f"{name} -i")
            if not files:
                run.flag("mutating", f"{name} -i edits files in place")
        if re.fullmatch(r"\s*((s|y|tr)([/|#!,])[^;]*?\3[^;]*?\3[a-z]*|print[^;`]*|chomp)\s*;?\s*", code) and \
                "`" not in code and "system" not in code:
            return  # a pure substitution / print filter (-p / -n / -i)
    if code_dyn:
        run.flag("unknown", f"{name} inline code is not literal", risk="runs-code")
        run.acc.unresolved = True
        return
    if _INLINE_DESTRUCTIVE.search(code) or (_INLINE_EXEC.search(code) and _INLINE_SHELL_DESTRUCTIVE.search(code)):
        run.flag("destructive", f"{name} inline code deletes or rewrites data")
        return
    if _INLINE_EXEC.search(code):
        # Look at string literals that look like shell commands.
        for lit in re.findall(r"\"([^\"]{2,})\"|'([^']{2,})'", code):
            s = lit[0] or lit[1]
            sub = analyze(s) if len(s) < 2000 else None
            if sub is not None and sub.kind == "destructive":
                run.flag("destructive", f"{name} inline code runs a destructive command")
                return
    if is_py and _py_read_only(code):
        return
    run.flag("unknown", f"{name} runs inline code", risk="runs-code")


def _py_read_only(code: str) -> bool:
    import ast  # lazy: only inline Python needs it

    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return False  # not Python we can vouch for (e.g. shell text passed to -c by mistake)
    if _PY_DANGEROUS.search(code.replace("sys.stdout.write", "").replace("sys.stderr.write", "")):
        return False
    for m in re.finditer(r"\bimport\s+([\w., ]+)|\bfrom\s+([\w.]+)\s+import", code):
        mods = (m.group(1) or m.group(2) or "").replace(" ", "").split(",")
        for mod in mods:
            if mod.split(".")[0] not in _PY_SAFE_MODULES:
                return False
    return True


# ----------------------------------------------------------------------------------------------------------
# file utilities


def _rm(run: _Run) -> None:
    opts, pos = _split_opts(run.args)
    if _has(opts, "--help", "--version") and not pos:
        return
    recursive = _has(opts, "-r", "-R", "--recursive", "--dir", "-d") and _has(opts, "-r", "-R", "--recursive")
    if not pos:
        if run.xargs:
            run.acc.unresolved = True
            run.flag("destructive" if recursive else "mutating", f"{run.name} deletes paths from stdin")
            return
        # `ls | rm -rf`: rm ignores stdin, so this deletes nothing -- but it reads as an attempt whose
        # operands went missing (quoting, a lost xargs): not something to auto-allow.
        run.flag("unknown", f"{run.name} without operands")
        return
    for p in pos:
        bad = _dangerous_target(p)
        if bad and not recursive and p.literal and not p.glob:
            # Without -r, rm refuses directories: `rm .` or `rm /` deletes nothing.
            run.delete(p, run.name)
        elif bad:
            run.delete(p, f"{run.name} ({bad})", "destructive")
        elif _temp_path(p) and not (p.dyn and run.wk.assigned & {"TMPDIR", "TMP", "TEMP"}):
            # (`TMPDIR=/x rm -rf $TMPDIR/y`: bash expands $TMPDIR with the *inherited* value, but the command
            # evidently means the assigned one -- a non-temp path -- so any assignment voids the exemption.)
            # Scratch space: reported, but not "destructive" (peers agree: safety-net allows it).
            run.delete(p, f"{run.name} (temporary path)")
        elif not p.literal:
            run.delete(p, f"{run.name} (unresolved target)", "destructive")
        elif _SYSTEM_PATH.match(p.text):
            run.delete(p, f"{run.name} of a system path", "destructive")
        elif recursive and _VCS_DIR.search(p.text):
            run.delete(p, f"{run.name} -r of version-control metadata (history is lost)", "destructive")
        elif recursive and not _confined(p.text, run.ctx):
            run.delete(p, f"{run.name} -r outside the working directory", "destructive")
        elif recursive:
            # A literal path inside the working directory: the pipeline sees it in `deletes` and applies
            # scope / protected paths / approval to it; it is not blind damage.
            run.delete(p, f"{run.name} -r")
        else:
            run.delete(p, run.name)
    if run.xargs:
        run.acc.unresolved = True
        if recursive:
            run.flag("destructive", f"{run.name} -r on paths from stdin")


_CRITICAL = _LazyRe(r"^(/|/\*|~|~/|~/\*|\.|\./|\.\.|\.\./|\*|/(bin|boot|dev|etc|home|lib|lib64|opt|proc|root|"
                       r"sbin|srv|sys|usr|var|Users|System|Library|Applications)/?\*?)$")


_SYSTEM_PATH = _LazyRe(r"^/(etc|usr|bin|sbin|boot|lib|lib32|lib64|opt|sys|proc|root|dev|srv|var/(?!tmp/)|"
                          r"System|Library|Applications|private/(?!tmp/|var/tmp/))")
_VCS_DIR = _LazyRe(r"(^|/)\.(git|hg|svn|jj|orchestration)(/|$)")
_TEMP_RE = _LazyRe(r"^(/tmp|/var/tmp|/private/tmp|/private/var/tmp|/dev/shm)/+[^/]")
_TMPVAR_RE = _LazyRe(r'^"?\$(\{TMPDIR(:-/tmp)?\}|TMPDIR|\{TMP\}|TMP|\{TEMP\}|TEMP)/+[^/$]')


def _temp_path(w: W) -> bool:
    t = w.text
    if ".." in t.split("/"):
        return False
    if w.literal:
        return bool(_TEMP_RE.match(t))
    return bool(_TMPVAR_RE.match(t)) and not w.glob and t.count("$") == 1


def _confined(p: str, ctx: _Ctx) -> bool:
    """A literal relative path that stays inside the command's working directory."""
    if p.startswith(("/", "~")) or ctx.cwd is None:
        return False
    if ctx.cwd and ctx.cwd.startswith(("/", "..")):
        return False
    n = posixpath.normpath(posixpath.join(ctx.cwd or ".", p))
    return n not in (".", "..") and not n.startswith("../") and n != ""


def _dangerous_target(w: W) -> str:
    t = w.text
    if _CRITICAL.match(t.rstrip("/") or "/") or _CRITICAL.match(t):
        return "critical path"
    if w.dyn:
        v = t.strip('"')
        if re.fullmatch(r"\$\{?HOME\}?/?\*?|\$\{?[A-Za-z_]\w*\}?/?\*?|\$\{?[A-Za-z_]\w*\}?/\*", v):
            return "variable target (may be empty or /)"
    return ""


def _simple_targets(run: _Run, valued: Iterable[str] = (), skip_first: int = 0, kind: str = "mutating",
                    why: str | None = None) -> None:
    opts, pos = _split_opts(run.args, valued)
    if _has(opts, "--help", "--version") and not pos:
        return
    for p in pos[skip_first:]:
        run.write(p, why or run.name, kind)
    if not pos[skip_first:]:
        run.acc.unresolved = run.acc.unresolved or run.xargs
        run.flag(kind, f"{run.name} modifies files")


def _touch(run: _Run) -> None:
    _simple_targets(run, ("-d", "-t", "-r", "--date", "--reference"))


def _mkdir(run: _Run) -> None:
    _simple_targets(run, ("-m", "--mode", "-Z", "--context"))


def _chmod_like(run: _Run) -> None:
    valued = ("--reference",) if run.name == "chmod" else ("--reference", "--from")
    args = run.args
    # chmod modes like -w / -x look like options; treat a leading -[rwxXst]+ as the mode.
    opts, pos = _split_opts([a for a in args if not re.fullmatch(r"[-+=][rwxXstugo]+", a.text)], valued)
    mode_from_flag = any(re.fullmatch(r"[-+=][rwxXstugo]+", a.text) for a in args)
    if _has(opts, "--help", "--version") and not pos:
        return
    skip = 0 if (mode_from_flag or "--reference" in opts) else 1
    targets = pos[skip:]
    recursive = _has(opts, "-R", "--recursive")
    mode = pos[0].text if pos and skip else ""
    for p in targets:
        bad = _dangerous_target(p)
        if p.literal and _SYSTEM_PATH.match(p.text) and (recursive or mode in ("777", "0777", "a+rwx", "000")):
            run.write(p, f"{run.name} on a system path", "destructive")
        elif bad and recursive:
            run.write(p, f"{run.name} -R on {bad}", "destructive")
        elif bad and p.text in ("/",):
            run.write(p, f"{run.name} on {bad}", "destructive")
        else:
            run.write(p, run.name)
    if recursive and mode in ("777", "a+rwx", "0777", "000", "0000") and any(_dangerous_target(p) for p in targets):
        run.flag("destructive", f"{run.name} -R {mode} on a critical path")
    if not targets:
        run.flag("mutating", f"{run.name} changes file attributes")
        run.acc.unresolved = True


def _cp_like(run: _Run) -> None:
    """cp / mv / ln / install: the last positional (or -t DIR) is written; mv also deletes its sources."""
    # --backup, --preserve, --reflink and --context take a value only as "--opt=value"; -Z takes none
    valued = ["-t", "--target-directory", "-S", "--suffix", "-m", "--mode", "-o", "--owner",
              "-g", "--group", "--sparse", "--no-preserve"]
    if run.name == "install":
        valued += ["-o", "-g", "-m", "-t"]
    opts, pos = _split_opts(run.args, valued)
    if _has(opts, "--help", "--version") and not pos:
        return
    target = opts.get("-t") or opts.get("--target-directory")
    if target:
        dest: W | None = W(target[-1])
        srcs = pos
    elif len(pos) >= 2:
        dest, srcs = pos[-1], pos[:-1]
    elif len(pos) == 1 and run.name == "ln":
        dest, srcs = W(posixpath.basename(pos[0].text.rstrip("/")) or pos[0].text, pos[0].dyn, pos[0].glob), pos
    elif run.name == "install" and _has(opts, "-d", "--directory"):
        for p in pos:
            run.write(p, "install -d")
        return
    else:
        dest, srcs = None, pos
    if run.name == "install" and _has(opts, "-d", "--directory"):
        for p in pos:
            run.write(p, "install -d")
        return
    if dest is not None:
        if run.xargs:
            run.acc.unresolved = True
        kind = "mutating"
        if run.name == "mv" and dest.literal and (dest.text in ("/dev/null",) or _DEV_BLOCK.match(dest.text)):
            run.flag("destructive", f"mv onto the device {dest.text}")
        acc = run.wk.acc
        before = len(acc.writes)
        run.write(dest, run.name, kind)
        if len(acc.writes) > before:
            # -T, --parents or a source "x/." do not make DIR/<basename>: anything in DIR may be new
            named = not _has(opts, "-T", "--no-target-directory", "--parents") and \
                all(posixpath.basename(p.text.rstrip("/")) not in ("", ".", "..") for p in srcs)
            acc.entries.append((len(acc.writes) - 1, _entry_op(run.name, opts), _sources(run, srcs), named))
        if len(srcs) > 1 or (srcs and srcs[0].glob):
            run.acc.unresolved = True  # dest is a directory: the written names are dest/<basename>
    else:
        run.acc.unresolved = True
        run.flag("mutating", f"{run.name} with targets from elsewhere")
    if run.name == "mv":
        for s in srcs:
            run.delete(s, "mv (source)")


def _sources(run: _Run, srcs: list[W]) -> tuple[str, ...]:
    """The literal sources of an entry-making command, as paths relative to the call's cwd. A ``..`` in a
    *source* is read, not written through: it must not raise the ``dotdot`` flag meant for write targets."""
    acc = run.wk.acc
    flag, unresolved = acc.dotdot, acc.unresolved
    out = tuple(run.wk._path(p, run.ctx) for p in srcs if p.literal)
    acc.dotdot, acc.unresolved = flag, unresolved
    return out


#: cp options that make the copy a link
_CP_LINK = ("-l", "--link", "-s", "--symbolic-link")
#: cp options under which links in the source are copied as links
_CP_NODEREF = ("-P", "--no-dereference", "-d", "-a", "--archive")
_CP_LONG = frozenset("""--archive --attributes-only --backup --copy-contents --debug --force --interactive --link
--dereference --no-clobber --no-dereference --preserve --no-preserve --parents --recursive --reflink
--remove-destination --sparse --strip-trailing-slashes --symbolic-link --suffix --target-directory
--no-target-directory --update --verbose --one-file-system --context --keep-directory-symlink --help
--version""".split())


def _entry_op(name: str, opts: dict[str, list[str]]) -> str:
    """How ``name`` makes its destination entry (see ShellAnalysis.entries)."""
    if name in ("ln", "link"):
        return "ln"
    if name == "mv":
        return "mv"
    if name == "install":
        return "replace"
    if _has(opts, *_CP_LINK) or any(o.startswith("--") and o not in _CP_LONG for o in opts):
        return "ln"  # GNU accepts abbreviations (--lin, --sym): an option we do not know may make links
    recursive_keeps_links = _has(opts, "-r", "-R", "--recursive") and not _has(opts, "-L", "--dereference")
    if _has(opts, *_CP_NODEREF) or recursive_keeps_links or "links" in ",".join(opts.get("--preserve", [])):
        return "cplink"
    return "copy"


def _tee(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("--output-error",))
    if run.xargs:
        run.acc.unresolved = True
        run.flag("mutating", "tee writes files named on its input")
    for p in pos:
        run.write(p, "tee")


def _dd(run: _Run) -> None:
    if run.xargs:
        run.flag("unknown", "dd with operands taken from input")
        run.acc.unresolved = True
    for a in run.args:
        if a.text.startswith("of="):
            w = W(a.text[3:], a.dyn, a.glob)
            run.write(w, "dd of=")
            if w.text.startswith("/dev/") and not _DEV_NULLISH.match(w.text):
                run.flag("destructive", f"dd writes to device {w.text}")


def _truncate(run: _Run) -> None:
    _simple_targets(run, ("-s", "--size", "-r", "--reference"))


def _shred(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-n", "--iterations", "-s", "--size", "--random-source"))
    if _has(opts, "--help", "--version") and not pos:
        return
    for p in pos:
        if _has(opts, "-u", "--remove", "--zero", "-z") or True:
            run.delete(p, "shred", "destructive")
    if not pos:
        run.flag("destructive", "shred overwrites data")


def _unlink(run: _Run) -> None:
    opts, pos = _split_opts(run.args)
    for p in pos:
        kind = "destructive" if not p.literal else "mutating"
        run.delete(p, run.name, kind)
    if not pos and run.xargs:
        run.acc.unresolved = True
        run.flag("mutating", f"{run.name} deletes paths from stdin")


def _rmdir(run: _Run) -> None:
    _unlink(run)


def _sed(run: _Run) -> None:
    args = run.args
    inplace = False
    script_given = False
    files: list[W] = []
    i = 0
    scripts: list[str] = []
    while i < len(args):
        a = args[i]
        s = a.text
        if a.dyn and not script_given:
            script_given = True
            scripts.append(s)
        elif s == "--":
            files.extend(args[i + 1:])
            break
        elif s.startswith("--in-place") or (s.startswith("-") and not s.startswith("--") and "i" in s[1:]
                                            and not s[1:2] in ("e", "f", "l")):
            # -i, -i.bak, -Ei, -ni, -i's/x/y/' (BSD-style glued suffix)
            inplace = True
            if s.startswith("-i") and len(s) > 2 and not s[2:].startswith((".", "~")) and not s[2:].isalpha():
                # -is/a/b/ : GNU reads "s/a/b/" as the backup suffix; treat as script-ish
                pass
            if s == "-i" and i + 1 < len(args) and args[i + 1].text == "" and args[i + 1].node is not None:
                i += 1  # BSD: sed -i '' script
        elif s in ("-e", "--expression") and i + 1 < len(args):
            scripts.append(args[i + 1].text)
            script_given = True
            i += 1
        elif s.startswith("--expression="):
            scripts.append(s.split("=", 1)[1])
            script_given = True
        elif s in ("-f", "--file") and i + 1 < len(args):
            script_given = True
            scripts.append("\x00file")
            i += 1
        elif s in ("-l", "--line-length", "-s", "--separate", "-n", "--quiet", "--silent", "-E", "-r",
                   "--regexp-extended", "-z", "--null-data", "-u", "--unbuffered", "--posix", "--debug",
                   "--sandbox", "--follow-symlinks", "-b", "--binary") or (s.startswith("-") and len(s) > 1
                                                                           and s[1:].isalpha()):
            if s in ("-l", "--line-length"):
                i += 1
            elif "e" in s[1:] and not s.startswith("--"):
                scripts.append(args[i + 1].text if i + 1 < len(args) else "")
                script_given = True
                i += 1
        elif not script_given:
            scripts.append(s)
            script_given = True
        else:
            files.append(a)
        i += 1
    for sc in scripts:
        if sc == "\x00file":
            run.flag("unknown", "sed -f runs a script file", risk="runs-code")
        elif _sed_script_writes(sc):
            run.flag("unknown", "sed script writes files or runs commands (w/W/e)")
    if inplace:
        for f in files:
            run.write(f, "sed -i")
        if not files:
            run.acc.unresolved = True
            run.flag("mutating", "sed -i edits files in place")


def _sed_script_writes(sc: str) -> bool:
    # GNU sed commands w/W write a file and e executes; s///w and s///e as well. Writing to
    # /dev/stdout, /dev/stderr or /dev/null is harmless.
    sc = re.sub(r"([wW])\s*/dev/(stdout|stderr|null)\s*($|\n|;|})", r"\3", sc)
    if re.search(r"(^|[;{}\n]|\d|/|\$)\s*[wWe]\s", sc) or re.search(r"(^|[;{}\n])\s*e\s*($|;)", sc):
        return True
    if re.search(r"s(.).*?\1.*?\1[gpIiMm0-9]*[we]", sc):
        return True
    return False


def _awk(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-F", "-v", "-f", "--file", "-i", "--include", "-l", "--load",
                                      "--field-separator", "--assign"))
    if _has(opts, "--version", "--help", "-V") and not pos:
        return
    if _has(opts, "-f", "--file"):
        run.flag("unknown", f"{run.name} -f runs a program file", risk="runs-code")
        return
    if "inplace" in opts.get("-i", []) + opts.get("--include", []):
        for p in pos[1:]:
            run.write(p, f"{run.name} -i inplace")
        return
    if not pos:
        return
    prog = pos[0].text
    if pos[0].dyn:
        run.flag("unknown", f"{run.name} program is not literal", risk="runs-code")
        return
    flat = prog
    for _ in range(4):  # `print ($1 > 0 ? ...)`: a comparison inside parentheses is not a redirection
        flat = re.sub(r"\([^()]*\)", "(_)", flat)
    if (re.search(r"\bsystem\s*\(", prog) or re.search(r"\|\s*&?\s*getline", prog)
            or re.search(r"\b(print|printf)\b[^;{}]*?(>|\|)", flat) or re.search(r"\bfflush\b|\bclose\b", prog)):
        # print > "file", print | "cmd", cmd | getline, system(...)
        # Every output redirection goes to a standard stream (or /dev/null): nothing is written to disk.
        targets = re.findall(r"\b(?:print|printf)\b[^;{}]*?>>?\s*(\"[^\"]*\"|[^\s;}]+)", flat)
        if all(re.fullmatch(r"\"/dev/(stderr|stdout|stdin|null)\"", t) for t in targets) and \
                not re.search(r"\bsystem\s*\(|\|", prog):
            return
        run.flag("unknown", f"{run.name} program writes files or runs commands")


_FIND_VALUED = frozenset("""-name -iname -path -ipath -regex -iregex -type -xtype -user -group -perm -size -mtime
-atime -ctime -mmin -amin -cmin -newer -anewer -cnewer -maxdepth -mindepth -wholename -iwholename -lname -ilname
-inum -links -uid -gid -samefile -fstype -used -context -regextype -printf -print0f -D -O -files0-from""".split())


def _find(run: _Run) -> None:
    args = run.args
    i = 0
    while i < len(args):
        s = args[i].text
        if s in _FIND_VALUED or s.startswith("-newer"):
            i += 2
            continue
        if s in ("-delete",):
            # The deleted paths are whatever find matches: no path to report, only `unresolved`.
            run.acc.unresolved = True
            run.flag("destructive", "find -delete")
        elif s in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            inner: list[W] = []
            while j < len(args) and args[j].text not in (";", "+"):
                inner.append(args[j])
                j += 1
            roots = _find_roots(args)
            if len(roots) == 1 and roots[0].literal and (_confined(roots[0].text, run.ctx) or
                                                         _temp_path(roots[0]) or roots[0].text == "."):
                # {} is a path under a single literal root -- possibly the root itself (find . prints "."),
                # so judge the command as if applied to the root: `find . -exec rm -rf {} ;` = `rm -rf .`.
                base = roots[0].text.rstrip("/") or "."
                inner = [W(w.text.replace("{}", base), w.dyn, w.glob, w.node) for w in inner]
                run.acc.unresolved = True
                _run_argv(run.wk, inner, run.ctx, run.depth + 1, xargs=False)
            else:
                _run_argv(run.wk, inner, run.ctx, run.depth + 1, xargs=True)
            if any("{}" in w.text for w in inner):
                run.acc.unresolved = run.acc.unresolved or run.acc.rank > 0
            i = j
        elif s in ("-fprint", "-fprint0", "-fls", "-fprintf") and i + 1 < len(args):
            run.write(args[i + 1], f"find {s}")
            i += 1
        i += 1


def _find_roots(args: list[W]) -> list[W]:
    out = []
    for a in args:
        if a.text.startswith("-") or a.text in ("(", "!", ")"):
            break
        out.append(a)
    return out or [W(".")]


def _xargs(run: _Run) -> None:
    valued = ("-I", "-i", "-L", "-l", "-n", "-P", "-d", "-E", "-e", "-s", "-a", "-J", "-R", "-S",
              "--max-args", "--max-procs", "--delimiter", "--eof", "--max-chars", "--arg-file",
              "--max-lines", "--replace", "--process-slot-var")
    # options with optional glued values (-i, -l, -e) only count when glued; handle explicitly.
    args = run.args
    i = 0
    while i < len(args):
        s = args[i].text
        if not s.startswith("-") or args[i].dyn:
            break
        if s == "--":
            i += 1
            break
        if s.startswith("--"):
            name = s.split("=", 1)[0]
            if "=" not in s and name in valued and name not in ("--replace", "--eof", "--max-lines"):
                i += 1
            i += 1
            continue
        head = s[:2]
        if head in ("-i", "-l", "-e"):
            i += 1
            continue
        if head in valued and len(s) == 2:
            i += 2
            continue
        i += 1
    inner = args[i:]
    repl = None
    for k, a in enumerate(args[:i]):
        t = a.text
        if t == "-I" and k + 1 < i:
            repl = args[k + 1].text
        elif t.startswith("-I") and len(t) > 2:
            repl = t[2:]
        elif t.startswith("--replace="):
            repl = t.split("=", 1)[1] or "{}"
        elif t in ("-i", "--replace"):
            repl = "{}"
        elif t.startswith("-i") and len(t) > 2:
            repl = t[2:]
    if repl and repl != "{}":
        # Custom replace-string: normalise to {} so the argument is treated as input-dependent.
        inner = [W(w.text.replace(repl, "{}"), w.dyn, w.glob, w.node) if repl in w.text else w for w in inner]
    if not inner:
        # Without a command xargs runs `echo` -- but we do not vouch for what it is really meant to feed
        # (a mis-parsed option value, a command lost to quoting): ask.
        run.flag("unknown", "xargs without an explicit command")
        return
    if any(a.text in ("-p", "--interactive", "-o", "--open-tty") or
           (a.text.startswith("-") and not a.text.startswith("--") and a.text[1:].isalpha()
            and ("p" in a.text[1:] or "o" in a.text[1:]) and a.text[:2] not in ("-I", "-i", "-e", "-E", "-l",
                                                                               "-L", "-d", "-a"))
           for a in args[:i]):
        # -p prompts on the terminal before each command; -o reopens the tty as stdin of the command
        # (interactive programs): the run depends on a human's answers.
        run.flag("unknown", "xargs -p/-o runs commands interactively")
        return
    run.sub(inner, xargs=True)


def _tar(run: _Run) -> None:
    args = run.args
    if not args:
        return
    first = args[0].text
    modes = set()
    letters = first if not first.startswith("-") else ""
    for a in args:
        s = a.text
        if s.startswith("--"):
            name = s.split("=", 1)[0]
            modes.add({"--extract": "x", "--get": "x", "--create": "c", "--list": "t", "--append": "r",
                       "--update": "u", "--delete": "d", "--concatenate": "A", "--catenate": "A",
                       "--diff": "D", "--compare": "D"}.get(name, ""))
        elif s.startswith("-") and len(s) > 1:
            letters += s[1:]
    for ch in "xctruAd":
        if ch in letters.split("f")[0] + letters:
            modes.add(ch if ch != "d" or "--delete" in [a.text for a in args] else "")
    # archive file
    fval = None
    for idx, a in enumerate(args):
        s = a.text
        if s.startswith("--file="):
            fval = W(s.split("=", 1)[1], a.dyn, a.glob)
        elif s == "--file" or (s.startswith("-") and not s.startswith("--") and s.endswith("f")) or \
                (idx == 0 and not s.startswith("-") and s.endswith("f")):
            if idx + 1 < len(args):
                fval = args[idx + 1]
    cdir = None
    for idx, a in enumerate(args):
        if a.text in ("-C", "--directory") and idx + 1 < len(args):
            cdir = args[idx + 1]
        elif a.text.startswith("--directory="):
            cdir = W(a.text.split("=", 1)[1])
    to_cmd = False
    for k, a in enumerate(args):
        t = a.text
        if t.startswith("--to-command") and "x" in modes:
            # Extracted file contents are piped into this command instead of being written to disk.
            cmd = t.split("=", 1)[1] if "=" in t else (args[k + 1].text if k + 1 < len(args) else "")
            cmd_w = W(cmd, a.dyn if "=" in t else (args[k + 1].dyn if k + 1 < len(args) else True))
            if not cmd or cmd_w.dyn:
                run.flag("unknown", "tar --to-command with a non-literal command")
                return
            run.code(cmd, "tar --to-command")
            to_cmd = True
            continue
        if t.startswith(("--checkpoint-action", "--to-command", "--use-compress-program", "--info-script",
                         "--new-volume-script", "--rsh-command", "--rmt-command", "-I", "-F")) and \
                not t.startswith("--file"):
            run.flag("unknown", f"tar {t.split('=', 1)[0]} runs a command")
            return
    if "x" in modes and to_cmd:
        return
    if "x" in modes:
        run.acc.unresolved = True
        run.write(cdir or W("."), "tar extract")
        if any(a.text in ("--overwrite", "--recursive-unlink", "--unlink-first", "-U") for a in args):
            run.flag("destructive", "tar extract overwrites existing files")
        return
    if modes & {"c", "r", "u", "A", "d"}:
        if fval is not None and fval.text != "-":
            run.write(fval, "tar create")
        elif fval is None:
            run.flag("mutating", "tar writes an archive")
        if any(a.text == "--remove-files" for a in args):
            run.acc.unresolved = True
            run.flag("destructive", "tar --remove-files deletes the sources")
        return
    if "t" in modes or "D" in modes:
        return
    run.flag("unknown", "tar mode not recognised")


def _unzip(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-d", "-x", "-P"))
    if _has(opts, "-l", "-t", "-v", "-Z", "-z", "-p", "-c", "--help") or (not pos):
        return
    run.acc.unresolved = True
    dest = opts.get("-d")
    run.write(W(dest[-1]) if dest else W("."), "unzip extract")
    if _has(opts, "-o"):
        run.flag("mutating", "unzip -o overwrites files")


def _zip(run: _Run) -> None:
    if any(a.text in ("-TT", "--unzip-command") or a.text.startswith("--unzip-command=") for a in run.args):
        run.flag("unknown", "zip -TT runs a test command")
        return
    opts, pos = _split_opts(run.args, ("-b", "-n", "-t", "-tt", "-x", "-i", "-O", "--out", "-P", "-Z"))
    if _has(opts, "--help", "-h", "-v") and not pos:
        return
    if _has(opts, "-sf", "-T") and not _has(opts, "-d", "-m"):
        pass
    if pos:
        run.write(pos[0], run.name)
    if _has(opts, "-m", "--move"):
        run.acc.unresolved = True
        run.flag("destructive", f"{run.name} -m deletes the originals")


def _compressor(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-S", "--suffix", "-b", "-T", "--threads", "-o"))
    if _has(opts, "-c", "--stdout", "--to-stdout", "-l", "--list", "-t", "--test", "-h", "--help", "-V",
            "--version", "-L", "--license"):
        return
    if not pos:
        return  # filter stdin -> stdout
    for p in pos:
        run.write(p, run.name)
        run.delete(p, f"{run.name} replaces")


def _patch(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-p", "-i", "--input", "-d", "--directory", "-o", "--output", "-F",
                                      "-z", "--suffix", "-B", "-D", "-V", "-r", "--reject-file"))
    if _has(opts, "--dry-run", "-C", "--check", "--help", "--version"):
        return
    run.acc.unresolved = True
    if pos:
        run.write(pos[0], "patch")
    else:
        run.flag("mutating", "patch modifies the files named in the diff")


def _rsync(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-e", "--rsh", "--exclude", "--include", "--filter", "-f",
                                      "--exclude-from", "--include-from", "--files-from", "--chmod",
                                      "--backup-dir", "--suffix", "--log-file", "--password-file",
                                      "--port", "--timeout", "--bwlimit", "-T", "--temp-dir",
                                      "--partial-dir", "--compare-dest", "--copy-dest", "--link-dest",
                                      "-B", "--block-size", "--max-size", "--min-size", "--out-format",
                                      "--info", "--debug", "--rsync-path", "-M", "--remote-option"))
    if _has(opts, "--help", "--version") and not pos:
        return
    for v in opts.get("-e", []) + opts.get("--rsh", []):
        if not re.match(r"^\s*(ssh|/usr/bin/ssh)(\s|$)", v):
            run.flag("unknown", "rsync -e runs a custom remote-shell command")
            return
    if _has(opts, "-n", "--dry-run", "--list-only"):
        return
    if len(pos) < 2:
        if len(pos) == 1 and not run.xargs:
            return  # rsync SRC lists like ls
        run.flag("mutating", "rsync")
        run.acc.unresolved = True
        return
    dest = pos[-1]
    remote = bool(re.match(r"^[^/]*:", dest.text)) or dest.text.startswith("rsync://")
    destructive = any(o.startswith("--delete") or o in ("--remove-source-files", "--del") for o in opts)
    kind = "destructive" if destructive else "mutating"
    if remote:
        run.flag(kind, f"rsync to remote {dest.text}" + (" with --delete" if destructive else ""))
    else:
        before = len(run.wk.acc.writes)
        run.write(dest, "rsync" + (" --delete" if destructive else ""), kind)
        acc = run.wk.acc
        srcs = pos[:-1]
        if _has(opts, "--link-dest"):
            op = "ln"  # hard links to the files of another tree
        else:
            linking = (_has(opts, "-a", "--archive", "-l", "--links", "-H", "--hard-links")
                       and not _has(opts, "-L", "--copy-links"))
            # rsync writes a temporary file and renames it over the destination, unless it writes in place
            inplace = _has(opts, "--inplace", "--append", "--append-verify", "--write-devices")
            op = ("cplink" if linking else "copy") if inplace else ("cplink-replace" if linking else "replace")
        if len(acc.writes) > before:
            # "SRC/" copies the *contents* of SRC into DEST: not DEST/<basename>
            named = all(not p.text.endswith("/") and posixpath.basename(p.text) not in ("", ".") for p in srcs)
            acc.entries.append((len(acc.writes) - 1, op, _sources(run, srcs), named))
    if "--remove-source-files" in opts:
        for s in pos[:-1]:
            if not re.match(r"^[^/]*:", s.text):
                run.delete(s, "rsync --remove-source-files", "destructive")


def _scp(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-P", "-i", "-o", "-F", "-c", "-l", "-S", "-J", "-D", "-X"))
    if len(pos) < 2:
        return
    dest = pos[-1]
    if re.match(r"^[^/]*:", dest.text) or dest.text.startswith("scp://"):
        path = dest.text.split(":", 1)[1] if ":" in dest.text else ""
        kind = "destructive" if path in ("/",) or _SYSTEM_PATH.match(path) else "mutating"
        run.flag(kind, f"scp to remote {dest.text}")
    else:
        run.write(dest, "scp")


def _curl(run: _Run) -> None:
    opts, pos = _split_opts(run.args, (
        "-o", "--output", "-X", "--request", "-d", "--data", "--data-raw", "--data-binary", "--data-urlencode",
        "--data-ascii", "-F", "--form", "--form-string", "-T", "--upload-file", "-H", "--header", "-u", "--user",
        "-A", "--user-agent", "-e", "--referer", "-b", "--cookie", "-c", "--cookie-jar", "-D", "--dump-header",
        "--output-dir", "-m", "--max-time", "--connect-timeout", "-x", "--proxy", "-w", "--write-out",
        "--json", "-K", "--config", "-E", "--cert", "--key", "--cacert", "-r", "--range", "-Y", "-y", "-z",
        "--retry", "--resolve", "--url", "--limit-rate", "-C", "--continue-at", "--trace", "--trace-ascii",
        "--stderr", "--libcurl", "--etag-save", "--hsts", "--alt-svc", "-Q", "--quote", "--mail-from",
        "--mail-rcpt", "--variable", "--expand-data", "--expand-header", "--aws-sigv4", "--oauth2-bearer"))
    if _has(opts, "--help", "-h", "-V", "--version", "-M", "--manual") and not pos:
        return
    for o in ("-o", "--output", "-c", "--cookie-jar", "-D", "--dump-header", "--trace", "--trace-ascii",
              "--stderr", "--libcurl", "--etag-save", "--hsts", "--alt-svc"):
        for v in opts.get(o, []):
            if v != "-":
                run.write(W(v), f"curl {o}")
    if _has(opts, "-O", "--remote-name", "--remote-name-all", "-J", "--remote-header-name"):
        run.acc.unresolved = True
        run.write(W((opts.get("--output-dir") or ["."])[-1]), "curl -O")
    if _has(opts, "-K", "--config"):
        run.flag("unknown", "curl -K reads options from a file")
    method = ""
    for v in opts.get("-X", []) + opts.get("--request", []):
        method = v.upper()
    if method == "DELETE":
        run.flag("destructive", "curl -X DELETE deletes a remote resource")
        return
    quotes = [q.lstrip("*+-").strip() for q in opts.get("-Q", []) + opts.get("--quote", [])]
    qverbs = [q.split(None, 1)[0].upper() if q else "" for q in quotes]
    if any(v in ("DELE", "RMD", "RM", "RMDIR", "XRMD") for v in qverbs):
        run.flag("destructive", "curl -Q deletes a remote file or directory")
        return
    # FTP quote commands that only query the server or change the session's directory/transfer mode.
    ftp_read = all(v in _FTP_READ_CMDS for v in qverbs)
    data = _has(opts, "-d", "--data", "--data-raw", "--data-binary", "--data-urlencode", "--data-ascii", "-F",
                "--form", "--form-string", "-T", "--upload-file", "--json", "--mail-rcpt", "--mail-from",
                "--ftp-create-dirs") or not ftp_read
    if method and method not in ("GET", "HEAD", "OPTIONS", "TRACE") or data:
        urls = " ".join(p.text for p in pos) + " " + " ".join(opts.get("--url", []))
        body = " ".join(v for o in ("-d", "--data", "--data-raw", "--data-binary", "--json") for v in opts.get(o, []))
        if _DESTRUCTIVE_ENDPOINT.search(urls) or re.search(r"\bmutation\b[^}]*\b(delete|remove|purge|drop)",
                                                             body, re.I):
            run.flag("destructive", "curl calls a destructive API endpoint")
            return
        run.flag("mutating", f"curl sends data ({method or 'POST'}) to a remote server")
    for p in pos:
        if p.text.startswith("file://"):
            pass


_FTP_READ_CMDS = frozenset("PWD XPWD LIST NLST STAT SIZE MDTM NOOP HELP SYST TYPE PASV EPSV CWD XCWD CDUP "
                           "XCUP FEAT MLST MLSD".split())
_DESTRUCTIVE_ENDPOINT = _LazyRe(r"(?i)(/|_|\b)(do)?(delete|remove|purge|drop|wipe|destroy|truncate|shutdown|"
                                   r"_close|flush)(_by_query|_series|-batch|\b|[A-Z_/?-])")


def _wget(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-O", "--output-document", "-o", "--output-file", "-a", "--append-output",
                                      "-P", "--directory-prefix", "-i", "--input-file", "--method", "--body-data",
                                      "--post-data", "--post-file", "--body-file", "-U", "--user-agent",
                                      "--header", "-t", "--tries", "-T", "--timeout", "-e", "--execute",
                                      "--user", "--password", "-w", "--wait", "-Q", "--quota", "-l", "--level",
                                      "-A", "--accept", "-R", "--reject", "-D", "--domains", "--load-cookies",
                                      "--save-cookies", "--ca-certificate", "--certificate", "--private-key"))
    if _has(opts, "--help", "-h", "-V", "--version") and not pos:
        return
    method = (opts.get("--method") or [""])[-1].upper()
    if method == "DELETE":
        run.flag("destructive", "wget --method=DELETE deletes a remote resource")
        return
    if method not in ("", "GET", "HEAD") or _has(opts, "--post-data", "--post-file", "--body-data", "--body-file"):
        run.flag("mutating", "wget sends data to a remote server")
    for o in ("-o", "--output-file", "-a", "--append-output", "--save-cookies"):
        for v in opts.get(o, []):
            run.write(W(v), f"wget {o}")
    outs = opts.get("-O", []) + opts.get("--output-document", [])
    if outs:
        for v in outs:
            if v != "-":
                run.write(W(v), "wget -O")
        return
    if _has(opts, "--spider"):
        return
    if pos or _has(opts, "-i", "--input-file"):
        run.acc.unresolved = True
        run.write(W((opts.get("-P") or opts.get("--directory-prefix") or ["."])[-1]), "wget download")


def _kill(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-s", "-n"))
    if _has(opts, "-l", "-L", "--list") or not run.args:
        return
    targets = [a.text for a in run.args if not a.text.startswith("-") or re.fullmatch(r"-\d+", a.text)]
    raw = [a.text for a in run.args]
    if "-1" in raw[1:] or (raw and raw[-1] == "-1") or "1" == (targets[-1] if targets else ""):
        if raw.count("-1") >= 1 and (len(raw) >= 2 or raw[-1] == "-1"):
            run.flag("destructive", "kill -1 signals every process")
            return
    run.flag("mutating", f"{run.name} signals processes")


def _dangerous_simple(kind: str, why: str) -> Callable[[_Run], None]:
    def rule(run: _Run) -> None:
        opts, pos = _split_opts(run.args)
        if _has(opts, "--help", "--version") and not pos:
            return
        run.flag(kind, why.format(name=run.name))
    return rule


def _cd(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ())
    if run.name == "popd":
        run.ctx.cwd = None
        return
    if not pos or not pos[0].literal or pos[0].text in ("-",) or pos[0].text.startswith("~"):
        run.ctx.cwd = None
        return
    target = pos[0].text
    if ".." in target.split("/"):
        run.wk.acc.dotdot = True
    if run.ctx.cwd is None:
        return
    if target.startswith("/"):
        run.ctx.cwd = posixpath.normpath(target)
    else:
        run.ctx.cwd = posixpath.normpath(posixpath.join(run.ctx.cwd, target)) if run.ctx.cwd else \
            posixpath.normpath(target)


def _eval(run: _Run) -> None:
    if any(a.dyn for a in run.args):
        if any(_contains_download(a) for a in run.args):
            run.flag("destructive", "eval of code fetched from the network")
            return
        run.flag("unknown", "eval of non-literal code", risk="runs-code")
        run.acc.unresolved = True
        return
    run.code(" ".join(a.text for a in run.args), "eval")


def _source(run: _Run) -> None:
    if run.args and run.args[0].node is not None and _contains_download(run.args[0]):
        run.flag("destructive", "sources code fetched from the network")
        return
    if run.ctx.download and (not run.args or run.args[0].text in ("/dev/stdin", "-")):
        run.flag("destructive", "download piped into source")
        return
    if run.ctx.stdin is not None and run.args and run.args[0].text in ("/dev/stdin", "/dev/fd/0", "-"):
        run.code(run.ctx.stdin, f"{run.name} /dev/stdin")
        return
    run.flag("unknown", f"{run.name} runs a script file", risk="runs-code")


def _timeout(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-s", "--signal", "-k", "--kill-after"), stop_at_first_pos=True)
    if _has(opts, "--help", "--version") and not pos:
        return
    run.sub(pos[1:])


def _watch(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-n", "--interval", "-d", "--differences", "-q", "--equexit"),
                            stop_at_first_pos=True)
    if not pos:
        return
    if len(pos) == 1:
        run.code(pos[0].text, "watch")
    else:
        run.code(" ".join(w.text for w in pos), "watch")


def _chroot(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("--userspec", "--groups"), stop_at_first_pos=True)
    if len(pos) <= 1:
        run.flag("unknown", "chroot starts a shell")
        return
    run.sub(pos[1:])


def _parallel(run: _Run) -> None:
    args = run.args
    cmd: list[W] = []
    i = 0
    valued = {"-j", "--jobs", "-S", "--sshlogin", "--delay", "--timeout", "-N", "-n", "--max-args", "-a",
              "--arg-file", "--joblog", "--results", "--tmpdir", "-I", "--colsep", "-d", "--delimiter",
              "--halt", "--memfree", "--load", "--tag-string", "--workdir", "--retries", "-L", "--max-lines",
              "-E", "--eof", "--basefile", "--shebang-wrap"}
    while i < len(args):
        s = args[i].text
        if s in (":::", "::::", ":::+", "::::+"):
            break
        if s.startswith("-") and not cmd:
            if s in valued or (len(s) == 2 and s in valued):
                i += 2
                continue
            i += 1
            continue
        cmd.append(args[i])
        i += 1
    if not cmd:
        run.flag("unknown", "parallel runs commands from its input")
        run.acc.unresolved = True
        return
    if len(cmd) == 1 and " " in cmd[0].text:
        run.code(cmd[0].text, "parallel")
        run.acc.unresolved = True
        return
    seps = [a.text for a in args[i:] if a.text in (":::", "::::", ":::+", "::::+")]
    inputs = [a for a in args[i + 1:] if a.text not in (":::", "::::", ":::+", "::::+")]
    if seps and all(x == ":::" for x in seps) and inputs and all(a.literal for a in inputs) and len(inputs) <= 64:
        # Literal inputs: run the command once per input, substituting {} (or appending the input).
        for a in inputs:
            if any("{}" in w.text for w in cmd):
                argv = [W(w.text.replace("{}", a.text), w.dyn, w.glob, w.node) for w in cmd]
            else:
                argv = cmd + [a]
            run.sub(argv, xargs=False)
        return
    run.sub(cmd, xargs=True)


def _busybox(run: _Run) -> None:
    if not run.args:
        return
    if run.args[0].text.startswith("-"):
        return
    run.sub(run.args)



# ----------------------------------------------------------------------------------------------------------
# git

_GIT_READ = frozenset("""status log diff show blame annotate rev-parse rev-list ls-files ls-tree ls-remote cat-file
describe shortlog grep whatchanged diff-tree diff-index diff-files cherry range-diff name-rev merge-base show-ref
for-each-ref var version help check-ignore check-attr check-mailmap count-objects fsck verify-commit verify-tag
verify-pack show-branch get-tar-commit-id column fmt-merge-msg interpret-trailers check-ref-format hash-object
show-index""".split())


_GIT_SAFE_CONFIG = ("color.", "user.", "advice.", "log.", "i18n.", "init.", "safe.directory", "core.quotepath",
                    "core.autocrlf", "core.safecrlf", "core.longpaths", "core.abbrev", "column.", "format.pretty",
                    "pull.rebase", "push.default", "diff.renames", "diff.algorithm", "merge.conflictstyle",
                    "status.", "blame.", "grep.linenumber", "grep.extendedregexp", "core.ignorecase",
                    "protocol.version", "http.sslverify", "fetch.prune", "commit.gpgsign", "tag.gpgsign",
                    "rebase.autostash", "maintenance.auto", "gc.auto")


_GIT_TREE_WRITERS = frozenset("""checkout switch merge pull cherry-pick revert reset am rebase worktree read-tree
checkout-index restore""".split())


def _git(run: _Run) -> None:
    args = run.args
    i = 0
    editor_cfg = False  # -c core.editor/sequence.editor: only matters for subcommands that open an editor
    while i < len(args):
        s = args[i].text
        if s in ("-c", "--config-env") and i + 1 < len(args):
            key, _, val = args[i + 1].text.partition("=")
            key = key.lower()
            if not args[i + 1].dyn and s == "-c" and key in ("core.editor", "sequence.editor"):
                editor_cfg = True
            elif not args[i + 1].dyn and s == "-c" and (key == "core.pager" or key.startswith("pager.")) \
                    and val and analyze(val).kind == "read_only":
                pass  # the pager command is itself read-only (less, cat, delta...)
            elif args[i + 1].dyn or not key.startswith(_GIT_SAFE_CONFIG):
                # core.pager, alias.*, diff.external, filter.*, core.sshCommand ... run commands
                run.flag("unknown", f"git -c {key}: configuration that may run commands", risk="hijack")
                return
        if s.startswith("--exec-path="):
            run.flag("unknown", "git --exec-path changes which programs git runs", risk="hijack")
            return
        if s in ("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env",
                 "--super-prefix", "--list-cmds", "--attr-source"):
            i += 2
            continue
        if s.startswith("-"):
            if s in ("--version", "--help", "-h", "--html-path", "--man-path", "--info-path") and i == len(args) - 1:
                return
            i += 1
            continue
        break
    if i >= len(args):
        return
    sub = args[i].text
    rest = args[i + 1:]
    r = [a.text for a in rest]
    opts, pos = _split_opts(rest, ("-m", "--message", "-b", "-B", "-c", "-C", "-F", "--file", "-u", "-o",
                                   "--author", "--date", "-S", "-X", "--strategy", "--strategy-option",
                                   "--onto", "--pathspec-from-file", "--format", "--conflict", "--unified", "-U",
                                   "--inter-hunk-context",
                                   "--pretty", "-n", "--max-count", "--since", "--until", "--grep"))
    if args[i].dyn:
        run.flag("unknown", "git subcommand is not literal")
        return
    if "--help" in r or sub == "help":
        return
    if editor_cfg and sub not in _GIT_READ:
        run.flag("unknown", "git -c core.editor: the editor command may run", risk="hijack")
        return
    from orchestrator import shellgit

    if shellgit.check(run, i):  # where it writes: -C, --git-dir, config, init, clone, worktree... (shellgit.py)
        return
    name = f"git {sub}"
    if sub == "hash-object" and "-w" in r:
        run.flag("mutating", "git hash-object -w writes an object")
        return
    if sub == "grep" and any(t.startswith(("-O", "--open-files-in-pager")) for t in r):
        run.flag("unknown", "git grep -O runs a pager command")
        return
    if sub == "difftool" and any(t.startswith(("-x", "--extcmd", "-t", "--tool")) for t in r):
        run.flag("unknown", "git difftool runs an external command")
        return
    if sub == "submodule" and pos[:1] and pos[0].text == "foreach":
        run.code(" ".join(p.text for p in pos[1:]), "git submodule foreach")
        return
    if sub == "bisect" and pos[:1] and pos[0].text == "run":
        run.sub(pos[1:])
        run.flag("mutating", "git bisect run checks out commits")
        return
    if sub in _GIT_TREE_WRITERS:
        # these write entries (symlinks included) from the object store anywhere in the tree: nothing else in the
        # same command can be judged by its path any more
        run.wk.acc.entries.append((-1, "ln", (), False))
    if sub in _GIT_READ:
        if sub == "diff" and _has(opts, "--output"):
            for v in opts["--output"]:
                run.write(W(v), "git diff --output")
        if sub in ("log", "show", "format-patch") and _has(opts, "--output", "-o"):
            run.write(W((opts.get("--output") or opts.get("-o"))[-1]), name)
        return
    if sub == "branch":
        if _has(opts, "-D", "-f", "--force", "-M", "-C"):
            run.flag("destructive", "git branch -D/-f/-M deletes or force-moves a branch")
        elif _has(opts, "-d", "--delete", "-m", "-M", "--move", "-c", "-C", "--copy", "-u", "--set-upstream-to",
                  "--unset-upstream", "--edit-description", "-f", "--force", "-t", "--track"):
            run.flag("mutating", f"{name} modifies branches")
        elif pos and not _has(opts, "-l", "--list", "--contains", "--no-contains", "--merged", "--no-merged",
                              "--points-at", "-a", "-r", "--all", "--remotes", "--sort", "--format",
                              "--show-current", "-v", "-vv", "--verbose"):
            run.flag("mutating", "git branch creates a branch")
        return
    if sub == "tag":
        if _has(opts, "-d", "--delete"):
            run.flag("mutating", "git tag -d deletes a tag")
        elif pos and not _has(opts, "-l", "--list", "--contains", "--no-contains", "--merged", "--no-merged",
                              "--points-at", "-n", "--sort", "--format", "-v", "--verify"):
            run.flag("mutating", "git tag creates a tag")
        return
    if sub == "remote":
        if not pos or pos[0].text in ("show", "get-url") or (not pos and _has(opts, "-v", "--verbose")):
            return
        if pos[0].text in ("-v",):
            return
        run.flag("mutating", f"git remote {pos[0].text}")
        return
    if sub == "config":
        if _has(opts, "--get", "--get-all", "--get-regexp", "--list", "-l", "--get-urlmatch", "--get-color",
                "--get-colorbool", "--show-origin", "--show-scope", "-e", "--edit") and not _has(opts, "-e", "--edit"):
            return
        if pos and pos[0].text in ("get", "list"):
            return
        if len(pos) == 1 and not _has(opts, "--unset", "--unset-all", "--add", "--replace-all", "--remove-section",
                                      "--rename-section"):
            return
        run.flag("mutating", "git config changes configuration")
        return
    if sub == "stash":
        act = pos[0].text if pos else "push"
        if act in ("list", "show"):
            return
        if act in ("drop", "clear"):
            run.flag("destructive", f"git stash {act} discards stashed changes")
            return
        if _has(opts, "-u", "--include-untracked", "-a", "--all") or any(
                a.text in ("-u", "--include-untracked", "-a", "--all") for a in run.args):
            # stashing untracked files removes them from the tree: like git clean, it deletes files it never names
            run.flag("destructive", f"git stash {act} --include-untracked removes untracked files")
            return
        if act in ("pop", "apply"):
            run.wk.acc.entries.append((-1, "ln", (), False))  # restores entries (links too) anywhere
        run.flag("mutating", f"git stash {act}")
        return
    if sub == "worktree":
        act = pos[0].text if pos else ""
        if act in ("list",):
            return
        if act == "remove" and _has(opts, "-f", "--force"):
            run.flag("destructive", "git worktree remove --force discards changes")
            return
        run.flag("mutating", f"git worktree {act}")
        return
    if sub == "submodule":
        act = pos[0].text if pos else "status"
        if act in ("status", "summary"):
            return
        if act == "deinit" and _has(opts, "-f", "--force"):
            run.flag("destructive", "git submodule deinit --force")
            return
        run.flag("mutating", f"git submodule {act}")
        return
    if sub == "reflog":
        act = pos[0].text if pos else "show"
        if act in ("show", "exists") or act not in ("expire", "delete"):
            if act in ("expire", "delete"):
                pass
            else:
                return
        run.flag("destructive", f"git reflog {act} drops history")
        return
    if sub == "notes":
        act = pos[0].text if pos else "list"
        if act in ("list", "show"):
            return
        run.flag("mutating", f"git notes {act}")
        return
    if sub == "bisect":
        act = pos[0].text if pos else ""
        if act in ("log", "visualize", "view", "help"):
            return
        run.flag("mutating", f"git bisect {act}")
        return
    if sub == "lfs":
        act = pos[0].text if pos else ""
        if act in ("ls-files", "status", "env", "version", "track" if not pos[1:] else "_", "logs", "locks",
                   "fetch"):
            return
        run.flag("mutating", f"git lfs {act}")
        return
    if sub == "checkout":
        # --track[=direct|inherit] and --recurse-submodules[=checkout|on-demand] take their optional value
        # only when stuck with `=` (gitcli(7)); `--track direct main` passes "direct" as a branch/pathspec.
        # git refuses --track with paths, and a value-like word after --recurse-submodules becomes a
        # pathspec whose outcome depends on what the repository contains: do not vouch either way.
        for k, a in enumerate(rest[:-1]):
            if (a.text in ("-t", "--track") and rest[k + 1].text in ("direct", "inherit")) or \
                    (a.text == "--recurse-submodules" and rest[k + 1].text in ("checkout", "on-demand")):
                run.flag("unknown", f"git checkout {a.text} {rest[k + 1].text}: git reads the word as a "
                                    "branch or pathspec, not as the option's value")
                return
        if _has(opts, "-t", "--track") and not _has(opts, "-f", "--force", "-m", "--merge", "-p", "--patch",
                                                      "--ours", "--theirs"):
            if len(pos) >= 2 or "--" in r:
                run.flag("unknown", "git checkout --track with paths (git refuses; not vouched for)")
                return
            run.flag("mutating", "git checkout --track creates a tracking branch")
            return
        if "--" in r or _has(opts, "-f", "--force", "-p", "--patch", "--ours", "--theirs", "-m", "--merge",
                             "--pathspec-from-file") or \
                any(p.text in (".", "*", ":/") or p.glob for p in pos) or \
                (len(pos) >= 2 and not _has(opts, "-b", "-B", "--orphan")):
            run.flag("destructive", "git checkout of paths discards uncommitted changes")
            return
        run.flag("mutating", "git checkout switches branches")
        return
    if sub == "switch":
        if _has(opts, "-f", "--force", "--discard-changes"):
            run.flag("destructive", "git switch --discard-changes/--force")
            return
        run.flag("mutating", "git switch")
        return
    if sub == "restore":
        if _has(opts, "-S", "--staged") and not _has(opts, "-W", "--worktree"):
            run.flag("mutating", "git restore --staged unstages")
            return
        run.flag("destructive", "git restore discards working-tree changes")
        return
    if sub == "reset":
        if _has(opts, "--hard", "--merge", "--keep"):
            run.flag("destructive", "git reset --hard discards uncommitted changes")
            return
        run.flag("mutating", "git reset")
        return
    if sub == "clean":
        if _has(opts, "-n", "--dry-run") and not _has(opts, "-i", "--interactive"):
            return
        if _has(opts, "-f", "--force"):
            run.flag("destructive", "git clean -f deletes untracked files")
            return
        run.flag("mutating", "git clean")
        return
    if sub == "push":
        # A plain --force/-f or a +refspec overwrites whatever is on the remote (and wins over a lease when
        # both are given). --force-with-lease alone refuses unless the remote ref is still where we last
        # saw it, so it cannot throw away someone else's pushed work: mutating, not destructive.
        force = _has(opts, "-f", "--force", "--mirror", "-d", "--delete", "--prune") or any(
            p.text.startswith("+") or p.text.startswith(":") for p in pos[1:])
        if _has(opts, "-n", "--dry-run"):
            return
        if force:
            run.flag("destructive", "git push rewrites or deletes remote history")
            return
        if _has(opts, "--force-with-lease", "--force-if-includes"):
            run.flag("mutating", "git push --force-with-lease (refused if the remote moved)")
            return
        run.flag("mutating", "git push")
        return
    if sub == "replace" and _has(opts, "-l", "--list"):
        return
    if sub in ("rebase", "filter-branch", "filter-repo", "replace"):
        if sub == "rebase" and _has(opts, "--abort", "--show-current-patch"):
            run.flag("mutating", "git rebase --abort")
            return
        run.flag("destructive", f"{name} rewrites history")
        return
    if sub == "gc":
        if any(x.startswith("--prune") for x in r) or "--aggressive" in r:
            run.flag("destructive", "git gc --prune drops unreachable objects")
            return
        run.flag("mutating", "git gc")
        return
    if sub in ("prune", "prune-packed"):
        run.flag("destructive", f"{name} drops unreachable objects")
        return
    if sub == "update-ref":
        if _has(opts, "-d"):
            run.flag("destructive", "git update-ref -d deletes a ref")
            return
        run.flag("mutating", name)
        return
    if sub == "rm":
        kind = "destructive" if _has(opts, "-r", "-f", "--force") and not _has(opts, "--cached") else "mutating"
        for p in pos:
            if not _has(opts, "--cached"):
                run.delete(p, "git rm", kind)
        if not pos or _has(opts, "--cached"):
            run.flag(kind, "git rm")
        return
    if sub == "mv":
        if len(pos) >= 2:
            acc = run.wk.acc
            run.write(pos[-1], "git mv")
            acc.entries.append((len(acc.writes) - 1, "mv", _sources(run, pos[:-1]), True))
            for s in pos[:-1]:
                run.delete(s, "git mv (source)")
        run.flag("mutating", "git mv")
        return
    if sub == "apply":
        if _has(opts, "--check", "--stat", "--numstat", "--summary") and not _has(opts, "--apply"):
            return
        run.acc.unresolved = True
        run.flag("mutating", "git apply modifies files named in the patch")
        return
    if sub == "clone":
        if len(pos) >= 2:
            run.write(pos[1], "git clone")
        else:
            run.acc.unresolved = True
            run.flag("mutating", "git clone creates a directory")
        return
    if sub == "commit":
        if _has(opts, "--amend"):
            run.flag("mutating", "git commit --amend rewrites the last commit")
            return
        run.flag("mutating", "git commit")
        return
    if sub == "fetch" or (sub == "lfs" and pos[:1] and pos[0].text == "fetch"):
        # Only .git internals (remote-tracking refs, objects) change; the working tree is untouched.
        return
    if sub == "archive":
        out = opts.get("-o") or opts.get("--output")
        if out:
            run.write(W(out[-1]), "git archive -o")
        return
    if sub == "format-patch" and not _has(opts, "--stdout"):
        run.acc.unresolved = True
        run.write(W((opts.get("-o") or opts.get("--output-directory") or ["."])[-1]), "git format-patch")
        return
    if sub in ("request-pull", "difftool") or (sub == "format-patch"):
        return
    if (sub == "sparse-checkout" and pos[:1] and pos[0].text == "list") or \
            (sub == "bundle" and pos[:1] and pos[0].text in ("verify", "list-heads")) or \
            (sub == "replace" and _has(opts, "-l", "--list")) or \
            (sub == "rerere" and pos[:1] and pos[0].text in ("status", "diff", "remaining")):
        return
    if sub in ("add", "commit", "merge", "pull", "fetch", "cherry-pick", "revert", "init", "am", "format-patch",
               "archive", "bundle", "pack-refs", "repack", "maintenance", "sparse-checkout", "stage",
               "update-index", "write-tree", "commit-tree", "read-tree", "symbolic-ref", "checkout-index",
               "merge-file", "mergetool", "difftool", "rerere", "request-pull", "send-email", "credential",
               "fast-import", "svn", "p4", "citool", "gui", "revert", "sparse-checkout", "unpack-objects",
               "index-pack", "pack-objects", "mktag", "mktree", "multi-pack-index", "commit-graph", "hook",
               "range-diff", "switch", "annex", "crypt", "secret", "flow"):
        if sub == "symbolic-ref" and len(pos) == 1 and not _has(opts, "-d", "--delete"):
            return
        run.flag("mutating", name)
        return
    run.flag("unknown", f"unknown git subcommand {sub!r}")


# ----------------------------------------------------------------------------------------------------------
# service CLIs: the verb words decide (list/get/describe read; delete/destroy destructive; others mutate)


class _Svc:
    """Per-CLI knowledge for the verb rules. depth: how many leading positional words form the command
    path; runs: first words that run arbitrary (project) code -> unknown; verb_first: `kubectl get deploy`,
    the first word is the verb and the rest are resource names."""

    __slots__ = ("read", "destroy", "mutate", "valued", "depth", "default", "destroy_opts", "runs", "verb_first")

    def __init__(self, read: frozenset[str], destroy: frozenset[str], mutate: frozenset[str],
                 valued: frozenset[str], depth: int, default: str, destroy_opts: frozenset[str],
                 runs: frozenset[str], verb_first: bool) -> None:
        self.read, self.destroy, self.mutate, self.valued = read, destroy, mutate, valued
        self.depth, self.default, self.destroy_opts, self.runs = depth, default, destroy_opts, runs
        self.verb_first = verb_first


_READ_VERBS = frozenset("""list ls get show describe view status info inspect search logs log version help
whoami ping top explain history cat read print diff check validate lint tail events api-resources api-versions
cluster-info current-context get-contexts get-clusters get-users can-i outdated deps uses leaves doctor
query exists tree why  env which home desc options formulae casks tap-info stats df du images ps
port plan output providers graph fmt-check verify preview browse wait whatis inventory contents completion
completions services synth synthesize acknowledge context find topic token ports audit help-search find-dupes
stars sbom trusted-root
""".split())
_DESTROY_VERBS = frozenset("""delete del rm remove destroy purge prune drop terminate uninstall wipe erase forget
rb rmi kill nuke reset-hard unregister deregister evict drain revoke truncate flush flushall flushdb undeploy
reset force_reset force-reset compact recreate break-lock rollback archive untag unsubscribe disable stop unset
roll rdelete repo-delete""".split())
_READ_PREFIXES = ("transact-get-", "admin-get-", "admin-list-", "describe-", "list-", "get-", "show-", "head-", "batch-get-", "check-", "search-", "lookup-",
                  "list_", "get_", "describe_", "show_", "test-", "validate-", "estimate-", "preview-",
                  "view-", "query-", "scan", "select-", "detect-", "filter-", "simulate-", "verify-")
_MUTATE_VERBS = frozenset("""add set create update put apply install change replace modify start stop restart
enable push upload run exec deploy attach detach import load save export edit patch scale rollout label
annotate tag untag login logout link unlink move mv copy cp sync mount unmount clone fork merge close reopen
comment approve review lock unlock unarchive fix activate deactivate promote suspend resume transfer rename sign invoke send publish trigger rerun
cancel restore rotate upgrade downgrade pin unpin mkdir touch write init new register grant assign""".split())
# Verbs that look like reads but write local state (kubeconfig, credentials, contexts).
_MUTATE_EXACT = frozenset("get-credentials use-context use rename-context set-context set-cluster set-credentials "
                          "index up build package".split())
_MUTATE_PREFIXES = ("create-", "update-", "put-", "set-", "add-", "modify-", "start-", "run-", "invoke-",
                    "attach-", "associate-", "enable-", "register-", "import-", "tag-", "untag-", "send-",
                    "publish-", "upload-", "restore-", "copy-", "replace-", "change-", "reboot-", "request-",
                    "authorize-", "allocate-", "accept-", "apply-", "assign-", "create_", "update_", "put_")
_DESTROY_PREFIXES = ("clear_", "clear-", "forget_", "forget-", "unsubscribe", "delete-", "remove-", "terminate-", "purge-", "destroy-", "deregister-", "delete_",
                     "drop-", "disable-", "revoke-", "cancel-", "stop-", "detach-", "disassociate-",
                     "force-delete", "batch-delete-", "reset-", "wipe-", "empty-", "delete")


def _service_cli(run: _Run, svc: _Svc) -> None:
    args = run.args
    path: list[str] = []
    opts: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        s = a.text
        if s == "--":
            break
        if s.startswith("-") and not a.dyn and len(s) > 1:
            name = s.split("=", 1)[0]
            opts.append(s)
            if path and name not in svc.valued:
                # Options after the command path: the rest are arguments, not more path words.
                opts.extend(x.text for x in args[i + 1:] if x.text.startswith("-"))
                break
            if "=" not in s and name in svc.valued and i + 1 < len(args):
                i += 1
            i += 1
            continue
        if a.dyn and len(path) < svc.depth and not (svc.verb_first and path) and not path_done(path, s):
            run.flag("unknown", f"{run.name}: subcommand is not literal ({s[:40]})")
            run.acc.unresolved = True
            return
        if len(path) < svc.depth and not path_done(path, s):
            path.append(s)
        i += 1
    low = [p.lower() for p in path]
    optnames = {o.split("=", 1)[0] for o in opts}
    if _prints_credentials(run.name, low, args):
        run.flag("unknown", f"{run.name} {' '.join(path)} prints secrets or credentials into the transcript")
        return
    if svc.verb_first and low and low[0] not in _VERB_GROUPS:
        low = low[:1]
    dry = [o for o in opts if o.split("=", 1)[0] in ("--dry-run", "--dryrun")]
    if dry and all(o.split("=", 1)[-1].lower() not in ("none", "false", "0") for o in dry):
        return  # the CLI only reports what it would do
    if args and args[0].text in svc.read and args[0].text.startswith("--"):
        return  # e.g. `brew --prefix python`
    qs = [a.text.split("=", 1)[1] if "=" in a.text else (args[k + 1].text if k + 1 < len(args) else "")
          for k, a in enumerate(args) if a.text.split("=", 1)[0] in ("--query-string",)]
    if qs and any(_SQL_DESTROY.search(q) for q in qs):
        run.flag("destructive", f"{run.name} {' '.join(path)} runs destructive SQL")
        return
    if qs and low and low[-1].startswith("start-query"):
        if all(_sql_read_only(q) for q in qs):
            return
    if not path and opts and all(o.split("=", 1)[0] in svc.read for o in opts):
        return  # e.g. `brew --prefix python`
    if "--list" in optnames and not any(p in _DESTROY_VERBS for p in low):
        return  # `az devops configure --list`, `cargo owner --list`
    if "down" in low and optnames & {"-v", "--volumes", "--rmi"}:
        run.flag("destructive", f"{run.name} {' '.join(path)} removes volumes or images")
        return
    if run.name in ("terraform", "tofu") and low[:1] == ["apply"] and "-destroy" in optnames:
        run.flag("destructive", f"{run.name} apply -destroy")
        return
    if run.name in ("docker", "podman", "kubectl", "oc") and "exec" in low[:2]:
        _container_exec(run, args, svc)
        return
    if any(p in ("save", "export") for p in low) and run.name in ("docker", "podman"):
        for k, a in enumerate(args):
            if a.text in ("-o", "--output") and k + 1 < len(args):
                run.write(args[k + 1], f"{run.name} {low[-1]} -o")
                return
            if a.text.startswith("--output="):
                run.write(W(a.text.split("=", 1)[1]), f"{run.name} {low[-1]} -o")
                return
        return
    if run.name in ("gh", "auth0", "glab") and low[:1] == ["api"]:
        method = ""
        for k, a in enumerate(args):
            if a.text in ("-X", "--method") and k + 1 < len(args):
                method = args[k + 1].text.upper()
            elif a.text.startswith(("--method=", "-X")) and len(a.text) > 2:
                method = a.text.split("=", 1)[-1].upper() if "=" in a.text else a.text[2:].upper()
        fields = " ".join(a.text for a in args)
        if len(low) > 1 and low[1] in ("get", "post", "put", "patch", "delete"):
            method = method or low[1].upper()
        if method == "DELETE":
            run.flag("destructive", f"{run.name} api -X DELETE")
        elif method in ("GET", "HEAD"):
            return
        elif len(low) > 1 and low[1] == "graphql" and "mutation" not in fields:
            return  # a GraphQL query, not a mutation
        elif method or optnames & {"-f", "-F", "--field", "--raw-field", "--input", "-d", "--data"}:
            run.flag("mutating", f"{run.name} api sends data")
        return
    if any(o[:1] in "\u2010\u2011\u2012\u2013\u2014\u2212" for o in (a.text for a in args)):
        run.flag("unknown", f"{run.name}: argument starts with a unicode dash")
        return
    if any("secret" in p for p in low) and any(p.startswith(("update", "put")) for p in low):
        run.flag("destructive", f"{run.name} {' '.join(path)} overwrites a secret value")
        return
    for o in opts:
        name, _, val = o.partition("=")
        if name in svc.destroy_opts or (name.startswith(("--delete", "--remove", "--purge", "--prune"))
                                        and val.lower() not in ("false", "0", "no")):
            run.flag("destructive", f"{run.name} {' '.join(path)} {name}")
            return
    if not path:
        if optnames & {"--help", "-h", "--version", "-v", "-V"}:
            return
        if not args:
            if run.name in _BARE_PRINTS_HELP:
                return
            # A multi-command CLI with no subcommand: usually help, but a config default, alias or plugin
            # can make it do anything (pre-commit runs hooks, launchctl opens a prompt): ask.
            run.flag("unknown", f"{run.name} without a subcommand")
            return
    if optnames & {"--help", "-h"} or (low and low[-1] == "help") or (low and low[0] == "help") or (low == ["version"] and len(args) == 1):
        return
    if run.name in ("npm", "pnpm", "yarn", "bun") and low[:1] and low[0] in (
            "install", "i", "ci", "add", "isntall", "in", "update", "up", "upgrade", "rebuild") and \
            not any(a.text == "--ignore-scripts" for a in args) and "--dry-run" not in optnames:
        run.flag("unknown", f"{run.name} {low[0]} runs package lifecycle scripts")
        return
    if run.name == "gh" and low[:2] in (["extension", "browse"], ["ext", "browse"]):
        run.flag("unknown", "gh extension browse is an interactive UI that installs/removes extensions")
        return
    if run.name == "gcloud" and low[:2] == ["app", "browse"]:
        run.flag("unknown", "gcloud app browse opens the deployed app (requests run its code)")
        return
    if run.name in ("npm", "pnpm", "yarn") and path[:1] in (["run"], ["run-script"]):
        k = next(k for k, a in enumerate(args) if a.text == path[0])
        if all(a.text.startswith("-") and a.text != "--" for a in args[k + 1:]):
            return  # `npm run` without a script name lists the scripts
    if low and low[0] in svc.runs:
        run.flag("unknown", f"{run.name} {low[0]} runs project code", risk="runs-code")
        return
    for p in low:
        if p in svc.destroy or p in _DESTROY_VERBS or p.startswith(_DESTROY_PREFIXES) or \
                (p.endswith(("delete", "-remove", "_remove")) and len(p) > 6):
            if p in svc.read:
                continue
            run.flag("destructive", f"{run.name} {' '.join(path)}")
            return
    if optnames & {"--reset", "--clear", "--unset"}:
        run.flag("mutating", f"{run.name} {' '.join(path)} {sorted(optnames & {'--reset', '--clear', '--unset'})[0]}")
        return
    for o in optnames:
        if o in ("--force-delete", "--cleanup", "--remove-orphans", "--volumes", "--wipe", "--erase"):
            run.flag("destructive", f"{run.name} {' '.join(path)} {o}")
            return
    # The verb is the last word of the command path that we can classify (`ip addr add`, `az vm list`).
    for p in reversed(low):
        if p in svc.mutate or p in _MUTATE_EXACT or p.startswith(("use-", "rename-", "set-")):
            run.flag("mutating", f"{run.name} {' '.join(path)}")
            return
        if p in svc.read or p in _READ_VERBS or p.startswith(_READ_PREFIXES):
            return
        if p in _MUTATE_VERBS or p.startswith(_MUTATE_PREFIXES):
            run.flag("mutating", f"{run.name} {' '.join(path)}")
            return
    if "--dry-run" in optnames or "--dryrun" in optnames:
        return
    run.flag(svc.default, f"{run.name} {' '.join(path)}".strip())


# Multi-command CLIs whose bare invocation is fixed help text (no aliases, plugins or default command).
_BARE_PRINTS_HELP = frozenset("uv".split())


_DOCKER_EXEC_VALUED = frozenset("-e --env --env-file -u --user -w --workdir --detach-keys -c --container -n "
                                "--namespace --context --kubeconfig -H --host".split())


def _container_exec(run: _Run, args: list[W], svc: _Svc) -> None:
    """docker/kubectl exec: judge the command run inside the container (its paths are not ours)."""
    texts = [a.text for a in args]
    if "--" in texts:
        inner = args[texts.index("--") + 1:]
    else:
        k = texts.index("exec") + 1 if "exec" in texts else 0
        while k < len(args) and args[k].text.startswith("-"):
            k += 2 if args[k].text in _DOCKER_EXEC_VALUED else 1
        inner = args[k + 1:]  # skip the container / pod name
    if not inner:
        run.flag("unknown", f"{run.name} exec opens a shell")
        return
    sub = _Acc()
    _run_argv(_Walker(sub, run.depth + 1), inner, _Ctx(), run.depth + 1)
    if sub.rank > 0:
        kind = _KINDS[sub.rank]
        run.flag(kind, f"{run.name} exec runs a {kind} command in a container")


# Words that, for verb-first CLIs (kubectl, npm, cargo), name a group whose second word is the real verb.
_VERB_GROUPS = frozenset("c config rollout auth plugin certificate apply cache owner dist-tag access team org profile "
                         "token hook pkg audit version install container image compose volume network system "
                         "buildx context manifest swarm node service stack secret trust builder".split())


_CRED_VERBS = frozenset("get-secret-value print-access-token print-identity-token get-login-password "
                        "get-access-token get-authorization-token".split())


def _prints_credentials(name: str, low: list[str], args: list[W]) -> bool:
    """Reads whose output is a secret: ask instead of auto-allowing (the transcript is not a vault)."""
    texts = [a.text for a in args]
    if any(p in _CRED_VERBS for p in low):
        return True
    if name == "gh" and low[:2] == ["auth", "token"]:
        return True
    if name == "aws" and low[:1] == ["ssm"] and "--with-decryption" in texts:
        return True
    if name in ("kubectl", "oc"):
        if low[:2] == ["config", "view"] and any(t.startswith("--raw") or a.dyn for t, a in zip(texts, args)):
            return True
        if low[:1] == ["get"]:
            res = " ".join(texts)
            fmt = [texts[k + 1] if t in ("-o", "--output") and k + 1 < len(texts) else t.split("=", 1)[-1]
                   if t.startswith("--output=") else t[2:] for k, t in enumerate(texts)
                   if t in ("-o", "--output") or t.startswith(("-o", "--output="))]
            out = any(f not in ("name", "wide") for f in fmt)
            if re.search(r"\bsecrets?\b", res) and (out or any(a.dyn for a in args)):
                return True
            # An unresolved *format* value is not a resource name; only an unresolved resource could be secrets.
            fmt_vals = {k + 1 for k, t in enumerate(texts) if t in ("-o", "--output")}
            dyn_res = any(a.dyn for k, a in enumerate(args) if k not in fmt_vals
                          and not (a.text.startswith(("-o", "--output=")) and a.text not in ("-o", "--output")))
            if dyn_res and out:
                return True  # resource not known: could be secrets in full
    return False


def _classified(p: str, svc: _Svc) -> bool:
    return (p in svc.read or p in svc.mutate or p in svc.destroy or p in _READ_VERBS or p in _MUTATE_VERBS
            or p.startswith(_READ_PREFIXES + _MUTATE_PREFIXES))


def path_done(path: list[str], s: str) -> bool:
    # stop the command path at arguments that clearly are values (URLs, paths, key=value, ids)
    return bool(re.search(r"[/:=@]|^\d", s)) or (bool(path) and "." in s)



def _S(read: str = "", destroy: str = "", mutate: str = "", valued: str = "", depth: int = 3,
       default: str = "mutating", destroy_opts: str = "", verb_first: bool = False, runs: str = "") -> _Svc:
    return _Svc(frozenset(read.split()), frozenset(destroy.split()), frozenset(mutate.split()),
                frozenset((valued or _COMMON_VALUED).split()), depth, default, frozenset(destroy_opts.split()),
                frozenset(runs.split()), verb_first)


_COMMON_VALUED = ("--region --profile --output -o --query --endpoint-url --project --account --subscription "
                  "-n --namespace --context --kubeconfig -g --resource-group --format --repo -R --org "
                  "--cluster --zone --configuration --log-level --color --cli-input-json")

_SERVICE_CLIS: dict[str, _Svc] = {
    "aws": _S(valued=_COMMON_VALUED, mutate="cp mv sync put-object", read="ls presign wait"),
    "az": _S(valued=_COMMON_VALUED, depth=6, read="url summarize find"),
    "gcloud": _S(valued=_COMMON_VALUED, depth=5, read="read"),
    "gsutil": _S(valued=_COMMON_VALUED, read="ls du stat cat hash", destroy="rm rb", destroy_opts="-d"),
    "gh": _S(valued=_COMMON_VALUED + " -L --limit -s --state -q --jq -t --template -w --web",
             read="checks diff view list status watch field-list item-list"),
    "glab": _S(valued=_COMMON_VALUED),
    "kubectl": _S(runs="exec run debug attach cp port-forward proxy", valued=_COMMON_VALUED + " -l --selector -f -c --container --field-selector", depth=2,
                  verb_first=True,
                  mutate="apply create patch replace scale set label annotate rollout edit exec run cp "
                         "expose autoscale taint certificate attach port-forward proxy debug",
                  read="get describe logs top explain version api-resources api-versions cluster-info diff "
                       "auth events wait status history completion kustomize can-i whoami"),
    "oc": _S(valued=_COMMON_VALUED, depth=2, verb_first=True),
    "helm": _S(valued=_COMMON_VALUED, depth=2, destroy="uninstall delete",
               read="list ls status get history show inspect search template lint version env verify"),
    "docker": _S(runs="run exec", valued=_COMMON_VALUED + " -H --host -c --config --log-level -f --filter --format "
                 "--file -p --project-name --project-directory --env-file --profile -l", depth=3, verb_first=True,
                 read="ps images inspect logs version info history port top stats diff events search ls df "
                      "config",
                 mutate="run exec build pull push start restart create commit tag login logout cp up down "
                        "restart pause unpause update rename attach load import save export "),
    "podman": _S(runs="run exec", valued=_COMMON_VALUED, depth=3,
                 read="ps images inspect logs version info history port top stats diff events search ls df",
                 mutate="run exec build pull push start restart create commit tag login cp up down"),
    "brew": _S(depth=2, valued="-S", mutate="on off start stop restart run kill", read="-S list ls info search deps uses outdated doctor dr config leaves desc options log "
                             "cat docs analytics  fetch --config --cache --cellar --caskroom --prefix "
                             "--repository --repo --env --taps "
                             "formulae casks tap-info shellenv commands missing home homepage --prefix "
                             "--cellar --repository --cache --env --version --caskroom abv livecheck ",
               destroy="uninstall remove rm cleanup untap autoremove zap"),
    "npm": _S(mutate="version", verb_first=True, runs="run run-script test t start restart exec x rebuild install-test it stop explore", depth=2, read="ls list ll la view info show v outdated search s find help config get explain why "
                            "doctor prefix root bin whoami ping fund query docs repo bugs help-search",
              destroy="_"),
    "pnpm": _S(runs="run test start exec dlx create", depth=2, read="ls list ll view info outdated why audit root bin help"),
    "yarn": _S(runs="run test start exec dlx node create", depth=2, read="list info why outdated help config bin"),
    "pip": _S(depth=2), "pip3": _S(depth=2),
    "uv": _S(runs="run tool", depth=2, read="tree version help freeze dir list show check"),
    "cargo": _S(runs="run r test t bench build b check c clippy install doc", depth=2, verb_first=True,
                read="fetch help version tree metadata search verify-project locate-project pkgid "
                              "read-manifest info"),
    "terraform": _S(depth=2, runs="test", read="plan show validate output providers graph version console pull modules metadata "
                                  " ", destroy="destroy"),
    "tofu": _S(depth=2, read="plan show validate output providers graph version", destroy="destroy"),
    "pulumi": _S(depth=2, read="preview stack whoami about version logs config", destroy="destroy"),
    "rclone": _S(depth=1, read="ls lsd lsl lsf lsjson size check tree cat about listremotes version md5sum "
                               "sha1sum hashsum", destroy="delete deletefile purge rmdir rmdirs cleanup dedupe sync move moveto",
                 mutate="copy copyto mkdir touch"),
    "restic": _S(depth=2, valued="-o -r --repo --password-file", read="snapshots ls stats check diff find cat version"),
    "borg": _S(depth=2, read="list info check diff version"),
    "vault": _S(depth=3, read="read list status version"),
    "systemctl": _S(depth=1, read="status show list-units list-unit-files is-active is-enabled is-failed cat "
                                  "list-timers list-sockets list-dependencies get-default",
                    destroy="stop disable mask kill"),
    "launchctl": _S(depth=1, read="list print blame procinfo dumpstate print-disabled help version print-cache "
                                  "plist hostinfo resolveport dumpjpcategory managerpid manageruid managername "
                                  "error variant getenv examine dumpstate print-token", mutate="config",
                    destroy="remove unload bootout kill"),
    "auth0": _S(depth=3),
    "wrangler": _S(depth=3), "doppler": _S(depth=3), "op": _S(depth=3), "fastly": _S(depth=3),
    "flipt": _S(depth=3), "ldcli": _S(depth=3), "nats": _S(depth=3), "unleash": _S(depth=3),
    "mc": _S(depth=4, destroy="rm rb"), "velero": _S(depth=3), "circleci": _S(depth=3), "kong": _S(depth=2),
    "deck": _S(depth=3, destroy="sync reset"), "apigeecli": _S(depth=3), "heroku": _S(depth=2), "flyctl": _S(depth=3),
    "fly": _S(depth=3), "vercel": _S(depth=2), "netlify": _S(depth=2), "stripe": _S(depth=3),
    "firebase": _S(depth=2), "doctl": _S(depth=4), "linode-cli": _S(depth=3), "hcloud": _S(depth=3),
    "eksctl": _S(depth=3), "kind": _S(depth=3), "minikube": _S(depth=2), "k3d": _S(depth=3),
    "rabbitmqctl": _S(depth=1), "rabbitmqadmin": _S(depth=2), "newrelic": _S(depth=3), "azcopy": _S(depth=1),
    "cdk": _S(depth=1, read="ls list synth diff doctor docs metadata "
                                              "notices version", destroy="destroy"),
    "packer": _S(depth=2, read="validate inspect version console installed required"),
    "ansible-config": _S(depth=1, read="list dump view"),
    "ansible-vault": _S(depth=1, read="view"),
    "go": _S(runs="run test build generate install", depth=1, read="version env list doc vet help"),
    "conda": _S(depth=2, read="list info search env config"),
    "poetry": _S(runs="run shell install", depth=2, read="show check version about env config search"),
    "gem": _S(depth=1, read="list search info query contents which environment specification help"),
    "apt": _S(depth=1, read="list search show policy depends rdepends changelog"),
    "apt-cache": _S(depth=1, read="search show policy depends rdepends pkgnames showpkg stats madison"),
    "snap": _S(depth=1, read="list info find version services"),
    "flatpak": _S(depth=1, read="list info search remote-ls history"),
    "ip": _S(depth=2, read="show list ls a addr address link route r neigh n rule maddr monitor netconf"
                           " mroute tunnel l ro netns token ntable"),
}



def _pip(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-r", "--requirement", "-c", "--constraint", "-t", "--target",
                                      "--index-url", "-i", "--extra-index-url", "--format", "--python"))
    sub = pos[0].text if pos else ""
    if not pos:
        return
    if sub in ("list", "show", "freeze", "check", "help", "search", "inspect", "debug", "index",
               "hash"):
        return
    if sub == "config" and len(pos) > 1 and pos[1].text in ("list", "get", "debug"):
        return
    if sub == "cache" and len(pos) > 1 and pos[1].text in ("dir", "info", "list"):
        return
    if sub == "install" and _has(opts, "--dry-run"):
        return
    if sub in ("install", "wheel", "download") and not _has(opts, "--only-binary") or \
            (sub == "install" and _has(opts, "-e", "--editable")):
        # building an sdist runs the package's setup code
        run.flag("unknown", f"pip {sub} may run package build code")
        return
    run.flag("mutating", f"pip {sub}")


# ----------------------------------------------------------------------------------------------------------
# database clients and misc


_SQL_WRITE = _LazyRe(r"\b(analyze|insert|update|delete|drop|truncate|alter|create|replace|grant|revoke|merge|vacuum|"
                        r"attach|detach|copy|call|exec|execute|do|set|lock|reindex|cluster|comment|import|export|load|"
                        r"pragma|install|begin|commit|rename|shutdown|kill|flush|optimize|repair|upsert)\b", re.I)
_SQL_READ_START = _LazyRe(r"^\s*(?:(?:--[^\n]*\n|/\*.*?\*/)\s*)*(select|show|describe|desc|explain|with|values|"
                          r"fields|filter|stats)\b", re.I | re.S)


def _sql_read_only(q: str) -> bool:
    """A single read-only statement (SELECT/SHOW/DESCRIBE/EXPLAIN/WITH) with no data-changing keyword."""
    body = re.sub(r"--[^\n]*|/\*.*?\*/", " ", q, flags=re.S)
    body = re.sub(r"(?i)\bexplain\s+analyze\b", "explain", body)
    return bool(_SQL_READ_START.match(q)) and not _SQL_WRITE.search(body)


_SQL_DESTROY = _LazyRe(r"\b(drop|truncate|delete\s+from|flushall|flushdb)\b", re.I)
# PRAGMAs that only report (SQLite / DuckDB). Others act even without `=` (optimize, wal_checkpoint,
# incremental_vacuum, force_checkpoint, enable_*), so they are not vouched for.
_SQL_PRAGMA_READ = _LazyRe(
    r"^\s*pragma\s+(\w+\.)?(table_info|table_xinfo|table_list|index_list|index_info|index_xinfo|"
    r"foreign_key_list|foreign_key_check|integrity_check|quick_check|database_list|compile_options|"
    r"function_list|pragma_list|collation_list|module_list|show_tables|show_tables_expanded|storage_info|"
    r"database_size|version|platform|metadata_info|show)\s*(\(\s*[\w.'\"]*\s*\))?\s*;?\s*$", re.I)


_SQL_META_READ = _LazyRe(
    r"^(\.(tables|schema|fullschema|indexes|indices|databases|dbinfo|dump|headers?|mode|show|help|timer|"
    r"width|stats|lint|print|quit|exit|echo|changes|nullvalue|separator|bail|eqp|sha3sum)"
    r"|\\(d[A-Za-z+]*|l\+?|list|conninfo|encoding|z|sf\+?|sv\+?|echo|q|x|timing|copyright|\?|h|a|t|H|f|C|"
    r"pset))(\s[^;]*)?$")


def _sql_single_read(q: str) -> bool:
    """One read statement (SELECT/SHOW/DESCRIBE/EXPLAIN/WITH, or a PRAGMA query without ``=``), at most a
    trailing ``;``. A second statement after ``;`` is not vouched for: splitting SQL correctly needs the
    dialect's quoting rules, and the keyword scan alone could miss a write hidden there."""
    body = re.sub(r"--[^\n]*|/\*.*?\*/", " ", q, flags=re.S).strip()
    if body.rstrip(";").count(";"):
        return False
    if _SQL_PRAGMA_READ.match(body):
        return True
    return _sql_read_only(body)


def _sql_codes_verdict(run: _Run, codes: list[str], what: str) -> None:
    """Classify inline SQL strings: destroy > write > not a single read statement (unknown)."""
    for c in codes:
        if _SQL_DESTROY.search(c):
            run.flag("destructive", f"{what} runs destructive SQL")
            return
    for c in codes:
        if _SQL_PRAGMA_READ.match(c):
            continue
        if _SQL_WRITE.search(c) or re.search(r"^\s*\.(output|once|import|save|restore|backup|shell|system|"
                                              r"read|load|open|cd)", c, re.M):
            run.flag("mutating", f"{what} runs SQL that changes data")
            return
    for c in codes:
        t = c.strip()
        if t.startswith((".", "\\")):
            # sqlite dot-commands / psql meta-commands: only the ones that just describe or format.
            # Others write files (.log, .clone, \o, \w, \copy), open apps (.excel) or run code (\!, \gexec).
            if all(_SQL_META_READ.match(line.strip()) for line in t.splitlines() if line.strip()):
                continue
            run.flag("unknown", f"{what}: meta-command not known to be read-only")
            return
        if not _sql_single_read(t):
            run.flag("unknown", f"{what}: SQL is not a single read-only statement")
            return


def _sql_client(run: _Run) -> None:
    valued = {"-c", "--command", "-e", "--execute", "-f", "--file", "-h", "--host", "-p", "--port", "-U",
              "--username", "-u", "--user", "-d", "--dbname", "-D", "--database", "-P", "-o", "--output", "-s",
              "-cmd", "-separator", "-S", "-v", "--set", "-F", "-T", "-R", "-L", "--log-file"}
    pre: list[str] = []
    rest_args: list[W] = []
    k = 0
    while k < len(run.args):
        t = run.args[k].text
        if t in ("-cmd", "-init") and k + 1 < len(run.args):
            pre.append(run.args[k + 1].text if t == "-cmd" else "\x00init")
            k += 2
            continue
        rest_args.append(run.args[k])
        k += 1
    if "\x00init" in pre:
        run.flag("unknown", f"{run.name} -init runs a SQL file")
        return
    opts, pos = _split_opts(rest_args, valued)
    codes = opts.get("-c", []) + opts.get("--command", []) + opts.get("-e", []) + opts.get("--execute", []) + pre
    if run.name in ("sqlite3", "duckdb"):
        codes += [p.text for p in pos[1:]] + opts.get("-cmd", [])
        if "-readonly" in [a.text for a in run.args] and not any(
                re.search(r"^\s*\.(shell|system|output|once|save|backup|import)", c, re.M) for c in codes):
            return  # the database is opened read-only: statements cannot change it
    if _has(opts, "--version", "-V", "--help", "-l", "--list") and not codes:
        return
    for o in ("-o", "--output", "-L", "--log-file"):
        for v in opts.get(o, []):
            run.write(W(v), f"{run.name} {o}")
    if _has(opts, "-f", "--file"):
        run.flag("unknown", f"{run.name} runs a SQL file")
        return
    if not codes:
        run.flag("unknown", f"{run.name} interactive session / stdin")
        return
    _sql_codes_verdict(run, codes, run.name)


_SQLITE_FLAGS0 = frozenset("-readonly -safe -bail -batch -header -noheader -json -csv -box -line -list -markdown "
                           "-table -column -html -echo -interactive -memtrace -nofollow -zip -append "
                           "-deserialize -stats -quote -ascii -tabs -unsafe-testing -no-stdin -noinit".split())
_SQLITE_FLAGS1 = frozenset("-nullvalue -separator -newline -mmap -vfs -maxsize -escape -A -init".split())
_SQLITE_FLAGS2 = frozenset("-lookaside -pagecache -heap".split())


def _sqlite(run: _Run) -> None:
    """sqlite3 / duckdb: [OPTIONS] [DB] [SQL...]; -cmd/-c/-s SQL; -readonly makes any SQL harmless."""
    args = run.args
    codes: list[str] = []
    pos: list[W] = []
    readonly = False
    k = 0
    while k < len(args):
        t = args[k].text
        if t in ("-version", "--version", "-help", "--help", "-h"):
            k += 1
            if not codes and not pos and k >= len(args):
                return
            continue
        if t == "-readonly":
            readonly = True
        if t in _SQLITE_FLAGS0 or (t.startswith("-") and t.lstrip("-") in ("readonly", "safe")):
            k += 1
            continue
        if t in ("-init", "-f"):
            run.flag("unknown", f"{run.name} {t} runs a SQL file")
            return
        if t in _SQLITE_FLAGS1:
            k += 2
            continue
        if t in _SQLITE_FLAGS2:
            k += 3
            continue
        if t in ("-cmd", "-c", "-s") and k + 1 < len(args):
            codes.append(args[k + 1].text)
            k += 2
            continue
        pos.append(args[k])
        k += 1
    codes += [p.text for p in pos[1:]]
    dot_write = any(re.search(r"^\s*\.(shell|system|output|once|save|backup|import|restore|load|open|cd)", c, re.M)
                    for c in codes)
    if dot_write:
        run.flag("unknown", f"{run.name} dot-command writes files or runs commands")
        return
    if readonly and codes:
        return
    if readonly and not run.ctx.piped:
        # -readonly opens the database read-only; with no SQL and no piped/redirected input there is
        # nothing to run (a heredoc/here-string script is checked for dot-commands that write).
        stdin = run.ctx.stdin or ""
        if not re.search(r"^\s*\.(shell|system|output|once|save|backup|import|restore|load|open|cd)", stdin, re.M):
            return
    if not codes:
        run.flag("unknown", f"{run.name} interactive session / stdin")
        return
    _sql_codes_verdict(run, codes, run.name)


def _redis(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-h", "-p", "-a", "-n", "-u", "--user", "--pass", "-s"))
    if not pos:
        if _has(opts, "--version", "--help"):
            return
        run.flag("unknown", "redis-cli interactive")
        return
    cmd = pos[0].text.lower()
    if cmd in ("flushall", "flushdb", "del", "unlink", "shutdown", "config"):
        run.flag("destructive", f"redis-cli {cmd}")
    elif cmd in ("get", "mget", "keys", "scan", "info", "ping", "ttl", "type", "exists", "hget", "hgetall",
                 "lrange", "smembers", "zrange", "llen", "scard", "dbsize", "strlen", "monitor"):
        return
    else:
        run.flag("mutating", f"redis-cli {cmd}")


_FZF_ACTION = _LazyRe(r"(execute-silent|execute-multi|execute|become|reload-sync|reload|transform[-\w]*|preview|"
                      r"change-preview)(\(|:)")


def _fzf(run: _Run) -> None:
    args = run.args
    for k, a in enumerate(args):
        t = a.text
        name, eq, val = t.partition("=")
        if name in ("--bind", "--preview", "--listen-unsafe", "--history") and not eq and k + 1 < len(args) \
                and name != "--listen-unsafe":
            val = args[k + 1].text
        if name == "--listen-unsafe":
            run.flag("unknown", "fzf --listen-unsafe accepts remote actions")
            return
        if name == "--history":
            run.write(W(val), "fzf --history")
        elif name == "--preview":
            _fzf_code(run, val)
        elif name == "--bind":
            for m in _FZF_ACTION.finditer(val):
                rest = val[m.end():]
                if m.group(2) == "(":
                    depth, j = 1, 0
                    while j < len(rest) and depth:
                        depth += {"(": 1, ")": -1}.get(rest[j], 0)
                        j += 1
                    body = rest[:j - 1] if depth == 0 else rest
                else:
                    body = rest.split(",", 1)[0] if "+" not in rest else rest.split("+", 1)[0]
                _fzf_code(run, body)


def _fzf_code(run: _Run, body: str) -> None:
    body = body.replace("\\ ", " ")
    res = analyze(re.sub(r"\{[+nqs0-9.,-]*\}", "x", body))
    if res.kind != "read_only":
        run.flag("unknown" if res.kind != "destructive" else "destructive",
                 f"fzf binds a command that is not read-only: {body[:40]}")


def _openssl(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ())
    sub = pos[0].text if pos else ""
    outs = [i for i, a in enumerate(run.args) if a.text in ("-out", "-keyout")]
    for i in outs:
        if i + 1 < len(run.args):
            run.write(run.args[i + 1], f"openssl {run.args[i].text}")
    if outs:
        return
    if sub in ("version", "help", "x509", "s_client", "verify", "ciphers", "dgst", "list", "crl", "asn1parse",
               "req", "rsa", "ec", "pkey", "base64", "enc", "speed", "errstr", "sess_id", "pkcs7", "pkcs12",
               "smime", "cms", "ocsp", "prime", "rand", "storeutl", "nseq", "x509v3", "sha256", "md5", "sha1"):
        if sub in ("genrsa", "genpkey", "req") and "-new" in [a.text for a in run.args]:
            run.flag("mutating", f"openssl {sub}")
        return
    run.flag("mutating", f"openssl {sub}")


def _crontab(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-u",))
    if _has(opts, "-r"):
        run.flag("destructive", "crontab -r deletes the crontab")
    elif _has(opts, "-l"):
        return
    else:
        run.flag("mutating", "crontab installs a crontab")


def _sort(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-o", "--output", "-k", "--key", "-t", "--field-separator", "-S",
                                      "-f", "--from-code", "--to-code",
                                      "--buffer-size", "-T", "--temporary-directory", "--parallel",
                                      "--files0-from", "--batch-size", "--compress-program", "--random-source"))
    for v in opts.get("-o", []) + opts.get("--output", []):
        if v != "-":  # GNU sort opens "-" as standard output
            run.write(W(v), "sort -o")
    if _has(opts, "--compress-program"):
        run.flag("unknown", "sort --compress-program runs a program")


def _uniq_split(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-f", "-s", "-w", "-n", "-l", "-b", "-C", "-a", "-d", "--suffix",
                                      "--additional-suffix", "--filter", "--number", "-t"))
    if run.name == "uniq":
        if len(pos) >= 2:
            run.write(pos[1], "uniq output")
        return
    if _has(opts, "--help", "--version") and not pos:
        return
    run.acc.unresolved = True
    prefix = pos[1] if len(pos) >= 2 else W("x")
    run.write(W(prefix.text + "*", prefix.dyn, True), "split")
    if _has(opts, "--filter"):
        run.flag("unknown", "split --filter runs a command")


def _ln(run: _Run) -> None:
    _cp_like(run)


def _mktemp(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-p", "--tmpdir", "--suffix"))
    if _has(opts, "-u", "--dry-run"):
        return
    run.acc.unresolved = True
    run.flag("mutating", "mktemp creates a temporary file")


def _dmesg(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-f", "-l", "--level", "-s", "-n", "--console-level", "-F", "--file"))
    if _has(opts, "-c", "-C", "--clear", "--read-clear", "-n", "--console-level", "-D", "-E",
            "--console-off", "--console-on"):
        run.flag("mutating", "dmesg clears or configures the kernel ring buffer")


def _journalctl(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ())
    if any(o.startswith(("--vacuum", "--rotate", "--flush", "--sync", "--relinquish", "--setup-keys",
                         "--update-catalog")) for o in opts):
        run.flag("mutating", "journalctl changes the journal")


def _sysctl(run: _Run) -> None:
    if any("=" in a.text for a in run.args) or any(a.text in ("-w", "--write", "-p", "--load", "--system", "-f")
                                                   for a in run.args):
        run.flag("mutating", "sysctl sets kernel parameters")


def _date(run: _Run) -> None:
    if any(a.text in ("-s", "--set") or a.text.startswith("--set=") for a in run.args):
        run.flag("mutating", "date sets the clock")


def _hostname(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-F", "--file"))
    if pos or _has(opts, "-F", "--file", "-b", "--boot"):
        run.flag("mutating", "hostname sets the host name")


def _ifconfig(run: _Run) -> None:
    if len(run.args) >= 2 and not any(a.text in ("-a", "-l", "-L", "-v") for a in run.args[:1]):
        run.flag("mutating", "ifconfig changes an interface")




def _yq(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("--arg", "-o", "--output-format", "-p", "--input-format", "--indent",
                                      "-I", "--from-file"))
    if _has(opts, "-i", "--inplace", "--in-place"):
        for p in pos[1:]:
            run.write(p, f"{run.name} -i")
        if len(pos) < 2:
            run.flag("mutating", f"{run.name} -i")


def _jq(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("--arg", "--argjson", "--slurpfile", "--rawfile", "--indent", "-f",
                                      "--from-file", "-L"))


def _printf(run: _Run) -> None:
    if run.args and run.args[0].text == "-v":
        return  # assigns a shell variable



def _black(run: _Run) -> None:
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


def _base64(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-w", "--wrap", "-i", "--input", "-o", "--output", "-b", "--break"))
    for v in opts.get("-o", []) + opts.get("--output", []):
        run.write(W(v), f"{run.name} -o")


def _gpg(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-o", "--output", "-r", "--recipient", "-u", "--local-user",
                                      "--homedir", "--keyserver"))
    if _has(opts, "--list-keys", "-k", "--list-secret-keys", "-K", "--verify", "--fingerprint", "--version",
            "--help", "--list-sigs", "--check-sigs", "--list-packets") and not _has(opts, "-o", "--output"):
        return
    if _has(opts, "--delete-key", "--delete-keys", "--delete-secret-key", "--delete-secret-keys",
            "--delete-secret-and-public-key"):
        run.flag("destructive", "gpg deletes keys")
        return
    for v in opts.get("-o", []) + opts.get("--output", []):
        run.write(W(v), "gpg -o")
    run.flag("mutating", "gpg")


def _ssh(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-p", "-i", "-o", "-F", "-l", "-J", "-L", "-R", "-D", "-b", "-c", "-E",
                                      "-e", "-I", "-m", "-O", "-Q", "-S", "-W", "-w", "-B"))
    if _has(opts, "-V", "-G", "-Q") and not pos[1:]:
        return
    if len(pos) >= 2:
        run.code(" ".join(p.text for p in pos[1:]), "ssh remote command")
        run.flag("unknown", "ssh runs a command on a remote host")
        return
    run.flag("unknown", "ssh opens a remote session")


_RULES: dict[str, Callable[[_Run], None]] = {
    "rm": _rm, "rmdir": _rmdir, "unlink": _unlink, "shred": _shred, "srm": _shred, "wipe": _shred,
    "touch": _touch, "mkdir": _mkdir, "mkfifo": _mkdir, "mknod": _mkdir,
    "chmod": _chmod_like, "chown": _chmod_like, "chgrp": _chmod_like, "chattr": _chmod_like,
    "setfacl": _chmod_like, "xattr": lambda r: (None if not any(re.fullmatch(r"-[a-z]*[wdc][a-z]*", a.text)
                                                                for a in r.args)
                                                else r.flag("mutating", "xattr modifies attributes")),
    "cp": _cp_like, "mv": _cp_like, "ln": _ln, "install": _cp_like, "link": _cp_like,
    "tee": _tee, "dd": _dd, "truncate": _truncate, "sed": _sed, "gsed": _sed,
    "awk": _awk, "gawk": _awk, "mawk": _awk, "nawk": _awk,
    "find": _find, "gfind": _find, "fd": lambda r: _fd(r), "fdfind": lambda r: _fd(r),
    "xargs": _xargs, "tar": _tar, "gtar": _tar, "bsdtar": _tar,
    "unzip": _unzip, "zip": _zip, "7z": lambda r: _7z(r), "7za": lambda r: _7z(r), "7zr": lambda r: _7z(r),
    "gzip": _compressor, "gunzip": _compressor, "bzip2": _compressor, "bunzip2": _compressor, "xz": _compressor,
    "unxz": _compressor, "zstd": _compressor, "unzstd": _compressor, "lz4": _compressor, "lzma": _compressor,
    "patch": _patch, "rsync": _rsync, "scp": _scp, "curl": _curl, "wget": _wget,
    "kill": _kill, "pkill": _dangerous_simple("mutating", "{name} signals processes"),
    "killall": _dangerous_simple("mutating", "{name} signals processes"),
    "cd": _cd, "pushd": _cd, "popd": _cd, "eval": _eval, "source": _source, ".": _source,
    "timeout": _timeout, "gtimeout": _timeout, "watch": _watch, "chroot": _chroot, "parallel": _parallel,
    "sem": _parallel, "busybox": _busybox, "toybox": _busybox, "env": _env, "git": _git,
    "pip": _pip, "pip3": _pip, "psql": _sql_client, "mysql": _sql_client, "mariadb": _sql_client,
    "sqlite3": _sqlite, "duckdb": _sqlite, "redis-cli": _redis, "fzf": _fzf, "sk": _fzf,
    "openssl": _openssl, "crontab": _crontab, "sort": _sort, "uniq": _uniq_split, "split": _uniq_split,
    "csplit": _uniq_split, "mktemp": _mktemp, "dmesg": _dmesg, "journalctl": _journalctl, "sysctl": _sysctl,
    "date": _date, "hostname": _hostname, "ifconfig": _ifconfig, "iconv": lambda r: _sort(r), "yq": _yq, "jq": _jq, "printf": _printf,
    "black": _black, "ruff": _black, "prettier": _black, "gofmt": _black, "rustfmt": _black, "isort": _black,
    "base64": _base64, "gpg": _gpg, "gpg2": _gpg, "ssh": _ssh, "exec": lambda r: _wrapper(r),
    "sudoedit": lambda r: [r.write(p, "sudoedit") for p in r.args if not p.text.startswith("-")] and None,
    "vi": lambda r: _editor(r), "vim": lambda r: _editor(r), "nvim": lambda r: _editor(r),
    "nano": lambda r: _editor(r), "emacs": lambda r: _editor(r), "code": lambda r: _editor(r),
    "history": lambda r: (r.flag("mutating", "history -c/-d clears history")
                          if any(a.text in ("-c", "-d", "-w", "-a") for a in r.args) else None),
    "export": lambda r: None, "declare": lambda r: None, "local": lambda r: None, "readonly": lambda r: None,
    "typeset": lambda r: None, "set": lambda r: None, "unset": lambda r: None, "shopt": lambda r: None,
    "alias": lambda r: None, "unalias": lambda r: None, "umask": lambda r: None, "trap": lambda r: None,
    "read": lambda r: None, "wait": lambda r: None, "exit": lambda r: None, "return": lambda r: None,
    "break": lambda r: None, "continue": lambda r: None, "shift": lambda r: None, "getopts": lambda r: None,
    "ulimit": lambda r: None, "caller": lambda r: None, "complete": lambda r: None, "bind": lambda r: None,
    "enable": lambda r: None, "disown": lambda r: None, "bg": lambda r: None, "fg": lambda r: None,
    "mapfile": lambda r: None, "readarray": lambda r: None, "let": lambda r: None,
}


def _pkg_query(run: _Run, read_opts: tuple[str, ...]) -> None:
    """dpkg / rpm: query options are read-only; install/remove/purge change the system."""
    texts = [a.text for a in run.args]
    if texts and all(t.startswith("-") is False or t in read_opts or t.startswith(read_opts) for t in texts) \
            and any(t in read_opts or t.startswith(read_opts) for t in texts):
        return
    if any(t in ("-r", "-P", "--remove", "--purge", "-e", "--erase") for t in texts):
        run.flag("destructive" if any(t in ("-P", "--purge") for t in texts) else "mutating",
                 f"{run.name} removes packages")
        return
    run.flag("mutating", f"{run.name} changes installed packages")


def _su(run: _Run) -> None:
    args = run.args
    for k, a in enumerate(args):
        if a.text in ("-c", "--command") and k + 1 < len(args):
            if args[k + 1].dyn:
                break
            run.code(args[k + 1].text, "su -c")
            return
        if a.text.startswith("--command="):
            run.code(a.text.split("=", 1)[1], "su -c")
            return
    run.flag("unknown", "su opens a shell as another user")


def _pager(run: _Run) -> None:
    # less '+!cmd' / more '+!cmd' run a shell command on start.
    if any(a.text.startswith("+") and "!" in a.text for a in run.args) or any(a.dyn and a.text.startswith("+")
                                                                               for a in run.args):
        run.flag("unknown", f"{run.name} +command runs a shell command")


def _trap(run: _Run) -> None:
    args = run.args
    if not args or args[0].text in ("-l", "-p") or args[0].text == "-":
        return
    if args[0].dyn:
        run.flag("unknown", "trap with non-literal code")
        return
    run.code(args[0].text, "trap")  # runs later, on the signal or on exit


def _uv(run: _Run) -> None:
    """uv/poetry: `uv run CMD` runs CMD (analyze it); other subcommands use the service-CLI rules."""
    args = run.args
    valued = {"--python", "-p", "--with", "--with-requirements", "--directory", "--project", "--package",
              "--env-file", "--extra", "--group", "--index", "--index-url", "--extra-index-url", "-w",
              "--only-group", "--no-group", "--config-file", "--cache-dir", "-C", "--isolated_"}
    i = 0
    while i < len(args) and args[i].text.startswith("-"):
        i += 2 if args[i].text in valued else 1
    if i < len(args) and args[i].text == "run":
        j = i + 1
        while j < len(args) and args[j].text.startswith("-"):
            if args[j].text == "--":
                j += 1
                break
            j += 2 if args[j].text in valued else 1
        inner = args[j:]
        if not inner:
            run.flag("unknown", f"{run.name} run without a command")
            return
        if inner[0].text.endswith(".py"):
            run.flag("unknown", f"{run.name} run executes a script")
            return
        run.sub(inner)
        return
    if run.name == "uv" and i < len(args) and args[i].text == "export":
        # `uv export` prints the lockfile as requirements to stdout unless -o/--output-file is given.
        outs = [args[k + 1] for k in range(i + 1, len(args) - 1) if args[k].text in ("-o", "--output-file")]
        outs += [W(a.text.split("=", 1)[1], a.dyn, a.glob) for a in args[i + 1:]
                 if a.text.startswith("--output-file=")]
        for o in outs:
            run.write(o, "uv export -o")
        return
    if run.name == "uv" and i < len(args) and args[i].text == "pip" and i + 1 == len(args):
        return  # bare `uv pip` prints the pip interface's help
    svc = _SERVICE_CLIS.get(run.name) or _S(depth=2)
    _service_cli(run, svc)


_IP_READ = ("show", "list", "lst", "ls", "sh", "get", "monitor", "help", "identify", "pids")


def _ip(run: _Run) -> None:
    """ip [OPTIONS] OBJECT [COMMAND ...]: no command or a show/list/get command is read-only."""
    args = [a for a in run.args]
    k = 0
    while k < len(args) and args[k].text.startswith("-"):
        if args[k].text in ("-n", "-netns", "-b", "-batch", "-rc", "-rcvbuf", "-l", "-loops", "-f", "-family"):
            if args[k].text in ("-b", "-batch"):
                run.flag("unknown", "ip -batch runs commands from a file")
                return
            k += 1
        if args[k].text in ("-all", "-a") and any(a.text == "exec" for a in args):
            run.flag("unknown", "ip netns exec runs a command")
            return
        k += 1
    rest = [a.text for a in args[k + 1:]]
    if k < len(args) and args[k].text in ("monitor", "mo", "mon"):
        return
    if not rest or rest[0] in _IP_READ or (rest[0].startswith("-") and not any(
            r in ("add", "del", "delete", "change", "replace", "set", "flush", "append", "prepend", "exec",
                  "attach", "detach", "save", "restore", "update", "test", "up", "down") for r in rest)):
        return
    if rest[0] in ("exec",) or "exec" in rest[:2]:
        run.flag("unknown", "ip netns exec runs a command")
        return
    kind = "destructive" if rest[0] in ("flush", "del", "delete") and args[k].text.startswith(("r", "a")) else \
        "mutating"
    run.flag(kind, f"ip {args[k].text} {rest[0]}")


def _sqlcmd(run: _Run) -> None:
    """go-sqlcmd: `sqlcmd query SQL`, `sqlcmd config view` ...; classic sqlcmd -Q/-q/-i."""
    opts, pos = _split_opts(run.args, ("-q", "--query", "-t", "--text", "-d", "--database", "-Q", "-i", "-S",
                                      "-U", "-P", "-o", "-c"))
    first = pos[0].text if pos else ""
    if _has(opts, "--help", "-h", "-?") and not (opts.keys() & {"-q", "--query", "-Q", "-i", "-t", "--text"}):
        return
    if first == "config" and len(pos) > 1 and pos[1].text in ("view", "cs", "connection-strings",
                                                               "get-contexts", "get-endpoints", "get-users",
                                                               "current-context"):
        return
    for v in opts.get("-o", []):
        run.write(W(v), "sqlcmd -o")
    codes = opts.get("-q", []) + opts.get("--query", []) + opts.get("-t", []) + opts.get("--text", []) + \
        opts.get("-Q", [])
    if first == "query":
        codes += [p.text for p in pos[1:]]
    if "-i" in opts or not codes:
        run.flag("unknown", "sqlcmd runs a script or an interactive session")
        return
    _sql_codes_verdict(run, codes, "sqlcmd")


def _rtk(run: _Run) -> None:
    """rtk (a token-saving proxy): `rtk [proxy] CMD ...` runs CMD; gain/discover only report."""
    args = run.args
    if not args or (args[0].text == "proxy" and len(args) == 1):
        run.flag("unknown", "rtk without a command")
        return
    first = args[0].text
    if first in ("gain", "discover", "help", "version", "--help", "-h", "--version", "config"):
        return
    run.sub(args[1:] if first == "proxy" else args)


def _script(run: _Run) -> None:
    """script [-a] [-q] [-p] [file [command ...]] (BSD) records a session into file."""
    opts, pos = _split_opts(run.args, ("-F", "-t", "-T", "-c", "--command", "-O", "-I", "-B", "--log-out",
                                      "--log-in", "--log-io", "--log-timing", "-E", "--echo"),
                            stop_at_first_pos=True)
    if _has(opts, "-p"):
        return
    if "-c" in opts or "--command" in opts:
        for v in opts.get("-c", []) + opts.get("--command", []):
            run.code(v, "script -c")
    target = pos[0] if pos else W("typescript")
    run.write(target, "script log")
    if len(pos) > 1:
        run.sub(pos[1:])
    elif not ("-c" in opts or "--command" in opts):
        run.flag("unknown", "script starts an interactive shell")


def _dscl(run: _Run) -> None:
    for a in run.args:
        t = a.text.lstrip("-")
        if t in ("read", "readall", "list", "search", "diff", "readpl", "readpli", "help", "q", "quit"):
            return
        if t in ("create", "append", "merge", "delete", "change", "passwd", "changei", "createpl", "deletepl",
                 "mcxset", "mcxdelete", "auth", "authonly"):
            run.flag("destructive" if t in ("delete", "deletepl", "mcxdelete") else "mutating", f"dscl -{t}")
            return
    run.flag("unknown", "dscl action not recognised")


def _editor(run: _Run) -> None:
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


def _fd(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ("-x", "--exec", "-X", "--exec-batch", "-e", "--extension", "-t",
                                      "--type", "-E", "--exclude", "-d", "--max-depth", "-j", "--threads",
                                      "-S", "--size", "--changed-within", "--changed-before", "-o", "--owner",
                                      "--base-directory", "--path-separator", "--search-path", "-c", "--color",
                                      "--max-results", "--min-depth", "--exact-depth", "--ignore-file",
                                      "--format"))
    args = run.args
    for i, a in enumerate(args):
        if a.text in ("-x", "--exec", "-X", "--exec-batch"):
            inner = args[i + 1:]
            j = 0
            while j < len(inner) and inner[j].text != ";":
                j += 1
            if not j:
                run.flag("unknown", f"fd {a.text} without a command")
                return
            _run_argv(run.wk, inner[:j], run.ctx, run.depth + 1, xargs=True)
            return


def _7z(run: _Run) -> None:
    opts, pos = _split_opts(run.args, ())
    sub = pos[0].text if pos else ""
    if sub in ("l", "t", "i", "h", "b") or not pos:
        return
    if sub in ("d",):
        run.flag("destructive", f"{run.name} d deletes from an archive")
        return
    run.acc.unresolved = True
    if sub in ("a", "u") and len(pos) >= 2:
        run.write(pos[1], f"{run.name} {sub}")
        return
    run.write(W((opts and next((k[2:] for k in opts if k.startswith("-o")), None)) or "."), f"{run.name} {sub}")




def _security(run: _Run) -> None:
    if not run.args:
        run.flag("unknown", "security opens an interactive prompt")
        return
    first = run.args[0].text
    if first in ("list-keychains", "default-keychain", "login-keychain") and \
            any(a.text == "-s" for a in run.args[1:]):
        run.flag("mutating", f"security {first} -s changes the keychain search list")
        return
    _SECURITY_RO(run)


# -- verb-prefix read-only dispatch for macOS tools ------------------------------------------------------
def _mac_tool(read_prefixes: tuple[str, ...], read_exact: tuple[str, ...] = (),
              destroy: tuple[str, ...] = (), stdout_flags: tuple[str, ...] = ()) -> Callable[[_Run], None]:
    def rule(run: _Run) -> None:
        if stdout_flags and any(a.text in stdout_flags for a in run.args):
            return  # output goes to stdout
        args = run.args
        if run.name == "defaults":
            # global options before the verb: -currentHost, -host NAME
            while args and args[0].text in ("-currentHost", "-host"):
                args = args[2:] if args[0].text == "-host" else args[1:]
        first = args[0].text if args else ""
        if not run.args:
            run.flag("unknown", f"{run.name} without a subcommand")
            return
        if first in ("-h", "--help", "-help", "help", "--version", "-version", "version"):
            return
        if first.startswith(destroy) and destroy:
            run.flag("destructive", f"{run.name} {first}")
            return
        if first.startswith(read_prefixes) or first in read_exact:
            return
        run.flag("mutating", f"{run.name} {first}")
    return rule


_RULES.update({
    "scutil": lambda r: (r.flag("unknown", "scutil opens an interactive prompt") if not r.args
                         else _SCUTIL_RO(r)),
    "prometheus": lambda r: (r.flag("unknown", "prometheus starts a server") if not r.args else _PROM_RO(r)),
    "networksetup": _mac_tool(("-get", "-list", "-show", "-print", "-is", "-version", "-help")),
    "_security_ro": _mac_tool(("find-", "show-", "dump-", "list-", "verify-", "cms", "smartcard-list", "get-",
                           "leaks", "translocate-", "requirement-evaluate",
                           "default-keychain", "login-keychain", "error", "authorizationdb read", "dump"),
                          destroy=("delete-",)),
    "_scutil_ro": _mac_tool(("--get", "--dns", "--proxy", "-r", "--nwi", "--nc list", "--nc status", "-w"),
                        ("-d",)),
    "defaults": _mac_tool(("read", "read-type", "domains", "find", "export", "help")),
    "pmset": _mac_tool(("-g",)),
    "security": _security,
    "tmutil": _mac_tool(("listbackups", "latestbackup", "machinedirectory", "destinationinfo", "isexcluded",
                         "compare", "calculatedrift", "uniquesize", "version", "status", "listlocalsnapshots",
                         "listlocalsnapshotdates", "verifychecksums"),
                        destroy=("delete", "thinlocalsnapshots")),
    "diskutil": _mac_tool(("list", "info", "activity", "listFilesystems", "apfs list", "verifyVolume",
                           "verifyDisk", "cs list"), destroy=("erase", "zeroDisk", "randomDisk",
                                                              "secureErase", "partitionDisk", "reformat")),
    # plutil FILE... defaults to -lint (a syntax check).
    "plutil": lambda r: (None if r.args and not any(a.text.startswith("-") for a in r.args)
                         else _mac_tool(("-p", "-lint", "-help", "-type", "-extract"))(r)),
    "launchctl_": _mac_tool(()),
    "csrutil": _mac_tool(("status", "report")),
    "spctl": _mac_tool(("--status", "--disable-status", "-a", "--assess", "--list", "--test", "--check")),
    "mdutil": _mac_tool(("-s",)),
    "codesign": _mac_tool(("-d", "--display", "-v", "--verify", "-dv", "-dvv", "-dvvv", "--validate-constraint")),
    "pkgutil": _mac_tool(("--pkgs", "--files", "--groups", "--pkg-groups", "--pkg-info", "--export-plist", "--file-info", "--packages",
                          "--group-pkgs", "--check-signature", "--payload-files", "--pkgs-plist")),
    "softwareupdate": _mac_tool(("-l", "--list", "--history", "--dump-state")),
    "nvram": _mac_tool(("-p", "-x")),
    "hdiutil": _mac_tool(("info", "imageinfo", "verify", "isencrypted", "checksum", "pmap", "plugins", "help")),
    # lipo takes the input file anywhere: read-only when an inspection operation is given and no output.
    "lipo": lambda r: (r.flag("unknown", "lipo without an operation") if not r.args else None
                       if any(a.text in ("-info", "-detailed_info", "-archs", "-verify_arch") for a in r.args)
                       and not any(a.text in ("-create", "-output", "-extract", "-extract_family", "-remove",
                                              "-replace", "-thin") for a in r.args)
                       else r.flag("mutating", "lipo writes a binary")),
    # sips with only file operands has no function to apply (it modifies only with -s/-r/-z/... options).
    "sips": lambda r: (None if r.args and not any(a.text.startswith("-") for a in r.args)
                       else _mac_tool(("-g", "--getProperty", "-1", "--verify"))(r)),
    "qlmanage": _mac_tool(("-m", "-h", "-p", "-t")),
    "mdimport": _mac_tool(("-L", "-A", "-X", "-t", "-n")),
    "say": lambda r: [r.write(W(a.text.split("=", 1)[1]) if "=" in a.text else
                              (r.args[k + 1] if k + 1 < len(r.args) else W("", True)), "say -o")
                      for k, a in enumerate(r.args) if a.text.split("=", 1)[0] in ("-o", "--output-file")] and None,
    "ping": lambda r: None,
    "sleep": lambda r: None,
    "pre-commit": _mac_tool((), ("--version", "help", "validate-config", "validate-manifest", "sample-config")),
    # Ad-hoc ansible runs a module on remote hosts (even -m ping ships and runs Python there): ask, unless
    # it only lists hosts, checks syntax or runs in --check mode.
    "ansible": lambda r: (None if any(a.text in ("--list-hosts", "--syntax-check", "--version", "--check", "-C",
                                                 "--help", "-h", "--list-tasks")
                                      for a in r.args)
                          else r.flag("unknown", "ansible runs modules on remote hosts")),
    "ansible-test": _mac_tool(("sanity", "units", "--version", "env")),
    # ansible-pull -C is --checkout (a branch), not --check.
    "ansible-pull": lambda r: (None if any(a.text in ("--help", "-h", "--version", "--check", "--list-hosts")
                                           for a in r.args) else r.flag("unknown", "ansible-pull runs a playbook")),
    "ansible-console": lambda r: (None if any(a.text in ("--help", "-h", "--version", "--list-hosts")
                                              for a in r.args) else r.flag("unknown", "ansible-console is a REPL")),
    "_prometheus_ro": _mac_tool(("--version", "--help", "-h", "--help-long")),
    "compression_tool": lambda r: (None if not any(a.text == "-o" for a in r.args)
                                   else r.write(r.args[[a.text for a in r.args].index("-o") + 1]
                                                if [a.text for a in r.args].index("-o") + 1 < len(r.args)
                                                else W("", True), "compression_tool -o")),
    "binhex": _mac_tool(("-h", "--help", "probe", "info", "-V", "--version"), stdout_flags=("-c", "--pipe",
                                                                                              "--to-stdout")),
    "applesingle": _mac_tool(("-h", "--help", "probe", "info", "-V", "--version"), stdout_flags=("-c", "--pipe",
                                                                                                   "--to-stdout")),
    "macbinary": _mac_tool(("-h", "--help", "probe", "info", "-V", "--version"), stdout_flags=("-c", "--pipe",
                                                                                                 "--to-stdout")),
    "open": lambda r: (None if any(a.text in ("-R", "--reveal") for a in r.args)
                       else r.flag("unknown", "open launches an application (which may run the file)")),
    "ditto": lambda r: _cp_like(r),
    "iptables": lambda r: (None if any(a.text in ("-L", "--list", "-S", "--list-rules", "-n") and
                                       not any(b.text in ("-A", "-D", "-F", "-X", "-I", "-R", "-P", "-Z", "-N")
                                               for b in r.args) for a in r.args)
                           else r.flag("destructive" if any(b.text in ("-F", "--flush", "-X") for b in r.args)
                                       else "mutating", "iptables changes firewall rules")),
    "base32": _base64, "basenc": _base64,
    "xxd": lambda r: [r.write(p, "xxd outfile") for p in _split_opts(
        r.args, ("-l", "-len", "-s", "-seek", "-c", "-cols", "-g", "-groupsize", "-o", "-offset", "-n", "-name"))[1][1:2]]
    and None,
    "mkswap": _dangerous_simple("destructive", "{name} formats a device"),
    "systemd-run": lambda r: r.flag("unknown", "systemd-run runs a command"),
    "docker-compose": lambda r: _service_cli(r, _SERVICE_CLIS["docker"]),
    "podman-compose": lambda r: _service_cli(r, _SERVICE_CLIS["docker"]),
    "bd": lambda r: _service_cli(r, _S(depth=1, read="list show ready blocked stats search ")),
    "java": lambda r: (None if any(a.text in ("-version", "--version", "-help", "--help") for a in r.args)
                       and len(r.args) == 1
                       else (r.flag("destructive", "java runs a destructive CLI command")
                             if any(a.text.lower().startswith(("delete", "remove", "drop", "purge"))
                                    for a in r.args)
                             else r.flag("unknown", "java runs a program"))),
    "7zz": lambda r: _7z(r),
    "ansible-doc": lambda r: None,
    "ansible-inventory": lambda r: (r.write(W(next((r.args[i + 1].text for i, a in enumerate(r.args[:-1])
                                                    if a.text == "--output"), "")), "ansible-inventory --output")
                                    if any(a.text == "--output" for a in r.args) else None),
    "ansible-lint": lambda r: (r.flag("mutating", "ansible-lint --fix rewrites files")
                               if any(a.text.startswith("--fix") or a.text == "--write" for a in r.args) else None),
    "ansible-playbook": lambda r: (None if any(a.text in ("--syntax-check", "--list-hosts", "--list-tasks",
                                                          "--list-tags", "--check", "-C", "--help", "-h",
                                                          "--version") for a in r.args)
                                   else r.flag("unknown", "ansible-playbook runs tasks on hosts")),
    "ansible-galaxy": lambda r: _service_cli(r, _S(depth=2, read="list search info verify")),
    "uv": lambda r: _uv(r),
    "terraform": lambda r: (_black(r) if r.args[:1] and r.args[0].text == "fmt"
                            else _service_cli(r, _SERVICE_CLIS["terraform"])),
    "tofu": lambda r: (_black(r) if r.args[:1] and r.args[0].text == "fmt"
                       else _service_cli(r, _SERVICE_CLIS["tofu"])),
    "packer": lambda r: (_black(r) if r.args[:1] and r.args[0].text == "fmt"
                         else _service_cli(r, _SERVICE_CLIS["packer"])),
    "cargo": lambda r: (_black(r) if r.args[:1] and r.args[0].text == "fmt"
                        else _service_cli(r, _SERVICE_CLIS["cargo"])),
    "ip": lambda r: _ip(r),
    "sqlcmd": lambda r: _sqlcmd(r),
    "symbols": lambda r: [r.write(r.args[k + 1], f"symbols {a.text}") for k, a in enumerate(r.args[:-1])
                          if a.text in ("-saveSignature", "-symbolsPackageDir")] and None,
    "poetry": lambda r: _uv(r),
    "rtk": lambda r: _rtk(r),
    "script": lambda r: _script(r),
    "sample": lambda r: (r.flag("unknown", "sample without a process") if not r.args else
                         [r.write(r.args[k + 1], "sample -file") for k, a in enumerate(r.args[:-1])
                          if a.text == "-file"] and None),
    "dscl": lambda r: _dscl(r),
    "profiles": lambda r: _service_cli(r, _S(depth=1, read="help status list show validate version")),
    "textutil": lambda r: (None if any(a.text in ("-stdout", "-info", "-help") for a in r.args)
                           else r.flag("mutating", "textutil converts files")),
    "rg": lambda r: (r.flag("unknown", "rg --pre runs a preprocessor command")
                     if any(a.text == "--pre" or a.text.startswith("--pre=") for a in r.args) else None),
    "less": lambda r: _pager(r), "more": lambda r: _pager(r), "most": lambda r: _pager(r),
    "man": lambda r: (r.flag("unknown", "man with a custom pager/browser runs it")
                      if any(a.text.startswith(("-P", "--pager", "-H", "--html")) for a in r.args) else None),
    "trap": lambda r: _trap(r),
    "alias": lambda r: (r.flag("unknown", "alias definitions change what later commands run")
                        if any("=" in a.text for a in r.args) else None),
    "hash": lambda r: (r.flag("unknown", "hash -p changes which binary a name runs")
                       if any(a.text.startswith("-p") for a in r.args) else None),
    "su": lambda r: _su(r),
    "dpkg": lambda r: _pkg_query(r, ("-l", "-L", "-s", "-S", "-p", "--list", "--listfiles", "--status", "--search",
                                     "--print-avail", "--get-selections", "--print-architecture", "-c",
                                     "--contents", "-I", "--info", "--compare-versions", "--audit", "-C")),
    "rpm": lambda r: _pkg_query(r, ("-q", "-qa", "-qi", "-ql", "-qf", "-qc", "-qd", "-qR", "--query", "-K",
                                    "--checksig", "-V", "--verify", "--eval", "--showrc", "-qp", "-qpl")),
    "hostnamectl": lambda r: (r.flag("mutating", "hostnamectl changes host settings")
                              if any(a.text.startswith("set-") for a in r.args) else None),
    "markdownlint": lambda r: (r.flag("mutating", "markdownlint --fix rewrites files")
                               if any(a.text == "--fix" for a in r.args) else None),
    "make": lambda r: (None if any(a.text in ("-n", "--dry-run", "--just-print", "--recon", "-q", "--question",
                                              "-v", "--version", "--help", "-h") for a in r.args)
                       else r.flag("unknown", "make runs recipes (arbitrary commands)", risk="runs-code")),
})


_READ_ONLY = _READ_ONLY - frozenset(_RULES)

_SECURITY_RO = _RULES.pop("_security_ro")
_SCUTIL_RO = _RULES.pop("_scutil_ro")
_PROM_RO = _RULES.pop("_prometheus_ro")
