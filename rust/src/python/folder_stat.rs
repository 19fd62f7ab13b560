//! Python wrapper of `crate::folder_stat`: the catalog's warm freshness check. No logic lives here.

use crate::folder_stat;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use std::ffi::OsString;
use std::path::PathBuf;

/// `(changed names, gone names, snapshot now)` of `folder` against `previous` (see the module).
///
/// Raises `OSError` when the folder cannot be read.
#[pyfunction]
pub fn folder_changes<'py>(
    py: Python<'py>,
    folder: PathBuf,
    previous: &[u8],
) -> PyResult<(Vec<OsString>, Vec<OsString>, Bound<'py, PyBytes>)> {
    let previous = previous.to_vec();
    let changes = py.detach(|| folder_stat::folder_changes(&folder, &previous))?;
    Ok((changes.changed, changes.gone, PyBytes::new(py, &changes.snapshot)))
}
