"""The shell's numbers agree with the engine over random sequences (issue 31), through the real
shell in a pty: after every turn, interrupted turn, rewind (each mode a checkpoint offers), redo,
`/tree` jump and `/compact`, the status line, `/status`, `sessions status` and `checkpoints list`
show the same context tokens and the same checkpoint count. Several seeds on the offline model,
and one against the OpenAI-compatible stub, whose replies report usage (the meter counts from
it). A project window of 3,000 tokens makes compactions (manual and automatic) happen. The
engine's side (`sessions status|context`, `checkpoints list`) runs in the test's process, the
shell in its own."""

from __future__ import annotations

import contextlib
import json
import random
import re
import time
from pathlib import Path
from typing import Any

import pytest

from helpers.cli import run_in_process, transcripts
from helpers.openai_stub import OpenAIStub, text
from helpers.terminal import CTRL_C, ENTER, ESC, TAB, ShellSession, shell_session

pytestmark = [pytest.mark.terminal, pytest.mark.slow]

DOWN = "\x1b[B"
FILLER = " ".join(["words"] * 30)
CHECK_TIMEOUT = 20.0  # the status line is refreshed in the background: how long it may lag


class Driver:
    """One shell, the operations on it, and the agreement check."""

    def __init__(self, shell: ShellSession, home: Path, workdir: Path, rng: random.Random, *,
                 stub: OpenAIStub | None = None) -> None:
        self.shell, self.home, self.workdir, self.rng, self.stub = shell, home, workdir, rng, stub
        self.turns = 0
        self.log: list[str] = []

    # ---- the engine's view

    def _sid(self) -> str:
        """The session's id, once its transcript is on disk: the reply is on the screen (and the
        input box under it) while the turn still commits, which a loaded machine makes visible."""
        deadline = time.monotonic() + CHECK_TIMEOUT
        while not (found := transcripts(self.home)) and time.monotonic() < deadline:
            self.shell.pump(0.1)
        [transcript] = found
        return transcript.stem

    def _read(self, argv: list[str]) -> Any:
        """A read command's JSON, run in this process (the `home` fixture's environment, the
        project as cwd): the engine's own code, without a CLI start-up for each of the dozens of
        checks (most of the test's time when each was a process)."""
        with contextlib.chdir(self.workdir):
            code, out, err = run_in_process(argv)
        assert code == 0, (argv, err)
        return json.loads(out)

    def engine(self) -> tuple[int, int, list[dict[str, Any]]]:
        sid = self._sid()
        status: Any = self._read(["sessions", "status", sid, "--json"])
        listed: Any = self._read(["checkpoints", "list", sid, "--json"])
        rows = listed["checkpoints"]
        assert status["checkpoints"]["count"] == len(rows), (self.log, status["checkpoints"], rows)
        return status["context_tokens"], len(rows), rows

    def context_prompts(self) -> list[str]:
        value: Any = self._read(["sessions", "context", self._sid(), "--json"])
        return [block.get("text", "") for message in value["messages"] if message["role"] == "user"
                for block in message["content"] if block.get("type") == "text"]

    def check(self) -> None:
        """The status line, /status and the engine agree (the status line may lag a moment)."""
        tokens, count, _ = self.engine()
        try:
            self.shell.wait_screen(f" {tokens:,} tokens (", timeout=CHECK_TIMEOUT)
            self.shell.wait_screen(f" · {count} checkpoint(s)", timeout=CHECK_TIMEOUT)
        except AssertionError as error:
            raise AssertionError(f"after {self.log}: the status line is not at {tokens:,} tokens, {count} "
                                 f"checkpoint(s)\n{error}") from None
        # this /status's own answer: an earlier one's lines stay on the screen, so waiting for the
        # text alone could read the old answer (its last lines come after the context's)
        answers = self.shell.raw.count(b"checkpoint(s), ")
        self.shell.line("/status")
        self.shell.wait_count("checkpoint(s), ", answers + 1)
        screen = self.shell.wait_screen("checkpoint(s), ")
        shown = re.findall(r"context\s+([\d,]+) tokens, ", screen)
        counted = re.findall(r"checkpoints\s+(\d+) checkpoint\(s\), ", screen)
        assert shown and counted, screen
        assert (int(shown[-1].replace(",", "")), int(counted[-1])) == (tokens, count), (self.log, screen)
        self.shell.wait_prompt()

    # ---- operations

    def turn(self) -> None:
        self.turns += 1
        number = self.turns
        if self.stub is None and self.rng.random() < 0.5:
            line, answer = f'call write_file {{"file_path": "f{number % 3}.txt", "content": "v{number}"}}', "Ran 1 tool call(s)"
        else:
            line, answer = f"t{number} {FILLER}", f"You said: t{number} "
        # This turn's answer in the output (an earlier turn's is still on the screen, and the
        # screen may have scrolled this one's first line away), then the turn's end: its live
        # region ("… — Esc interrupts") gone.
        answers = self.shell.raw.count(answer.encode())
        self.shell.line(line)
        self.shell.wait_count(answer, answers + 1)
        self.shell.wait_until(lambda screen: "Esc interrupts" not in screen, "the turn's end (its live region gone)")
        self.shell.wait_prompt()

    def interrupted(self) -> None:
        self.turns += 1
        if self.stub is None:
            self.shell.exchange(f'call bash {{"command": "sleep 60; echo t{self.turns}"}}', "running — Esc interrupts")
        else:
            reply = text(f"cut t{self.turns} ", "never sent", usage=(500, 9, 0))
            reply.hang_after_first_chunk = True
            self.stub.reply(reply)
            self.shell.exchange(f"t{self.turns} to interrupt", f"cut t{self.turns}")
        self.shell.send(ESC)
        self.shell.wait_screen("Interrupted · what was said so far is kept")
        self.shell.wait_prompt()

    def compact(self) -> None:
        self.shell.line("/compact")
        screen = self.shell.wait_screen("/compact")
        while "compacted:" not in screen and "nothing to compact" not in screen:
            screen = self.shell.wait_screen("compact")
            self.shell.pump(0.2)
            screen = self.shell.text()
        self.shell.wait_prompt()

    def rewind(self) -> None:
        _, _, rows = self.engine()
        self.shell.line("/rewind")
        screen = self.shell.wait_screen("Rewind")
        if "No checkpoints yet" in screen or not rows:
            self.shell.send(ESC)
            self.shell.wait_screen("Rewind cancelled")
            return
        self.shell.wait_screen("Enter: choose what to restore") if "Redo: undo" not in screen else None
        offset = 1 if "Redo: undo the last rewind" in self.shell.text() else 0
        position = self.rng.randrange(len(rows))
        row = list(reversed(rows))[position]
        for _ in range(offset + position):
            self.shell.send(DOWN)
        self.shell.send(ENTER)
        self.shell.wait_screen(f"Checkpoint {row['number']}:")
        modes = row["modes"]
        choice = self.rng.randrange(len(modes))
        for _ in range(choice):
            self.shell.send(DOWN)
        self.shell.send(ENTER)
        self.shell.wait_screen("Yes, ")
        self.shell.send(ENTER)
        self.log[-1] += f" {row['number']} {modes[choice]}"
        self.shell.wait_screen(f"checkpoint {row['number']}")
        if modes[choice] in ("both", "conversation"):  # the rewound prompt is put back in the input box
            self.shell.wait_screen("> " + str(row["prompt"])[:20])
            self.shell.send(CTRL_C)  # cleared
        self.shell.wait_prompt()

    def redo(self) -> None:
        self.shell.line("/rewind")
        screen = self.shell.wait_screen("Rewind")
        self.shell.pump(0.5)
        screen = self.shell.text()
        if "Redo: undo the last rewind" not in screen:
            self.shell.send(ESC)
            self.shell.wait_screen("Rewind cancelled")
            self.log[-1] += " (none)"
            return
        self.shell.send(ENTER)
        self.shell.wait_screen("Yes, redo")
        self.shell.send(ENTER)
        self.shell.wait_screen("Undid the rewind to checkpoint")
        self.shell.wait_prompt()

    def jump(self) -> None:
        prompts = [prompt.split()[0] for prompt in self.context_prompts() if re.match(r"t\d+ ", prompt)]
        if len(prompts) < 2:
            self.log[-1] += " (none)"
            return
        target = self.rng.choice(prompts[:-1])
        self.shell.line("/tree")
        self.shell.wait_screen("filter: ")
        self.shell.send("/")
        self.shell.wait_screen("Search for")
        self.shell.send(f"You said: {target} ")
        self.shell.send(ENTER)
        self.shell.wait_screen("match")
        self.shell.send(ENTER)
        self.log[-1] += f" {target}"
        for _ in range(100):
            screen = self.shell.text()
            if "Summarize them?" in screen:
                self.shell.send(TAB)  # "Skip summary"
                self.shell.send(ENTER)
                break
            if "moved to entry" in screen:
                break
            self.shell.pump(0.2)
        self.shell.wait_screen("moved to entry")
        self.shell.wait_prompt()

    def run(self, steps: int) -> None:
        self.log.append("turn")
        self.turn()
        self.check()
        operations = {"turn": (self.turn, 4), "interrupted": (self.interrupted, 2), "rewind": (self.rewind, 3),
                      "redo": (self.redo, 2), "jump": (self.jump, 1), "compact": (self.compact, 1)}
        names = list(operations)  # each kind at least once, the rest drawn by weight, in random order
        sequence = names + self.rng.choices(names, weights=[operations[key][1] for key in names],
                                            k=max(0, steps - len(names)))
        self.rng.shuffle(sequence)
        for name in sequence:
            self.log.append(name)
            operations[name][0]()
            self.check()


def _windowed(workdir: Path) -> None:
    settings = workdir / ".commandcode" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"contextWindow": 3000}))


@pytest.mark.parametrize("seed", [3101, 3102, 3103])
def test_the_numbers_agree_after_every_operation_offline(seed: int, home: Path, workdir: Path) -> None:
    _windowed(workdir)
    shell = shell_session(workdir, home, ["--yolo"], columns=200, rows=50)
    shell.wait_prompt()
    driver = Driver(shell, home, workdir, random.Random(seed))
    driver.run(10)
    print("operations:", driver.log)
    shell.line("/exit")
    assert shell.wait_exit() == 0


def test_the_numbers_agree_against_a_provider_reporting_usage(openai_stub: OpenAIStub, home: Path,
                                                              workdir: Path) -> None:
    _windowed(workdir)
    shell = shell_session(workdir, home, ["--model", "local/stub-model"], columns=200, rows=50)
    shell.wait_prompt()
    driver = Driver(shell, home, workdir, random.Random(3104), stub=openai_stub)
    driver.run(8)
    print("operations:", driver.log)
    shell.line("/exit")
    assert shell.wait_exit() == 0
    assert any(request.body.get("messages") for request in openai_stub.requests)
