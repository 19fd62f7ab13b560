"""Branching as a service: fork, clone, goto and label, with their checks and their wording.

What the CLI, the shell and the tree screen share, above the file work of `sessions/fork.py`,
`sessions/clone.py` and `sessions/navigate.py`:

- `fork_session` / `clone_session`: refuse a session with nothing saved yet, check a fork's name
  (at most 200 characters, unique in the project, case-insensitive and trimmed), pick the new
  id (retried on the rare collision) and make the copy; `copy_by_reference` does either for a
  user's reference (`sessions fork|clone REF`) without the rest of a session object, whose
  imports would cost a fork more than its name check;
- `summary_draft`: the branch summary a jump would write, from the summarizer passed in (the
  offline model writes an extractive one);
- `goto_entry` / `label_entry`: the moves, through the writer the caller holds; `goto_entry`'s
  summary is a text, `True` (write one), `False` (none) or `None` (the `branchSummary` setting).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from ..errors import CommandcodeError, InvalidSessionError, UsageError
from ..sessions.files import SessionFiles
from ..sessions.fork import CopyResult, fork_opening
from ..sessions.reader import Session, open_session
from ..storage.ids import new_uuid
from ..values import Frozen

# A fork answers in about the time of its copy: what only the other moves need (the clone, the
# jumps, the writer, the naming rules' catalog) is imported where it is used.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..config.context import ProjectContext
    from ..sessions.navigate import LeftBehind
    from ..sessions.writer import SessionWriter
    from .summarize import Summarizer

ID_RETRIES = 5


def _saved_session(files: SessionFiles, what: str) -> Session:
    if not files.transcript.is_file():
        raise InvalidSessionError(f"session {files.session_id} has nothing to {what} yet",
                                  hint="its transcript is written with the first answered prompt")
    return open_session(files.transcript, tail=False)  # a copy reads every entry


def _new_files(source: SessionFiles) -> SessionFiles:
    for _ in range(ID_RETRIES):
        files = SessionFiles(source.folder, new_uuid())
        if not files.transcript.exists() and not files.meta.exists():
            return files
    raise CommandcodeError("could not pick a free session id")  # pragma: no cover - five uuid4 collisions


_COPY_SUFFIXES = re.compile(r"(?: \((?:fork|clone)\)(?: \(\d+\))?)+$")


def copy_title(name: str, kind: str) -> str:
    """`<name> (fork)` / `<name> (clone)` for an unnamed copy, without piling suffixes up: a copy
    of `feature (fork) (2)` is `feature (clone)`, not `feature (fork) (2) (clone)`."""
    base = _COPY_SUFFIXES.sub("", name) or name
    return f"{base} ({kind})"


def fork_session(source: SessionFiles, cwd: Path, *, name: str | None = None) -> CopyResult:
    """Forks the whole tree and checkpoints of `source` into a new session of the same project.
    An unnamed fork of a named session is called `<name> (fork)` (names are unique in a project;
    the copied `session_info` would otherwise make two sessions answer to one name)."""
    from .naming import checked_name

    cleaned = checked_name(name, cwd) if name is not None else None

    def naming(source_name: str | None) -> tuple[str | None, bool]:
        if cleaned is None and source_name:
            from .naming import unique_title

            return unique_title(copy_title(source_name, "fork"), cwd, session_id=None), False
        return cleaned, True

    # the source is never scanned: the kernel copies it while the core reads its ends
    result = fork_opening(source, _new_files(source), lambda: _saved_session(source, "fork"), naming)
    from ..checkpoints.blob_rule import enforce_file

    # the copied blob folder lacks what the real CLI cleaned up in the source: made again
    enforce_file(result.files.checkpoints, result.files.session_id, cwd=cwd)
    return result


def clone_session(source: SessionFiles, cwd: Path) -> CopyResult:
    """Clones the active branch of `source` into a new session of the same project; a named
    session's clone is called `<name> (clone)` (see `fork_session`)."""
    from ..sessions.clone import clone_files
    from .naming import unique_title

    session = _saved_session(source, "clone")
    derived = unique_title(copy_title(session.name, "clone"), cwd, session_id=None) if session.name else None
    return clone_files(session, _new_files(source), name=derived)


def copy_by_reference(reference: str, here: Path, kind: Literal["fork", "clone"], *, name: str | None = None,
                      notify: Callable[[str], None]) -> CopyResult:
    """A fork (named `name`, when given) or a clone of the session `reference` names, made where
    `AgentSession.for_reference` would place it (its own project's folder); the unreadable lines
    left out of the copy are said once through `notify`.

    Raises:
        as `catalog.listing.resolve_session`, `fork_session` and `clone_session`.
    """
    from ..catalog.listing import resolve_session
    from .locate import session_folder

    files = resolve_session(reference, here)
    folder = session_folder(files)
    result = fork_session(files, folder, name=name) if kind == "fork" else clone_session(files, folder)
    notice = skipped_notice(files, result)
    if notice is not None:
        notify(notice)
    return result


def skipped_notice(source: SessionFiles, result: CopyResult) -> str | None:
    """The one line saying how many unreadable lines of `source` a copy left out (None: none)."""
    if not result.skipped:
        return None
    return f"{source.transcript.name}: {result.skipped} unreadable line(s) left out of the copy"


class GotoResult(Frozen):
    """A jump: the entry it went to, the new leaf, the summary entry (if one was written) and
    how many entries it left behind."""

    __slots__ = ("target", "leaf_id", "summary_entry_id", "left_entries")
    target: str
    leaf_id: str
    summary_entry_id: str | None
    left_entries: int

    def __init__(self, target: str, leaf_id: str, summary_entry_id: str | None, left_entries: int) -> None:
        self._set(target=target, leaf_id=leaf_id, summary_entry_id=summary_entry_id, left_entries=left_entries)

    def to_dict(self) -> dict[str, object]:
        return {"target": self.target, "leaf_id": self.leaf_id, "summary_entry_id": self.summary_entry_id,
                "left_entries": self.left_entries}


def resolve_target(files: SessionFiles, entry: str) -> tuple[Session, str]:
    from ..sessions.navigate import find_entry

    session = _saved_session(files, "navigate")
    return session, find_entry(session, entry)


def summary_draft(files: SessionFiles, entry: str, summarizer: Summarizer) -> tuple[LeftBehind, str | None]:
    """What a jump to `entry` leaves behind and the summary the summarizer writes of it (None
    when the jump leaves nothing behind, or only labels and other bookkeeping)."""
    from ..sessions.navigate import left_behind, left_messages

    session, target = resolve_target(files, entry)
    behind = left_behind(session, target)
    if not behind.has_work:  # nothing left behind, or only labels and other bookkeeping
        return behind, None
    return behind, summarizer(left_messages(session, behind))


def goto_entry(files: SessionFiles, writer: SessionWriter, entry: str, *, summary: str | bool | None,
               summarizer: Summarizer, project: ProjectContext) -> GotoResult:
    """Moves the leaf to `entry` (see `sessions.navigate.write_goto`).

    Raises:
        InvalidSessionError: no such entry, or the session has nothing saved.
        CommandcodeError: the leaf is already there.
    """
    from ..sessions.navigate import left_behind, left_messages, write_goto

    session, target = resolve_target(files, entry)
    if target == session.leaf_id:
        raise CommandcodeError(f"the session is already at entry {target}",
                               hint="pick another entry from `commandcode sessions tree REF`")
    behind = left_behind(session, target)
    if summary is None:
        summary = project.settings().branch_summary
    text: str | None
    if isinstance(summary, str):
        text = summary.strip() or None
        if text is None:
            raise UsageError("the summary is empty", hint="pass --no-summary to write none")
    elif summary and behind.has_work:
        text = summarizer(left_messages(session, behind))
    else:
        text = None
    written = text is not None and bool(behind.entry_ids)
    leaf = write_goto(writer, target, from_id=session.leaf_id, summary=text if written else None,
                      behind=behind if written else None)
    return GotoResult(target, leaf, leaf if written else None, len(behind.entry_ids))


def label_entry(files: SessionFiles, writer: SessionWriter, entry: str, text: str | None) -> tuple[str, bool]:
    """Attaches (or, with no text, clears) the label of `entry`; returns its id and whether
    anything was written."""
    from ..sessions.navigate import write_label

    session, target = resolve_target(files, entry)
    return target, write_label(writer, session, target, text)
