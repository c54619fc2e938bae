"""Splice edits of a hand-written intents file: what the edit meant lands, everything else stays byte for byte."""

from __future__ import annotations

import string

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orchestrator.config.intentdoc import WIDTH, EditError, IntentsDoc

HAND_WRITTEN = """\
# The team's intents. Ask Ana before adding one.
active_intents:
  # the auth work, started in March
  - id: "INT-001"
    name: "JWT migration"   # keep short
    status: "IN_PROGRESS"
    owned_scope:
      - "src/auth/**"     # the module
      - "tests/auth/**"
    constraints: ["No external providers", "Keep the session API"]
    acceptance_criteria:
      - "tests pass"
    related_specs: ["SPEC-7"]
    # INT-001 needs a review before it is done

  - id: "INT-002"
    name: "Docs"
    status: "PENDING"
    owned_scope: ["docs/**"]
# end of file
"""


def lines_outside(text: str, start: int, end: int) -> list[str]:
    lines = text.splitlines()
    return lines[:start] + lines[end:]


def test_a_changed_value_replaces_only_its_own_characters() -> None:
    doc = IntentsDoc(HAND_WRITTEN)
    new = doc.update("INT-001", {"status": "COMPLETED"}).text
    assert new == HAND_WRITTEN.replace('status: "IN_PROGRESS"', 'status: "COMPLETED"')


def test_a_block_list_keeps_its_style_and_the_comments_around_it() -> None:
    new = IntentsDoc(HAND_WRITTEN).update("INT-001", {"owned_scope": ["src/auth/**", "src/jwt/**"]}).text
    assert '      - "src/jwt/**"\n    constraints:' in new
    # the comment on the old first item went with the value it annotated; every other comment is still there
    for comment in ("# The team's intents", "# the auth work", "# keep short", "# INT-001 needs a review", "# end"):
        assert comment in new
    assert yaml.safe_load(new)["active_intents"][0]["owned_scope"] == ["src/auth/**", "src/jwt/**"]


def test_a_flow_list_stays_a_flow_list_and_wraps() -> None:
    many = [f"src/module_{n}/**" for n in range(12)]
    new = IntentsDoc(HAND_WRITTEN).update("INT-002", {"owned_scope": many}).text
    block = new[new.index("owned_scope: [\"src/module_0"):]
    assert all(len(line) <= WIDTH for line in new.splitlines())
    assert block.splitlines()[1].startswith(" " * len('    owned_scope: ['))  # continuation aligned after the [
    assert yaml.safe_load(new)["active_intents"][1]["owned_scope"] == many


def test_a_new_key_goes_after_the_last_key_and_a_removed_one_takes_its_line() -> None:
    doc = IntentsDoc(HAND_WRITTEN)
    new = doc.update("INT-002", {"owner": "ana", "description": "the user guide"}).text
    tail = '    owned_scope: ["docs/**"]\n    owner: "ana"\n    description: "the user guide"\n# end of file\n'
    assert new.endswith(tail)
    gone = doc.update("INT-001", {"related_specs": None}).text
    assert "related_specs" not in gone and "# INT-001 needs a review" in gone


def test_add_appends_in_the_files_own_indentation_and_quoting() -> None:
    plain = "active_intents:\n- id: A-7\n  name: first\n  status: IN_PROGRESS\n  owned_scope:\n  - src/**\n"
    new = IntentsDoc(plain).add({"id": "A-8", "name": "second one", "status": "PENDING", "owned_scope": ["x/**"],
                                 "description": "has: a colon"}).text
    assert new.startswith(plain)
    assert "- id: A-8\n  name: second one\n  status: PENDING\n" in new  # plain where plain reads back the same
    assert "description: \"has: a colon\"" in new  # quoted where a plain scalar would not
    assert yaml.safe_load(new)["active_intents"][1]["owned_scope"] == ["x/**"]


@pytest.mark.parametrize("empty", ["active_intents: []\n", "active_intents:\n", "# only a comment\n", ""])
def test_add_to_an_empty_file_or_list(empty: str) -> None:
    new = IntentsDoc(empty).add({"id": "INT-001", "name": "n", "status": "IN_PROGRESS", "owned_scope": ["a/**"]})
    assert yaml.safe_load(new.text)["active_intents"][0]["id"] == "INT-001"
    if empty.startswith("#"):
        assert new.text.startswith(empty)


def test_remove_takes_the_intent_its_comment_above_and_its_trailing_comment() -> None:
    doc, text, dash = IntentsDoc(HAND_WRITTEN).remove("INT-001")
    assert dash == 2
    assert text.startswith("  # the auth work") and "# INT-001 needs a review" in text
    assert "# The team's intents" in doc.text and "# end of file" in doc.text
    assert [i["id"] for i in yaml.safe_load(doc.text)["active_intents"]] == ["INT-002"]
    last, _, _ = doc.remove("INT-002")
    assert yaml.safe_load(last.text)["active_intents"] == []


def test_a_flow_style_intent_is_rendered_again_and_the_others_are_untouched() -> None:
    text = 'active_intents:\n  - {id: A, name: a, status: PENDING, owned_scope: [x]}  # one line\n' \
           '  - id: B  # keep me\n    name: b\n    status: PENDING\n'
    new = IntentsDoc(text).update("A", {"status": "IN_PROGRESS"}).text
    assert "  - id: B  # keep me\n" in new
    assert yaml.safe_load(new)["active_intents"][0] == {"id": "A", "name": "a", "status": "IN_PROGRESS",
                                                        "owned_scope": ["x"]}


def test_broken_yaml_is_never_edited() -> None:
    with pytest.raises(EditError, match="not valid YAML"):
        IntentsDoc("active_intents:\n  - id: [\n")
    with pytest.raises(EditError, match="no intent 'NOPE'"):
        IntentsDoc(HAND_WRITTEN).update("NOPE", {"status": "COMPLETED"})


# ------------------------------------------------------------------ property: any layout, any edit
_word = st.text(string.ascii_letters + string.digits + " -_:#'\"/*.", min_size=1, max_size=20).filter(str.strip)
_words = st.lists(_word, max_size=4)


@st.composite
def files(draw: st.DrawFn) -> tuple[str, list[dict]]:
    """A file in one of the layouts people write (indentation, quoting, flow or block lists, comments)."""
    n = draw(st.integers(1, 4))
    dash = draw(st.sampled_from([0, 2, 4]))
    quote = draw(st.sampled_from(['"', "'", ""]))
    flow = draw(st.booleans())
    intents, lines = [], ["# header", "active_intents:"]
    for k in range(n):
        intent = {"id": f"INT-{k:03d}", "name": draw(_word), "status": "IN_PROGRESS",
                  "owned_scope": draw(st.lists(st.sampled_from(["src/**", "docs/*.md", "a/b"]), min_size=1,
                                               max_size=3))}
        intents.append(intent)
        pad, key = " " * dash, " " * (dash + 2)
        if draw(st.booleans()):
            lines.append(f"{pad}# about {intent['id']}")
        doc = IntentsDoc("")
        lines.append(f"{pad}- id: {doc.scalar(intent['id'], quote)}")
        lines.append(f"{key}name: {doc.scalar(intent['name'], quote)}  # name")
        lines.append(f"{key}status: {intent['status']}")
        if flow:
            lines.append(f"{key}owned_scope: [" + ", ".join(doc.scalar(v, quote) for v in intent["owned_scope"]) + "]")
        else:
            lines.append(f"{key}owned_scope:")
            lines += [f"{key}  - {doc.scalar(v, quote)}" for v in intent["owned_scope"]]
    return "\n".join(lines) + "\n# footer\n", intents


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(files(), st.data())
def test_any_edit_of_any_layout_gives_exactly_the_intended_data(layout: tuple[str, list[dict]],
                                                                 data: st.DataObject) -> None:
    text, intents = layout
    doc = IntentsDoc(text)
    target = data.draw(st.sampled_from([i["id"] for i in intents]))
    changes = data.draw(st.fixed_dictionaries({}, optional={
        "name": _word, "status": st.sampled_from(["COMPLETED", "BLOCKED"]), "owned_scope": _words.filter(bool),
        "constraints": _words, "description": _word, "owner": st.none() | _word}))
    new = doc.update(target, changes)
    expected = [dict(i) for i in intents]
    mine = next(i for i in expected if i["id"] == target)
    for k, v in changes.items():
        if v is None:
            mine.pop(k, None)
        else:
            mine[k] = v
    assert yaml.safe_load(new.text)["active_intents"] == expected
    assert new.text.startswith("# header\n") and new.text.endswith("# footer\n")
    for other in intents:
        if other["id"] != target:
            assert f"# about {other['id']}" in new.text or f"# about {other['id']}" not in text
    added = new.add({"id": "INT-900", "name": "added", "status": "PENDING", "owned_scope": ["x/**"]})
    assert [i["id"] for i in yaml.safe_load(added.text)["active_intents"]][-1] == "INT-900"
    removed, _, _ = added.remove(target)
    assert target not in removed.ids() and "INT-900" in removed.ids()
