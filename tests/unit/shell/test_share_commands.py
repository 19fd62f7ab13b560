"""`/share`, `/share gist` and `/unshare` with a fake shell: a real share server for the live
link, and a stand-in `gh` on PATH that records its arguments and what it was given."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from commandcode.config.context import ProjectContext
from commandcode.errors import CommandcodeError, UsageError
from commandcode.sessions.files import SessionFiles
from commandcode.shell.commands.share import COMMANDS
from helpers.share import http_get, share_server
from helpers.transcripts import GITHUB_TOKEN, TranscriptBuilder

SHARE, UNSHARE = COMMANDS


class FakeAgent:
    def __init__(self, files: SessionFiles) -> None:
        self.files = files


class FakeShell:
    def __init__(self, files: SessionFiles, cwd: Path, *, answer: bool = True) -> None:
        self.agent = FakeAgent(files)
        self.cwd = cwd
        self.project = ProjectContext(cwd)
        self.answer = answer
        self.questions: list[str] = []
        self.printed: list[str] = []
        self.copied: list[str] = []
        self.notices: list[str] = []

    def confirm(self, question: str, *, default: bool = False) -> bool:
        self.questions.append(question)
        return self.answer

    def print(self, text: str) -> None:
        self.printed.append(text)

    def copy(self, text: str) -> str:
        self.copied.append(text)
        return "copied"

    def notice(self, text: str) -> None:
        self.notices.append(text)


def _session(home: Path, workdir: Path) -> SessionFiles:
    builder = TranscriptBuilder(workdir)
    builder.user("a prompt")
    builder.assistant(f"a reply with {GITHUB_TOKEN}")
    return SessionFiles.for_transcript(builder.write(home))


def _run(command: Any, shell: FakeShell, args: str = "") -> None:
    command.run(shell, args)


def test_share_asks_publishes_copies_and_unshare_revokes(home: Path, workdir: Path) -> None:
    files = _session(home, workdir)
    with share_server(home, workdir) as server:
        declined = FakeShell(files, workdir, answer=False)
        _run(SHARE, declined)
        assert declined.copied == [] and not files.share.exists() and declined.notices == ["nothing was shared"]
        shell = FakeShell(files, workdir)
        _run(SHARE, shell)
        assert len(shell.questions) == 1 and "2 message(s)" in shell.questions[0]
        assert "1 secret redacted (1 github-token)" in shell.questions[0]
        url = json.loads(files.share.read_text())["url"]
        assert shell.copied == [url] and shell.printed == [f"Shared at {url}"]
        assert http_get(server["port"], "/" + url.split("/", 3)[3])[0] == 200
        _run(SHARE, shell)
        assert shell.copied == [url, url] and len(shell.questions) == 1, "again: re-copies without asking"
        _run(UNSHARE, shell)
        assert not files.share.exists() and http_get(server["port"], "/" + url.split("/", 3)[3])[0] == 404
        with pytest.raises(CommandcodeError, match="not shared"):
            _run(UNSHARE, shell)


def test_share_without_a_server_is_one_line(home: Path, workdir: Path) -> None:
    files = _session(home, workdir)
    shell = FakeShell(files, workdir)
    with pytest.raises(CommandcodeError, match="not running") as raised:
        _run(SHARE, shell)
    assert raised.value.hint and shell.questions == [] and not files.share.exists()


def _stand_in_gh(folder: Path, *, logged_in: bool = True) -> Path:
    record = folder / "gh-calls.jsonl"
    script = folder / "gh"
    script.write_text(f"""#!{sys.executable}
import json, sys
args = sys.argv[1:]
data = sys.stdin.read() if args[:2] == ["gist", "create"] else ""
with open({str(record)!r}, "a") as out:
    out.write(json.dumps({{"args": args, "input": data}}) + "\\n")
if args[:2] == ["auth", "status"]:
    sys.exit(0 if {logged_in!r} else 1)
print("https://gist.github.com/someone/0123456789abcdef")
""")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return record


def _calls(record: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in record.read_text().splitlines()]


@pytest.mark.parametrize("fmt", ["md", "html", "jsonl"])
def test_share_gist_posts_a_redacted_secret_gist(home: Path, workdir: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch, fmt: str) -> None:
    files = _session(home, workdir)
    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    record = _stand_in_gh(bin_folder)
    monkeypatch.setenv("PATH", f"{bin_folder}{os.pathsep}{os.environ['PATH']}")
    shell = FakeShell(files, workdir)
    _run(SHARE, shell, f"gist {fmt}")
    auth, create = _calls(record)
    assert auth["args"] == ["auth", "status"]
    assert create["args"][:3] == ["gist", "create", "--filename"]
    assert create["args"][3] == f"command-code-session-{files.session_id[:8]}.{fmt}" and "--public" not in create["args"]
    assert "a prompt" in create["input"] and GITHUB_TOKEN not in create["input"]
    assert shell.copied == ["https://gist.github.com/someone/0123456789abcdef"]


def test_share_gist_format_comes_from_the_setting(home: Path, workdir: Path, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    files = _session(home, workdir)
    (home / "settings.json").write_text('{"defaultShareGistFormat": "md"}\n')
    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    record = _stand_in_gh(bin_folder)
    monkeypatch.setenv("PATH", f"{bin_folder}{os.pathsep}{os.environ['PATH']}")
    _run(SHARE, FakeShell(files, workdir), "gist")
    assert _calls(record)[1]["args"][3].endswith(".md")


def test_share_gist_without_gh_or_login_is_one_line(home: Path, workdir: Path, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    files = _session(home, workdir)
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(CommandcodeError, match="not installed"):
        _run(SHARE, FakeShell(files, workdir), "gist")
    record = _stand_in_gh(empty, logged_in=False)
    with pytest.raises(CommandcodeError, match="not logged in"):
        _run(SHARE, FakeShell(files, workdir), "gist md")
    assert [call["args"][0] for call in _calls(record)] == ["auth"], "nothing was posted"
    with pytest.raises(UsageError):
        _run(SHARE, FakeShell(files, workdir), "gist pdf")


def test_rearm_on_resume(home: Path, workdir: Path) -> None:
    from commandcode.sharing.client import rearm

    files = _session(home, workdir)
    assert rearm(files) is None, "not shared"
    with share_server(home, workdir):
        shell = FakeShell(files, workdir)
        _run(SHARE, shell)
        url = shell.copied[0]
    notice = rearm(files)
    assert notice is not None and "not live" in notice and "not running" in notice
    (home / "share" / "shares.json").unlink()  # the next server never heard of the share
    with share_server(home, workdir) as server:
        assert http_get(server["port"], "/" + url.split("/", 3)[3])[0] == 404
        notice = rearm(files)
        assert notice is not None and "shared live at" in notice
        assert http_get(server["port"], "/" + notice.split(" at ", 1)[1].split("/", 3)[3])[0] == 200


def test_share_and_unshare_read_the_sessions_settings_not_the_process_folders(home: Path, workdir: Path, tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The share service is the one the session's context names (`shell.project`, #27), wherever
    the process runs: here the process's folder names one with a raw token (refused), the
    session's folder none (the one-machine server)."""
    files = _session(home, workdir)
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / ".commandcode").mkdir(parents=True)
    refused = {"share": {"server": "http://127.0.0.1:9", "token": "a-raw-token"}}
    (elsewhere / ".commandcode" / "settings.json").write_text(json.dumps(refused))
    monkeypatch.chdir(elsewhere)
    with share_server(home, workdir):
        shell = FakeShell(files, workdir)
        _run(SHARE, shell)
        assert files.share.is_file() and shell.printed[0].startswith("Shared at http://")
        _run(UNSHARE, shell)
        assert not files.share.exists()
    with pytest.raises(CommandcodeError, match="raw token"):  # and the other way round
        _run(SHARE, FakeShell(files, elsewhere))
