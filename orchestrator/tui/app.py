"""``orch tui``: the approval console.

A queue of pending approvals (summary, reasons, a syntax-highlighted command or diff) with keys
to approve once / for the session / for the intent, or reject with a reason; below it a live tail
of the ledger, the intents (reloaded when ``active_intents.yaml`` changes) and recent sessions.

All file I/O runs in thread workers (``@work(thread=True)``). A watchdog observer on
``.orchestration/`` triggers reloads at once; a timer reloads anyway (the fallback when watchdog
is unavailable, and the clock for "expires in"). Laid out for an 80x24 terminal.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from rich.console import Group
from rich.syntax import Syntax
from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.css.query import NoMatches
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.widgets import DataTable, Footer, Header, Input, Label, OptionList, Static, TabbedContent, TabPane
from textual.widgets.option_list import Option
from textual.worker import Worker, WorkerState

from orchestrator.approvals import ApprovalRequest, BrokenRequest, Broker
from orchestrator.core.errors import OrchestratorError
from orchestrator.tui.data import Snapshot, ago, load_snapshot
from orchestrator.tui.intents import CSS as INTENTS_CSS
from orchestrator.config.workspace import Workspace

CSS = """
#main { height: 1fr; }
#queue { width: 30; height: 100%; border: round $primary; }
#queue:focus { border: round $accent; }
#detail { width: 1fr; height: 100%; border: round $secondary; padding: 0 1; }
#panes { height: 9; }
#panes ContentSwitcher { height: 1fr; }
#panes TabPane { height: 100%; padding: 0; }
#panes DataTable { height: 100%; }
RejectScreen { align: center middle; }
#reject-box { width: 64; height: auto; border: thick $error; background: $surface; padding: 1 2; }
#reject-box Label { width: 100%; }
#reject-error { color: $error; }
"""
CSS += INTENTS_CSS


class RejectScreen(ModalScreen[str | None]):
    """Ask for the reason of a rejection; dismisses with the reason, or None on Escape."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, summary: str) -> None:
        super().__init__()
        self.summary = summary

    def compose(self) -> ComposeResult:
        with Vertical(id="reject-box"):
            yield Label(Text.assemble(("Reject: ", "bold"), self.summary[:120]))
            yield Input(placeholder="reason (sent back to the agent)", id="reason")
            yield Label("", id="reject-error")
            yield Label(Text("Enter: reject   Esc: cancel", style="dim"))

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        reason = event.value.strip()
        if not reason:
            # the reason is what the agent learns from: insist on one
            self.query_one("#reject-error", Label).update("type a reason: the agent reads it to change course")
            return
        self.dismiss(reason)

    def action_cancel(self) -> None:
        self.dismiss(None)


class MainScreen(Screen[None]):
    """The console's one screen (bindings live here so the reject dialog's Input gets plain keys)."""

    BINDINGS = [
        Binding("a", "decide('approve', 'once')", "Approve"),
        Binding("s", "decide('approve', 'session')", "Session"),
        Binding("i", "decide('approve', 'intent')", "Intent"),
        Binding("r", "reject", "Reject"),
        Binding("e", "edit_accept", "Edit+accept", show=False),
        Binding("m", "intents", "Intents"),
        Binding("n", "new_intent", "New intent", show=False),
        Binding("j", "move(1)", "Down", show=False),
        Binding("k", "move(-1)", "Up", show=False),
        Binding("1", "tab('ledger')", "Ledger", show=False),
        Binding("2", "tab('intents')", "Intents", show=False),
        Binding("3", "tab('sessions')", "Sessions", show=False),
        Binding("v", "activity", "Activity"),
        Binding("ctrl+r", "reload", "Reload", show=False),
        Binding("pagedown", "scroll_detail(1)", "Scroll", show=False, priority=True),
        Binding("pageup", "scroll_detail(-1)", "Scroll", show=False, priority=True),
        Binding("q", "app.quit", "Quit"),
    ]

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="main"):
            yield OptionList(id="queue")
            with VerticalScroll(id="detail"):
                yield Static("", id="detail-body")
        with TabbedContent(id="panes", initial="ledger"):
            with TabPane("Ledger", id="ledger"):
                yield DataTable(id="ledger-table", cursor_type="row", zebra_stripes=True)
            with TabPane("Intents", id="intents"):
                yield DataTable(id="intents-table", cursor_type="row")
            with TabPane("Sessions", id="sessions"):
                yield DataTable(id="sessions-table", cursor_type="row")
        yield Footer()

    def on_mount(self) -> None:
        # fixed column widths: sized for 80 columns, and stable while rows stream in
        for table_id, columns in (
            ("#ledger-table", (("time", 8), ("intent", 8), ("tool", 10), ("class", 16), ("files", 28))),
            ("#intents-table", (("id", 8), ("status", 11), ("name", 24), ("scope", 30))),
            ("#sessions-table", (("session", 24), ("worktree", 18), ("intent", 8), ("agent", 14), ("seen", 6))),
        ):
            table = self.query_one(table_id, DataTable)
            for label, width in columns:
                table.add_column(label, width=width)
        self.query_one("#queue", OptionList).border_title = "Pending (0)"
        self.query_one("#detail", VerticalScroll).border_title = "Request"
        self.query_one("#queue", OptionList).focus()
        self.app.start()  # type: ignore[attr-defined]

    # ------------------------------------------------------------------ actions
    def action_decide(self, decision: str, scope: str) -> None:
        self.app.decide_selected(decision, scope)  # type: ignore[attr-defined]

    def action_reject(self) -> None:
        self.app.reject_selected()  # type: ignore[attr-defined]

    def action_edit_accept(self) -> None:
        self.app.edit_accept_selected()  # type: ignore[attr-defined]

    def action_intents(self) -> None:
        from orchestrator.tui.intents import IntentsScreen

        self.app.push_screen(IntentsScreen(self.app.workspace))  # type: ignore[attr-defined]

    def action_new_intent(self) -> None:
        from orchestrator.tui.intents import IntentsScreen

        screen = IntentsScreen(self.app.workspace)  # type: ignore[attr-defined]
        self.app.push_screen(screen)
        screen.call_after_refresh(screen.action_new)

    def action_move(self, delta: int) -> None:
        queue = self.query_one("#queue", OptionList)
        queue.action_cursor_down() if delta > 0 else queue.action_cursor_up()

    def action_scroll_detail(self, direction: int) -> None:
        detail = self.query_one("#detail", VerticalScroll)
        detail.scroll_page_down() if direction > 0 else detail.scroll_page_up()

    def action_tab(self, tab: str) -> None:
        self.query_one("#panes", TabbedContent).active = tab

    def action_reload(self) -> None:
        self.app.reload()  # type: ignore[attr-defined]

    def action_activity(self) -> None:
        from orchestrator.tui.activity import ActivityScreen

        app = self.app
        self.app.push_screen(ActivityScreen(app.workspace, clock=app.clock))  # type: ignore[attr-defined]

    @on(OptionList.OptionHighlighted, "#queue")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self.app.show_detail(event.option_id)  # type: ignore[attr-defined]


class ApprovalApp(App[None]):
    """The approval console for one workspace.

    ``clock`` (seconds since the epoch) and ``watch`` exist for tests and screenshots: a fixed
    clock makes "expires in" and "seen ago" deterministic; ``watch=False`` skips the watchdog
    observer and relies on the timer alone.
    """

    TITLE = "orch approvals"
    CSS = CSS

    class FilesChanged(Message):
        """Something under .orchestration/ changed (posted from the watchdog thread)."""

    def __init__(self, workspace: Workspace, *, ledger_lines: int = 50, clock: Callable[[], float] = time.time,
                 refresh_seconds: float = 2.0, watch: bool = True) -> None:
        super().__init__()
        self.workspace = workspace
        self.ledger_lines = ledger_lines
        self.clock = clock
        self.refresh_seconds = refresh_seconds
        self.watch_files = watch  # not `watch`: that is Textual's DOMNode.watch method
        # the broker of every worktree of the repository: one console serves them all
        self.broker = Broker(workspace.shared_run_dir, clock=clock)
        self.snapshot = Snapshot()
        self.items: dict[str, ApprovalRequest | BrokenRequest] = {}
        self._observer: Any = None
        self._reload_pending = False
        self.sub_title = str(workspace.root)

    # ------------------------------------------------------------------ lifecycle
    def on_mount(self) -> None:
        self.push_screen(MainScreen())

    def start(self) -> None:
        """Begin loading, once the main screen's widgets exist (called from its on_mount)."""
        self.reload()
        self.set_interval(self.refresh_seconds, self.reload)
        if self.watch_files:
            self._start_watch()

    def on_unmount(self) -> None:
        if self._observer is not None:
            try:
                self._observer.stop()
            except Exception:  # noqa: BLE001 — shutting down anyway
                pass

    @work(thread=True, group="watch")
    def _start_watch(self) -> None:
        """Reload when anything under .orchestration/ changes (intents, ledger, requests, sessions)."""
        try:
            from watchdog.events import FileSystemEventHandler
            from watchdog.observers import Observer
        except Exception:  # noqa: BLE001 — no watchdog: the timer alone refreshes
            return
        app = self

        class _Handler(FileSystemEventHandler):
            def on_any_event(self, event: Any) -> None:
                # only changes: our own reads raise opened/closed events, which would make a
                # reload trigger the next reload forever
                if event.event_type not in ("created", "modified", "moved", "deleted"):
                    return
                path = str(getattr(event, "dest_path", "") or getattr(event, "src_path", ""))
                if path.endswith((".lock", ".tmp", "audit.jsonl")) or "/resolved/" in path:
                    return
                # never block the observer thread on the app (call_from_thread would wait, and
                # hang forever if the app is shutting down): post a message
                app.post_message(ApprovalApp.FilesChanged())  # thread-safe, and never blocks

        try:
            observer = Observer()
            observer.daemon = True
            self.workspace.ensure_run_dir()
            observer.schedule(_Handler(), str(self.workspace.orch_dir), recursive=True)
            approvals = self.workspace.approvals_dir
            if not approvals.is_relative_to(self.workspace.orch_dir):
                # shared by the repository's worktrees, in the main worktree: requests of the others land there
                approvals.mkdir(parents=True, exist_ok=True)
                observer.schedule(_Handler(), str(approvals), recursive=False)
            observer.start()
            self._observer = observer
        except Exception:  # noqa: BLE001 — inotify limits etc.: the timer alone refreshes
            self._observer = None

    def reload(self) -> None:
        """Re-read everything (in a worker; only the latest reload counts)."""
        self._load()

    def on_approval_app_files_changed(self, _event: FilesChanged) -> None:
        self.reload_soon()

    def reload_soon(self) -> None:
        """Coalesce a burst of file events (a busy agent touches its session file on every call)."""
        if not self._reload_pending:
            self._reload_pending = True

            def fire() -> None:
                self._reload_pending = False
                self.reload()

            self.set_timer(0.1, fire)

    @work(thread=True, exclusive=True, group="load", exit_on_error=False)
    def _load(self) -> Snapshot:
        # results come back through on_worker_state_changed, on the app's own thread
        return load_snapshot(self.workspace, now=self.clock(), ledger_lines=self.ledger_lines, broker=self.broker)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if self._main() is None:
            return
        if event.state is not WorkerState.SUCCESS:
            if event.state is WorkerState.ERROR and worker.group in ("load", "decide"):
                self.notify(f"{worker.group} failed: {worker.error!r}", severity="error")
            return
        if worker.group == "load" and isinstance(worker.result, Snapshot):
            self._apply(worker.result)
        elif worker.group == "decide" and isinstance(worker.result, tuple):
            ok, message = worker.result
            self.notify(message, severity="information" if ok else "error")
            if ok:
                self.reload()

    # ------------------------------------------------------------------ rendering
    def _main(self) -> MainScreen | None:
        """The main screen if it is mounted (the reject dialog may be on top of it)."""
        try:
            stack = self.screen_stack
        except Exception:  # noqa: BLE001 — no screens during start-up or shutdown
            return None
        return next((s for s in stack if isinstance(s, MainScreen) and s.is_mounted), None)

    def _apply(self, snap: Snapshot) -> None:
        self.snapshot = snap
        self.broker.grant_ttl = snap.grant_ttl
        screen = self._main()
        if screen is None:  # not mounted yet, or shutting down
            return
        try:
            queue = screen.query_one("#queue", OptionList)
        except NoMatches:  # the screen is being torn down while a reload finished
            return
        current = queue.highlighted_option.id if queue.highlighted_option else None
        self.items = {item.id: item for item in snap.pending}
        options = [Option(self._prompt(item), id=item.id) for item in snap.pending]
        queue.set_options(options)
        queue.border_title = f"Pending ({len(snap.pending)})"
        if options:
            ids = [o.id for o in options]
            queue.highlighted = ids.index(current) if current in ids else 0
        self.show_detail(queue.highlighted_option.id if queue.highlighted_option else None)
        self._fill(screen, "#ledger-table", [(r.time, r.intent, r.tool, r.mutation, r.files) for r in snap.ledger])
        intents: list[tuple[Any, ...]] = [(r.id, r.status, r.name, r.scope) for r in snap.intents]
        if snap.intents_error:
            intents = [("ERROR", "", Text(snap.intents_error[:200], style="bold red"), "")]
        self._fill(screen, "#intents-table", intents)
        self._fill(screen, "#sessions-table", [(r.id, r.worktree, r.intent, r.agent, r.seen) for r in snap.sessions])

    @staticmethod
    def _fill(screen: Screen[Any], selector: str, rows: list[tuple[Any, ...]]) -> None:
        table = screen.query_one(selector, DataTable)
        table.clear()
        table.add_rows(rows)

    def _prompt(self, item: ApprovalRequest | BrokenRequest) -> Text:
        if isinstance(item, BrokenRequest):
            return Text.assemble(("! ", "bold red"), (item.id, "red"), ("\n  corrupt request file", "red"))
        left = ago(item.expires - self.clock())
        return Text.assemble((item.risk, _risk_style(item.risk)), (f"  {left}", "dim"),
                             ("\n  " + _clip(item.summary, 23), ""),
                             # which worktree asked: the broker serves every worktree of the repository
                             ("\n  " + _clip(item.where(), 23) if item.worktree else "", "cyan"))

    def show_detail(self, request_id: str | None) -> None:
        """Fill the detail pane for the highlighted request."""
        screen = self._main()
        if screen is None:
            return
        body = screen.query_one("#detail-body", Static)
        item = self.items.get(request_id or "")
        screen.query_one("#detail", VerticalScroll).border_title = f"Request {item.id}" if item else "Request"
        if item is None:
            body.update(Text("No pending approvals.\n\nDestructive calls of agents whose policy says "
                             "`approval.channel: tui` appear here.", style="dim"))
            return
        if isinstance(item, BrokenRequest):
            body.update(Text.assemble(("Corrupt request file\n", "bold red"), (item.path + "\n", ""),
                                      (item.error, "red"), ("\n\nIt cannot be decided; the waiting call is denied "
                                                            "when it times out.", "dim")))
            return
        agent = item.agent + (f" ({item.agent_id})" if item.agent_id else "")
        if item.proposal is not None:
            body.update(Group(*_proposal_parts(item, agent, ago(item.expires - self.clock()))))
            return
        # compact: an 80x24 terminal leaves the detail pane about 12 lines
        head = Text.assemble(
            (item.summary + "\n", "bold"),
            (item.risk, _risk_style(item.risk)), ("  intent ", "dim"), (item.intent_id or "-", ""),
            ("  expires in ", "dim"), (ago(item.expires - self.clock()), ""),
            ("\nsession ", "dim"), (item.session_id, ""), ("  agent ", "dim"), (agent, ""),
        )
        if item.worktree:
            head.append_text(Text.assemble(("\nworktree ", "dim"), (item.where(), "cyan")))
        parts: list[Any] = [head]
        for reason in item.reasons or ["-"]:
            parts.append(Text.assemble(("why: ", "dim"), (reason, "yellow")))
        forbidden = self.snapshot.forbid_remember
        if forbidden is None or item.risk in forbidden:
            parts.append(Text(f"s/i off: {item.risk} is never remembered", style="dim italic"))
        if item.command:
            parts.append(Syntax(item.command, "bash", theme="ansi_dark", word_wrap=True))
        elif item.diff:
            parts.append(Syntax(item.diff, "diff", theme="ansi_dark", word_wrap=True))
        body.update(Group(*parts))

    # ------------------------------------------------------------------ decisions
    def selected(self) -> ApprovalRequest | BrokenRequest | None:
        screen = self._main()
        if screen is None:
            return None
        option = screen.query_one("#queue", OptionList).highlighted_option
        return self.items.get(option.id) if option is not None and option.id else None

    def _decidable(self) -> ApprovalRequest | None:
        item = self.selected()
        if item is None:
            self.notify("no request selected", severity="warning")
            return None
        if isinstance(item, BrokenRequest):
            self.notify(f"{item.id}: corrupt request, cannot be decided", severity="error")
            return None
        return item

    def decide_selected(self, decision: str, scope: str, reason: str | None = None) -> None:
        """Decide the highlighted request (the write happens in a worker)."""
        item = self._decidable()
        if item is None:
            return
        forbidden = self.snapshot.forbid_remember
        if scope != "once" and (forbidden is None or item.risk in forbidden):
            self.notify(f"{item.risk} is never remembered (policy approval.forbid_remember): "
                        "press a to approve once", severity="error")
            return
        self._decide(item.id, decision, scope, reason,
                     sorted(forbidden) if forbidden is not None else [item.risk])

    def reject_selected(self) -> None:
        item = self._decidable()
        if item is None:
            return

        def done(reason: str | None) -> None:
            if reason:
                self._decide(item.id, "reject", "once", reason, [])

        self.push_screen(RejectScreen(item.summary), done)

    def edit_accept_selected(self) -> None:
        """An agent's proposed intent: edit its fields in the form, then accept it as edited."""
        from orchestrator.tui.intents import proposal_form

        item = self._decidable()
        if item is None:
            return
        if item.proposal is None:
            self.notify("e edits an agent's proposed intent; this is a tool call (a: approve)", severity="warning")
            return

        def done(fields: dict[str, Any] | None) -> None:
            if fields:
                edits = {k: v for k, v in fields.items() if v != (item.proposal or {}).get(k) and v is not None}
                self._decide(item.id, "approve", "once", None, [], edits)

        self.push_screen(proposal_form(item), done)

    @work(thread=True, group="decide", exit_on_error=False)
    def _decide(self, request_id: str, decision: str, scope: str, reason: str | None,
                forbidden: list[str], edits: dict[str, Any] | None = None) -> tuple[bool, str]:
        try:
            if edits:
                from orchestrator.approvals import proposal

                proposal.accept(self.broker, request_id, edits, by="tui")
            else:
                self.broker.decide(request_id, decision, scope=scope, reason=reason, by="tui",
                                   forbid_remember=forbidden)
        except OrchestratorError as exc:
            return False, exc.message
        verb = "approved" if decision == "approve" else "rejected"
        return True, f"{verb} {request_id}" + (f" for this {scope}" if scope != "once" else "")


def _proposal_parts(item: ApprovalRequest, agent: str, left: str) -> list[Any]:
    """The detail pane of an agent's proposed intent: what it asks for, why, and how the file would change."""
    p = item.proposal or {}
    parts: list[Any] = [Text.assemble(
        ("Proposed intent: ", "bold"), (str(p.get("name")), "bold cyan"), ("  expires in ", "dim"), (left, ""),
        ("\nsession ", "dim"), (item.session_id, ""), ("  agent ", "dim"), (agent, ""),
        ("\nworktree ", "dim") if item.worktree else ("", ""), (item.where() if item.worktree else "", "cyan"))]
    parts.append(Text.assemble(("why: ", "dim"), (str(p.get("description") or "-"), "yellow")))
    for key, label in (("owned_scope", "scope"), ("constraints", "constraints"),
                       ("acceptance_criteria", "acceptance")):
        parts.append(Text.assemble((f"{label}: ", "dim"), (", ".join(p.get(key) or []) or "-", "")))
    parts.append(Text("a: accept as proposed   e: edit, then accept   r: reject with a reason", style="dim italic"))
    if item.diff:
        parts.append(Syntax(item.diff, "diff", theme="ansi_dark", word_wrap=True))
    return parts


def _risk_style(risk: str) -> str:
    return "bold red" if risk in ("force-push", "history-rewrite", "recursive-delete") else "bold yellow"


def _clip(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
