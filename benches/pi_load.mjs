// Peer baseline: open a session with pi-coding-agent's SessionManager and build the
// context of its leaf, the way pi resumes a session. Owned by the open benchmarks
// (benches/peers.py installs pi into benches/.cache/pi and runs this script).
//
//   node benches/pi_load.mjs SESSION.jsonl [--light]
//
// PI_PKG   the installed package folder
//          (default: benches/.cache/pi/node_modules/@mariozechner/pi-coding-agent)
// --light  import dist/core/session-manager.js only, instead of the package entry
//          point that pi itself loads
//
// Prints one JSON line: in-process timings, counts and memory, or {"error": ...}
// with exit code 1 (for example ERR_STRING_TOO_LONG on files over ~512 MiB).
//
// pi truncates a file whose first line is not a session header and rewrites one that
// needs a version migration, so this script refuses any file that is not v3 up front.
import { closeSync, openSync, readSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { performance } from "node:perf_hooks";

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const file = args.find((a) => !a.startsWith("--"));
if (!file) {
  console.error("usage: node pi_load.mjs SESSION.jsonl [--light]");
  process.exit(2);
}
const light = args.includes("--light");
const pkg = resolve(process.env.PI_PKG ?? resolve(here, ".cache/pi/node_modules/@mariozechner/pi-coding-agent"));
const out = { file, api: light ? "dist/core/session-manager.js" : "package entry" };

function fail(error) {
  out.error = error;
  console.log(JSON.stringify(out));
  process.exit(1);
}

function firstLine(path) {
  const fd = openSync(path, "r");
  try {
    const buf = Buffer.alloc(64 * 1024);
    const n = readSync(fd, buf, 0, buf.length, 0);
    const text = buf.subarray(0, n).toString("utf8");
    const end = text.indexOf("\n");
    return end < 0 ? text : text.slice(0, end);
  } finally {
    closeSync(fd);
  }
}

let header;
try {
  header = JSON.parse(firstLine(resolve(file)));
} catch (e) {
  fail(`cannot read the header: ${e.code ?? ""} ${e.message}`.trim());
}
if (header?.type !== "session" || header?.version !== 3 || typeof header?.id !== "string") {
  fail("not a v3 session header; pi would rewrite or truncate this file");
}

const t0 = performance.now();
let mod;
try {
  mod = await import(pathToFileURL(`${pkg}/dist/${light ? "core/session-manager.js" : "index.js"}`).href);
} catch (e) {
  fail(`cannot import pi from ${pkg}: ${e.code ?? ""} ${e.message}`.trim());
}
const t1 = performance.now();
out.import_s = (t1 - t0) / 1e3;

let sm;
try {
  sm = mod.SessionManager.open(resolve(file));
} catch (e) {
  out.open_s = (performance.now() - t1) / 1e3;
  fail(`${e.code ?? ""} ${e.message}`.trim());
}
const t2 = performance.now();
const ctx = sm.buildSessionContext();
const t3 = performance.now();
out.open_s = (t2 - t1) / 1e3;
out.context_s = (t3 - t2) / 1e3;
out.open_plus_context_s = (t3 - t1) / 1e3;
out.entries = sm.getEntries().length;
out.leaf = sm.getLeafId();
out.active_path_len = sm.getBranch().length;
out.context_messages = ctx.messages.length;
const mu = process.memoryUsage();
out.rss_mib = Math.round(mu.rss / 2 ** 20);
out.heap_used_mib = Math.round(mu.heapUsed / 2 ** 20);
console.log(JSON.stringify(out));
