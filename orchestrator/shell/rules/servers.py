"""Programs that hand work to a server running outside the sandbox: terminal multiplexers, D-Bus, editors' remote
servers, a VS Code instance, a container daemon's host mounts.

The kernel sandbox holds the command and what it starts, not a server it talks to over a socket (Landlock does not
restrict ``connect`` to a pathname socket; docs/security.md, "Processes outside the sandbox that act on request").
``tmux send-keys -t 0 'git push -f' Enter`` types into the person's own pane, ``tmux new -d CMD`` on the default
socket has the person's server start CMD, ``busctl --user call … StartTransientUnit`` has systemd run a unit,
``emacsclient -e`` and ``nvim --remote-send`` run code in the person's editor, ``code --install-extension`` loads an
extension into the person's VS Code, ``docker run -v /:/h`` has the daemon (root) mount the host: what they do is
not contained, so a person decides (risk ``unclassified``); queries that only read stay read-only (second red team,
``R2-srv-*``).
"""
from __future__ import annotations

from orchestrator.shell.words import _split_opts

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only (strings at runtime): keep `typing` off the import path
    from typing import Callable

    from orchestrator.shell.run import _Run

_TMUX_READ = frozenset("""ls list-sessions list-windows list-panes list-clients list-buffers list-keys list-commands
lsw lsp lsc lsb lsk lscm has-session has show-options show show-window-options showw show-environment showenv
show-buffer showb show-messages showmsgs info server-info capture-pane capturep display-message display""".split())
_TMUX_VALUED = ("-L", "-S", "-f", "-c", "-T")
_DBUS_READ = frozenset("list status introspect tree monitor capture help --version -h --help".split())


def _outside(run: _Run, what: str) -> None:
    run.flag("unknown", f"{run.name} {what}: a server outside the sandbox would do it", risk="unclassified")


def _tmux(run: _Run) -> None:
    opts, pos = _split_opts(run.args, _TMUX_VALUED, stop_at_first_pos=True)
    if "-c" in opts:
        _outside(run, "-c runs a shell command")
        return
    sub = pos[0].text if pos else "new-session"
    if (sub in _TMUX_READ and not (sub in ("display-message", "display") and "-p" not in (a.text for a in pos))) \
            or "-V" in opts:
        return
    _outside(run, sub)


def _screen(run: _Run) -> None:
    texts = [a.text for a in run.args]
    if texts and all(t in ("-ls", "-list", "-v", "--version", "-h", "--help") for t in texts):
        return
    _outside(run, " ".join(texts[:2]) or "session")


def _dbus(run: _Run) -> None:
    words = [a.text for a in run.args if not a.text.startswith("-")]
    if words and words[0] in _DBUS_READ or not words and run.name == "busctl":
        return
    _outside(run, "sends a D-Bus call")


_REMOTE = ("--remote-send", "--remote-expr", "--remote", "--remote-silent", "--remote-tab", "--remote-wait",
           "--remote-tab-wait", "--server", "--servername")


def editor_server(run: _Run) -> bool:
    """``emacsclient``, ``vim``/``nvim --remote-send``/``--server``: code run in the person's running editor (the
    ``vim``/``nvim`` rule in editors.py asks here). True when it decided the command."""
    texts = [a.text for a in run.args]
    if run.name == "emacsclient" or (run.name in ("vim", "nvim", "vi", "gvim") and
                                     any(t.split("=", 1)[0] in _REMOTE for t in texts)):
        if run.name == "emacsclient" and texts and all(t in ("--version", "-V", "--help", "-H") for t in texts):
            return True
        _outside(run, "drives a running editor")
        return True
    return False


def _emacsclient(run: _Run) -> None:
    editor_server(run)


def code_extension(run: _Run) -> bool:
    """``code``/``cursor``/``codium --install-extension``: the person's editor loads it (editors.py asks here)."""
    if run.name in ("code", "cursor", "codium") and any(a.text.split("=", 1)[0] == "--install-extension" for a in run.args):
        _outside(run, "--install-extension")
        return True
    return False


_HOST_OPTS = ("--privileged", "--pid=host", "--userns=host", "--ipc=host", "--uts=host", "--cap-add", "--device",
              "--security-opt", "--volumes-from")


def container_mounts(run: _Run, low: list[str]) -> bool:
    """``docker|podman run|create`` with a host bind mount or host privileges: the daemon mounts the host for the
    container (services.py asks here). True when it decided the command."""
    if not low or low[0] not in ("run", "create") and low[:2] not in (["container", "run"], ["container", "create"]):
        return False
    args = [a.text for a in run.args]
    for k, t in enumerate(args):
        name, eq, val = t.partition("=")
        nxt = val if eq else (args[k + 1] if k + 1 < len(args) else "")
        bind = (name in ("-v", "--volume") and nxt[:1] in ("/", ".", "~", "$")) or \
            (name == "--mount" and "bind" in nxt) or (t.startswith("-v") and len(t) > 2 and t[2] in "/.~$")
        if bind or any(t == o or t.startswith(o + "=") for o in _HOST_OPTS):
            _outside(run, f"{low[0]} {t[:40]} (the daemon mounts the host)")
            return True
    return False


RULES: dict[str, Callable[[_Run], None]] = {
    "tmux": _tmux, "screen": _screen, "byobu": _screen, "zellij": _screen,
    "busctl": _dbus, "dbus-send": _dbus, "gdbus": _dbus, "qdbus": _dbus, "dbus-run-session": _dbus,
    "emacsclient": _emacsclient,
}
