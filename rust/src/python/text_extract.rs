//! Python wrappers of `crate::text_extract` (the catalog's full-text index). No logic lives here.
//!
//! A row crosses as `(offset, ordinal, kind, entry, timestamp, text)`, `kind` being the number
//! of `TextKind` (0 user, 1 assistant, 2 tool, 3 result).

use crate::text_extract::{self, TextRow};
use pyo3::prelude::*;
use std::path::PathBuf;

/// One row as Python gets it.
type Row = (u64, u32, u8, String, String, String);

fn convert(rows: Vec<TextRow>) -> Vec<Row> {
    rows.into_iter().map(|row| (row.offset, row.ordinal, row.kind as u8, row.entry, row.timestamp, row.text)).collect()
}

/// `(rows, end)`: the text rows of the kinds in the bit mask `kinds` of the whole lines from
/// `start` on, reading about `max_bytes` (to the next line end), and the offset after the last
/// whole line read.
///
/// Raises `OSError` when the transcript cannot be read.
#[pyfunction]
#[pyo3(signature = (path, start, max_bytes, kinds=15))]
pub fn extract_texts(
    py: Python<'_>,
    path: PathBuf,
    start: u64,
    max_bytes: u64,
    kinds: u8,
) -> PyResult<(Vec<Row>, u64)> {
    let found = py.detach(|| text_extract::extract(&path, start, max_bytes, kinds))?;
    Ok((convert(found.rows), found.end))
}

/// `(rows, end)`: the rows between `start` and `stop` whose kind is in the bit mask `kinds` and
/// whose lowercased text holds `needle` (already lowercased), the last `keep` of them.
///
/// Raises `OSError` when the transcript cannot be read.
#[pyfunction]
pub fn search_texts(
    py: Python<'_>,
    path: PathBuf,
    start: u64,
    stop: u64,
    needle: &str,
    kinds: u8,
    keep: usize,
) -> PyResult<(Vec<Row>, u64)> {
    let needle = needle.to_owned();
    let found = py.detach(|| text_extract::search(&path, start, stop, &needle, kinds, keep))?;
    Ok((convert(found.rows), found.end))
}

/// The rows of the lines starting at `offsets` (an empty list for a line that is gone).
///
/// Raises `OSError` when the transcript cannot be read.
#[pyfunction]
pub fn texts_at(py: Python<'_>, path: PathBuf, offsets: Vec<u64>) -> PyResult<Vec<Vec<Row>>> {
    let found = py.detach(|| text_extract::rows_at(&path, &offsets))?;
    Ok(found.into_iter().map(convert).collect())
}

/// `text` lowercased as the matching folds it (Unicode).
#[pyfunction]
pub fn fold_text(text: &str) -> String {
    text_extract::fold(text).into_owned()
}
