//! Transcript lines into Python objects (`dict`, `list`, `str`, `int`, `float`, `bool`, `None`)
//! for the reads that parse lines (the context above all), walked with the scanner's own JSON
//! cursor ([`crate::json`]) instead of a general parser.
//!
//! Owns: the common case only. A line this decoder does not take whole (invalid UTF-8, an
//! escaped lone surrogate, an integer beyond 64 bits, a float out of range, deep nesting,
//! anything that is not valid JSON) is `None`, and the caller parses it the exact way (jiter,
//! then `json.loads`), so what a line becomes never depends on which path read it. Object keys
//! are made once per read and shared: every line repeats the same few dozen.

use crate::json::{Cursor, Decoded, JsonError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyList, PyString};

/// Nesting deeper than this is left to the exact path (transcripts nest a handful of levels).
const MAX_DEPTH: usize = 128;

/// Keys up to this many bytes (and without escapes) are made once per read.
const MAX_SHARED_KEY: usize = 64;

/// Slots of the shared keys (a key takes the slot of its length and last byte, and a key that
/// finds its slot taken by another replaces it: a transcript's few dozen keys rarely collide).
const KEY_SLOTS: usize = 256;

/// The slot of a key: its length and first and last bytes, mixed.
fn key_slot(key: &[u8]) -> usize {
    let (first, last) = (key.first().copied().unwrap_or(0), key.last().copied().unwrap_or(0));
    let mixed = (u32::from(first) << 16 | u32::from(last) << 8 | key.len() as u32).wrapping_mul(0x9E37_79B1);
    (mixed >> 24) as usize % KEY_SLOTS
}

/// The decoder declined the line: the caller parses it the exact way.
struct Declined;

impl From<JsonError> for Declined {
    fn from(_: JsonError) -> Self {
        Declined
    }
}

impl From<PyErr> for Declined {
    fn from(_: PyErr) -> Self {
        Declined
    }
}

impl From<std::str::Utf8Error> for Declined {
    fn from(_: std::str::Utf8Error) -> Self {
        Declined
    }
}

/// A shared key: its bytes as in the line, and the `str` made of them.
type SharedKey<'py> = (Box<[u8]>, Bound<'py, PyString>);

/// Decodes the lines of one read, sharing their object keys.
pub(super) struct LineDecoder<'py> {
    py: Python<'py>,
    keys: Vec<Option<SharedKey<'py>>>,
    /// The decoded bytes of a string with escapes (reused).
    scratch: Vec<u8>,
}

impl<'py> LineDecoder<'py> {
    /// A decoder for lines of at most `longest_line` bytes: no string in them decodes to more,
    /// so the scratch is made that large once, not grown by doubling (each growth fresh memory,
    /// its pages faults when first written).
    pub(super) fn new(py: Python<'py>, longest_line: usize) -> Self {
        LineDecoder { py, keys: vec![None; KEY_SLOTS], scratch: Vec::with_capacity(longest_line) }
    }

    /// The line as Python objects, or `None` when the exact path must decide (see the module
    /// docs).
    pub(super) fn decode(&mut self, line: &[u8]) -> Option<Bound<'py, PyAny>> {
        let mut cursor = Cursor::new(line);
        let value = self.value(&mut cursor, 0).ok()?;
        cursor.finish().ok()?;
        Some(value)
    }

    fn value(&mut self, cursor: &mut Cursor<'_>, depth: usize) -> Result<Bound<'py, PyAny>, Declined> {
        let py = self.py;
        Ok(match cursor.peek() {
            Some(b'"') => self.text(cursor)?.into_any(),
            Some(b'{') if depth < MAX_DEPTH => {
                cursor.eat(b'{');
                let dict = PyDict::new(py);
                if !cursor.eat(b'}') {
                    loop {
                        let key = self.key(cursor)?;
                        if !cursor.eat(b':') {
                            return Err(Declined);
                        }
                        dict.set_item(key, self.value(cursor, depth + 1)?)?;
                        if cursor.eat(b'}') {
                            break;
                        }
                        if !cursor.eat(b',') {
                            return Err(Declined);
                        }
                    }
                }
                dict.into_any()
            }
            Some(b'[') if depth < MAX_DEPTH => {
                cursor.eat(b'[');
                let mut items = Vec::new();
                if !cursor.eat(b']') {
                    loop {
                        items.push(self.value(cursor, depth + 1)?);
                        if cursor.eat(b']') {
                            break;
                        }
                        if !cursor.eat(b',') {
                            return Err(Declined);
                        }
                    }
                }
                PyList::new(py, items)?.into_any()
            }
            Some(b't') => {
                cursor.literal(b"true")?;
                PyBool::new(py, true).to_owned().into_any()
            }
            Some(b'f') => {
                cursor.literal(b"false")?;
                PyBool::new(py, false).to_owned().into_any()
            }
            Some(b'n') => {
                cursor.literal(b"null")?;
                py.None().into_bound(py)
            }
            Some(b'-' | b'0'..=b'9') => self.number(cursor.raw_number()?)?,
            _ => return Err(Declined),
        })
    }

    /// An object key: a shared `str` when it is short and unescaped.
    fn key(&mut self, cursor: &mut Cursor<'_>) -> Result<Bound<'py, PyString>, Declined> {
        let raw = match cursor.decode_string(&mut self.scratch)? {
            Decoded::Raw(raw) if raw.len() <= MAX_SHARED_KEY => raw,
            decoded => return self.string(decoded),
        };
        let slot = key_slot(raw);
        if let Some((bytes, key)) = &self.keys[slot] {
            if **bytes == *raw {
                return Ok(key.clone());
            }
        }
        let key = PyString::from_bytes(self.py, raw)?;
        self.keys[slot] = Some((raw.into(), key.clone()));
        Ok(key)
    }

    fn text(&mut self, cursor: &mut Cursor<'_>) -> Result<Bound<'py, PyString>, Declined> {
        let decoded = cursor.decode_string(&mut self.scratch)?;
        self.string(decoded)
    }

    fn string(&self, decoded: Decoded<'_>) -> Result<Bound<'py, PyString>, Declined> {
        let bytes = match decoded {
            Decoded::Raw(raw) => raw,
            Decoded::Unescaped => &self.scratch,
            Decoded::LoneSurrogate => return Err(Declined),
        };
        // CPython's strict UTF-8 decoder checks the bytes as it copies them (a `from_utf8`
        // first walked every string twice); invalid UTF-8 declines the line, as before.
        Ok(PyString::from_bytes(self.py, bytes)?)
    }

    /// A number as `json.loads` makes it: `int` without a fraction or exponent, else `float`
    /// (both parses round correctly, as Python's do).
    fn number(&self, text: &[u8]) -> Result<Bound<'py, PyAny>, Declined> {
        let text = std::str::from_utf8(text)?;
        if !text.contains(['.', 'e', 'E']) {
            let value: i64 = text.parse().map_err(|_| Declined)?;
            let Ok(value) = value.into_pyobject(self.py);
            return Ok(value.into_any());
        }
        let value: f64 = text.parse().map_err(|_| Declined)?;
        if !value.is_finite() {
            return Err(Declined);
        }
        Ok(PyFloat::new(self.py, value).into_any())
    }
}
