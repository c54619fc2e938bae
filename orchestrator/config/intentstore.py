"""The intent lifecycle on disk: create, edit, finish and archive intents in ``active_intents.yaml``.

Every change is one *transaction* (:meth:`IntentStore.transact`):

1. under an exclusive ``flock`` on ``intents.lock`` in the shared run dir (the main worktree's
   ``.orchestration/run/``: every orchestrator writer of every worktree's intents takes it — the CLI, the TUI, the
   web console, an accepted ``propose_intent``), so two writers never interleave and two new intents never get the
   same id, not even in two worktrees of the repository (a new id is the next one after every worktree's ids, so
   two branches never both bring in a different ``INT-005``);
2. the current files are read and must validate as ``orch validate`` validates them (a broken file is never
   edited: the error names its file and line);
3. the change is made as a splice into the text (:mod:`orchestrator.config.intentdoc`: comments and formatting
   kept), the new fields are validated with the intent schema first (errors name the field), then the whole
   edited file is validated again;
4. before replacing, the files are read once more: a person's editor does not take our lock, so if a file changed
   since step 2 the change is made again on the new text (a concurrent edit is never lost; after
   :data:`RETRIES` rounds of a file changing under it the change is refused);
5. each file is replaced atomically (a reader sees the old or the new file), keeping its mode; the archive is
   written before the active file, so a crash between the two leaves the intent in both files, which
   :meth:`IntentStore.archive` completes when run again (never an intent in neither).

The archive, ``.orchestration/archived_intents.yaml``, has the same shape under the key ``archived_intents``, each
item carrying ``archived_at``; it is versioned like ``active_intents.yaml``. Archived ids are never reused.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from orchestrator.config.intentdoc import EditError, IntentsDoc
from orchestrator.core.errors import ConfigError, UsageError
from orchestrator.core.fsutil import atomic_write, locked

ACTIVE_KEY = "active_intents"
ARCHIVE_KEY = "archived_intents"
ARCHIVE_NAME = "archived_intents.yaml"
#: statuses an intent may be archived in (it is over)
FINISHED = ("COMPLETED", "CANCELLED", "ABANDONED")
#: the fields a person sets (``id`` is allocated, timestamps are added)
EDITABLE = ("name", "status", "owner", "description", "owned_scope", "constraints", "acceptance_criteria")
#: rounds of "the file changed while we edited it" before a change is refused
RETRIES = 5
DEFAULT_PREFIX = "INT-"

ARCHIVE_HEADER = """\
# archived_intents.yaml — finished intents moved out of active_intents.yaml by `orch intents archive`.
# Same fields as active_intents.yaml, plus archived_at. Kept for the record: an archived id is never reused,
# and no agent can select an archived intent. `orch intents show ID` shows an archived intent's summary.
"""

T = TypeVar("T")


def now_iso() -> str:
    """The timestamp written into ``created_at`` / ``updated_at`` / ``archived_at`` (UTC, seconds)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


@dataclass
class Docs:
    """The two files as one transaction sees and changes them."""

    active: IntentsDoc
    archive: IntentsDoc

    def all_ids(self) -> list[str]:
        return self.active.ids() + self.archive.ids()


class IntentStore:
    """The intents files of one workspace (``ws``: a :class:`~orchestrator.config.workspace.Workspace`)."""

    def __init__(self, ws: Any, *, clock: Callable[[], str] = now_iso) -> None:
        self.ws = ws
        self.active_path = Path(ws.intents_file)
        self.archive_path = Path(ws.orch_dir) / ARCHIVE_NAME
        # one lock for every worktree of the repository: ids are allocated across them (see :meth:`create`)
        self.lock_path = Path(ws.shared_run_dir) / "intents.lock"
        self.clock = clock

    # ------------------------------------------------------------------ reading
    def read(self) -> Docs:
        """Both files, validated (raises :class:`ConfigError` with file and line)."""
        return self._docs(_read(self.active_path), _read(self.archive_path))

    def archived(self) -> list[dict[str, Any]]:
        """The archived intents, validated (as the loader would give them, plus their extra keys)."""
        text = _read(self.archive_path)
        return _validated(self.archive_path, _doc(text, ARCHIVE_KEY, self.archive_path)) if text is not None else []

    # ------------------------------------------------------------------ the operations
    def create(self, fields: dict[str, Any], *, intent_id: str | None = None, write: bool = True) -> dict[str, Any]:
        """Add a new intent (status IN_PROGRESS unless ``fields`` says otherwise); returns it with its id.

        ``write=False``: everything is done and validated, nothing is written (see :meth:`transact`)."""
        # an empty optional list says nothing a reader needs: it is left out, as people write the file
        fields = {k: v for k, v in fields.items() if v is not None and (v != [] or k == "owned_scope")}
        fields["status"] = normal_status(fields.get("status") or "IN_PROGRESS")

        def change(docs: Docs) -> tuple[Docs, dict[str, Any]]:
            # the other worktrees' intents count too: two branches must not both bring in a new INT-005
            used = docs.all_ids() + self._other_worktrees_ids()
            new_id = intent_id or allocate_id(used, prefix_of(docs.all_ids() or used))
            if new_id in docs.all_ids():
                where = "archived_intents.yaml" if new_id in docs.archive.ids() else "active_intents.yaml"
                raise UsageError(f"intent id {new_id!r} is already used (in {where})",
                                 hint="leave out --id: the next free id is allocated")
            intent = {"id": new_id, **fields, "created_at": self.clock()}
            check_fields(intent, self.active_path)
            return Docs(docs.active.add(intent), docs.archive), intent

        return self.transact(change, write=write)

    def edit(self, intent_id: str, changes: dict[str, Any], *, expect: dict[str, Any] | None = None,
             write: bool = True) -> dict[str, Any]:
        """Change fields of an active intent (None removes an optional key); returns the intent as written.

        ``expect``: the intent as the person saw it (:func:`plain`); if it changed since, nothing is written (a
        signed change is made only to the intent it was signed for). ``write=False``: validate only."""
        unknown = sorted(set(changes) - set(EDITABLE) - {"updated_at"})
        if unknown:
            raise UsageError(f"cannot edit {', '.join(unknown)}", hint=f"editable: {', '.join(EDITABLE)}")
        for required in ("name", "status"):
            if required in changes and not changes[required]:
                raise UsageError(f"{required} cannot be empty")
        if changes.get("status"):
            changes = {**changes, "status": normal_status(changes["status"])}

        def change(docs: Docs) -> tuple[Docs, dict[str, Any]]:
            current = self._active_intent(docs, intent_id)
            _expected(current, expect)
            merged = {**current, **{k: v for k, v in changes.items() if v is not None}}
            for k, v in changes.items():
                if v is None:
                    merged.pop(k, None)
            merged["updated_at"] = self.clock()
            check_fields(merged, self.active_path)
            delta = {k: v for k, v in changes.items() if current.get(k) != v}
            if not delta:
                return docs, current
            delta["updated_at"] = merged["updated_at"]
            return Docs(docs.active.update(intent_id, delta), docs.archive), merged

        return self.transact(change, write=write)

    def finish(self, intent_id: str, status: str = "COMPLETED", *, expect: dict[str, Any] | None = None,
               write: bool = True) -> dict[str, Any]:
        """Mark an intent finished (``COMPLETED`` by default)."""
        if status not in FINISHED:
            raise UsageError(f"{status} is not a finished status", hint=f"one of {', '.join(FINISHED)}")
        return self.edit(intent_id, {"status": status}, expect=expect, write=write)

    def archive(self, intent_ids: Iterable[str], *, expect: dict[str, dict[str, Any]] | None = None,
                write: bool = True) -> list[str]:
        """Move finished intents to the archive file; returns their ids (``expect``: id -> the intent as the
        person saw it, as for :meth:`edit`)."""
        wanted = list(dict.fromkeys(intent_ids))

        def change(docs: Docs) -> tuple[Docs, list[str]]:
            done = []
            for iid in wanted:
                in_archive = iid in docs.archive.ids()
                if iid not in docs.active.ids():
                    if in_archive:
                        continue  # archived already (or a run interrupted after writing the archive)
                    raise UsageError(f"no intent {iid!r}", hint="`orch intents` lists them")
                current = self._active_intent(docs, iid)
                _expected(current, None if expect is None else expect.get(iid, {}))
                status = normal_status(current.get("status"))
                if status not in FINISHED:
                    raise UsageError(f"intent {iid} is {status or 'without status'}: only a finished intent is "
                                     f"archived", hint=f"finish it first: `orch intents done {iid}` (or edit its "
                                                       f"status to CANCELLED / ABANDONED)")
                active, text, dash = docs.active.remove(iid)
                archive = docs.archive
                if not in_archive:
                    archive = archive.append_text(text, dash, current)
                    archive = archive.update(iid, {"archived_at": self.clock()})
                docs = Docs(active, archive)
                done.append(iid)
            return docs, done

        return self.transact(change, write=write)

    def _other_worktrees_ids(self) -> list[str]:
        """The intent ids (active and archived) of the repository's other governed worktrees; a file that cannot be
        read or parsed adds none (it is that worktree's problem, reported by its own `orch validate`)."""
        from orchestrator.vcs.worktrees import governed

        ids: list[str] = []
        here = os.path.realpath(self.ws.root)
        for root, _wt in governed(self.ws.root):
            if os.path.realpath(root) == here:
                continue
            for name, key in (("active_intents.yaml", ACTIVE_KEY), (ARCHIVE_NAME, ARCHIVE_KEY)):
                try:
                    text = _read(Path(root) / ".orchestration" / name)
                    ids += IntentsDoc(text, key).ids() if text else []
                except (ConfigError, EditError):
                    continue
        return ids

    def _active_intent(self, docs: Docs, intent_id: str) -> dict[str, Any]:
        for raw in docs.active.intents():
            if str(raw.get("id")) == intent_id:
                return dict(raw)
        hint = (f"{intent_id} is archived (archived_intents.yaml)" if intent_id in docs.archive.ids()
                else "`orch intents` lists them")
        raise UsageError(f"no active intent {intent_id!r}", hint=hint)

    # ------------------------------------------------------------------ the transaction
    def transact(self, change: Callable[[Docs], tuple[Docs, T]], *, write: bool = True) -> T:
        """Run ``change`` on the current files under the lock and write what it returns (see the module doc).

        ``write=False``: a dry run — the change is made and both files validated as for a write, nothing is
        written (what the console shows a person, and has them sign, before the change is made)."""
        if not write:
            docs = self._docs(_read(self.active_path), _read(self.archive_path))
            new, result = change(docs)
            _validated(self.archive_path, new.archive)
            _validated(self.active_path, new.active)
            _unique(new, self.active_path)
            return result
        self.lock_path.parent.mkdir(parents=True, exist_ok=True)
        with locked(self.lock_path):
            for _ in range(RETRIES):
                active_text, archive_text = _read(self.active_path), _read(self.archive_path)
                docs = self._docs(active_text, archive_text)
                new, result = change(docs)
                writes = []
                if new.archive.text != docs.archive.text:
                    _validated(self.archive_path, new.archive)
                    writes.append((self.archive_path, new.archive.text))
                if new.active.text != docs.active.text:
                    _validated(self.active_path, new.active)
                    writes.append((self.active_path, new.active.text))
                _unique(new, self.active_path)
                # a person's editor takes no lock: if a file changed since we read it, do it again on the new text
                if _read(self.active_path) != active_text or _read(self.archive_path) != archive_text:
                    continue
                for path, text in writes:
                    _write(path, text)
                return result
        raise EditError("the intents file kept changing while it was being edited; nothing was written",
                        hint="try again once the other editor has saved")

    def _docs(self, active_text: str | None, archive_text: str | None) -> Docs:
        if active_text is None:
            raise ConfigError("missing: run `orch init` first", file=self.active_path)
        docs = Docs(_doc(active_text, ACTIVE_KEY, self.active_path),
                    _doc(archive_text or ARCHIVE_HEADER + f"{ARCHIVE_KEY}: []\n", ARCHIVE_KEY, self.archive_path))
        # a broken file is never edited: both are validated as `orch validate` validates them
        _validated(self.active_path, docs.active)
        if archive_text is not None:
            _validated(self.archive_path, docs.archive)
        return docs


def plain(raw: dict[str, Any]) -> dict[str, Any]:
    """An intent as JSON data (a timestamp YAML read as a date becomes its text): what a signature covers."""
    import json

    return dict(json.loads(json.dumps(raw, default=str, sort_keys=True)))


def _expected(current: dict[str, Any], expect: dict[str, Any] | None) -> None:
    if expect is not None and plain(current) != expect:
        raise UsageError(f"intent {current.get('id')} changed since this change was prepared; nothing was written",
                         hint="reload it and make the change again")


def normal_status(value: Any) -> str:
    """A status as the schema reads it (``in-progress`` is ``IN_PROGRESS``)."""
    return str(value or "").strip().upper().replace("-", "_").replace(" ", "_")


# ---------------------------------------------------------------------- ids
_ID = re.compile(r"^(.*?)(\d+)$")


def prefix_of(ids: Iterable[str]) -> str:
    """The id prefix the file uses most (``INT-`` for ``INT-007``), :data:`DEFAULT_PREFIX` when there is none."""
    counts: dict[str, int] = {}
    for i in ids:
        m = _ID.match(i)
        if m:
            counts[m.group(1)] = counts.get(m.group(1), 0) + 1
    return max(counts, key=lambda p: (counts[p], p)) if counts else DEFAULT_PREFIX


def allocate_id(ids: Iterable[str], prefix: str = DEFAULT_PREFIX) -> str:
    """The next id after the highest one with ``prefix`` (active and archived), zero-padded like them."""
    used = list(ids)
    numbers = [(int(m.group(2)), len(m.group(2))) for i in used if (m := _ID.match(i)) and m.group(1) == prefix]
    top = max((n for n, _ in numbers), default=0) + 1
    width = max((w for _, w in numbers), default=3)
    while f"{prefix}{top:0{width}d}" in used:  # e.g. "INT-1" and "INT-001" both in use
        top += 1
    candidate = f"{prefix}{top:0{width}d}"
    return candidate


# ---------------------------------------------------------------------- validation
def check_fields(intent: dict[str, Any], path: Path) -> None:
    """Validate one intent's fields with the schema; errors name the field (:class:`ConfigError`)."""
    from pydantic import ValidationError

    from orchestrator.config.schema import Intent

    for key in ("owned_scope", "constraints", "acceptance_criteria"):
        value = intent.get(key)
        if value is not None and (not isinstance(value, list) or not all(isinstance(v, str) for v in value)):
            raise ConfigError(f"{key}: must be a list of text", file=path, intent=str(intent.get("id")))
    for key in ("owner", "description", "name"):
        if intent.get(key) is not None and not isinstance(intent[key], str):
            raise ConfigError(f"{key}: must be text", file=path, intent=str(intent.get("id")))
    if any(not str(p).strip() for p in intent.get("owned_scope") or ()):
        raise ConfigError("owned_scope: an empty pattern", file=path, intent=str(intent.get("id")))
    try:
        Intent.model_validate(intent)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(x) for x in first.get("loc", ())) or "intent"
        msg = str(first.get("msg", "invalid")).removeprefix("Value error, ")
        if first.get("type") == "enum":
            msg = f"unknown status {first.get('input')!r} (expected one of {first.get('ctx', {}).get('expected')})"
        raise ConfigError(f"{field}: {msg}", file=path, intent=str(intent.get("id")),
                          hint="see docs/configuration.md for the intent format") from None


def check_archive(ws: Any) -> None:
    """``orch validate``'s check of the archive: the file validates, and no id is both archived and active."""
    store = IntentStore(ws)
    text = _read(store.archive_path)
    if text is None:
        return
    archived = _validated(store.archive_path, _doc(text, ARCHIVE_KEY, store.archive_path))
    active_text = _read(store.active_path)
    active = {str(i.get("id")) for i in _doc(active_text, ACTIVE_KEY, store.active_path).intents()} \
        if active_text else set()
    for item in archived:
        if item["id"] in active:
            raise ConfigError(f"intent id {item['id']!r} is both active and archived", file=store.archive_path,
                              intent=item["id"], hint=f"`orch intents archive {item['id']}` completes an "
                                                      "interrupted archive, or remove one of the two by hand")


def _validated(path: Path, doc: IntentsDoc) -> list[dict[str, Any]]:
    """``doc`` validated as ``orch validate`` validates its file (the data of its one parse)."""
    from orchestrator.config.intents import validate_data

    return validate_data(path, doc.text, doc.data, doc.key)


def _unique(docs: Docs, path: Path) -> None:
    active = set(docs.active.ids())
    both = sorted(active & set(docs.archive.ids()))
    if both:
        raise ConfigError(f"intent id {both[0]!r} is both active and archived", file=path, intent=both[0],
                          hint=f"`orch intents archive {both[0]}` completes an interrupted archive")


# ---------------------------------------------------------------------- files
def _read(path: Path) -> str | None:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text ({exc.reason})", file=path) from None


def _doc(text: str, key: str, path: Path) -> IntentsDoc:
    """The file's text as a document (CRLF files are edited as LF and written back with CRLF: a splice must not mix
    line endings); YAML that does not parse is the same ``file:line`` error ``orch validate`` gives."""
    from orchestrator.core.yamlio import load_yaml

    try:
        return IntentsDoc(text.replace("\r\n", "\n"), key)
    except EditError:
        load_yaml(path, text)  # raises the ConfigError with the line
        raise


def _write(path: Path, text: str) -> None:
    original = _read(path)
    if original is not None and "\r\n" in original:
        text = text.replace("\r\n", "\n").replace("\n", "\r\n")
    try:
        mode = os.stat(path).st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o644
    atomic_write(path, text.encode("utf-8"))
    os.chmod(path, mode)


__all__ = ["ACTIVE_KEY", "ARCHIVE_KEY", "ARCHIVE_NAME", "EDITABLE", "FINISHED", "Docs", "EditError", "IntentStore",
           "allocate_id", "check_archive", "check_fields", "normal_status", "now_iso", "plain", "prefix_of"]
