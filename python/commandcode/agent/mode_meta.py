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

from typing import Any

from ..errors import InvalidSessionError
from ..sessions.meta import update_meta

UNKNOWN: Any = object()  # a resumed session's recorded mode, until it writes its own


def record_mode(agent: Any) -> None:
    """Writes `agent.permission_mode` into its meta when it is on disk and the mode changed."""
    if not agent.persist or not agent.exists_on_disk or agent.permission_mode == agent.recorded_mode:
        return
    try:
        update_meta(agent.files.meta, {"permissionMode": agent.permission_mode})
    except InvalidSessionError:
        agent.notify(f"{agent.files.meta.name} is not a JSON object; the permission mode is not recorded")
        return
    except OSError as error:
        agent.notify(f"the permission mode is not recorded in {agent.files.meta.name}: {error.strerror or error}")
        return
    agent.recorded_mode = agent.permission_mode
