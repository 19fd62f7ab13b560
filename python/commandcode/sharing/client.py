"""Publishing and revoking shares: what `commandcode share`, `/share` and `/unshare` call.

With a team share service in the settings (`share.server`, `share.token`), a share lives there
(`team.py`: the rows go through the durable outbox and a background publisher). Without one, the
one-machine share server is found through `<data dir>/share/server.json` (written by `share serve`);
its control API takes the token from that file. A share's link and secret are kept in the
session's `<id>.share.json`, as the real CLI keeps them, so `/share` again re-copies the same
link and a share survives the process that made it (the server follows the transcript itself).

Which service the settings name is read through the caller's `ProjectContext` (`project`: the
launch's, or the shell's session's, #27); a library caller that passes none gets the current
directory's.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

from ..errors import CommandcodeError
from ..sessions.files import SessionFiles
from .state import expired, read_json, read_share_file, remove_share_file, server_file, write_share_file

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..config.context import ProjectContext

Notice = Callable[[str], None]
NOT_RUNNING_HINT = "start it with `commandcode share serve` (in another terminal)"


class Preview:
    """What a share would publish: the messages shown and the secrets redacted per rule."""

    __slots__ = ("messages", "redactions")

    def __init__(self, messages: int, redactions: dict[str, int]) -> None:
        self.messages, self.redactions = messages, redactions


def preview(files: SessionFiles) -> Preview:
    from ..export.document import render_rows
    from ..sessions.reader import open_session

    if not files.transcript.is_file():
        raise CommandcodeError("the session has nothing to share yet", hint="share it after its first turn")
    _rows, messages, counts = render_rows(open_session(files.transcript, tail=False))
    return Preview(messages, counts)


def _server() -> dict[str, Any]:
    info = read_json(server_file())
    if not isinstance(info, dict) or not isinstance(info.get("url"), str) or not isinstance(info.get("token"), str):
        raise CommandcodeError("the share server is not running", hint=NOT_RUNNING_HINT)
    return info


def _call(path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    info = _server()
    request = urllib.request.Request(str(info["url"]) + path, data=None if body is None else json.dumps(body).encode(),
                                     headers={"Authorization": f"Bearer {info['token']}",
                                              "Content-Type": "application/json"},
                                     method="GET" if body is None else "POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            answer = json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        try:
            reason = json.loads(error.read()).get("error", error.reason)
        except ValueError:
            reason = error.reason
        raise CommandcodeError(f"the share server refused: {reason}",
                               hint="restart it with `commandcode share serve`" if error.code == 401 else None) from None
    except (urllib.error.URLError, OSError, ValueError):
        raise CommandcodeError(f"the share server is not running (nothing answers at {info['url']})",
                               hint=NOT_RUNNING_HINT) from None
    return answer if isinstance(answer, dict) else {}


def ensure_running(project: ProjectContext | None = None) -> None:
    """Raises `CommandcodeError` (one line and a hint) unless the share server (or the team
    service `project`'s settings name) answers."""
    from .remote import configured

    service = configured(project)
    if service is not None:
        service.call("/api/whoami", None)
        return
    _call("/api/status")


def current(files: SessionFiles) -> dict[str, Any] | None:
    """The session's share as `<id>.share.json` records it, unless it has expired."""
    info = read_share_file(files)
    return None if info is None or expired(info.get("expiresAt")) else info


def publish(files: SessionFiles, *, expires_in: float | None = None, follow: bool = False,
            notice: Notice | None = None, project: ProjectContext | None = None) -> str:
    """Publishes (or re-arms, with its recorded secret) the session's share; returns the link.
    On a team service (`project`'s settings name one), `follow` keeps publishing each later
    commit in the background (`notice` tells of a service that stops or starts answering).

    Raises:
        CommandcodeError: the server is not running or refused, or the session has no file yet.
    """
    if not files.transcript.is_file():
        raise CommandcodeError("the session has nothing to share yet", hint="share it after its first turn")
    from .remote import configured

    service = configured(project)
    if service is not None:
        from .team import publish_team

        return publish_team(files, service, expires_in=expires_in, follow=follow, notice=notice)
    existing = current(files)
    expires_at = time.time() + expires_in if expires_in is not None else None
    if expires_at is None and existing is not None and isinstance(existing.get("expiresAt"), int):
        expires_at = existing["expiresAt"] / 1000
    answer = _call("/api/publish", {"sessionId": files.session_id, "transcript": str(files.transcript.resolve()),
                                    "secret": existing["secret"] if existing else None,
                                    "expiresAt": int(expires_at * 1000) if expires_at is not None else None})
    url, secret = answer.get("url"), answer.get("secret")
    if not isinstance(url, str) or not isinstance(secret, str):
        raise CommandcodeError("the share server gave no link", hint="restart it with `commandcode share serve`")
    write_share_file(files, url, secret, expires_at)
    return url


def unpublish(files: SessionFiles, project: ProjectContext | None = None) -> bool:
    """Revokes the session's share (on the team service `project`'s settings name, when it is
    there) and removes `<id>.share.json`; False when it had none.

    Raises:
        CommandcodeError: the server is not running (the file is kept, so the share can still be revoked).
    """
    existing = read_share_file(files)
    if existing is None:
        return False
    if isinstance(existing.get("shareId"), str):
        from .team import unpublish_team

        unpublish_team(files, existing, project)
        return True
    _call("/api/unpublish", {"sessionId": files.session_id, "secret": existing["secret"]})
    remove_share_file(files)
    return True


def rearm(files: SessionFiles, notice: Notice | None = None, project: ProjectContext | None = None) -> str | None:
    """For a shell resuming a session: when `<id>.share.json` records a live share, publishes it
    again with its secret (a server that lost it serves it again) and returns a notice; None
    when the session is not shared. Never raises: a share server that is down is the notice."""
    shared = current(files)
    if shared is None:
        return None
    if isinstance(shared.get("shareId"), str):  # on a team service: re-armed in the background
        _rearm_team(files, shared, notice, project)
        return f"this session is shared live at {shared['url']}"
    try:
        return f"this session is shared live at {publish(files, follow=True, notice=notice, project=project)}"
    except CommandcodeError as error:
        return f"this session is shared, but its page is not live: {error}"


def follow_headless(files: SessionFiles, notice: Notice | None, project: ProjectContext | None = None) -> None:
    """For a run with no shell (`-p`): a session shared on a team service is re-armed in the
    background, its publisher follows the run's commits, and the exit drain sends what is left
    (within its 3 s; what it cannot send stays in the outbox for the next process). A share on
    the one-machine server needs nothing: that server follows the transcript itself."""
    shared = current(files)
    if shared is not None and isinstance(shared.get("shareId"), str):
        _rearm_team(files, shared, notice, project)


def _rearm_team(files: SessionFiles, shared: dict[str, Any], notice: Notice | None,
                project: ProjectContext | None) -> None:
    """Opens the share again on its service and follows it, in a thread the exit drain waits for
    (and whose share's outbox the exit fills when the thread is not done: `publisher.arming`); a
    failure is one `notice`."""
    import threading

    from .publisher import Publisher, arming

    early = Publisher(files, None, str(shared["shareId"]), notice)

    def rearm_team() -> None:
        from .remote import configured
        from .team import publish_team

        try:
            service = configured(project)
            if service is None or service.server != shared.get("server"):
                raise CommandcodeError(f"it is on the share service {shared.get('server')}, "
                                       "which your settings no longer name")
            publish_team(files, service, expires_in=None, follow=True, notice=notice, early=early)
        except CommandcodeError as error:
            if notice is not None:
                notice(f"this session is shared, but its page is not live: {error}")

    thread = threading.Thread(target=rearm_team, name="share-rearm", daemon=True)
    arming(thread, early)
    thread.start()
