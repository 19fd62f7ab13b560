"""Running sub-agents from a session's turns: the `agent` and `agent_output` tools (`tools.py`),
the session's runs and their lifetime (`runner.py`), one run (`run.py`), and what a run's edits
do to the parent's checkpoint (`checkpoint_view.py`)."""
