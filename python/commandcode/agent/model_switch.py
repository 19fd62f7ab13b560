"""`ModelSelection`: the model, reasoning effort and permission mode a session's turns run with,
and saving them, as the real CLI records them. A model switch is a `model_change` entry
(`model`: `provider/model`) with `meta.model` and `meta.modelProvider`, an effort switch an
`effort_change` entry (`effort`). A saved session commits the entry at once (it survives a quit
before the next turn); a new one writes it with its first turn. The effort also goes on each later
assistant entry and, for a model that `Reasons`, into its requests (`reasoning_effort`).
`adopt` picks the model of a session opened without one (a resume goes on with its own). The
permission mode is recorded as `meta.permissionMode` after each meta patch (`agent/mode_meta.py`).
"""

from __future__ import annotations

from collections.abc import Callable

from ..config.context import ProjectContext
from ..errors import UsageError
from ..sessions.reader import Session, open_session
from .handle import SessionHandle
from .mode_meta import UNKNOWN, ModeRecord
from .permissions import check_mode
from .providers.base import Model, Reasons
from .providers.offline import OfflineModel
from .providers.registry import model_provider, resolve_model

EFFORT_LEVELS = ("low", "medium", "high", "xhigh", "max")


def _nothing() -> None:
    pass


class ModelSelection:
    """The model, effort and permission mode of one session (see the module docstring). `model`
    None: the resumed session's recorded one, else `config.json`'s (chosen by `adopt` on open).
    `after_switch` runs after a model switch (the turns compact a context the new window overflows)."""

    def __init__(self, handle: SessionHandle, *, model: Model | None = None, permission_mode: str | None = None,
                 after_switch: Callable[[], None] = _nothing) -> None:
        self._handle = handle
        self.model: Model = model if model is not None else OfflineModel()
        self._model_given = model is not None
        self.effort: str | None = None
        self.permission_mode = check_mode(permission_mode) if permission_mode else None
        self._mode_record = ModeRecord(handle, None if handle.is_new else UNKNOWN)
        self._after_switch = after_switch
        handle.after_meta(self.record_mode)

    def set_model(self, name: str) -> str:
        """Switches to the model `name` (`provider/model` or `offline`): a `model_change` entry,
        committed now for a saved session, and `meta.model`/`modelProvider`; a context over 90 %
        of the new model's window is compacted (with a notice). Returns its id.

        Raises:
            UsageError: no such model or provider.
        """
        model = resolve_model(name, warn=self._handle.notify)
        if self.effort is not None and isinstance(model, Reasons):
            model.effort = self.effort
        writer = self._handle.writer()
        writer.append_entry("model_change", {"model": model.model_id})
        if writer.exists_on_disk:
            writer.commit()
        self._handle.queue_meta({"model": model.model_id, "modelProvider": model_provider(model.model_id)})
        self._handle.patch_meta()
        self.model = model
        self._after_switch()  # a smaller window the context overflows compacts at once (format §11)
        return model.model_id

    def set_effort(self, level: str) -> None:
        """Sets the reasoning effort (low, medium, high, xhigh, max): an `effort_change` entry,
        and the `effort` of every later assistant entry.

        Raises:
            UsageError: an unknown level.
        """
        cleaned = level.strip().lower()
        if cleaned not in EFFORT_LEVELS:
            raise UsageError(f"unknown effort {level!r}", hint=f"use one of: {', '.join(EFFORT_LEVELS)}")
        if cleaned == self.effort:
            return  # no change, no entry (`--effort high` on every -p run of a high session)
        writer = self._handle.writer()
        writer.append_entry("effort_change", {"effort": cleaned})
        if writer.exists_on_disk:
            writer.commit()
        if isinstance(self.model, Reasons):
            self.model.effort = cleaned
        self.effort = cleaned

    def set_permission_mode(self, mode: str | None) -> None:
        """The mode later turns run in (Shift+Tab cycles it); None: the settings' defaultMode.

        Raises:
            UsageError: an unknown mode.
        """
        self.permission_mode = check_mode(mode) if mode else None
        self.record_mode()

    def effective_permission_mode(self) -> str:
        """The permission mode turns run in: the one set, else the settings' defaultMode, from the
        session's context (the status bar asks at each redraw: no settings file is read here; a
        turn's start or a settings write refreshes the context)."""
        return self.permission_mode or settings_mode(self._handle.project)

    def record_mode(self) -> None:
        """Writes the permission mode into the meta when the session is on disk and it changed."""
        self._mode_record.write(self.permission_mode)

    def adopt(self, recorded_model: str | None, recorded_effort: str | None) -> None:
        """When the caller named no model: a resumed session goes on with the model it recorded
        (its last `model_change`, or a later assistant's `model`), a new one starts with
        `config.json`'s (else the offline model); a recorded model this machine cannot reach any
        more (a provider removed from providers.json) falls back to the offline model with a notice.
        A recorded effort is kept unless one was set."""
        if self.effort is None and recorded_effort in EFFORT_LEVELS:
            self.effort = recorded_effort
        if self._model_given:
            return
        notify = self._handle.notify
        if recorded_model is None:  # a new session: config.json's model (a wrong one is the user's to fix)
            self.model = resolve_model(None, warn=notify)
        else:
            try:
                self.model = resolve_model(recorded_model, warn=notify)
            except UsageError as error:
                notify(f"the session's model {recorded_model} is not available ({error}); using the offline model")
                self.model = resolve_model("offline")
        if self.effort is not None and isinstance(self.model, Reasons):
            self.model.effort = self.effort

    def adopt_recorded(self, session: Session | None = None) -> None:
        """A session not open for writing (`sessions status`, a goto from the command line) takes
        the model it recorded, as a resume would: once, and only when no model was given."""
        handle = self._handle
        if handle.is_open or self._model_given or not handle.files.transcript.is_file():
            return
        recorded = session or open_session(handle.files.transcript)
        self.adopt(recorded.model, recorded.effort)
        self._model_given = True  # adopted once; a later open keeps it

    def carry_over(self, other: ModelSelection) -> None:
        """Takes `other`'s permission mode (a session switched to in the same shell keeps it)."""
        self.permission_mode = other.permission_mode


def settings_mode(project: ProjectContext) -> str:
    """The settings' `permissions.defaultMode` in `project` (`default` when unset or unknown, or
    when a settings file is malformed: the turn's start reports that file itself)."""
    from ..errors import SettingsError
    from .permissions import MODES

    try:
        mode = project.settings().permissions_default_mode
    except SettingsError:
        return "default"
    return mode if mode in MODES else "default"
