"""The offline model streams its reply in token-sized chunks, paced by
`COMMANDCODE_OFFLINE_TOKEN_MS`, and an interrupt stops the stream between chunks."""

from __future__ import annotations

import threading

import pytest

from commandcode.agent.providers.offline import OfflineModel
from commandcode.errors import TurnInterrupted

PROMPT = [{"role": "user", "content": [{"type": "text", "text": "Tell me about extraordinarily long words please"}]}]


def test_the_reply_streams_in_token_sized_chunks_that_make_up_the_text() -> None:
    chunks: list[str] = []
    reply = OfflineModel().respond(PROMPT, on_text=chunks.append)
    text = "".join(block["text"] for block in reply.content if block["type"] == "text")
    assert "".join(chunks) == text
    assert len(chunks) > len(text.split())  # more chunks than words: long words are several tokens
    assert all(1 <= len(chunk.strip()) <= 4 for chunk in chunks if chunk.strip())
    assert [chunk for chunk in chunks if chunk.strip() in ("extr", "aord", "inar", "ily")] == [" extr", "aord", "inar", "ily"]


def test_a_paced_stream_stops_at_the_interrupt(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COMMANDCODE_OFFLINE_TOKEN_MS", "20")
    cancel, chunks = threading.Event(), []

    def on_text(chunk: str) -> None:
        chunks.append(chunk)
        if len(chunks) == 3:
            cancel.set()

    with pytest.raises(TurnInterrupted):
        OfflineModel().respond(PROMPT, on_text=on_text, cancel=cancel)
    assert len(chunks) == 3  # nothing after the interrupt


def test_an_unusable_pace_is_no_pace(monkeypatch: pytest.MonkeyPatch) -> None:
    from commandcode.config.env import offline_token_seconds

    monkeypatch.setenv("COMMANDCODE_OFFLINE_TOKEN_MS", "fast")
    assert offline_token_seconds() == 0.0
    monkeypatch.setenv("COMMANDCODE_OFFLINE_TOKEN_MS", "250")
    assert offline_token_seconds() == 0.25
