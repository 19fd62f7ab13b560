"""A stub OpenAI-compatible chat-completions server on 127.0.0.1, for tests that talk to a real
HTTP provider (no other address is ever used).

    with OpenAIStub() as stub:
        stub.reply(text("Hello ", "world"), usage=(1234, 56, 100))   # streamed deltas, usage last
        stub.reply(tool_calls(("call_1", "write_file", {"file_path": "a.txt", "content": "x"})))
        stub.error(429, retry_after="0")                            # then the next reply
        write_providers(home, stub.url)                            # providers.json for `local/...`
        ... run commandcode with --model local/stub-model ...
        stub.requests[0].body["messages"]                          # what the client sent

Replies are served in the order queued; when the queue is empty the stub answers with the text
`Hello from stub. You said: <last user text>`. A `Reply` can stream text deltas, tool-call
deltas (split across chunks, several calls at once), reasoning deltas, a usage chunk, and can
misbehave: an HTTP error with a JSON body and headers, a stream cut before it finishes, raw
arguments that are not JSON, a non-streamed JSON completion, or a hang until the test releases it
(`stub.release.set()`), for timeout and interruption tests.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

STUB_KEY = "sk-stub-key-do-not-leak-42"  # what the `openai_stub` fixture puts in $STUB_API_KEY


@dataclass
class Reply:
    """One scripted answer to one POST /chat/completions."""

    text_deltas: list[str] = field(default_factory=list)
    reasoning_deltas: list[str] = field(default_factory=list)
    tool_calls: list[tuple[str, str, str]] = field(default_factory=list)  # (id, name, raw arguments JSON text)
    usage: tuple[int, int, int] | None = (1234, 56, 100)  # prompt, completion, cached
    status: int = 200
    error_body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    cut_after: int | None = None  # chunks sent before the connection is dropped without [DONE]
    hang: bool = False  # wait for `stub.release` before answering at all
    hang_after_first_chunk: bool = False  # send one chunk, then wait for `stub.release`
    not_streamed: bool = False
    finish_reason: str | None = None


def text(*deltas: str, usage: tuple[int, int, int] | None = (1234, 56, 100)) -> Reply:
    """A streamed text reply in these deltas."""
    return Reply(text_deltas=list(deltas), usage=usage)


def tool_calls(*calls: tuple[str, str, Any], text_first: str = "") -> Reply:
    """A reply calling tools (id, name, input); an input that is a `str` is sent as raw arguments
    text (so a test can send JSON that does not parse)."""
    raw = [(call_id, name, arguments if isinstance(arguments, str) else json.dumps(arguments))
           for call_id, name, arguments in calls]
    return Reply(text_deltas=[text_first] if text_first else [], tool_calls=raw)


@dataclass
class Request:
    """One request the stub received."""

    path: str
    headers: dict[str, str]
    body: Any


def _chunk(delta: dict[str, Any], finish: str | None = None, usage: dict[str, Any] | None = None) -> bytes:
    payload: dict[str, Any] = {"id": "chatcmpl-stub", "object": "chat.completion.chunk", "model": "stub",
                               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}] if delta or finish else []}
    if usage is not None:
        payload["usage"] = usage
    return b"data: " + json.dumps(payload).encode() + b"\n\n"


def _usage(usage: tuple[int, int, int]) -> dict[str, Any]:
    prompt, completion, cached = usage
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
            "prompt_tokens_details": {"cached_tokens": cached}}


def _chunks(reply: Reply) -> Iterator[bytes]:
    yield _chunk({"role": "assistant", "content": ""})
    for delta in reply.reasoning_deltas:
        yield _chunk({"reasoning_content": delta})
    for delta in reply.text_deltas:
        yield _chunk({"content": delta})
    for index, (call_id, name, arguments) in enumerate(reply.tool_calls):
        yield _chunk({"tool_calls": [{"index": index, "id": call_id, "type": "function",
                                      "function": {"name": name, "arguments": ""}}]})
        middle = max(1, len(arguments) // 2)
        for part in (arguments[:middle], arguments[middle:]):  # arguments arrive in pieces
            if part:
                yield _chunk({"tool_calls": [{"index": index, "function": {"arguments": part}}]})
    finish = reply.finish_reason or ("tool_calls" if reply.tool_calls else "stop")
    yield _chunk({}, finish=finish)
    if reply.usage is not None:
        yield _chunk({}, usage=_usage(reply.usage))
    yield b"data: [DONE]\n\n"


def start_event_stream(handler: BaseHTTPRequestHandler) -> None:
    """A 200 `text/event-stream` response whose connection closes when the stream ends."""
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.send_header("Cache-Control", "no-cache")
    handler.send_header("Connection", "close")
    handler.end_headers()
    handler.close_connection = True


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up (a timeout or an interrupt under test) is expected, not news."""
        import sys

        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


class OpenAIStub:
    """The server; a context manager that starts it on 127.0.0.1 and a free port."""

    def __init__(self) -> None:
        self.queue: list[Reply] = []
        self.requests: list[Request] = []
        self.release = threading.Event()
        self.lock = threading.Lock()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                del format, args

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw.decode(errors="replace")
                with stub.lock:
                    stub.requests.append(Request(self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                    reply = stub.queue.pop(0) if stub.queue else stub.default_reply(body)
                stub.serve(self, reply)

            def do_GET(self) -> None:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = _QuietServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        """The base URL (`http://127.0.0.1:PORT/v1`)."""
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> OpenAIStub:
        self.thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()

    def reply(self, reply: Reply, **changes: Any) -> None:
        """Queues a reply (keyword arguments change its fields)."""
        for key, value in changes.items():
            setattr(reply, key, value)
        self.queue.append(reply)

    def error(self, status: int, message: str = "", *, retry_after: str | None = None, code: str | None = None) -> None:
        """Queues an HTTP error with an OpenAI-style JSON body."""
        headers = {"Retry-After": retry_after} if retry_after is not None else {}
        body = {"error": {"message": message or f"stub error {status}", "type": "stub", "code": code}}
        self.queue.append(Reply(status=status, error_body=body, headers=headers))

    @staticmethod
    def default_reply(body: Any) -> Reply:
        said = ""
        for message in reversed(body.get("messages", []) if isinstance(body, dict) else []):
            if message.get("role") == "user" and isinstance(message.get("content"), str):
                said = message["content"]
                break
        return text("Hello from stub. ", f"You said: {said}")

    def serve(self, handler: BaseHTTPRequestHandler, reply: Reply) -> None:
        if reply.hang:
            self.release.wait(120)
        if reply.status != 200:
            data = json.dumps(reply.error_body).encode()
            handler.send_response(reply.status)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(data)))
            for key, value in reply.headers.items():
                handler.send_header(key, value)
            handler.end_headers()
            handler.wfile.write(data)
            return
        if reply.not_streamed:
            self._serve_whole(handler, reply)
            return
        start_event_stream(handler)
        for number, chunk in enumerate(_chunks(reply)):
            if reply.cut_after is not None and number >= reply.cut_after:
                handler.wfile.flush()
                return  # dropped mid-reply: no finish_reason, no [DONE]
            try:
                handler.wfile.write(chunk)
                handler.wfile.flush()
            except OSError:
                return  # the client went away (an interrupted turn)
            if reply.hang_after_first_chunk and number == 1:
                self.release.wait(120)

    @staticmethod
    def _serve_whole(handler: BaseHTTPRequestHandler, reply: Reply) -> None:
        message: dict[str, Any] = {"role": "assistant", "content": "".join(reply.text_deltas) or None}
        if reply.tool_calls:
            message["tool_calls"] = [{"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}
                                     for call_id, name, args in reply.tool_calls]
        payload = {"id": "chatcmpl-stub", "object": "chat.completion",
                   "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if reply.tool_calls else "stop"}],
                   "usage": _usage(reply.usage) if reply.usage else None}
        data = json.dumps(payload).encode()
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(data)))
        handler.end_headers()
        handler.wfile.write(data)


def write_providers(data: Path, url: str, *, api_key: Any = "$STUB_API_KEY", provider: str = "local",
                    models: dict[str, Any] | None = None, extra: dict[str, Any] | None = None,
                    default_model: str | None = None) -> Path:
    """Writes `providers.json` (and, with `default_model`, `config.json`) in the data dir `data`,
    as the real CLI reads them: one provider `provider` at `url` with the given models."""
    data.mkdir(parents=True, exist_ok=True)
    spec: dict[str, Any] = {"name": "Local stub", "baseURL": url, "apiKey": api_key, "api": "openai-completions",
                            "models": models if models is not None else {
                                "stub-model": {"contextWindow": 32000, "maxOutput": 4096,
                                               "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}},
                                "stub-model-2": {"contextWindow": 8000}}}
    spec.update(extra or {})
    path = data / "providers.json"
    path.write_text(json.dumps({"provider": {provider: spec}}, indent=2))
    if default_model is not None:
        (data / "config.json").write_text(json.dumps({"model": default_model}))
    return path
