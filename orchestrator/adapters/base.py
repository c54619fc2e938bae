"""What every agent hook adapter shares: the answer type, the dispatch by agent name, the fail-closed boundary.

A hook adapter module (``claude_code``, ``codex``, ``gemini``, ``cursor``, ``copilot``) exposes
``handle(event: dict, governor) -> HookResult``: it translates the agent's event into a ``ToolCall``, asks the
Governor, and translates the verdict into the agent's protocol. :func:`run_hook` wraps it so that *any* failure
(malformed event, missing workspace, a bug) becomes a block — exit code 2 with the reason on stderr — and never
exit 1, which Claude Code (and others) treat as "let the call through".

Both the in-process path (``orch hook``) and the daemon (``orch serve``) call :func:`run_hook`, so they answer alike.
This module imports only the stdlib; adapters and the engine are imported when a hook actually runs.
"""
from __future__ import annotations

import importlib
import json
import os
from pathlib import Path
from typing import Any, Callable, Mapping

#: agent name (as in ``orch hook <agent>``) -> adapter module
ADAPTERS: dict[str, str] = {
    "claude-code": "orchestrator.adapters.claude_code",
    "codex": "orchestrator.adapters.codex",
    "gemini": "orchestrator.adapters.gemini",
    "cursor": "orchestrator.adapters.cursor",
    "copilot": "orchestrator.adapters.copilot",
    "opencode": "orchestrator.adapters.opencode",
    "qwen-code": "orchestrator.adapters.qwen_code",
    "cline": "orchestrator.adapters.cline",
    "kilo": "orchestrator.adapters.kilo",
    "pi": "orchestrator.adapters.pi",
}

#: exit code that blocks the call in every supported agent (Claude Code, Codex, Gemini CLI, Cursor, Copilot CLI)
BLOCK = 2

#: events where exit 2 does not mean "block a tool" but "keep going" (Claude Code's Stop continues the turn with
#: stderr as the next instruction, Gemini's AfterAgent retries): a failure there must not loop the agent, so it is
#: reported on stderr with exit 0. Every other event fails closed.
NON_GATING_EVENTS = frozenset({"Stop", "SubagentStop", "SessionEnd", "Notification", "PreCompact", "AfterAgent",
                               "stop", "sessionEnd", "subagentStop"})



def sandbox_reason(verdict: Any) -> str:
    """The reason a host shows for a command replaced by its sandboxed form (``verdict.sandbox``)."""
    sb = getattr(verdict, "sandbox", None) or {}
    if sb.get("workspace") == "none":
        return ("orchestrator: runs in the Landlock sandbox with no workspace write (a read-only command, or no "
                "intent selected); secrets unreadable")
    return "orchestrator: runs in the Landlock sandbox of the selected intent (writes only inside its scope)"

class HookResult:
    """A hook process's whole answer: what to print on stdout and stderr, and the exit code.

    (A plain class: a ``@dataclass`` costs a cold hook process ~1 ms to generate, plus ``inspect``.)"""

    __slots__ = ("exit_code", "stdout", "stderr")

    def __init__(self, exit_code: int = 0, stdout: str = "", stderr: str = "") -> None:
        self.exit_code = exit_code
        self.stdout = stdout
        self.stderr = stderr

    def __repr__(self) -> str:
        return f"HookResult(exit_code={self.exit_code!r}, stdout={self.stdout!r}, stderr={self.stderr!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HookResult) and self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]

    @classmethod
    def json(cls, obj: Any) -> "HookResult":
        return cls(0, json.dumps(obj, ensure_ascii=False))

    @classmethod
    def block(cls, reason: str) -> "HookResult":
        return cls(BLOCK, "", reason.rstrip("\n") + "\n")

    def to_dict(self) -> dict[str, Any]:
        return {"exit_code": self.exit_code, "stdout": self.stdout, "stderr": self.stderr}


def copilot_shaped(event: Mapping[str, Any]) -> bool:
    """Is this a GitHub Copilot CLI event delivered through Claude Code's hooks (``.claude/settings.json``)?

    Copilot sends Claude Code's event and tool names with its own arguments, an ISO ``timestamp`` and no
    ``transcript_path`` (Claude Code sends one with every event, and no ``timestamp``): see
    :mod:`orchestrator.adapters.copilot`, which answers them.
    """
    return isinstance(event.get("hook_event_name"), str) and "timestamp" in event and "transcript_path" not in event


def event_cwd(event: Mapping[str, Any]) -> str | None:
    """The directory an event happened in: ``cwd``, else Cursor's first ``workspace_roots`` entry."""
    cwd = event.get("cwd")
    if isinstance(cwd, str) and cwd:
        return cwd
    roots = event.get("workspace_roots")
    if isinstance(roots, list) and roots and isinstance(roots[0], str):
        return roots[0]
    return None


GovernorFactory = Callable[[Path, "str | None"], Any]


def response_failed(response: Mapping[str, Any]) -> bool:
    """Whether an agent's tool response (Claude Code's and Codex's ``tool_response``, Gemini's) says the tool
    failed: ``is_error``, ``error`` or ``success: false``, or a command ``interrupted`` before any output.
    Such a call is not traced (``ToolResult.failed``)."""
    if response.get("is_error") or response.get("error") or response.get("success") is False:
        return True
    return bool(response.get("interrupted")) and not response.get("stdout")


def read_tail(path: Any, max_bytes: int = 256 * 1024) -> bytes | None:
    """The last ``max_bytes`` of the file at ``path`` (an agent's session transcript); None when unreadable."""
    if not isinstance(path, str) or not path:
        return None
    try:
        with open(path, "rb") as fh:
            fh.seek(0, 2)
            fh.seek(max(0, fh.tell() - max_bytes))
            return fh.read()
    except OSError:
        return None


def malformed(agent: str, exc: BaseException) -> HookResult:
    """The block of an event an adapter cannot read: a structured ``malformed-call`` refusal naming the agent, the
    event and the missing field (:mod:`orchestrator.adapters.payload`), never an allow."""
    from orchestrator.adapters.payload import error

    data = error(agent, exc)
    return HookResult.block(f"orchestrator: malformed {agent} hook event ({exc}); call blocked. "
                            f"[orchestrator:malformed-call] Hint: {data['hint']} " + json.dumps(data))


def _default_governor(root: Path, approval_channel: str | None) -> Any:
    from orchestrator.engine.pipeline import Governor

    return Governor(root, approval_channel=approval_channel, persist_preimages=True)


def run_hook(agent: str, raw: str | bytes | Mapping[str, Any], *, env: Mapping[str, str] | None = None,
             governor_factory: GovernorFactory = _default_governor, root: Path | None = None) -> HookResult:
    """Answer one hook event for ``agent``; the single fail-closed boundary of every hook path.

    ``raw`` is the event as read from stdin (or already parsed). ``env`` carries the hook process's ``ORCH_*``
    variables (the daemon gets them forwarded by the client); ``governor_factory(root, approval_channel)`` lets the
    daemon reuse one Governor per workspace and channel. ``root``: the governance root when the caller knows it (the
    daemon serves exactly one); else :func:`governance_root`.
    """
    in_process = env is None
    env = os.environ if env is None else env
    event: Any = None
    from orchestrator.state import leases

    # the agent process whose write leases this call takes (the daemon serves many agents, one per client)
    token = leases.HOST_PID.set(leases.host_from(env, in_process or env is os.environ))
    try:
        try:
            event = dict(raw) if isinstance(raw, Mapping) else json.loads(raw or b"")
        except ValueError as exc:
            result = HookResult.block(f"orchestrator: malformed hook input (not JSON: {exc}); call blocked")
        else:
            result = _dispatch(agent, event, env, governor_factory, root)
    except ValueError as exc:  # adapters raise ValueError (payload.Malformed) for events missing what they need
        result = malformed(agent, exc)
    except Exception as exc:  # noqa: BLE001 - the fail-closed boundary: anything unexpected blocks
        result = HookResult.block(f"orchestrator: internal error ({type(exc).__name__}: {exc}); call blocked")
    finally:
        leases.HOST_PID.reset(token)
    if not isinstance(result, HookResult) or result.exit_code not in (0, BLOCK):
        result = HookResult.block(f"orchestrator: adapter {agent} returned an invalid answer; call blocked")
    if result.exit_code == BLOCK and isinstance(event, dict) and event.get("hook_event_name") in NON_GATING_EVENTS:
        result.exit_code = 0  # report, but do not make the agent loop (see NON_GATING_EVENTS)
    if result.exit_code == BLOCK and not result.stdout and (agent == "copilot" or (
            agent == "claude-code" and isinstance(event, dict) and copilot_shaped(event))):
        # Copilot CLI blocks on exit 2 but shows the model only "hook exited with code 2" unless stdout holds
        # its JSON answer: give it the reason (verified with 1.0.102)
        result.stdout = json.dumps({"permissionDecision": "deny",
                                    "permissionDecisionReason": result.stderr.strip()}, ensure_ascii=False)
    return result


#: where agents say their project is (``hookclient.PROJECT_VARS`` after ``ORCH_ROOT``: the ``-S`` client's copy)
PROJECT_VARS = ("CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR", "CURSOR_PROJECT_DIR", "COPILOT_PROJECT_DIR")


def governance_root(event: Mapping[str, Any], env: Mapping[str, str]) -> Path | None:
    """The workspace that governs a hook event: the installed one, never one the agent can choose.

    In order: ``ORCH_ROOT`` (set by the launcher from its own location, and by the hook client to the root it asked),
    the agent's project variable (``CLAUDE_PROJECT_DIR``…, set by the agent, not by the model), and only then the
    event's ``cwd`` and the process's cwd. The event's ``cwd`` follows the agent's ``cd``: a ``.orchestration/`` an
    agent made under its scope would otherwise govern every call made from inside it (and ``.orchestration/`` at any
    depth is a governance path: no tool may create one, :mod:`orchestrator.core.governance`)."""
    from orchestrator.config.workspace import find_root_of

    return find_root_of((env.get("ORCH_ROOT"), *(os.environ.get(v) for v in PROJECT_VARS), event_cwd(event),
                         os.getcwd()))


def _dispatch(agent: str, event: Any, env: Mapping[str, str], governor_factory: GovernorFactory,
              root: Path | None = None) -> HookResult:
    if agent == "claude-code" and isinstance(event, dict) and copilot_shaped(event):
        agent = "copilot"  # Copilot CLI running the Claude Code hooks: its adapter knows its arguments
    module_name = ADAPTERS.get(agent)
    if module_name is None:
        return HookResult.block(f"orchestrator: unknown agent {agent!r} (expected one of {sorted(ADAPTERS)})")
    if not isinstance(event, dict):
        return HookResult.block("orchestrator: malformed hook input (expected a JSON object); call blocked")
    if root is None:
        root = governance_root(event, env)
    if root is None:
        return HookResult.block(
            f"orchestrator: no .orchestration/ workspace above {event_cwd(event) or os.getcwd()!r}; call blocked."
            " Run `orch init` in the project, or remove the hook.")
    adapter = importlib.import_module(module_name)
    governor = governor_factory(root, env.get("ORCH_APPROVAL_CHANNEL") or None)
    return adapter.handle(event, governor)
