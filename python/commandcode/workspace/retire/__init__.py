"""Retiring old sessions (`commandcode sweep`, the shell's daily sweep).

`plan.py` decides which sessions a sweep takes and what it would free; `run.py` takes them
(archived or deleted, recoverably, a killed sweep finished by the next one).
"""
