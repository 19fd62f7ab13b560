//! One project folder's file signatures compared with a snapshot taken before: the catalog's
//! warm freshness check.
//!
//! A warm `sessions list` must still notice any transcript appended since the catalog read it,
//! so every transcript and meta sidecar is `stat`ed on every listing. Doing that from Python costs
//! about as much again as the system calls themselves (a `stat_result` per file, a dict lookup);
//! here it is one directory read and one `fstatat` per file, compared with the previous snapshot.
//!
//! A snapshot is `name \0 signature \0` records for every `*.jsonl` and `*.meta.json` entry;
//! the signature is the file kind, size, mtime in nanoseconds, inode and ctime in nanoseconds (a
//! rewrite that restores the size and mtime still moves the ctime; symlinks followed, as
//! Python's `DirEntry.stat()` does). Names are bytes (any file name, even one that is not UTF-8).

use std::collections::HashMap;
use std::ffi::OsString;
use std::fs::{self, Metadata};
use std::io;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// What changed in a folder since a snapshot: names new or different, names gone, and the
/// snapshot of the folder now.
#[derive(Debug, Default)]
pub struct FolderChanges {
    pub changed: Vec<OsString>,
    pub gone: Vec<OsString>,
    pub snapshot: Vec<u8>,
}

fn watched(name: &[u8]) -> bool {
    name.ends_with(b".jsonl") || name.ends_with(b".meta.json")
}

fn signature(metadata: &Metadata) -> String {
    let kind = if metadata.is_file() { 'f' } else { 'o' };
    let mtime_ns = i128::from(metadata.mtime()) * 1_000_000_000 + i128::from(metadata.mtime_nsec());
    let ctime_ns = i128::from(metadata.ctime()) * 1_000_000_000 + i128::from(metadata.ctime_nsec());
    format!("{kind} {} {mtime_ns} {} {ctime_ns}", metadata.size(), metadata.ino())
}

fn parse(snapshot: &[u8]) -> HashMap<&[u8], (&[u8], bool)> {
    let mut fields = snapshot.split(|&byte| byte == 0);
    let mut records = HashMap::new();
    while let (Some(name), Some(sig)) = (fields.next(), fields.next()) {
        if !name.is_empty() {
            records.insert(name, (sig, false));
        }
    }
    records
}

/// Compares `folder` now with `previous` (a snapshot this function returned, or empty).
///
/// A file that vanishes between the directory read and its `stat` is left out (as if gone).
///
/// # Errors
/// The folder cannot be read (a missing folder is an error too: the caller decides).
pub fn folder_changes(folder: &Path, previous: &[u8]) -> io::Result<FolderChanges> {
    let mut known = parse(previous);
    let mut changes = FolderChanges { snapshot: Vec::with_capacity(previous.len() + 256), ..Default::default() };
    for entry in fs::read_dir(folder)? {
        let entry = entry?;
        let name = entry.file_name();
        let bytes = name.as_bytes();
        if !watched(bytes) {
            continue;
        }
        let metadata = match entry.file_type() {
            Ok(kind) if kind.is_symlink() => fs::metadata(entry.path()),
            _ => entry.metadata(),
        };
        let Ok(metadata) = metadata else { continue };
        let sig = signature(&metadata);
        match known.get_mut(bytes) {
            Some((old, seen)) => {
                *seen = true;
                if *old != sig.as_bytes() {
                    changes.changed.push(name.clone());
                }
            }
            None => changes.changed.push(name.clone()),
        }
        changes.snapshot.extend_from_slice(bytes);
        changes.snapshot.push(0);
        changes.snapshot.extend_from_slice(sig.as_bytes());
        changes.snapshot.push(0);
    }
    changes.gone =
        known.into_iter().filter(|(_, (_, seen))| !seen).map(|(name, _)| OsString::from_vec(name.to_vec())).collect();
    Ok(changes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn sorted(mut names: Vec<OsString>) -> Vec<OsString> {
        names.sort();
        names
    }

    #[test]
    fn reports_new_appended_and_gone_files_and_nothing_else() {
        let folder = std::env::temp_dir().join(format!("folder-stat-{}", std::process::id()));
        fs::create_dir_all(&folder).unwrap();
        fs::write(folder.join("a.jsonl"), b"{}\n").unwrap();
        fs::write(folder.join("b.jsonl"), b"{}\n").unwrap();
        fs::write(folder.join("a.meta.json"), b"{}").unwrap();
        fs::write(folder.join("notes.txt"), b"x").unwrap();
        let first = folder_changes(&folder, b"").unwrap();
        assert_eq!(sorted(first.changed.clone()).len(), 3);
        assert!(first.gone.is_empty());

        let same = folder_changes(&folder, &first.snapshot).unwrap();
        assert!(same.changed.is_empty() && same.gone.is_empty());

        fs::OpenOptions::new().append(true).open(folder.join("a.jsonl")).unwrap().write_all(b"{}\n").unwrap();
        fs::remove_file(folder.join("b.jsonl")).unwrap();
        let after = folder_changes(&folder, &same.snapshot).unwrap();
        assert_eq!(after.changed, vec![OsString::from("a.jsonl")]);
        assert_eq!(after.gone, vec![OsString::from("b.jsonl")]);
        fs::remove_dir_all(&folder).unwrap();
    }

    #[test]
    fn a_missing_folder_is_an_error() {
        assert!(folder_changes(Path::new("/nonexistent/folder-stat"), b"").is_err());
    }
}
