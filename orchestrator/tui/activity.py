"""The Activity view of ``orch tui`` (key ``v``): records and decisions over time per intent and per agent as
sparklines, refusal hot spots as bars, approvals waiting — :func:`orchestrator.views.activity.render`, the text that
``orch trace stats`` prints too, coloured here. Loaded in a thread worker; refreshed by ``ctrl+r`` and a timer."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Header, Static
from textual.worker import Worker, WorkerState

from orchestrator.views.activity import Activity, collect, render
from orchestrator.config.workspace import Workspace

#: what the view colours: chart titles, the sparkline and bar characters
_TITLE_PREFIXES = ("Activity", "Records per", "Decisions per", "Refused most", "Approvals waiting")
_CHART_CHARS = set("▁▂▃▄▅▆▇█")


class ActivityScreen(Screen[None]):
    """Activity at a glance for one workspace (``clock``: seconds since the epoch, fixed in tests)."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("v", "app.pop_screen", "Back", show=False),
        Binding("ctrl+r", "reload", "Reload"),
        Binding("q", "app.quit", "Quit"),
    ]

    def __init__(self, workspace: Workspace, *, clock: Callable[[], float], since: str = "7d",
                 refresh_seconds: float = 10.0) -> None:
        super().__init__()
        self.workspace = workspace
        self.clock = clock
        self.since = since
        self.refresh_seconds = refresh_seconds
        self.activity: Activity | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll(id="activity"):
            yield Static("loading the activity…", id="activity-body")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#activity", VerticalScroll).border_title = f"Activity (last {self.since})"
        self.action_reload()
        self.set_interval(self.refresh_seconds, self.action_reload)

    def action_reload(self) -> None:
        self._load()

    @work(thread=True, exclusive=True, group="activity", exit_on_error=False)
    def _load(self) -> Activity:
        return collect(self.workspace, since=self.since, now=datetime.fromtimestamp(self.clock(), timezone.utc))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != "activity":
            return
        body = self.query_one("#activity-body", Static)
        if event.state is WorkerState.ERROR:
            body.update(Text(f"cannot read the activity: {event.worker.error!r}", style="bold red"))
        elif event.state is WorkerState.SUCCESS and isinstance(event.worker.result, Activity):
            self.activity = event.worker.result
            body.update(styled(render(self.activity)))
        event.stop()


def styled(lines: list[str]) -> Text:
    """The summary's lines with titles in bold and chart characters in the accent colour."""
    text = Text()
    for line in lines:
        if line.startswith(_TITLE_PREFIXES):
            text.append(line + "\n", style="bold")
            continue
        for ch in line:
            text.append(ch, style="cyan" if ch in _CHART_CHARS else "")
        text.append("\n")
    return text
