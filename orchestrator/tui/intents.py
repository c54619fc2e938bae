"""The intent lifecycle in ``orch tui``: a form to create or edit an intent (also used to edit an agent's proposal
before accepting it) and a screen to browse, create, edit, finish and archive intents with each one's summary.

Writes go through :class:`orchestrator.config.intentstore.IntentStore` in thread workers (validated like
``orch validate``, the file's comments and formatting kept, atomic, under the intents lock); the form checks the
fields with the intent schema before it closes, so a mistake is shown where it was typed.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Footer, Header, Input, Label, Static, TextArea
from textual.worker import Worker, WorkerState

from orchestrator.core.errors import OrchestratorError
from orchestrator.config.workspace import Workspace

CSS = """
IntentForm { align: center middle; }
#form-box { width: 76; height: 22; border: thick $primary; background: $surface; padding: 0 1; }
#form-box Label { width: 100%; }
#form-box Input { height: 3; }
#form-box TextArea { height: 4; }
#form-error { color: $error; }
#intents-main { height: 1fr; }
#intents-list { width: 38; height: 100%; border: round $primary; }
#intents-list:focus { border: round $accent; }
#intent-detail { width: 1fr; height: 100%; border: round $secondary; padding: 0 1; }
"""

#: (field, label, multi-line): what the form asks, in this order; lists are one entry per line
FIELDS = (("name", "Name", False), ("owned_scope", "Owned scope (globs, one per line)", True),
          ("constraints", "Constraints (one per line)", True),
          ("acceptance_criteria", "Acceptance criteria (one per line)", True),
          ("owner", "Owner", False), ("description", "Description", False))
LISTS = ("owned_scope", "constraints", "acceptance_criteria")


class IntentForm(ModalScreen[dict[str, Any] | None]):
    """Create or edit an intent's fields; dismisses with the fields (lists as lists), or None on Escape.

    ``title`` says what saving does ("New intent", "Edit INT-003", "Accept proposal …"); ``values`` prefill it.
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel"), Binding("ctrl+s", "save", "Save", priority=True)]

    def __init__(self, title: str, values: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.title_text = title
        self.values = dict(values or {})

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="form-box"):
            yield Label(Text(self.title_text, style="bold"))
            for key, label, multi in FIELDS:
                yield Label(Text(label, style="dim"))
                value = self.values.get(key)
                if multi:
                    yield TextArea("\n".join(value or []), id=f"f-{key}", soft_wrap=True)
                else:
                    yield Input(str(value or ""), id=f"f-{key}")
            yield Label("", id="form-error")
            yield Label(Text("Ctrl+S: save   Tab: next field   Esc: cancel", style="dim"))

    def on_mount(self) -> None:
        self.query_one("#f-name", Input).focus()

    def fields(self) -> dict[str, Any]:
        """What the form holds now (empty lines and empty text dropped)."""
        out: dict[str, Any] = {}
        for key, _label, multi in FIELDS:
            if multi:
                text = self.query_one(f"#f-{key}", TextArea).text
                out[key] = [line.strip() for line in text.splitlines() if line.strip()]
            else:
                value = self.query_one(f"#f-{key}", Input).value.strip()
                out[key] = value or None
        return out

    def action_save(self) -> None:
        from pathlib import Path

        from orchestrator.config.intentstore import check_fields

        fields = self.fields()
        error = self.query_one("#form-error", Label)
        if not fields["name"]:
            error.update("a name is required")
            return
        if not fields["owned_scope"]:
            error.update("at least one glob in owned scope: the files this intent may change")
            return
        try:
            check_fields({"id": "FORM", "status": "IN_PROGRESS", **fields}, Path("form"))
        except OrchestratorError as exc:
            error.update(exc.message.split("intent 'FORM': ", 1)[-1])
            return
        self.dismiss(fields)

    @on(Input.Submitted)
    def _submitted(self, _event: Input.Submitted) -> None:
        self.action_save()

    def action_cancel(self) -> None:
        self.dismiss(None)


class IntentsScreen(Screen[None]):
    """Every intent (active, then archived), the highlighted one's summary, and keys to change them."""

    BINDINGS = [
        Binding("n", "new", "New"), Binding("e", "edit", "Edit"), Binding("d", "done", "Done"),
        Binding("x", "archive", "Archive"), Binding("ctrl+r", "reload", "Reload", show=False),
        Binding("escape", "back", "Back"), Binding("q", "back", "Back", show=False),
    ]

    def __init__(self, workspace: Workspace) -> None:
        super().__init__()
        self.workspace = workspace
        self.rows: dict[str, dict[str, Any]] = {}

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="intents-main"):
            yield DataTable(id="intents-list", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="intent-detail"):
                yield Static("", id="intent-summary")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#intents-list", DataTable)
        for label, width in (("id", 9), ("status", 11), ("name", 14)):
            table.add_column(label, width=width, key=label)
        table.border_title = "Intents"
        self.query_one("#intent-detail", VerticalScroll).border_title = "Summary"
        table.focus()
        self.reload()

    # ------------------------------------------------------------------ loading
    def reload(self) -> None:
        self._load()

    @work(thread=True, exclusive=True, group="intents-load", exit_on_error=False)
    def _load(self) -> list[dict[str, Any]]:
        from orchestrator.config.intentstore import IntentStore

        docs = IntentStore(self.workspace).read()
        return [{**i, "_archived": False} for i in docs.active.intents()] + \
            [{**i, "_archived": True} for i in docs.archive.intents()]

    @work(thread=True, exclusive=True, group="intents-summary", exit_on_error=False)
    def _summarize(self, intent_id: str) -> list[str]:
        from orchestrator.views.intentsummary import render, summarize

        return render(summarize(self.workspace, intent_id))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if event.state is WorkerState.ERROR:
            self.notify(f"{worker.group}: {getattr(worker.error, 'message', worker.error)}", severity="error")
        if event.state is not WorkerState.SUCCESS:
            return
        result: Any = worker.result
        if worker.group == "intents-load":
            self._fill(result)
        elif worker.group == "intents-summary":
            self.query_one("#intent-summary", Static).update("\n".join(result))
        elif worker.group == "intents-write":
            ok, message = result
            self.notify(message, severity="information" if ok else "error")
            self.reload()

    def _fill(self, intents: list[dict[str, Any]]) -> None:
        table = self.query_one("#intents-list", DataTable)
        current = self.selected_id()
        table.clear()
        self.rows = {}
        for i in intents:
            iid = str(i.get("id"))
            self.rows[iid] = i
            status = str(i.get("status")) + (" (arch.)" if i["_archived"] else "")
            table.add_row(iid, status, str(i.get("name")), key=iid)
        if current in self.rows:
            table.move_cursor(row=list(self.rows).index(current))
        self._show()

    def selected_id(self) -> str | None:
        table = self.query_one("#intents-list", DataTable)
        if not table.row_count:
            return None
        try:
            key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
        except Exception:  # noqa: BLE001 — no row under the cursor
            return None
        return str(key.value) if key.value is not None else None

    @on(DataTable.RowHighlighted, "#intents-list")
    def _highlighted(self, _event: DataTable.RowHighlighted) -> None:
        self._show()

    def _show(self) -> None:
        iid = self.selected_id()
        body = self.query_one("#intent-summary", Static)
        if iid is None:
            body.update(Text("No intents yet: press n to create one.", style="dim"))
            return
        self.query_one("#intent-detail", VerticalScroll).border_title = f"Summary of {iid}"
        self._summarize(iid)

    # ------------------------------------------------------------------ actions
    def _active(self) -> dict[str, Any] | None:
        iid = self.selected_id()
        row = self.rows.get(iid or "")
        if row is None:
            self.notify("no intent selected", severity="warning")
            return None
        if row["_archived"]:
            self.notify(f"{iid} is archived: it cannot change", severity="warning")
            return None
        return row

    def action_new(self) -> None:
        def save(fields: dict[str, Any] | None) -> None:
            if fields:
                self._write("create", fields)

        self.app.push_screen(IntentForm("New intent (IN_PROGRESS)"), save)

    def action_edit(self) -> None:
        row = self._active()
        if row is None:
            return
        iid = str(row["id"])

        def save(fields: dict[str, Any] | None) -> None:
            if fields:
                changed = {k: v for k, v in fields.items() if v != row.get(k) and (v or row.get(k))}
                self._write("edit", changed, iid)

        self.app.push_screen(IntentForm(f"Edit {iid}", row), save)

    def action_done(self) -> None:
        row = self._active()
        if row is not None:
            self._write("finish", {}, str(row["id"]))

    def action_archive(self) -> None:
        row = self._active()
        if row is not None:
            self._write("archive", {}, str(row["id"]))

    def action_reload(self) -> None:
        self.reload()

    def action_back(self) -> None:
        self.app.pop_screen()

    @work(thread=True, group="intents-write", exit_on_error=False)
    def _write(self, what: str, fields: dict[str, Any], intent_id: str | None = None) -> tuple[bool, str]:
        from orchestrator.config.intentstore import IntentStore

        store = IntentStore(self.workspace)
        try:
            if what == "create":
                intent = store.create(fields)
                return True, f"created {intent['id']}"
            assert intent_id is not None
            if what == "edit":
                if not fields:
                    return True, f"{intent_id}: nothing changed"
                store.edit(intent_id, fields)
                return True, f"updated {intent_id}: {', '.join(sorted(fields))}"
            if what == "finish":
                store.finish(intent_id)
                return True, f"{intent_id} is COMPLETED"
            store.archive([intent_id])
            return True, f"archived {intent_id}"
        except OrchestratorError as exc:
            return False, exc.message


def proposal_form(request: Any) -> IntentForm:
    """The form that edits an agent's proposal before the person accepts it."""
    fields = dict(request.proposal or {})
    return IntentForm(f"Accept proposal {request.id} (edit, then Ctrl+S)", fields)


__all__ = ["CSS", "IntentForm", "IntentsScreen", "proposal_form"]
