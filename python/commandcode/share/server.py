"""The share server (`commandcode share serve`): live, read-only pages of shared sessions.

A stdlib `ThreadingHTTPServer` (dependencies.md: 35-48 ms to import, two chromium pages updated
in 184 ms; nothing else measured better for one machine). It binds 127.0.0.1 unless `--host`
names another address. Every request's `Host` header must name the server (421 otherwise; a
wildcard bind accepts any name), and every page needs its share's secret (`?secret=`), so a
link that leaks without its secret shows nothing.

- `GET /s/<id>?secret=S` — the session's html page (as `commandcode export` renders it, with
  secrets redacted and paths sanitized) with a small script that follows `…/events`;
- `GET /s/<id>/events?secret=S` — server-sent events: `reset` (every row) on connect, then
  `append` (the new rows) or `reset` after each commit, and `end` when the share is revoked, expires
  or its session is deleted;
- `POST /api/publish`, `/api/unpublish`, `GET /api/status` — the control API the CLI and the
  shell use, with the bearer token of `server.json` (a private file, 0600).

How commits reach the page: the server watches each shared transcript (a `stat` every 50 ms:
size and mtime; the transcript is append-only), re-renders the session's context when it
changed and wakes the streams. Any process that commits to the session (a shell, `-p -r`, a
resume days later) is followed without telling the server anything; a restarted server reloads
its shares from `shares.json`.

A client that hangs up early is not reported (`ShareServer.handle_error`); any other failed
request is one line on the server's stderr.
"""

from __future__ import annotations

import ipaddress
import json
import os
import secrets
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ..errors import CommandcodeError
from ..sharing.state import expired, read_json, registry_file, server_file, write_json
from .httpbase import QuietHandler, report_failed_request

POLL_SECONDS = 0.05
KEEPALIVE_SECONDS = 15.0
LIVE_SCRIPT = """(function () {
  var main = document.getElementById('transcript'), status = document.getElementById('live-status');
  var source = new EventSource(location.pathname.replace(/\\/$/, '') + '/events' + location.search);
  function count(n) { var dd = document.querySelector('dd[data-field="messages"]'); if (dd) { dd.textContent = String(n); } }
  source.addEventListener('reset', function (e) { var d = JSON.parse(e.data); main.innerHTML = d.rows.join(''); count(d.messages); });
  source.addEventListener('append', function (e) { var d = JSON.parse(e.data); main.insertAdjacentHTML('beforeend', d.rows.join('')); count(d.messages); });
  source.addEventListener('end', function (e) { status.textContent = 'This share has ended: ' + JSON.parse(e.data).reason + '.'; source.close(); });
})();"""


class Share:
    """One published session: its transcript, secret, expiry, and the rows its page shows now."""

    def __init__(self, session_id: str, transcript: str, secret: str, expires_at: int | None) -> None:
        self.session_id, self.transcript, self.secret, self.expires_at = session_id, transcript, secret, expires_at
        self.rows: list[str] = []
        self.messages = 0
        self.version = 0
        self.signature: tuple[int, int] | None = None
        self.ended: str | None = None
        self.changed = threading.Condition()

    def record(self) -> dict[str, Any]:
        return {"transcript": self.transcript, "secret": self.secret, "expiresAt": self.expires_at}

    def refresh(self) -> None:
        """Re-renders the rows when the transcript changed (or ends the share when it is gone)."""
        try:
            info = os.stat(self.transcript)
        except FileNotFoundError:
            self.end("the session was deleted")
            return
        except OSError:
            return
        signature = (info.st_size, info.st_mtime_ns)
        if signature == self.signature:
            return
        from ..export.document import render_rows
        from ..sessions.reader import open_session

        try:
            rows, messages, _counts = render_rows(open_session(self.transcript, tail=False))
        except (CommandcodeError, OSError):
            return  # mid-write or unreadable for a moment: the next look tries again
        with self.changed:
            self.signature, self.rows, self.messages = signature, rows, messages
            self.version += 1
            self.changed.notify_all()

    def end(self, reason: str) -> None:
        with self.changed:
            if self.ended is None:
                self.ended = reason
            self.changed.notify_all()


class LocalShares:
    """Every share of this one-machine server, their persistence and the watcher thread (the team
    service's replica holds its own live shares: `share.service.hub.Hub`)."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.shares: dict[str, Share] = {}
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        loaded = read_json(registry_file())
        for session_id, record in (loaded.items() if isinstance(loaded, dict) else ()):
            if isinstance(record, dict) and isinstance(record.get("transcript"), str) \
                    and isinstance(record.get("secret"), str) and not expired(record.get("expiresAt")):
                self.shares[session_id] = Share(session_id, record["transcript"], record["secret"], record.get("expiresAt"))

    def url(self, share: Share) -> str:
        return f"{self.base_url}/s/{share.session_id}?secret={share.secret}"

    def _save(self) -> None:
        write_json(registry_file(), {key: share.record() for key, share in self.shares.items()})

    def publish(self, session_id: str, transcript: str, secret: str | None, expires_at: int | None) -> Share:
        with self.lock:
            old = self.shares.get(session_id)
            share = Share(session_id, transcript, secret or (old.secret if old else secrets.token_urlsafe(24)), expires_at)
            if old is not None and old.secret != share.secret:
                old.end("the share was replaced")
            if old is not None and old.secret == share.secret:
                old.expires_at, share = expires_at, old
            self.shares[session_id] = share
            self._save()
        share.refresh()
        return share

    def remove(self, session_id: str, reason: str) -> bool:
        with self.lock:
            share = self.shares.pop(session_id, None)
            if share is not None:
                self._save()
        if share is not None:
            share.end(reason)
        return share is not None

    def get(self, session_id: str) -> Share | None:
        with self.lock:
            return self.shares.get(session_id)

    def watch(self) -> None:
        while not self.stopping.wait(POLL_SECONDS):
            with self.lock:
                current = list(self.shares.values())
            for share in current:
                if expired(share.expires_at):
                    self.remove(share.session_id, "the share expired")
                    continue
                share.refresh()
                if share.ended is not None:
                    self.remove(share.session_id, share.ended)


class Handler(QuietHandler):
    server: ShareServer

    def _host_ok(self) -> bool:
        host = (self.headers.get("Host") or "").strip().lower()
        if host in self.server.allowed_hosts or self.server.any_host:
            return True
        self._send(421, b"misdirected request: this server does not answer for that host\n")
        return False

    def _share(self, session_id: str, query: dict[str, list[str]]) -> Share | None:
        share = self.server.shares.get(session_id)
        given = (query.get("secret") or [""])[0]
        if share is None or share.ended is not None:
            self._send(404, b"no such share (it may have been revoked, expired or deleted)\n")
            return None
        if not secrets.compare_digest(given.encode(), share.secret.encode()):
            self._send(403, b"this share needs its secret: open the full link\n")
            return None
        return share

    def do_GET(self) -> None:
        if not self._host_ok():
            return
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        segments = [segment for segment in parts.path.split("/") if segment]
        if segments == ["api", "status"]:
            if self._authorized():
                self._json(200, {"shares": sorted(self.server.shares.shares), "pid": os.getpid()})
            return
        if len(segments) in (2, 3) and segments[0] == "s" and (len(segments) == 2 or segments[2] == "events"):
            share = self._share(segments[1], query)
            if share is None:
                return
            if len(segments) == 3:
                self._stream(share)
            else:
                self._page(share)
            return
        self._send(404, b"not found\n")

    def _page(self, share: Share) -> None:
        from ..export.document import render_text
        from ..sessions.reader import open_session

        try:
            text, _result = render_text(open_session(share.transcript, tail=False), "html", live_script=LIVE_SCRIPT)
        except (CommandcodeError, OSError) as error:
            self._send(503, f"the session cannot be read right now: {error}\n".encode())
            return
        self._send(200, text.encode("utf-8", "surrogateescape"), "text/html; charset=utf-8")

    def _event(self, name: str, value: Any) -> None:
        self.wfile.write(f"event: {name}\ndata: {json.dumps(value)}\n\n".encode())
        self.wfile.flush()

    def _stream(self, share: Share) -> None:
        self._start_events()
        try:
            with share.changed:
                sent, version = list(share.rows), share.version
                messages, ended = share.messages, share.ended
            self._event("reset", {"rows": sent, "messages": messages})
            while ended is None and not self.server.shares.stopping.is_set():
                seen = version
                with share.changed:
                    share.changed.wait_for(lambda: share.version != seen or share.ended is not None,  # noqa: B023
                                           timeout=KEEPALIVE_SECONDS)
                    rows, version, messages, ended = list(share.rows), share.version, share.messages, share.ended
                if rows == sent:
                    self.wfile.write(b": keep-alive\n\n")
                    self.wfile.flush()
                elif rows[: len(sent)] == sent:
                    self._event("append", {"rows": rows[len(sent):], "messages": messages})
                else:
                    self._event("reset", {"rows": rows, "messages": messages})
                sent = rows
            self._event("end", {"reason": ended or "the share server stopped"})
        except OSError:
            return  # the reader went away mid-stream: only this stream ends

    def _authorized(self) -> bool:
        given = (self.headers.get("Authorization") or "").removeprefix("Bearer ").strip()
        if secrets.compare_digest(given.encode(), self.server.token.encode()):
            return True
        self._json(401, {"error": "wrong or missing control token"})
        return False

    def do_POST(self) -> None:
        if not self._host_ok() or not self._authorized():
            return
        try:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(min(length, 1 << 20)) or b"{}")
        except ValueError:
            self._json(400, {"error": "the body is not JSON"})
            return
        path = urlsplit(self.path).path
        session_id = body.get("sessionId") if isinstance(body, dict) else None
        if not isinstance(session_id, str) or not session_id:
            self._json(400, {"error": "sessionId is missing"})
            return
        if path == "/api/publish":
            transcript = body.get("transcript")
            if not isinstance(transcript, str) or not os.path.isabs(transcript) or not os.path.isfile(transcript):
                self._json(400, {"error": "transcript is not a session file"})
                return
            secret, expires_at = body.get("secret"), body.get("expiresAt")
            share = self.server.shares.publish(session_id, transcript, secret if isinstance(secret, str) and secret else None,
                                            expires_at if isinstance(expires_at, int) else None)
            self._json(200, {"url": self.server.shares.url(share), "secret": share.secret, "messages": share.messages})
        elif path == "/api/unpublish":
            known, given = self.server.shares.get(session_id), body.get("secret")
            if known is not None and not (isinstance(given, str) and secrets.compare_digest(given.encode(),
                                                                                            known.secret.encode())):
                self._json(403, {"error": "the share's secret does not match the one this server has"})
                return
            self._json(200, {"removed": self.server.shares.remove(session_id, "the share was revoked")})
        else:
            self._json(404, {"error": "no such endpoint"})


class ShareServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = False

    def __init__(self, host: str, port: int) -> None:
        if ":" in host:
            import socket

            self.address_family = socket.AF_INET6
        super().__init__((host, port), Handler)
        self.host = host
        self.port = int(self.server_address[1])
        self.token = secrets.token_urlsafe(32)
        self.any_host = _is_wildcard(host)
        shown = _shown_host(host)
        names = {shown, host} | ({"127.0.0.1", "localhost", "[::1]"} if _is_loopback(host) else set())
        self.allowed_hosts = {f"{name}:{self.port}".lower() for name in names}
        self.shares = LocalShares(f"http://{shown}:{self.port}")

    def handle_error(self, request: Any, client_address: Any) -> None:
        """One line on stderr, or nothing for a client that hung up early; the server keeps serving."""
        report_failed_request("share server", client_address)

    def run(self) -> None:
        """Serves until interrupted; `server.json` says where, while it does."""
        write_json(server_file(), {"host": self.host, "port": self.port, "url": self.shares.base_url,
                                   "token": self.token, "pid": os.getpid()})
        watcher = threading.Thread(target=self.shares.watch, name="share-watch", daemon=True)
        watcher.start()
        try:
            self.serve_forever(poll_interval=0.2)
        finally:
            self.shares.stopping.set()
            for share in list(self.shares.shares.values()):
                share.end("the share server stopped")
            current = read_json(server_file())
            if isinstance(current, dict) and current.get("pid") == os.getpid():
                Path(server_file()).unlink(missing_ok=True)
            self.server_close()


def _is_wildcard(host: str) -> bool:
    return host in ("0.0.0.0", "::", "")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _shown_host(host: str) -> str:
    if _is_wildcard(host):
        import socket

        return socket.gethostname()
    return f"[{host}]" if ":" in host else host
