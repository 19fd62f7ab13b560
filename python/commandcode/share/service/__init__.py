"""The team share service (`commandcode share serve --store URL`): `store.py` (the tables, SQLite),
`pgstore.py` (PostgreSQL: the only psycopg import), `hub.py` (one replica's live shares and the
fan-out of notifications), `app.py` (HTTP: publish, page, server-sent events), `main.py` (what the
CLI calls)."""
