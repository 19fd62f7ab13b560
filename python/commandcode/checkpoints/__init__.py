"""Services: checkpoint records, the backup store facade, and rewinds."""
