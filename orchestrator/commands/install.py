"""``orch install <agent>``: wire orchestrator's hooks (and MCP server) into an agent's project settings."""

from __future__ import annotations

import argparse
from pathlib import Path

from orchestrator.adapters.installer import AGENTS, LAUNCHER, REMEMBERED, SCOPES, install, notes, own_setup
from orchestrator.commands import add_workspace_arg, workspace_of
from orchestrator.core.output import out

EPILOG = f"""\
scopes:
  shared (default)  for teams. The files you commit (.claude/settings.json,
                    .mcp.json, .codex/, .gemini/, .cursor/, .github/hooks/,
                    .github/mcp.json, .opencode/, opencode.json, .kilo/,
                    kilo.json, .pi/, .qwen/ and .cline/) name only the
                    launcher {LAUNCHER}, written too:
                    commit it. On each machine it finds an interpreter with
                    orchestrator: $ORCH_PYTHON, the one this command used
                    (remembered in {REMEMBERED}, not
                    committed), the project's .venv/ or venv/, `orch` on PATH,
                    python3. When there is none it BLOCKS every call (exit 2)
                    with a message saying how to fix it: calls never run
                    ungoverned.
  local             for one machine: this interpreter's absolute path goes to
                    .claude/settings.local.json (Claude Code keeps it out of
                    git); a little faster (no launcher). Claude Code only.

Other CLIs read some of these files (Qwen Code reads .mcp.json, Copilot CLI
.claude/settings.json): install also installs the guard of every such CLI, so
that none gets orchestrator's MCP server without its hooks, and says so.

After installing, run `orch doctor`: it runs the installed hook and MCP server
as the agent would. See docs/adapters.md ("Shared or local install") and
docs/troubleshooting.md.
"""


def register(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EPILOG
    add_workspace_arg(parser)
    parser.add_argument("agent", choices=AGENTS)
    parser.add_argument("--scope", choices=SCOPES, default="shared",
                        help="shared: committed files name the portable launcher (default); local: machine paths "
                             "in .claude/settings.local.json")
    parser.add_argument("--python", default=None, help="interpreter for the hook command (default: this one)")
    parser.add_argument("--no-daemon", action="store_true",
                        help="evaluate every call in the hook process (no `orch serve` daemon): ~5x slower")
    parser.add_argument("--no-mcp", action="store_true", help="do not register the MCP server")
    parser.add_argument("--trust", action="store_true",
                        help="codex: also trust this project and its orchestrator hooks in Codex's user config "
                             "($CODEX_HOME/config.toml, default ~/.codex/config.toml); pi: trust this project in "
                             "pi's trust.json ($PI_CODING_AGENT_DIR, default ~/.pi/agent); qwen-code: trust the folder "
                             "in ~/.qwen/trustedFolders.json and approve the MCP server in ~/.qwen/mcpApprovals.json")


def _install_one(agent: str, root: Path, args: argparse.Namespace, *, mcp: bool) -> list[Path]:
    setup = own_setup(agent)
    if setup is not None:
        if args.no_daemon:
            from orchestrator.core.errors import UsageError

            raise UsageError(f"--no-daemon does not apply to {agent}: its plugin asks the daemon first",
                             hint=f"set ORCH_NO_DAEMON=1 in {agent}'s environment instead: no daemon is started "
                                  "and every call is evaluated by the launcher")
        return setup.install(root, python=args.python, mcp=mcp, scope=args.scope)
    return install(agent, root, python=args.python, fast=not args.no_daemon, mcp=mcp, scope=args.scope)


def _trust(agent: str, root: Path) -> str | None:
    """``--trust``: what was trusted where, or None when the agent has no trust step orchestrator can take."""
    if agent == "codex":
        from orchestrator.adapters import codex_setup

        return f"trusted the project and its orchestrator hooks in {codex_setup.write_trust(root)}"
    if agent == "qwen-code":
        from orchestrator.adapters import qwen_setup

        folders, *approvals = qwen_setup.write_trust(root)
        return f"trusted the folder in {folders}" + "".join(f"; approved orchestrator's MCP server in {a}"
                                                              for a in approvals)
    if agent == "pi":
        from orchestrator.adapters import pi_setup

        return (f"trusted the project in {pi_setup.write_trust(root)}: pi loads its .pi/ (the extension and the MCP "
                "server) when started here")
    return None


def _cover(root: Path, args: argparse.Namespace) -> None:
    """Install the guard of every CLI that reads what was just written (docs/adapters.md, "Which CLI reads which
    file"); say which cannot be covered."""
    from orchestrator.adapters import readers

    def one(agent: str) -> None:
        # the CLI reads orchestrator's MCP server from the file it was exposed by: its guard is what is missing
        for path in _install_one(agent, root, args, mcp=False):
            out(f"wrote {path.relative_to(root) if path.is_relative_to(root) else path}")

    covered, left = readers.cover(root, one, AGENTS)
    for e in covered:
        out(f"also installed {e.cli}: {readers.label(e.cli)} reads {e.file}, which now holds {e.what}; without its "
            "guard it would run ungoverned here")
    for e in left:
        out(f"WARNING: {readers.label(e.cli)} reads {e.file} ({e.what}) and orchestrator cannot govern it: do not "
            "use it in this repository (`orch doctor` reports it)")


def run(args: argparse.Namespace) -> int:
    ws = workspace_of(args)
    setup = own_setup(args.agent)
    written = _install_one(args.agent, ws.root, args, mcp=not args.no_mcp)
    for path in written:
        out(f"wrote {path.relative_to(ws.root) if path.is_relative_to(ws.root) else path}")
    if not written:
        out(f"{args.agent} was already installed exactly so; nothing changed")
    trusted = None
    if args.trust:
        trusted = _trust(args.agent, ws.root)
        out(trusted or f"--trust applies to codex, pi and qwen-code; {args.agent}: see the notes below")
    _cover(ws.root, args)
    out(f"orchestrator now governs {args.agent} in {ws.root} ({args.scope} install)")
    if args.scope == "shared":
        out(f"commit {LAUNCHER} with the settings; run `orch doctor` to check that the hooks run")
    else:
        out("run `orch doctor` to check that the hooks run")
    said = setup.notes(ws.root) if setup is not None else notes(args.agent, ws.root)
    for line in said if not (trusted and args.agent == "codex") else ():
        out(line)
    return 0
