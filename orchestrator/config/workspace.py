"""The workspace: where ``.orchestration/`` lives, its paths, and ``orch init`` scaffolding."""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from pathlib import Path

from orchestrator.core.errors import WorkspaceError

ORCH_DIR = ".orchestration"
GITATTRIBUTES_LINE = ".orchestration/agent_trace.jsonl merge=union"


class Workspace:
    """Paths of one governed repository. ``root`` is absolute and symlink-resolved."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def __repr__(self) -> str:
        return f"Workspace({str(self.root)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Workspace) and other.root == self.root

    def __hash__(self) -> int:
        return hash(self.root)

    @property
    def orch_dir(self) -> Path:
        return self.root / ORCH_DIR

    @property
    def intents_file(self) -> Path:
        return self.orch_dir / "active_intents.yaml"

    @property
    def intentignore_file(self) -> Path:
        return self.orch_dir / ".intentignore"

    @property
    def policy_file(self) -> Path:
        return self.orch_dir / "policy.yaml"

    @property
    def ledger_file(self) -> Path:
        return self.orch_dir / "agent_trace.jsonl"

    @property
    def run_dir(self) -> Path:
        """Runtime state (sessions, approvals, socket); gitignored."""
        return self.orch_dir / "run"

    @functools.cached_property
    def shared_run_dir(self) -> Path:
        """Runtime state shared by every git worktree of this repository (the approval broker's files): under the
        main worktree's run dir for a worktree top, else :attr:`run_dir` (see :mod:`orchestrator.vcs.worktrees`)."""
        from orchestrator.vcs.worktrees import shared_run_dir

        return shared_run_dir(self.root)

    @property
    def approvals_dir(self) -> Path:
        """The approval broker's directory (requests, decisions, grants, audit), shared by all worktrees."""
        return self.shared_run_dir / "approvals"

    @functools.cached_property
    def leases_dir(self) -> str:
        """The write leases' directory (:mod:`orchestrator.state.leases`), shared by all worktrees like the broker's."""
        return os.path.join(self.shared_run_dir, "leases")

    @property
    def agents_md(self) -> Path:
        return self.root / "AGENTS.md"

    # string forms, computed once: the hot path stats these on every call and pathlib's
    # object construction costs more than the stat itself
    @functools.cached_property
    def intents_path(self) -> str:
        return str(self.intents_file)

    @functools.cached_property
    def intentignore_path(self) -> str:
        return str(self.intentignore_file)

    @functools.cached_property
    def policy_path(self) -> str:
        return str(self.policy_file)

    def ensure_run_dir(self) -> Path:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        return self.run_dir

    @classmethod
    def at(cls, root: str | os.PathLike[str]) -> Workspace:
        """The workspace rooted exactly at ``root`` (must contain ``.orchestration/``)."""
        path = Path(os.path.realpath(os.path.expanduser(os.fspath(root))))
        if not (path / ORCH_DIR).is_dir():
            raise WorkspaceError(
                f"no {ORCH_DIR}/ in {path}",
                hint="run `orch init` in the repository root first",
                path=str(path),
            )
        return cls(path)


def find_root(start: str | os.PathLike[str] | None = None) -> Path:
    """Walk up from ``start`` (default: cwd) to the nearest directory holding ``.orchestration/``."""
    here = Path(os.path.realpath(os.fspath(start) if start is not None else os.getcwd()))
    for candidate in (here, *here.parents):
        if (candidate / ORCH_DIR).is_dir():
            return candidate
    raise WorkspaceError(
        f"no {ORCH_DIR}/ found in {here} or any parent",
        hint="run `orch init` in the repository root, or pass the workspace explicitly",
        path=str(here),
    )


def find_root_of(candidates: Iterable[str | os.PathLike[str] | None]) -> Path | None:
    """The :func:`find_root` of the first candidate that has a workspace at or above it (empty and None
    candidates are skipped); None if none has. For callers with several places to look (a hook event's ``cwd``,
    then ``ORCH_ROOT``, the agent's project variable, the process's cwd)."""
    for candidate in candidates:
        if not candidate:
            continue
        try:
            return find_root(candidate)
        except (WorkspaceError, OSError):
            continue
    return None


def find_workspace(start: str | os.PathLike[str] | None = None) -> Workspace:
    """:func:`find_root` wrapped in a :class:`Workspace`."""
    return Workspace(find_root(start))


def _template(name: str) -> str:
    from importlib import resources

    return resources.files("orchestrator.data").joinpath("templates").joinpath(name).read_text(encoding="utf-8")


def init(directory: str | os.PathLike[str] = ".") -> list[Path]:
    """Create the governance files in ``directory``; never overwrite; return what was created.

    Idempotent: a second run creates nothing. Lines are appended to an existing ``.gitignore`` or
    ``.gitattributes`` only when missing.
    """
    root = Path(os.path.realpath(os.fspath(directory)))
    if not root.is_dir():
        raise WorkspaceError(f"{root} is not a directory", hint="create it first", path=str(root))
    ws = Workspace(root)
    created: list[Path] = []
    ws.orch_dir.mkdir(exist_ok=True)
    for path, template in (
        (ws.intents_file, "active_intents.yaml"),
        (ws.intentignore_file, "intentignore"),
        (ws.policy_file, "policy.yaml"),
    ):
        if not path.exists():
            path.write_text(_template(template), encoding="utf-8")
            created.append(path)
    if not ws.ledger_file.exists():
        ws.ledger_file.touch()
        created.append(ws.ledger_file)
    ws.run_dir.mkdir(exist_ok=True)
    trusted = _trust_own_key(ws.orch_dir)
    if trusted is not None:
        created.append(trusted)
    # runtime state never enters git: a .gitignore inside .orchestration/ keeps it local to us
    if _ensure_line(ws.orch_dir / ".gitignore", "run/"):
        created.append(ws.orch_dir / ".gitignore")
    # ledgers of two branches merge by concatenation; verification accepts the union (docs/ledger.md)
    if _ensure_line(root / ".gitattributes", GITATTRIBUTES_LINE):
        created.append(root / ".gitattributes")
    return created


def _trust_own_key(orch_dir: Path) -> Path | None:
    """Create ``trusted_keys`` with this machine's ledger signing key (created on first use, outside the
    workspace; docs/ledger.md §4a) unless the file exists. Without a usable key nothing is created: the first
    signed record tries again."""
    from orchestrator.state import keys

    path = keys.trusted_path(orch_dir)
    if path.exists():
        return None
    try:
        keys.add_trusted(orch_dir, keys.own_public_line())
    except (keys.KeyFileError, OSError, ValueError):
        return None
    return path


def _ensure_line(path: Path, line: str) -> bool:
    """Append ``line`` to ``path`` unless present. True if the file changed."""
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if line in text.splitlines():
        return False
    with path.open("a", encoding="utf-8") as fh:
        if text and not text.endswith("\n"):
            fh.write("\n")
        fh.write(line + "\n")
    return True
