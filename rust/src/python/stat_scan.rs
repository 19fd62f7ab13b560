//! Python wrapper of `crate::store::stat_scan`: `StatTable`. The scan runs with the GIL released;
//! the table sits behind a mutex (the shell tracker's background thread and the turn's thread
//! never use it at once, but a second user waits rather than fails). No logic lives here.

use crate::store::stat_scan::{Change, StatKey, StatTable as CoreStatTable};
use pyo3::prelude::*;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Mutex;

#[pyclass(frozen, module = "commandcode._native", name = "StatTable")]
pub struct PyStatTable {
    inner: Mutex<CoreStatTable>,
}

impl PyStatTable {
    fn with<T>(&self, action: impl FnOnce(&mut CoreStatTable) -> T) -> T {
        let mut table = self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        action(&mut table)
    }
}

#[pymethods]
impl PyStatTable {
    /// An empty table of the project at `root`, skipping the `excluded` folders.
    #[new]
    #[pyo3(signature = (root, excluded, max_size = crate::store::MAX_BACKUP_SIZE))]
    fn new(root: PathBuf, excluded: Vec<OsString>, max_size: u64) -> Self {
        PyStatTable { inner: Mutex::new(CoreStatTable::new(root, excluded, max_size)) }
    }

    /// `[(path, key or None)]` of the files whose key differs from the table's (`names`: the
    /// project's listing; `None`: walk it); `None` when there are more than `max_files`. Unless
    /// `full`, only what the folder watches saw change is looked at, once they are trusted.
    #[pyo3(signature = (names, max_files, full = true))]
    fn scan(&self, py: Python<'_>, names: Option<Vec<OsString>>, max_files: usize, full: bool) -> Option<Vec<Change>> {
        py.detach(|| self.with(|table| table.scan(names, max_files, full)))
    }

    /// Records the key of `path`.
    fn set(&self, path: OsString, key: StatKey) {
        self.with(|table| table.set(path, key));
    }

    /// Records many keys at once (a baseline read back from its sidecar).
    fn set_many(&self, entries: Vec<(OsString, StatKey)>) {
        self.with(|table| entries.into_iter().for_each(|(path, key)| table.set(path, key)));
    }

    /// For each created file of `paths`, the folders the project did not have before, outermost first.
    fn made_folders(&self, paths: Vec<OsString>) -> Vec<Vec<OsString>> {
        self.with(|table| table.made_folders(&paths))
    }

    /// Pins the latest walk's folders plus `extra` as the project's folders before the commands
    /// about to run (`made_folders` counts them as known until `unpin_folders`); returns them.
    fn pin_folders(&self, extra: Vec<OsString>) -> Vec<OsString> {
        self.with(|table| table.pin_folders(extra))
    }

    /// Ends `pin_folders`.
    fn unpin_folders(&self) {
        self.with(|table| table.unpin_folders());
    }

    /// Whether the listing may have changed since the last pass (see the core's docs).
    fn structure_changed(&self, py: Python<'_>) -> bool {
        py.detach(|| self.with(|table| table.structure_changed()))
    }

    /// Folders to watch besides those holding listed files (untracked, empty ones), with their subfolders.
    fn set_extra_folders(&self, folders: Vec<OsString>) {
        self.with(|table| table.set_extra_folders(folders));
    }

    /// Forgets `path`.
    fn forget(&self, path: OsString) {
        self.with(|table| table.forget(&path));
    }

    fn __len__(&self) -> usize {
        self.with(|table| table.len())
    }
}
