"""The team share service's HTTP endpoints (`commandcode share serve --store URL`): one replica's
ASGI application, served by uvicorn (`replica.py`; chosen by measurement against the stdlib's
`ThreadingHTTPServer`: benches/bench_share_servers.py). Endpoints:

- `POST /api/shares` (publisher token) `{sessionId, title, expiresAt?, shareId?}` → the share
  (`shareId`, `secret` when new, `last` seq stored); `POST /api/shares/<id>/rows`
  `{rows: [{seq, kind, html, messages}]}` → `{stored, last}` (a replayed row is skipped);
  `POST /api/shares/<id>/revoke`; `GET /api/whoami`.
- `GET /s/<id>?secret=S`: the page the export renders (self-contained, its scripts pinned by
  hash in the Content-Security-Policy) with the rows stored so far; `GET /s/<id>/events?secret=S`:
  server-sent events, one `row` or `reset` per seq (`id:` the seq), from `Last-Event-ID` (or
  `?after=`) on, and `end` when the share is revoked or expires.

Every store call runs in the replica's thread pool (the stores are blocking); the event streams
wait in the event loop on their share's `LiveShare.changed()`. Limits: a body over `max_body` is
413 (unread), a viewer that stops reading is dropped after `send_timeout` (`--send-timeout`, 30 s)
without holding anyone else, a failing store is 503 with one line. Connections per address are capped before any request
is read (`replica.py`); behind a load balancer named by `--trusted-proxy`, each request through it
counts against the client `X-Forwarded-For` names (`clients.py`), 429 past the limit.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar
from urllib.parse import parse_qs

from ...errors import ShareServiceError
from ..httpbase import SAFETY_HEADERS, report_failed_request
from .clients import Clients
from .hub import Hub, LiveShare
from .store import KINDS, Row, SqlStore

KEEPALIVE_SECONDS = 15.0
SEND_TIMEOUT = 30.0
MAX_BODY = 4 << 20
MAX_PER_CLIENT = 256
MAX_ROWS = 10_000
STORE_THREADS = 16
TOO_MANY_TEXT = b"too many open connections from your address\n"
ABORT = "commandcode.abort"  # the scope's key for dropping the connection at once (`replica.py`)
LIVE_SCRIPT = """(function () {
  var main = document.getElementById('transcript'), status = document.getElementById('live-status');
  var marker = document.getElementById('live-seq'), after = marker ? marker.getAttribute('data-seq') : '0';
  if (marker) { marker.remove(); }
  var source = new EventSource(location.pathname.replace(/\\/$/, '') + '/events' + location.search
    + (location.search ? '&' : '?') + 'after=' + encodeURIComponent(after));
  function count(n) { var dd = document.querySelector('dd[data-field="messages"]'); if (dd) { dd.textContent = String(n); } }
  source.addEventListener('row', function (e) { var d = JSON.parse(e.data); main.insertAdjacentHTML('beforeend', d.html); count(d.messages); });
  source.addEventListener('reset', function (e) { main.innerHTML = ''; count(JSON.parse(e.data).messages); });
  source.addEventListener('end', function (e) { status.textContent = 'This share has ended: ' + JSON.parse(e.data).reason + '.'; source.close(); });
})();"""

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
T = TypeVar("T")


class SlowViewer(Exception):
    """A viewer did not take what was sent within the send timeout: its connection is dropped."""


def _shown_rows(rows: list[Row]) -> list[Row]:
    """The rows a page shows: those after the last reset."""
    start = max((index + 1 for index, row in enumerate(rows) if row[1] == "reset"), default=0)
    return rows[start:]


class Request:
    """One request's scope, parsed, and its answer."""

    def __init__(self, scope: Scope, receive: Receive, send: Send, send_timeout: float = SEND_TIMEOUT) -> None:
        self.scope, self.receive, self.send, self.send_timeout = scope, receive, send, send_timeout
        self.method = str(scope["method"])
        self.path = str(scope["path"])
        self.segments = [segment for segment in self.path.split("/") if segment]
        self.query = parse_qs(bytes(scope.get("query_string") or b"").decode("latin-1"))
        self.headers: dict[str, str] = {}
        for name, value in scope.get("headers") or []:
            key = bytes(name).decode("latin-1").lower()
            text = bytes(value).decode("latin-1")
            self.headers[key] = f"{self.headers[key]},{text}" if key in self.headers else text
        self.started = False

    def peer(self) -> str:
        client = self.scope.get("client")
        return str(client[0]) if client else ""

    async def start(self, status: int, content_type: str, length: int | None, *, close: bool = False) -> None:
        headers = [(b"content-type", content_type.encode())]
        if length is not None:
            headers.append((b"content-length", str(length).encode()))
        headers += [(name.lower().encode(), value.encode()) for name, value in SAFETY_HEADERS]
        if close:
            headers.append((b"connection", b"close"))
        self.started = True
        await self.send({"type": "http.response.start", "status": status, "headers": headers})

    async def answer(self, status: int, body: bytes, content_type: str = "text/plain; charset=utf-8", *,
                     close: bool = False) -> None:
        await self.start(status, content_type, len(body), close=close)
        await self.send({"type": "http.response.body", "body": body, "more_body": False})

    async def json(self, status: int, value: Any, *, close: bool = False) -> None:
        await self.answer(status, json.dumps(value).encode(), "application/json", close=close)

    async def error(self, status: int, message: str, *, close: bool = False) -> None:
        if self.path.startswith("/api/"):
            await self.json(status, {"error": message}, close=close)
        else:
            await self.answer(status, (message + "\n").encode(), close=close)

    async def chunk(self, body: bytes, *, more: bool = True) -> None:
        """A part of a streamed answer; `SlowViewer` when the viewer does not take it in time."""
        try:
            await asyncio.wait_for(self.send({"type": "http.response.body", "body": body, "more_body": more}),
                                   self.send_timeout)
        except TimeoutError:
            raise SlowViewer from None

    def abort(self) -> None:
        abort = self.scope.get(ABORT)
        if callable(abort):
            abort()


class ShareApp:
    """The ASGI application of one replica: `store`, the `hub` of shares its viewers follow, the
    per-client `clients` count and the limits (`max_body`, `send_timeout`)."""

    def __init__(self, store: SqlStore, clients: Clients, *, max_body: int = MAX_BODY,
                 send_timeout: float = SEND_TIMEOUT) -> None:
        self.store, self.clients, self.max_body, self.send_timeout = store, clients, max_body, send_timeout
        self.hub = Hub(store)
        self.pool = ThreadPoolExecutor(STORE_THREADS, thread_name_prefix="share-store")

    async def _run(self, function: Callable[..., T], *args: Any) -> T:
        """`function(*args)` (a blocking store call) in the store's threads."""
        return await asyncio.get_running_loop().run_in_executor(self.pool, function, *args)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return  # no lifespan or websocket
        request = Request(scope, receive, send, self.send_timeout)
        client = None
        try:
            peer = request.peer()
            if self.clients.trusted(peer):  # a load balancer: each request counts for its client
                client = self.clients.client_of(peer, [request.headers.get("x-forwarded-for", "")])
                if not self.clients.take(client):
                    client = None
                    await request.answer(429, TOO_MANY_TEXT, close=True)  # its body, if any, is never read
                    return
            await self._route(request)
        except ShareServiceError as error:
            if not request.started:
                await request.error(error.status, str(error), close=error.status == 413)
        except SlowViewer:
            request.abort()
        except Exception as error:  # one line on stderr, never a traceback; the replica serves on
            report_failed_request("share service", scope.get("client"), error)
            if request.started:
                request.abort()
            else:
                await request.error(500, "the share service failed this request", close=True)
        finally:
            if client is not None:
                self.clients.release(client)

    async def _route(self, request: Request) -> None:
        segments = request.segments
        if request.method == "GET":
            if segments == ["healthz"]:
                await request.json(200, {"ok": True})
            elif segments == ["api", "whoami"]:
                await request.json(200, {"user": await self._user(request)})
            elif len(segments) in (2, 3) and segments[0] == "s" and (len(segments) == 2 or segments[2] == "events"):
                live = await self._viewable(segments[1], request.query)
                if len(segments) == 3:
                    await self._stream(request, live)
                else:
                    await self._page(request, live)
            else:
                await request.error(404, "not found")
        elif request.method == "POST":
            await self._post(request)
        else:
            await request.error(405, "only GET and POST are answered")

    # -- viewers -------------------------------------------------------------------------------

    async def _viewable(self, share_id: str, query: dict[str, list[str]]) -> LiveShare:
        live = await self._run(self.hub.get, share_id)
        if live is None:
            raise ShareServiceError("no such share", status=404)
        if not live.record.secret_ok((query.get("secret") or [""])[0]):
            raise ShareServiceError("this share needs its secret: open the full link", status=403)
        await self._run(self.hub.changed, share_id, "info")  # a revocation counts from its commit, on every replica
        ended = live.ended or live.record.ended()
        if ended is not None:
            raise ShareServiceError(f"this share has ended: {ended}", status=410)
        return live

    async def _page(self, request: Request, live: LiveShare) -> None:
        from ...export.html import HtmlRenderer

        with live.lock:
            rows, last = list(live.rows), live.last()
        shown = _shown_rows(rows)
        messages = rows[-1][3] if rows else 0
        renderer = HtmlRenderer(live_script=LIVE_SCRIPT)
        text = (renderer.header(live.record.title, [("Session", live.record.session_id), ("Messages", str(messages))])
                + "".join(row[2] for row in shown) + f'<span id="live-seq" data-seq="{last}" hidden></span>\n'
                + renderer.footer())
        await request.answer(200, text.encode("utf-8", "surrogateescape"), "text/html; charset=utf-8")

    async def _stream(self, request: Request, live: LiveShare) -> None:
        given = request.headers.get("last-event-id") or (request.query.get("after") or [""])[0] or "0"
        if not given.strip().isdigit():
            raise ShareServiceError("Last-Event-ID must be a row number", status=400)
        sent = int(given)
        await request.start(200, "text/event-stream; charset=utf-8", None)
        gone = asyncio.ensure_future(_hang_up(request.receive))
        try:
            await request.chunk(b"retry: 1000\n\n")
            stopping = self.hub.stopping
            while not stopping.is_set():
                events, ended = live.events[sent:], live.ended
                if events:
                    await request.chunk(b"".join(events))
                    sent += len(events)
                    continue
                if ended is not None:
                    await request.chunk(f"event: end\ndata: {json.dumps({'reason': ended})}\n\n".encode(), more=False)
                    return
                done, _ = await asyncio.wait({live.changed(), gone}, timeout=KEEPALIVE_SECONDS,
                                             return_when=asyncio.FIRST_COMPLETED)
                if gone in done:
                    return  # the viewer went away: only this stream ends
                if not done:
                    await request.chunk(b": keep-alive\n\n")
            await request.chunk(b"", more=False)  # the replica is stopping: the viewer resumes elsewhere
        finally:
            gone.cancel()

    # -- publishers ----------------------------------------------------------------------------

    async def _user(self, request: Request) -> str:
        given = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        user = await self._run(self.store.user_for, given) if given else None
        if user is None:
            raise ShareServiceError("wrong or missing publisher token", status=401)
        return user

    async def _body(self, request: Request) -> dict[str, Any]:
        length = request.headers.get("content-length")
        if length is None or not length.strip().isdigit():
            raise ShareServiceError("a publish needs a Content-Length", status=411)
        if int(length) > self.max_body:
            raise ShareServiceError(f"the body is over the service's limit of {self.max_body} bytes", status=413)
        data = bytearray()
        while True:
            message = await request.receive()
            if message["type"] == "http.disconnect":
                raise ConnectionResetError("the publisher hung up")
            data += message.get("body", b"")
            if not message.get("more_body"):
                break
        try:
            body = json.loads(bytes(data))
        except ValueError:
            raise ShareServiceError("the body is not JSON", status=400) from None
        if not isinstance(body, dict):
            raise ShareServiceError("the body is not a JSON object", status=400)
        return body

    async def _post(self, request: Request) -> None:
        segments = request.segments
        user = await self._user(request)
        body = await self._body(request)
        store = self.store
        if segments == ["api", "shares"]:
            session_id, title = body.get("sessionId"), body.get("title", "")
            expires, share_id = body.get("expiresAt"), body.get("shareId")
            if not isinstance(session_id, str) or not session_id or not isinstance(title, str) \
                    or not (expires is None or isinstance(expires, int)) \
                    or not (share_id is None or isinstance(share_id, str)):
                raise ShareServiceError("expected {sessionId, title, expiresAt?, shareId?}", status=400)
            record, secret, last = await self._run(store.open_share, user, session_id, title[:500], expires, share_id)
            await request.json(200, {"shareId": record.id, "secret": secret, "last": last,
                                     "expiresAt": record.expires_ms})
        elif len(segments) == 4 and segments[:2] == ["api", "shares"] and segments[3] == "rows":
            rows = _rows(body)
            stored, last = await self._run(store.append, user, segments[2], rows)
            if stored:
                self.hub.stored(segments[2], rows)  # this replica's viewers need no notification
            await request.json(200, {"stored": stored, "last": last})
        elif len(segments) == 4 and segments[:2] == ["api", "shares"] and segments[3] == "revoke":
            await request.json(200, {"revoked": await self._run(store.revoke, user, segments[2])})
        else:
            await request.error(404, "no such endpoint")

    def close(self) -> None:
        self.hub.stop()
        self.pool.shutdown(wait=False, cancel_futures=True)


async def _hang_up(receive: Receive) -> None:
    """Returns when the viewer's connection closes."""
    while (await receive())["type"] != "http.disconnect":
        pass


def _rows(body: dict[str, Any]) -> list[Row]:
    rows = body.get("rows")
    if not isinstance(rows, list) or not rows or len(rows) > MAX_ROWS:
        raise ShareServiceError(f"expected {{rows: [...]}} with 1 to {MAX_ROWS} rows", status=400)
    checked: list[Row] = []
    for row in rows:
        if not isinstance(row, dict):
            raise ShareServiceError("each row is an object {seq, kind, html, messages}", status=400)
        seq, kind, html, messages = row.get("seq"), row.get("kind"), row.get("html"), row.get("messages", 0)
        if not (isinstance(seq, int) and seq > 0 and kind in KINDS and isinstance(html, str)
                and isinstance(messages, int) and not isinstance(seq, bool)):
            raise ShareServiceError("each row is {seq: n > 0, kind: row|reset, html: text, messages: n}", status=400)
        checked.append((seq, str(kind), html, messages))
    return checked
