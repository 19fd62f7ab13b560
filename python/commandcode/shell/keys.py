"""The shell's key bindings (prompt_toolkit), on top of its Emacs-style editing, Up/Down history
and Ctrl+R search:

- Enter sends; Alt+Enter (Esc then Enter) inserts a newline.
- While a turn runs: Esc or Ctrl+C interrupts it at once (eager: no wait for a longer key), and
  Esc also puts the queued messages back into the editor.
- On an empty prompt with no turn running: Esc twice within `timeoutlen` (0.5 s) opens the rewind
  menu; Ctrl+C clears a line with text, and twice on an empty line exits; Ctrl+D exits.
- Shift+Tab cycles the permission mode; Ctrl+O expands the last tool call.

The bindings only signal the `ShellKeys` owner (`shell/app.py`); they hold no state of their own.
"""

from __future__ import annotations

from typing import Protocol

from prompt_toolkit.filters import Condition
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

TIMEOUTLEN = 0.5  # Esc Esc: both must be set, or the second Esc never arrives in time
TTIMEOUTLEN = 0.05


class ShellKeys(Protocol):
    """What the bindings ask of the shell."""

    def turn_running(self) -> bool: ...

    def interrupt_turn(self, *, restore_queue: bool) -> None: ...

    def signal(self, kind: str) -> None: ...

    def cycle_permission_mode(self) -> None: ...


def build_bindings(owner: ShellKeys) -> KeyBindings:
    """The shell's bindings for `owner`."""
    bindings = KeyBindings()
    running = Condition(owner.turn_running)

    @Condition
    def empty() -> bool:
        from prompt_toolkit.application import get_app

        return not get_app().current_buffer.text

    @bindings.add("escape", "enter")
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    @bindings.add("escape", filter=running, eager=True)
    def _interrupt_and_restore(event: KeyPressEvent) -> None:
        owner.interrupt_turn(restore_queue=True)

    @bindings.add("c-c", filter=running, eager=True)
    def _interrupt(event: KeyPressEvent) -> None:
        owner.interrupt_turn(restore_queue=False)

    @bindings.add("escape", "escape", filter=~running & empty)
    def _rewind_menu(event: KeyPressEvent) -> None:
        owner.signal("rewind")

    @bindings.add("c-c", filter=~running)
    def _clear_or_exit(event: KeyPressEvent) -> None:
        if event.current_buffer.text:
            event.current_buffer.reset()
        else:
            owner.signal("ctrl-c")

    @bindings.add("s-tab")
    def _cycle_mode(event: KeyPressEvent) -> None:
        owner.cycle_permission_mode()

    @bindings.add("c-o")
    def _expand(event: KeyPressEvent) -> None:
        owner.signal("expand")

    return bindings
