"""Thinking from an OpenAI-compatible provider, recorded and sent back as the real Command Code
CLI (1.64.0) does (issue 32), each program resuming the other's session on one data dir, offline
against the stub model (`[[think TEXT]]` streams TEXT as `reasoning_content`).

What the real CLI does, seen here: it records the streamed reasoning as a `thinking` block with
an empty `signature` (the chat wire signs nothing) before the reply's other blocks; it sends a
thinking block back (`reasoning_content`) only when it carries a signature (a provider that signs
its thinking), so unsigned thinking stays home in the turn and after a resume; tool-call
arguments go out as `JSON.stringify` writes them. Both programs must send the same body for the
same session, whichever of them wrote it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from helpers.npm_programs import Programs
from helpers.real_cli import RealCli, ours_offline, shared_home

pytestmark = [pytest.mark.npm, pytest.mark.slow]

THOUGHT = "I ponder deeply \u00e9"
UNSIGNED = {"type": "thinking", "thinking": THOUGHT, "signature": ""}


def _transcript(data: Path) -> Path:
    [path] = [path for path in (data / "projects").glob("*/*.jsonl") if ".checkpoints." not in path.name]
    return path


def _assistants(transcript: Path) -> list[list[dict[str, Any]]]:
    values = [json.loads(line) for line in transcript.read_text().splitlines() if line.strip()]
    return [value["message"]["content"] for value in values
            if value.get("type") == "message" and value["message"]["role"] == "assistant"]


def _sent(run: Any) -> list[dict[str, Any]]:
    """The messages of the run's first chat request, the system prompt left out (each program has its own)."""
    body = next(request["body"] for request in run.requests if request["path"].endswith("/chat/completions"))
    return [message for message in body["messages"] if message["role"] != "system"]


def _both_resume(real: RealCli, cwd: Path, tmp_path: Path, label: str) -> tuple[list[dict[str, Any]], ...]:
    """The session resumed by the real CLI and, from the same bytes, by us: what each sent."""
    transcript = _transcript(real.data)
    before = transcript.read_bytes()
    theirs = _sent(real("-r", transcript.stem, "-p", "second turn"))
    transcript.write_bytes(before)
    ours = _sent(ours_offline(real, cwd, tmp_path / f"ours-{label}.jsonl", "-r", transcript.stem, "-p", "second turn"))
    transcript.write_bytes(before)
    return theirs, ours


def _sign(transcript: Path) -> None:
    """The thinking block as a provider that signs its thinking leaves it (an Anthropic turn)."""
    transcript.write_text(transcript.read_text().replace('"signature":""', '"signature":"sig-1"')
                          .replace('"signature": ""', '"signature": "sig-1"'))


@pytest.mark.parametrize("writer", ["ours", "real"])
def test_thinking_is_recorded_and_sent_back_as_the_real_cli_does(npm_programs: Programs, tmp_path: Path,
                                                                  writer: str) -> None:
    real, cwd, data = shared_home(npm_programs, tmp_path)
    target = str(cwd / "x\u00e9.txt")
    (cwd / "x\u00e9.txt").write_text("ex\n")
    prompt = f"look [[think {THOUGHT}]] [[tool read_file {json.dumps({'file_path': target})}]]"
    first = real("-p", prompt) if writer == "real" else ours_offline(real, cwd, tmp_path / "ours-1.jsonl", "--yolo",
                                                                      "-p", prompt)
    transcript = _transcript(data)
    # recorded as the real CLI records it: the thinking first, unsigned, then the call
    [call, reply] = _assistants(transcript)
    assert call[0] == UNSIGNED and [block["type"] for block in call] == ["thinking", "tool_use"]
    assert [block["type"] for block in reply] == ["text"]
    # in the turn, unsigned thinking stays home
    bodies = [request["body"] for request in first.requests if request["path"].endswith("/chat/completions")]
    assert len(bodies) == 2
    assert not any("reasoning_content" in message for message in bodies[1]["messages"])
    theirs, ours = _both_resume(real, cwd, tmp_path, "unsigned")
    assert ours == theirs
    [assistant, *_] = [message for message in ours if message["role"] == "assistant"]
    assert "reasoning_content" not in assistant
    assert assistant["tool_calls"][0]["function"]["arguments"] == json.dumps({"file_path": target},
                                                                             separators=(",", ":"), ensure_ascii=False)
    # a signed thinking block goes back, as `reasoning_content`, from both
    _sign(transcript)
    theirs, ours = _both_resume(real, cwd, tmp_path, "signed")
    assert ours == theirs
    [assistant, *_] = [message for message in ours if message["role"] == "assistant"]
    assert assistant["reasoning_content"] == THOUGHT
