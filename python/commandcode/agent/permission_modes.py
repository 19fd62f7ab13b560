"""The permission modes, and the order Shift+Tab cycles them (a module of its own: the shell's
launch flags check them before anything heavier is imported)."""

PERMISSION_MODES = ("default", "acceptEdits", "plan", "bypassPermissions")


def shift_tab_cycle(*, bypass: bool) -> tuple[str, ...]:
    """The modes Shift+Tab steps through: `bypassPermissions` only when the shell was launched
    in it (`--yolo`, `--permission-mode bypassPermissions`) or started there, as in Claude Code;
    otherwise three presses would silently turn every permission question off."""
    return PERMISSION_MODES if bypass else PERMISSION_MODES[:3]
