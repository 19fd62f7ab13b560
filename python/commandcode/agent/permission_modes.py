"""The permission modes, in the order Shift+Tab cycles them (a module of its own: the shell's
launch flags check them before anything heavier is imported)."""

PERMISSION_MODES = ("default", "acceptEdits", "plan", "bypassPermissions")
