//! The searchable text of a transcript's message entries, for the catalog's full-text index
//! (`catalog/text_index.py`) and for searching the bytes it has not indexed yet.
//!
//! Each `message` entry yields [`TextRow`]s: `user` (visible user text), `assistant` (assistant
//! text), `tool` (a tool call: its name, a space and its input as JSON text with `", "` and `": "`
//! separators, as Python's `json.dumps` writes it) and `result` (a tool result's text). Hidden
//! messages (`meta.isMeta` exactly `true`), blank texts and entries without a string id give
//! none. User and assistant texts are kept whole (a word deep in a long prompt is found); a tool
//! call is cut at [`MAX_TOOL_CHARS`] and a result at [`MAX_RESULT_CHARS`] characters. A row is
//! addressed by its line's byte offset and its ordinal among that line's rows, so the index keeps
//! no copy of the text: a snippet is the same row read back ([`rows_at`]).
//!
//! Only whole lines (ending in `\n`) are read: a torn tail waits for its writer. Lines that are
//! not JSON are passed over (the listing reports them). Reading is chunked ([`CHUNK_BYTES`]) and
//! each chunk's lines are parsed in parallel, so memory stays flat in the file size.
//!
//! Owns: which texts a transcript line holds, case folding for matching, and reading them by
//! byte range (extract, search) or by line offset (read back).

use crate::error::{Error, Result};
use crate::json::{Cursor, JsonError, Loose};
use crate::scan::COPY_ALIGN;
use memchr::memmem;
use rayon::prelude::*;
use std::borrow::Cow;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// A tool call's text is cut at this many characters.
pub const MAX_TOOL_CHARS: usize = 32_768;
/// A tool result's text is cut at this many characters.
pub const MAX_RESULT_CHARS: usize = 4_096;
/// Bytes read (and parsed in parallel) at a time.
pub const CHUNK_BYTES: usize = 16 << 20;

/// What a text is; its number is what the index stores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TextKind {
    User = 0,
    Assistant = 1,
    Tool = 2,
    Result = 3,
}

/// One searchable text of one entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextRow {
    /// Byte offset of the entry's line.
    pub offset: u64,
    /// Its place among the rows of that line.
    pub ordinal: u32,
    pub kind: TextKind,
    pub entry: String,
    pub timestamp: String,
    pub text: String,
}

/// Rows read from a byte range, and the offset after the last whole line read.
#[derive(Debug, Default)]
pub struct Extracted {
    pub rows: Vec<TextRow>,
    pub end: u64,
}

/// A text as matching compares it: lowercased (Unicode), as FTS5's trigram tokenizer and
/// Python's `str.lower` fold it (É matches é).
pub fn fold(text: &str) -> Cow<'_, str> {
    if text.bytes().all(|byte| !byte.is_ascii_uppercase() && byte.is_ascii()) {
        Cow::Borrowed(text)
    } else if text.is_ascii() {
        Cow::Owned(text.to_ascii_lowercase())
    } else {
        Cow::Owned(text.to_lowercase())
    }
}

/// `text` cut to at most `limit` characters.
fn cut(mut text: String, limit: usize) -> String {
    if text.len() > limit {
        if let Some((at, _)) = text.char_indices().nth(limit) {
            text.truncate(at);
        }
    }
    text
}

/// A tool call's input as `json.dumps` writes it: the raw JSON with insignificant white space
/// dropped and `", "` / `": "` as separators (strings are kept as written).
fn python_json(raw: &[u8]) -> String {
    let mut out = Vec::with_capacity(raw.len() + raw.len() / 8);
    let (mut in_string, mut escaped) = (false, false);
    for &byte in raw {
        if in_string {
            out.push(byte);
            if escaped {
                escaped = false;
            } else if byte == b'\\' {
                escaped = true;
            } else if byte == b'"' {
                in_string = false;
            }
            continue;
        }
        match byte {
            b' ' | b'\t' | b'\n' | b'\r' => {}
            b',' => out.extend_from_slice(b", "),
            b':' => out.extend_from_slice(b": "),
            b'"' => {
                in_string = true;
                out.push(byte);
            }
            _ => out.push(byte),
        }
    }
    String::from_utf8(out).unwrap_or_else(|error| String::from_utf8_lossy(error.as_bytes()).into_owned())
}

/// How Python's f-string shows a tool call's `name` value.
fn python_str(value: &Option<Loose<'_>>, raw: &[u8]) -> String {
    match value {
        Some(Loose::Str(text)) => text.to_string(),
        None | Some(Loose::Null) => "None".to_owned(),
        Some(Loose::Bool(flag)) => if *flag { "True" } else { "False" }.to_owned(),
        _ => String::from_utf8_lossy(raw).into_owned(),
    }
}

/// All four kinds, as a [`TextKind`] bit mask.
pub const ALL_KINDS: u8 = 0b1111;

/// A block's text before the message's role is known.
enum Block {
    Text(String),
    Tool(String),
    Result(String),
}

/// The text of a `tool_result`'s content: a string, or its blocks' string `text`s joined by `\n`.
fn result_text(cursor: &mut Cursor<'_>) -> std::result::Result<String, JsonError> {
    if cursor.peek() == Some(b'"') {
        return Ok(cursor.read_string()?.into_owned());
    }
    let mut parts: Vec<String> = Vec::new();
    let is_array = cursor.visit_array(|cursor| {
        let mut text = None;
        let is_object = cursor.visit_object_raw(|key, cursor| {
            if key != b"text" {
                return Ok(false);
            }
            text = match cursor.read_loose()? {
                Loose::Str(value) => Some(value.into_owned()),
                _ => None,
            };
            Ok(true)
        })?;
        if !is_object {
            cursor.skip_value()?;
        } else if let Some(text) = text {
            parts.push(text);
        }
        Ok(())
    })?;
    if !is_array {
        cursor.skip_value()?;
    }
    Ok(parts.join("\n"))
}

fn read_block(
    cursor: &mut Cursor<'_>,
    index: u32,
    kinds: u8,
    blocks: &mut Vec<(u32, Block)>,
) -> std::result::Result<(), JsonError> {
    let (mut kind, mut text, mut name, mut name_raw, mut input, mut result) = (None, None, None, &b""[..], None, None);
    let is_object = cursor.visit_object_raw(|key, cursor| {
        match key {
            b"type" => kind = Some(cursor.read_loose()?),
            b"text" => {
                text = match cursor.read_loose()? {
                    Loose::Str(value) => Some(value),
                    _ => None,
                }
            }
            b"name" => {
                name_raw = cursor.raw_value()?;
                name = Some(Cursor::new(name_raw).read_loose()?);
            }
            b"input" => input = Some(cursor.raw_value()?),
            // A result not asked for is not decoded (when its `type` comes first, as writers put it).
            b"content"
                if kinds & (1 << TextKind::Result as u8) == 0
                    && kind.as_ref().and_then(Loose::as_str) == Some("tool_result") =>
            {
                return Ok(false);
            }
            b"content" => result = Some(result_text(cursor)?),
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    if !is_object {
        return cursor.skip_value();
    }
    match kind.as_ref().and_then(Loose::as_str) {
        Some("text") => {
            if let Some(text) = text.filter(|text| !text.trim().is_empty()) {
                blocks.push((index, Block::Text(text.into_owned())));
            }
        }
        Some("tool_use") => {
            let arguments = input.map_or_else(|| "null".to_owned(), python_json);
            let text = format!("{} {arguments}", python_str(&name, name_raw));
            blocks.push((index, Block::Tool(cut(text, MAX_TOOL_CHARS))));
        }
        Some("tool_result") => {
            if let Some(text) = result.filter(|text| !text.trim().is_empty()) {
                blocks.push((index, Block::Result(cut(text, MAX_RESULT_CHARS))));
            }
        }
        _ => {}
    }
    Ok(())
}

/// The message part of a line: (role, hidden, blocks).
type Message = (bool, bool, Vec<(u32, Block)>);

fn read_message(cursor: &mut Cursor<'_>, kinds: u8) -> std::result::Result<Option<Message>, JsonError> {
    let (mut user, mut hidden, mut blocks) = (false, false, Vec::new());
    let is_object = cursor.visit_object_raw(|key, cursor| {
        match key {
            b"role" => user = cursor.read_loose()?.as_str() == Some("user"),
            b"meta" => {
                hidden = false;
                let is_meta = cursor.visit_object_raw(|key, cursor| {
                    if key != b"isMeta" {
                        return Ok(false);
                    }
                    hidden = cursor.read_loose()? == Loose::Bool(true);
                    Ok(true)
                })?;
                if !is_meta {
                    cursor.skip_value()?;
                }
            }
            b"content" => {
                blocks.clear();
                if cursor.peek() == Some(b'"') {
                    let text = cursor.read_string()?;
                    if !text.trim().is_empty() {
                        blocks.push((0, Block::Text(text.into_owned())));
                    }
                } else {
                    let mut index = 0;
                    let is_array = cursor.visit_array(|cursor| {
                        index += 1;
                        read_block(cursor, index - 1, kinds, &mut blocks)
                    })?;
                    if !is_array {
                        cursor.skip_value()?;
                    }
                }
            }
            _ => return Ok(false),
        }
        Ok(true)
    })?;
    if !is_object {
        cursor.skip_value()?;
    }
    Ok(is_object.then_some((user, hidden, blocks)))
}

/// The rows of one line (without its `\n`) that starts at `offset`, of the kinds in the bit mask
/// `kinds`; none for a line that is not a visible message entry with a string id, or not JSON.
/// A row's ordinal is its block's place in the message's content, so it does not depend on
/// `kinds`.
pub fn line_rows(line: &[u8], offset: u64, kinds: u8) -> Vec<TextRow> {
    if memmem::find(line, b"\"message\"").is_none() {
        return Vec::new(); // most lines carry no text and are never parsed
    }
    let (mut kind, mut id, mut timestamp, mut message) = (None, None, None, None);
    let mut cursor = Cursor::new(line);
    let parsed = cursor.visit_object_raw(|key, cursor| {
        match key {
            b"type" => kind = Some(cursor.read_loose()?),
            b"id" => id = Some(cursor.read_loose()?),
            b"timestamp" => timestamp = Some(cursor.read_loose()?),
            b"message" => message = read_message(cursor, kinds)?,
            _ => return Ok(false),
        }
        Ok(true)
    });
    if !matches!(parsed, Ok(true)) || cursor.finish().is_err() {
        return Vec::new();
    }
    let (Some("message"), Some(Loose::Str(id)), Some((user, false, blocks))) =
        (kind.as_ref().and_then(Loose::as_str), id, message)
    else {
        return Vec::new();
    };
    let timestamp = timestamp.as_ref().and_then(Loose::as_str).unwrap_or("").to_owned();
    blocks
        .into_iter()
        .filter_map(|(ordinal, block)| {
            let (kind, text) = match block {
                Block::Text(text) => (if user { TextKind::User } else { TextKind::Assistant }, text),
                Block::Tool(text) => (TextKind::Tool, text),
                Block::Result(text) => (TextKind::Result, text),
            };
            (kinds & (1 << kind as u8) != 0).then(|| TextRow {
                offset,
                ordinal,
                kind,
                entry: id.to_string(),
                timestamp: timestamp.clone(),
                text,
            })
        })
        .collect()
}

/// The whole lines of `data` (which starts at file offset `base`) as `(offset, line)`.
fn lines(data: &[u8], base: u64) -> Vec<(u64, &[u8])> {
    let mut found = Vec::new();
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', data) {
        found.push((base + start as u64, &data[start..end]));
        start = end + 1;
    }
    found
}

/// Reads whole lines from `start` on, a chunk at a time, calling `each(rows of a chunk)` in file
/// order, until `stop` bytes are passed (a line that crosses it is read whole) or the file ends.
/// Returns the offset after the last whole line.
fn for_chunks(path: &Path, start: u64, stop: u64, kinds: u8, mut each: impl FnMut(Vec<TextRow>)) -> Result<u64> {
    let file =
        crate::fsopen::open_regular_read(path, crate::fsopen::Follow::Yes).map_err(|source| Error::io(path, source))?;
    let size = file.metadata().map_err(|source| Error::io(path, source))?.len();
    let mut offset = start;
    let mut buffer: Vec<u8> = Vec::new();
    let mut least = 0; // grows while one line is longer than what was read
    while offset < size.min(stop) {
        let left = usize::try_from(size - offset).unwrap_or(usize::MAX);
        let wanted = usize::try_from(stop.min(size) - offset).unwrap_or(usize::MAX).min(CHUNK_BYTES);
        let want = left.min(wanted.max(least));
        let window = aligned_window(&mut buffer, offset, want);
        let read = read_at(&file, &mut buffer[window.clone()], offset).map_err(|source| Error::io(path, source))?;
        let data = &buffer[window.start..window.start + read];
        let limit = usize::try_from(stop - offset).unwrap_or(usize::MAX);
        let last = if limit < data.len() {
            memchr::memchr(b'\n', &data[limit - 1..]).map(|at| at + limit - 1) // the line holding byte `stop - 1`
        } else {
            memchr::memrchr(b'\n', data)
        };
        let Some(last) = last else {
            if read < want || offset + read as u64 >= size {
                break; // a torn last line
            }
            least = want.saturating_mul(2).max(64 << 10); // a line longer than the buffer: read more of it
            continue;
        };
        least = 0;
        let rows: Vec<TextRow> = lines(&data[..=last], offset)
            .par_chunks(256)
            .flat_map_iter(|chunk| chunk.iter().flat_map(|&(at, line)| line_rows(line, at, kinds)).collect::<Vec<_>>())
            .collect();
        offset += last as u64 + 1;
        each(rows);
        if buffer.len() > CHUNK_BYTES + COPY_ALIGN {
            buffer = Vec::new(); // give back what a huge line took
        }
    }
    Ok(offset)
}

/// Grows `buffer` to hold `want` bytes read from file offset `offset` and says where they go:
/// at the offset's place in a cache line, since the kernel's copy out of the page cache is
/// several times slower otherwise (see [`COPY_ALIGN`]).
fn aligned_window(buffer: &mut Vec<u8>, offset: u64, want: usize) -> std::ops::Range<usize> {
    buffer.resize(want + COPY_ALIGN, 0);
    let shift = (offset as usize).wrapping_sub(buffer.as_ptr() as usize) % COPY_ALIGN;
    shift..shift + want
}

fn read_at(file: &File, buffer: &mut [u8], offset: u64) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        match file.read_at(&mut buffer[filled..], offset + filled as u64) {
            Ok(0) => break,
            Ok(count) => filled += count,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(filled)
}

/// The rows of the kinds in `kinds` of the whole lines from `start` on, reading at least
/// `max_bytes` when the file has them (then stopping at the next line end), and the offset reached.
pub fn extract(path: &Path, start: u64, max_bytes: u64, kinds: u8) -> Result<Extracted> {
    let mut rows = Vec::new();
    let end = for_chunks(path, start, start.saturating_add(max_bytes), kinds, |chunk| rows.extend(chunk))?;
    Ok(Extracted { rows, end })
}

/// The rows from `start` to `stop` (whole lines) of the kinds in `kinds` (a bit per
/// [`TextKind`]) whose folded text holds `folded_needle`; only the last `keep` of them (the
/// newest), so a common word cannot fill memory. Also returns the offset reached.
pub fn search(path: &Path, start: u64, stop: u64, folded_needle: &str, kinds: u8, keep: usize) -> Result<Extracted> {
    let finder = memmem::Finder::new(folded_needle.as_bytes());
    let mut found: std::collections::VecDeque<TextRow> = std::collections::VecDeque::new();
    let end = for_chunks(path, start, stop, kinds, |rows| {
        let matching: Vec<TextRow> =
            rows.into_par_iter().filter(|row| finder.find(fold(&row.text).as_bytes()).is_some()).collect();
        for row in matching {
            if found.len() == keep {
                found.pop_front();
            }
            if keep > 0 {
                found.push_back(row);
            }
        }
    })?;
    Ok(Extracted { rows: found.into(), end })
}

/// The rows of the lines at `offsets` (each the first byte of a line, read to its `\n`); a line
/// that is gone, torn or no longer a message gives no rows.
pub fn rows_at(path: &Path, offsets: &[u64]) -> Result<Vec<Vec<TextRow>>> {
    let file =
        crate::fsopen::open_regular_read(path, crate::fsopen::Follow::Yes).map_err(|source| Error::io(path, source))?;
    let size = file.metadata().map_err(|source| Error::io(path, source))?.len();
    let mut buffer = vec![0u8; 64 << 10];
    let mut found = Vec::with_capacity(offsets.len());
    for &offset in offsets {
        let mut line = Vec::new();
        let mut at = offset;
        let whole = loop {
            if at >= size {
                break false;
            }
            let read = read_at(&file, &mut buffer, at).map_err(|source| Error::io(path, source))?;
            if read == 0 {
                break false;
            }
            if let Some(end) = memchr::memchr(b'\n', &buffer[..read]) {
                line.extend_from_slice(&buffer[..end]);
                break true;
            }
            line.extend_from_slice(&buffer[..read]);
            at += read as u64;
        };
        found.push(if whole { line_rows(&line, offset, ALL_KINDS) } else { Vec::new() });
    }
    Ok(found)
}

#[cfg(test)]
#[path = "text_extract_tests.rs"]
mod tests;
