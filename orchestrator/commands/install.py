"""``orch install <agent>``: wire orchestrator's hooks (and MCP server) into an agent's project settings."""

from __future__ import annotations

import argparse

from orchestrator.adapters.installer import AGENTS, LAUNCHER, REMEMBERED, SCOPES, install, notes, own_setup
from orchestrator.commands import add_workspace_arg, workspace_of
from orchestrator.core.output import out

EPILOG = f"""\
scopes:
  shared (default)  for teams. The files you commit (.claude/settings.json,
                    .mcp.json, .codex/, .gemini/, .cursor/, .github/hooks/,
                    .github/mcp.json, .opencode/, opencode.json, .kilo/,
                    kilo.json and .pi/) name only the
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
                             "pi's trust.json ($PI_CODING_AGENT_DIR, default ~/.pi/agent)")


def run(args: argparse.Namespace) -> int:
    ws = workspace_of(args)
    setup = own_setup(args.agent)
    if setup is not None:
        if args.no_daemon:
            from orchestrator.core.errors import UsageError

            raise UsageError(f"--no-daemon does not apply to {args.agent}: its plugin asks the daemon first",
                             hint=f"set ORCH_NO_DAEMON=1 in {args.agent}'s environment instead: no daemon is started "
                                  "and every call is evaluated by the launcher")
        written = setup.install(ws.root, python=args.python, mcp=not args.no_mcp, scope=args.scope)
    else:
        written = install(args.agent, ws.root, python=args.python, fast=not args.no_daemon, mcp=not args.no_mcp,
                          scope=args.scope)
    for path in written:
        out(f"wrote {path.relative_to(ws.root)}")
    if not written:
        out(f"{args.agent} was already installed exactly so; nothing changed")
    if args.trust:
        if args.agent == "codex":
            from orchestrator.adapters import codex_setup

            out(f"trusted the project and its orchestrator hooks in {codex_setup.write_trust(ws.root)}")
        elif args.agent == "pi":
            from orchestrator.adapters import pi_setup

            out(f"trusted the project in {pi_setup.write_trust(ws.root)}: pi loads its .pi/ (the extension and the "
                "MCP server) when started here")
        else:
            out(f"--trust applies to codex and pi only; {args.agent}: see the notes below")
    out(f"orchestrator now governs {args.agent} in {ws.root} ({args.scope} install)")
    if args.scope == "shared":
        out(f"commit {LAUNCHER} with the settings; run `orch doctor` to check that the hooks run")
    else:
        out("run `orch doctor` to check that the hooks run")
    said = setup.notes(ws.root) if setup is not None else notes(args.agent, ws.root)
    for line in said if not (args.trust and args.agent == "codex") else ():
        out(line)
    return 0
