"""The agent loop: models, tools, and running a turn into a session."""
