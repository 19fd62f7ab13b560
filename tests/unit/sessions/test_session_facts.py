"""The sweep's quick name lookup (`sessions.facts.user_given_name`) gives the reader's answer
(`open_session(...).name`) without reading the whole session: the latest `session_info` in file
order, an empty latest one falling back to the meta title, the words "session_info" in a
message or a broken line never taken for an entry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from commandcode.sessions.facts import user_given_name
from commandcode.sessions.files import SessionFiles
from commandcode.sessions.reader import open_session
from helpers.transcripts import TranscriptBuilder


def _check(path: Path, expected: str | None) -> None:
    files = SessionFiles.for_transcript(path)
    assert open_session(path).name == expected
    assert user_given_name(files) == expected


@pytest.mark.parametrize("case", ["never", "latest", "empty_latest", "mentioned", "broken_tail", "branch"])
def test_the_same_name_as_the_reader(home: Path, workdir: Path, case: str) -> None:
    builder = TranscriptBuilder(workdir)
    builder.user("hello")
    expected: str | None = None
    extra = ""
    if case in ("latest", "empty_latest", "broken_tail", "branch"):
        builder.add("session_info", name="first name")
        builder.assistant("ok")
        builder.add("session_info", name="  second  ")
        expected = "second"
    if case == "empty_latest":
        builder.add("session_info", name=" ")
        expected = None
    if case == "mentioned":
        builder.user('please write {"type":"session_info","name":"not a name"} into a file')
        builder.assistant('"session_info" is an entry type')
    if case == "broken_tail":
        extra = '{"type":"session_info","id":"zz","name":"torn'  # a line cut by a crash: not an entry
    if case == "branch":
        first = builder.lines[1]["id"]
        builder.add("session_info", parent=first, name="on another branch")  # file order decides, not the branch
        expected = "on another branch"
    path = builder.write(home, extra)
    _check(path, expected)


def test_an_empty_latest_falls_back_to_the_meta_title(home: Path, workdir: Path) -> None:
    builder = TranscriptBuilder(workdir)
    builder.user("hello")
    builder.add("session_info", name="")
    path = builder.write(home)
    SessionFiles.for_transcript(path).meta.write_text(json.dumps({"title": " Meta title "}))
    _check(path, "Meta title")
