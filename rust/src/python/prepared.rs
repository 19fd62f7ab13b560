//! `prepare_restore` and `PreparedRestore`: a restore verified once, then kept for a redo and
//! committed (`crate::store::restore::Prepared`). The disk work runs with the GIL released.

use super::store::{core_items, PyObjectStore, RestoreItem, RestorePlan};
use crate::store::{self, Companion, FaultInjection, KeepOptions, KeptState, Prepared, RestoreOptions};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Duration;

/// What a kept target held: `(target, kind, content_id, mode, size, stored_now)` with kind
/// `"regular"` (an object of the store now), `"missing"` or `"other"` (not kept: a symlink,
/// FIFO, folder or a file over `max_size`, for the caller to look at).
type KeptRow = (OsString, &'static str, Option<String>, Option<u32>, Option<u64>, bool);

/// A verified restore holding its journal lock until `commit` or `close`.
#[pyclass(frozen, module = "commandcode._native")]
pub struct PreparedRestore {
    inner: Mutex<Option<Prepared>>,
    options: RestoreOptions,
    #[pyo3(get)]
    plan: Py<RestorePlan>,
}

impl PreparedRestore {
    fn take(&self) -> PyResult<Prepared> {
        self.inner.lock().expect("no panics while held").take().ok_or_else(closed)
    }
}

fn closed() -> PyErr {
    PyValueError::new_err("this prepared restore was committed or closed already")
}

#[pymethods]
impl PreparedRestore {
    /// Stores the current bytes of every target the restore changes (from what verification
    /// read and hashed; new objects at zstd `level`, or stored uncompressed when it is `None`,
    /// made durable by one flush); returns a row
    /// per changed target (see `KeptRow`). `pause_ms` is a crash-test hook (slept between the
    /// flush's phases).
    #[pyo3(signature = (object_store, max_size, *, level, pause_ms = 0))]
    fn keep(
        &self,
        py: Python<'_>,
        object_store: PyRef<'_, PyObjectStore>,
        max_size: u64,
        level: Option<i32>,
        pause_ms: u64,
    ) -> PyResult<Vec<KeptRow>> {
        let guard = self.inner.lock().expect("no panics while held");
        let prepared = guard.as_ref().ok_or_else(closed)?;
        let inner = &object_store.inner;
        let options = KeepOptions { max_size, level, pause: Duration::from_millis(pause_ms) };
        let kept = py.detach(|| prepared.keep(inner, &options))?;
        Ok(kept
            .into_iter()
            .map(|file| match file.state {
                KeptState::Missing => (file.target.into_os_string(), "missing", None, None, None, false),
                KeptState::Other => (file.target.into_os_string(), "other", None, None, None, false),
                KeptState::Regular { content, mode, size, stored_now } => (
                    file.target.into_os_string(),
                    "regular",
                    Some(content.to_string()),
                    Some(mode),
                    Some(size),
                    stored_now,
                ),
            })
            .collect())
    }

    /// Carries the restore out, all or nothing, with `companion` replaced in the same step
    /// (the only way a restore runs from Python). Returns once every target holds its new
    /// content; the settle (flush, journal removal) runs on a thread of its own and releases the
    /// journal lock when done (`settle_restores` waits for it). `settle_pause_ms` is a crash-test
    /// hook (slept in the settle before its flush, before and between the removals of the
    /// companion's copy and of the journal, and after them).
    #[pyo3(signature = (object_store, *, companion = None, force = false, fail_before_step = None, step_delay_ms = 0, settle_pause_ms = 0))]
    #[allow(clippy::too_many_arguments, reason = "keyword-only Python options")]
    fn commit(
        &self,
        py: Python<'_>,
        object_store: PyRef<'_, PyObjectStore>,
        companion: Option<(PathBuf, Vec<u8>)>,
        force: bool,
        fail_before_step: Option<usize>,
        step_delay_ms: u64,
        settle_pause_ms: u64,
    ) -> PyResult<RestorePlan> {
        let prepared = self.take()?;
        let options = RestoreOptions {
            companion: companion.map(|(path, bytes)| Companion { path, bytes, mode: 0o600 }),
            force,
            faults: FaultInjection {
                fail_before_step,
                step_delay: Duration::from_millis(step_delay_ms),
                settle_pause: Duration::from_millis(settle_pause_ms),
            },
            ..self.options.clone()
        };
        let inner = &object_store.inner;
        Ok(py.detach(|| prepared.commit(inner, &options))?.into())
    }

    /// Releases the journal lock without restoring anything (harmless after `commit`).
    fn close(&self) {
        drop(self.inner.lock().expect("no panics while held").take());
    }
}

/// Waits for every restore of this process still settling (its flush and journal removal
/// after the commit returned), or only for the one of `journal` when given; returns
/// `(journal, reason)` of each settle waited for that failed (since the last call): its journal
/// is left for the next recovery to complete.
#[pyfunction]
#[pyo3(signature = (journal = None))]
pub fn settle_restores(py: Python<'_>, journal: Option<PathBuf>) -> Vec<(PathBuf, String)> {
    let failures = py.detach(|| match journal {
        Some(journal) => store::wait_for_journal(&journal).into_iter().collect(),
        None => store::settle_all(),
    });
    failures.into_iter().map(|failure| (failure.journal, failure.reason)).collect()
}

/// Takes the journal lock, recovers a pending journal, and verifies `items` (as
/// [`crate::store::restore()`] does); nothing is written. `plan` says what the restore would do.
#[pyfunction]
#[pyo3(signature = (object_store, items, journal, *, confine_to = None, protected = Vec::new(), in_place = true, memory_budget = 512 << 20))]
#[allow(clippy::too_many_arguments, reason = "keyword-only Python options")]
pub fn prepare_restore(
    py: Python<'_>,
    object_store: PyRef<'_, PyObjectStore>,
    items: Vec<PyRef<'_, RestoreItem>>,
    journal: PathBuf,
    confine_to: Option<PathBuf>,
    protected: Vec<PathBuf>,
    in_place: bool,
    memory_budget: u64,
) -> PyResult<PreparedRestore> {
    let items = core_items(items);
    let options = RestoreOptions { confine_to, protected, in_place, memory_budget, ..RestoreOptions::default() };
    let inner = &object_store.inner;
    let prepared = py.detach(|| store::prepare(inner, &items, &journal, &options))?;
    let plan = Py::new(py, RestorePlan::from(prepared.plan().clone()))?;
    Ok(PreparedRestore { inner: Mutex::new(Some(prepared)), options, plan })
}
