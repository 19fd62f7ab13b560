//! Test support for the restore tests: every entry under a folder, to compare trees before and
//! after a restore.

use std::fs::Metadata;
use std::path::{Path, PathBuf};

/// Every entry under `root` (folders included, symlinks never followed) with its metadata.
pub(super) fn entries(root: &Path) -> Vec<(PathBuf, Metadata)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(folder) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            let metadata = std::fs::symlink_metadata(&path).unwrap();
            if metadata.is_dir() {
                stack.push(path.clone());
            }
            out.push((path, metadata));
        }
    }
    out
}
