//! `SessionIndex`: a scanned transcript held in Rust, queried from Python without copying the
//! entry list across the boundary. Payloads are read back on demand by byte offset and turned
//! into Python objects directly with jiter, a bounded batch at a time.
//!
//! Owns: the `scan_session(path, index_path=None, tail=True)` entry point and the
//! `SessionIndex` class. Summary queries (header, counts, name, leaf, context plan, labels) are
//! answered from [`crate::index::Summary`], so an index loaded from its sidecar never touches the
//! transcript for them; queries over every entry (path, tree rows, lookups by id) decode the
//! entry list on first use. An index opened from the transcript's end ([`crate::index::Tail`])
//! answers the header, leaf, context plan (and the model and effort when the walk met them)
//! from it, and scans the whole file on the first question it cannot answer.

use super::json_decode::LineDecoder;
use crate::envelope::{Extra, Role};
use crate::index::{self, Full, OpenKind, Opening, Session, Summary, TailOpen};
use crate::scan::{Entry, SourceFormat, COPY_ALIGN};
use crate::Error;
use jiter::{PythonParse, StringCacheMode};
use pyo3::exceptions::{PyKeyError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::OnceLock;

/// `tree_layout`'s packed arrays: order, depth, flags, subtree sizes.
type PackedLayout<'py> = (Bound<'py, PyBytes>, Bound<'py, PyBytes>, Bound<'py, PyBytes>, Bound<'py, PyBytes>);

/// Raw bytes read from the transcript per batch when parsing lines (bounds the memory a
/// context read needs beside the objects it returns). Small: the buffer is fresh memory, each of
/// its pages a fault when first written, and a warm open's whole context (some 300 KB for the 1 GB
/// bench session) in one batch made ~70 of them; a line longer than this is a batch of its own.
/// 16 KiB, not 64: the buffer is zeroed when made, and a warm open of that session paid 0.04M
/// instructions and 9 page faults more for the larger one (callgrind, perf).
const READ_BATCH_BYTES: u64 = 16 << 10;

/// From this many bytes of lines on, a parse pauses the cyclic garbage collector. Fewer make too
/// few containers to set off a full collection (the first comes after some 70,000 allocations),
/// and importing `gc` alone costs a warm open ~0.24M instructions (callgrind, issue 30).
const GC_PAUSE_MIN_BYTES: u64 = 1 << 20;

/// The batches [`SessionIndex::read_spans`] reads `spans` in: `(end, buffer bytes needed)` of
/// each, in order, the next one starting where the last ended. A batch takes lines while they
/// fit in [`READ_BATCH_BYTES`] (a longer line is a batch of its own) and needs room for them,
/// the `\n`s inside a run of adjacent ones and each run's shift into place ([`COPY_ALIGN`]).
fn read_batches(spans: &[(u64, u64)]) -> Vec<(usize, usize)> {
    let mut batches = Vec::new();
    let mut start = 0;
    while start < spans.len() {
        let mut end = start;
        let mut bytes = 0u64;
        while end < spans.len() && (end == start || bytes + spans[end].1 <= READ_BATCH_BYTES) {
            bytes += spans[end].1;
            end += 1;
        }
        batches.push((end, bytes as usize + COPY_ALIGN * (end - start)));
        start = end;
    }
    batches
}

/// `(id, parent_id, type, timestamp, line)` of one entry.
type TreeRow<'a> = (&'a str, Option<&'a str>, &'static str, &'a str, u64);

/// A scanned transcript: header, entry envelopes, skipped lines and the session tree.
#[pyclass(frozen, module = "commandcode._native")]
pub struct SessionIndex {
    path: PathBuf,
    /// Set when only the transcript's end was read: the whole session is made on first use.
    tail: Option<Box<TailOpen>>,
    session: OnceLock<Session>,
}

/// Scans the transcript at `path` with the GIL released.
///
/// With `index_path`, the index sidecar there is used when it matches the transcript, extended
/// when the transcript was only appended to, and rebuilt otherwise; without it, nothing but the
/// transcript is read and nothing is written. With `tail` (the default), where the whole file
/// would be scanned, its end is read first; when that gives the context exactly, the rest is
/// scanned (and the sidecar written) only when something else is asked for.
#[pyfunction]
#[pyo3(signature = (path, index_path=None, tail=true))]
pub fn scan_session(py: Python<'_>, path: PathBuf, index_path: Option<PathBuf>, tail: bool) -> PyResult<SessionIndex> {
    let opening = py.detach(|| match (&index_path, tail) {
        (index_path, true) => index::open_for_context(&path, index_path.as_deref()),
        (Some(index_path), false) => index::open(&path, index_path).map(Opening::Whole),
        (None, false) => index::open_plain(&path).map(Opening::Whole),
    })?;
    Ok(match opening {
        Opening::Whole(session) => SessionIndex { path, tail: None, session: OnceLock::from(session) },
        Opening::Tail(tail) => SessionIndex { path, tail: Some(tail), session: OnceLock::new() },
    })
}

impl SessionIndex {
    /// The whole session: at hand, or (after a tail open) scanned now, once.
    fn session(&self, py: Python<'_>) -> PyResult<&Session> {
        if let Some(session) = self.session.get() {
            return Ok(session);
        }
        let Some(tail) = &self.tail else {
            return Err(PyRuntimeError::new_err("a session index without a session"));
        };
        let session = py.detach(|| tail.complete())?;
        Ok(self.session.get_or_init(|| session))
    }

    fn summary(&self, py: Python<'_>) -> PyResult<&Summary> {
        Ok(&self.session(py)?.summary)
    }

    /// What the tail read answers, while the whole session has not been needed.
    fn tail(&self) -> Option<&index::Tail> {
        self.tail.as_ref().map(|open| &open.tail)
    }

    fn full(&self, py: Python<'_>) -> PyResult<&Full> {
        let session = self.session(py)?;
        Ok(py.detach(|| session.full())?)
    }

    /// Entries `[start, stop)` clamped to the file (`stop` None: to the end).
    fn span(&self, py: Python<'_>, start: usize, stop: Option<usize>) -> PyResult<std::ops::Range<usize>> {
        let count = self.summary(py)?.entry_count as usize;
        let stop = stop.unwrap_or(count).min(count);
        if start > stop {
            return Err(PyValueError::new_err("start is past stop"));
        }
        Ok(start..stop)
    }

    fn entry<'a>(&self, full: &'a Full, id: &str) -> PyResult<&'a Entry> {
        full.tree()
            .index_of(&full.report.entries, id)
            .map(|index| &full.report.entries[index])
            .ok_or_else(|| PyKeyError::new_err(format!("no entry with id {id}")))
    }

    /// Reads the raw lines at `spans` from disk (the GIL released) and hands each batch of about
    /// [`READ_BATCH_BYTES`] to `each`, in order.
    fn read_spans(
        &self,
        py: Python<'_>,
        spans: &[(u64, u64)],
        mut each: impl FnMut(usize, &[u8]) -> PyResult<()>,
    ) -> PyResult<()> {
        let path = &self.path;
        let file = crate::fsopen::open_regular_read(path, crate::fsopen::Follow::Yes)
            .map_err(|source| Error::io(path, source))?;
        let batches = read_batches(spans);
        // Made once, as large as the largest batch needs, and refilled: a buffer grown batch by
        // batch was a fresh zeroed allocation each time it grew (five for the 1 GB bench
        // session's context, 118 KB in all where one of 35 KB does), and every fresh page is a
        // page fault, some 4 µs each on the shared 2-core machine (perf, issue 30).
        let mut buffer = vec![0u8; batches.iter().map(|&(_, needed)| needed).max().unwrap_or(0)];
        // Where each line of the batch sits in `buffer`: at its file offset's place within a
        // cache line, which makes the kernel's copy several times faster (`scan::COPY_ALIGN`).
        let mut places: Vec<usize> = Vec::new();
        let mut start = 0;
        for (end, _) in batches {
            let batch = &spans[start..end];
            py.detach(|| -> Result<(), Error> {
                let base = buffer.as_ptr() as usize;
                places.clear();
                let mut at = 0;
                let mut run_start = 0;
                while run_start < batch.len() {
                    // Lines that follow one another in the file (a context after its compaction,
                    // most of all) are one read, their `\n`s with them: one `pread` per run, not
                    // per line. Each line still sits at its file offset's place in a cache line.
                    let run_end = run_start
                        + 1
                        + batch[run_start..]
                            .windows(2)
                            .take_while(|pair| pair[1].0 == pair[0].0 + pair[0].1 + 1)
                            .count();
                    let (offset, (last_offset, last_length)) = (batch[run_start].0, batch[run_end - 1]);
                    at += (offset as usize).wrapping_sub(base + at) % COPY_ALIGN;
                    let run = &mut buffer[at..at + (last_offset + last_length - offset) as usize];
                    file.read_exact_at(run, offset).map_err(|_| Error::Stale { path: path.clone(), offset })?;
                    places.extend(batch[run_start..run_end].iter().map(|&(line, _)| at + (line - offset) as usize));
                    at += run.len();
                    run_start = run_end;
                }
                Ok(())
            })?;
            for (position, (&(_, length), &at)) in batch.iter().zip(&places).enumerate() {
                each(start + position, &buffer[at..at + length as usize])?;
            }
            start = end;
        }
        Ok(())
    }

    /// Parses the lines at `spans` into Python objects, in order. From [`GC_PAUSE_MIN_BYTES`]
    /// on, the cyclic garbage collector is paused meanwhile (it would walk the growing result
    /// again and again; JSON makes no cycles). Only string keys are interned (values are mostly
    /// unique).
    fn parse_spans<'py>(&self, py: Python<'py>, spans: &[(u64, u64)]) -> PyResult<Bound<'py, PyList>> {
        if spans.iter().map(|&(_, length)| length).sum::<u64>() < GC_PAUSE_MIN_BYTES {
            return self.parse_each(py, spans);
        }
        let gc = py.import("gc")?;
        let was_enabled = gc.call_method0("isenabled")?.is_truthy()?;
        if was_enabled {
            gc.call_method0("disable")?;
        }
        let result = self.parse_each(py, spans);
        if was_enabled {
            gc.call_method0("enable")?;
        }
        result
    }

    fn parse_each<'py>(&self, py: Python<'py>, spans: &[(u64, u64)]) -> PyResult<Bound<'py, PyList>> {
        let parser = PythonParse { cache_mode: StringCacheMode::Keys, ..PythonParse::default() };
        let longest = spans.iter().map(|&(_, length)| length as usize).max().unwrap_or(0);
        let mut decoder = LineDecoder::new(py, longest);
        let list = PyList::empty(py);
        let mut json_loads: Option<Bound<'py, PyAny>> = None;
        self.read_spans(py, spans, |position, line| {
            // The common line takes the cursor walk; the rest the exact path below.
            let decoded = decoder.decode(line).map(Ok).unwrap_or_else(|| parser.python_parse(py, line));
            let value = match decoded {
                Ok(value) => value,
                // The line was valid when scanned; jiter refuses two things `JSON.parse` takes:
                // invalid UTF-8 (the real CLI decodes it as U+FFFD) and escapes of lone
                // surrogates (kept as such in the `str`, as `JSON.parse` and `json.loads` do).
                Err(_) => {
                    let lossy = String::from_utf8_lossy(line);
                    match parser.python_parse(py, lossy.as_bytes()) {
                        Ok(value) => value,
                        Err(_) => {
                            let loads = match &json_loads {
                                Some(loads) => loads.clone(),
                                None => json_loads.insert(py.import("json")?.getattr("loads")?).clone(),
                            };
                            let (path, offset) = (self.path.clone(), spans[position].0);
                            loads.call1((lossy.as_ref(),)).map_err(|error| {
                                // json.loads recurses: past Python's limit it is depth, not change.
                                if error.is_instance_of::<pyo3::exceptions::PyRecursionError>(py) {
                                    PyErr::from(Error::TooDeep { path, offset })
                                } else {
                                    PyErr::from(Error::Stale { path, offset })
                                }
                            })?
                        }
                    }
                }
            };
            list.append(value)
        })?;
        Ok(list)
    }

    fn plan_spans(&self, py: Python<'_>) -> PyResult<Vec<(u64, u64)>> {
        if let Some(tail) = self.tail() {
            return Ok(tail.plan.iter().map(|item| (item.offset, item.length)).collect());
        }
        Ok(self.summary(py)?.plan.iter().map(|item| (item.offset, item.length)).collect())
    }
}

#[pymethods]
impl SessionIndex {
    /// The transcript path this index was scanned from.
    #[getter]
    fn path(&self) -> PathBuf {
        self.path.clone()
    }

    /// How this index was obtained: `"scanned"` (no sidecar), `"rebuilt"` (full scan, sidecar
    /// rewritten), `"loaded"` (sidecar used as is), `"appended"` (only the new bytes scanned, a
    /// delta added to the sidecar) or `"appended_rewritten"` (only the new bytes scanned, but
    /// the sidecar rewritten whole), or `"tail"` (only the end of the transcript read).
    #[getter]
    fn source(&self) -> &'static str {
        let (None, Some(session)) = (&self.tail, self.session.get()) else { return "tail" };
        match session.kind {
            OpenKind::Scanned => "scanned",
            OpenKind::Rebuilt => "rebuilt",
            OpenKind::Loaded => "loaded",
            OpenKind::Appended => "appended",
            OpenKind::AppendedRewritten => "appended_rewritten",
        }
    }

    /// The header as a dict, or `None` when the file has no valid header.
    #[getter]
    fn header<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let header = match self.tail() {
            Some(tail) => &tail.header,
            None => match &self.summary(py)?.report.header {
                Some(header) => header,
                None => return Ok(None),
            },
        };
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
    fn format(&self, py: Python<'_>) -> PyResult<Option<&'static str>> {
        // A tail is read only after a v3 header (format §4.6).
        let format = match self.tail() {
            Some(_) => Some(SourceFormat::V3),
            None => self.summary(py)?.report.format,
        };
        Ok(format.map(|format| match format {
            SourceFormat::V3 => "v3",
            SourceFormat::LegacyV2 => "v2",
            SourceFormat::LegacyV1 => "v1",
        }))
    }

    #[getter]
    fn legacy_entrypoint(&self, py: Python<'_>) -> PyResult<Option<String>> {
        if self.tail().is_some() {
            return Ok(None);
        }
        Ok(self.summary(py)?.report.legacy_entrypoint.clone())
    }

    #[getter]
    fn file_size(&self, py: Python<'_>) -> PyResult<u64> {
        match self.tail() {
            Some(tail) => Ok(tail.file_size),
            None => Ok(self.summary(py)?.report.file_size),
        }
    }

    #[getter]
    fn ends_with_newline(&self, py: Python<'_>) -> PyResult<bool> {
        match self.tail() {
            Some(tail) => Ok(tail.ends_with_newline),
            None => Ok(self.summary(py)?.report.ends_with_newline),
        }
    }

    #[getter]
    fn has_bom(&self, py: Python<'_>) -> PyResult<bool> {
        match self.tail() {
            Some(tail) => Ok(tail.has_bom),
            None => Ok(self.summary(py)?.report.has_bom),
        }
    }

    #[getter]
    fn line_count(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.summary(py)?.report.line_count)
    }

    #[getter]
    fn entry_count(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.summary(py)?.entry_count)
    }

    /// Skipped lines as dicts `{line, offset, length, reason, detail}`.
    #[getter]
    fn skipped<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        for skipped in &self.summary(py)?.report.skipped {
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
        let summary = self.summary(py)?;
        let dict = PyDict::new(py);
        dict.set_item("cycle_detected", summary.cycle_detected)?;
        dict.set_item("unknown_parents", summary.unknown_parents)?;
        dict.set_item("duplicate_ids", summary.duplicate_ids)?;
        Ok(dict)
    }

    /// The leaf entry id (the last valid entry in file order).
    #[getter]
    fn leaf_id(&self, py: Python<'_>) -> PyResult<Option<&str>> {
        match self.tail() {
            Some(tail) => Ok(tail.leaf.as_deref()),
            None => Ok(self.summary(py)?.leaf.as_ref().map(|(_, id)| id.as_str())),
        }
    }

    /// Number of entries on the active path.
    #[getter]
    fn path_length(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.summary(py)?.path_len)
    }

    /// Entry ids of the active path, root first.
    fn path_ids<'py>(&self, py: Python<'py>) -> PyResult<Vec<&str>> {
        let full = self.full(py)?;
        Ok(full.tree().path().iter().map(|&index| &*full.report.entries[index].id).collect())
    }

    /// `(entry_ids, compaction_id, strip_thinking_until)` of the context rebuild (format §4.4).
    fn context_plan(&self, py: Python<'_>) -> PyResult<(Vec<&str>, Option<&str>, u64)> {
        if let Some(tail) = self.tail() {
            let ids = tail.plan.iter().map(|item| item.id.as_str()).collect();
            return Ok((ids, tail.compaction.as_deref(), tail.strip_thinking_until));
        }
        let summary = self.summary(py)?;
        Ok((
            summary.plan.iter().map(|item| item.id.as_str()).collect(),
            summary.compaction.as_ref().map(|(_, id)| id.as_str()),
            summary.strip_thinking_until,
        ))
    }

    /// The context entries, parsed, in context order.
    fn read_context<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        self.parse_spans(py, &self.plan_spans(py)?)
    }

    /// The context entries' raw lines (`bytes`, without the `\n`), in context order: for
    /// callers that parse lazily or with their own parser.
    fn read_context_raw<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let list = PyList::empty(py);
        self.read_spans(py, &self.plan_spans(py)?, |_, line| list.append(PyBytes::new(py, line)))?;
        Ok(list)
    }

    /// The entries with these ids, parsed, in the order given.
    fn read_entries<'py>(&self, py: Python<'py>, ids: Vec<String>) -> PyResult<Bound<'py, PyList>> {
        // Ids the tail or the summary knows (context, first prompts) need no entry list. The
        // tail's plan entries are on the active path, so each is the last entry with its id.
        let known: Option<Vec<(u64, u64)>> = match self.tail() {
            Some(tail) => ids
                .iter()
                .map(|id| tail.plan.iter().find(|item| item.id == *id).map(|item| (item.offset, item.length)))
                .collect(),
            None => ids.iter().map(|id| self.session.get().and_then(|session| session.summary.span_of(id))).collect(),
        };
        let spans = match known {
            Some(spans) => spans,
            None => {
                let session = self.session(py)?;
                if let Some(missing) = ids.iter().find(|id| !session.may_contain(id)) {
                    return Err(PyKeyError::new_err(format!("no entry with id {missing}")));
                }
                let full = self.full(py)?;
                ids.iter()
                    .map(|id| self.entry(full, id).map(|entry| (entry.offset, entry.length)))
                    .collect::<PyResult<Vec<_>>>()?
            }
        };
        self.parse_spans(py, &spans)
    }

    /// `(type, parent_id, timestamp, line)` of one entry.
    fn envelope<'py>(&self, py: Python<'py>, id: &str) -> PyResult<(&'static str, Option<&str>, &str, u64)> {
        // An id no entry has (a writer trying a fresh one) is answered without the entry list.
        if !self.session(py)?.may_contain(id) {
            return Err(PyKeyError::new_err(format!("no entry with id {id}")));
        }
        let entry = self.entry(self.full(py)?, id)?;
        Ok((entry.kind.as_str(), entry.parent_id.as_deref(), &entry.timestamp, entry.line))
    }

    /// Whether an entry has this id (answered from the sidecar's id hashes when it can, without
    /// decoding the entry list).
    fn __contains__<'py>(&self, py: Python<'py>, id: &str) -> PyResult<bool> {
        if self.tail().is_some_and(|tail| tail.plan.iter().any(|item| item.id == id)) {
            return Ok(true);
        }
        if !self.session(py)?.may_contain(id) {
            return Ok(false);
        }
        let full = self.full(py)?;
        Ok(full.tree().index_of(&full.report.entries, id).is_some())
    }

    /// Rows `(id, parent_id, type, timestamp, line)` for entries `[start, stop)` in file order.
    #[pyo3(signature = (start=0, stop=None))]
    fn tree_rows<'py>(&self, py: Python<'py>, start: usize, stop: Option<usize>) -> PyResult<Vec<TreeRow<'_>>> {
        let full = self.full(py)?;
        Ok(full.report.entries[self.span(py, start, stop)?]
            .iter()
            .map(|entry| (&*entry.id, entry.parent_id.as_deref(), entry.kind.as_str(), &*entry.timestamp, entry.line))
            .collect())
    }

    /// `(role, is_meta, length)` for entries `[start, stop)` in file order: a message's role
    /// (`"user"`, `"assistant"`, `"other"`; `None` for other entry types), its `isMeta` flag, and
    /// the line's byte length (what the tree navigator filters and sizes rows by, unread).
    #[pyo3(signature = (start=0, stop=None))]
    fn tree_details(
        &self,
        py: Python<'_>,
        start: usize,
        stop: Option<usize>,
    ) -> PyResult<Vec<(Option<&'static str>, bool, u64)>> {
        let full = self.full(py)?;
        Ok(full.report.entries[self.span(py, start, stop)?]
            .iter()
            .map(|entry| match &entry.extra {
                Extra::Message { role, is_meta, .. } => {
                    let name = match role {
                        Role::User => "user",
                        Role::Assistant => "assistant",
                        Role::Other => "other",
                    };
                    (Some(name), *is_meta, entry.length)
                }
                _ => (None, false, entry.length),
            })
            .collect())
    }

    /// The navigator's rows (`crate::layout`): `(order, depth, flags, size)` as packed
    /// little-endian `u32` (flags: one byte per row), entries of the `hidden` types and those
    /// the `filter` (`"default"`, `"no tools"`, `"user only"`) hides left out.
    #[pyo3(signature = (hidden, filter="default"))]
    fn tree_layout<'py>(&self, py: Python<'py>, hidden: Vec<String>, filter: &str) -> PyResult<PackedLayout<'py>> {
        let filter = crate::layout::Filter::parse(filter)
            .ok_or_else(|| PyValueError::new_err(format!("unknown tree filter {filter:?}")))?;
        let full = self.full(py)?;
        let rows = py.detach(|| {
            crate::layout::layout(&full.report.entries, full.tree(), &|entry| {
                filter.hides(entry) || hidden.iter().any(|kind| kind == entry.kind.as_str())
            })
        });
        let pack = |values: &[u32]| values.iter().flat_map(|value| value.to_le_bytes()).collect::<Vec<u8>>();
        Ok((
            PyBytes::new(py, &pack(&rows.order)),
            PyBytes::new(py, &pack(&rows.depth)),
            PyBytes::new(py, &rows.flags),
            PyBytes::new(py, &pack(&rows.size)),
        ))
    }

    /// The file-order position of the entry an id names (its last entry), or `None`.
    fn position(&self, py: Python<'_>, id: &str) -> PyResult<Option<usize>> {
        let full = self.full(py)?;
        Ok(full.tree().index_of(&full.report.entries, id))
    }

    /// Labels by target entry id (newest wins; cleared labels are absent).
    fn labels(&self, py: Python<'_>) -> PyResult<Vec<(String, String)>> {
        Ok(self.summary(py)?.labels())
    }

    /// The latest `session_info` name, or `None`.
    #[getter]
    fn name(&self, py: Python<'_>) -> PyResult<Option<&str>> {
        Ok(self.summary(py)?.name.as_deref())
    }

    /// The current model on the active path.
    #[getter]
    fn model(&self, py: Python<'_>) -> PyResult<Option<&str>> {
        match self.tail().and_then(|tail| tail.model.as_ref()) {
            Some(model) => Ok(model.as_deref()),
            None => Ok(self.summary(py)?.model.as_deref()),
        }
    }

    /// The current effort on the active path.
    #[getter]
    fn effort(&self, py: Python<'_>) -> PyResult<Option<&str>> {
        match self.tail().and_then(|tail| tail.effort.as_ref()) {
            Some(effort) => Ok(effort.as_deref()),
            None => Ok(self.summary(py)?.effort.as_deref()),
        }
    }

    /// Non-meta message entries in the whole file.
    #[getter]
    fn message_count(&self, py: Python<'_>) -> PyResult<u64> {
        Ok(self.summary(py)?.message_count)
    }

    /// The greatest entry timestamp string (ISO strings sort by time).
    #[getter]
    fn last_timestamp(&self, py: Python<'_>) -> PyResult<Option<&str>> {
        Ok(self.summary(py)?.last_timestamp.as_deref())
    }

    /// `meta.messageId` → entry id, for every message entry that has one.
    fn message_ids<'py>(&self, py: Python<'py>) -> PyResult<Vec<(&str, &str)>> {
        let full = self.full(py)?;
        Ok(full
            .report
            .entries
            .iter()
            .filter_map(|entry| match &entry.extra {
                Extra::Message { message_id: Some(message_id), .. } => Some((&**message_id, &*entry.id)),
                _ => None,
            })
            .collect())
    }

    /// The first `limit` non-meta user message entries in file order, parsed (read by their
    /// position, so an entry that shares its id with a later one is still the one returned).
    #[pyo3(signature = (limit=8))]
    fn read_first_users<'py>(&self, py: Python<'py>, limit: usize) -> PyResult<Bound<'py, PyList>> {
        let summary = self.summary(py)?;
        let spans: Vec<(u64, u64)> = if limit <= summary.first_users.len() || summary.first_users_complete {
            summary.first_users.iter().take(limit).map(|item| (item.offset, item.length)).collect()
        } else {
            self.full(py)?
                .report
                .entries
                .iter()
                .filter(|entry| matches!(entry.extra, Extra::Message { role: Role::User, is_meta: false, .. }))
                .take(limit)
                .map(|entry| (entry.offset, entry.length))
                .collect()
        };
        self.parse_spans(py, &spans)
    }

    /// Says what is known without scanning: a tail open shows its leaf only.
    fn __repr__(&self) -> String {
        match (self.tail(), self.session.get()) {
            (None, Some(session)) => format!(
                "SessionIndex(path={:?}, entries={}, skipped={}, leaf={:?})",
                self.path,
                session.summary.entry_count,
                session.summary.report.skipped.len(),
                session.summary.leaf.as_ref().map(|(_, id)| id.as_str())
            ),
            (tail, _) => format!(
                "SessionIndex(path={:?}, tail, leaf={:?})",
                self.path,
                tail.and_then(|tail| tail.leaf.as_deref())
            ),
        }
    }
}
