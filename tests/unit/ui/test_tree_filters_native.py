"""The tree navigator's "no tools" and "user only" filters, laid out natively from the scan's
per-entry facts (`rust/src/layout.rs`'s `Filter`, the envelope's tool-only flag), agree with what
the rows themselves say (`tree_model.describe`, which parses the lines) for every content shape a
message can have; and a sidecar of the old version (without the flag) is rebuilt, not misread."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from commandcode.sessions.reader import open_session
from commandcode.sessions.writer import SessionWriter
from commandcode.ui.tree_model import HIDDEN_BY_DEFAULT, TreeModel, describe
from helpers.checkpoints import new_session_files

CONTENTS: list[Any] = [
    "a plain prompt",
    "   ",
    [{"type": "text", "text": "hello"}],
    [{"type": "text", "text": " \n\t "}, {"type": "tool_use", "id": "t", "name": "bash", "input": {"command": "ls"}}],
    [{"type": "text", "text": "\u00a0\u2003"}, {"type": "tool_use", "id": "t", "name": "bash", "input": {}}],
    [{"type": "text", "text": "\u00e9t\u00e9"}, {"type": "tool_use", "id": "t", "name": "bash", "input": {}}],
    [{"type": "text", "text": "\n\"quoted\""}, {"type": "tool_result", "tool_use_id": "t", "content": "x"}],
    [{"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "nested text"}]}],
    [{"type": "tool_use", "id": "t", "name": "read_file", "input": {"file_path": "a"}}],
    [{"type": "text"}, {"type": "tool_use", "id": "t", "name": "x", "input": {}}],
    [{"type": "text", "text": 12}, {"type": "tool_use", "id": "t", "name": "x", "input": {}}],
    [{"type": "thinking", "thinking": "hm"}, {"type": "tool_use", "id": "t", "name": "x", "input": {}}],
    [{"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}}],
    [3, "loose", {"type": "tool_result", "tool_use_id": "t", "content": "ok"}],
    [],
    {"type": "tool_use"},
]


def _write(cwd: Path, seed: int) -> Path:
    rng = random.Random(seed)
    files = new_session_files(cwd)
    with SessionWriter(files, str(cwd)) as writer:
        ids: list[str] = []
        for step in range(60):
            if ids and rng.random() < 0.15:
                writer.leaf_id = rng.choice(ids)  # a new branch
            content = rng.choice(CONTENTS)
            role = rng.choice(["user", "assistant"])
            message: dict[str, Any] = {"role": role, "content": content}
            if rng.random() < 0.1:
                message["meta"] = {"isMeta": True}
            ids.append(writer.append_message(message))
            if rng.random() < 0.1:
                writer.append_entry("label", {"targetId": rng.choice(ids), "label": f"l{step}"})
            if rng.random() < 0.05:
                writer.append_entry("model_change", {"model": "m"})
        writer.commit(force=True)
    return files.transcript


def _reference(session: Any, name: str) -> list[str]:
    """The filter's rows by the Python rule over parsed entries, in the default layout's order."""
    model = TreeModel(session)
    entries = {entry["id"]: entry for entry in session.entries()}
    shown = []
    for index in model.rows.order:
        entry = entries[model.id_of(index)]
        if entry["type"] == "message":
            tool = describe(entry).tool
            meta = bool((entry["message"].get("meta") or {}).get("isMeta"))
            keep = not tool if name == "no tools" else (entry["message"]["role"] == "user" and not meta and not tool)
        else:
            keep = name == "no tools" and entry["type"] not in HIDDEN_BY_DEFAULT
        if keep:
            shown.append(entry["id"])
    return shown


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("name", ["no tools", "user only"])
@pytest.mark.parametrize("index", ["off", "on"])
def test_native_filters_match_the_rows_own_description(home: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch,
                                                       seed: int, name: str, index: str) -> None:
    monkeypatch.setenv("COMMANDCODE_INDEX", index)
    transcript = _write(workdir, seed)
    open_session(transcript)  # with the index on, the next open loads the flags from the sidecar
    session = open_session(transcript)
    model = TreeModel(session)
    while model.filter != name:
        model.cycle_filter()
    got = [model.id_of(index) for index in model.rows.order]
    assert got == _reference(open_session(transcript), name)
    assert model.texts_read == 0  # no line was read to filter
    if name == "user only":
        assert all(model.info(index).role == "user" for index in model.rows.order)


def test_filters_keep_the_tree_shape_and_fold(home: Path, workdir: Path) -> None:
    transcript = _write(workdir, 99)
    model = TreeModel(open_session(transcript))
    model.cycle_filter()
    rows = list(model.rows.order)
    assert rows, "the seed makes some non-tool rows"
    folded_row = next((row for row in range(len(model.rows)) if model.rows.size[row] > 0), None)
    if folded_row is not None:
        under = int(model.rows.size[folded_row])
        assert model.toggle_fold(folded_row)
        assert len(model.rows) == len(rows) - under
        assert model.toggle_fold(folded_row) and list(model.rows.order) == rows


def test_an_old_version_sidecar_is_rebuilt_with_the_flag(home: Path, workdir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMMANDCODE_INDEX", "on")
    transcript = _write(workdir, 3)
    before = transcript.read_bytes()
    TreeModel(open_session(transcript))  # writes the index sidecar
    sidecars = list(home.rglob("*.idx"))
    assert len(sidecars) == 1, "opening a session writes its index sidecar"
    sidecar = sidecars[0]
    data = bytearray(sidecar.read_bytes())
    assert data[:8] == b"ccindex\0" and int.from_bytes(data[8:12], "little") == 2
    data[8:12] = (1).to_bytes(4, "little")  # what the previous release wrote
    sidecar.write_bytes(bytes(data))
    model = TreeModel(open_session(transcript))
    model.cycle_filter()
    assert [model.id_of(i) for i in model.rows.order] == _reference(open_session(transcript), "no tools")
    assert int.from_bytes(sidecar.read_bytes()[8:12], "little") == 2
    assert transcript.read_bytes() == before  # the transcript itself is never touched
