"""Recording the permission mode a session runs in as `meta.permissionMode` (format doc §5).

`-c` and an unambiguous `-r` at launch restore it (`agent/resume.py`; never `plan` or
`bypassPermissions`), so the meta must say the mode the session was last in: it is written when
the mode is set (Shift+Tab, `/permissions`-style commands, `set_permission_mode`) once the
session is on disk, and with the first commit of a new session (its launch mode). When the mode
follows the settings' `defaultMode` again the key is removed (nothing to restore). Only a change
is written; a resumed session records its mode with its first write, since what its meta says
is not known without reading it. A meta file that is not a JSON object is left as it is (a
notice), never overwritten — the mode is a convenience, the session stands without it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import InvalidSessionError
from ..sessions.meta import update_meta

if TYPE_CHECKING:
    from .handle import SessionHandle

UNKNOWN: Any = object()  # a resumed session's recorded mode, until it writes its own


class ModeRecord:
    """The permission mode `meta.permissionMode` last got from this process (`recorded`: None for
    a new session, `UNKNOWN` for a resumed one until it writes its own)."""

    def __init__(self, handle: SessionHandle, recorded: Any) -> None:
        self._handle = handle
        self.recorded = recorded

    def write(self, mode: str | None) -> None:
        """Writes `mode` into the handle's meta when the session is on disk and the mode changed."""
        handle = self._handle
        if not handle.persist or not handle.exists_on_disk or mode == self.recorded:
            return
        try:
            update_meta(handle.files.meta, {"permissionMode": mode})
        except InvalidSessionError:
            handle.notify(f"{handle.files.meta.name} is not a JSON object; the permission mode is not recorded")
            return
        except OSError as error:
            handle.notify(f"the permission mode is not recorded in {handle.files.meta.name}: {error.strerror or error}")
            return
        self.recorded = mode
