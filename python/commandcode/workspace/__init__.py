"""The parts around a session that keep it safe to run for months: the scratchpad, retention
(sweep, archive, restore), the footprint, and git worktrees with their isolation."""
