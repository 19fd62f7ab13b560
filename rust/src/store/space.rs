//! Free space on the file system that holds a path (`statvfs`: blocks available to unprivileged
//! users × fragment size), for the checkpoint disk-low pause.

use std::path::Path;

/// Bytes available at `path`, or `None` when `statvfs` fails (the caller then treats space as
/// enough, as the real CLI does).
pub fn free_space(path: &Path) -> Option<u64> {
    let stat = rustix::fs::statvfs(path).ok()?;
    Some(stat.f_bavail.saturating_mul(stat.f_frsize))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_space_for_an_existing_folder_and_none_for_a_missing_one() {
        let folder = tempfile::tempdir().unwrap();
        assert!(free_space(folder.path()).is_some_and(|bytes| bytes > 0));
        assert_eq!(free_space(&folder.path().join("missing")), None);
    }
}
