"""Leading ``cd`` words of a wrapped command run in the host's own shell, so the working directory persists.

A wrapped command runs in a child ``bash -c`` under the launcher, so ``cd src && pytest`` used to leave the agent's
shell where it was: Claude Code keeps one shell between Bash calls, and the next call (``pytest tests/x.py``) ran in
the wrong directory. A *bare* ``cd`` has always been exempt from wrapping (orchestrator/sandbox/exempt.py); this
module extends that to the leading ``cd`` of a compound command:

    cd src && pytest -q   ->   cd src && /ws/.orchestration/run/sandbox/orch-sandbox 3f2a… -- 'pytest -q'

The prefix is the model's own text, byte for byte, so :func:`split` of the wrapped line gives it back and
``orch trace``/refusals still show the command the model wrote. Only literal directory words are hoisted (no
``$``, backquote, ``~``, glob or option: the host shell must not evaluate anything of the model's outside the
sandbox beyond the ``cd`` builtin itself), joined by ``&&`` or ``;`` exactly as the model wrote them, so a ``cd``
that fails behaves as it would unwrapped (``&&`` skips the rest, ``;`` runs it where the shell is). The kernel's
grants are absolute paths, so where the command runs does not widen what it may write.
"""

from __future__ import annotations

import re

# one leading `cd WORD &&` / `cd WORD ;` (`cd -- WORD` too); WORD: a bare literal, or quoted with nothing expanded
_WORD = r"""(?:[A-Za-z0-9_./@%+=:,][A-Za-z0-9_./@%+=:,-]*|'[^'\n]*'|"[^"$`\\!\n]*")"""
_PREFIX = re.compile(rf"[ \t]*cd[ \t]+(?:--[ \t]+)?{_WORD}[ \t]*(?:&&|;)[ \t]*")


def split(command: str) -> tuple[str, str]:
    """``(prefix, rest)``: the leading ``cd`` words of ``command`` (as written, possibly empty) and the rest, which
    is never empty (a command that is only ``cd`` words keeps its last one in ``rest``)."""
    end = 0
    while True:
        m = _PREFIX.match(command, end)
        if m is None or not command[m.end():].strip():
            break
        end = m.end()
    return command[:end], command[end:]


__all__ = ["split"]
