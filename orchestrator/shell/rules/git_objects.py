"""Git commands that print or copy the contents of objects: tagged ``object-read`` (a :data:`RISKS` key that does not
change the command's kind).

The kernel denies reading a secret *file*; a secret the repository tracks is also an object in ``.git/objects``,
which git reads for ``git show``, ``git log -p``, ``git grep X HEAD``... and the kernel cannot tell that object from
any other. The tag alone changes nothing: the secrets pre-hook asks a person for a tagged command only when the
repository tracks a secret file (:mod:`orchestrator.secrets.tracked`), so a repository without one pays nothing.

The list errs on the side of tagging (a tracked secret makes the person decide); what is left out prints no file
content: names, stats, hashes, refs, commit messages.
"""

from __future__ import annotations

#: print or copy object contents whatever their options
_ALWAYS = frozenset("""cat-file archive format-patch bundle blame annotate fast-export checkout-index
range-diff clone difftool request-pull grep unpack-file""".split())
#: a patch by default, unless an option asks for names/stats only
_PATCH_BY_DEFAULT = frozenset({"diff", "show"})
#: names/stats by default, a patch with one of :data:`_PATCH_OPTS`
_PATCH_ON_REQUEST = frozenset({"log", "whatchanged", "diff-tree", "diff-index", "diff-files", "reflog"})
_PATCH_SHORT = ("-p", "-u", "-U", "-L")  # -U<n>, -L<range>:<file> carry their value
_PATCH_LONG = frozenset({"--patch", "--unified", "--word-diff", "--color-words", "--cc", "--binary", "--ext-diff",
                         "--patch-with-stat", "--patch-with-raw", "--full-diff", "--textconv"})
_STAT_ONLY = ("--stat", "--numstat", "--shortstat", "--dirstat", "--name-only", "--name-status", "--summary",
              "--raw", "-s", "--no-patch", "--quiet", "--exit-code", "--check", "--compact-summary")


def _patch(words: list[str]) -> bool:
    for w in words:
        if w == "--":
            return False
        if w.startswith("--") and w.split("=", 1)[0] in _PATCH_LONG:
            return True
        if not w.startswith("--") and w.startswith(_PATCH_SHORT):
            return True
    return False


def _stat_only(words: list[str]) -> bool:
    return any(w == o or w.startswith(o + "=") for w in words for o in _STAT_ONLY)


def reads_objects(sub: str, words: list[str]) -> bool:
    """Whether ``git <sub> <words...>`` prints or copies the contents of objects (see the module doc)."""
    if sub in _ALWAYS:
        return True
    if sub in _PATCH_BY_DEFAULT:
        blob = any(":" in w and not w.startswith("-") for w in words)  # REV:path names a blob
        return blob or _patch(words) or not _stat_only(words)
    if sub in _PATCH_ON_REQUEST:
        return _patch(words)
    if sub == "stash":
        return bool(words) and words[0] == "show" and _patch(words[1:])
    if sub == "worktree":
        return bool(words) and words[0] == "add"  # checks out a new tree: the secret as a file the kernel never saw
    return False


__all__ = ["reads_objects"]
