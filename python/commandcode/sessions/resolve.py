"""The rules a user's session reference is resolved by, for our sessions and other agents'.

`catalog.listing.resolve_session` (ours: a path or id first, `refs.py`, then id prefixes, then
names) and `interop.sources.resolve_foreign` (Claude Code's and pi's: per scope, id, name,
prefix) search different places in different orders, but a reference means the same to both: it
is trimmed and never empty (`stripped`); a name matches any of a session's names, trimmed and
case-insensitive (`named`); an id prefix counts from `MIN_ID_PREFIX` characters (`prefixed`); and
several matches are an error naming them, with the same words (`one_named`, `one_prefixed`). A
reference that matched nothing and can only have been meant as a path (`as_path_refused`) is told
what is wrong with that path (no such file, a folder, not a `.jsonl` file).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from ..errors import AmbiguousSessionError, SessionNotFoundError
from .format import MIN_ID_PREFIX

T = TypeVar("T")


def stripped(ref: str, *, hint: str) -> str:
    """The reference without surrounding blanks.

    Raises:
        SessionNotFoundError: nothing is left.
    """
    reference = ref.strip()
    if not reference:
        raise SessionNotFoundError("empty session reference", hint=hint)
    return reference


def named(reference: str, sessions: Iterable[T], names_of: Callable[[T], Iterable[str | None]]) -> list[T]:
    """The sessions one of whose names is `reference` (trimmed, case-insensitive)."""
    wanted = reference.strip().casefold()
    return [session for session in sessions
            if any(name and name.strip().casefold() == wanted for name in names_of(session))]


def prefixed(reference: str, sessions: Iterable[T], id_of: Callable[[T], str]) -> list[T]:
    """The sessions whose id starts with `reference`; none for a reference too short to be a prefix."""
    if len(reference) < MIN_ID_PREFIX:
        return []
    return [session for session in sessions if id_of(session).startswith(reference)]


def one_named(reference: str, matches: Sequence[T], id_of: Callable[[T], str], noun: str = "session") -> T | None:
    """The one session named `reference` among `matches`, None for none.

    Raises:
        AmbiguousSessionError: several are (their ids named).
    """
    if len(matches) > 1:
        raise AmbiguousSessionError(f"{len(matches)} {noun}s are named {reference!r}: "
                                    + ", ".join(id_of(session) for session in matches),
                                    hint="pass the session id instead")
    return matches[0] if matches else None


def one_prefixed(reference: str, matches: Sequence[T], id_of: Callable[[T], str], noun: str = "session") -> T | None:
    """The one session whose id `reference` begins among `matches`, None for none.

    Raises:
        AmbiguousSessionError: several do (the first eight ids named).
    """
    if len(matches) > 1:
        raise AmbiguousSessionError(f"{reference!r} is a prefix of {len(matches)} {noun} ids: "
                                    + ", ".join(sorted(id_of(session) for session in matches)[:8]),
                                    hint="type more characters of the id")
    return matches[0] if matches else None


def as_path_refused(reference: str, *, noun: str = "session", hint: str) -> None:
    """For a reference that matched nothing: when it looks like a path (a `/` in it, a leading `~`
    or a `.jsonl` ending), says what is wrong with that path; else nothing (the caller says that
    no session matches).

    Raises:
        SessionNotFoundError: the path does not exist (with `hint`), is a folder, or is a file
            that is not a `.jsonl` transcript.
    """
    if "/" not in reference and not reference.startswith("~") and not reference.endswith(".jsonl"):
        return
    path = os.path.expanduser(reference)
    if os.path.isdir(path):
        raise SessionNotFoundError(f"{reference} is a folder, not a {noun} transcript",
                                   hint="pass the session's .jsonl file, its id or its name")
    if os.path.lexists(path) and not path.endswith(".jsonl"):
        raise SessionNotFoundError(f"{reference} is not a {noun} transcript (a .jsonl file)",
                                   hint="pass the session's .jsonl file, its id or its name")
    if not os.path.lexists(path):
        raise SessionNotFoundError(f"{reference}: no such file", hint=hint)
