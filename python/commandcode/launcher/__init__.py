"""The launcher service: what every front end calls to launch a session (`-p`, the shell, the
picker). `flags.py` declares the launch flags once and the `Launch` they make; `resume.py` turns
a session the picker returned into its resume plan.
"""
