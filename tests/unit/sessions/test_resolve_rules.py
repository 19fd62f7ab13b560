"""The reference rules our sessions and other agents' share (`sessions/resolve.py`): a reference
is trimmed and never empty, a name matches any of a session's names trimmed and case-insensitive,
an id prefix counts from 4 characters, and several matches are an error naming them."""

from __future__ import annotations

import pytest

from commandcode.errors import AmbiguousSessionError, SessionNotFoundError
from commandcode.sessions.resolve import named, one_named, one_prefixed, prefixed, stripped

SESSIONS = [("aaaa1111", ("Fix the bug", None)), ("aaaa2222", (" fix THE bug ",)), ("bbbb3333", ("Other",))]


def _id(session: tuple[str, tuple[str | None, ...]]) -> str:
    return session[0]


def test_a_reference_is_trimmed_and_never_empty() -> None:
    assert stripped("  abc\n", hint="h") == "abc"
    with pytest.raises(SessionNotFoundError, match="empty session reference"):
        stripped(" \t", hint="pass a session id")


def test_names_are_trimmed_and_case_insensitive_and_several_are_an_error() -> None:
    matches = named("FIX the bug ", SESSIONS, lambda session: session[1])
    assert [_id(session) for session in matches] == ["aaaa1111", "aaaa2222"]
    with pytest.raises(AmbiguousSessionError, match=r"2 claude sessions are named 'fix the bug': aaaa1111, aaaa2222"):
        one_named("fix the bug", matches, _id, "claude session")
    assert one_named("other", named("other", SESSIONS, lambda session: session[1]), _id) == SESSIONS[2]
    assert one_named("none", [], _id) is None


def test_prefixes_count_from_four_characters_and_several_are_an_error() -> None:
    assert prefixed("aaa", SESSIONS, _id) == []
    matches = prefixed("aaaa", SESSIONS, _id)
    assert len(matches) == 2
    with pytest.raises(AmbiguousSessionError, match=r"'aaaa' is a prefix of 2 session ids: aaaa1111, aaaa2222"):
        one_prefixed("aaaa", matches, _id)
    assert one_prefixed("bbbb", prefixed("bbbb", SESSIONS, _id), _id) == SESSIONS[2]
