"""Sharing a session, the front end: the embedded one-machine share server (`server.py`), the
team share service (`service/`: HTTP, its stores in SQLite or PostgreSQL) and secret gists through
`gh` (`gist.py`). Publishing, the share files and the outbox are the `sharing/` service; pages are
rendered by `export/`, with secrets redacted and paths sanitized."""
