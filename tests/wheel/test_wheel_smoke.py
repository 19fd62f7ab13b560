"""Smoke test of an installed commandcode: the `commandcode` launcher of the running interpreter's
environment, driven as a user would, from a scratch working directory.

`.ci/wheel-smoke.sh` runs this module alone (no other conftest) from a fresh venv that has only
the built wheel and pytest, on a PATH without cargo or rustc, with `COMMANDCODE_WHEEL` naming the
wheel: then it also checks that the package comes from site-packages, not the source tree, that
no Rust toolchain is reachable, and what the wheel holds. In the ordinary suite the same
end-to-end checks run against the development install (the wheel-only checks skip).

Fork and export are not commands yet (later issues), so they are not here.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
WHEEL = os.environ.get("COMMANDCODE_WHEEL")
wheel_only = pytest.mark.skipif(not WHEEL, reason="COMMANDCODE_WHEEL is not set (only .ci/wheel-smoke.sh sets it)")


def cargo_version() -> str:
    return tomllib.loads((REPO / "rust" / "Cargo.toml").read_text())["package"]["version"]


@pytest.fixture
def user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A scratch working directory (the current one) with its own `COMMANDCODE_HOME`."""
    cwd = tmp_path / "proj"
    cwd.mkdir()
    monkeypatch.setenv("COMMANDCODE_HOME", str(tmp_path / "home" / ".commandcode"))
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("COMMANDCODE_INDEX", raising=False)
    monkeypatch.chdir(cwd)
    return cwd


def cc(*args: str, launcher: str = "commandcode") -> subprocess.CompletedProcess[str]:
    """Runs the installed launcher; fails the test on a non-zero exit, an error or a traceback."""
    done = subprocess.run([str(BIN / launcher), *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (args, done.returncode, done.stdout, done.stderr)
    assert "error" not in done.stderr.lower() and "Traceback" not in done.stderr, (args, done.stderr)
    return done


def readme_main_job() -> str:
    """The first command of the README, without its leading `pip install . &&`."""
    block = re.search(r"^```sh\n(.*?)^```$", (REPO / "README.md").read_text(), re.S | re.M)
    assert block, "the README opens with a ```sh block"
    first = block.group(1).splitlines()[0]
    install = "pip install . && "
    assert first.startswith(install), first
    return first[len(install):]


@wheel_only
def test_the_package_is_the_installed_wheel_and_no_rust_is_reachable(user: Path) -> None:
    import commandcode

    origin = Path(commandcode.__file__).resolve()
    assert origin.is_relative_to(Path(sysconfig.get_paths()["purelib"]).resolve()), origin
    assert not origin.is_relative_to(REPO), origin
    assert Path(commandcode._native.__file__).resolve().is_relative_to(origin.parent)
    for tool in ("cargo", "rustc", "rustup"):
        assert shutil.which(tool) is None, f"{tool} is on PATH: {shutil.which(tool)}"


@wheel_only
def test_the_wheel_holds_the_package_and_launchers_only() -> None:
    assert WHEEL
    version = cargo_version()
    name = Path(WHEEL).name
    # One wheel for every CPython from 3.11 on, glibc 2.17 and later (the floor the build targets).
    floor = r"(manylinux2014_x86_64\.)?manylinux_2_17_x86_64"
    assert re.fullmatch(rf"commandcode-{re.escape(version)}-cp311-abi3-{floor}\.whl", name), name
    names = zipfile.ZipFile(WHEEL).namelist()
    dist_info, data = f"commandcode-{version}.dist-info/", f"commandcode-{version}.data/"
    strays = [n for n in names if not n.startswith(("commandcode/", dist_info, data))]
    assert strays == []
    assert sorted(n for n in names if n.startswith(data)) == [f"{data}scripts/cmd", f"{data}scripts/commandcode"]
    for needed in ("commandcode/_native.abi3.so", "commandcode/_native.pyi", "commandcode/py.typed",
                   "commandcode/__main__.py", "commandcode/cli/__init__.py", "commandcode/config/slug_tables.json"):
        assert needed in names
    package = [n for n in names if n.startswith("commandcode/")]
    # Code, the stub, and package data: the slug tables (JSON) and the screens' styles (Textual CSS).
    assert all(n.endswith((".py", ".pyi", ".typed", ".abi3.so", ".json", ".tcss")) for n in package), package
    assert not [n for n in package if re.search(r"(^|/)(tests?|benches|fixtures)(/|$)|test_", n)]


@pytest.mark.parametrize("launcher", ["commandcode", "cmd"])
def test_version_is_cargos(user: Path, launcher: str) -> None:
    from importlib.metadata import version

    import commandcode

    assert commandcode.__version__ == cargo_version() == version("commandcode")
    assert cc("--version", launcher=launcher).stdout == f"commandcode {cargo_version()}\n"


def test_readme_main_job(user: Path) -> None:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(["bash", "-c", readme_main_job()], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert (user / "hello.txt").read_bytes() == b"hello\n"
    assert "call write_file" in done.stdout


def test_turn_with_tool_call_list_context_rewind(user: Path) -> None:
    hello = user / "hello.txt"
    first = cc("-p", 'call write_file {"file_path": "hello.txt", "content": "hello\\n"}', "-n", "smoke")
    assert "write_file" in first.stdout
    cc("-p", 'call write_file {"file_path": "hello.txt", "content": "changed\\n"}', "-c")
    assert hello.read_bytes() == b"changed\n"

    listing = json.loads(cc("sessions", "list", "--all", "--json").stdout)
    assert [s["name"] for s in listing] == ["smoke"]
    session_id = listing[0]["id"]
    assert listing[0]["cwd"] == str(user)

    context = json.loads(cc("sessions", "context", "smoke", "--json").stdout)
    assert context["messages"], context
    assert "write_file" in json.dumps(context["messages"])
    assert "smoke" in cc("sessions", "show", session_id).stdout
    assert "hello.txt" in cc("checkpoints", "list", session_id).stdout

    cc("rewind", session_id, "--to", "2", "--mode", "code", "--yes")
    assert hello.read_bytes() == b"hello\n"
    cc("rewind", session_id, "--to", "1", "--mode", "both", "--yes")
    assert not hello.exists()
    assert json.loads(cc("sessions", "context", session_id, "--json").stdout)["messages"] == []


@wheel_only
def test_fork_and_export(user: Path) -> None:
    cc("-p", 'call write_file {"file_path": "a.txt", "content": "one\\n"}', "-n", "source")
    [source] = json.loads(cc("sessions", "list", "--all", "--json").stdout)
    fork = json.loads(cc("sessions", "fork", "source", "--name", "forked", "--json").stdout)
    assert fork["parent_session_id"] == source["id"] and fork["id"] != source["id"]
    assert json.loads(cc("sessions", "context", fork["id"], "--json").stdout)["messages"] == \
        json.loads(cc("sessions", "context", source["id"], "--json").stdout)["messages"]
    for fmt in ("html", "md", "jsonl"):
        cc("export", "forked", "--format", fmt, "-o", str(user / f"out.{fmt}"))
    assert "write_file" in (user / "out.md").read_text() and (user / "out.html").read_text().rstrip().endswith("</html>")
    assert (user / "out.jsonl").read_bytes() == Path(fork["path"]).read_bytes()  # a byte copy
