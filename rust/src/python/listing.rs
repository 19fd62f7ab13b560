//! Python wrapper of `crate::index::listing`: many transcripts' listing fields in one call, the
//! GIL released while every core scans. No logic lives here.

use crate::index::{fingerprints, fork_source, listing_rows, names_of, ListingRow, OpenKind, Text};
use crate::scan::SourceFormat;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::path::PathBuf;

fn text<'py>(py: Python<'py>, value: &Text) -> PyResult<Bound<'py, PyAny>> {
    Ok(match value {
        Text::Known(Some(text)) => text.into_pyobject(py)?.into_any(),
        Text::Known(None) => py.None().into_bound(py),
        Text::Undecided => false.into_pyobject(py)?.to_owned().into_any(),
    })
}

fn row<'py>(py: Python<'py>, row: &ListingRow) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    dict.set_item(
        "format",
        row.format.map(|format| match format {
            SourceFormat::V3 => "v3",
            SourceFormat::LegacyV2 => "v2",
            SourceFormat::LegacyV1 => "v1",
        }),
    )?;
    dict.set_item("header", row.header.clone())?;
    dict.set_item("name", row.name.as_deref())?;
    dict.set_item("model", row.model.as_deref())?;
    dict.set_item("message_count", row.message_count)?;
    dict.set_item("entry_count", row.entry_count)?;
    dict.set_item("skipped_lines", row.skipped_lines)?;
    dict.set_item("last_timestamp", row.last_timestamp.as_deref())?;
    dict.set_item("size", row.size)?;
    dict.set_item("first_message", text(py, &row.first_message)?)?;
    dict.set_item("last_prompt", text(py, &row.last_prompt)?)?;
    dict.set_item("fingerprint", &row.fingerprint)?;
    dict.set_item(
        "source",
        match row.kind {
            OpenKind::Scanned => "scanned",
            OpenKind::Rebuilt => "rebuilt",
            OpenKind::Loaded => "loaded",
            OpenKind::Appended => "appended",
            OpenKind::AppendedRewritten => "appended_rewritten",
        },
    )?;
    Ok(dict)
}

/// The listing fields of each `(transcript, sidecar or None)`, in order: a dict, or the
/// exception opening that transcript raised (returned, not raised: one bad file never hides
/// its neighbours). A text field is `False` when the caller must read it itself.
#[pyfunction]
pub fn listing_rows_of<'py>(py: Python<'py>, items: Vec<(PathBuf, Option<PathBuf>)>) -> PyResult<Bound<'py, PyList>> {
    let results = py.detach(|| listing_rows(&items));
    let out = PyList::empty(py);
    for result in results {
        match result {
            Ok(found) => out.append(row(py, &found)?)?,
            Err(error) => out.append(PyErr::from(error).into_value(py))?,
        }
    }
    Ok(out)
}

/// The content fingerprint of each transcript (`""` when it cannot be read), in parallel.
#[pyfunction]
pub fn fingerprints_of(py: Python<'_>, paths: Vec<PathBuf>) -> Vec<String> {
    py.detach(|| fingerprints(&paths))
}

/// `(header cwd or None, latest session_info name)` of each transcript `(path, index sidecar or
/// None)`, in order, from a sidecar that describes it as it is, else read from its ends; the
/// name is `False` when a whole summary must decide, and an item is the exception when the
/// transcript cannot be read.
#[pyfunction]
pub fn names_of_files<'py>(py: Python<'py>, items: Vec<(PathBuf, Option<PathBuf>)>) -> PyResult<Bound<'py, PyList>> {
    let results = py.detach(|| names_of(&items));
    let out = PyList::empty(py);
    for result in results {
        match result {
            Ok((cwd, name)) => out.append((cwd, text(py, &name)?))?,
            Err(error) => out.append(PyErr::from(error).into_value(py))?,
        }
    }
    Ok(out)
}

/// What a fork needs of the transcript's first `end` bytes, read from its ends and one pass:
/// `(header cwd, body start, end of the bytes kept, whether they need a closing newline, leaf id,
/// latest name, the leaf's model, the first of `candidates` the body does not hold)`, or None
/// when only a scan can be sure.
#[pyfunction]
#[allow(clippy::type_complexity)]
pub fn fork_source_of(
    py: Python<'_>,
    transcript: PathBuf,
    end: u64,
    candidates: Vec<String>,
) -> PyResult<Option<(String, u64, u64, bool, Option<String>, Option<String>, Option<String>, Option<String>)>> {
    let found = py.detach(|| fork_source(&transcript, end, &candidates))?;
    Ok(found.map(|source| {
        (
            source.cwd,
            source.body_start,
            source.body_end,
            source.adds_newline,
            source.leaf,
            source.name,
            source.model,
            source.fresh_id,
        )
    }))
}
