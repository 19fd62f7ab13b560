"""Sessions leaving the terminal: html, md and jsonl exports, with secrets redacted.

`select.py` chooses the entries (context, full active path, every branch), `rows.py` turns them
into display rows through `redact.py` (secrets) and `sanitize.py` (paths), `md.py` and `html.py`
render them, `target.py` names and writes the file whole, and `document.py` runs it all,
streaming. Share pages and gists render through `document.render_text`.
"""
