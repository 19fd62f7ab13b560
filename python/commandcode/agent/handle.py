"""`SessionHandle`: the small core every collaborator of an `AgentSession` takes through its
constructor (`turns.py`, `model_switch.py`, `session_navigation.py`, `session_rewinds.py`). It owns
what is the session's own: its files and working directory, its project context (`project`,
`config/context.py`: the settings every collaborator reads, refreshed when a turn starts and
after a settings write), the writer's lifetime (`enter`,
`close`, `writer`), the checkpoint manager's lifetime once the turns attached it, the context
the model sees (`messages`/`entry_ids`, re-read by `reload_context` after anything that moves
the leaf), its name, and its meta: `patch_meta` labels a new session (entrypoint, git branch),
writes a new name, the patches collaborators queued (`queue_meta`) and a turn's trace id, then
runs the `after_meta` listeners (the model selection records the permission mode there).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config.context import ProjectContext
from ..errors import CommandcodeError, InvalidSessionError
from ..sessions.files import SessionFiles
from ..sessions.meta import read_meta, read_meta_for_update, update_meta
from ..sessions.reader import Session, open_session
from ..sessions.writer import SessionWriter
from .locate import git_branch, session_folder

if TYPE_CHECKING:
    from ..checkpoints.manager import CheckpointManager

Notify = Callable[[str], None]


def ignore(message: str) -> None:
    """A `notify` that drops its message (the default: the caller did not ask to be told)."""
    del message


class SessionHandle:
    """One session's files, writer lifetime, context and meta (see the module docstring)."""

    def __init__(self, files: SessionFiles, cwd: Path, *, is_new: bool, persist: bool = True,
                 entrypoint: str | None = None, notify: Notify = ignore, project: ProjectContext | None = None) -> None:
        self.files = files
        self.cwd = Path(cwd)
        # The caller's context when it is this folder's (one per launch), else this folder's own.
        self.project = project if project is not None and project.cwd == os.path.abspath(cwd) else ProjectContext(cwd)
        self.is_new = is_new
        self.persist = persist
        self.entrypoint = entrypoint
        self.notify = notify
        self.messages: list[dict[str, Any]] = []
        self.entry_ids: list[str] = []  # the entry of each message (compaction's firstKeptEntryId)
        self._writer: SessionWriter | None = None
        self._manager: CheckpointManager | None = None
        self._pending_meta: dict[str, Any] = {}
        self._after_meta: list[Callable[[], None]] = []
        self._name: str | None = None
        self._saved_name: str | None = None
        self._saved_name_read = False
        self._labelled = False

    @property
    def session_id(self) -> str:
        return self.files.session_id

    @property
    def folder(self) -> Path:
        """The folder a rewind of this session may write into (see `agent.locate.session_folder`)."""
        return session_folder(self.files)

    @contextlib.contextmanager
    def notices_to(self, notify: Notify) -> Iterator[None]:
        """Sends the session's notices to `notify` meanwhile (a screen's status bar while a worker
        thread drafts a summary), then back where they went."""
        before, self.notify = self.notify, notify
        try:
            yield
        finally:
            self.notify = before

    # ----------------------------------------------------------------------------------------
    # The writer and the checkpoint manager

    def enter(self, prepare: Callable[[Session | None], None]) -> None:
        """Takes the writer lock; a resumed session's context is read (and unreadable lines told),
        then `prepare` gets the session read (None for a new one). A failure releases the lock."""
        writer = SessionWriter(self.files, str(self.cwd), persist=self.persist)
        writer.__enter__()
        try:
            session = None
            if not self.is_new:  # a resumed session (also without persisting, which only stops writing)
                session = open_session(self.files.transcript, tail=False)  # its skipped lines too
                self.reload_context(session)
                if session.skipped_lines:
                    self.notify(f"{self.files.transcript.name}: {len(session.skipped_lines)} unreadable line(s) skipped")
            prepare(session)
        except BaseException:
            writer.close()
            raise
        self._writer = writer

    def close(self) -> None:
        """Releases the writer lock (uncommitted entries are dropped, as a crash would drop them)
        and ends shell tracking (its baseline thread joined: nothing outlives the session)."""
        if self._manager is not None:
            self._manager.close()
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    @property
    def is_open(self) -> bool:
        """Whether the session is open for writing (entered, holding its writer lock)."""
        return self._writer is not None

    @property
    def open_writer(self) -> SessionWriter | None:
        """The writer while the session is open, else None (a rewind then takes its own)."""
        return self._writer

    def writer(self) -> SessionWriter:
        """The open session's writer.

        Raises:
            CommandcodeError: the session is not open for writing.
        """
        if self._writer is None:
            raise CommandcodeError("the session is not open for writing; use it as a context manager")
        return self._writer

    @property
    def exists_on_disk(self) -> bool:
        """Whether the session has a transcript yet (a new one gets it with its first reply)."""
        return self._writer.exists_on_disk if self._writer is not None else self.files.transcript.exists()

    @property
    def manager(self) -> CheckpointManager | None:
        """The checkpoint manager the turns attached (None before the first turn, or unpersisted)."""
        return self._manager

    def attach_manager(self, manager: CheckpointManager) -> None:
        """Hands the turns' checkpoint manager to the handle: rewinds use it, `close` ends it."""
        self._manager = manager

    def reload_context(self, session: Session | None = None) -> None:
        """Re-reads the messages the model sees (and their entries) after anything that moved the
        leaf (a resume, rewind, redo, jump): the next turn sends what `sessions context` shows."""
        if session is None and not self.files.transcript.exists():  # nothing committed yet
            return
        context = (session or open_session(self.files.transcript)).context()
        self.messages = context.messages
        self.entry_ids = list(context.entry_ids) if len(context.entry_ids) == len(self.messages) else \
            [""] * len(self.messages)  # "": an entry compaction cannot point at

    # ----------------------------------------------------------------------------------------
    # The name and the meta

    @property
    def name(self) -> str | None:
        """The session's name: the one given in this process, else the saved one."""
        if self._name is not None:
            return self._name
        if not self._saved_name_read and self.files.transcript.exists():  # read once (a redraw asks often)
            self._saved_name_read = True
            try:
                self._saved_name = open_session(self.files.transcript, tail=False).name
            except (CommandcodeError, OSError):
                return None
        return self._saved_name

    def rename(self, name: str) -> str:
        """Names the session: a `session_info` entry and `meta.title` + `meta.userRenamed`, at
        once for a saved session, with the first save for a new one. Returns the stored name.

        Raises:
            UsageError: the name is empty or over 200 characters (`agent.naming`).
            CommandcodeError: another session of the project has that name.
            InvalidSessionError: the meta file is not a JSON object (nothing was written).
        """
        from .naming import checked_name

        writer = self.writer()
        cleaned = checked_name(name, self.cwd, session_id=self.session_id, unique=self.persist)
        if self.persist:
            read_meta_for_update(self.files.meta)  # refuse a meta file we could not update before anything is written
        writer.append_entry("session_info", {"name": cleaned})
        self._name = cleaned
        if self.persist and writer.exists_on_disk:
            writer.commit(force=True)
            self.patch_meta()
        return cleaned

    def queue_meta(self, patch: dict[str, Any]) -> None:
        """Meta keys to write with the next `patch_meta` (a new session's: with its first save)."""
        self._pending_meta.update(patch)

    def after_meta(self, listener: Callable[[], None]) -> None:
        """Runs `listener` after each `patch_meta` (also when there was nothing to patch)."""
        self._after_meta.append(listener)

    def patch_meta(self, *, trace_id: str | None = None) -> None:
        """Brings the meta up to date once the session is on disk (see the module docstring); a
        turn's `trace_id` is a convenience: a meta file it cannot be written to is told, not raised."""
        writer = self.writer()
        if not self.persist or not writer.exists_on_disk:
            return
        patch: dict[str, Any] = {}
        if self.is_new and not self._labelled:
            patch.update({"entrypoint": self.entrypoint, "gitBranch": git_branch(self.cwd)})
            self._labelled = True
        elif trace_id is not None and not self._labelled and self.entrypoint != "print":
            self._labelled = True  # a turn of the shell's (not a rename): a headless session is headless no more
            if read_meta(self.files.meta).get("entrypoint") == "print":
                patch["entrypoint"] = None
        if self._name:
            patch.update({"title": self._name, "userRenamed": True})
            self._saved_name, self._name = self._name, None
        patch.update(self._pending_meta)
        self._pending_meta.clear()
        if trace_id is not None:
            from .tracing import with_trace_id

            patch["traceIds"] = with_trace_id(read_meta(self.files.meta), trace_id)
        if list(patch) == ["traceIds"]:  # a convenience: the committed turn stands without it
            try:
                update_meta(self.files.meta, patch)
            except InvalidSessionError:
                self.notify(f"{self.files.meta.name} is not a JSON object; this turn's trace id is not recorded")
            except OSError as error:
                self.notify(f"this turn's trace id is not recorded in {self.files.meta.name}: {error.strerror or error}")
        elif patch:
            update_meta(self.files.meta, patch)
        for listener in self._after_meta:
            listener()
