//! Python wrappers of the backup store (`crate::store`): `ObjectStore`, `FileState`,
//! `RestoreItem`, `RestorePlan` and the restore functions. Arguments are converted first, the
//! disk work runs with the GIL released, results are converted last. No logic lives here.

use crate::store::{
    self, Algorithm, Backup, BackupSource, ContentId, Desired, Expected, FileState as CoreFileState, Plan,
    RecoveryBounds, RecoveryOutcome, RestoreOptions, Sha256Digest, Special,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::collections::HashSet;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

fn parse_content_id(text: &str) -> PyResult<ContentId> {
    ContentId::parse(text).map_err(|error| PyValueError::new_err(error.to_string()))
}

/// What is (or was backed up) at a path.
///
/// `kind` is `"regular"`, `"missing"`, `"symlink"`, `"not_regular"` or `"too_large"`;
/// `content_id` (blake3 hex) is set for `"regular"` only.
#[pyclass(frozen, module = "commandcode._native")]
pub struct FileState {
    #[pyo3(get)]
    kind: &'static str,
    #[pyo3(get)]
    content_id: Option<String>,
    #[pyo3(get)]
    size: Option<u64>,
    #[pyo3(get)]
    mode: Option<u32>,
    /// Whether this call wrote a new object (backups only).
    #[pyo3(get)]
    stored_now: bool,
}

#[pymethods]
impl FileState {
    fn __repr__(&self) -> String {
        let content_id = self.content_id.as_deref().map_or("None".to_owned(), |id| format!("'{}…'", &id[..12]));
        let size = self.size.map_or("None".to_owned(), |size| size.to_string());
        let mode = self.mode.map_or("None".to_owned(), |mode| format!("0o{mode:o}"));
        format!(
            "FileState(kind='{}', content_id={content_id}, size={size}, mode={mode}, stored_now={})",
            self.kind,
            if self.stored_now { "True" } else { "False" }
        )
    }
}

impl FileState {
    fn simple(kind: &'static str) -> Self {
        FileState { kind, content_id: None, size: None, mode: None, stored_now: false }
    }
}

impl From<Backup> for FileState {
    fn from(backup: Backup) -> Self {
        match backup {
            Backup::Stored { id, size, mode, new } => FileState {
                kind: "regular",
                content_id: Some(id.to_string()),
                size: Some(size),
                mode: Some(mode),
                stored_now: new,
            },
            Backup::Missing => FileState::simple("missing"),
            Backup::Symlink => FileState::simple("symlink"),
            Backup::NotRegular => FileState::simple("not_regular"),
            Backup::TooLarge { size } => FileState { size: Some(size), ..FileState::simple("too_large") },
        }
    }
}

/// The shared content-addressed backup store (`<data dir>/objects`).
#[pyclass(frozen, module = "commandcode._native", name = "ObjectStore")]
pub struct PyObjectStore {
    pub(super) inner: store::ObjectStore,
}

#[pymethods]
impl PyObjectStore {
    /// Opens (creating when missing) the store at `root`.
    #[new]
    fn new(py: Python<'_>, root: PathBuf) -> PyResult<Self> {
        let inner = py.detach(|| store::ObjectStore::open(root))?;
        Ok(PyObjectStore { inner })
    }

    #[getter]
    fn root(&self) -> PathBuf {
        self.inner.root().to_path_buf()
    }

    /// Backs up the file at `path` (no symlink followed, nothing over `max_size` read).
    #[pyo3(signature = (path, max_size = store::MAX_BACKUP_SIZE))]
    fn backup_file(&self, py: Python<'_>, path: PathBuf, max_size: u64) -> PyResult<FileState> {
        Ok(py.detach(|| self.inner.backup_file(&path, max_size))?.into())
    }

    /// The current state of `path` and the blake3 of its bytes, storing nothing.
    #[pyo3(signature = (path, max_size = store::MAX_BACKUP_SIZE))]
    fn inspect_file(&self, py: Python<'_>, path: PathBuf, max_size: u64) -> PyResult<FileState> {
        let state = py.detach(|| store::read_file_state(&path, max_size))?;
        Ok(match state {
            CoreFileState::Missing => FileState::simple("missing"),
            CoreFileState::Symlink => FileState::simple("symlink"),
            CoreFileState::NotRegular => FileState::simple("not_regular"),
            CoreFileState::TooLarge { size, mode } => {
                FileState { size: Some(size), mode: Some(mode), ..FileState::simple("too_large") }
            }
            CoreFileState::Regular(file) => FileState {
                kind: "regular",
                content_id: Some(ContentId::of(&file.bytes).to_string()),
                size: Some(file.bytes.len() as u64),
                mode: Some(file.mode),
                stored_now: false,
            },
        })
    }

    /// [`inspect_file`](Self::inspect_file) of many paths at once, in parallel and without the
    /// GIL (shell tracking hashes every file a command left): `(content_id, mode)` of each
    /// regular file, `None` for anything else (gone, a symlink, over `max_size`, unreadable).
    #[pyo3(signature = (paths, max_size = store::MAX_BACKUP_SIZE))]
    fn inspect_files(&self, py: Python<'_>, paths: Vec<PathBuf>, max_size: u64) -> Vec<Option<(String, u32)>> {
        use rayon::prelude::*;
        py.detach(|| {
            paths
                .par_iter()
                .map(|path| match store::read_file_state(path, max_size) {
                    Ok(CoreFileState::Regular(file)) => Some((ContentId::of(&file.bytes).to_string(), file.mode)),
                    _ => None,
                })
                .collect()
        })
    }

    /// Stores `data`; returns `(content_id, stored_now)`.
    fn put_bytes(&self, py: Python<'_>, data: Vec<u8>) -> PyResult<(String, bool)> {
        let (id, new) = py.detach(|| self.inner.put_bytes(&data))?;
        Ok((id.to_string(), new))
    }

    /// The verified original bytes of an object.
    fn read<'py>(&self, py: Python<'py>, content_id: &str) -> PyResult<Bound<'py, PyBytes>> {
        let id = parse_content_id(content_id)?;
        let bytes = py.detach(|| self.inner.read(&id))?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// Raises `BackupIntegrityError` unless the object exists, decompresses and hashes to its name.
    fn verify(&self, py: Python<'_>, content_id: &str) -> PyResult<()> {
        let id = parse_content_id(content_id)?;
        Ok(py.detach(|| self.inner.verify(&id))?)
    }

    fn contains(&self, content_id: &str) -> PyResult<bool> {
        Ok(self.inner.contains(&parse_content_id(content_id)?))
    }

    fn object_path(&self, content_id: &str) -> PyResult<PathBuf> {
        Ok(self.inner.object_path(&parse_content_id(content_id)?))
    }

    /// Deletes unreferenced objects older than `grace_seconds`; returns
    /// `{deleted_objects, deleted_bytes, kept_objects, kept_young, removed_temporaries}`.
    fn sweep(&self, py: Python<'_>, referenced: Vec<String>, grace_seconds: f64) -> PyResult<Vec<(&'static str, u64)>> {
        let referenced = referenced.iter().map(|text| parse_content_id(text)).collect::<PyResult<HashSet<_>>>()?;
        let grace = Duration::try_from_secs_f64(grace_seconds.max(0.0)).unwrap_or(Duration::MAX);
        let report = py.detach(|| self.inner.sweep(&referenced, grace))?;
        Ok(vec![
            ("deleted_objects", report.deleted_objects),
            ("deleted_bytes", report.deleted_bytes),
            ("kept_objects", report.kept_objects),
            ("kept_young", report.kept_young),
            ("removed_temporaries", report.removed_temporaries),
        ])
    }

    /// Makes the objects of every pack loose objects, then deletes the packs (a collection's
    /// first step); returns `{packs, objects, removed_temporaries}`. `pause_ms` is a crash-test hook.
    #[pyo3(signature = (pause_ms=0))]
    fn absorb_packs(&self, py: Python<'_>, pause_ms: u64) -> PyResult<Vec<(&'static str, u64)>> {
        let report = py.detach(|| store::absorb(&self.inner, Duration::from_millis(pause_ms)))?;
        Ok(vec![
            ("packs", report.packs),
            ("objects", report.objects),
            ("removed_temporaries", report.removed_temporaries),
        ])
    }

    /// The ids of the objects the packs hold, ascending.
    fn packed_ids(&self, py: Python<'_>) -> Vec<String> {
        py.detach(|| store::packed_ids(&self.inner)).iter().map(ToString::to_string).collect()
    }

    /// `(id, bytes)` of every object in the packs (its frame's length), ascending by id.
    fn packed_sizes(&self, py: Python<'_>) -> Vec<(String, u64)> {
        py.detach(|| store::packed_sizes(&self.inner)).into_iter().map(|(id, size)| (id.to_string(), size)).collect()
    }

    /// `(objects, bytes_on_disk)`: loose objects, and packed ones no collection absorbed yet.
    fn usage(&self, py: Python<'_>) -> PyResult<(u64, u64)> {
        let usage = py.detach(|| self.inner.usage())?;
        Ok((usage.objects, usage.bytes))
    }

    fn __repr__(&self) -> String {
        format!("ObjectStore({:?})", self.inner.root())
    }
}

/// One file to put back.
///
/// `digest=None` means the file must not exist (it is deleted). Otherwise `algorithm` says what
/// names it: `"blake3"` (an object of the store) or `"sha256"` (a real-CLI raw blob in
/// `blob_folder`). `expected` is the last state our tools left: `None` (unknown, not checked),
/// `"absent"`, or a blake3 hex digest.
#[pyclass(frozen, module = "commandcode._native")]
#[derive(Clone)]
pub struct RestoreItem {
    inner: store::RestoreItem,
}

#[pymethods]
impl RestoreItem {
    #[new]
    #[pyo3(signature = (target, *, digest = None, algorithm = "blake3", blob_folder = None, blake3 = None, mode = None, expected = None, kind = "file", link = None, expected_link = None))]
    #[allow(clippy::too_many_arguments, reason = "the Python constructor's keywords")]
    fn new(
        target: PathBuf,
        digest: Option<&str>,
        algorithm: &str,
        blob_folder: Option<PathBuf>,
        blake3: Option<&str>,
        mode: Option<u32>,
        expected: Option<&str>,
        kind: &str,
        link: Option<PathBuf>,
        expected_link: Option<PathBuf>,
    ) -> PyResult<Self> {
        let desired = match (kind, digest) {
            ("file", _) => None,
            (_, Some(_)) => return Err(PyValueError::new_err("a symlink, FIFO or folder item has no digest")),
            (kind, None) => Some(Desired::Special(special(kind, link, mode)?)),
        };
        let desired = match (desired, digest) {
            (Some(desired), _) => desired,
            (None, None) => Desired::Absent,
            (None, Some(digest)) => {
                let source = match Algorithm::parse(algorithm) {
                    Some(Algorithm::Blake3) => BackupSource::Object(parse_content_id(digest)?),
                    Some(Algorithm::Sha256) => BackupSource::RawBlob {
                        folder: blob_folder.ok_or_else(|| PyValueError::new_err("a sha256 item needs blob_folder"))?,
                        digest: Sha256Digest::parse(digest)
                            .map_err(|error| PyValueError::new_err(error.to_string()))?,
                        // only a shortcut: a twin that is not a digest is no twin
                        named: blake3.and_then(|text| ContentId::parse(text).ok()),
                    },
                    None => return Err(PyValueError::new_err(format!("unknown backup algorithm {algorithm:?}"))),
                };
                Desired::Content { source, mode }
            }
        };
        let expected = match expected {
            None => Expected::Unknown,
            Some("absent") => Expected::Absent,
            Some(kind @ ("symlink" | "fifo" | "socket" | "folder")) => {
                Expected::Special(special(kind, expected_link, Some(0))?)
            }
            Some(hex) => Expected::Content(parse_content_id(hex)?),
        };
        Ok(RestoreItem { inner: store::RestoreItem { target, desired, expected } })
    }

    #[getter]
    fn target(&self) -> PathBuf {
        self.inner.target.clone()
    }

    fn __repr__(&self) -> String {
        format!("RestoreItem({:?}, {:?}, expected={:?})", self.inner.target, self.inner.desired, self.inner.expected)
    }
}

/// What a restore does (or did), with targets as `str` (the caller maps them back to its own
/// `Path` objects: building a `pathlib.Path` per target costs more than the rest of the
/// conversion): `entries` are `(target, action, changed_outside, content_id)`
/// with action `"write"`, `"delete"` or `"unchanged"` and `content_id` the blake3 of the bytes
/// the target gets (`None` for a delete); `problems` are `(target, code, message)`.
#[pyclass(frozen, module = "commandcode._native")]
pub struct RestorePlan {
    #[pyo3(get)]
    entries: Vec<(OsString, &'static str, bool, Option<String>)>,
    #[pyo3(get)]
    problems: Vec<(OsString, &'static str, String)>,
}

impl From<Plan> for RestorePlan {
    fn from(plan: Plan) -> Self {
        RestorePlan {
            entries: plan
                .entries
                .into_iter()
                .map(|entry| {
                    let content = entry.content.map(|id| id.to_string());
                    (entry.target.into_os_string(), entry.action.as_str(), entry.changed_outside, content)
                })
                .collect(),
            problems: plan
                .problems
                .into_iter()
                .map(|problem| {
                    let message = problem.to_string();
                    (problem.target.into_os_string(), problem.kind.code(), message)
                })
                .collect(),
        }
    }
}

#[pymethods]
impl RestorePlan {
    fn __repr__(&self) -> String {
        format!("RestorePlan(entries={}, problems={})", self.entries.len(), self.problems.len())
    }
}

/// A symlink (`link` its target), FIFO, socket or folder, from a `kind` keyword.
fn special(kind: &str, link: Option<PathBuf>, mode: Option<u32>) -> PyResult<Special> {
    match kind {
        "symlink" => Ok(Special::Symlink(link.ok_or_else(|| PyValueError::new_err("a symlink item needs its link"))?)),
        "fifo" => Ok(Special::Fifo { mode: mode.unwrap_or(0o644) }),
        "socket" => Ok(Special::Socket { mode: mode.unwrap_or(0o755) }),
        "folder" => Ok(Special::Folder { mode: mode.unwrap_or(0o755) }),
        other => Err(PyValueError::new_err(format!("unknown item kind {other:?}"))),
    }
}

/// The symlinks (with their targets), FIFOs, sockets, device nodes and hollow folders under
/// `root` (see `crate::store::tree_items`): `(path, kind, link, mode)` with kind `"symlink"`,
/// `"fifo"`, `"socket"`, `"device"` or `"folder"`, sorted by path.
#[pyfunction]
#[pyo3(signature = (root, excluded = Vec::new()))]
pub fn scan_tree_items(
    py: Python<'_>,
    root: PathBuf,
    excluded: Vec<PathBuf>,
) -> Vec<(PathBuf, &'static str, Option<PathBuf>, u32)> {
    py.detach(|| store::scan_tree_items(&root, &excluded))
        .into_iter()
        .map(|item| match item.kind {
            store::tree_items::TreeKind::Symlink(link) => (item.path, "symlink", Some(link), item.mode),
            store::tree_items::TreeKind::Fifo => (item.path, "fifo", None, item.mode),
            store::tree_items::TreeKind::Socket => (item.path, "socket", None, item.mode),
            store::tree_items::TreeKind::Device => (item.path, "device", None, item.mode),
            store::tree_items::TreeKind::Folder => (item.path, "folder", None, item.mode),
        })
        .collect()
}

pub(super) fn core_items(items: Vec<PyRef<'_, RestoreItem>>) -> Vec<store::RestoreItem> {
    items.iter().map(|item| item.inner.clone()).collect()
}

/// Verifies a restore without writing anything.
#[pyfunction]
#[pyo3(signature = (object_store, items, *, confine_to = None, protected = Vec::new()))]
pub fn check_restore(
    py: Python<'_>,
    object_store: PyRef<'_, PyObjectStore>,
    items: Vec<PyRef<'_, RestoreItem>>,
    confine_to: Option<PathBuf>,
    protected: Vec<PathBuf>,
) -> PyResult<RestorePlan> {
    let items = core_items(items);
    let options = RestoreOptions { confine_to, protected, ..RestoreOptions::default() };
    let inner = &object_store.inner;
    Ok(py.detach(|| store::check(inner, &items, &options))?.into())
}

/// Finishes or undoes a restore a crash interrupted. Returns `None` when there was none, else
/// `("rolled_back" | "completed", targets)`. Every path the journal names must lie within the
/// bounds given (`root`: the session's working directory, `None` for a restore let outside it;
/// `protected`: the data dir; `store`, `blob_folder`: the allowed sources; `companion`: the
/// session's checkpoints file); a journal that does not is kept and nothing is touched.
#[pyfunction]
#[pyo3(signature = (journal, *, root, protected = Vec::new(), store = None, blob_folder = None, companion = None))]
pub fn recover_restore(
    py: Python<'_>,
    journal: PathBuf,
    root: Option<PathBuf>,
    protected: Vec<PathBuf>,
    store: Option<PathBuf>,
    blob_folder: Option<PathBuf>,
    companion: Option<PathBuf>,
) -> PyResult<Option<(&'static str, Vec<PathBuf>)>> {
    let bounds = RecoveryBounds { root, protected, store, blob_folder, companion };
    let outcome = py.detach(|| store::recover(&journal, &bounds))?;
    Ok(outcome.map(|outcome| match outcome {
        RecoveryOutcome::RolledBack { targets } => ("rolled_back", targets),
        RecoveryOutcome::Completed { targets } => ("completed", targets),
    }))
}

/// Bytes free at `path` (`statvfs`), or `None` when it cannot be asked.
#[pyfunction]
pub fn free_space(py: Python<'_>, path: PathBuf) -> Option<u64> {
    py.detach(|| store::free_space(&path))
}

/// The blake3 content id (hex) of `data`.
#[pyfunction]
pub fn content_id(data: &[u8]) -> String {
    ContentId::of(data).to_string()
}
