"""The html export's style sheet: the real CLI's (dark, `samples/exports/*.html`) plus a light
theme for readers who prefer one (`prefers-color-scheme`), summaries, branches, sub-agent runs and the live page.
Pygments' token colours are added by `html.py` (one dark and one light style)."""

CSS = """* { box-sizing: border-box; }
html, body {
	margin: 0;
	padding: 0;
	background: #000000;
	color: #fafafa;
	font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace;
	font-size: 14px;
	line-height: 1.6;
}
.page {
	position: relative;
	max-width: 900px;
	margin: 0 auto;
	padding: 48px 32px 96px;
	border-left: 1px solid #222226;
	border-right: 1px solid #222226;
}
.corner {
	position: absolute;
	width: 8px;
	height: 8px;
	background: #000000;
	border: 1px solid #222226;
}
.corner-tl { top: 0; left: 0; transform: translate(-4px, -4px); }
.corner-tr { top: 0; right: 0; transform: translate(4px, -4px); }
.corner-bl { bottom: 0; left: 0; transform: translate(-4px, 4px); }
.corner-br { bottom: 0; right: 0; transform: translate(4px, 4px); }
.header { border-bottom: 1px dashed #181818; padding-bottom: 24px; margin-bottom: 32px; }
.header h1 { font-size: 20px; font-weight: 500; margin: 0 0 16px; }
.header .prefix { color: #A599E9; margin-right: 12px; letter-spacing: -0.2em; }
.meta { display: grid; grid-template-columns: repeat(auto-fit, minmax(160px, 1fr)); gap: 12px 24px; margin: 0; font-size: 12px; }
.meta dt { color: #a1a1aa; text-transform: uppercase; letter-spacing: 0.05em; margin: 0 0 2px; }
.meta dd { margin: 0; color: #E4CCFF; word-break: break-all; }
.toolbar { display: flex; gap: 8px; margin-top: 20px; }
.toolbar button {
	font-family: inherit;
	font-size: 11px;
	text-transform: uppercase;
	letter-spacing: 0.05em;
	background: transparent;
	color: #a1a1aa;
	border: 1px solid #222226;
	border-radius: 0;
	padding: 6px 12px;
	cursor: pointer;
}
.toolbar button:hover { color: #fafafa; border-color: #E4CCFF; }
.transcript { display: flex; flex-direction: column; gap: 14px; }
.row { border: 1px solid #181818; background: #0a0a0b; }
.row-user { display: flex; gap: 10px; align-items: flex-start; padding: 12px 16px; border-color: #2D2B55; background: #0d0c16; }
.user-marker { color: #A599E9; font-weight: 700; }
.user-body { flex: 1; min-width: 0; }
.user-text { white-space: pre-wrap; word-break: break-word; }
.row-assistant { padding: 12px 16px; border-color: #222226; }
.assistant-prose p { margin: 0 0 12px; }
.assistant-prose p:last-child { margin-bottom: 0; }
.assistant-prose h1, .assistant-prose h2, .assistant-prose h3,
.assistant-prose h4, .assistant-prose h5, .assistant-prose h6 { color: #A599E9; margin: 16px 0 8px; }
.assistant-prose ul, .assistant-prose ol { margin: 0 0 12px; padding-left: 22px; }
.assistant-prose code { background: #15151f; color: #B1BAF9; padding: 1px 5px; font-size: 0.9em; }
.assistant-prose pre { background: #0d0d12; border: 1px solid #222226; padding: 12px; overflow-x: auto; margin: 0 0 12px; }
.assistant-prose pre code { background: none; padding: 0; color: #B1BAF9; }
.assistant-prose a { color: #7AD4D6; }
.row-tool, .row-thinking { padding: 0; cursor: pointer; }
.row-tool summary, .row-thinking summary { list-style: none; display: flex; align-items: center; gap: 10px; padding: 10px 16px; user-select: none; }
.row-tool summary::-webkit-details-marker, .row-thinking summary::-webkit-details-marker { display: none; }
.row-tool summary::before, .row-thinking summary::before { content: '\\25b8'; color: #4C556A; transition: transform 0.15s ease; }
.row-tool[open] summary::before, .row-thinking[open] summary::before { transform: rotate(90deg); }
.tool-badge { background: #5945B1; color: #f4f4f4; font-size: 11px; font-weight: 700; letter-spacing: 0.03em; padding: 2px 8px; }
.tool-input { color: #8A94A8; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.tool-body { border-top: 1px solid #181818; padding: 12px 16px; }
.tool-output { margin: 0; white-space: pre-wrap; word-break: break-word; color: #8A94A8; font-size: 13px; }
.tool-body-empty { color: #4C556A; font-style: italic; }
.thinking-badge { color: #E4CCFF; font-style: italic; }
.thinking-body { border-top: 1px solid #181818; padding: 12px 16px; }
.thinking-body pre { margin: 0; white-space: pre-wrap; color: #8A94A8; font-style: italic; font-size: 13px; }
.inline-image { max-width: 100%; display: block; margin-top: 10px; border: 1px solid #222226; }
.footer { margin-top: 48px; padding-top: 24px; border-top: 1px dashed #181818; color: #4C556A; font-size: 12px; text-align: center; text-transform: uppercase; letter-spacing: 0.08em; }
.row-summary, .branch { padding: 0; }
.row-summary summary, .branch > summary { list-style: none; display: flex; align-items: center; gap: 10px; padding: 10px 16px; cursor: pointer; user-select: none; }
.row-summary summary::-webkit-details-marker, .branch > summary::-webkit-details-marker { display: none; }
.row-summary summary::before, .branch > summary::before { content: '\\25b8'; color: #4C556A; transition: transform 0.15s ease; }
.row-summary[open] summary::before, .branch[open] > summary::before { transform: rotate(90deg); }
.summary-badge { color: #7AD4D6; font-style: italic; }
.summary-body { border-top: 1px solid #181818; padding: 12px 16px; }
.branch { border: 1px dashed #2D2B55; background: transparent; }
.branch > summary { color: #a1a1aa; font-size: 12px; text-transform: uppercase; letter-spacing: 0.05em; }
.branch-body { display: flex; flex-direction: column; gap: 14px; padding: 12px 12px 12px 20px; border-top: 1px dashed #2D2B55; }
.subagent { border: 1px dashed #2D2B55; margin: 0 16px 12px; }
.subagent > summary { display: flex; gap: 10px; align-items: center; padding: 8px 12px; cursor: pointer; font-size: 12px; }
.subagent-badge { color: #7AD4D6; text-transform: uppercase; letter-spacing: 0.05em; }
.subagent-description { color: #e4e4e7; flex: 1; }
.subagent-status { color: #a1a1aa; }
.subagent-body { display: flex; flex-direction: column; gap: 10px; padding: 10px 12px; border-top: 1px dashed #2D2B55; }
.tree-note { color: #a1a1aa; font-size: 12px; margin: 16px 0 0; }
.live-status { color: #7AD4D6; font-size: 12px; margin: 12px 0 0; }
.highlight { background: #0d0d12; }
@media (prefers-color-scheme: light) {
	html, body { background: #ffffff; color: #18181b; }
	.page, .corner, .toolbar button, .row-assistant, .inline-image { border-color: #e4e4e7; }
	.corner { background: #ffffff; }
	.header, .footer { border-color: #e4e4e7; }
	.meta dt { color: #52525b; }
	.meta dd { color: #5945B1; }
	.toolbar button { color: #52525b; }
	.toolbar button:hover { color: #18181b; border-color: #5945B1; }
	.row { border-color: #e4e4e7; background: #fafafa; }
	.row-user { border-color: #c7c2f0; background: #f4f2ff; }
	.user-marker, .header .prefix, .assistant-prose h1, .assistant-prose h2, .assistant-prose h3,
	.assistant-prose h4, .assistant-prose h5, .assistant-prose h6 { color: #5945B1; }
	.assistant-prose code { background: #f0eef9; color: #3b3486; }
	.assistant-prose pre, .highlight { background: #f6f6f8; border-color: #e4e4e7; }
	.assistant-prose pre code { color: #27272a; }
	.assistant-prose a { color: #0e7490; }
	.tool-body, .thinking-body, .summary-body { border-color: #e4e4e7; }
	.tool-output, .thinking-body pre, .tool-input { color: #3f3f46; }
	.thinking-badge { color: #6d28d9; }
	.summary-badge, .live-status { color: #0e7490; }
	.branch { border-color: #c7c2f0; }
	.branch-body, .subagent, .subagent-body { border-color: #c7c2f0; }
	.subagent-description { color: #18181b; }
	.footer, .tool-body-empty { color: #71717a; }
}
"""
