//! Criterion benchmarks of transcript scanning (`commandcode_native::scan`, `::tree`, `::index`):
//! a cold scan plus tree plus context plan of a ~50 MB session, the same through a warm index
//! sidecar (unchanged, and with a few lines appended), and the JSON cursor alone. The input is
//! generated in-process (no committed data): turns of user prompts, assistant steps with tool
//! calls and tool results of source-like text full of escapes, compactions, labels, rewinds.
//!
//!     cargo bench --bench scan
//!
//! Owns: this benchmark only. `RAYON_NUM_THREADS` sets the scan's parallelism.

use commandcode_native::index::{self, Summary};
use commandcode_native::json::Cursor;
use commandcode_native::{scan_file, SessionTree};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use std::fmt::Write as _;
use std::io::Write as _;

/// A deterministic pseudo-random source.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound
    }

    fn id(&mut self) -> String {
        format!("{:08x}", self.next() as u32)
    }
}

/// Source-like text as a JSON string body: quotes, backslashes, newlines and tabs escaped.
fn source_text(random: &mut Random, bytes: usize) -> String {
    const WORDS: &[&str] = &[
        "fn ",
        "let ",
        "self.",
        "value",
        " = ",
        "return ",
        "(x)",
        ";\\n",
        "    ",
        "if ",
        "else ",
        "\\\"text\\\"",
        "path\\\\to",
        "\\t",
        "é",
        "→ ",
        "{ ",
        "}\\n",
        "// comment\\n",
        "0x1f",
        "match ",
        "=> ",
    ];
    let mut out = String::with_capacity(bytes + 32);
    while out.len() < bytes {
        out.push_str(WORDS[random.below(WORDS.len() as u64) as usize]);
    }
    out
}

/// A v3 transcript of about `target` bytes.
fn transcript(target: usize) -> Vec<u8> {
    let mut random = Random(42);
    let mut out = String::with_capacity(target + (1 << 20));
    out.push_str(r#"{"type":"session","version":3,"id":"0d6c2f3e-5b7a-4c1e-9f0a-2b3c4d5e6f70","timestamp":"2026-01-02T03:04:05.000Z","cwd":"/home/alice/proj"}"#);
    out.push('\n');
    let mut ids: Vec<String> = Vec::new();
    let mut minute = 0u64;
    let mut line = |out: &mut String, ids: &mut Vec<String>, random: &mut Random, kind: &str, rest: &str| {
        let id = random.id();
        let parent = match ids.last() {
            // Now and then a rewind: the new entry hangs off an older one.
            Some(_) if random.below(50) == 0 && ids.len() > 10 => {
                format!("\"{}\"", ids[ids.len() - 1 - random.below(10) as usize])
            }
            Some(parent) => format!("\"{parent}\""),
            None => "null".to_owned(),
        };
        minute += 1;
        let _ = write!(
            out,
            r#"{{"type":"{kind}","id":"{id}","parentId":{parent},"timestamp":"2026-01-02T{:02}:{:02}:05.678Z",{rest}}}"#,
            minute / 60 % 24,
            minute % 60,
        );
        out.push('\n');
        ids.push(id);
    };
    while out.len() < target {
        let length = 20 + random.below(400) as usize;
        let prompt = source_text(&mut random, length);
        let body = format!(
            r#""message":{{"role":"user","content":[{{"type":"text","text":"{prompt}"}}],"meta":{{"source":"user","createdAt":1767323046099,"messageId":"5e0c9a1d-1111-4a2b-8c3d-{:012x}"}}}}"#,
            random.next()
        );
        line(&mut out, &mut ids, &mut random, "message", &body);
        for _ in 0..1 + random.below(6) {
            let length = 50 + random.below(500) as usize;
            let thinking = source_text(&mut random, length);
            let body = format!(
                r#""message":{{"role":"assistant","content":[{{"type":"thinking","thinking":"{thinking}","signature":""}},{{"type":"tool_use","id":"call_{}","name":"read_file","input":{{"file_path":"/home/alice/proj/src/main.rs"}}}}],"meta":{{"source":"model","createdAt":1767323049290,"messageId":"5e0c9a1d-2222-4a2b-8c3d-{:012x}"}}}},"usage":{{"inputTokens":5120,"outputTokens":88,"cacheReadTokens":4096,"cacheWriteTokens":0}},"model":"anthropic/claude-x","effort":"high""#,
                random.next(),
                random.next()
            );
            line(&mut out, &mut ids, &mut random, "message", &body);
            let size = if random.below(10) < 7 { 2_000 + random.below(48_000) as usize } else { 100 };
            let result = source_text(&mut random, size);
            let body = format!(
                r#""message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"call_1","content":[{{"type":"text","text":"{result}"}}]}}],"meta":{{"source":"tool","messageId":"5e0c9a1d-3333-4a2b-8c3d-{:012x}"}}}}"#,
                random.next()
            );
            line(&mut out, &mut ids, &mut random, "message", &body);
        }
        match random.below(40) {
            0 => {
                let kept = ids[ids.len().saturating_sub(5)].clone();
                let body = format!(r#""summary":"**Goal** ...","firstKeptEntryId":"{kept}","tokensBefore":36518"#);
                line(&mut out, &mut ids, &mut random, "compaction", &body);
            }
            1 => {
                let target = ids[random.below(ids.len() as u64) as usize].clone();
                line(&mut out, &mut ids, &mut random, "label", &format!(r#""targetId":"{target}","label":"mark""#));
            }
            _ => {}
        }
    }
    out.into_bytes()
}

fn bench_scan(criterion: &mut Criterion) {
    let data = transcript(50 << 20);
    let folder = tempfile::tempdir().unwrap();
    let path = folder.path().join("session.jsonl");
    std::fs::write(&path, &data).unwrap();
    let report = scan_file(&path).unwrap();
    assert!(report.skipped.is_empty(), "the generated transcript has bad lines: {:?}", &report.skipped[..1]);

    let mut group = criterion.benchmark_group("session_50MB");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(data.len() as u64));
    group.bench_function("cold_scan_tree_plan", |bench| {
        bench.iter(|| {
            let report = scan_file(&path).unwrap();
            let tree = SessionTree::build(&report.entries);
            let plan = tree.context_plan(&report.entries);
            (report.entries.len(), plan.entries.len())
        })
    });
    group.bench_function("cold_open_summary", |bench| {
        bench.iter(|| index::open_plain(&path).unwrap().summary.plan.len())
    });
    let sidecar = folder.path().join("index").join("session.idx");
    index::open(&path, &sidecar).unwrap();
    group.bench_function("warm_open_unchanged", |bench| {
        bench.iter(|| {
            let session = index::open(&path, &sidecar).unwrap();
            assert_eq!(session.kind, index::OpenKind::Loaded);
            session.summary.plan.len()
        })
    });
    group.bench_function("warm_open_appended", |bench| {
        let extra =
            b"{\"type\":\"custom\",\"id\":\"c0ffee00\",\"parentId\":null,\"timestamp\":\"t\",\"customType\":\"x\"}\n";
        bench.iter_batched(
            || {
                std::fs::write(&path, &data).unwrap();
                index::open(&path, &sidecar).unwrap();
                std::fs::OpenOptions::new().append(true).open(&path).unwrap().write_all(extra).unwrap();
            },
            |()| {
                let session = index::open(&path, &sidecar).unwrap();
                assert_eq!(session.kind, index::OpenKind::Appended);
                session.summary.entry_count
            },
            BatchSize::PerIteration,
        )
    });
    group.finish();

    let lines: Vec<&[u8]> = data.split(|&byte| byte == b'\n').filter(|line| !line.is_empty()).collect();
    let mut group = criterion.benchmark_group("json_cursor");
    group.sample_size(10);
    group.throughput(Throughput::Bytes(data.len() as u64));
    group.bench_function("validate_every_line", |bench| {
        bench.iter(|| lines.iter().filter(|line| Cursor::new(line).skip_value().is_ok()).count())
    });
    group.finish();
    let summary = Summary::from_scan(&report, &SessionTree::build(&report.entries));
    assert!(summary.entry_count > 0 && !summary.plan.is_empty());
}

criterion_group!(benches, bench_scan);
criterion_main!(benches);
