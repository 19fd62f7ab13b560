//! `cargo run --release --example scan -- FILE [INDEX]`: scans a transcript and prints what the
//! core found and how long each phase took: the scan, the summary a cold open computes (leaf,
//! path, context plan, counts), and for reference `SessionTree` (a quick profiling aid; the
//! benchmarks live in benches/). With INDEX, opens through that index sidecar instead (loading, extending or
//! rebuilding it) and says which it did.
//!
//! Owns: nothing but this tool. `RAYON_NUM_THREADS` sets the scan's parallelism.

use commandcode_native::index;
use commandcode_native::{scan_file, SessionTree};
use std::io::Write;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: scan FILE [INDEX]")?;
    let mut out = std::io::stdout().lock();
    if let Some(sidecar) = std::env::args().nth(2) {
        let start = Instant::now();
        let session = index::open(path.as_ref(), sidecar.as_ref())?;
        let opened = start.elapsed();
        writeln!(
            out,
            "{:?}: entries={} skipped={} path={} context={} open={:.2}ms",
            session.kind,
            session.summary.entry_count,
            session.summary.report.skipped.len(),
            session.summary.path_len,
            session.summary.plan.len(),
            opened.as_secs_f64() * 1e3
        )?;
        return Ok(());
    }
    let start = Instant::now();
    let report = scan_file(path.as_ref())?;
    let scanned = start.elapsed();
    let summary = index::summarize(&report);
    let summarized = start.elapsed();
    // For reference: the full session tree and its plan (built on demand by the binding).
    let tree = SessionTree::build(&report.entries);
    let plan = tree.context_plan(&report.entries);
    let treed = start.elapsed();
    assert_eq!(plan.entries.len(), summary.plan.len());
    writeln!(
        out,
        "entries={} skipped={} path={} context={} scan={:.3}s summary={:.3}s open={:.3}s MB/s={:.0} (SessionTree+plan {:.3}s)",
        report.entries.len(),
        report.skipped.len(),
        summary.path_len,
        summary.plan.len(),
        scanned.as_secs_f64(),
        (summarized - scanned).as_secs_f64(),
        summarized.as_secs_f64(),
        report.file_size as f64 / 1e6 / summarized.as_secs_f64(),
        (treed - summarized).as_secs_f64(),
    )?;
    Ok(())
}
