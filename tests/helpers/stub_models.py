"""Stub model servers on 127.0.0.1 for the real programs the interop tests drive.

One `StubModelServer` answers both wire formats:
- the Anthropic Messages API (`POST /v1/messages`, streaming SSE with the real event sequence:
  `message_start`, `content_block_start/delta/stop` per block, `message_delta`, `message_stop`;
  `POST /v1/messages/count_tokens`), for Claude Code through `ANTHROPIC_BASE_URL`;
- the OpenAI chat completions API (`POST /v1/chat/completions`, streaming or not), for pi and the
  real Command Code CLI through a provider whose `baseURL` is the stub.

What it answers is decided by the last user message, so a test drives a real agent by its
prompt: every `[[tool NAME JSON]]` directive in the prompt becomes one tool call (several
directives: parallel calls in one reply), and `[[then tool NAME JSON]]` a call of the second
reply, after the first round's results (`$AGENT_ID` in its input: the last `agent_id: ID` those
results named, a background sub-agent's); a request whose last message is a tool result gets a
plain reply otherwise; anything else gets `ok: <the prompt's first line>`. A prompt that asks for
a summary of the conversation (a compaction) gets a `Summary: ...` text. A `[[think TEXT]]` in the
prompt makes the first reply think TEXT first (streamed as `reasoning_content` on the chat
completions wire). Every request is kept in `requests`.
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from helpers.openai_stub import start_event_stream

DIRECTIVE = re.compile(r"\[\[(then )?tool (\w+) (\{.*?\})\]\]", re.DOTALL)
AGENT_ID_PLACEHOLDER = "$AGENT_ID"
AGENT_ID_RESULT = re.compile(r"agent_id: ([A-Za-z0-9_-]+)")
THINK = re.compile(r"\[\[think (.*?)\]\]", re.DOTALL)
USAGE = {"input_tokens": 1234, "output_tokens": 56, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 0}


def _text_of(content: Any) -> str:
    """The text of message content, without the `<system-reminder>` blocks agents add."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(block.get("text", "")) for block in content if isinstance(block, dict)
                         and block.get("type") in ("text", "input_text")
                         and not str(block.get("text", "")).lstrip().startswith("<system-reminder>"))
    return ""


def _is_tool_result(message: dict[str, Any]) -> bool:
    if message.get("role") == "tool":
        return True
    content = message.get("content")
    return isinstance(content, list) and any(isinstance(block, dict) and block.get("type") == "tool_result"
                                             for block in content)


class Reply:
    """What the stub answers: text, then tool calls `(name, input)`."""

    def __init__(self, text: str, calls: list[tuple[str, dict[str, Any]]], reasoning: str = "") -> None:
        self.text = text
        self.calls = calls
        self.reasoning = reasoning


def _with_agent_id(arguments: dict[str, Any], after_prompt: list[dict[str, Any]]) -> dict[str, Any]:
    """`arguments` with `AGENT_ID_PLACEHOLDER` replaced by the last `agent_id: ID` the first
    round's tool results named (a background sub-agent's id, for an `agent_output` call)."""
    found = AGENT_ID_RESULT.findall(json.dumps(after_prompt))
    if not found:
        return arguments
    return {key: value.replace(AGENT_ID_PLACEHOLDER, found[-1]) if isinstance(value, str) else value
            for key, value in arguments.items()}


def decide(messages: list[dict[str, Any]], system: str) -> Reply:
    """The reply to a conversation (see the module docstring). `[[then tool ...]]` directives are
    a second round: called after the results of the first round came back."""
    if not messages:
        return Reply("ok", [])
    users = [message for message in messages if message.get("role") in ("user", "tool", "toolResult")]
    prompts = [message for message in users if not _is_tool_result(message)]
    last = users[-1] if users else messages[-1]
    prompt = _text_of(prompts[-1].get("content")) if prompts else ""
    rounds: list[list[tuple[str, dict[str, Any]]]] = [[], []]
    for then, name, arguments in DIRECTIVE.findall(prompt):
        rounds[1 if then else 0].append((name, json.loads(arguments)))
    if _is_tool_result(last):
        after_prompt = messages[messages.index(prompts[-1]) + 1:] if prompts else []
        replies = sum(1 for message in after_prompt if message.get("role") == "assistant")
        if replies == 1 and rounds[1]:
            return Reply("", [(name, _with_agent_id(arguments, after_prompt)) for name, arguments in rounds[1]])
        return Reply("done with the tools", [])
    lowered = prompt.lower()
    if not DIRECTIVE.search(prompt) and "summar" in lowered and "conversation" in lowered:
        return Reply("Summary: the user asked for small file edits; they were made.", [])
    thought = "".join(THINK.findall(prompt))
    if rounds[0]:
        return Reply("", rounds[0], thought)
    first = prompt.strip().splitlines()[0] if prompt.strip() else ""
    return Reply(f"ok: {first[:200]}", [], thought)


def chat_context(body: dict[str, Any]) -> list[tuple[str, str]]:
    """A chat-completions request's messages as (kind, text), the system prompt left out:
    `user`/`assistant` with their text, `tool_use` with the tool's name, `tool_result`. The same
    shape as `message_kinds`, so a test compares what an agent sent with what we read."""
    out: list[tuple[str, str]] = []
    for message in body["messages"]:
        content = message.get("content")
        text = content if isinstance(content, str) else " ".join(
            str(part.get("text", "")) for part in content or [] if isinstance(part, dict))
        if message["role"] == "assistant":
            if text.strip():
                out.append(("assistant", text.strip()))
            out.extend(("tool_use", call["function"]["name"]) for call in message.get("tool_calls") or [])
        elif message["role"] == "tool":
            out.append(("tool_result", ""))
        elif message["role"] == "user":
            out.append(("user", text.strip()))
    return out


def message_kinds(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Command Code context messages (`sessions context --json`) as (kind, text)."""
    out: list[tuple[str, str]] = []
    for message in messages:
        texts = " ".join(str(block.get("text", "")) for block in message["content"] if block.get("type") == "text")
        if texts.strip():
            out.append((message["role"], texts.strip()))
        out.extend(("tool_use", str(block["name"])) for block in message["content"] if block.get("type") == "tool_use")
        out.extend(("tool_result", "") for block in message["content"] if block.get("type") == "tool_result")
    return out


class _Handler(BaseHTTPRequestHandler):
    """The stub's endpoints; `stub` is the server whose requests it records."""

    stub: StubModelServer

    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:  # health checks, model lists
        self._send_json(200, {"data": [{"id": "stub-model", "object": "model"}], "object": "list"})

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        path = self.path.split("?")[0]
        server = self.stub
        with server._lock:
            server.requests.append((path, body))
            server._counter += 1
            number = server._counter
        if path.endswith("/count_tokens"):
            self._send_json(200, {"input_tokens": 1234})
        elif path.endswith("/messages"):
            self._anthropic(body, number)
        elif path.endswith("/chat/completions"):
            self._openai(body, number)
        else:
            self._send_json(404, {"error": {"message": f"no such endpoint {path}"}})

    def _send_json(self, status: int, value: Any) -> None:
        data = json.dumps(value).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _anthropic(self, body: dict[str, Any], number: int) -> None:
        system = body.get("system")
        system_text = system if isinstance(system, str) else _text_of(system)
        reply = decide(list(body.get("messages") or []), system_text)
        model = str(body.get("model") or "claude-stub")
        blocks: list[dict[str, Any]] = []
        if reply.text or not reply.calls:
            blocks.append({"type": "text", "text": reply.text or "ok"})
        for position, (name, arguments) in enumerate(reply.calls):
            blocks.append({"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:16]}_{position}", "name": name,
                           "input": arguments})
        stop = "tool_use" if reply.calls else "end_turn"
        message_id = f"msg_stub_{uuid.uuid4().hex[:20]}"
        if not body.get("stream"):
            self._send_json(200, {"id": message_id, "type": "message", "role": "assistant", "model": model,
                                  "content": blocks, "stop_reason": stop, "stop_sequence": None, "usage": USAGE})
            return
        start_event_stream(self)
        events: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": {
            "id": message_id, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": {**USAGE, "output_tokens": 1}}})]
        for index, block in enumerate(blocks):
            if block["type"] == "text":
                events.append(("content_block_start", {"type": "content_block_start", "index": index,
                                                       "content_block": {"type": "text", "text": ""}}))
                events.append(("content_block_delta", {"type": "content_block_delta", "index": index,
                                                       "delta": {"type": "text_delta", "text": block["text"]}}))
            else:
                start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
                events.append(("content_block_start", {"type": "content_block_start", "index": index,
                                                       "content_block": start}))
                events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": {
                    "type": "input_json_delta", "partial_json": json.dumps(block["input"])}}))
            events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop,
                                                                            "stop_sequence": None},
                                         "usage": {"output_tokens": USAGE["output_tokens"]}}))
        events.append(("message_stop", {"type": "message_stop"}))
        for name, data in events:
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()

    def _openai(self, body: dict[str, Any], number: int) -> None:
        messages = list(body.get("messages") or [])
        system = "\n".join(_text_of(m.get("content")) for m in messages if m.get("role") in ("system", "developer"))
        conversation = [m for m in messages if m.get("role") not in ("system", "developer")]
        reply = decide(conversation, system)
        model = str(body.get("model") or "stub-model")
        calls = [{"index": position, "id": f"call_{uuid.uuid4().hex[:16]}_{position}", "type": "function",
                  "function": {"name": name, "arguments": json.dumps(arguments)}}
                 for position, (name, arguments) in enumerate(reply.calls)]
        finish = "tool_calls" if calls else "stop"
        usage = {"prompt_tokens": 1234, "completion_tokens": 56, "total_tokens": 1290,
                 "prompt_tokens_details": {"cached_tokens": 100}}
        completion_id = f"chatcmpl-stub-{number:06d}"
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
            if calls:
                message["tool_calls"] = [{key: value for key, value in call.items() if key != "index"}
                                         for call in calls]
            self._send_json(200, {"id": completion_id, "object": "chat.completion", "model": model,
                                  "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                                  "usage": usage})
            return
        start_event_stream(self)

        def chunk(delta: dict[str, Any], finish_reason: str | None = None, **extra: Any) -> None:
            value = {"id": completion_id, "object": "chat.completion.chunk", "created": 1, "model": model,
                     "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}], **extra}
            self.wfile.write(f"data: {json.dumps(value)}\n\n".encode())

        chunk({"role": "assistant", "content": ""})
        if reply.reasoning:
            chunk({"reasoning_content": reply.reasoning})
        if reply.text:
            chunk({"content": reply.text})
        if calls:
            chunk({"tool_calls": calls})
        chunk({}, finish)
        value = {"id": completion_id, "object": "chat.completion.chunk", "created": 1, "model": model,
                 "choices": [], "usage": usage}
        self.wfile.write(f"data: {json.dumps(value)}\n\ndata: [DONE]\n\n".encode())
        self.wfile.flush()


class StubModelServer:
    """A threaded HTTP server on 127.0.0.1; `url` is its base address."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self._counter = 0
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), type("Handler", (_Handler,), {"stub": self}))
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def paths(self) -> list[str]:
        return [path for path, _body in self.requests]

    def start(self) -> StubModelServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()


@contextmanager
def stub_model_server() -> Iterator[StubModelServer]:
    """A running `StubModelServer`, shut down after the block."""
    server = StubModelServer().start()
    try:
        yield server
    finally:
        server.stop()
