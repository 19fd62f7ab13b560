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
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::watch::{Drained, Watcher};

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
    pinned: Option<HashSet<OsString>>,
    watcher: Option<Watcher>,
    trusted: bool,
    watch_failed: bool,
    pending: Option<Drained>,
    extra_folders: Vec<OsString>,
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
            pinned: None,
            watcher: None,
            trusted: false,
            watch_failed: false,
            pending: None,
            extra_folders: Vec::new(),
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

    /// Pins the folders the latest walk listed, plus `extra`, as the ones the project had
    /// before the commands about to run: until [`StatTable::unpin_folders`], `made_folders`
    /// counts these as known instead of the ones the walk before the latest listed. With
    /// commands overlapping, a walk after one of them may list a folder another is still
    /// filling (made, its file not there yet); that folder was still made. Returns the pinned
    /// folders (a caller keeps them to find the made folders after a crash).
    pub fn pin_folders(&mut self, extra: Vec<OsString>) -> Vec<OsString> {
        let mut pinned: HashSet<OsString> = self.tree.keys().cloned().collect();
        pinned.extend(extra);
        let listed = pinned.iter().cloned().collect();
        self.pinned = Some(pinned);
        listed
    }

    /// Ends [`StatTable::pin_folders`]: the walk before the latest is the reference again.
    pub fn unpin_folders(&mut self) {
        self.pinned = None;
    }

    /// For each of `paths` (files a command created), the folders between the root and it that
    /// the project did not have before: outermost first. A folder counts as known when the
    /// walk before the latest one listed it (or it is pinned: [`StatTable::pin_folders`]), or
    /// when a file of the table lies in it (with a caller's listing, where no walk runs). Call
    /// before recording the new files' keys.
    pub fn made_folders(&self, paths: &[OsString]) -> Vec<Vec<OsString>> {
        let before = self.pinned.as_ref().unwrap_or(&self.previous_folders);
        let mut known: HashSet<&Path> = before.iter().map(Path::new).collect();
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
        self.read_folder(folder)
    }

    /// A folder's listing read now: its files and subfolders (no `.git`, no excluded folder).
    fn read_folder(&self, folder: &OsString) -> Option<Folder> {
        let mtime = mtime_ns(Path::new(folder))?;
        let mut files = Vec::new();
        let mut folders = Vec::new();
        for entry in std::fs::read_dir(folder).ok()?.flatten() {
            let is_dir = entry.file_type().map(|kind| kind.is_dir()).unwrap_or(false);
            let path = entry.path().into_os_string();
            if is_dir {
                if entry.file_name() != ".git" && !self.excluded(&path) {
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
    /// walk it). `None` when the project has more than `max_files` files. Unless `full`, and
    /// once the folder watches are trusted (placed before a full pass that then found nothing
    /// new to watch), only the paths the change events name are looked at.
    pub fn scan(&mut self, names: Option<Vec<OsString>>, max_files: usize, full: bool) -> Option<Vec<Change>> {
        if !full && self.trusted {
            let drained = self.watcher.as_mut().and_then(Watcher::drain);
            match (drained, self.pending.take()) {
                (Some(drained), Some(mut pending)) => {
                    pending.merge(drained);
                    return self.scan_events(names, pending, max_files);
                }
                (Some(drained), None) => return self.scan_events(names, drained, max_files),
                (None, _) => self.trusted = false, // overflow or read error: a full pass, then watch again
            }
        }
        self.pending = None;
        let drained_before = self.watcher.as_mut().map(Watcher::drain);
        if matches!(drained_before, Some(None)) {
            self.watcher = None; // its queue overflowed: start again
        }
        let names = match names {
            Some(names) => names,
            None => self.walk(max_files)?,
        };
        if names.len() > max_files {
            return None;
        }
        let names: Vec<OsString> = names.into_iter().filter(|name| !self.excluded(name)).collect();
        let mut changes = self.compare(&names);
        if !self.keys.is_empty() {
            let present: HashSet<&OsString> = names.iter().collect();
            changes.extend(self.keys.keys().filter(|name| !present.contains(name)).map(|name| (name.clone(), None)));
        }
        self.place_watches(&names);
        Some(changes)
    }

    fn compare(&self, names: &[OsString]) -> Vec<Change> {
        let max_size = self.max_size;
        let keys = &self.keys;
        names
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
            .collect()
    }

    /// After a full pass: a watch on every folder of the project (the walk's folders, or the
    /// folders of the caller's listing). Trusted only when none had to be added (a watch placed
    /// after its folder was read could miss a change made in between).
    /// Whether the project's listing may have changed since the last pass: files or folders
    /// created, deleted or moved, a `.gitignore` touched, anything in `.git` (the index), or
    /// watches not trusted. The events read are kept for the next pass. Lets a caller reuse
    /// the listing it passed last (`git ls-files` costs tens of milliseconds).
    pub fn structure_changed(&mut self) -> bool {
        if !self.trusted {
            return true;
        }
        let Some(drained) = self.watcher.as_mut().and_then(Watcher::drain) else {
            self.trusted = false;
            self.pending = None;
            return true;
        };
        let pending = self.pending.get_or_insert_with(Drained::default);
        pending.merge(drained);
        let git = self.root.join(".git").into_os_string();
        !pending.relisted.is_empty()
            || !pending.new_folders.is_empty()
            || !pending.gone_folders.is_empty()
            || pending.touched.iter().any(|name| {
                under(name.as_bytes(), git.as_bytes()) || Path::new(name).file_name() == Some(OsStr::new(".gitignore"))
            })
    }

    /// Folders to watch besides the ones holding listed files (with their subfolders): with a
    /// caller's listing, the folders that hold no listed file yet (untracked, empty ones).
    pub fn set_extra_folders(&mut self, folders: Vec<OsString>) {
        self.extra_folders = folders;
    }

    fn extra_watch_folders(&self) -> Vec<OsString> {
        let mut found = Vec::new();
        let mut pending = self.extra_folders.clone();
        while let Some(folder) = pending.pop() {
            if self.excluded(&folder) || !folder.as_bytes().starts_with(self.root.as_os_str().as_bytes()) {
                continue;
            }
            if let Some(listed) = self.read_folder(&folder) {
                pending.extend(listed.folders);
                found.push(folder);
            }
        }
        found
    }

    fn place_watches(&mut self, names: &[OsString]) {
        if self.watch_failed {
            return;
        }
        if self.watcher.is_none() {
            self.watcher = Watcher::new();
        }
        if self.watcher.is_none() {
            self.watch_failed = true;
            return;
        }
        let extra = self.extra_watch_folders();
        let git = self.root.join(".git");
        let Some(watcher) = self.watcher.as_mut() else { return };
        let mut folders: HashSet<&Path> = self.tree.keys().map(Path::new).collect();
        folders.extend(extra.iter().map(Path::new));
        folders.insert(self.root.as_path());
        if self.tree.is_empty() && git.is_dir() {
            folders.insert(git.as_path()); // with a caller's (git's) listing: index changes too
        }
        for name in names {
            let mut folder = Path::new(name).parent();
            while let Some(parent) = folder {
                if !parent.starts_with(&self.root) || !folders.insert(parent) {
                    break;
                }
                folder = parent.parent();
            }
        }
        let mut added = false;
        for folder in folders {
            if !watcher.watches(folder.as_os_str()) {
                if !watcher.add(folder.as_os_str()) {
                    self.watcher = None; // the user's inotify limit: full passes from now on
                    self.watch_failed = true;
                    self.trusted = false;
                    return;
                }
                added = true;
            }
        }
        self.trusted = !added;
    }

    /// The incremental pass: only the paths the events name, the files of folders created
    /// since (watched before they are read), and what was known below removed folders.
    fn scan_events(&mut self, names: Option<Vec<OsString>>, drained: Drained, max_files: usize) -> Option<Vec<Change>> {
        let mut candidates: HashSet<OsString> = drained.touched;
        for gone in &drained.gone_folders {
            let prefix = gone.as_bytes();
            candidates.extend(self.keys.keys().filter(|name| under(name.as_bytes(), prefix)).cloned());
        }
        match names {
            None => {
                self.previous_folders = self.tree.keys().cloned().collect();
                for gone in &drained.gone_folders {
                    let prefix = gone.as_bytes();
                    self.tree.retain(|folder, _| !under(folder.as_bytes(), prefix));
                }
                let mut pending: Vec<OsString> = drained.relisted.into_iter().collect();
                while let Some(folder) = pending.pop() {
                    if !self.tree.contains_key(&folder) && !self.watch_new(&folder) {
                        return self.untrusted_full(None, max_files);
                    }
                    let Some(listed) = self.read_folder(&folder) else {
                        self.tree.remove(&folder);
                        continue;
                    };
                    if let Some(old) = self.tree.get(&folder) {
                        candidates.extend(old.files.iter().filter(|name| !listed.files.contains(name)).cloned());
                    }
                    candidates.extend(listed.files.iter().cloned());
                    pending.extend(listed.folders.iter().filter(|sub| !self.tree.contains_key(*sub)).cloned());
                    self.tree.insert(folder, listed);
                }
                if self.tree.values().map(|folder| folder.files.len()).sum::<usize>() > max_files {
                    return None;
                }
            }
            Some(names) => {
                if names.len() > max_files {
                    return None;
                }
                for folder in drained.new_folders {
                    if !self.watch_new(&folder) {
                        return self.untrusted_full(Some(names), max_files);
                    }
                }
                let listed: HashSet<&OsString> = names.iter().collect();
                candidates.extend(self.keys.keys().filter(|name| !listed.contains(name)).cloned());
                let new: Vec<OsString> = names.iter().filter(|name| !self.keys.contains_key(*name)).cloned().collect();
                for name in &new {
                    if let Some(parent) = Path::new(name).parent() {
                        if !self.watch_new(&parent.as_os_str().to_os_string()) {
                            return self.untrusted_full(Some(names), max_files);
                        }
                    }
                }
                candidates.extend(new);
                candidates.retain(|name| listed.contains(name) || self.keys.contains_key(name));
            }
        }
        let candidates: Vec<OsString> = candidates.into_iter().filter(|name| !self.excluded(name)).collect();
        Some(self.compare(&candidates))
    }

    /// Watches a folder found by the events (before it is read); `false` when it cannot.
    fn watch_new(&mut self, folder: &OsString) -> bool {
        match self.watcher.as_mut() {
            Some(watcher) => watcher.add(folder) || !Path::new(folder).is_dir(),
            None => false,
        }
    }

    fn untrusted_full(&mut self, names: Option<Vec<OsString>>, max_files: usize) -> Option<Vec<Change>> {
        self.trusted = false;
        self.watcher = None;
        self.watch_failed = true;
        self.scan(names, max_files, true)
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
        let first = table.scan(None, 100, true).unwrap();
        let mut names: Vec<_> = first.iter().map(|(name, _)| PathBuf::from(name)).collect();
        names.sort();
        assert_eq!(names, vec![root.path().join("a"), root.path().join("sub/b")]);
        record(&mut table, first);
        assert!(table.scan(None, 100, true).unwrap().is_empty());
        std::fs::write(root.path().join("a"), b"three").unwrap();
        std::fs::remove_file(root.path().join("sub/b")).unwrap();
        std::fs::write(root.path().join("sub/e"), b"new").unwrap();
        let mut second = table.scan(None, 100, true).unwrap();
        second.sort();
        assert_eq!(second.len(), 3);
        assert_eq!(second[0].0, root.path().join("a").into_os_string());
        assert_eq!(second[0].1.unwrap().0, 5);
        assert_eq!(second[1], (root.path().join("sub/b").into_os_string(), None));
        assert_eq!(second[2].0, root.path().join("sub/e").into_os_string());
        assert!(table.scan(None, 1, true).is_none());
    }

    #[test]
    fn folders_a_command_made_are_found() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("old/empty")).unwrap();
        std::fs::write(root.path().join("old/a"), b"one").unwrap();
        let mut table = table(root.path());
        let first = table.scan(None, 100, true).unwrap();
        record(&mut table, first);
        std::fs::create_dir_all(root.path().join("old/empty/new/deeper")).unwrap();
        let made = root.path().join("old/empty/new/deeper/b").into_os_string();
        std::fs::write(&made, b"two").unwrap();
        let beside = root.path().join("old/c").into_os_string();
        std::fs::write(&beside, b"three").unwrap();
        table.scan(None, 100, true).unwrap();
        let folders = table.made_folders(&[made, beside]);
        let new = root.path().join("old/empty/new");
        assert_eq!(folders[0], vec![new.clone().into_os_string(), new.join("deeper").into_os_string()]);
        assert!(folders[1].is_empty());
    }

    #[test]
    fn pinned_folders_stay_the_reference_across_walks() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("a"), b"one").unwrap();
        let mut table = table(root.path());
        let first = table.scan(None, 100, true).unwrap();
        record(&mut table, first);
        table.scan(None, 100, true).unwrap();
        let pinned = table.pin_folders(vec![]);
        assert_eq!(pinned, vec![root.path().as_os_str().to_os_string()]);
        std::fs::create_dir_all(root.path().join("new/deep")).unwrap();
        table.scan(None, 100, true).unwrap(); // another command's end: the folder, not its file yet
        let made = root.path().join("new/deep/x").into_os_string();
        std::fs::write(&made, b"two").unwrap();
        table.scan(None, 100, true).unwrap();
        let new = root.path().join("new");
        assert_eq!(
            table.made_folders(std::slice::from_ref(&made))[0],
            vec![new.clone().into_os_string(), new.join("deep").into_os_string()]
        );
        table.unpin_folders();
        assert!(table.made_folders(&[made])[0].is_empty());
    }

    fn sorted(mut changes: Vec<Change>) -> Vec<Change> {
        changes.sort();
        changes
    }

    #[test]
    fn the_incremental_pass_finds_what_a_full_pass_finds() {
        let root = tempfile::tempdir().unwrap();
        let at = |name: &str| root.path().join(name);
        std::fs::create_dir_all(at("a/b")).unwrap();
        std::fs::create_dir_all(at("gone/deep")).unwrap();
        std::fs::create_dir_all(at("moving")).unwrap();
        for name in ["a/one", "a/b/two", "gone/deep/three", "moving/four", "five"] {
            std::fs::write(at(name), &name[..2]).unwrap();
        }
        let mut watched = table(root.path());
        let mut full = table(root.path());
        for _ in 0..2 {
            let changes = watched.scan(None, 100, true).unwrap(); // the second full pass trusts the watches
            record(&mut watched, changes);
        }
        assert!(watched.trusted);
        let first = full.scan(None, 100, true).unwrap();
        record(&mut full, first);
        let step = |number: usize| match number {
            0 => std::fs::write(at("a/one"), "changed").unwrap(),
            1 => std::fs::remove_dir_all(at("gone")).unwrap(),
            2 => {
                std::fs::create_dir_all(at("new/inner")).unwrap();
                std::fs::write(at("new/inner/six"), "6").unwrap();
            }
            3 => std::fs::rename(at("moving"), at("moved")).unwrap(),
            4 => {
                std::fs::write(at("a/b/tmp"), "t").unwrap();
                std::fs::rename(at("a/b/tmp"), at("a/b/two")).unwrap();
            }
            5 => {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(at("five"), std::fs::Permissions::from_mode(0o600)).unwrap();
            }
            _ => std::fs::write(at("new/inner/six"), "66").unwrap(),
        };
        for number in 0..7 {
            step(number);
            let incremental = sorted(watched.scan(None, 100, false).unwrap());
            let expected = sorted(full.scan(None, 100, true).unwrap());
            assert!(!expected.is_empty(), "step {number}");
            assert_eq!(incremental, expected);
            record(&mut watched, incremental);
            record(&mut full, expected);
        }
        assert!(watched.trusted, "no overflow or failure in this test");
    }

    #[test]
    fn a_listing_given_by_the_caller_is_used() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("a"), b"one").unwrap();
        std::fs::write(root.path().join("ignored"), b"x").unwrap();
        let mut table = table(root.path());
        let changes = table.scan(Some(vec![root.path().join("a").into_os_string()]), 100, true).unwrap();
        assert_eq!(changes.len(), 1);
        record(&mut table, changes);
        let gone = table.scan(Some(vec![]), 100, true).unwrap();
        assert_eq!(gone, vec![(root.path().join("a").into_os_string(), None)]);
    }
}
