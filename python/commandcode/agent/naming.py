"""Session names: the rules a new name must pass, and a title for a session that has none.

A name is trimmed (CR/LF become spaces, as the real CLI stores it), at most `MAX_NAME_CHARS`
characters, and unique within the project: no other session of this directory's project may
carry it, compared case-insensitively (the real CLI's rule for `/rename` and `/fork NAME`). A
name that reads as the id (or an id prefix) of another session is refused too: references try
ids before names, so such a name could never be used, and before that rule it took the id over.
A bare `/rename` asks the model for a title; the offline model builds one from the first prompt
(`title_from_prompt`).
"""

from __future__ import annotations

import os
import re

from ..catalog.listing import project_dirs, transcripts_in
from ..catalog.names import project_names
from ..errors import CommandcodeError, UsageError
from ..sessions.format import MIN_ID_PREFIX, clean_name

MAX_NAME_CHARS = 200
TITLE_CHARS = 50
_CALL_LINE = re.compile(r"^\s*call\s+[A-Za-z_]\w*\s*(\{.*)?$")
_ID_LIKE = re.compile(r"[0-9a-f][0-9a-f-]*")


def id_prefix_owner(name: str, cwd: str | os.PathLike[str], *, except_id: str | None = None) -> str | None:
    """The id of another session (any project: references reach them all) that starts with
    `name` (trimmed, case-insensitive), or None; a name that cannot be an id is not looked up."""
    wanted = clean_name(name).casefold()
    if len(wanted) < MIN_ID_PREFIX or not _ID_LIKE.fullmatch(wanted):
        return None
    for folder in project_dirs(all_projects=True, cwd=cwd):
        for transcript in transcripts_in(folder):
            session_id = transcript.name[:-len(".jsonl")]
            if session_id != except_id and session_id.casefold().startswith(wanted):
                return session_id
    return None


def refuse_id_like(name: str, cwd: str | os.PathLike[str], *, session_id: str | None) -> None:
    """Raises when `name` reads as another session's id or id prefix (see the module docstring).

    Raises:
        CommandcodeError: it does.
    """
    owner = id_prefix_owner(name, cwd, except_id=session_id)
    if owner is not None:
        raise CommandcodeError(f"the name {clean_name(name)!r} reads as the id of session {owner}",
                               hint="ids win over names, so it would never name this session; pick another")


def name_owner(name: str, cwd: str | os.PathLike[str], *, except_id: str | None = None) -> str | None:
    """The id of another session of `cwd`'s project already named `name` (case-insensitive,
    trimmed), or None."""
    wanted = clean_name(name).casefold()
    for session_id, owned in project_names(cwd):  # names only: no listing row is built
        if session_id != except_id and owned is not None and clean_name(owned).casefold() == wanted:
            return session_id
    return None


def checked_name(name: str, cwd: str | os.PathLike[str], *, session_id: str | None = None, unique: bool = True) -> str:
    """`name` as it will be stored, once it passes the rules (`unique`: no other session of the
    project has it; a `--no-session` run, which saves nothing, skips that look).

    Raises:
        UsageError: the name is empty or longer than 200 characters.
        CommandcodeError: another session of the project has that name.
    """
    cleaned = clean_name(name)
    if not cleaned:
        raise UsageError("the session name is empty", hint="pass a name, e.g. /rename auth refactor")
    if len(cleaned) > MAX_NAME_CHARS:
        raise UsageError(f"the session name is {len(cleaned)} characters long; the limit is {MAX_NAME_CHARS}",
                         hint="pick a shorter name")
    if unique:
        refuse_id_like(cleaned, cwd, session_id=session_id)
    owner = name_owner(cleaned, cwd, except_id=session_id) if unique else None
    if owner is not None:
        raise CommandcodeError(f"the name {cleaned!r} is taken by session {owner} in this project",
                               hint="names are unique within a project (case-insensitive); pick another")
    return cleaned


def title_from_prompt(prompt: str) -> str | None:
    """A short title from a prompt: its first line that is not a `call TOOL {...}` line, spaces
    collapsed, cut at a word boundary to about 50 characters; None when there is no such text."""
    for line in prompt.splitlines():
        if not line.strip() or _CALL_LINE.match(line):
            continue
        words = " ".join(line.split())
        if len(words) <= TITLE_CHARS:
            return words
        cut = words[:TITLE_CHARS].rsplit(" ", 1)[0] or words[:TITLE_CHARS]
        return cut.rstrip(" ,.;:-") + "…"
    for line in prompt.splitlines():  # only tool calls: name it after the first tool
        match = re.match(r"^\s*call\s+([A-Za-z_]\w*)", line)
        if match:
            return f"{match.group(1)} session"
    return None


def unique_title(title: str, cwd: str | os.PathLike[str], *, session_id: str | None) -> str:
    """`title`, or `title (2)`, `title (3)`… when a session of the project already has it."""
    candidate, number = title[:MAX_NAME_CHARS], 2
    while name_owner(candidate, cwd, except_id=session_id) is not None \
            or id_prefix_owner(candidate, cwd, except_id=session_id) is not None:
        suffix = f" ({number})"
        candidate, number = title[:MAX_NAME_CHARS - len(suffix)] + suffix, number + 1
    return candidate


def suggest_title(prompts: list[str], cwd: str | os.PathLike[str], *, session_id: str | None) -> str:
    """The title a bare `/rename` gives: from the first prompt that yields one.

    Raises:
        CommandcodeError: the session has no prompt to build a title from.
    """
    for prompt in prompts:
        title = title_from_prompt(prompt)
        if title:
            return unique_title(title, cwd, session_id=session_id)
    raise CommandcodeError("there is no prompt yet to build a title from", hint="pass a name: /rename NAME")
