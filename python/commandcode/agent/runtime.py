"""`AgentSession`: the one service every front end drives a session through.

It owns what used to live in the CLI: picking the session (new, resumed by reference, or the
most recent one, `-c`), holding its writer, running a turn with the checkpoint hook, naming the
session, patching its meta and recording the prompt history; and for rewinds, the folder a
rewind may write into (`folder`) and the recovery of a restore a crash interrupted. Summaries
come from the `summarizer` it is given (the offline one by default), so a real provider can
write them. Messages for the user go to `notify` (the CLI prints them as `warning:` lines).

Later issues add fork, clone, compact and export here (the stubs below name them).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..catalog.listing import most_recent, resolve_session
from ..checkpoints.manager import CheckpointManager
from ..checkpoints.modes import RewindMode
from ..checkpoints.records import Checkpoint, read_checkpoints
from ..checkpoints.rewind import (
    RewindResult,
    available_modes,
    checkpoint_numbers,
    find_checkpoint,
    recover_pending,
    rewind,
)
from ..config.paths import project_root
from ..errors import CheckpointError, CommandcodeError, SessionNotFoundError, UsageError
from ..sessions.files import SessionFiles
from ..sessions.format import clean_name, read_header_cwd
from ..sessions.history import record_prompt
from ..sessions.meta import read_meta_for_update, update_meta
from ..sessions.reader import open_session
from ..sessions.writer import SessionWriter
from ..storage.ids import new_uuid
from .providers.base import Model
from .providers.offline import OfflineModel
from .summarize import Summarizer, offline_summary
from .turn import Conversation, TurnResult

TYPE_CHECKING = False
if TYPE_CHECKING:
    from .resume import ResumePlan

Notify = Callable[[str], None]
AVAILABLE_MODELS = ("offline",)
CHECKPOINTS_SUFFIX = ".checkpoints.jsonl"


def resolve_model(name: str) -> Model:
    """The model a `--model` value names.

    Raises:
        UsageError: no such model.
    """
    if name in ("offline", OfflineModel.model_id):
        return OfflineModel()
    raise UsageError(f"unknown model {name!r}", hint=f"available models: {', '.join(AVAILABLE_MODELS)}")


def git_branch(cwd: Path) -> str | None:
    """The current git branch of `cwd` (also a branch with no commits yet), or None outside a
    repository and on a detached HEAD."""
    try:
        completed = subprocess.run(["git", "symbolic-ref", "--quiet", "--short", "HEAD"], cwd=cwd, capture_output=True,
                                   text=True, timeout=5, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    branch = completed.stdout.strip()
    return branch if completed.returncode == 0 and branch else None


def session_folder(files: SessionFiles) -> Path:
    """The folder outside of which a rewind of this session writes nothing: the transcript
    header's `cwd` when it is the project the session is filed under (an absolute, normalised
    path whose slug is the name of the transcript's folder), else the current directory. A header
    can be forged or copied: one that claims `/` must not open the whole disk to its checkpoints."""
    recorded = read_header_cwd(files.sidecar_path(".jsonl"))
    if recorded is not None and _is_own_project(recorded, files):
        return Path(recorded)
    return Path.cwd()


def _is_own_project(cwd: str, files: SessionFiles) -> bool:
    if "\x00" in cwd or not os.path.isabs(cwd) or os.path.normpath(cwd) != cwd:
        return False
    return os.path.basename(project_root(cwd)) == os.path.basename(files.folder)  # a long slug's folder is cut


def _skipped_newer(chosen: SessionFiles | None, unreadable: list[tuple[Path, str]]) -> list[str]:
    """Which sessions `-c` passed over because they cannot be opened, when they are newer than the
    one it continues (or it found none): the user may have meant one of those."""
    try:
        floor = chosen.transcript.stat().st_mtime if chosen is not None else float("-inf")
    except OSError:
        floor = float("-inf")
    notices = []
    for path, reason in unreadable:
        try:
            newer = path.stat().st_mtime >= floor
        except OSError:
            newer = True
        if newer:
            continues = f"continuing {chosen.session_id}" if chosen is not None else "not continuing it"
            notices.append(f"-c skipped the newer session {path.name[:-len('.jsonl')]}: {reason}; {continues}")
    return notices


def _ignore(message: str) -> None:
    del message


class CheckpointChoice:
    """One row of `checkpoints list`: the number it is chosen by, its record, the rewinds it offers."""

    __slots__ = ("number", "record", "modes")

    def __init__(self, number: int, record: Checkpoint, modes: list[RewindMode]) -> None:
        self.number, self.record, self.modes = number, record, modes


class AgentSession:
    """One session as an agent works on it. Create it with `start` (new, `-r`, `-c`) or
    `for_reference` (an existing session, for rewinds and listings).

    Turns need the writer: use the session as a context manager around `rename`/`run_turn`
    (`with AgentSession.start(...) as agent: agent.run_turn(prompt)`); the writer lock is held
    meanwhile. `rewind` and `checkpoint_choices` work with or without it.
    """

    def __init__(self, files: SessionFiles, cwd: Path, *, is_new: bool, persist: bool = True,
                 model: Model | None = None, entrypoint: str | None = None,
                 summarizer: Summarizer = offline_summary, notify: Notify = _ignore) -> None:
        self.files = files
        self.cwd = Path(cwd)
        self.is_new = is_new
        self.persist = persist
        self.model = model if model is not None else OfflineModel()
        self.entrypoint = entrypoint
        self.summarizer = summarizer
        self.notify = notify
        self.messages: list[dict[str, Any]] = []
        self._writer: SessionWriter | None = None
        self._checkpoints: CheckpointManager | None = None
        self._checkpoints_loaded = False
        self._name: str | None = None
        self._labelled = False

    # ----------------------------------------------------------------------------------------
    # Creating and resuming

    @classmethod
    def start(cls, cwd: Path, *, reference: str | None = None, continue_last: bool = False, **options: Any) -> AgentSession:
        """A session to run turns in: the one `reference` names (`-r`), the most recent one of
        this directory (`continue_last`, `-c`: headless ones first), else a new one.

        Raises:
            UsageError: both `reference` and `continue_last`.
            SessionNotFoundError, AmbiguousSessionError: the reference names no single session,
                or there is none to continue.
        """
        if reference and continue_last:
            raise UsageError("-r and -c cannot be used together")
        if reference:
            return cls(resolve_session(reference, cwd), cwd, is_new=False, **options)
        if continue_last:
            unreadable: list[tuple[Path, str]] = []
            files = most_recent(cwd, headless=True, unreadable=unreadable) or most_recent(cwd, headless=False)
            for notice in _skipped_newer(files, unreadable):
                options.get("notify", _ignore)(notice)
            if files is None:
                raise SessionNotFoundError("no session to continue in this directory",
                                           hint="start one with `commandcode -p PROMPT`")
            return cls(files, cwd, is_new=False, **options)
        return cls(SessionFiles(project_root(cwd), new_uuid()), cwd, is_new=True, **options)

    @classmethod
    def for_reference(cls, reference: str, cwd: Path | None = None, **options: Any) -> AgentSession:
        """An existing session, for rewinds and checkpoint listings: a reference as `start`
        takes it, or a `<id>.checkpoints.jsonl` path (a `--no-session` run has checkpoints but no
        transcript). Its working directory is `folder`, the one a rewind may write into."""
        here = Path.cwd() if cwd is None else Path(cwd)
        as_path = Path(reference).expanduser()
        if reference.endswith(CHECKPOINTS_SUFFIX) and as_path.is_file():
            files = SessionFiles(as_path.resolve().parent, as_path.name[: -len(CHECKPOINTS_SUFFIX)])
        else:
            files = resolve_session(reference, here)
        return cls(files, session_folder(files), is_new=False, **options)

    @staticmethod
    def plan_resume(cwd: Path, **how: Any) -> ResumePlan:
        """Finds and plans a resume (`-r`, `-c`, `--session`, a picked session): what it restores
        and what to ask first; `.open()` then makes the session. See `agent/resume.py`."""
        from .resume import plan_resume

        return plan_resume(cwd, **how)

    @property
    def session_id(self) -> str:
        return self.files.session_id

    @property
    def folder(self) -> Path:
        """The folder a rewind of this session may write into (see `session_folder`)."""
        return session_folder(self.files)

    # ----------------------------------------------------------------------------------------
    # Turns

    def __enter__(self) -> AgentSession:
        writer = SessionWriter(self.files, str(self.cwd), persist=self.persist)
        writer.__enter__()
        try:
            if not self.is_new:  # a resumed session (also without persisting, which only stops writing)
                session = open_session(self.files.transcript)
                self.messages = session.context().messages
                if session.skipped_lines:
                    self.notify(f"{self.files.transcript.name}: {len(session.skipped_lines)} unreadable line(s) skipped")
        except BaseException:
            writer.close()
            raise
        self._writer = writer
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Releases the writer lock (uncommitted entries are dropped, as a crash would drop them)."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def _require_writer(self) -> SessionWriter:
        if self._writer is None:
            raise CommandcodeError("the session is not open for writing; use it as a context manager")
        return self._writer

    def rename(self, name: str) -> None:
        """Names the session (a `session_info` entry with the next commit, and `meta.title`).

        Raises:
            InvalidSessionError: the meta file is not a JSON object (nothing was written).
        """
        cleaned = clean_name(name)
        if not cleaned:
            return
        if self.persist:
            read_meta_for_update(self.files.meta)  # refuse a meta file we could not update before anything is written
        self._require_writer().append_entry("session_info", {"name": cleaned})
        self._name = cleaned

    def checkpoints(self) -> CheckpointManager | None:
        """The checkpoint hook of the turns: the session's manager, loaded once (after finishing
        a restore a crash interrupted); `None` when nothing is persisted, or, with a notice, when
        the checkpoints file cannot be read (a FIFO or folder in its place): the turn runs, its
        edits are not checkpointed, and that file is left as it is (like the disk-low pause)."""
        if not self._checkpoints_loaded:
            self._checkpoints_loaded = True
            if self.persist:
                try:
                    self.recover_interrupted_restore()
                    self._checkpoints = CheckpointManager.for_session(self.files, self.cwd)
                except CheckpointError as error:
                    self.notify(f"{error}; this turn's edits are not checkpointed")
        return self._checkpoints

    def run_turn(self, prompt: str) -> TurnResult:
        """Runs one prompt to completion, commits it, patches the meta and records the prompt.

        Raises:
            CommandcodeError: the turn failed (what it produced, and an `Error: …` message, were
                recorded in the session first); a failure of ours keeps its own class.
        """
        writer = self._require_writer()
        conversation = Conversation(writer, self.model, self.cwd, self.messages, self.checkpoints())
        try:
            result = conversation.run_turn(prompt)
        except CommandcodeError:
            raise
        except OSError as error:  # a full disk: the transcript was cut back to its last commit
            where = f" ({error.filename})" if error.filename else ""
            raise CommandcodeError(f"the turn failed: {error.strerror or error}{where}") from error
        except Exception as error:  # the turn recorded it (`Error: …`); the caller gets one line, not a traceback
            raise CommandcodeError(f"the turn failed: {str(error) or type(error).__name__}") from error
        finally:  # a failed turn that reached disk is still labelled
            self._patch_meta(writer)
        if self.persist:
            record_prompt(prompt)
        return result

    def _patch_meta(self, writer: SessionWriter) -> None:
        if not self.persist or not writer.exists_on_disk:
            return
        patch: dict[str, Any] = {}
        if self.is_new and not self._labelled:
            patch.update({"entrypoint": self.entrypoint, "gitBranch": git_branch(self.cwd)})
            self._labelled = True
        if self._name:
            patch.update({"title": self._name, "userRenamed": True})
            self._name = None
        if patch:
            update_meta(self.files.meta, patch)

    # ----------------------------------------------------------------------------------------
    # Checkpoints and rewinds

    def recover_interrupted_restore(self, *, allow_outside: bool = False) -> None:
        """Completes (or, for a journal of an older release, undoes) a restore of this session that
        a crash interrupted, and says so: the user sees which state their files are in. The journal
        may name nothing outside `folder` (`allow_outside`: a rewind the user lets out of it)."""
        outcome = recover_pending(self.files, None if allow_outside else self.folder)
        if outcome is not None:
            state, targets = outcome
            verb = "finished" if state == "completed" else "undid"
            self.notify(f"{verb} a restore of session {self.session_id} that was interrupted ({len(targets)} file(s))")

    def checkpoint_records(self) -> list[Checkpoint]:
        """The session's checkpoint records, as on disk."""
        return read_checkpoints(self.files.checkpoints)

    def checkpoint_choices(self) -> list[CheckpointChoice]:
        """Every checkpoint with its number and the rewinds it offers (`checkpoints list`)."""
        records = self.checkpoint_records()
        has_transcript = self.files.transcript.exists()
        return [CheckpointChoice(number, record, available_modes(records, index, has_transcript=has_transcript))
                for index, (record, number) in enumerate(zip(records, checkpoint_numbers(records)))]

    def offered_modes(self, number: int) -> tuple[Checkpoint, list[RewindMode]]:
        """Checkpoint `number` and the rewinds it offers.

        Raises:
            UsageError: there is no such checkpoint.
        """
        records = self.checkpoint_records()
        index = find_checkpoint(records, number)
        return records[index], available_modes(records, index, has_transcript=self.files.transcript.exists())

    def rewind(self, number: int, mode: RewindMode, *, dry_run: bool = False, force: bool = False,
               allow_outside: bool = False, faults: dict[str, int] | None = None) -> RewindResult:
        """Rewinds to just before turn `number` (see `checkpoints.rewind.rewind`), confined to
        `folder` unless `allow_outside`; while the session is open for writing, through its own
        writer and checkpoint manager. `faults` are the native restore's test hooks."""
        return rewind(self.files, self.folder, number, mode, dry_run=dry_run, force=force, allow_outside=allow_outside,
                      writer=self._writer, checkpoints=self._checkpoints, summarizer=self.summarizer, faults=faults)

    # ----------------------------------------------------------------------------------------
    # Hooks of later issues

    def fork(self, *args: Any, **kwargs: Any) -> AgentSession:
        """A new session continuing from an entry of this one (a later issue)."""
        raise NotImplementedError("fork comes with a later issue")

    def clone(self, *args: Any, **kwargs: Any) -> AgentSession:
        """A copy of this session under a new id (a later issue)."""
        raise NotImplementedError("clone comes with a later issue")

    def compact(self, *args: Any, **kwargs: Any) -> None:
        """Summarizes the older context with `summarizer` (a later issue)."""
        raise NotImplementedError("compact comes with a later issue")

    def export(self, *args: Any, **kwargs: Any) -> str:
        """The session as a document (a later issue)."""
        raise NotImplementedError("export comes with a later issue")
