//! JSON encoding of Python values, text-identical to CPython's `json` encoder (`ensure_ascii=False`)
//! followed by `jsonfmt`'s lone-surrogate escaping (`\udXXX`, as `JSON.stringify` writes them).
//!
//! Owns: `json_dumps` (any indent, separators, `allow_nan`, `default`), `json_encode_line` (a
//! compact JSONL record as UTF-8 bytes, newline included) and `json_encode_entry` (a transcript
//! entry: envelope keys, then the fields, without building the merged dict in Python).
//!
//! Semantics follow json's C encoder: `None`/`True`/`False` by identity, then str, int (exact
//! `int.__repr__` text, subclasses included), float (`float.__repr__`), list/tuple (and
//! subclasses, read as lists), dict (subclasses through `.items()`), else `default` or
//! `TypeError`. Dict keys: str, float, bool, None, int, else `TypeError`. Dicts are read as a
//! snapshot of their items (as `PyDict_Items` does), so a `default` that mutates a dict cannot
//! break the walk. Circular references raise `ValueError`; nesting deeper than
//! `sys.getrecursionlimit()` (at most [`MAX_DEPTH`]) raises `RecursionError`; the walk is iterative,
//! so no nesting overflows the native stack, optimized or not. The text pieces (strings, floats)
//! are in [`crate::json_text`].

use crate::json_text::{write_float, write_string, OutOfRange};
use pyo3::exceptions::{PyRecursionError, PyTypeError, PyValueError};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::iter::{BoundListIterator, BoundTupleIterator};
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

/// Nesting beyond which encoding stops with `RecursionError`, whatever the recursion limit says.
/// The walk keeps its frames on the heap, so this is not a stack bound; it keeps a runaway
/// structure (or a raised limit) from building a line no JSON reader would take back.
const MAX_DEPTH: usize = 3_000;
/// Nesting up to which the recursion limit is not looked up (it is never set this low).
const CHEAP_DEPTH: usize = 200;

struct Encoder<'a, 'py> {
    out: Vec<u8>,
    indent: Option<usize>,
    item_separator: &'a [u8],
    key_separator: &'a [u8],
    allow_nan: bool,
    default: Option<&'a Bound<'py, PyAny>>,
    /// Addresses of the containers (and `default` inputs) being encoded, outermost first.
    ancestors: Vec<usize>,
    depth_limit: Option<usize>,
}

/// A container being written: the items still to come, how many were written, its level.
struct Frame<'py> {
    items: Items<'py>,
    position: usize,
    level: usize,
}

enum Items<'py> {
    /// Read live, as the C encoder reads a list (`default` may change it on the way).
    List(BoundListIterator<'py>),
    Tuple(BoundTupleIterator<'py>),
    /// A snapshot of the items, as `PyDict_Items` takes.
    Dict(std::vec::IntoIter<(Bound<'py, PyAny>, Bound<'py, PyAny>)>),
    /// `default(value)` is being written in the place of `value`, which stays an ancestor.
    Replacement,
}

impl<'a, 'py> Encoder<'a, 'py> {
    fn compact(capacity: usize) -> Self {
        Encoder {
            out: Vec::with_capacity(capacity),
            indent: None,
            item_separator: b",",
            key_separator: b":",
            allow_nan: false,
            default: None,
            ancestors: Vec::new(),
            depth_limit: None,
        }
    }

    /// Writes `value`. The walk is iterative: a container's remaining items wait in a frame on
    /// the heap ([`Frame`]), so native stack use does not grow with nesting, in any build profile
    /// (the recursive walk this replaced needed ~350 bytes a level optimized and several KB
    /// unoptimized, which overflowed a 2 MB thread stack in a dev build well before the limit).
    fn value(&mut self, value: &Bound<'py, PyAny>, level: usize) -> PyResult<()> {
        let mut frames: Vec<Frame<'py>> = Vec::new();
        let mut next = Some((value.clone(), level));
        loop {
            if let Some((value, level)) = next.take() {
                next = self.start(value, level, &mut frames)?;
                continue;
            }
            let Some(frame) = frames.last_mut() else { return Ok(()) };
            let level = frame.level;
            let position = frame.position;
            let item = match &mut frame.items {
                Items::List(items) => items.next().map(|item| (None, item)),
                Items::Tuple(items) => items.next().map(|item| (None, item)),
                Items::Dict(items) => items.next().map(|(key, item)| (Some(key), item)),
                Items::Replacement => {
                    frames.pop();
                    self.ancestors.pop();
                    continue;
                }
            };
            match item {
                Some((key, item)) => {
                    frame.position += 1;
                    self.item_start(position, level);
                    if let Some(key) = key {
                        self.key(&key)?;
                        self.out.extend_from_slice(self.key_separator);
                    }
                    next = Some((item, level + 1));
                }
                None => {
                    let bracket = if matches!(frame.items, Items::Dict(_)) { b'}' } else { b']' };
                    frames.pop();
                    self.close(bracket, level);
                }
            }
        }
    }

    /// Writes a scalar, or opens a container and pushes its frame; returns the value to write
    /// next when `value` is replaced by `default(value)`.
    fn start(
        &mut self,
        value: Bound<'py, PyAny>,
        level: usize,
        frames: &mut Vec<Frame<'py>>,
    ) -> PyResult<Option<(Bound<'py, PyAny>, usize)>> {
        let items = if let Ok(text) = value.cast::<PyString>() {
            self.string(text)?;
            return Ok(None);
        } else if let Ok(dict) = value.cast::<PyDict>() {
            if dict.is_empty() {
                self.out.extend_from_slice(b"{}");
                return Ok(None);
            }
            self.enter(dict.as_any())?;
            Items::Dict(dict_items(dict)?.into_iter())
        } else if let Ok(list) = value.cast::<PyList>() {
            if list.is_empty() {
                self.out.extend_from_slice(b"[]");
                return Ok(None);
            }
            self.enter(list.as_any())?;
            Items::List(list.iter())
        } else if value.is_none() {
            self.out.extend_from_slice(b"null");
            return Ok(None);
        } else if let Ok(flag) = value.cast_exact::<PyBool>() {
            self.out.extend_from_slice(if flag.is_true() { b"true" } else { b"false" });
            return Ok(None);
        } else if let Ok(int) = value.cast::<PyInt>() {
            self.int(int)?;
            return Ok(None);
        } else if let Ok(float) = value.cast::<PyFloat>() {
            self.float(float)?;
            return Ok(None);
        } else if let Ok(tuple) = value.cast::<PyTuple>() {
            if tuple.is_empty() {
                self.out.extend_from_slice(b"[]");
                return Ok(None);
            }
            self.enter(tuple.as_any())?;
            Items::Tuple(tuple.iter())
        } else {
            // A value json cannot write itself: `default(value)` is written in its place.
            let Some(default) = self.default else {
                let name = value.get_type().name()?;
                return Err(PyTypeError::new_err(format!("Object of type {name} is not JSON serializable")));
            };
            self.enter(&value)?;
            let replacement = default.call1((&value,))?;
            frames.push(Frame { items: Items::Replacement, position: 0, level });
            return Ok(Some((replacement, level)));
        };
        self.open(if matches!(items, Items::Dict(_)) { b'{' } else { b'[' }, level);
        frames.push(Frame { items, position: 0, level });
        Ok(None)
    }

    /// The fields of a dict after the ones already written (`json_encode_entry`).
    fn more_fields(&mut self, dict: &Bound<'py, PyDict>) -> PyResult<()> {
        if dict.is_empty() {
            return Ok(());
        }
        self.enter(dict.as_any())?;
        for (key, item) in dict_items(dict)? {
            self.out.extend_from_slice(self.item_separator);
            self.key(&key)?;
            self.out.extend_from_slice(self.key_separator);
            self.value(&item, 1)?;
        }
        self.ancestors.pop();
        Ok(())
    }

    fn key(&mut self, key: &Bound<'py, PyAny>) -> PyResult<()> {
        if let Ok(text) = key.cast::<PyString>() {
            return self.string(text);
        }
        // json writes the key's text, then encodes that as a string (no escapes can occur).
        self.out.push(b'"');
        if let Ok(float) = key.cast::<PyFloat>() {
            self.float(float)?;
        } else if let Ok(flag) = key.cast_exact::<PyBool>() {
            self.out.extend_from_slice(if flag.is_true() { b"true" } else { b"false" });
        } else if key.is_none() {
            self.out.extend_from_slice(b"null");
        } else if let Ok(int) = key.cast::<PyInt>() {
            self.int(int)?;
        } else {
            let name = key.get_type().name()?;
            return Err(PyTypeError::new_err(format!("keys must be str, int, float, bool or None, not {name}")));
        }
        self.out.push(b'"');
        Ok(())
    }

    #[inline(never)]
    fn string(&mut self, text: &Bound<'py, PyString>) -> PyResult<()> {
        match text.to_str() {
            Ok(utf8) => write_string(&mut self.out, utf8.as_bytes()),
            Err(_) => {
                // Lone surrogates: take them as 3-byte sequences, which `write_string` escapes.
                let py = text.py();
                let encoded = py.get_type::<PyString>().getattr(intern!(py, "encode"))?.call1((
                    text,
                    intern!(py, "utf-8"),
                    intern!(py, "surrogatepass"),
                ))?;
                write_string(&mut self.out, encoded.cast::<PyBytes>()?.as_bytes());
            }
        }
        Ok(())
    }

    #[inline(never)]
    fn int(&mut self, int: &Bound<'py, PyInt>) -> PyResult<()> {
        if let Ok(small) = int.extract::<i64>() {
            self.out.extend_from_slice(small.to_string().as_bytes());
            return Ok(());
        }
        let py = int.py();
        let text = py.get_type::<PyInt>().getattr(intern!(py, "__repr__"))?.call1((int,))?;
        self.out.extend_from_slice(text.cast::<PyString>()?.to_str()?.as_bytes());
        Ok(())
    }

    #[inline(never)]
    fn float(&mut self, float: &Bound<'py, PyFloat>) -> PyResult<()> {
        let value = float.value();
        write_float(&mut self.out, value, self.allow_nan).map_err(|OutOfRange| {
            let shown = if value.is_nan() {
                "nan"
            } else if value > 0.0 {
                "inf"
            } else {
                "-inf"
            };
            PyValueError::new_err(format!("Out of range float values are not JSON compliant: {shown}"))
        })
    }

    /// Marks `container` as being encoded: refuses cycles and nesting past the depth limit.
    #[inline(never)]
    fn enter(&mut self, container: &Bound<'py, PyAny>) -> PyResult<()> {
        let address = container.as_ptr() as usize;
        if self.ancestors.contains(&address) {
            return Err(PyValueError::new_err("Circular reference detected"));
        }
        if self.ancestors.len() >= CHEAP_DEPTH && self.ancestors.len() >= self.depth_limit(container.py())? {
            return Err(PyRecursionError::new_err("maximum recursion depth exceeded while encoding a JSON object"));
        }
        self.ancestors.push(address);
        Ok(())
    }

    fn depth_limit(&mut self, py: Python<'py>) -> PyResult<usize> {
        if let Some(limit) = self.depth_limit {
            return Ok(limit);
        }
        let limit: usize = py.import(intern!(py, "sys"))?.call_method0(intern!(py, "getrecursionlimit"))?.extract()?;
        let limit = limit.min(MAX_DEPTH);
        self.depth_limit = Some(limit);
        Ok(limit)
    }

    fn open(&mut self, bracket: u8, level: usize) {
        self.out.push(bracket);
        self.newline(level + 1);
    }

    fn item_start(&mut self, position: usize, level: usize) {
        if position > 0 {
            self.out.extend_from_slice(self.item_separator);
            self.newline(level + 1);
        }
    }

    fn close(&mut self, bracket: u8, level: usize) {
        self.newline(level);
        self.out.push(bracket);
        self.ancestors.pop();
    }

    fn newline(&mut self, level: usize) {
        if let Some(indent) = self.indent {
            self.out.push(b'\n');
            self.out.resize(self.out.len() + indent * level, b' ');
        }
    }
}

/// A snapshot of a dict's items: its own entries, or what a subclass's `.items()` returns.
fn dict_items<'py>(dict: &Bound<'py, PyDict>) -> PyResult<Vec<(Bound<'py, PyAny>, Bound<'py, PyAny>)>> {
    if dict.is_exact_instance_of::<PyDict>() {
        return Ok(dict.iter().collect());
    }
    let items = dict.call_method0(intern!(dict.py(), "items"))?;
    let mut pairs = Vec::with_capacity(dict.len());
    for item in items.try_iter()? {
        let item = item?;
        let pair = item
            .cast::<PyTuple>()
            .ok()
            .filter(|tuple| tuple.len() == 2)
            .ok_or_else(|| PyValueError::new_err("items must return 2-tuples"))?;
        pairs.push((pair.get_item(0)?, pair.get_item(1)?));
    }
    Ok(pairs)
}

fn into_str<'py>(py: Python<'py>, out: &[u8]) -> PyResult<Bound<'py, PyString>> {
    let text = std::str::from_utf8(out)
        .map_err(|error| PyValueError::new_err(format!("encoder wrote invalid UTF-8: {error}")))?;
    Ok(PyString::new(py, text))
}

/// `json.dumps(value, ensure_ascii=False, indent=indent, separators=separators,
/// allow_nan=allow_nan, default=default)` with lone surrogates escaped. The default separators
/// are the compact `(",", ":")`.
#[pyfunction]
#[pyo3(signature = (value, *, indent=None, separators=None, allow_nan=false, default=None))]
pub fn json_dumps<'py>(
    py: Python<'py>,
    value: &Bound<'py, PyAny>,
    indent: Option<usize>,
    separators: Option<(String, String)>,
    allow_nan: bool,
    default: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyString>> {
    let (item_separator, key_separator) = separators.unwrap_or_else(|| (",".to_owned(), ":".to_owned()));
    let mut encoder = Encoder {
        indent,
        item_separator: item_separator.as_bytes(),
        key_separator: key_separator.as_bytes(),
        allow_nan,
        default,
        ..Encoder::compact(256)
    };
    encoder.value(value, 0)?;
    into_str(py, &encoder.out)
}

/// A JSONL record: the compact line of `value` and `\n`, as UTF-8 bytes.
#[pyfunction]
pub fn json_encode_line<'py>(py: Python<'py>, value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyBytes>> {
    let mut encoder = Encoder::compact(1024);
    encoder.value(value, 0)?;
    encoder.out.push(b'\n');
    Ok(PyBytes::new(py, &encoder.out))
}

/// The record of one transcript entry: `{"type","id","parentId","timestamp", <fields in order>}`
/// and `\n`, as `json_encode_line` writes the merged dict.
#[pyfunction]
pub fn json_encode_entry<'py>(
    py: Python<'py>,
    entry_type: &Bound<'py, PyAny>,
    id: &Bound<'py, PyAny>,
    parent_id: &Bound<'py, PyAny>,
    timestamp: &Bound<'py, PyAny>,
    fields: &Bound<'py, PyDict>,
) -> PyResult<Bound<'py, PyBytes>> {
    let mut encoder = Encoder::compact(1024);
    encoder.out.extend_from_slice(b"{\"type\":");
    encoder.value(entry_type, 1)?;
    encoder.out.extend_from_slice(b",\"id\":");
    encoder.value(id, 1)?;
    encoder.out.extend_from_slice(b",\"parentId\":");
    encoder.value(parent_id, 1)?;
    encoder.out.extend_from_slice(b",\"timestamp\":");
    encoder.value(timestamp, 1)?;
    encoder.more_fields(fields)?;
    encoder.out.extend_from_slice(b"}\n");
    Ok(PyBytes::new(py, &encoder.out))
}
