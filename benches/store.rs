//! Criterion benchmarks of the backup store (filled in below).
fn main() {}
