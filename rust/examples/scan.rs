//! `cargo run --release --example scan -- FILE`: scans a transcript and prints what the core
//! found and how long each phase took (a quick profiling aid; the benchmarks live in benches/).

use commandcode_native::{scan_file, SessionTree};
use std::io::Write;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: scan FILE")?;
    let start = Instant::now();
    let report = scan_file(path.as_ref())?;
    let scanned = start.elapsed();
    let tree = SessionTree::build(&report.entries);
    let plan = tree.context_plan(&report.entries);
    let total = start.elapsed();
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "entries={} skipped={} path={} context={} scan={:.3}s total={:.3}s MB/s={:.0}",
        report.entries.len(),
        report.skipped.len(),
        tree.path().len(),
        plan.entries.len(),
        scanned.as_secs_f64(),
        total.as_secs_f64(),
        report.file_size as f64 / 1e6 / total.as_secs_f64()
    )?;
    Ok(())
}
