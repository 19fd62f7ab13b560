"""`SessionFiles` and the `Frozen` value classes behind it: string-based (the open path imports no
pathlib) yet equal, hashable and immutable like the dataclasses they replaced."""

from __future__ import annotations

from pathlib import Path

import pytest

from commandcode.sessions.context import Context
from commandcode.sessions.files import SessionFiles


def test_session_files_are_values_whatever_the_folder_spelling() -> None:
    a = SessionFiles(Path("/data/projects/p"), "s1")
    assert a == SessionFiles("/data/projects/p/", "s1") == SessionFiles.for_transcript("/data/projects/p/s1.jsonl")
    assert len({a, SessionFiles("/data/projects/p", "s1"), SessionFiles("/data/projects/p", "s2")}) == 2
    assert a.directory == Path("/data/projects/p") and a.transcript == Path("/data/projects/p/s1.jsonl")
    assert a.meta.name == "s1.meta.json" and a.checkpoints.name == "s1.checkpoints.jsonl"
    assert repr(a) == "SessionFiles(folder='/data/projects/p', session_id='s1')"


def test_value_objects_cannot_be_changed() -> None:
    files = SessionFiles("/p", "s")
    with pytest.raises(AttributeError, match="immutable"):
        files.session_id = "other"  # type: ignore[misc]
    context = Context("leaf", ["a"], [])
    with pytest.raises(AttributeError, match="immutable"):
        del context.leaf_id
    assert context == Context("leaf", ["a"], []) != Context("leaf", ["b"], [])
