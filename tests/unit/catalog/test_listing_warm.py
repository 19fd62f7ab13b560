"""A warm `sessions list` does not depend on transcript sizes (issue: huge sessions).

With index sidecars, a listing takes counts, names and first prompts from the sidecars and reads
only what was appended since. The proof here is behavioural, not a timing: after a priming
listing, the middle of a big transcript is overwritten in place behind the index's back (same
size, same mtime; the index checks size, mtime and hashes of the first and last 64 KiB). A
listing that read the transcript would see the damage; a warm listing does not, and after an
append it counts exactly the appended message, so it read the appended bytes and nothing else.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from helpers.cli import run_cli

SID = "5e551015-0000-4000-8000-000000000001"


def _line(entry_id: str, parent: str | None, role: str, text: str) -> str:
    return json.dumps({"type": "message", "id": entry_id, "parentId": parent, "timestamp": "2026-01-02T03:04:05.000Z",
                       "message": {"role": role, "content": [{"type": "text", "text": text}]}},
                      separators=(",", ":")) + "\n"


def test_a_warm_listing_reads_only_sidecars_and_appended_bytes(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from commandcode.config.paths import project_dir

    data = tmp_path / "data"
    cwd = (tmp_path / "work").resolve()
    cwd.mkdir()
    monkeypatch.setenv("COMMANDCODE_HOME", str(data))
    folder = project_dir(cwd)
    folder.mkdir(parents=True)
    transcript = folder / f"{SID}.jsonl"
    body = [json.dumps({"type": "session", "version": 3, "id": SID, "timestamp": "2026-01-02T03:04:05.000Z",
                        "cwd": str(cwd)}, separators=(",", ":")) + "\n"]
    parent = None
    for number in range(400):  # ~4 MB: the middle is far from both 64 KiB edges
        entry_id = f"{number:08x}"
        body.append(_line(entry_id, parent, "user" if number % 2 == 0 else "assistant", f"m{number} " + "x" * 10_000))
        parent = entry_id
    transcript.write_text("".join(body))

    def listing() -> dict:
        completed = run_cli(["sessions", "list", "--all", "--json"], cwd, data, COMMANDCODE_INDEX="on")
        assert completed.returncode == 0, completed.stderr
        [row] = json.loads(completed.stdout)
        return row

    cold = listing()  # writes the sidecar
    assert cold["message_count"] == 400 and cold["first_message"].startswith("m0 ")

    stat = transcript.stat()
    with transcript.open("r+b") as handle:  # damage the middle behind the index's back
        handle.seek(stat.st_size // 2)
        handle.write(b"\x00GARBAGE" * 1000)
    os.utime(transcript, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert listing() == cold  # nothing but the sidecar and the edges was read

    with transcript.open("a", encoding="utf-8") as handle:
        handle.write(_line("appended", parent, "user", "one more"))
    grown = listing()
    assert grown["message_count"] == 401  # the appended message, and the damaged middle unseen
    assert grown["last_prompt"] == "one more" and grown["size"] == transcript.stat().st_size
    changing = ("message_count", "modified", "size", "last_prompt")
    assert {key: value for key, value in grown.items() if key not in changing} == \
        {key: value for key, value in cold.items() if key not in changing}
