"""``orch demo``: a narrated, offline session of governed agents on a small example project.

It copies the example project shipped in the package to a fresh directory (``--dir`` or a temp
dir), runs ``git init`` there when git is available, creates ``.orchestration/`` with the demo's
intents, then replays a scripted model (no keys, no network) through the reference loop and the
real pipeline, narrating each step: a write blocked without an intent, the intent handshake, an
in-scope edit traced, an out-of-scope write and a protected file refused, a destructive command
waiting for approval, a second agent making the first one's write stale, a lesson recorded, and
finally the ledger (``orch trace`` / ``orch trace verify``, when this build has them).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

from orchestrator.core.errors import OrchestratorError, UsageError
from orchestrator.core.output import out

DEMO_PACKAGE = "orchestrator.data"
DEMO_DIR = "demo"


def register(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dir", metavar="DIR", default=None,
                        help="where to create the demo workspace (must be empty or absent; default: a temp dir)")
    parser.add_argument("--interactive", action="store_true",
                        help="you decide the destructive command in `orch tui` (run it in another terminal)")
    parser.add_argument("--quiet", action="store_true", help="print only the summary")
    parser.add_argument("--keep", action=argparse.BooleanOptionalAction, default=True,
                        help="keep the workspace afterwards (default); --no-keep deletes it")


# ---------------------------------------------------------------------------------------------- style
class Style:
    """A little colour on a terminal, none otherwise (or with NO_COLOR)."""

    def __init__(self, enabled: bool, unicode: bool) -> None:
        self.enabled = enabled
        self.ok = "✓" if unicode else "ok"
        self.no = "✗" if unicode else "x"
        self.ask = "?"
        self.arrow = "→" if unicode else "->"
        self.dash = "—" if unicode else "-"

    def _c(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.enabled else text

    def bold(self, t: str) -> str:
        return self._c("1", t)

    def dim(self, t: str) -> str:
        return self._c("2", t)

    def green(self, t: str) -> str:
        return self._c("32", t)

    def red(self, t: str) -> str:
        return self._c("31", t)

    def yellow(self, t: str) -> str:
        return self._c("33", t)

    def cyan(self, t: str) -> str:
        return self._c("36", t)

    def magenta(self, t: str) -> str:
        return self._c("35", t)

    @classmethod
    def for_stdout(cls) -> Style:
        tty = sys.stdout.isatty() and not os.environ.get("NO_COLOR") and os.environ.get("TERM") != "dumb"
        enc = (getattr(sys.stdout, "encoding", None) or "").lower().replace("-", "")
        return cls(tty, enc.startswith("utf8"))


# ---------------------------------------------------------------------------------------------- setup
def _copy_tree(src: Any, dest: Path) -> None:
    """Copy a package resource directory (a Traversable: works from a wheel or a zip too)."""
    dest.mkdir(parents=True, exist_ok=True)
    for item in src.iterdir():
        if item.name == "__pycache__":
            continue
        target = dest / item.name
        if item.is_dir():
            _copy_tree(item, target)
        else:
            target.write_bytes(item.read_bytes())


def _demo_data() -> Any:
    return resources.files(DEMO_PACKAGE).joinpath(DEMO_DIR)


def _git(root: Path, *args: str) -> bool:
    from orchestrator.vcs.cli import git

    config = ("user.name=orch demo", "user.email=demo@orchestrator.invalid", "commit.gpgsign=false",
              "init.defaultBranch=main")
    try:
        return git(root, *args, config=config, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def prepare_workspace(directory: str | None) -> tuple[Path, bool]:
    """Create the demo workspace; returns (root, whether git was initialised)."""
    from orchestrator.config import workspace

    if directory is None:
        root = Path(tempfile.mkdtemp(prefix="orch-demo-"))
    else:
        root = Path(directory).expanduser()
        if root.exists() and (not root.is_dir() or any(root.iterdir())):
            raise UsageError(f"{root} exists and is not empty", hint="give a new or empty directory to --dir")
        root.mkdir(parents=True, exist_ok=True)
    root = Path(os.path.realpath(root))
    data = _demo_data()
    _copy_tree(data.joinpath("project"), root)
    # the output of an earlier build: generated here, since VCS ignores build/ dirs in the package
    (root / "build" / "lib").mkdir(parents=True)
    (root / "build" / "lib" / "greeter.py").write_text("# generated from src/greeter; do not edit\n",
                                                       encoding="utf-8")
    (root / "build" / "BUILD_INFO").write_text("built-by: make\n", encoding="utf-8")
    workspace.init(root)
    ws = workspace.Workspace(root)
    ws.intents_file.write_text(data.joinpath("intents.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    with ws.intentignore_file.open("a", encoding="utf-8") as fh:
        fh.write(data.joinpath("intentignore.extra").read_text(encoding="utf-8"))
    has_git = _git(root, "init", "-q") and _git(root, "add", "-A") and \
        _git(root, "commit", "-q", "-m", "greeter: initial import")
    return root, has_git


@contextlib.contextmanager
def _without_env(name: str) -> Iterator[str | None]:
    """Run with ``name`` unset (the demo's story must not depend on the caller's environment)."""
    saved = os.environ.pop(name, None)
    try:
        yield saved
    finally:
        if saved is not None:
            os.environ[name] = saved


@contextlib.contextmanager
def _cwd(path: Path) -> Iterator[None]:
    here = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(here)


# ---------------------------------------------------------------------------------------------- narration
class Narrator:
    """Turns loop events into the demo's story."""

    def __init__(self, style: Style, quiet: bool, total_steps: int) -> None:
        self.s = style
        self.quiet = quiet
        self.total = total_steps
        self.step = 0
        self.names: dict[str, str] = {}
        self.traced = 0

    def say(self, text: str = "") -> None:
        if not self.quiet:
            out(text)

    def chapter(self, title: str) -> None:
        self.step += 1
        self.say()
        self.say(self.s.bold(f"[{self.step}/{self.total}] {title}"))

    def who(self, session: str) -> str:
        name = self.names.get(session, session)
        colour = self.s.cyan if name == "alice" else self.s.magenta
        return colour(f"{name:<5}")

    def event(self, ev: Any) -> None:
        s = self.s
        pad = " " * 8
        if ev.type in ("model", "answer") and ev.text:
            self.say(f"  {self.who(ev.session_id)} {s.dim('says:')} {ev.text}")
        elif ev.type == "call":
            self.say(f"  {self.who(ev.session_id)} {s.bold(ev.tool)} {_describe(ev.tool, ev.input or {})}")
        elif ev.type == "verdict" and ev.verdict is not None and ev.verdict.decision == "ask":
            e = ev.verdict.error or {}
            self.say(f"  {pad}{s.yellow(s.ask + ' ASKS')} {e.get('type')}: {e.get('message')}")
            for reason in e.get("reasons") or ():
                self.say(f"  {pad}  {s.dim('why:')} {reason}")
        elif ev.type == "approval" and ev.approval is not None:
            a = ev.approval
            word = s.green("APPROVED") if a.approved else s.red("REJECTED")
            self.say(f"  {pad}{s.bold(a.by)}: {word} {s.dim(s.dash)} {a.reason}")
        elif ev.type == "result":
            self._result(ev, pad)

    def _result(self, ev: Any, pad: str) -> None:
        s = self.s
        verdict = ev.verdict
        if verdict is not None and not verdict.allowed:
            e = verdict.error or {}
            self.say(f"  {pad}{s.red(s.no + ' REFUSED')} {s.bold(str(e.get('type')))} "
                     f"{s.dim('(' + str(e.get('hook')) + ')')}: {e.get('message')}")
            if e.get("available"):
                self.say(f"  {pad}  {s.dim('available intents:')} {', '.join(e['available'])}")
            if e.get("hint"):
                self.say(f"  {pad}  {s.dim('hint:')} {e['hint']}")
            return
        if ev.is_error:
            self.say(f"  {pad}{s.yellow('! tool error')}: {_first_line(ev.content)}")
            return
        detail = _first_line(ev.content)
        if ev.tool == "select_active_intent":
            detail = "intent selected; the agent now sees its <intent_context> (scope, constraints, lessons)"
        elif ev.tool == "read_file":
            detail = f"read ({len((ev.content or '').splitlines())} lines); read-stamp recorded for the stale check"
        elif ev.tool == "run_command":
            detail = "ran: " + " ".join((ev.content or "").split())[:90]
        trace = ""
        if ev.record:
            self.traced += 1
            trace = " " + s.green(f"· traced {_ranges(ev.record)}")
        self.say(f"  {pad}{s.green(s.ok + ' allowed')} {detail}{trace}")


def _describe(tool: str, data: dict[str, Any]) -> str:
    if tool == "run_command":
        return repr(data.get("command", ""))
    if tool == "select_active_intent":
        return str(data.get("intent_id", ""))
    if tool == "record_lesson":
        return repr(data.get("text", ""))
    return str(data.get("path", ""))


def _first_line(text: str | None) -> str:
    lines = (text or "").strip().splitlines()
    return lines[0] if lines else ""


def _meta(record: dict[str, Any]) -> dict[str, Any]:
    """orchestrator's own fields of a ledger record (under a reverse-domain key in ``metadata``)."""
    meta = record.get("metadata")
    if isinstance(meta, dict):
        for value in meta.values():
            if isinstance(value, dict) and ("intent_id" in value or "session_id" in value):
                return value
    return {}


def _spans(f: dict[str, Any], meta: dict[str, Any] | None = None) -> str:
    ops = {m.get("path"): m.get("op") for m in (meta or {}).get("files") or () if isinstance(m, dict)}
    if ops.get(f.get("path")) == "delete":
        return f"{f.get('path')} (deleted)"
    spans = []
    for conv in f.get("conversations") or ():
        for r in conv.get("ranges") or ():
            a, b = r.get("start_line"), r.get("end_line")
            spans.append(str(a) if a == b else f"{a}-{b}")
    if not spans:
        return str(f.get("path"))
    return f"{f.get('path')} line{'s' if len(spans) > 1 or '-' in spans[0] else ''} {', '.join(spans)}"


def _ranges(record: dict[str, Any]) -> str:
    """A short description of a ledger record: mutation class, files and line ranges."""
    try:
        parts = [_spans(f, _meta(record)) for f in record.get("files") or ()]
        cls = _meta(record).get("mutation_class")
    except (AttributeError, KeyError, TypeError):
        return "(ledger record)"
    return ((f"{cls} " if cls else "") + "(" + "; ".join(parts) + ")") if parts else "(ledger record)"


# ---------------------------------------------------------------------------------------------- approver
def auto_approver(request: Any) -> Any:
    """Stands in for a person: approves recursive deletes confined to build/ output, rejects the rest."""
    from orchestrator.agent.loop import ApprovalDecision

    targets = request.call.resolved
    if targets and all(t.startswith("build/") for t in targets):
        return ApprovalDecision(True, "build/ only holds generated output; `make` recreates it",
                                by="auto-approver (standing in for you)")
    return ApprovalDecision(False, "only generated output under build/ may be deleted in this demo",
                            by="auto-approver (standing in for you)")


# ---------------------------------------------------------------------------------------------- run
def load_script() -> dict[str, Any]:
    """The demo's scripted model turns (``data/demo/script.yaml``)."""
    import yaml

    return yaml.safe_load(_demo_data().joinpath("script.yaml").read_text(encoding="utf-8"))


def run(args: argparse.Namespace) -> int:
    from orchestrator.agent.loop import AgentLoop
    from orchestrator.agent.providers import ProviderError
    from orchestrator.agent.providers.scripted import ScriptedProvider
    from orchestrator.engine.pipeline import Governor

    style = Style.for_stdout()
    s = style
    started = time.monotonic()
    root, has_git = prepare_workspace(args.dir)
    script = load_script()
    steps = sum(1 for scene in script["scenes"] for t in scene["turns"] if t.get("step")) + 1
    narrator = Narrator(style, args.quiet, steps)
    for name, agent in script["agents"].items():
        narrator.names[agent["session"]] = name

    narrator.say(s.bold("orch demo") + f" {s.dash} two scripted agents work on a tiny project under governance "
                 + s.dim("(offline: no model, no keys)"))
    narrator.say(f"  workspace {root}")
    narrator.say(f"  {'git repository, ' if has_git else ''}.orchestration/ with 3 intents "
                 f"(INT-101 farewell, INT-102 docstrings, INT-103 README: PENDING); vendor/ protected")

    channel = None
    approver: Any = auto_approver
    if args.interactive:
        channel, approver = "tui", None
        narrator.say(s.yellow(f"  interactive: before the destructive step, run `cd {root} && orch tui` "
                              "in another terminal and decide (or `orch approvals` / `orch approve ID`)"))

    with _without_env("ORCH_APPROVAL_CHANNEL"):
        gov = Governor(root, approval_channel=channel)
        loops: dict[str, AgentLoop] = {}
        for scene in script["scenes"]:
            name = scene["agent"]
            agent = script["agents"][name]
            provider = _Chaptered(ScriptedProvider(scene["turns"], model=agent.get("model", "scripted")), narrator)
            loop = loops.get(name)
            if loop is None:
                loop = loops[name] = AgentLoop(gov, provider, session_id=agent["session"], agent="loop",
                                               approver=approver, max_turns=len(scene["turns"]) + 1,
                                               command_timeout=30.0, on_event=narrator.event)
            loop.provider = provider
            loop.max_turns = len(scene["turns"]) + 1
            provider.open_chapter()  # the scene's first chapter heading comes before its prompt
            narrator.say(f"  {narrator.who(agent['session'])} {s.dim('is asked:')} {scene['prompt']}")
            try:
                result = loop.run(scene["prompt"])
            except ProviderError as exc:
                raise OrchestratorError(f"the demo went off script: {exc}",
                                        hint="this is a bug in orch demo; please report it") from None
            if result.stopped != "answer":
                raise OrchestratorError("the demo went off script: an agent hit its turn cap",
                                        hint="this is a bug in orch demo; please report it")

    narrator.chapter("The ledger: who changed what, under which intent")
    ledger_shown = _show_ledger(root, narrator)
    _summary(root, narrator, style, time.monotonic() - started, ledger_shown)
    if not args.keep:
        shutil.rmtree(root, ignore_errors=True)
        out(f"(workspace {root} removed: --no-keep)")
    return 0


class _Chaptered:
    """Wraps the scripted provider: a turn with ``step`` opens a new chapter of the narration."""

    def __init__(self, inner: Any, narrator: Narrator) -> None:
        self.inner = inner
        self.model = inner.model
        self.narrator = narrator
        self.opened: set[int] = set()

    def open_chapter(self) -> None:
        """Print the chapter heading of the next turn, if it starts one (once)."""
        index = self.inner.position
        turn = self.inner.turns[index] if index < len(self.inner.turns) else {}
        if turn.get("step") and index not in self.opened:
            self.opened.add(index)
            self.narrator.chapter(turn["step"])

    def complete(self, system: str, messages: list[dict[str, Any]], tools: list[Any]) -> Any:
        self.open_chapter()
        return self.inner.complete(system, messages, tools)


def _show_ledger(root: Path, narrator: Narrator) -> bool:
    """Show the ledger with the real `orch trace` and `orch trace verify`. False when nothing was traced."""
    from orchestrator.cli import main
    from orchestrator.config.workspace import Workspace

    ledger = Workspace(root).ledger_file
    if not ledger.exists() or ledger.stat().st_size == 0:
        narrator.say("  (nothing was traced)")
        return False
    if narrator.quiet:
        return True
    with _cwd(root):
        for argv in (["trace"], ["trace", "verify"]):
            narrator.say(narrator.s.dim("  $ orch " + " ".join(argv)))
            sys.stdout.flush()
            main(argv)
    return True


def _summary(root: Path, narrator: Narrator, s: Style, seconds: float, ledger: bool) -> None:
    core = (root / "src/greeter/core.py").read_text(encoding="utf-8")
    readme_untouched = "goodbye" not in (root / "README.md").read_text(encoding="utf-8").lower()
    vendor_untouched = "sep" not in (root / "src/greeter/vendor/textcase.py").read_text(encoding="utf-8")
    lessons = sum(1 for line in (root / "AGENTS.md").read_text(encoding="utf-8").splitlines()
                  if line.startswith("- ")) if (root / "AGENTS.md").exists() else 0
    rows = [
        ("src/greeter/core.py", "farewell() added and documented (alice), greet() docstring polished (bob)"
         if "def farewell" in core and "for ``name``" in core else "unexpected content"),
        ("README.md", "unchanged: outside alice's intent" if readme_untouched else "CHANGED (unexpected)"),
        ("src/greeter/vendor/", "unchanged: protected by .intentignore" if vendor_untouched
         else "CHANGED (unexpected)"),
        ("build/", "emptied, after approval" if (root / "build").is_dir() and not any((root / "build").iterdir())
         else "unexpected state"),
        ("AGENTS.md", f"{lessons} lesson{'s' if lessons != 1 else ''} for future agents"),
    ]
    out("")
    out(s.bold(f"Done in {seconds:.1f} s.") + " What is on disk now:")
    width = max(len(r[0]) for r in rows)
    for path, what in rows:
        out(f"  {path:<{width}}  {what}")
    out("")
    out(f"The workspace is kept at {s.bold(str(root))}")
    out("Try next:")
    out(f"  cd {root}")
    orch = _orch_command()
    tips = [
        ("trace", "# the ledger: every change, its lines, intent and session" if ledger
         else "# the ledger (empty: nothing was traced)"),
        ("trace verify", "# check the hash chain"),
        ("trace blame src/greeter/core.py", "# which intent wrote which lines"),
        ("intents", "# what agents may work on, and where"),
        ("check --tool write_file --path README.md --session demo-alice", "# dry-run a call"),
    ]
    width = max(len(orch) + 1 + len(cmd) for cmd, _ in tips)
    for cmd, note in tips:
        out(f"  {orch + ' ' + cmd:<{width}}   " + s.dim(note))


def _orch_command() -> str:
    """How the user can run ``orch`` from the demo's workspace: plain ``orch`` when it is on PATH (e.g. an
    activated venv), else the path of the script that is running (README's `.venv/bin/orch demo`)."""
    argv0 = sys.argv[0] if sys.argv and sys.argv[0] else ""
    on_path = shutil.which("orch")
    if on_path and (not argv0.endswith("orch") or os.path.realpath(on_path) == os.path.realpath(argv0)):
        return "orch"
    if argv0.endswith("orch") and os.path.exists(argv0):
        return os.path.abspath(argv0)
    return f"{sys.executable} -m orchestrator"
