// Writes real pi session files with pi's own SessionManager (the package path is argv[2]) into
// the agent dir argv[3] for the cwd argv[4], and prints, as one JSON object, each file's path and
// what pi itself makes of it (its buildSessionContext, labels, name), for the tests to compare.
//   main:     every entry type: messages (user, assistant with a toolCall, toolResult,
//             bashExecution, custom), thinking_level_change, model_change, custom, custom_message,
//             label, session_info, a branch_summary after a /tree navigation, a compaction
//   branched: createBranchedSession of main's leaf (pi drops the path's labels: the entry after a
//             label then names a parent that is not in the file)
//   clone:    SessionManager.forkFrom of main into a second cwd (argv[5])
//   v2, v1:   the main session's entries in the legacy shapes, with pi's migrateSessionEntries
//             of them (migration happens in memory here; the files are left as written)
import { mkdirSync, readFileSync, writeFileSync } from "fs";
import { join } from "path";

const [pkg, agentDir, cwd, otherCwd] = process.argv.slice(2);
process.env.PI_CODING_AGENT_DIR = agentDir;
const pi = await import(join(pkg, "dist", "core", "session-manager.js"));
const { SessionManager, buildSessionContext, parseSessionEntries, migrateSessionEntries } = pi;

const usage = { input: 1234, output: 56, cacheRead: 100, cacheWrite: 0, totalTokens: 1390,
  cost: { input: 0.001, output: 0.002, cacheRead: 0.0001, cacheWrite: 0, total: 0.0031 } };
const now = () => Date.now();
const assistant = (content, stopReason = "stop", model = "stub-model") => ({ role: "assistant", content,
  api: "openai-completions", provider: "stub", model, usage, stopReason, timestamp: now() });

const sm = SessionManager.create(cwd, join(agentDir, "sessions", `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`));
sm.appendModelChange("stub", "stub-model");
sm.appendThinkingLevelChange("high");
const first = sm.appendMessage({ role: "user", content: "write a file please", timestamp: now() });
sm.appendMessage(assistant([{ type: "thinking", thinking: "the user wants a file" },
  { type: "toolCall", id: "call_1", name: "write", arguments: { path: "a.txt", content: "A\n" } }], "toolUse"));
sm.appendMessage({ role: "toolResult", toolCallId: "call_1", toolName: "write",
  content: [{ type: "text", text: "wrote a.txt" }], isError: false, timestamp: now() });
const answer = sm.appendMessage(assistant([{ type: "text", text: "done: a.txt written" }]));
sm.appendLabelChange(answer, "checkpoint-one");
sm.appendMessage({ role: "bashExecution", command: "ls", output: "a.txt", exitCode: 0, cancelled: false,
  truncated: false, timestamp: now() });
sm.appendCustomEntry("my-extension", { state: 42 });
sm.appendCustomMessageEntry("reminder", "remember the tests", true);
sm.appendMessage({ role: "custom", customType: "note", content: "a custom message", display: true, timestamp: now() });
sm.appendSessionInfo("Pi Session One");
const abandoned = sm.appendMessage({ role: "user", content: "an abandoned idea", timestamp: now() });
sm.appendMessage(assistant([{ type: "text", text: "abandoned reply" }]));
sm.branchWithSummary(answer, "Tried an idea and dropped it.");
sm.appendModelChange("stub", "stub-model-2");
sm.appendMessage({ role: "user", content: "second turn", timestamp: now() });
const keep = sm.appendMessage(assistant([{ type: "text", text: "second reply" }], "stop", "stub-model-2"));
sm.appendCompaction("Summary: a file was written, an idea dropped.", keep, 5000, { readFiles: [], modifiedFiles: ["a.txt"] });
sm.appendLabelChange(keep, "after-compaction");
sm.appendMessage({ role: "user", content: "third turn after compaction", timestamp: now() });
sm.appendMessage(assistant([{ type: "text", text: "third reply" }], "stop", "stub-model-2"));
const mainPath = sm.getSessionFile();

const branchedPath = sm.createBranchedSession(sm.getLeafId());
const clone = SessionManager.forkFrom(mainPath, otherCwd);
const clonePath = clone.getSessionFile();

function describe(path, entries) {
  const fileEntries = entries ?? parseSessionEntries(readFileSync(path, "utf8"));
  const body = fileEntries.filter((e) => e.type !== "session");
  const context = buildSessionContext(body);
  const labels = {};
  for (const e of body) if (e.type === "label") { if (e.label) labels[e.targetId] = e.label; else delete labels[e.targetId]; }
  const names = body.filter((e) => e.type === "session_info").map((e) => e.name);
  return { path, leaf: body.length ? body[body.length - 1].id : null, entryCount: body.length,
    context: context.messages.map((m) => ({ role: m.role, text: JSON.stringify(m.content ?? m.summary ?? "") })),
    thinkingLevel: context.thinkingLevel, model: context.model, labels, name: names.length ? names[names.length - 1] : null,
    types: body.map((e) => e.type) };
}

// The legacy shapes of the main session: v2 (ids, version 2, the old hookMessage role) and v1
// (no ids, compaction by index). pi migrates a copy in memory here; the files stay as written.
const mainEntries = parseSessionEntries(readFileSync(mainPath, "utf8"));
const v2 = mainEntries.map((e) => JSON.parse(JSON.stringify(e)));
v2[0].version = 2;
for (const e of v2) if (e.type === "message" && e.message.role === "custom") e.message.role = "hookMessage";
const legacyDir = join(agentDir, "legacy"); mkdirSync(legacyDir, { recursive: true });
const v2Path = join(legacyDir, "v2.jsonl");
writeFileSync(v2Path, v2.map((e) => JSON.stringify(e)).join("\n") + "\n");
// v1 was linear: the active path only, in order.
const body = mainEntries.filter((e) => e.type !== "session");
const byId = new Map(body.map((e) => [e.id, e]));
const linear = [];
for (let e = body[body.length - 1]; e; e = e.parentId ? byId.get(e.parentId) : undefined) linear.unshift(e);
const v1 = [{ ...mainEntries[0] }, ...linear.map((e) => JSON.parse(JSON.stringify(e)))];
delete v1[0].version;
for (const e of v1.slice(1)) {
  if (e.type === "compaction") e.firstKeptEntryIndex = v1.findIndex((x) => x.id === e.firstKeptEntryId);
  if (e.type === "compaction") delete e.firstKeptEntryId;
  if (e.type === "message" && e.message.role === "custom") e.message.role = "hookMessage";
}
for (const e of v1.slice(1)) { delete e.id; delete e.parentId; }
const v1Path = join(legacyDir, "v1.jsonl");
writeFileSync(v1Path, v1.map((e) => JSON.stringify(e)).join("\n") + "\n");
const migrated = (path) => { const entries = parseSessionEntries(readFileSync(path, "utf8")); migrateSessionEntries(entries); return entries; };

console.log(JSON.stringify({
  main: describe(mainPath), branched: describe(branchedPath), clone: describe(clonePath),
  v2: describe(v2Path, migrated(v2Path)), v1: describe(v1Path, migrated(v1Path)),
  ids: { first, abandoned, answer, keep },
}));
