"""Model providers the agent loop can talk to (today only the built-in offline model)."""
