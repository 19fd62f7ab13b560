"""Services: other agents' sessions (Claude Code, pi) read in place, and imported as Command Code v3 sessions."""
