"""Core: bytes on disk — durable writes, JSON text, locks, ids and small value classes."""
