"""Agents a session delegates to (issue #28): the bundled three and custom agents read from
Markdown files (`registry.py`), one file's fields (`definitions.py`), its YAML front matter
(`frontmatter.py`), and which tools a run gets (`tool_access.py`). Running a sub-agent is the
turn runner's job; nothing here starts one."""
