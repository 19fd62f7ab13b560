"""The team share service (`commandcode share serve --store URL`): `store.py` (the tables, SQLite),
`pgstore.py` (PostgreSQL: the only psycopg import), `hub.py` (one replica's live shares and the
fan-out of notifications), `app.py` (the ASGI application: publish, page, server-sent events),
`replica.py` (uvicorn serving it: the only uvicorn import), `main.py` (what the CLI calls)."""
