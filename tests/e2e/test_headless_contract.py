"""`commandcode -p` as other programs consume it: stream-json events and the json result object,
each checked against docs/headless-schema.json; a real provider (the stub on 127.0.0.1) through
the CLI, its failures as one line with the session intact, and keys kept out of every file."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from helpers.cli import entries, only_transcript, read_meta_file, run_cli, transcripts
from helpers.locations import REPO
from helpers.openai_stub import STUB_KEY, OpenAIStub, text, tool_calls, write_providers

SCHEMA = json.loads((REPO / "docs" / "headless-schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
KEY = STUB_KEY


def _events(stdout: str) -> list[dict[str, Any]]:
    events = [json.loads(line) for line in stdout.splitlines()]
    for event in events:
        errors = sorted(VALIDATOR.iter_errors(event), key=str)
        assert not errors, f"{event} does not match the schema: {errors[0].message}"
    assert events[0]["type"] == "system" and events[0]["subtype"] == "init"
    assert events[-1]["type"] == "result" and [e["type"] for e in events].count("result") == 1
    return events


def _run(args: list[str], workdir: Path, home: Path) -> Any:
    return run_cli(args, workdir, home)  # $STUB_API_KEY and the timeout come from the `openai_stub` fixture


def test_stream_json_offline_with_tools(home: Path, workdir: Path) -> None:
    prompt = 'call write_file {"file_path": "a.txt", "content": "x"}\ncall read_file {"file_path": "a.txt"}'
    completed = run_cli(["-p", prompt, "--output-format", "stream-json"], workdir, home)
    assert completed.returncode == 0, completed.stderr
    events = _events(completed.stdout)
    session_id = only_transcript(home, workdir).name[:-len(".jsonl")]
    assert events[0]["session_id"] == session_id and events[0]["cwd"] == str(workdir)
    assert events[0]["model"] == "commandcode/offline" and "bash" in events[0]["tools"]
    assert [e["type"] for e in events] == ["system", "assistant", "user", "assistant", "user", "assistant", "result"]
    assert events[1]["message"]["content"][0]["name"] == "write_file"
    assert events[2]["message"]["content"][0]["tool_use_id"] == events[1]["message"]["content"][0]["id"]
    result = events[-1]
    assert result["is_error"] is False and result["num_turns"] == 3 and result["session_id"] == session_id
    assert result["result"].startswith("Ran 2 tool call(s):")


def test_stream_json_with_a_provider_and_usage(openai_stub: OpenAIStub, home: Path, workdir: Path) -> None:
    openai_stub.reply(tool_calls(("call_1", "write_file", {"file_path": "hello.txt", "content": "hi\n"})))
    openai_stub.reply(text("Wrote ", "hello.txt"))
    completed = _run(["-p", "make hello", "--model", "local/stub-model", "--effort", "high",
                      "--output-format", "stream-json"], workdir, home)
    assert completed.returncode == 0, completed.stderr
    events = _events(completed.stdout)
    assert events[0]["model"] == "local/stub-model"
    result = events[-1]
    assert result["result"] == "Wrote hello.txt" and result["num_turns"] == 2
    assert result["usage"] == {"input_tokens": 2468, "output_tokens": 112, "cache_read_input_tokens": 200,
                               "cache_creation_input_tokens": 0}
    assert result["total_cost_usd"] == pytest.approx(2 * (1134 * 3 + 56 * 15 + 100 * 0.3) / 1e6)
    assert (workdir / "hello.txt").read_text() == "hi\n"
    transcript = only_transcript(home, workdir)
    lines = entries(transcript)
    assert lines[0]["type"] == "effort_change" and lines[0]["effort"] == "high"
    assistants = [line for line in lines if line.get("message", {}).get("role") == "assistant"]
    assert {(line["model"], line["effort"]) for line in assistants} == {("local/stub-model", "high")}
    for path in transcript.parent.iterdir():
        assert KEY.encode() not in path.read_bytes(), path
    assert not (home / "history.jsonl").exists()


@pytest.mark.parametrize("output_format", ["stream-json", "json", "text"])
def test_a_provider_failure_is_one_line_a_result_and_a_recorded_error(openai_stub: OpenAIStub, home: Path, workdir: Path,
                                                                       output_format: str) -> None:
    openai_stub.error(401, "invalid api key")
    completed = _run(["-p", "my prompt", "--model", "local/stub-model", "--output-format", output_format], workdir, home)
    assert completed.returncode == 1
    assert completed.stderr.splitlines()[0] == "error: provider local: authentication failed (HTTP 401): invalid api key"
    assert "Traceback" not in completed.stderr
    if output_format == "stream-json":
        result = _events(completed.stdout)[-1]
    elif output_format == "json":
        result = json.loads(completed.stdout)
        assert not list(VALIDATOR.iter_errors(result))
    else:
        assert completed.stdout == ""
        result = None
    if result is not None:
        assert result["is_error"] is True and result["subtype"] == "error_during_execution"
        assert result["result"] == "Error: provider local: authentication failed (HTTP 401): invalid api key"
    transcript = only_transcript(home, workdir)
    texts = [line["message"]["content"][0]["text"] for line in entries(transcript)]
    assert texts == ["my prompt", "Error: provider local: authentication failed (HTTP 401): invalid api key"]
    again = _run(["-p", "again", "-c", "--model", "local/stub-model"], workdir, home)  # resumable, and goes on
    assert again.returncode == 0 and again.stdout.startswith("Hello from stub. You said: again")


def test_429_retries_then_succeeds_and_unreachable_is_one_line(openai_stub: OpenAIStub, home: Path, workdir: Path) -> None:
    openai_stub.error(429, "busy", retry_after="0")
    openai_stub.error(429, "busy", retry_after="0")
    completed = _run(["-p", "hi", "--model", "local/stub-model"], workdir, home)
    assert completed.returncode == 0 and completed.stdout == "Hello from stub. You said: hi\n"
    assert len(openai_stub.requests) == 3
    write_providers(home, "http://127.0.0.1:9/v1")
    refused = _run(["-p", "hi", "--model", "local/stub-model", "--output-format", "stream-json"], workdir, home)
    assert refused.returncode == 1
    assert refused.stderr.splitlines()[0] == "error: provider local: cannot connect to http://127.0.0.1:9 (connection refused)"
    assert _events(refused.stdout)[-1]["is_error"] is True


def test_a_bad_model_is_refused_before_anything_is_written(openai_stub: OpenAIStub, home: Path, workdir: Path) -> None:
    unknown = _run(["-p", "hi", "--model", "nope/x", "--output-format", "stream-json"], workdir, home)
    assert unknown.returncode == 2
    assert unknown.stderr.splitlines()[0] == "error: unknown provider 'nope' in model 'nope/x'"
    assert _events(unknown.stdout)[-1]["result"] == "Error: unknown provider 'nope' in model 'nope/x'"
    write_providers(home, openai_stub.url, extra={"api": "anthropic-messages"})
    other = _run(["-p", "hi", "--model", "local/stub-model"], workdir, home)
    assert other.returncode == 1
    assert other.stderr.splitlines()[0] == ("error: provider local: api 'anthropic-messages' is not supported; "
                                            "only openai-completions is")
    bad_effort = _run(["-p", "hi", "--effort", "extreme"], workdir, home)
    assert bad_effort.returncode == 2 and "unknown effort 'extreme'" in bad_effort.stderr
    assert openai_stub.requests == []


def test_config_json_default_model_and_raw_secret_warning(openai_stub: OpenAIStub, home: Path, workdir: Path) -> None:
    write_providers(home, openai_stub.url, api_key="sk-pasted-raw-secret", default_model="local/stub-model-2")
    completed = _run(["-p", "hi", "--output-format", "json"], workdir, home)
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout)["model"] == "local/stub-model-2"
    assert completed.stderr == ('warning: providers.json: provider local: apiKey looks like a raw secret and is '
                                'refused; use "$VAR", "{env:VAR}" or "!command" instead\n')
    assert "authorization" not in openai_stub.requests[0].headers
    for path in transcripts(home):
        assert b"sk-pasted-raw-secret" not in path.read_bytes()
    assert b"sk-pasted" not in json.dumps(read_meta_file(transcripts(home)[0])).encode()


def test_the_schema_rejects_what_it_should() -> None:
    assert list(VALIDATOR.iter_errors({"type": "result", "is_error": False}))
    assert list(VALIDATOR.iter_errors({"type": "system", "subtype": "init"}))
    assert os.path.basename(SCHEMA["$id"]) == "headless-schema.json"


def test_stream_json_events_arrive_while_the_run_goes_on(openai_stub: OpenAIStub, home: Path, workdir: Path) -> None:
    import subprocess
    import sys

    from helpers.cli import cli_env

    openai_stub.reply(tool_calls(("call_1", "write_file", {"file_path": "a.txt", "content": "x"})))
    openai_stub.reply(text("finished"), hang=True)  # the second model call waits for the test
    process = subprocess.Popen([sys.executable, "-m", "commandcode", "-p", "go", "--model", "local/stub-model",
                                "--output-format", "stream-json"], cwd=workdir, env=cli_env(home),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    try:
        assert process.stdout is not None
        seen = [json.loads(process.stdout.readline())["type"] for _ in range(3)]
        assert seen == ["system", "assistant", "user"] and process.poll() is None  # still waiting for the model
        openai_stub.release.set()
        rest = process.stdout.read()
        assert process.wait(timeout=60) == 0
    finally:
        process.kill()
        process.wait()
    assert [json.loads(line)["type"] for line in rest.splitlines()] == ["assistant", "result"]


def test_a_prompt_piped_into_p_is_the_turn(home: Path, workdir: Path) -> None:
    """`echo PROMPT | commandcode -p` (Claude Code's form): stdin is the prompt when -p has none,
    also with options after it; an empty pipe is the one-line empty-prompt refusal, nothing saved."""
    import subprocess
    import sys

    from helpers.cli import cli_env

    def piped(args: list[str], text_in: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "commandcode", *args], cwd=workdir, env=cli_env(home),
                              input=text_in, capture_output=True, text=True, timeout=60)

    completed = piped(["-p"], "héllo from a pipe\n")
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "Offline model reply. You said: héllo from a pipe"
    user = [e["message"] for e in entries(only_transcript(home, workdir)) if e.get("message", {}).get("role") == "user"]
    assert [part["text"] for part in user[0]["content"]] == ["héllo from a pipe"]
    result = json.loads(piped(["-p", "--output-format", "json", "-c"], "second").stdout)
    assert result["result"] == "Offline model reply. You said: second" and result["num_turns"] == 1
    empty = piped(["-p"], "")
    assert empty.returncode == 2 and empty.stderr.startswith("error: the prompt is empty"), empty.stderr
    assert len(transcripts(home, workdir)) == 1
