//! Python wrapper of `crate::temp_names`: the temp-file-shaped names of many folders in one
//! call, the GIL released while it reads. No logic lives here.

use crate::temp_names;
use pyo3::prelude::*;
use std::ffi::OsString;
use std::path::PathBuf;

/// `(index in folders, name)` of every entry whose name starts with `prefix` and ends with
/// `suffix`; folders that cannot be read give nothing.
#[pyfunction]
pub fn names_like(py: Python<'_>, folders: Vec<PathBuf>, prefix: &str, suffix: &str) -> Vec<(usize, OsString)> {
    let (prefix, suffix) = (prefix.as_bytes().to_vec(), suffix.as_bytes().to_vec());
    py.detach(|| temp_names::names_like(&folders, &prefix, &suffix))
}
