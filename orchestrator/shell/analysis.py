"""The analyzer's public result: :class:`ShellAnalysis`, and the vocabulary of its ``risks`` (:data:`RISKS`)."""
from __future__ import annotations

from dataclasses import dataclass


_KINDS = ("read_only", "mutating", "unknown", "destructive")
_RANK = {k: i for i, k in enumerate(_KINDS)}


class ShellEntry(tuple[int, str, tuple[str, ...], bool]):
    """A directory entry a command makes (one item of :attr:`ShellAnalysis.entries`).

    write_index: the entry's path as an index into ``ShellAnalysis.write_log``, or -1 for "anywhere in the
    tree" (``git checkout`` restores links wherever the object store has them).
    op: how the entry is made -- "ln" (a link), "mv" / "cplink" (a move or a link-preserving copy: a link if a
    source holds one), "cplink-replace" (rsync -a), "replace" (install, rsync, sed -i: renamed over, not
    written through) or "copy" (cp, rsync --inplace: written through).
    sources: the paths it is made from, spelled like those of ``write_log``.
    named: into an existing directory the entry is DIR/<basename of each source> (else: anything in DIR).

    An immutable tuple with named fields, as ``typing.NamedTuple`` would make it, written out: NamedTuple
    builds its class with ``exec`` (~130 µs at import), and every hook process that analyzes a command imports
    this module. Being a tuple, it compares, hashes and unpacks like one.
    """

    __slots__ = ()
    #: as a NamedTuple has: dataclasses.asdict/astuple rebuild a tuple with ``_fields`` from its fields, any other
    #: tuple from one iterable (which ``__new__`` does not take)
    _fields = ("write_index", "op", "sources", "named")

    def __new__(cls, write_index: int, op: str, sources: tuple[str, ...] = (), named: bool = False) -> ShellEntry:
        return tuple.__new__(cls, (write_index, op, sources, named))

    def _asdict(self) -> dict[str, object]:
        """The fields by name (what code that recognises a named tuple by ``_fields`` calls next)."""
        return dict(zip(self._fields, self))

    def __getnewargs__(self) -> tuple[int, str, tuple[str, ...], bool]:
        # copy and pickle rebuild a tuple subclass as cls.__new__(cls, *__getnewargs__()); tuple's own answer is
        # (the tuple,): one argument, where __new__ takes the four fields (NamedTuple defines the same)
        return (self[0], self[1], self[2], self[3])

    @property
    def write_index(self) -> int:
        return self[0]

    @property
    def op(self) -> str:
        return self[1]

    @property
    def sources(self) -> tuple[str, ...]:
        return self[2]

    @property
    def named(self) -> bool:
        return self[3]

    def __repr__(self) -> str:
        return f"ShellEntry(write_index={self[0]!r}, op={self[1]!r}, sources={self[2]!r}, named={self[3]!r})"


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
    #: directory entries the command makes (links, moves, copies: :class:`ShellEntry`), in command order.
    #: The pipeline compares them with ``write_log`` on canonical paths (orchestrator.engine.prepare._check_new_entries).
    entries: tuple[ShellEntry, ...] = ()
    #: a write target or a ``cd`` went through ``..``: lexically simplified, which is wrong through a new link
    dotdot: bool = False
    #: every write target in command order, duplicates kept (``writes`` is the deduplicated view)
    write_log: tuple[str, ...] = ()
    #: structured risk categories (see :data:`RISKS`), for policy decisions that must not parse ``reasons``
    risks: frozenset[str] = frozenset()
    #: secret files the command reads, copies or sends: ``(path as written, pattern, "read"|"copy"|"send")``
    #: (rules in :mod:`orchestrator.shell.rules.secrets`; the secrets pre-hook refuses the command on them)
    secrets: tuple[tuple[str, str, str], ...] = ()
    #: every simple command the analyzer dispatched, after wrappers (env, sudo, nice, timeout...) were unwrapped
    #: and shell code (bash -c, eval) was walked: ``(program name, first argument not starting with "-" or None)``
    #: in command order. Approval signatures bind to it (orchestrator.approvals.risk.signature) instead of
    #: re-parsing the command.
    programs: tuple[tuple[str, str | None], ...] = ()
    #: the words of the command (after quote removal) when the whole command line is ONE simple command of
    #: literal words -- no list, pipeline, subshell, redirection, ``VAR=value``, expansion, substitution or glob;
    #: else None. ``approval.allow_commands`` matches on it (orchestrator.config.allowlist.allowlisted)
    argv: tuple[str, ...] | None = None

    @property
    def read_only(self) -> bool:
        return self.kind == "read_only"

    @property
    def destructive(self) -> bool:
        return self.kind == "destructive"


# ----------------------------------------------------------------------------------------------------------
# accumulation


#: the vocabulary of ``ShellAnalysis.risks``: what kind of danger made a command more than read-only.
#: Approval policy keys on these (e.g. "runs-code" alone may run unasked inside the sandbox).
RISKS: dict[str, str] = {
    "runs-code": "runs local or project code whose effects the analyzer cannot see (tests, builds, scripts)",
    "destructive": "deletes trees, rewrites history, force-pushes or otherwise destroys work",
    "outside-world": "changes state outside this machine's workspace (publish, deploy, cloud/cluster, remote push)",
    "secret-read": "reads a protected secret",
    "exfiltration": "sends a secret file to another host",
    "upload": "sends local data to another host (curl -d/-F/-T, wget --post-*, scp/rsync to a remote, nc, socat, "
              "git push to a URL): a person decides",
    "hijack": "environment, options or configuration make a program run other code",
    "unparseable": "the command could not be parsed or analyzed",
    "unresolved-target": "a target path depends on a variable, glob or substitution",
    # the approval risk classes (orchestrator.approvals.risk.RISK_CLASSES): policy `approval.forbid_remember`
    # names the first three, so these keys are part of the configuration surface
    "force-push": "git push that overwrites remote history (--force, -f, +refspec, --mirror, --force-with-lease)",
    "history-rewrite": "discards commits or uncommitted work (reset --hard, rebase, amend, branch -D, clean -f, "
                       "checkout/restore of paths, push --delete)",
    "recursive-delete": "deletes a directory tree (rm -r, find -delete)",
    "file-delete": "deletes files (rm, rmdir, unlink, shred)",
    "unclassified": "an unknown or destructive reason no category above names (the approval policy always asks)",
    # information, not a danger by itself: the secrets pre-hook asks only where the repository tracks a secret
    "object-read": "git prints or copies the contents of objects (show, log -p, grep, diff, cat-file, archive…): a "
                   "tracked secret would be printed from .git/objects",
}
#: the :data:`RISKS` keys that only inform a later check and never count as a danger by themselves
INFO_RISKS: frozenset[str] = frozenset({"object-read"})


#: the :data:`RISKS` keys that name an approval risk class rather than a new kind of danger: they refine
#: "destructive" / "mutating" for what a person may remember, and policies that gate on the other keys (the
#: sandbox's contained set) look past them
APPROVAL_CLASSES: frozenset[str] = frozenset({"force-push", "history-rewrite", "recursive-delete", "file-delete"})
