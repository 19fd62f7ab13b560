"""Core: where commandcode's data lives and how it is configured — `paths` (the data dir and
our folders in it), `env` (every `COMMANDCODE_*` variable), `slug` (project folder names) and
`settings` (the layered settings files).

Owns nothing itself and imports nothing, so `import commandcode.config` stays free; the layered
settings live in `commandcode.config.settings` (which imports `json`, and is therefore never
loaded by `import commandcode` or by opening a session).
"""
