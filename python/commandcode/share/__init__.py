"""Sharing a session: the live share server (`server.py`), its client (`client.py`), what a share
leaves on disk (`state.py`) and secret gists through `gh` (`gist.py`). A front end: the pages are
rendered by `export/`, with secrets redacted and paths sanitized."""
