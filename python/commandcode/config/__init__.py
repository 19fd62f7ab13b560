"""Configuration: where settings come from and what they say.

Owns nothing itself and imports nothing, so `import commandcode.config` stays free; the layered
settings live in `commandcode.config.settings` (which imports `json`, and is therefore never
loaded by `import commandcode` or by opening a session).
"""
