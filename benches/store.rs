//! Criterion benchmarks of the backup store core (`commandcode_native::store`): hashing, storing
//! and reading a 100 KB object, backing up a file whose content is already stored, and a
//! verified restore of 100 files. End-to-end figures (checkpoint records, shadow git, 1,000-file
//! rewinds) are in `benches/bench_checkpoints.py`.
//!
//!     cargo bench --bench store

use commandcode_native::store::{
    restore, BackupSource, ContentId, Desired, Expected, ObjectStore, RestoreItem, RestoreOptions, Sha256Digest,
};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use std::path::PathBuf;

/// 100 KB of source-like text (compresses about as well as real code).
fn source_text(size: usize, seed: u64) -> Vec<u8> {
    let mut out = Vec::with_capacity(size);
    let mut state = seed;
    while out.len() < size {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let word = ["fn ", "let ", "self.", "value", " = ", "return ", "(x)", ";\n", "    ", "if ", "else ", "0x1f"];
        out.extend_from_slice(word[(state >> 33) as usize % word.len()].as_bytes());
    }
    out.truncate(size);
    out
}

fn hashing(criterion: &mut Criterion) {
    let data = source_text(1 << 20, 1);
    let mut group = criterion.benchmark_group("hash_1MiB");
    group.throughput(Throughput::Bytes(data.len() as u64));
    group.bench_function("blake3", |bench| bench.iter(|| ContentId::of(&data)));
    group.bench_function("sha256", |bench| bench.iter(|| Sha256Digest::of(&data)));
    group.finish();
}

fn objects(criterion: &mut Criterion) {
    let folder = tempfile::tempdir().unwrap();
    let store = ObjectStore::open(folder.path().join("objects")).unwrap();
    let data = source_text(100_000, 2);
    let mut group = criterion.benchmark_group("object_100KB");
    group.throughput(Throughput::Bytes(data.len() as u64));
    let mut counter = 0u64;
    group.bench_function("put_new_durable", |bench| {
        bench.iter_batched(
            || {
                counter += 1;
                let mut bytes = data.clone();
                bytes[..8].copy_from_slice(&counter.to_le_bytes());
                bytes
            },
            |bytes| store.put_bytes(&bytes).unwrap(),
            BatchSize::SmallInput,
        )
    });
    let (id, _) = store.put_bytes(&data).unwrap();
    group.bench_function("read_verified", |bench| bench.iter(|| store.read(&id).unwrap()));
    let file = folder.path().join("file.rs");
    std::fs::write(&file, &data).unwrap();
    group.bench_function("backup_file_already_stored", |bench| {
        bench.iter(|| store.backup_file(&file, 10 << 20).unwrap())
    });
    group.finish();
}

fn restoring(criterion: &mut Criterion) {
    let folder = tempfile::tempdir().unwrap();
    let project = folder.path().join("project");
    std::fs::create_dir(&project).unwrap();
    let store = ObjectStore::open(folder.path().join("objects")).unwrap();
    let journal = folder.path().join("journal.json");
    let targets: Vec<PathBuf> =
        (0..100).map(|index| project.join(format!("dir{}/file{index}.rs", index % 10))).collect();
    let items: Vec<RestoreItem> = targets
        .iter()
        .enumerate()
        .map(|(index, target)| {
            let (id, _) = store.put_bytes(&source_text(10_000, index as u64)).unwrap();
            RestoreItem {
                target: target.clone(),
                desired: Desired::Content { source: BackupSource::Object(id), mode: Some(0o644) },
                expected: Expected::Unknown,
            }
        })
        .collect();
    let options = RestoreOptions { confine_to: Some(project.clone()), ..RestoreOptions::default() };
    let mut group = criterion.benchmark_group("restore");
    group.sample_size(20);
    group.bench_function("100_files_10KB_verified", |bench| {
        bench.iter_batched(
            || {
                for target in &targets {
                    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
                    std::fs::write(target, b"edited by the agent").unwrap();
                }
            },
            |()| restore(&store, &items, &journal, &options).unwrap(),
            BatchSize::PerIteration,
        )
    });
    group.finish();
}

criterion_group!(benches, hashing, objects, restoring);
criterion_main!(benches);
