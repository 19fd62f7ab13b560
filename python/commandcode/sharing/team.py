"""A share on a team share service: opening (or re-arming) it, revoking it.

Opening asks the service for the user's share of the session (the one `<id>.share.json` names,
or a new one with a new secret, which only this file keeps: the service holds its hash), queues
the session's rows in the outbox and sends them before returning when the service answers, so
the link shows the session at once; a publisher thread then follows later commits when asked.
"""

from __future__ import annotations

import time

from ..errors import CommandcodeError, ShareServiceError
from ..sessions.files import SessionFiles
from .outbox import Outbox
from .publisher import Notice, Publisher, title, unfollow
from .publisher import follow as follow_share
from .remote import Service, configured
from .state import expired, read_share_file, remove_share_file, write_share_file

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ..config.context import ProjectContext


def publish_team(files: SessionFiles, service: Service, *, expires_in: float | None, follow: bool,
                 notice: Notice | None, early: Publisher | None = None) -> str:
    """The link of the session's share on `service` (its rows queued and, when it answers, sent).
    `early`: the publisher a re-arm made up front for the share it knew (used when the service
    answers with that share; else marked stopped, so the exit does not queue into it).

    Raises:
        ShareServiceError: the service refused or does not answer (nothing was shared).
    """
    existing = read_share_file(files)
    known = existing if existing is not None and existing.get("server") == service.server \
        and isinstance(existing.get("shareId"), str) and not expired(existing.get("expiresAt")) else None
    expires_at = time.time() + expires_in if expires_in is not None else None
    answer = service.call("/api/shares", {"sessionId": files.session_id, "title": title(files),
                                          "expiresAt": int(expires_at * 1000) if expires_at is not None else None,
                                          "shareId": known["shareId"] if known else None})
    share_id, secret, last = answer.get("shareId"), answer.get("secret"), answer.get("last")
    if secret is None and known is not None and share_id == known["shareId"]:
        secret = known["secret"]
    if not isinstance(share_id, str) or not isinstance(secret, str) or not isinstance(last, int):
        raise ShareServiceError("the share service gave no share", status=502)
    expires_ms = answer.get("expiresAt")
    url = service.link(share_id, secret)
    write_share_file(files, url, secret, expires_ms / 1000 if isinstance(expires_ms, int) else None,
                     {"shareId": share_id, "server": service.server})
    if early is not None and early.share_id == share_id:
        publisher, early.service, early.notice = early, service, notice
    else:
        if early is not None:
            early.stopped = "the service gave another share"
        publisher = Publisher(files, service, share_id, notice)
    publisher.sync(after=last)
    publisher.drain()
    if follow and not publisher.stopped:
        follow_share(publisher)
    return url


def unpublish_team(files: SessionFiles, existing: dict[str, object], project: ProjectContext | None = None) -> None:
    """Revokes the share on its service; removes `<id>.share.json` and the share's outbox.

    Raises:
        CommandcodeError: `project`'s settings (the current directory's without one) name no
            service (or another one), or it refused or does not answer (the files are kept, so
            the share can still be revoked).
    """
    service = configured(project)
    server, share_id = existing.get("server"), str(existing.get("shareId"))
    if service is None or service.server != server:
        raise CommandcodeError(f"this share is on the share service {server}, which your settings no longer name",
                               hint='set share.server back to it to revoke the share')
    try:
        service.call(f"/api/shares/{share_id}/revoke", {})
    except ShareServiceError as error:
        if error.status not in (404, 410):
            raise
    unfollow(files.session_id)
    Outbox(share_id).remove()
    remove_share_file(files)
