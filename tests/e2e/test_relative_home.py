"""A relative `COMMANDCODE_HOME` is made absolute once, at start (issue 11, class 3): a code
rewind with `COMMANDCODE_HOME=.cchome` failed halfway and left a journal that blocked every later
`-c -p` and `checkpoints list`. Every command that writes or recovers runs with relative homes
of several shapes, and the data lands in the folder the relative path named at start.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from commandcode.config import paths


def run(work: Path, home: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COMMANDCODE_HOME": home, "COMMANDCODE_INDEX": "off", "NO_COLOR": "1"}
    if home.startswith("HOME="):  # no COMMANDCODE_HOME: the data dir is `$HOME/.commandcode`
        del env["COMMANDCODE_HOME"]
        env["HOME"] = home[len("HOME="):]
    return subprocess.run([sys.executable, "-m", "commandcode", *args], cwd=work, env=env, capture_output=True,
                          text=True, timeout=300, check=False)


def session_id(data: Path) -> str:
    (transcript,) = [p for p in (data / "projects").glob("*/*.jsonl") if ".checkpoints." not in p.name]
    return transcript.name[: -len(".jsonl")]


@pytest.mark.parametrize("home", [".cchome", "./.cchome", "sub/../.cchome", "../work/.cchome", "HOME=."])
@pytest.mark.parametrize("mode", ["code", "both"])
def test_a_relative_home_rewinds_and_recovers_like_an_absolute_one(tmp_path: Path, home: str, mode: str) -> None:
    work = tmp_path / "work"
    (work / "sub").mkdir(parents=True)
    data = work / (".commandcode" if home.startswith("HOME=") else ".cchome")
    for flag, content in (("-p", "one"), ("-c", "two"), ("-c", "three")):
        args = ["-c", "-p"] if flag == "-c" else ["-p"]
        done = run(work, home, *args, f'call write_file {{"file_path":"a.txt","content":"{content}"}}')
        assert done.returncode == 0, done.stderr
    ident = session_id(data)
    done = run(work, home, "rewind", ident, "--to", "2", "--mode", mode, "--yes")
    assert done.returncode == 0, done.stderr
    assert (work / "a.txt").read_text() == "one"
    assert not list((data / "journals").glob("*.json")), "no journal is left behind"
    for args in (["checkpoints", "list", ident], ["-c", "-p", "hello"], ["sessions", "list"]):
        done = run(work, home, *args)
        assert done.returncode == 0, (args, done.stderr)
        assert "error" not in done.stderr, (args, done.stderr)
    assert not (work / "sub" / ".cchome").exists() and not (work / "sub" / ".commandcode").exists()


def test_a_relative_home_is_made_absolute_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COMMANDCODE_HOME", raising=False)
    monkeypatch.setenv("HOME", "relative-home")
    first = paths.data_dir()
    assert first == tmp_path / "relative-home" / ".commandcode"
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert paths.data_dir() == first


def test_the_data_dir_is_made_absolute_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COMMANDCODE_HOME", ".cchome")
    first = paths.data_dir()
    assert first == tmp_path / ".cchome"
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert paths.data_dir() == first
    assert os.environ["COMMANDCODE_HOME"] == str(first)
