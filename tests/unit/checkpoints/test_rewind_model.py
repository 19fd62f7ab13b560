"""Model-based test of the rewind timeline (issue 26 §4): random sequences of turns (edit-tool
writes and `bash` deletions), rewinds of every mode to any checkpoint (rewound ones included),
redos, and reopening the session, checked after every step against a written model of what each
step should leave: the project's files, the conversation's context (its prompts, and where a
summary stands), and the checkpoints `checkpoints list` offers.

In-process `AgentSession` on the offline model (real transcripts, checkpoints files, object
store and project files; what `commandcode -p` and `commandcode rewind` call).

The model (what a demanding user expects):

- a turn k records the state it starts from (files, context); it adds its prompt to the context;
- `both` to k: files and context as when turn k started; `conversation`: the context only;
  `code`: the files only;
- `summarize-from k`: the path up to where turn k started, then a summary of the context after
  it; `summarize-to k`: a compaction of the context before it, keeping the path from turn k on.
  The context a path shows is the real CLI's (format §4.4), which the model computes itself. A
  summary is refused when turn k's starting point is not on the path or a compaction lies after
  it (the summary would undo or repeat it: not offered either), and not offered for a checkpoint rewound past;
- the checkpoints offered are exactly the turns whose prompts the context holds, as themselves
  or inside a summary (no phantom: none whose prompt the conversation does not hold);
- `--redo` undoes the newest rewind not undone: files and context as just before it; it is
  refused (nothing changes) when a turn was made since, whose edits it would overwrite, and when
  there is nothing to redo;
- a refused step changes nothing.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from commandcode.agent.runtime import AgentSession
from commandcode.checkpoints.modes import RewindMode
from commandcode.errors import CheckpointError, CommandcodeError
from commandcode.sessions.reader import open_session
from helpers.checkpoints import snapshot

PATHS = ("a.txt", "src/b.txt", "src/deep/c.txt", "d.txt")
SEEDS = (1, 2, 3, 4, 5, 6)  # 80 more seeds (41-120) were run once while building it: all passed
STEPS = 40

@dataclass(frozen=True)
class Item:
    """An entry of the conversation's path that shows in the context: turn k's prompt (`p`), a
    branch summary (`b`) or a compaction (`c`, keeping the path from index `kept`) of `labels`."""

    kind: str
    labels: frozenset[int]
    kept: int = -1


Files = dict[str, bytes]


@dataclass
class State:
    files: Files
    path: list[Item]


@dataclass
class Op:
    before: State
    turns: int  # turns made when it ran: a redo is refused once more were made


def rendered(path: list[Item]) -> list[tuple[Item, float]]:
    """The context a path shows (format §4.4, the real CLI's rule): the last compaction first,
    then the path from its kept entry up to it, then everything after it; each item with its
    place on the path (a compaction stands just before its kept entries)."""
    last = max((index for index, item in enumerate(path) if item.kind == "c"), default=None)
    if last is None:
        return [(item, float(index)) for index, item in enumerate(path)]
    kept = path[last].kept
    return ([(path[last], kept - 0.5)] + [(path[index], float(index)) for index in range(kept, last)]
            + [(path[index], float(index)) for index in range(last + 1, len(path))])


def labels_of(items: list[Item]) -> frozenset[int]:
    return frozenset().union(*(item.labels for item in items))


@dataclass
class Model:
    state: State = field(default_factory=lambda: State({}, []))
    starts: dict[int, State] = field(default_factory=dict)  # checkpoint k -> the state turn k started from
    ops: list[Op] = field(default_factory=list)  # rewinds in effect, oldest first
    counts: dict[str, int] = field(default_factory=dict)

    def context(self) -> list[Item]:
        return [item for item, _ in rendered(self.state.path)]

    def visible(self) -> list[int]:
        """The checkpoints offered: the turns the context holds, as prompts or inside summaries."""
        return sorted(labels_of(self.context()))

    def copy(self) -> State:
        return State(dict(self.state.files), list(self.state.path))

    def note(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1


def _files(project: Path) -> Files:
    return {name: data for name, (kind, data, _) in snapshot(project).items() if kind == "file"}


def _context(agent: AgentSession) -> list[tuple[str, int | None]]:
    """The context as `("p", k)` per turn prompt and `("s", None)` per summary."""
    found: list[tuple[str, int | None]] = []
    for message in open_session(agent.files.transcript).context().messages:
        if message.get("role") != "user" or not isinstance(message.get("content"), list):
            continue
        text = "".join(part.get("text", "") for part in message["content"] if isinstance(part, dict))
        match = re.match(r"turn-(\d+)\b", text)
        if match:
            found.append(("p", int(match.group(1))))
        elif "summary" in text[:120]:
            found.append(("s", None))
    return found


def _expected_context(model: Model) -> list[tuple[str, int | None]]:
    return [("p", next(iter(item.labels))) if item.kind == "p" else ("s", None) for item in model.context()]


def _turn(agent: AgentSession, model: Model, rng: random.Random, number: int) -> None:
    model.starts[number] = model.copy()
    calls = []
    for _ in range(rng.randint(0, 2)):
        name = rng.choice(PATHS)
        content = f"{number}-{rng.randrange(100)}\n"
        calls.append("call write_file " + json.dumps({"file_path": name, "content": content}))
        model.state.files[name] = content.encode()
    if model.state.files and rng.random() < 0.3:
        name = rng.choice(sorted(model.state.files))
        calls.append("call bash " + json.dumps({"command": f"rm -f {name}"}))
        model.state.files.pop(name)
    agent.turns.run_turn("\n".join([f"turn-{number}", *calls]))
    model.state.path.append(Item("p", frozenset({number})))
    model.note("turn")


def _summary(model: Model, number: int, mode: RewindMode) -> list[Item] | None:
    """The path a summary of checkpoint `number` leaves, or None when it is refused: its starting
    point is not on the path, a compaction lies after it (the summary would undo or repeat it),
    or there is nothing after (`summarize-from`) or before (`summarize-to`) it."""
    start, path = model.starts[number].path, model.state.path
    cut = len(start)  # the turn started after path[cut - 1]
    if path[:cut] != start or any(item.kind == "c" for item in path[cut:]):
        return None
    before = [item for item, place in rendered(path) if place <= cut - 1]
    after = [item for item, place in rendered(path) if place > cut - 1]
    if mode is RewindMode.SUMMARIZE_FROM:
        return [*path[:cut], Item("b", labels_of(after))] if after else None
    return [*path, Item("c", labels_of(before), cut)] if before else None


def _compacted_since(model: Model, number: int) -> bool:
    """Whether a compaction on the path comes after checkpoint `number`'s starting point (from
    the path's start when that point is not on it): no summary is offered there."""
    start, path = model.starts[number].path, model.state.path
    cut = len(start) if path[:len(start)] == start else 0
    return any(item.kind == "c" for item in path[cut:])


def _rewind(agent: AgentSession, model: Model, number: int, mode: RewindMode, turns: int) -> None:
    """One rewind, checked against the model (which it then updates)."""
    _, offered = agent.rewinds.offered_modes(number)
    start = model.starts[number]
    if mode not in offered:
        if mode in (RewindMode.CODE, RewindMode.BOTH):
            assert start.files == model.state.files, f"checkpoint {number} offers no code rewind, yet files changed since"
        if mode in (RewindMode.SUMMARIZE_FROM, RewindMode.SUMMARIZE_TO):
            assert number not in model.visible() or _compacted_since(model, number) or \
                (mode is RewindMode.SUMMARIZE_TO and not start.path), \
                f"checkpoint {number} is in the conversation and no compaction passed it, yet offers no {mode.value}"
        with pytest.raises(CheckpointError, match="does not offer"):
            agent.rewinds.rewind(number, mode)
        model.note("refused: not offered")
        return
    before = model.copy()
    if mode in (RewindMode.SUMMARIZE_FROM, RewindMode.SUMMARIZE_TO):
        assert number in model.visible(), f"{mode.value} offered for checkpoint {number}, not in the conversation"
        assert not _compacted_since(model, number), f"{mode.value} offered for checkpoint {number}, a compaction passed"
        path = _summary(model, number, mode)
        if path is None:
            with pytest.raises(CommandcodeError):
                agent.rewinds.rewind(number, mode)
            model.note(f"refused: {mode.value}")
            return
        agent.rewinds.rewind(number, mode)
        model.state.path = path
    else:
        agent.rewinds.rewind(number, mode)
        if mode.restores_code:
            model.state.files = dict(start.files)
        if mode.moves_conversation:
            model.state.path = list(start.path)
    model.ops.append(Op(before, turns))
    model.note(mode.value)


def _redo(agent: AgentSession, model: Model, turns: int) -> None:
    if not model.ops:
        assert not agent.rewinds.can_redo()
        with pytest.raises(CheckpointError, match="nothing to redo"):
            agent.rewinds.redo()
        model.note("refused: nothing to redo")
        return
    if model.ops[-1].turns != turns:
        assert not agent.rewinds.can_redo(), "a redo after a new turn is offered"
        with pytest.raises(CheckpointError, match="cannot redo"):
            agent.rewinds.redo()
        model.note("refused: turns since")
        return
    assert agent.rewinds.can_redo()
    agent.rewinds.redo()
    model.state = model.ops.pop().before
    model.note("redo")


def _check(agent: AgentSession, project: Path, model: Model, label: str) -> None:
    assert _files(project) == model.state.files, f"{label}: files"
    actual, expected = _context(agent), _expected_context(model)
    assert actual == expected, f"{label}: context {actual}, the model says {expected}"
    shown = [choice.number for choice in agent.rewinds.checkpoint_choices()]
    assert shown == model.visible(), f"{label}: checkpoints offered"


@pytest.mark.slow
@pytest.mark.parametrize("seed", SEEDS)
def test_random_turns_rewinds_and_redos_leave_what_the_model_says(project_here: Path, seed: int) -> None:
    project = project_here
    (project / "d.txt").write_text("before the session\n")
    rng = random.Random(seed)
    model = Model(state=State(_files(project), []))
    turns = 0
    agent = AgentSession.start(project, permission_mode="bypassPermissions").__enter__()
    try:
        history: list[str] = []
        for step in range(STEPS):
            roll = rng.random()
            context_before = _expected_context(model)
            label = f"step {step}"
            if turns == 0 or roll < 0.35:
                turns += 1
                _turn(agent, model, rng, turns)
                label = f"step {step}: turn {turns}"
            elif roll < 0.75:
                number = rng.randint(1, turns)
                mode = rng.choice(list(RewindMode))
                label = f"step {step}: rewind --to {number} --mode {mode.value}"
                _rewind(agent, model, number, mode, turns)
            elif roll < 0.92:
                label = f"step {step}: redo"
                _redo(agent, model, turns)
            else:
                label = f"step {step}: reopen"
                session = agent.session_id
                agent.close()
                agent = AgentSession.start(project, reference=session, permission_mode="bypassPermissions").__enter__()
            history.append(label)
            try:
                _check(agent, project, model, label)
            except AssertionError as error:
                raise AssertionError(f"{error}\nsteps: {history}\ncontext before: {context_before}") from None
    except CommandcodeError as error:
        raise AssertionError(f"{error}\nsteps: {history}, then {label}\ncontext: {_expected_context(model)}") from None
    finally:
        agent.close()
    assert model.counts.get("turn", 0) >= 5 and sum(model.counts.get(mode.value, 0) for mode in RewindMode) >= 5, model.counts
