"""Core: where commandcode's data lives and how the environment configures it (paths, slug)."""
