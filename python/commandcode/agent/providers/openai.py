"""The OpenAI-compatible chat-completions provider (llama.cpp, vLLM, Ollama, hosted APIs).

`OpenAIChatModel.respond` POSTs `{baseURL}/chat/completions` with the tools, `stream: true` and
`stream_options.include_usage`, streams text deltas to `on_text`, merges tool-call deltas
(parallel calls too) and returns the reply with its usage (input, output, cache-read and
cache-write tokens, and `costUsd` when the model has prices). A server that answers with one
JSON completion instead of a stream is read as well.

Failures are one-line `ProviderError`s and the session stays intact: 401/403 (the key), 404
(the model), 429 (retried up to `retries` times, waiting `Retry-After` seconds when the server
says, else 1, 2, 4 s; then reported), other statuses and 5xx, connection refused, a timeout, a
stream cut before its end. No message ever carries the key (it is masked if a server echoes it).
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Sequence
from typing import Any

from ...config.env import provider_retries, provider_timeout_seconds
from ...errors import ProviderError
from ..system_prompt import system_prompt
from ..tool_specs import openai_tools
from .base import ModelReply, OnText, Reasons, Summarizes, check_cancel
from .config import ModelSpec, ProviderSpec, resolve_api_key
from .openai_messages import ReplyBuilder, to_chat_messages, usage_record

MAX_RETRY_AFTER_SECONDS = 60.0
SUMMARY_PROMPT = ("Summarize the conversation above for a continuation: the user's goal, what was asked, "
                  "what was done (files touched, commands run, decisions) and what is still open. "
                  "Write it as structured markdown with the headings **Goal**, **Progress**, **Files**, **Open**.")


class OpenAIChatModel(Summarizes, Reasons):
    """One model of an `openai-completions` provider, addressed `provider/model`."""

    def __init__(self, provider: ProviderSpec, model: ModelSpec) -> None:
        self.provider = provider
        self.spec = model
        self.model_id = f"{provider.id}/{model.name}"
        self.context_window = model.context_window
        self.effort: str | None = None
        self._key: str | None = None
        self._key_resolved = False

    @property
    def label(self) -> str:
        return f"provider {self.provider.id}"

    def _headers(self) -> dict[str, str]:
        if not self._key_resolved:
            self._key = resolve_api_key(self.provider)
            self._key_resolved = True
        headers = dict(self.provider.headers)
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        return headers

    def _mask(self, text: str) -> str:
        return text.replace(self._key, "***") if self._key else text

    def request_body(self, messages: list[dict[str, Any]], *, tools: bool | Sequence[dict[str, Any]] = True,
                     system: str | None = None) -> dict[str, Any]:
        """The JSON body of one request: `tools` True sends the file and shell tools, a list
        sends those specs (none when empty), False none."""
        body: dict[str, Any] = {"model": self.spec.name,
                                "messages": to_chat_messages(messages, system or system_prompt(os.getcwd())),
                                "stream": True, "stream_options": {"include_usage": True}}
        offered = openai_tools() if tools is True else openai_tools(tools) if tools else []
        if offered:
            body["tools"] = offered
        if self.spec.max_output:
            body["max_tokens"] = self.spec.max_output
        efforts = self.spec.reasoning_efforts  # when listed, only those levels are sent
        if self.effort and (self.effort in efforts if efforts else self.spec.reasoning):
            body["reasoning_effort"] = self.effort
        return body

    def respond(self, messages: list[dict[str, Any]], *, on_text: OnText | None = None,
                cancel: threading.Event | None = None, system: str | None = None,
                tools: Sequence[dict[str, Any]] | None = None) -> ModelReply:
        """One model step (see the module docstring); `system` is the session's system prompt,
        `tools` the specs offered (None: the file and shell tools)."""
        body = self.request_body(messages, system=system, tools=True if tools is None else tools)
        builder = self._call(body, on_text, cancel)
        content, errors = builder.content()
        return ModelReply(content, usage_record(builder.usage, self.spec.cost), errors)

    def summarize(self, messages: list[dict[str, Any]], instructions: str | None = None) -> str:
        """A summary of `messages` written by the model (for compaction), without tools."""
        ask = SUMMARY_PROMPT + (f"\n\nAlso follow these instructions: {instructions}" if instructions else "")
        request = [*messages, {"role": "user", "content": [{"type": "text", "text": ask}]}]
        builder = self._call(self.request_body(request, tools=False), None, None)
        content, _ = builder.content()
        text = "\n".join(str(block.get("text", "")) for block in content if block.get("type") == "text").strip()
        if not text:
            raise ProviderError(f"{self.label}: the model returned an empty summary")
        return text

    def _call(self, body: dict[str, Any], on_text: OnText | None, cancel: threading.Event | None) -> ReplyBuilder:
        if self.provider.api != "openai-completions":
            raise ProviderError(f"{self.label}: api {self.provider.api!r} is not supported; "
                                "only openai-completions is", hint="set \"api\": \"openai-completions\" in providers.json")
        if not self.provider.base_url:
            raise ProviderError(f"{self.label}: providers.json gives no baseURL")
        from .http import Exchange  # http.client loads on the first request, not with the session

        url = self.provider.base_url + "/chat/completions"
        retries = provider_retries()
        for attempt in range(retries + 1):
            check_cancel(cancel)
            with Exchange(url, body, self._headers(), timeout=provider_timeout_seconds(), cancel=cancel,
                          label=self.label) as exchange:
                if exchange.status == 429 and attempt < retries:
                    self._wait(exchange.retry_after, attempt, cancel)
                    continue
                if exchange.status != 200:
                    raise self._status_error(exchange.status, exchange.body_text(), attempt)
                if exchange.content_type == "application/json":
                    return self._whole(exchange.body_text(), on_text)
                return self._stream(exchange, on_text)
        raise AssertionError("unreachable")  # the last attempt returns or raises

    @staticmethod
    def _wait(retry_after: str | None, attempt: int, cancel: threading.Event | None) -> None:
        try:
            seconds = min(max(float(retry_after), 0.0), MAX_RETRY_AFTER_SECONDS) if retry_after else 2.0 ** attempt
        except ValueError:
            seconds = 2.0 ** attempt
        if cancel is not None:
            cancel.wait(seconds)
            check_cancel(cancel)
        else:
            time.sleep(seconds)

    def _status_error(self, status: int, body: str, attempt: int) -> ProviderError:
        detail = body.strip()
        try:
            parsed = json.loads(body)
            error = parsed.get("error") if isinstance(parsed, dict) else None
            message = error.get("message") if isinstance(error, dict) else error if isinstance(error, str) else None
            detail = str(message) if message else detail
        except ValueError:
            pass
        detail = self._mask(" ".join(detail.split()))[:300]
        suffix = f": {detail}" if detail else ""
        if status in (401, 403):
            return ProviderError(f"{self.label}: authentication failed (HTTP {status}){suffix}",
                                 hint="check apiKey in providers.json")
        if status == 404:
            return ProviderError(f"{self.label}: model {self.spec.name!r} not found (HTTP 404){suffix}",
                                 hint="check the model name (commandcode --model provider/model)")
        if status == 429:
            return ProviderError(f"{self.label}: rate limited (HTTP 429), still after {attempt} retries{suffix}",
                                 hint="wait a moment and send the prompt again")
        kind = "server error" if status >= 500 else "request refused"
        return ProviderError(f"{self.label}: {kind} (HTTP {status}){suffix}")

    def _whole(self, body: str, on_text: OnText | None) -> ReplyBuilder:
        builder = ReplyBuilder()
        try:
            payload = json.loads(body)
        except ValueError:
            raise ProviderError(f"{self.label}: the reply is not valid JSON") from None
        if not isinstance(payload, dict):
            raise ProviderError(f"{self.label}: the reply is not a chat completion")
        delta = builder.add_chunk(payload)
        if delta and on_text is not None:
            on_text(delta)
        return builder

    def _stream(self, exchange: Any, on_text: OnText | None) -> ReplyBuilder:
        builder = ReplyBuilder()
        done = False
        for data in exchange.events():
            if data.strip() == "[DONE]":
                done = True
                break
            try:
                chunk = json.loads(data)
            except ValueError:
                raise ProviderError(f"{self.label}: the stream sent an event that is not JSON") from None
            if isinstance(chunk, dict) and isinstance(chunk.get("error"), (dict, str)):
                error = chunk["error"]
                message = error.get("message") if isinstance(error, dict) else error
                raise ProviderError(f"{self.label}: the server reported an error mid-reply: {self._mask(str(message))[:300]}")
            if isinstance(chunk, dict):
                delta = builder.add_chunk(chunk)
                if delta and on_text is not None:
                    on_text(delta)
        if not done and builder.finish_reason is None:
            raise ProviderError(f"{self.label}: the stream was cut before the reply was complete",
                                hint="send the prompt again")
        return builder
