"""The interactive shell (`commandcode` with no subcommand): prompt_toolkit line editing, streamed
replies, slash commands. A front end: it calls `agent.runtime.AgentSession` and the service
functions, never the writer or the store."""
