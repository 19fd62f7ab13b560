"""The background publisher of a share on a team service: queue, then send, off the turn's path.

A daemon thread per shared session looks at the transcript (a `stat` every 20 ms: it is
append-only), renders the session's rows when it changed and queues what the page lacks in the
durable outbox (`outbox.py`), then sends the queued rows in order. A turn never waits for it. A
service that is down, slow or refusing for a while costs one notice; the thread retries (0.5 s,
doubling to 5 s) and says once when the page caught up. A share that ended (410) or a refusal
that retrying cannot mend (401, 403, 409) stops the thread with one notice. At exit, the
publishers get a few seconds to drain; what is left stays queued for the next process. A share
still being re-armed at exit (a slow or absent service) has its publisher made up front: the exit
queues the process's commits in its outbox, without the service, so the next process sends them.
"""

from __future__ import annotations

import atexit
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from ..errors import CommandcodeError, ShareServiceError
from ..sessions.files import SessionFiles
from .outbox import Outbox
from .remote import Service

POLL_SECONDS = 0.02
RETRY_FIRST, RETRY_MAX = 0.5, 5.0
EXIT_DRAIN_SECONDS = 3.0
Notice = Callable[[str], None]


def render(files: SessionFiles, cache: Any = None) -> tuple[list[str], int]:
    """The session's html rows (redacted, paths sanitized) and its message count; `cache` (an
    `export.document.RowCache`) reuses what an earlier render of the session made."""
    from ..export.document import render_rows
    from ..sessions.reader import open_session

    rows, messages, _counts = render_rows(open_session(files.transcript, tail=False), cache=cache)
    return rows, messages


def title(files: SessionFiles) -> str:
    from ..export.document import scrubber, title_of
    from ..sessions.reader import open_session

    session = open_session(files.transcript, tail=False)  # the name
    return str(scrubber(session)(title_of(session)))


class Publisher:
    """Queues and sends one share's rows; `start()` runs it as a thread."""

    def __init__(self, files: SessionFiles, service: Service | None, share_id: str, notice: Notice | None = None) -> None:
        """`service` None: it only queues (`sync`) until `publish_team` gives it the service."""
        self.files, self.service, self.share_id = files, service, share_id
        self.outbox = Outbox(share_id)
        self.notice = notice
        self.signature: tuple[int, int] | None = None
        self.failing: str | None = None
        self.stopped: str | None = None
        self.stopping = threading.Event()
        self.thread: threading.Thread | None = None
        from ..export.document import RowCache

        self.cache = RowCache()

    def sync(self, after: int = 0) -> int:
        """Queues what the page lacks (when the transcript changed since the last look)."""
        try:
            info = os.stat(self.files.transcript)
        except OSError:
            return 0
        signature = (info.st_size, info.st_mtime_ns)
        if signature == self.signature and after <= self.outbox.last():
            return 0
        try:
            rows, messages = render(self.files, self.cache)
        except (CommandcodeError, OSError):
            return 0  # mid-write or unreadable for a moment: the next look tries again
        self.signature = signature
        return self.outbox.queue(rows, messages, after=after)

    def drain(self, deadline: float | None = None) -> bool:
        """Sends every queued row; False when the service did not take them (retry later).
        `deadline` (`time.monotonic()`): no request runs past it (default: the service's timeout each)."""
        while not self.stopped and self.service is not None:
            batch = self.outbox.pending()
            if not batch:
                if self.failing is not None:
                    self.failing = None
                    self._say("the share service is back: the page caught up")
                return True
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False  # out of time: the rows stay queued for the next process
            try:
                answer = self.service.call(f"/api/shares/{self.share_id}/rows", {"rows": batch},
                                           **({"timeout": left} if left is not None else {}))
            except ShareServiceError as error:
                if error.status in (0, 429) or error.status >= 500:
                    if self.failing is None:
                        self.failing = str(error)
                        self._say(f"{error}: the page is behind; the rows wait in the outbox and go out when it answers")
                    return False
                self.stopped = str(error)
                self._say(f"the share's page no longer updates: {error}")
                return False
            last = answer.get("last")
            self.outbox.acknowledge(last if isinstance(last, int) else batch[-1]["seq"])
        return False

    def _say(self, text: str) -> None:
        if self.notice is not None:
            try:
                self.notice(text)
            except Exception:
                pass

    def run(self) -> None:
        delay = RETRY_FIRST
        while not self.stopping.is_set() and not self.stopped:
            self.sync()
            if self.drain():
                delay = RETRY_FIRST
                self.stopping.wait(POLL_SECONDS)
            else:
                self.stopping.wait(delay)
                delay = min(delay * 2, RETRY_MAX)

    def start(self) -> None:
        self.thread = threading.Thread(target=self.run, name=f"share-publish-{self.share_id}", daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.stopping.set()


_running: dict[str, Publisher] = {}
_arming: list[tuple[threading.Thread, Publisher | None]] = []
_lock = threading.Lock()
_registered = False


def _at_exit() -> None:
    drain_all(EXIT_DRAIN_SECONDS)


def _register_exit() -> None:
    """One exit handler for the process (called with `_lock` held)."""
    global _registered
    if not _registered:
        _registered = True
        atexit.register(_at_exit)


def arming(thread: threading.Thread, early: Publisher | None = None) -> None:
    """`thread` is opening a share that it will `follow`: the exit drain waits for it (within its
    seconds), so a process that exits soon after (a `-p` run) still sends what it committed.
    `early`: the share's publisher, made before the service answered; when the thread has not
    followed it by the exit (still waiting, or failed), the exit queues the commits through it."""
    with _lock:
        _register_exit()
        _arming.append((thread, early))


def follow(publisher: Publisher) -> None:
    """Keeps `publisher` running for its session (replacing an older one) until exit or `unfollow`."""
    with _lock:
        _register_exit()
        old = _running.pop(publisher.files.session_id, None)
        _running[publisher.files.session_id] = publisher
    if old is not None:
        old.stop()
    publisher.start()


def unfollow(session_id: str) -> None:
    with _lock:
        publisher = _running.pop(session_id, None)
    if publisher is not None:
        publisher.stop()


def drain_all(seconds: float) -> None:
    """At exit: a last look and send by each publisher, for at most `seconds` in all (a share
    still being opened is waited for within them)."""
    deadline = time.monotonic() + seconds
    with _lock:
        arming_now = list(_arming)
    for thread, _early in arming_now:
        thread.join(max(0.0, deadline - time.monotonic()))
    with _lock:
        publishers = list(_running.values())
    for _thread, early in arming_now:
        if early is not None and not early.stopped and all(early is not publisher for publisher in publishers):
            early.sync()  # not re-armed in time: this process's commits wait in the outbox, durably
    for publisher in publishers:
        publisher.stop()
        if publisher.thread is not None:
            publisher.thread.join(max(0.0, deadline - time.monotonic()))
    for publisher in publishers:
        if time.monotonic() < deadline and not publisher.stopped and publisher.failing is None:
            publisher.sync()
            publisher.drain(deadline)
