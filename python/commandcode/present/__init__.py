"""Presentation shared by every front end (`cli/`, `shell/`, `ui/`), in the front-end tier.

`console.py` is terminal-safe text and the one error line (`printable`, `safe`, `fail`, `warn`,
the lazy rich consoles); `status.py` the rows and line a session's status is shown as;
`clipboard.py` how text reaches the clipboard. Front ends share these instead of importing
each other (`tests/unit/test_layers.py` forbids front end → front end imports).
"""
