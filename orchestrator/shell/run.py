"""What a rule sees: the accumulator of one analysis (:class:`_Acc`), the walk state (:class:`_Ctx`) and one
simple command (:class:`_Run`) with the helpers rules use to record writes, deletes, flags and inner code.

This module sits below the walker, the dispatcher and the rules, and imports none of them: a rule hands inner
code back to the analyzer through the walker it was given (``run.wk``, see :class:`_Walker`), and a verdict on
a separate command goes through the entry point the accumulator carries (``_Acc.verdict``, set by
:func:`orchestrator.shell.api.analyze`)."""
from __future__ import annotations

from orchestrator.shell.analysis import ShellAnalysis, ShellEntry, _KINDS, _RANK
from orchestrator.shell.words import W

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (strings at runtime): keep `typing` off the import path
    from typing import Any, Callable, Protocol

    class _Walker(Protocol):
        """What rules and the dispatcher use of :class:`orchestrator.shell.walker._Walker` (which imports
        this module: naming the class here would be an import cycle)."""

        acc: _Acc
        functions: dict[str, Any]
        assigned: set[str]
        defining: bool
        stage_downloads: bool
        stage_output: str | None

        def assignment(self, text: str) -> None: ...
        def write_target(self, w: W, ctx: _Ctx, why: str, kind: str = "mutating") -> None: ...
        def delete_target(self, w: W, ctx: _Ctx, why: str, kind: str = "mutating") -> None: ...
        def _path(self, w: W, ctx: _Ctx) -> str: ...
        def dispatch(self, argv: list[W], ctx: _Ctx, depth: int, xargs: bool = False) -> None: ...
        def analyze_code(self, source: str, ctx: _Ctx, depth: int) -> None: ...
        def isolated(self, argv: list[W], depth: int) -> _Acc: ...
        def call(self, name: str, args: list[W], ctx: _Ctx) -> None: ...


class _Acc:
    __slots__ = ("rank", "writes", "deletes", "reasons", "unresolved", "entries", "dotdot", "risks", "secrets",
                 "secret_hits", "programs", "argv", "verdict")

    def __init__(self, verdict: Callable[[str], ShellAnalysis]) -> None:
        self.rank = 0
        self.writes: list[str] = []
        self.deletes: list[str] = []
        self.reasons: list[tuple[int, str]] = []
        self.unresolved = False
        self.entries: list[ShellEntry] = []
        self.dotdot = False
        self.risks: set[str] = set()
        self.secrets: Any = None  # a SecretMatcher: shell_secrets records hits when set
        self.secret_hits: list[tuple[str, str, str]] = []
        self.programs: list[tuple[str, str | None]] = []  # see ShellAnalysis.programs
        self.argv: tuple[str, ...] | None = None  # see ShellAnalysis.argv
        # the analyzer's entry point (api.analyze) for a command judged on its own (_Run.verdict): injected, so
        # that nothing below the api imports it
        self.verdict = verdict

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
            programs=tuple(self.programs),
            argv=self.argv,
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

    def tag(self, risk: str) -> None:
        """Add a :data:`RISKS` key without changing the kind (``rm -r build`` is mutating, yet a recursive delete)."""
        self.wk.acc.risks.add(risk)

    def write(self, w: W, why: str | None = None, kind: str = "mutating") -> None:
        self.wk.write_target(w, self.ctx, why or self.name, kind)

    def delete(self, w: W, why: str | None = None, kind: str = "mutating") -> None:
        self.wk.delete_target(w, self.ctx, why or self.name, kind)

    def entry(self, op: str, sources: tuple[str, ...] = (), named: bool = False, anywhere: bool = False) -> None:
        """Record that the command makes a directory entry (:class:`ShellEntry`) at its latest write target, or
        ``anywhere`` in the tree."""
        acc = self.wk.acc
        acc.entries.append(ShellEntry(-1 if anywhere else len(acc.writes) - 1, op, sources, named))

    # -- inner code: the one way rules hand code to the analyzer again ----------------------------------------
    # Through the walker (run.wk) and the accumulator's entry point: this module imports neither the dispatcher,
    # the walker nor the api (they import it).
    def sub(self, argv: list[W], xargs: bool | None = None, nested: bool = False, ctx: _Ctx | None = None) -> None:
        """Analyze ``argv`` as a command this one runs (a wrapper's payload, ``find -exec``), into this result.
        ``nested`` counts it as one level deeper (the nesting limit of :data:`orchestrator.shell.parse._MAX_DEPTH`);
        ``ctx`` is the walk state it runs in (default: this command's; ``git -C DIR`` moves it)."""
        self.wk.dispatch(argv, self.ctx if ctx is None else ctx, self.depth + 1 if nested else self.depth,
                         self.xargs if xargs is None else xargs)

    def code(self, text: str, why: str) -> None:
        """Recurse into a string of shell code (bash -c, eval), into this result."""
        self.wk.analyze_code(text, self.ctx.copy(), self.depth + 1)

    def isolated(self, argv: list[W]) -> _Acc:
        """Analyze ``argv`` as a command run elsewhere (inside a container): its own accumulator, fresh walk
        state, one level deeper; the caller decides what of it counts here."""
        return self.wk.isolated(argv, self.depth + 1)

    def verdict(self, text: str) -> ShellAnalysis:
        """How the analyzer judges ``text`` on its own (a pager command, a string in inline code, a key
        binding): nothing of it is recorded in this command's result."""
        return self.wk.acc.verdict(text)
