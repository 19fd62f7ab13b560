"""Sharing a session, the service side of `/share` (a services package): what a share leaves on
disk (`state.py`), publishing and revoking (`client.py`: the embedded local server, or a team's
share service), the durable outbox of rows waiting for that service (`outbox.py`) and the
background thread that drains it (`publisher.py`). The servers themselves are front ends
(`share/`)."""
