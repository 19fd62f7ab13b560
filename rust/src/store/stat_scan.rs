//! Stat scans for shell tracking: which files of a project changed since the table last saw them.
//!
//! [`StatTable`] holds, for each file of a project (absolute paths), its stat key — (size,
//! mtime_ns, inode, mode) — as the caller last recorded it. [`StatTable::scan`] lists the
//! project (the caller's listing, or a walk that re-reads only the folders whose mtime changed:
//! outside a repository a file is created, deleted or renamed only by changing its folder's
//! mtime), stats every file in parallel and returns only the paths whose key differs from the
//! table's: created or changed ones with their new key, gone ones (deleted, replaced by a
//! symlink or a folder, grown over the cap) with `None`. The table is changed only by the
//! caller ([`StatTable::set`], [`StatTable::forget`]), after it has read and stored the bytes,
//! so a failed read leaves the file to be reported again by the next scan.
//!
//! Walks follow no symlinked folder, skip `.git` folders and the excluded folders (the data
//! directory when it lies inside the project).

use rayon::prelude::*;
use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// (size, mtime_ns, inode, permission bits) of a regular file.
pub type StatKey = (u64, i64, u64, u32);

/// One change a scan found: the path and its new key (`None`: no longer a trackable file).
pub type Change = (OsString, Option<StatKey>);

/// What the walk knows of one folder: its mtime and its files and subfolders.
struct Folder {
    mtime_ns: i64,
    files: Vec<OsString>,
    folders: Vec<OsString>,
}

/// The cached stat keys of one project's files, and the folder listing of its last walk.
pub struct StatTable {
    root: PathBuf,
    excluded: Vec<OsString>,
    max_size: u64,
    keys: HashMap<OsString, StatKey>,
    tree: HashMap<OsString, Folder>,
    previous_folders: HashSet<OsString>,
}

/// The stat key of a regular file of at most `max_size` bytes (no symlink followed), or `None`.
pub fn stat_key(path: &Path, max_size: u64) -> Option<StatKey> {
    let status = std::fs::symlink_metadata(path).ok()?;
    if !status.file_type().is_file() || status.size() > max_size {
        return None;
    }
    let mtime_ns = status.mtime().saturating_mul(1_000_000_000).saturating_add(status.mtime_nsec());
    Some((status.size(), mtime_ns, status.ino(), status.mode() & 0o7777))
}

fn mtime_ns(path: &Path) -> Option<i64> {
    let status = std::fs::metadata(path).ok()?;
    Some(status.mtime().saturating_mul(1_000_000_000).saturating_add(status.mtime_nsec()))
}

fn under(path: &[u8], folder: &[u8]) -> bool {
    path.starts_with(folder) && (path.len() == folder.len() || path[folder.len()] == b'/')
}

impl StatTable {
    /// An empty table for the project at `root` (absolute), skipping `excluded` folders.
    pub fn new(root: PathBuf, excluded: Vec<OsString>, max_size: u64) -> Self {
        StatTable {
            root,
            excluded,
            max_size,
            keys: HashMap::new(),
            tree: HashMap::new(),
            previous_folders: HashSet::new(),
        }
    }

    /// Records the key of `path` (its bytes are stored).
    pub fn set(&mut self, path: OsString, key: StatKey) {
        self.keys.insert(path, key);
    }

    /// Forgets `path` (deleted, or no longer tracked).
    pub fn forget(&mut self, path: &OsString) {
        self.keys.remove(path);
    }

    /// How many files the table knows.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether the table knows no file.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The project's files by walking it (folders whose mtime is unchanged are not read again),
    /// or `None` when there are more than `max_files`.
    pub fn walk(&mut self, max_files: usize) -> Option<Vec<OsString>> {
        self.previous_folders = self.tree.keys().cloned().collect();
        let mut seen: HashMap<OsString, Folder> = HashMap::with_capacity(self.tree.len());
        let mut pending = vec![self.root.clone().into_os_string()];
        let mut count = 0usize;
        while let Some(folder) = pending.pop() {
            if count > max_files {
                return None;
            }
            let Some(listed) = self.list_folder(&folder) else { continue };
            count += listed.files.len();
            pending.extend(listed.folders.iter().cloned());
            seen.insert(folder, listed);
        }
        if count > max_files {
            return None;
        }
        self.tree = seen;
        Some(self.tree.values().flat_map(|folder| folder.files.iter().cloned()).collect())
    }

    /// For each of `paths` (files a command created), the folders between the root and it that
    /// the project did not have before: outermost first. A folder counts as known when the
    /// walk before the latest one listed it, or when a file of the table lies in it (with a
    /// caller's listing, where no walk runs). Call before recording the new files' keys.
    pub fn made_folders(&self, paths: &[OsString]) -> Vec<Vec<OsString>> {
        let mut known: HashSet<&Path> = self.previous_folders.iter().map(Path::new).collect();
        for name in self.keys.keys() {
            let mut folder = Path::new(name).parent();
            while let Some(parent) = folder {
                if !known.insert(parent) {
                    break;
                }
                folder = parent.parent();
            }
        }
        paths
            .iter()
            .map(|path| {
                let mut made = Vec::new();
                let mut folder = Path::new(path).parent();
                while let Some(parent) = folder {
                    if parent == self.root || !parent.starts_with(&self.root) || known.contains(parent) {
                        break;
                    }
                    made.push(parent.as_os_str().to_os_string());
                    folder = parent.parent();
                }
                made.reverse();
                made
            })
            .collect()
    }

    fn list_folder(&mut self, folder: &OsString) -> Option<Folder> {
        let mtime = mtime_ns(Path::new(folder))?;
        if let Some(known) = self.tree.remove(folder) {
            if known.mtime_ns == mtime {
                return Some(known);
            }
        }
        let mut files = Vec::new();
        let mut folders = Vec::new();
        for entry in std::fs::read_dir(folder).ok()?.flatten() {
            let is_dir = entry.file_type().map(|kind| kind.is_dir()).unwrap_or(false);
            let path = entry.path().into_os_string();
            if is_dir {
                if entry.file_name() != ".git" {
                    folders.push(path);
                }
            } else {
                files.push(path);
            }
        }
        Some(Folder { mtime_ns: mtime, files, folders })
    }

    fn excluded(&self, path: &OsString) -> bool {
        self.excluded.iter().any(|folder| under(path.as_bytes(), folder.as_bytes()))
    }

    /// The changes since the table was last updated: `names` is the project's listing (`None`:
    /// walk it). `None` when the project has more than `max_files` files.
    pub fn scan(&mut self, names: Option<Vec<OsString>>, max_files: usize) -> Option<Vec<Change>> {
        let names = match names {
            Some(names) => names,
            None => self.walk(max_files)?,
        };
        if names.len() > max_files {
            return None;
        }
        let names: Vec<OsString> = names.into_iter().filter(|name| !self.excluded(name)).collect();
        let max_size = self.max_size;
        let keys = &self.keys;
        let mut changes: Vec<Change> = names
            .par_iter()
            .with_min_len(64)
            .filter_map(|name| {
                let key = stat_key(Path::new(name), max_size);
                match (key, keys.get(name)) {
                    (Some(key), Some(known)) if key == *known => None,
                    (None, None) => None,
                    (key, _) => Some((name.clone(), key)),
                }
            })
            .collect();
        if !self.keys.is_empty() {
            let present: HashSet<&OsString> = names.iter().collect();
            changes.extend(self.keys.keys().filter(|name| !present.contains(name)).map(|name| (name.clone(), None)));
        }
        Some(changes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(root: &Path) -> StatTable {
        StatTable::new(root.to_path_buf(), vec![root.join("data").into_os_string()], 10)
    }

    fn record(table: &mut StatTable, changes: Vec<Change>) {
        for (name, key) in changes {
            match key {
                Some(key) => table.set(name, key),
                None => table.forget(&name),
            }
        }
    }

    #[test]
    fn reports_only_what_changed() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("a"), b"one").unwrap();
        std::fs::create_dir_all(root.path().join("sub/.git")).unwrap();
        std::fs::create_dir_all(root.path().join("data")).unwrap();
        std::fs::write(root.path().join("sub/b"), b"two").unwrap();
        std::fs::write(root.path().join("sub/.git/c"), b"no").unwrap();
        std::fs::write(root.path().join("data/d"), b"no").unwrap();
        std::fs::write(root.path().join("big"), b"more than ten bytes").unwrap();
        let mut table = table(root.path());
        let first = table.scan(None, 100).unwrap();
        let mut names: Vec<_> = first.iter().map(|(name, _)| PathBuf::from(name)).collect();
        names.sort();
        assert_eq!(names, vec![root.path().join("a"), root.path().join("sub/b")]);
        record(&mut table, first);
        assert!(table.scan(None, 100).unwrap().is_empty());
        std::fs::write(root.path().join("a"), b"three").unwrap();
        std::fs::remove_file(root.path().join("sub/b")).unwrap();
        std::fs::write(root.path().join("sub/e"), b"new").unwrap();
        let mut second = table.scan(None, 100).unwrap();
        second.sort();
        assert_eq!(second.len(), 3);
        assert_eq!(second[0].0, root.path().join("a").into_os_string());
        assert_eq!(second[0].1.unwrap().0, 5);
        assert_eq!(second[1], (root.path().join("sub/b").into_os_string(), None));
        assert_eq!(second[2].0, root.path().join("sub/e").into_os_string());
        assert!(table.scan(None, 1).is_none());
    }

    #[test]
    fn folders_a_command_made_are_found() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("old/empty")).unwrap();
        std::fs::write(root.path().join("old/a"), b"one").unwrap();
        let mut table = table(root.path());
        let first = table.scan(None, 100).unwrap();
        record(&mut table, first);
        std::fs::create_dir_all(root.path().join("old/empty/new/deeper")).unwrap();
        let made = root.path().join("old/empty/new/deeper/b").into_os_string();
        std::fs::write(&made, b"two").unwrap();
        let beside = root.path().join("old/c").into_os_string();
        std::fs::write(&beside, b"three").unwrap();
        table.scan(None, 100).unwrap();
        let folders = table.made_folders(&[made, beside]);
        let new = root.path().join("old/empty/new");
        assert_eq!(folders[0], vec![new.clone().into_os_string(), new.join("deeper").into_os_string()]);
        assert!(folders[1].is_empty());
    }

    #[test]
    fn a_listing_given_by_the_caller_is_used() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("a"), b"one").unwrap();
        std::fs::write(root.path().join("ignored"), b"x").unwrap();
        let mut table = table(root.path());
        let changes = table.scan(Some(vec![root.path().join("a").into_os_string()]), 100).unwrap();
        assert_eq!(changes.len(), 1);
        record(&mut table, changes);
        let gone = table.scan(Some(vec![]), 100).unwrap();
        assert_eq!(gone, vec![(root.path().join("a").into_os_string(), None)]);
    }
}
