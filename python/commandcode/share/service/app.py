"""The team share service over HTTP (`commandcode share serve --store URL`): one replica.

A stdlib `ThreadingHTTPServer`, a thread per connection (measured against uvicorn+starlette for
300 open event streams per replica: benches/bench_share_service.py). Endpoints:

- `POST /api/shares` (publisher token) `{sessionId, title, expiresAt?, shareId?}` → the share
  (`shareId`, `secret` when new, `last` seq stored); `POST /api/shares/<id>/rows`
  `{rows: [{seq, kind, html, messages}]}` → `{stored, last}` (a replayed row is skipped);
  `POST /api/shares/<id>/revoke`; `GET /api/whoami`.
- `GET /s/<id>?secret=S`: the page the export renders (self-contained, its scripts pinned by
  hash in the Content-Security-Policy) with the rows stored so far; `GET /s/<id>/events?secret=S`:
  server-sent events, one `row` or `reset` per seq (`id:` the seq), from `Last-Event-ID` (or
  `?after=`) on, and `end` when the share is revoked or expires.

Limits: a body over `max_body` is 413, more than `max_per_client` open connections from one
address get 429 (answered without a thread), a viewer that stops reading is dropped after
`SEND_TIMEOUT` without holding anyone else. A failing store is 503 with one line. Behind a load
balancer named by `--trusted-proxy`, its connections are not capped; each request through it
counts against the client `X-Forwarded-For` names (`clients.py`), 429 past the limit.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Sequence
from http.server import ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ...errors import ShareServiceError
from ..httpbase import QuietHandler, report_failed_request
from .clients import Clients, Network
from .hub import Hub, LiveShare
from .store import KINDS, Row, SqlStore

KEEPALIVE_SECONDS = 15.0
SEND_TIMEOUT = 30.0
MAX_BODY = 4 << 20
MAX_PER_CLIENT = 256
MAX_ROWS = 10_000
_TOO_MANY_TEXT = b"too many open connections from your address\n"
TOO_MANY = (b"HTTP/1.1 429 Too Many Requests\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: "
            + str(len(_TOO_MANY_TEXT)).encode() + b"\r\nConnection: close\r\n\r\n" + _TOO_MANY_TEXT)
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


def _shown_rows(rows: list[Row]) -> list[Row]:
    """The rows a page shows: those after the last reset."""
    start = max((index + 1 for index, row in enumerate(rows) if row[1] == "reset"), default=0)
    return rows[start:]


class Handler(QuietHandler):
    server: ShareService
    forwarded_for: str | None = None  # through a trusted proxy: the client this request counts against

    def parse_request(self) -> bool:
        if not super().parse_request():
            return False
        clients, peer = self.server.clients, str(self.client_address[0])
        if not clients.trusted(peer):
            return True  # counted per connection already
        client = clients.client_of(peer, self.headers.get_all("X-Forwarded-For") or [])
        if not clients.take(client):
            self.wfile.write(TOO_MANY)  # and the connection closes: its body, if any, is never read
            self.close_connection = True
            return False
        self.forwarded_for = client
        return True

    def handle_one_request(self) -> None:
        try:
            super().handle_one_request()
        finally:
            if self.forwarded_for is not None:
                self.server.clients.release(self.forwarded_for)
                self.forwarded_for = None

    def _error(self, status: int, message: str) -> None:
        if self.path.startswith("/api/"):
            self._json(status, {"error": message})
        else:
            self._send(status, (message + "\n").encode())

    # -- viewers -------------------------------------------------------------------------------

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        segments = [segment for segment in parts.path.split("/") if segment]
        try:
            if segments == ["healthz"]:
                self._json(200, {"ok": True})
            elif segments == ["api", "whoami"]:
                self._json(200, {"user": self._user()})
            elif len(segments) in (2, 3) and segments[0] == "s" and (len(segments) == 2 or segments[2] == "events"):
                live = self._viewable(segments[1], parse_qs(parts.query))
                if len(segments) == 3:
                    self._stream(live, parse_qs(parts.query))
                else:
                    self._page(live)
            else:
                self._error(404, "not found")
        except ShareServiceError as error:
            self._error(error.status, str(error))

    def _viewable(self, share_id: str, query: dict[str, list[str]]) -> LiveShare:
        live = self.server.hub.get(share_id)
        if live is None:
            raise ShareServiceError("no such share", status=404)
        if not live.record.secret_ok((query.get("secret") or [""])[0]):
            raise ShareServiceError("this share needs its secret: open the full link", status=403)
        self.server.hub.changed(share_id, "info")  # a revocation counts from its commit, on every replica
        ended = live.ended or live.record.ended()
        if ended is not None:
            raise ShareServiceError(f"this share has ended: {ended}", status=410)
        return live

    def _page(self, live: LiveShare) -> None:
        from ...export.html import HtmlRenderer

        with live.changed:
            rows, last = list(live.rows), live.last()
        shown = _shown_rows(rows)
        messages = rows[-1][3] if rows else 0
        renderer = HtmlRenderer(live_script=LIVE_SCRIPT)
        text = (renderer.header(live.record.title, [("Session", live.record.session_id), ("Messages", str(messages))])
                + "".join(row[2] for row in shown) + f'<span id="live-seq" data-seq="{last}" hidden></span>\n'
                + renderer.footer())
        self._send(200, text.encode("utf-8", "surrogateescape"), "text/html; charset=utf-8")

    def _stream(self, live: LiveShare, query: dict[str, list[str]]) -> None:
        given = self.headers.get("Last-Event-ID") or (query.get("after") or [""])[0] or "0"
        if not given.strip().isdigit():
            raise ShareServiceError("Last-Event-ID must be a row number", status=400)
        sent = int(given)
        self._start_events()
        self.connection.settimeout(SEND_TIMEOUT)
        stopping = self.server.hub.stopping
        try:
            self.wfile.write(b"retry: 1000\n\n")
            self.wfile.flush()
            while not stopping.is_set():
                with live.changed:
                    live.changed.wait_for(lambda: live.last() > sent or live.ended is not None or stopping.is_set(),  # noqa: B023
                                          timeout=KEEPALIVE_SECONDS)
                    rows, ended = live.rows[sent:], live.ended
                if rows:
                    self.wfile.write("".join(
                        f"id: {seq}\nevent: {kind}\ndata: {json.dumps({'html': html, 'messages': messages})}\n\n"
                        for seq, kind, html, messages in rows).encode("utf-8", "surrogateescape"))
                    sent = rows[-1][0]
                elif ended is None:
                    self.wfile.write(b": keep-alive\n\n")
                if ended is not None and not rows:
                    self.wfile.write(f"event: end\ndata: {json.dumps({'reason': ended})}\n\n".encode())
                    self.wfile.flush()
                    return
                self.wfile.flush()
        except OSError:
            return  # the viewer went away or stopped reading: only this stream ends

    # -- publishers ----------------------------------------------------------------------------

    def _user(self) -> str:
        given = (self.headers.get("Authorization") or "").removeprefix("Bearer ").strip()
        user = self.server.store.user_for(given) if given else None
        if user is None:
            raise ShareServiceError("wrong or missing publisher token", status=401)
        return user

    def _body(self) -> dict[str, Any]:
        length = self.headers.get("Content-Length")
        if length is None or not length.strip().isdigit():
            raise ShareServiceError("a publish needs a Content-Length", status=411)
        if int(length) > self.server.max_body:
            self.close_connection = True
            raise ShareServiceError(f"the body is over the service's limit of {self.server.max_body} bytes", status=413)
        try:
            body = json.loads(self.rfile.read(int(length)))
        except ValueError:
            raise ShareServiceError("the body is not JSON", status=400) from None
        if not isinstance(body, dict):
            raise ShareServiceError("the body is not a JSON object", status=400)
        return body

    def do_POST(self) -> None:
        segments = [segment for segment in urlsplit(self.path).path.split("/") if segment]
        try:
            user = self._user()
            body = self._body()
            store = self.server.store
            if segments == ["api", "shares"]:
                session_id, title = body.get("sessionId"), body.get("title", "")
                expires, share_id = body.get("expiresAt"), body.get("shareId")
                if not isinstance(session_id, str) or not session_id or not isinstance(title, str) \
                        or not (expires is None or isinstance(expires, int)) \
                        or not (share_id is None or isinstance(share_id, str)):
                    raise ShareServiceError("expected {sessionId, title, expiresAt?, shareId?}", status=400)
                record, secret, last = store.open_share(user, session_id, title[:500], expires, share_id)
                self._json(200, {"shareId": record.id, "secret": secret, "last": last, "expiresAt": record.expires_ms})
            elif len(segments) == 4 and segments[:2] == ["api", "shares"] and segments[3] == "rows":
                stored, last = store.append(user, segments[2], _rows(body))
                self._json(200, {"stored": stored, "last": last})
                if stored:
                    self.server.hub.changed(segments[2], str(last))  # this replica's viewers need no notification
            elif len(segments) == 4 and segments[:2] == ["api", "shares"] and segments[3] == "revoke":
                self._json(200, {"revoked": store.revoke(user, segments[2])})
            else:
                self._error(404, "no such endpoint")
        except ShareServiceError as error:
            self._error(error.status, str(error))


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


class ShareService(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 1024

    def __init__(self, store: SqlStore, host: str, port: int, *, max_body: int = MAX_BODY,
                 max_per_client: int = MAX_PER_CLIENT, trusted_proxies: Sequence[Network] = ()) -> None:
        if ":" in host:
            self.address_family = socket.AF_INET6
        super().__init__((host, port), Handler)
        self.store, self.hub = store, Hub(store)
        self.port = int(self.server_address[1])
        self.max_body = max_body
        self.clients = Clients(max_per_client, trusted_proxies)

    def process_request(self, request: Any, client_address: Any) -> None:
        address = str(client_address[0])
        if self.clients.trusted(address):  # a load balancer: each request counts for its client instead
            super().process_request(request, client_address)
            return
        if not self.clients.take(address):
            try:
                request.settimeout(1.0)
                request.sendall(TOO_MANY)
            except OSError:
                pass
            self.shutdown_request(request)
            return
        super().process_request(request, client_address)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            address = str(client_address[0])
            if not self.clients.trusted(address):
                self.clients.release(address)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """One line on stderr, or nothing for a client that hung up early; the server keeps serving."""
        report_failed_request("share service", client_address)

    def run(self) -> None:
        listener = threading.Thread(target=self.hub.run, name="share-listen", daemon=True)
        listener.start()
        try:
            self.serve_forever(poll_interval=0.2)
        finally:
            self.hub.stop()
            self.server_close()
            self.store.close()
