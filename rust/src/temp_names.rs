//! The names in many folders that have the shape of a killed write's temp file, read in one
//! call: where `checkpoints/leftovers.py` looks before a turn or a rewind (the folders of the
//! files the newest checkpoint backed up: a rewind of 1,000 files reads some 700 of them).
//!
//! Only listing lives here: what a name means and whether its file is removed is decided in
//! Python (`storage/stale_temps.py`). Each folder costs one `openat`, the `getdents64` calls
//! it needs and a `close` (no `fstat`, no `stat` per entry, no allocation per name that does
//! not match); a folder that cannot be read is skipped, as a missing one is.

use rustix::fs::{openat, Dir, Mode, OFlags, CWD};
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// `(index in folders, name)` of every entry of each folder whose name starts with `prefix`
/// and ends with `suffix` (at least as long as both together), folders in order and names in
/// the order the directory gives them. Unreadable folders give nothing.
pub fn names_like(folders: &[PathBuf], prefix: &[u8], suffix: &[u8]) -> Vec<(usize, OsString)> {
    let mut found = Vec::new();
    for (index, folder) in folders.iter().enumerate() {
        let Ok(descriptor) =
            openat(CWD, folder.as_os_str(), OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())
        else {
            continue;
        };
        let Ok(mut entries) = Dir::new(descriptor) else { continue };
        while let Some(Ok(entry)) = entries.read() {
            let name = entry.file_name().to_bytes();
            if name.len() >= prefix.len() + suffix.len() && name.starts_with(prefix) && name.ends_with(suffix) {
                found.push((index, OsString::from(std::ffi::OsStr::from_bytes(name))));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn finds_matching_names_in_each_folder_and_skips_unreadable_ones() {
        let root = tempfile::tempdir().unwrap();
        let first = root.path().join("a");
        let second = root.path().join("b");
        fs::create_dir_all(&first).unwrap();
        fs::create_dir_all(&second).unwrap();
        for name in [".x.12.0123abcd.tmp", "x.tmp", ".tmp", "keep.txt", ".y.tmp.bak"] {
            fs::write(first.join(name), b"").unwrap();
        }
        fs::create_dir(second.join(".folder.1.tmp")).unwrap();
        let folders = vec![first, root.path().join("missing"), second, root.path().join("a/keep.txt")];
        let mut found = names_like(&folders, b".", b".tmp");
        found.sort();
        assert_eq!(found, vec![(0, OsString::from(".x.12.0123abcd.tmp")), (2, OsString::from(".folder.1.tmp"))]);
    }

    #[test]
    fn a_name_must_hold_prefix_and_suffix_apart() {
        let root = tempfile::tempdir().unwrap();
        fs::write(root.path().join(".tmp"), b"").unwrap();
        fs::write(root.path().join(".a.tmp"), b"").unwrap();
        let found = names_like(&[root.path().to_path_buf()], b".", b".tmp");
        assert_eq!(found, vec![(0, OsString::from(".a.tmp"))]);
    }
}
