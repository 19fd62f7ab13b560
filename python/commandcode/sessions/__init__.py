"""Core: the only reader and writer of session files (transcript, meta, history, migration)."""
