"""The permission rules against a corpus of shell tricks, each run for real under the tool's shell.

Every command of `ATTACKS` deletes the file `victim` when `/bin/sh -c` (dash) runs it in a fresh
folder (checked first: the corpus is real). Under a deny rule `Bash(rm:*)` in bypass mode, and
under allow rules for harmless programs (`echo hi:*`, `ls:*`, ...) headless, the policy either
refuses the command or, when it lets it run, the victim must survive: the rules cannot be walked
around. `HARMLESS` commands only look dangerous (an `rm` in a comment, a quoted here-doc, a
string): the rules must let them run, so the check is not simply "refuse everything".
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from commandcode.agent.permissions import Policy

# Ways to run `rm victim`: the program word, written every way the shell accepts.
FORMS = [
    "rm -rf victim", "rm victim", "\\rm victim", "'rm' victim", '"rm" victim', "r''m victim", "r\\m victim",
    "/bin/rm victim", "/usr/bin/rm victim", "FOO=1 rm victim", "A=1 B=2 rm -f victim", "command rm victim",
    "command -p rm victim", "env rm victim", "env -i rm victim", "env FOO=1 rm victim", "env -- rm victim",
    "exec rm victim", "nice rm victim", "nice -n 5 rm victim", "nohup rm victim", "timeout 5 rm victim",
    "timeout -s KILL 5 rm victim", "setsid rm victim", "stdbuf -o0 rm victim", "ionice rm victim",
    "taskset 1 rm victim", "chrt -o 0 rm victim", "flock /tmp/.corpus.lock rm victim", "time rm victim",
    "echo victim | xargs rm", "echo victim | xargs -I{} rm {}", "printf 'victim\\0' | xargs -0 rm",
    "find . -name victim -exec rm {} \\;", "find . -name victim -exec rm {} +", "find . -name vic\\* -execdir rm {} \\;",
    "sh -c 'rm victim'", "bash -c 'rm victim'", "dash -c \"rm victim\"", "sh -ec 'rm victim'", "sh -c -- 'rm victim'",
    "eval 'rm victim'", "eval rm victim", "echo rm victim | sh", "env -S 'rm victim'", "flock /tmp/.corpus.lock -c 'rm victim'",
    "x=rm; $x victim", "$(echo rm) victim", "`echo rm` victim", '"$(printf rm)" victim', "${x:-rm} victim",
    "/bin/r[m] victim", "/bin/r? victim", "alias x=rm\nx victim", "trap 'rm victim' EXIT", "f() { rm victim; }; f",
    "rm ./victim", "rm -- victim", "rm vic*", "rm $(echo victim)", "sh -c \"$(echo rm victim)\"",
    "setpriv rm victim", "prlimit rm victim", "unshare rm victim", "prlimit --nofile=100 rm victim",
    "set -- rm victim; \"$@\"", "IFS=,; x=rm,victim; $x", ". /dev/stdin <<EOF\nrm victim\nEOF",
    "printf 'rm victim' > s.sh; sh s.sh", "sh <<EOF\nrm victim\nEOF", "echo victim > l; xargs -a l rm",
    "nice --adjustment=3 rm victim", "echo 'rm victim' > ev; BASH_ENV=./ev bash -c 'echo hi'",
    "printf '#!/bin/sh\\nrm victim\\n' > ls; chmod +x ls; PATH=.:$PATH; ls",
    "git init -q r && cd r && git -c core.fsmonitor='rm ../victim' status",
    "env 'BASH_FUNC_echo%%=() { rm victim; }' bash -c 'echo hi'", "env BASH_ENV=./ev bash -c 'echo hi'",
    "git init -q r && cd r && GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.fsmonitor GIT_CONFIG_VALUE_0='rm ../victim' git status",
    "git init -q r && cd r && echo x > f && git add f && GIT_EXTERNAL_DIFF='rm ../victim;' git diff --cached --ext-diff",
    "git init -q r && cd r && git -c alias.x='!rm ../victim' x", "command -- rm victim", "env -S'rm victim'", "find . -name victim -ok rm {} \\; <<EOF\ny\nEOF",
]
# Places a command can hide in: `{}` is the command.
EMBEDDINGS = [
    "{}", "echo hi; {}", "echo hi && {}", "false || {}", "echo hi\n{}", "echo hi #'\n{}", "echo hi # it's fine\n{}",
    "echo $({})", "echo `{}`", "echo \"$({})\"", "({})", "{{ {}; }}", "if true; then {}; fi", "if false; then :; else {}; fi",
    "while true; do {}; break; done", "for i in 1; do {}; done", "case x in x) {};; esac", "x=$({})", "! {}",
    "echo ${{x:-$({})}}", "cat <<EOF\n$({})\nEOF", "{} >/dev/null 2>&1", "true && ({}) || true", "echo hi & {}\nwait",
    "echo hi;\n\n{}", "echo $((1 + $({} ; echo 1)))", "echo hi | {{ {}; }}", "until {}; do break; done",
    "g() {{ {}; }}\ng", "echo hi \\\n; {}",
]
# The issue's examples, word for word.
EXAMPLES = [
    "echo hi #'\nrm -rf victim", "echo hi &>/dev/null rm -rf victim", "echo $(rm -rf victim)", "echo `rm -rf victim`",
    "(rm -rf victim)", "{ rm -rf victim; }", "FOO=1 rm victim", "\\rm victim", "'rm' victim", "/bin/rm victim",
    "command rm victim", "env rm victim", "echo victim | xargs rm", "sh -c 'rm -rf victim'",
]
_NO_BACKQUOTES = ("`", "\\", "\"")


def _attacks() -> list[str]:
    found = list(EXAMPLES)
    for embedding in EMBEDDINGS:
        for form in FORMS:
            if "`" in embedding and any(mark in form for mark in _NO_BACKQUOTES):
                continue  # a backquote inside backquotes needs its own escaping
            if embedding.startswith("echo hi #'") and "'" in form:
                continue
            command = embedding.replace("{}", "\0").replace("{{", "{").replace("}}", "}").replace("\0", form) \
                if embedding != "{}" else form
            if command not in found:
                found.append(command)
    return found


ATTACKS = _attacks()
HARMLESS = [
    "echo hi", "echo hi # rm -rf victim", "echo 'rm -rf victim'", "echo \"rm victim\"", "echo hi && ls",
    "cat <<'EOF'\n$(rm victim)\nEOF", "echo '$(rm victim)'", "echo \"\\$(rm victim)\"", "echo hi 2>&1", "echo hi >/dev/null",
    "ls | cat", "echo '`rm victim`'", "echo hi; # ; rm victim", "echo rm victim # `rm victim`", "cat <<\"EOF\"\n`rm victim`\nEOF",
    "ls -la && echo done", "echo a\\\nb", "echo hi || echo 'rm victim'", "echo rm victim | cat",
    "cat <<EOF\nrm victim\nEOF", "echo victim >/dev/null", "[ -f victim ] && echo there", "test -e victim || ls",
]
ALLOW = ["Bash(echo hi:*)", "Bash(echo:*)", "Bash(ls:*)", "Bash(cat:*)", "Bash(true)", "Bash(false)", "Bash(wait)",
         "Bash(printf:*)", "Bash(chmod:*)", "Bash(cd:*)", "Bash(git init:*)", "Bash(git status:*)", "Bash(git add:*)",
         "Bash(git diff:*)", "Bash([:*)", "Bash(test:*)"]


def _victim_survives(folder: Path, command: str) -> bool:
    victim = folder / "victim"
    victim.write_text("precious\n")
    subprocess.run(["/bin/sh", "-c", command], cwd=folder, stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
    survived = victim.exists()
    victim.unlink(missing_ok=True)
    return survived


def _settings(folder: Path, permissions: dict[str, object]) -> Path:
    (folder / ".commandcode").mkdir(parents=True)
    (folder / ".commandcode" / "settings.json").write_text(json.dumps({"permissions": permissions}))
    return folder


@pytest.fixture(scope="module")
def attacks(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A folder, and the combinations that delete the victim there when nothing checks them (an
    alias defined inside a compound command, say, takes effect only on a later line)."""
    folder = tmp_path_factory.mktemp("range")
    deleting = [command for command in ATTACKS if not _victim_survives(folder, command)]
    assert len(deleting) >= 200 and set(EXAMPLES) <= set(deleting), (len(deleting), set(EXAMPLES) - set(deleting))
    return folder, deleting


def _policy(setup: str, tmp_path: Path) -> Policy:
    """`deny`: a deny rule `Bash(rm:*)` in bypass mode; `allow`: rules for harmless programs, headless."""
    if setup == "deny":
        return Policy(_settings(tmp_path / "p", {"deny": ["Bash(rm:*)"]}), mode="bypassPermissions")
    return Policy(_settings(tmp_path / "p", {"allow": ALLOW}))


@pytest.mark.parametrize("setup", ["deny", "allow"])
def test_the_issues_examples_are_refused(setup: str, tmp_path: Path, home: Path) -> None:
    policy = _policy(setup, tmp_path)
    ran = [command for command in EXAMPLES if policy("bash", {"command": command}) is None]
    assert not ran, ran


@pytest.mark.slow
@pytest.mark.parametrize("setup", ["deny", "allow"])
def test_no_attack_runs_past_the_rules(setup: str, attacks: tuple[Path, list[str]], tmp_path: Path, home: Path) -> None:
    range_folder, commands = attacks
    policy = _policy(setup, tmp_path)
    walked_around = [command for command in commands
                     if policy("bash", {"command": command}) is None and not _victim_survives(range_folder, command)]
    assert not walked_around, f"{len(walked_around)} of {len(commands)} commands deleted the victim: {walked_around[:20]}"


@pytest.mark.parametrize("setup", ["deny", "allow"])
def test_harmless_commands_still_run(setup: str, tmp_path: Path, home: Path) -> None:
    policy = _policy(setup, tmp_path)
    refused = [command for command in HARMLESS if policy("bash", {"command": command}) is not None]
    assert not refused, refused
    (tmp_path / "range").mkdir()
    assert all(_victim_survives(tmp_path / "range", command) for command in HARMLESS)


@pytest.mark.parametrize("rules, bad", [
    ({"deny": ["Bash(rm:*"]}, '"Bash(rm:*"'),
    ({"deny": "Bash(rm:*)"}, "permissions.deny: expected a list of strings, got a string"),
    ({"deny": ["Bash(rm:*)", 7]}, "permissions.deny: expected a list of strings"),
    ({"allow": ["Bsh(ls)"]}, '"Bsh(ls)"'),
    ({"ask": ["Bash(echo 'x)"]}, "\"Bash(echo 'x)\""),
])
def test_a_settings_file_whose_rules_do_not_parse_is_refused(rules: dict[str, object], bad: str, tmp_path: Path,
                                                            home: Path) -> None:
    from helpers.cli import run_cli

    project = _settings(tmp_path / "p", rules)
    (project / "victim").write_text("precious\n")
    call = json.dumps({"command": "rm -rf victim"})
    completed = run_cli(["-p", f"call bash {call}", "--yolo"], project, home)
    assert completed.returncode != 0 and (project / "victim").exists()
    lines = [line for line in completed.stderr.splitlines() if line.strip()]
    assert any(bad in line and "settings.json" in line for line in lines), completed.stderr
    assert "Traceback" not in completed.stderr


def test_the_issues_examples_through_a_real_yolo_run(tmp_path: Path, home: Path) -> None:
    """The same examples as tool calls of one `--yolo -p` run under a deny rule: every victim stays."""
    from helpers.cli import run_cli

    project = _settings(tmp_path / "p", {"deny": ["Bash(rm:*)"]})
    calls = []
    for index, command in enumerate(EXAMPLES):
        (project / f"victim{index}").write_text("precious\n")
        calls.append(f"call bash {json.dumps({'command': command.replace('victim', f'victim{index}')})}")
    completed = run_cli(["-p", "\n".join(calls), "--yolo", "--output-format", "json"], project, home, timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert [index for index in range(len(EXAMPLES)) if not (project / f"victim{index}").exists()] == []
    assert json.loads(completed.stdout)["tool_calls"] == len(EXAMPLES)
