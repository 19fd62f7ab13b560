"""The tree and context rules of format §4.4 (and the listing fields of §9), through the library,
on small hand-written transcripts. Expected strings are written out literally."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from commandcode import Session, open_session
from commandcode.config.paths import project_dir

SID = "0d6c2f3e-5b7a-4c1e-9f0a-2b3c4d5e6f70"
HEADER = {"type": "session", "version": 3, "id": SID, "timestamp": "2026-01-02T03:04:05.000Z", "cwd": "/home/alice/proj"}
COMPACTION_TEXT = "This is an auto-compacted summary of the earlier conversation that ran out of context.\n\n"
BRANCH_TEXT = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"

_clock = iter(range(10, 10_000))


def ts() -> str:
    second = next(_clock)
    return f"2026-01-02T04:{second // 60 % 60:02d}:{second % 60:02d}.000Z"


def msg(entry_id: str, parent: str | None, role: str, content: Any, **extra: Any) -> dict[str, Any]:
    meta = extra.pop("meta", {"source": "user" if role == "user" else "model"})
    return {"type": "message", "id": entry_id, "parentId": parent, "timestamp": ts(),
            "message": {"role": role, "content": content, "meta": meta}, **extra}


def text(value: str) -> list[dict[str, str]]:
    return [{"type": "text", "text": value}]


def entry(kind: str, entry_id: str, parent: str | None, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "id": entry_id, "parentId": parent, "timestamp": ts(), **fields}


def compaction(entry_id: str, parent: str, first_kept: str, summary: str, **fields: Any) -> dict[str, Any]:
    return entry("compaction", entry_id, parent, summary=summary, firstKeptEntryId=first_kept, tokensBefore=1000,
                 **fields)


@pytest.fixture
def write(home: Path, tmp_path: Path) -> Any:
    """`write(lines, meta=None, header=True)` writes a transcript and opens it."""

    def run(lines: list[dict[str, Any] | str], meta: dict[str, Any] | None = None, *, header: bool = True) -> Session:
        folder = project_dir(tmp_path / "work")
        folder.mkdir(parents=True, exist_ok=True)
        transcript = folder / f"{SID}.jsonl"
        body = ([HEADER] if header else []) + lines
        transcript.write_text("".join((item if isinstance(item, str) else json.dumps(item)) + "\n" for item in body))
        meta_path = folder / f"{SID}.meta.json"
        if meta is not None:
            meta_path.write_text(json.dumps(meta, indent=2))
        else:
            meta_path.unlink(missing_ok=True)
        before = transcript.read_bytes()
        session = open_session(transcript)
        session.context()
        assert transcript.read_bytes() == before
        return session

    return run


def texts(session: Session) -> list[str]:
    return [" | ".join(block.get("text", f"<{block['type']}>") for block in message["content"])
            for message in session.context().messages]


# --------------------------------------------------------------------------------------------
# compaction


def test_context_starts_at_the_last_compaction_on_the_path(write: Any) -> None:
    session = write([
        msg("m1", None, "user", text("one")),
        msg("m2", "m1", "assistant", text("two")),
        compaction("c1", "m2", "m2", "first summary"),
        msg("m3", "c1", "user", text("three")),
        msg("m4", "m3", "assistant", text("four")),
        compaction("c2", "m4", "m3", "second summary"),
        msg("m5", "c2", "user", text("five")),
    ])
    context = session.context()
    assert context.entry_ids == ["c2", "m3", "m4", "m5"]
    assert context.messages[0] == {"role": "user", "content": [{"type": "text", "text": COMPACTION_TEXT + "second summary"}],
                                   "meta": {"isSummary": True, "summaryEntryId": "c2"}}
    assert texts(session)[1:] == ["three", "four", "five"]


def test_kept_range_can_hold_an_earlier_compaction(write: Any) -> None:
    session = write([
        msg("m1", None, "user", text("one")),
        compaction("c1", "m1", "", "first summary"),
        msg("m2", "c1", "user", text("two")),
        compaction("c2", "m2", "m1", "second summary"),
    ])
    assert session.context().entry_ids == ["c2", "m1", "c1", "m2"]
    assert texts(session) == [COMPACTION_TEXT + "second summary", "one", COMPACTION_TEXT + "first summary", "two"]


@pytest.mark.parametrize("first_kept", ["", "b1", "nosuchid", "c1"])
def test_first_kept_not_on_the_path_keeps_nothing_before(write: Any, first_kept: str) -> None:
    session = write([
        msg("m1", None, "user", text("one")),
        msg("b1", "m1", "assistant", text("other branch")),
        msg("m2", "m1", "assistant", text("two")),
        compaction("c1", "m2", first_kept, "summary"),
        msg("m3", "c1", "user", text("after")),
    ])
    assert session.path_ids() == ["m1", "m2", "c1", "m3"]
    assert session.context().entry_ids == ["c1", "m3"]


def test_compaction_on_another_branch_is_ignored(write: Any) -> None:
    session = write([
        msg("m1", None, "user", text("one")),
        msg("m2", "m1", "assistant", text("two")),
        compaction("c1", "m2", "m1", "abandoned"),
        msg("m3", "m2", "user", text("three")),
    ])
    assert session.context().entry_ids == ["m1", "m2", "m3"]


def test_strip_thinking_from_kept(write: Any) -> None:
    thinking = {"type": "thinking", "thinking": "hmm", "signature": "sig"}
    lines = [
        msg("m1", None, "user", text("one")),
        msg("m2", "m1", "assistant", [thinking, {"type": "text", "text": "kept"}]),
        msg("m3", "m2", "user", [thinking, {"type": "text", "text": "user thinking is not touched"}]),
        compaction("c1", "m3", "m2", "summary", stripThinkingFromKept=True),
        msg("m4", "c1", "assistant", [thinking, {"type": "text", "text": "after"}]),
    ]
    stripped = write(lines)
    assert stripped.context().entry_ids == ["c1", "m2", "m3", "m4"]
    assert [[block["type"] for block in message["content"]] for message in stripped.context().messages] == [
        ["text"], ["text"], ["thinking", "text"], ["thinking", "text"]]
    assert stripped.read_entries(["m2"])[0]["message"]["content"][0] == thinking, "the file is not changed"
    lines[3] = compaction("c1", "m3", "m2", "summary")
    kept = write(lines)
    assert [[block["type"] for block in message["content"]] for message in kept.context().messages] == [
        ["text"], ["thinking", "text"], ["thinking", "text"], ["thinking", "text"]]


# --------------------------------------------------------------------------------------------
# the other entry types


def test_branch_summary_is_wrapped(write: Any) -> None:
    session = write([
        msg("m1", None, "user", text("one")),
        msg("m2", "m1", "assistant", text("abandoned")),
        entry("branch_summary", "s1", "m1", fromId="m2", summary="We tried X.",
              details={"readFiles": [], "modifiedFiles": ["/a"]}),
        msg("m3", "s1", "user", text("back")),
    ])
    context = session.context()
    assert context.entry_ids == ["m1", "s1", "m3"]
    assert context.messages[1] == {
        "role": "user",
        "content": [{"type": "text", "text": BRANCH_TEXT + "We tried X.</summary>"}],
        "meta": {"isMeta": False, "isSummary": True, "source": "branch-summary", "summaryEntryId": "s1"},
    }


def test_custom_message_wrapping(write: Any) -> None:
    session = write([
        msg("m1", None, "user", text("one")),
        entry("custom_message", "x1", "m1", customType="todo", content="a plain string", display=True),
        entry("custom_message", "x2", "x1", customType="hidden", content=text("blocks stay"), display=False,
              details={"k": 1}),
        entry("custom_message", "x3", "x2", customType="nodisplay", content=text("no display key")),
    ])
    messages = session.context().messages
    assert session.context().entry_ids == ["m1", "x1", "x2", "x3"]
    assert messages[1:] == [
        {"role": "user", "content": [{"type": "text", "text": "a plain string"}],
         "meta": {"isMeta": False, "source": "mod:todo"}},
        {"role": "user", "content": [{"type": "text", "text": "blocks stay"}],
         "meta": {"isMeta": True, "source": "mod:hidden"}},
        {"role": "user", "content": [{"type": "text", "text": "no display key"}],
         "meta": {"isMeta": True, "source": "mod:nodisplay"}},
    ]


def test_types_without_a_message_contribute_nothing(write: Any) -> None:
    session = write([
        msg("m1", None, "user", text("one")),
        entry("model_change", "e1", "m1", model="local/m2"),
        entry("effort_change", "e2", "e1", effort="high"),
        entry("custom", "e3", "e2", customType="state", data={"x": 1}),
        entry("label", "e4", "e3", targetId="m1", label="start"),
        entry("session_info", "e5", "e4", name="named"),
        msg("m2", "e5", "assistant", text("two")),
    ])
    assert session.path_ids() == ["m1", "e1", "e2", "e3", "e4", "e5", "m2"]
    assert session.context().entry_ids == ["m1", "m2"]


def test_plain_string_content_becomes_one_text_block(write: Any) -> None:
    session = write([msg("m1", None, "user", "just a string"), msg("m2", "m1", "assistant", "reply")])
    assert [message["content"] for message in session.context().messages] == [
        [{"type": "text", "text": "just a string"}], [{"type": "text", "text": "reply"}]]
    assert session.first_message() == "just a string"


# --------------------------------------------------------------------------------------------
# model, effort, labels, name


def test_current_model_and_effort(write: Any) -> None:
    base = [
        msg("m1", None, "user", text("one")),
        entry("model_change", "mc1", "m1", model="p/first"),
        entry("effort_change", "ec1", "mc1", effort="low"),
        msg("m2", "ec1", "assistant", text("two"), model="p/from-assistant", effort="max"),
        msg("m3", "m2", "user", text("three"), model="p/user-model-ignored"),
    ]
    session = write(base)
    assert (session.model, session.effort) == ("p/from-assistant", "low")
    session = write([*base, entry("model_change", "mc2", "m3", model="p/second"),
                     msg("m4", "mc2", "assistant", text("no model key"))])
    assert session.model == "p/second"
    session = write([*base, entry("effort_change", "ec2", "m3", effort="high"),
                     # on another branch: not on the path, so it counts for nothing
                     entry("model_change", "mc9", "m1", model="p/elsewhere"),
                     entry("effort_change", "ec9", "mc9", effort="xhigh"),
                     msg("m5", "ec2", "user", text("leaf"))])
    assert (session.model, session.effort) == ("p/from-assistant", "high")
    assert write([msg("m1", None, "user", text("one"))]).model is None


def test_labels_newest_wins_and_clearing(write: Any) -> None:
    session = write([
        msg("m1", None, "user", text("one")),
        msg("m2", "m1", "assistant", text("two")),
        entry("label", "l1", "m2", targetId="m1", label="start"),
        entry("label", "l2", "l1", targetId="m2", label="answer"),
        entry("label", "l3", "l2", targetId="m1", label="renamed"),
        entry("label", "l4", "l3", targetId="m2"),  # no `label`: clears it
        entry("label", "x1", "m1", targetId="m1", label="from another branch, newest"),
    ])
    assert dict(session.labels()) == {"m1": "from another branch, newest"}
    rows = {row.id: row.label for row in session.tree_rows()}
    assert rows["m1"] == "from another branch, newest" and rows["m2"] is None
    assert session.leaf_id == "x1" and session.path_ids() == ["m1", "x1"]
    cleared_then_set = write([
        msg("m1", None, "user", text("one")),
        entry("label", "l1", "m1", targetId="m1", label="a"),
        entry("label", "l2", "l1", targetId="m1"),
        entry("label", "l3", "l2", targetId="m1", label="b"),
    ])
    assert dict(cleared_then_set.labels()) == {"m1": "b"}


def test_session_name(write: Any) -> None:
    named = [msg("m1", None, "user", text("one")), entry("session_info", "i1", "m1", name="first name"),
             entry("session_info", "i2", "i1", name="second name")]
    assert write(named, {"title": "meta title"}).name == "second name"
    # the latest session_info decides, even on another branch
    assert write([*named, entry("session_info", "i3", "m1", name="branch name")]).name == "branch name"
    # the latest has no name (or an empty one): fall back to meta.title, not to an older session_info
    assert write([*named, entry("session_info", "i3", "i2")], {"title": "meta title"}).name == "meta title"
    assert write([*named, entry("session_info", "i3", "i2", name="")], {"title": "meta title"}).name == "meta title"
    assert write([*named, entry("session_info", "i3", "i2")]).name is None
    assert write([msg("m1", None, "user", text("one"))], {"title": "only meta"}).name == "only meta"
    assert write([msg("m1", None, "user", text("one"))]).name is None


# --------------------------------------------------------------------------------------------
# leaf, path, counts


@pytest.mark.parametrize("last", [
    entry("label", "z9", "m2", targetId="m1", label="x"),
    entry("session_info", "z9", "m2", name="n"),
    entry("custom", "z9", "m2", customType="c"),
    entry("model_change", "z9", "m2", model="p/m"),
])
def test_leaf_is_the_last_valid_line_whatever_its_type(write: Any, last: dict[str, Any]) -> None:
    session = write([
        msg("m1", None, "user", text("one")),
        msg("m2", "m1", "assistant", text("two")),
        msg("b1", "m1", "assistant", text("a later branch")),
        last,
        '{"type":"message","id":"bad"}',  # fails validation: not the leaf
        "[1]",  # not an object: not the leaf
    ])
    assert session.leaf_id == "z9"
    assert session.path_ids() == ["m1", "m2", "z9"]
    assert session.context().entry_ids == ["m1", "m2"]


def test_leaf_ignores_a_torn_tail(home: Path, tmp_path: Path) -> None:
    folder = project_dir(tmp_path / "work")
    folder.mkdir(parents=True)
    transcript = folder / f"{SID}.jsonl"
    lines = [HEADER, msg("m1", None, "user", text("one")), msg("m2", "m1", "assistant", text("two"))]
    transcript.write_text("".join(json.dumps(line) + "\n" for line in lines) + json.dumps(
        msg("m3", "m2", "user", text("three")))[:40])
    session = open_session(transcript)
    assert session.leaf_id == "m2" and session.context().entry_ids == ["m1", "m2"]


def test_path_follows_the_leaf_branch(write: Any) -> None:
    session = write([
        msg("m1", None, "user", text("one")),
        msg("a1", "m1", "assistant", text("first try")),
        msg("a2", "a1", "user", text("more")),
        msg("b1", "m1", "assistant", text("second try")),
    ])
    assert session.path_ids() == ["m1", "b1"]
    assert texts(session) == ["one", "second try"]
    on_path = [row.id for row in session.tree_rows() if row.on_active_path]
    assert on_path == ["m1", "b1"]


def test_message_count_spans_every_branch_and_skips_is_meta(write: Any) -> None:
    session = write([
        msg("m1", None, "user", text("one")),
        msg("a1", "m1", "assistant", text("branch a")),
        msg("b1", "m1", "assistant", text("branch b")),
        msg("h1", "b1", "user", text("hidden"), meta={"isMeta": True}),
        msg("h2", "h1", "user", text("truthy isMeta"), meta={"isMeta": 1}),
        msg("v1", "h2", "user", text("visible"), meta={"isMeta": False}),
        entry("custom_message", "x1", "v1", customType="t", content="c", display=True),
        compaction("c1", "x1", "", "s"),
        entry("branch_summary", "s1", "c1", fromId="a1", summary="s"),
    ])
    assert session.message_count == 4  # m1, a1, b1, v1
    assert session.path_ids() == ["m1", "b1", "h1", "h2", "v1", "x1", "c1", "s1"]


# --------------------------------------------------------------------------------------------
# the header


def test_session_id_is_the_file_name_not_the_header_id(write: Any) -> None:
    other = {**HEADER, "id": "11111111-2222-4333-8444-555555555555", "sessionId": SID}
    session = write([other, msg("m1", None, "user", text("one"), sessionId=SID)], header=False)
    assert session.id == SID
    assert session.header.id == "11111111-2222-4333-8444-555555555555"
    assert session.header.session_id == SID


@pytest.mark.parametrize(("created", "expected"), [
    (1767323045678, "2026-01-02T03:04:05.678Z"),
    ("2025-12-31T23:59:59.123Z", "2025-12-31T23:59:59.123Z"),
])
def test_synthesized_header_uses_meta_created_at(write: Any, created: Any, expected: str) -> None:
    session = write([msg("m1", None, "user", text("one"))], {"createdAt": created}, header=False)
    assert session.header.synthesized
    assert session.header.id == SID and session.header.timestamp == expected
