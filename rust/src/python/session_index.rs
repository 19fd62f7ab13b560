//! `SessionIndex`: a scanned transcript held in Rust, queried from Python without copying the
//! entry list across the boundary. Payloads are read back on demand by byte offset and turned
//! into Python objects directly with jiter.

use crate::envelope::{Extra, Role};
use crate::scan::{scan_file, Entry, ScanReport, SourceFormat};
use crate::tree::{self, SessionTree};
use crate::Error;
use jiter::PythonParse;
use pyo3::exceptions::{PyKeyError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

/// A scanned transcript: header, entry envelopes, skipped lines and the session tree.
#[pyclass(frozen, module = "commandcode._native")]
pub struct SessionIndex {
    path: PathBuf,
    report: ScanReport,
    tree: SessionTree,
}

/// Scans the transcript at `path` with the GIL released.
#[pyfunction]
pub fn scan_session(py: Python<'_>, path: PathBuf) -> PyResult<SessionIndex> {
    let (report, tree) = py.detach(|| -> Result<_, Error> {
        let report = scan_file(&path)?;
        let tree = SessionTree::build(&report.entries);
        Ok((report, tree))
    })?;
    Ok(SessionIndex { path, report, tree })
}

impl SessionIndex {
    fn entry(&self, id: &str) -> PyResult<&Entry> {
        self.tree
            .index_of(id)
            .map(|index| &self.report.entries[index])
            .ok_or_else(|| PyKeyError::new_err(format!("no entry with id {id}")))
    }

    fn ids(&self, indices: &[usize]) -> Vec<&str> {
        indices.iter().map(|&index| &*self.report.entries[index].id).collect()
    }

    /// Reads the raw lines of `indices` from disk, with the GIL released.
    fn read_lines(&self, py: Python<'_>, indices: &[usize]) -> PyResult<Vec<Vec<u8>>> {
        let spans: Vec<(u64, u64)> =
            indices.iter().map(|&index| (self.report.entries[index].offset, self.report.entries[index].length)).collect();
        let path = &self.path;
        Ok(py.detach(|| -> Result<_, Error> {
            let file = std::fs::File::open(path).map_err(|source| Error::io(path, source))?;
            spans
                .iter()
                .map(|&(offset, length)| {
                    let mut line = vec![0; length as usize];
                    file.read_exact_at(&mut line, offset).map_err(|_| Error::Stale { path: path.clone(), offset })?;
                    Ok(line)
                })
                .collect()
        })?)
    }

    fn parse_lines<'py>(&self, py: Python<'py>, indices: &[usize]) -> PyResult<Bound<'py, PyList>> {
        let lines = self.read_lines(py, indices)?;
        let parser = PythonParse::default();
        let list = PyList::empty(py);
        for (line, &index) in lines.iter().zip(indices) {
            let value = match parser.python_parse(py, line) {
                Ok(value) => value,
                Err(_) if std::str::from_utf8(line).is_err() => {
                    let lossy = String::from_utf8_lossy(line);
                    parser.python_parse(py, lossy.as_bytes()).map_err(|_| self.stale(index))?
                }
                Err(_) => return Err(self.stale(index)),
            };
            list.append(value)?;
        }
        Ok(list)
    }

    fn stale(&self, index: usize) -> PyErr {
        Error::Stale { path: self.path.clone(), offset: self.report.entries[index].offset }.into()
    }
}

#[pymethods]
impl SessionIndex {
    /// The transcript path this index was scanned from.
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// The header as a dict, or `None` when the file has no valid header.
    #[getter]
    fn header<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(header) = &self.report.header else { return Ok(None) };
        let dict = PyDict::new(py);
        dict.set_item("id", &header.id)?;
        dict.set_item("timestamp", &header.timestamp)?;
        dict.set_item("cwd", &header.cwd)?;
        dict.set_item("parent_session", &header.parent_session)?;
        dict.set_item("session_id", &header.session_id)?;
        dict.set_item("line", header.line)?;
        Ok(Some(dict))
    }

    /// `"v3"`, `"v2"`, `"v1"`, or `None` for a file with no JSON object at all.
    #[getter]
    fn format(&self) -> Option<&'static str> {
        self.report.format.map(|format| match format {
            SourceFormat::V3 => "v3",
            SourceFormat::LegacyV2 => "v2",
            SourceFormat::LegacyV1 => "v1",
        })
    }

    #[getter]
    fn legacy_entrypoint(&self) -> Option<String> {
        self.report.legacy_entrypoint.clone()
    }

    #[getter]
    fn file_size(&self) -> u64 {
        self.report.file_size
    }

    #[getter]
    fn ends_with_newline(&self) -> bool {
        self.report.ends_with_newline
    }

    #[getter]
    fn has_bom(&self) -> bool {
        self.report.has_bom
    }

    #[getter]
    fn line_count(&self) -> u64 {
        self.report.line_count
    }

    #[getter]
    fn entry_count(&self) -> usize {
        self.report.entries.len()
    }

    /// Skipped lines as dicts `{line, offset, length, reason, detail}`.
    #[getter]
    fn skipped<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for skipped in &self.report.skipped {
            let dict = PyDict::new(py);
            dict.set_item("line", skipped.line)?;
            dict.set_item("offset", skipped.offset)?;
            dict.set_item("length", skipped.length)?;
            dict.set_item("reason", skipped.reason.as_str())?;
            dict.set_item("detail", &skipped.detail)?;
            list.append(dict)?;
        }
        Ok(list)
    }

    /// Tree anomalies: `{cycle_detected, unknown_parents, duplicate_ids}`.
    #[getter]
    fn anomalies<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        dict.set_item("cycle_detected", self.tree.cycle_detected)?;
        dict.set_item("unknown_parents", self.tree.unknown_parents)?;
        dict.set_item("duplicate_ids", self.tree.duplicate_ids)?;
        Ok(dict)
    }

    /// The leaf entry id (the last valid entry in file order).
    #[getter]
    fn leaf_id(&self) -> Option<&str> {
        self.tree.leaf().map(|index| &*self.report.entries[index].id)
    }

    /// Entry ids of the active path, root first.
    fn path_ids(&self) -> Vec<&str> {
        self.ids(self.tree.path())
    }

    /// `(entry_ids, compaction_id, strip_thinking_until)` of the context rebuild (format §2.5).
    fn context_plan(&self) -> (Vec<&str>, Option<&str>, usize) {
        let plan = self.tree.context_plan(&self.report.entries);
        let compaction = plan.compaction.map(|index| &*self.report.entries[index].id);
        (self.ids(&plan.entries), compaction, plan.strip_thinking_until)
    }

    /// The context entries, parsed, in context order.
    fn read_context<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let plan = self.tree.context_plan(&self.report.entries);
        self.parse_lines(py, &plan.entries)
    }

    /// The entries with these ids, parsed, in the order given.
    fn read_entries<'py>(&self, py: Python<'py>, ids: Vec<String>) -> PyResult<Bound<'py, PyList>> {
        let indices = ids
            .iter()
            .map(|id| self.tree.index_of(id).ok_or_else(|| PyKeyError::new_err(format!("no entry with id {id}"))))
            .collect::<PyResult<Vec<usize>>>()?;
        self.parse_lines(py, &indices)
    }

    /// `(type, parent_id, timestamp, line)` of one entry.
    fn envelope(&self, id: &str) -> PyResult<(&'static str, Option<&str>, &str, u64)> {
        let entry = self.entry(id)?;
        Ok((entry.kind.as_str(), entry.parent_id.as_deref(), &entry.timestamp, entry.line))
    }

    /// Rows `(id, parent_id, type, timestamp, line)` for entries `[start, stop)` in file order.
    #[pyo3(signature = (start=0, stop=None))]
    fn tree_rows(&self, start: usize, stop: Option<usize>) -> PyResult<Vec<(&str, Option<&str>, &'static str, &str, u64)>> {
        let stop = stop.unwrap_or(self.report.entries.len()).min(self.report.entries.len());
        if start > stop {
            return Err(PyValueError::new_err("start is past stop"));
        }
        Ok(self.report.entries[start..stop]
            .iter()
            .map(|entry| (&*entry.id, entry.parent_id.as_deref(), entry.kind.as_str(), &*entry.timestamp, entry.line))
            .collect())
    }

    /// Labels by target entry id (newest wins; cleared labels are absent).
    fn labels(&self) -> Vec<(String, String)> {
        tree::labels(&self.report.entries).into_iter().map(|(target, label)| (target.into(), label.into())).collect()
    }

    /// The latest `session_info` name, or `None`.
    #[getter]
    fn name(&self) -> Option<&str> {
        tree::session_name(&self.report.entries)
    }

    /// The current model on the active path.
    #[getter]
    fn model(&self) -> Option<&str> {
        self.tree.model(&self.report.entries)
    }

    /// The current effort on the active path.
    #[getter]
    fn effort(&self) -> Option<&str> {
        self.tree.effort(&self.report.entries)
    }

    /// Non-meta message entries in the whole file.
    #[getter]
    fn message_count(&self) -> usize {
        tree::message_count(&self.report.entries)
    }

    /// The greatest entry timestamp string (ISO strings sort by time).
    #[getter]
    fn last_timestamp(&self) -> Option<&str> {
        self.report.entries.iter().map(|entry| &*entry.timestamp).max()
    }

    /// `meta.messageId` → entry id, for every message entry that has one.
    fn message_ids(&self) -> Vec<(&str, &str)> {
        self.report
            .entries
            .iter()
            .filter_map(|entry| match &entry.extra {
                Extra::Message { message_id: Some(message_id), .. } => Some((&**message_id, &*entry.id)),
                _ => None,
            })
            .collect()
    }

    /// Ids of the first `limit` non-meta user message entries in file order.
    #[pyo3(signature = (limit=8))]
    fn first_user_entry_ids(&self, limit: usize) -> Vec<&str> {
        self.report
            .entries
            .iter()
            .filter(|entry| matches!(entry.extra, Extra::Message { role: Role::User, is_meta: false, .. }))
            .take(limit)
            .map(|entry| &*entry.id)
            .collect()
    }

    fn __repr__(&self) -> String {
        format!(
            "SessionIndex(path={:?}, entries={}, skipped={}, leaf={:?})",
            self.path,
            self.report.entries.len(),
            self.report.skipped.len(),
            self.leaf_id()
        )
    }
}
