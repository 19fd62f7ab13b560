"""`/fork [name]` (alias `/branch`), `/clone` and `/tree`: one conversation becomes many.

Each is a thin call on the running session (`agent.navigation.fork`, `.clone`, the tree screen's
`goto`/`label`); `/fork` and `/clone` switch the shell into the copy and keep the process, so
session-scoped permission grants carry over (a `--fork-session` launch is a new process and
does not).
"""

from __future__ import annotations

from ...errors import CommandcodeError
from ..slash import Shell, SlashCommand


def _fork(shell: Shell, args: str) -> None:
    source = shell.agent
    name = args.strip() or None
    copy = source.navigation.fork(name)
    shell.switch_to(copy, keep_grants=True)
    shell.notice(f"forked {source.session_id} into {copy.session_id}" + (f" ({name})" if name else "")
                 + f"; the original stays resumable with `commandcode -r {source.session_id}`")


def _clone(shell: Shell, args: str) -> None:
    if args.strip():
        raise CommandcodeError("/clone takes no arguments", hint="name the clone afterwards with /rename")
    source = shell.agent
    copy = source.navigation.clone()
    shell.switch_to(copy, keep_grants=True)
    shell.notice(f"cloned the active branch of {source.session_id} into {copy.session_id} (no checkpoints)")


def _tree(shell: Shell, args: str) -> None:
    if args.strip():
        raise CommandcodeError("/tree takes no arguments")
    agent = shell.agent
    if not agent.files.transcript.is_file():
        raise CommandcodeError("this session has no tree yet", hint="it is saved with the first answered prompt")
    from ...ui.screens.tree import TreeScreen  # Textual: only when the screen opens

    outcome = shell.run_screen(TreeScreen(agent, shell.project))
    if isinstance(outcome, str) and outcome:
        shell.notice(outcome)


COMMANDS = [
    SlashCommand("fork", _fork, "Copy this session (every branch and checkpoint) into a new one and switch to it",
                 aliases=("branch",),
                 help="/fork [name] — copies the whole tree and the checkpoints into a new session and switches "
                      "to it; the original is untouched. A name must be unique in the project (at most 200 "
                      "characters)."),
    SlashCommand("clone", _clone, "Copy only the active branch into a new session and switch to it",
                 help="/clone — the active branch, root to leaf, as a straight chain in a new session (labels "
                      "kept, no checkpoints: a rewind in the clone starts empty)."),
    SlashCommand("tree", _tree, "Browse the session tree: jump, fold, search, label, filter",
                 help="/tree — every branch of the session; Enter jumps to an entry (offering a summary of "
                      "the branch left behind), Space folds, / searches, l labels, f cycles the filter, q leaves."),
]
