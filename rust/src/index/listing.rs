//! The listing fields of many transcripts at once, computed natively in the pass that scans them:
//! what `sessions list`, `-c`, `-r` and the name checks need, without the catalog's text pass.
//!
//! Owns: [`listing_row`] (one transcript: through its index sidecar when given, else a plain
//! scan), [`listing_rows`] (many, in parallel on every core), the first visible user text and the
//! last prompt (read back by offset, parsed with `serde_json`), and the content fingerprint the
//! catalog keeps beside a row (blake3 of the first and last [`FINGERPRINT_BYTES`]).
//!
//! A text that `serde_json` cannot decide (a line it cannot parse, which Python's `json` may still
//! read, e.g. lone surrogate escapes) is reported as [`Text::Undecided`]: the caller then asks
//! the Python reader, so the two never disagree.

use super::{open, OpenKind, Session};
use crate::error::{Error, Result};
use crate::scan::{self, FileSource, SourceFormat};
use rayon::prelude::*;
use serde_json::Value;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

/// Bytes hashed at each end of a transcript for its fingerprint.
pub const FINGERPRINT_BYTES: u64 = 4096;

/// How many first user messages are looked at for the first visible text (as the reader does).
const FIRST_USERS_READ: usize = 8;

/// Bytes read at a time when the last prompt is searched backwards from the end.
const TAIL_CHUNK: u64 = 256 << 10;

/// A transcript up to this size is read whole once for its row (most sessions of a listing of
/// thousands: one read instead of a probe, the scan, the first prompts, the tail and both
/// fingerprint ends).
const WHOLE_READ_BYTES: u64 = 1 << 20;

/// Positioned reads of a transcript's bytes: the open file, or all of them already in memory.
pub trait ReadAt {
    /// Fills `buffer` from `offset`; fails when the bytes end first.
    fn read_exact_at(&self, buffer: &mut [u8], offset: u64) -> std::io::Result<()>;
}

impl ReadAt for File {
    fn read_exact_at(&self, buffer: &mut [u8], offset: u64) -> std::io::Result<()> {
        FileExt::read_exact_at(self, buffer, offset)
    }
}

impl ReadAt for [u8] {
    fn read_exact_at(&self, buffer: &mut [u8], offset: u64) -> std::io::Result<()> {
        let found = usize::try_from(offset).ok().and_then(|start| self.get(start..start.checked_add(buffer.len())?));
        let bytes = found.ok_or_else(|| std::io::Error::from(std::io::ErrorKind::UnexpectedEof))?;
        buffer.copy_from_slice(bytes);
        Ok(())
    }
}

/// A text field of a row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Text {
    /// Found (`None`: there is none).
    Known(Option<String>),
    /// A candidate line `serde_json` could not parse: the caller decides.
    Undecided,
}

/// What a listing needs of one transcript.
#[derive(Clone, Debug)]
pub struct ListingRow {
    pub format: Option<SourceFormat>,
    /// `(id, timestamp, cwd)` of the header, when the file has one.
    pub header: Option<(String, String, String)>,
    pub name: Option<String>,
    pub model: Option<String>,
    pub message_count: u64,
    pub entry_count: u64,
    pub skipped_lines: u64,
    pub last_timestamp: Option<String>,
    /// The size scanned.
    pub size: u64,
    pub first_message: Text,
    pub last_prompt: Text,
    /// blake3 hex (32 chars) of the first and last [`FINGERPRINT_BYTES`] of the scanned bytes.
    pub fingerprint: String,
    pub kind: OpenKind,
}

/// The row of one transcript, through `sidecar` when given (which is read, extended or
/// rewritten as [`open`] does), else from a plain scan.
///
/// # Errors
/// The transcript cannot be opened or read, or declares a newer format.
pub fn listing_row(transcript: &Path, sidecar: Option<&Path>) -> Result<ListingRow> {
    row_reading_whole(transcript, sidecar, WHOLE_READ_BYTES)
}

/// [`listing_row`], reading a transcript of at most `whole_read_bytes` whole once.
fn row_reading_whole(transcript: &Path, sidecar: Option<&Path>, whole_read_bytes: u64) -> Result<ListingRow> {
    let (session, file) = match sidecar {
        Some(sidecar) => (open(transcript, sidecar)?, super::open_transcript(transcript).ok()),
        None => {
            // One open for the scan and the reads after it (a listing of many small files).
            let file = super::open_transcript(transcript).map_err(|source| Error::io(transcript, source))?;
            let size = file.metadata().map_err(|source| Error::io(transcript, source))?.len();
            if size <= whole_read_bytes {
                return small_row(transcript, &file, size);
            }
            let source = FileSource { file, size };
            let report = scan::scan_source(&source, transcript)?;
            (Session::from_report(transcript, report, OpenKind::Scanned), Some(source.file))
        }
    };
    let summary = &session.summary;
    let report = &summary.report;
    let size = report.file_size;
    let spans: Vec<(u64, u64)> =
        summary.first_users.iter().take(FIRST_USERS_READ).map(|item| (item.offset, item.length)).collect();
    let (first_message, last_prompt, fingerprint) = match &file {
        Some(file) => (first_text(file, &spans), last_prompt(file, size), fingerprint(file, size)),
        None => (Text::Undecided, Text::Undecided, String::new()),
    };
    Ok(row_of(&session, first_message, last_prompt, fingerprint))
}

/// The row of a transcript of at most [`WHOLE_READ_BYTES`], read whole once: the scan and every
/// field after it come from those bytes (one read instead of one per field).
fn small_row(transcript: &Path, file: &File, size: u64) -> Result<ListingRow> {
    let mut bytes = vec![0; size as usize];
    let mut read = 0;
    while read < bytes.len() {
        match file.read_at(&mut bytes[read..], read as u64) {
            Ok(0) => break, // cut short since the size was taken: the bytes there are what is scanned
            Ok(count) => read += count,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error) => return Err(Error::io(transcript, error)),
        }
    }
    bytes.truncate(read);
    let report = scan::scan_source(&scan::MemorySource(&bytes), transcript)?;
    let session = Session::from_report(transcript, report, OpenKind::Scanned);
    let spans: Vec<(u64, u64)> =
        session.summary.first_users.iter().take(FIRST_USERS_READ).map(|item| (item.offset, item.length)).collect();
    let size = session.summary.report.file_size;
    let bytes = &bytes[..];
    Ok(row_of(&session, first_text(bytes, &spans), last_prompt(bytes, size), fingerprint(bytes, size)))
}

fn row_of(session: &Session, first_message: Text, last_prompt: Text, fingerprint: String) -> ListingRow {
    let summary = &session.summary;
    let report = &summary.report;
    ListingRow {
        format: report.format,
        header: report.header.as_ref().map(|header| (header.id.clone(), header.timestamp.clone(), header.cwd.clone())),
        name: summary.name.clone(),
        model: summary.model.clone(),
        message_count: summary.message_count,
        entry_count: summary.entry_count,
        skipped_lines: report.skipped.len() as u64,
        last_timestamp: summary.last_timestamp.clone(),
        size: report.file_size,
        first_message,
        last_prompt,
        fingerprint,
        kind: session.kind,
    }
}

/// The rows of many transcripts (`(transcript, sidecar)`), in parallel, in the order given.
pub fn listing_rows(items: &[(PathBuf, Option<PathBuf>)]) -> Vec<Result<ListingRow>> {
    items.par_iter().map(|(transcript, sidecar)| listing_row(transcript, sidecar.as_deref())).collect()
}

/// What a name check needs of a transcript without a fresh catalog row: the header's `cwd` and
/// the name of its latest `session_info` entry. From its index sidecar when one describes the
/// file as it is (no byte of the transcript read but its edges: a 1 GB session named in its
/// first lines would otherwise be searched backwards whole); else found by a byte search
/// backwards from the end, so a named session costs a read of its tail only.
/// [`Text::Undecided`] when that cannot be sure it agrees with a whole scan (no v3 header
/// first, a candidate line before the header): the caller then summarizes the file.
pub fn name_of(transcript: &Path, sidecar: Option<&Path>) -> Result<(Option<String>, Text)> {
    let file = super::open_transcript(transcript).map_err(|source| Error::io(transcript, source))?;
    let metadata = file.metadata().map_err(|source| Error::io(transcript, source))?;
    if let Some((cwd, name)) = remembered_name(&metadata) {
        return Ok((Some(cwd), Text::Known(name)));
    }
    if let Some(summary) = sidecar.and_then(|sidecar| super::trusted_summary(&file, &metadata, sidecar)) {
        if let (Some(SourceFormat::V3), Some(header)) = (summary.report.format, &summary.report.header) {
            return Ok((Some(header.cwd.clone()), Text::Known(summary.name)));
        }
        return Ok((None, Text::Undecided));
    }
    let size = metadata.len();
    let Some((cwd, header_end)) = header_of(&file, size) else { return Ok((None, Text::Undecided)) };
    let mut found: Option<Text> = None;
    lines_backward(&file, header_end, size, b"session_info", &mut |line| match scan::classify_alone(line) {
        Err(()) => {
            found = Some(Text::Undecided);
            true
        }
        Ok(Some(entry)) => match entry.extra {
            crate::envelope::Extra::SessionInfo { name } => {
                let name = name.as_deref().map(str::trim).filter(|name| !name.is_empty()).map(str::to_owned);
                found = Some(Text::Known(name));
                true
            }
            _ => false,
        },
        Ok(None) => false,
    })
    .map_err(|source| Error::io(transcript, source))?;
    if let Some(text) = found {
        return Ok((Some(cwd), text));
    }
    Ok((Some(cwd), Text::Known(None)))
}

/// Names read from whole files in this process (a fork's source: `fork_source`), by the file's
/// identity: device, inode, size, modification and change times. An append or a rewrite changes
/// the key, so a remembered name is only ever the file's name as it is.
type NameKey = (u64, u64, u64, i64, i64, i64, i64);

static NAMES: std::sync::Mutex<Vec<(NameKey, String, Option<String>)>> = std::sync::Mutex::new(Vec::new());

/// How many names are remembered (the oldest goes first): a process forks a few sessions at most.
const NAMES_KEPT: usize = 16;

fn name_key(metadata: &std::fs::Metadata) -> NameKey {
    use std::os::unix::fs::MetadataExt;
    (
        metadata.dev(),
        metadata.ino(),
        metadata.size(),
        metadata.mtime(),
        metadata.mtime_nsec(),
        metadata.ctime(),
        metadata.ctime_nsec(),
    )
}

/// Remembers `(header cwd, latest session_info name)` of the file `metadata` describes, read whole.
pub(super) fn remember_name(metadata: &std::fs::Metadata, cwd: &str, name: Option<String>) {
    let key = name_key(metadata);
    let mut names = NAMES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    names.retain(|(known, ..)| *known != key);
    if names.len() >= NAMES_KEPT {
        names.remove(0);
    }
    names.push((key, cwd.to_owned(), name));
}

fn remembered_name(metadata: &std::fs::Metadata) -> Option<(String, Option<String>)> {
    let key = name_key(metadata);
    let names = NAMES.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    names.iter().find(|(known, ..)| *known == key).map(|(_, cwd, name)| (cwd.clone(), name.clone()))
}

/// The `cwd` of a v3 header on the first non-blank line, and the offset after that line.
pub(super) fn header_of(file: &File, size: u64) -> Option<(String, u64)> {
    let mut offset = 0;
    let mut line = Vec::new();
    while offset < size {
        let mut chunk = vec![0; (size - offset).min(64 << 10) as usize];
        FileExt::read_exact_at(file, &mut chunk, offset).ok()?;
        match memchr::memchr(b'\n', &chunk) {
            Some(end) => {
                line.extend_from_slice(&chunk[..end]);
                offset += end as u64 + 1;
                if line.iter().all(u8::is_ascii_whitespace) {
                    line.clear();
                    continue;
                }
                break;
            }
            None => {
                line.extend_from_slice(&chunk);
                offset += chunk.len() as u64;
            }
        }
    }
    let text = line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(&line);
    let value: Value = serde_json::from_slice(text).ok()?;
    let header = value.as_object()?;
    let v3 = header.get("type")?.as_str()? == "session" && header.get("version")?.as_u64()? == 3;
    let cwd = header.get("cwd")?.as_str()?;
    (v3 && header.get("id")?.is_string() && header.get("timestamp")?.is_string()).then(|| (cwd.to_owned(), offset))
}

/// [`name_of`] of many transcripts (`(transcript, sidecar)`), in parallel, in order.
pub fn names_of(items: &[(PathBuf, Option<PathBuf>)]) -> Vec<Result<(Option<String>, Text)>> {
    items.par_iter().map(|(path, sidecar)| name_of(path, sidecar.as_deref())).collect()
}

/// The fingerprint of each file (`""` when it cannot be read), in parallel.
pub fn fingerprints(paths: &[PathBuf]) -> Vec<String> {
    paths
        .par_iter()
        .map(|path| {
            let Ok(file) = super::open_transcript(path) else { return String::new() };
            file.metadata().map(|metadata| fingerprint(&file, metadata.len())).unwrap_or_default()
        })
        .collect()
}

/// blake3 hex of the first and last [`FINGERPRINT_BYTES`] of `[0, size)` (empty when unreadable).
pub fn fingerprint<R: ReadAt + ?Sized>(file: &R, size: u64) -> String {
    let mut hasher = blake3::Hasher::new();
    let head = size.min(FINGERPRINT_BYTES);
    let tail_start = size.saturating_sub(FINGERPRINT_BYTES).max(head);
    for (start, end) in [(0, head), (tail_start, size)] {
        let mut buffer = vec![0; (end - start) as usize];
        if file.read_exact_at(&mut buffer, start).is_err() {
            return String::new();
        }
        hasher.update(&buffer);
    }
    hasher.update(&size.to_le_bytes());
    hasher.finalize().to_hex()[..32].to_owned()
}

/// Python's `str.isspace` (Rust's `White_Space` plus the four information separators).
fn is_py_space(character: char) -> bool {
    character.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&character)
}

fn blank(text: &str) -> bool {
    text.chars().all(is_py_space)
}

/// The content blocks of a message's content: a string is one text block.
fn text_blocks(content: Option<&Value>) -> Vec<&str> {
    match content {
        Some(Value::String(text)) => vec![text.as_str()],
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(Value::as_object)
            .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|block| block.get("text").and_then(Value::as_str))
            .collect(),
        _ => Vec::new(),
    }
}

/// The visible text blocks of a user prompt line, `None` when the line is not one; `Err` when
/// the line does not parse.
fn prompt_blocks(line: &[u8], require_type: bool) -> std::result::Result<Option<Vec<String>>, ()> {
    let value: Value = serde_json::from_slice(line).map_err(|_| ())?;
    let Some(entry) = value.as_object() else { return Ok(None) };
    if require_type && entry.get("type").and_then(Value::as_str) != Some("message") {
        return Ok(None);
    }
    let Some(message) = entry.get("message").and_then(Value::as_object) else { return Ok(None) };
    let meta = message.get("meta").and_then(Value::as_object);
    if meta.and_then(|meta| meta.get("isMeta")) == Some(&Value::Bool(true)) {
        return Ok(None);
    }
    if require_type && message.get("role").and_then(Value::as_str) != Some("user") {
        return Ok(None);
    }
    Ok(Some(text_blocks(message.get("content")).into_iter().filter(|text| !blank(text)).map(str::to_owned).collect()))
}

/// The first visible text among the first user messages (`Session.first_message`).
fn first_text<R: ReadAt + ?Sized>(file: &R, spans: &[(u64, u64)]) -> Text {
    for &(offset, length) in spans {
        let mut line = vec![0; length as usize];
        if file.read_exact_at(&mut line, offset).is_err() {
            return Text::Undecided;
        }
        match prompt_blocks(&line, false) {
            Err(()) => return Text::Undecided,
            Ok(Some(blocks)) if !blocks.is_empty() => return Text::Known(blocks.into_iter().next()),
            Ok(_) => {}
        }
    }
    Text::Known(None)
}

/// The last visible user text, read backwards from `size` (`texts.last_prompt_of`).
fn last_prompt<R: ReadAt + ?Sized>(file: &R, size: u64) -> Text {
    let mut found: Option<Text> = None;
    let read = lines_backward(file, 0, size, b"\"user\"", &mut |line| {
        if memchr::memmem::find(line, b"\"message\"").is_none() {
            return false;
        }
        match prompt_blocks(line, true) {
            Err(()) => {
                found = Some(Text::Undecided);
                true
            }
            Ok(Some(blocks)) if !blocks.is_empty() => {
                found = Some(Text::Known(Some(blocks.join("\n"))));
                true
            }
            Ok(_) => false,
        }
    });
    match read {
        Err(_) => Text::Undecided,
        Ok(()) => found.unwrap_or(Text::Known(None)),
    }
}

/// Visits the lines of `file` between `start` and `end` from the last to the first, each whole,
/// until `visit` returns true; only lines holding `needle` are visited. Linear in the bytes: the
/// chunks are read once to find line ends, and a line longer than a chunk is read again once,
/// whole, once (a 200 MB line was copied again for every chunk before: quadratic).
pub(super) fn lines_backward<R: ReadAt + ?Sized>(
    file: &R,
    start: u64,
    end: u64,
    needle: &[u8],
    visit: &mut dyn FnMut(&[u8]) -> bool,
) -> std::io::Result<()> {
    let finder = memchr::memmem::Finder::new(needle);
    let mut line_end = end; // the end of the line being assembled (exclusive)
    let mut cursor = end;
    let mut holds = false; // whether the line being assembled spans chunks
    let mut chunk = Vec::new();
    while cursor > start {
        let begin = cursor.saturating_sub(TAIL_CHUNK).max(start);
        chunk.resize((cursor - begin) as usize, 0);
        file.read_exact_at(&mut chunk, begin)?;
        let mut upper = chunk.len(); // the part of the chunk belonging to the line ending at line_end
        while let Some(newline) = memchr::memrchr(b'\n', &chunk[..upper]) {
            let line_start = begin + newline as u64 + 1;
            if visit_line(file, line_start, line_end, begin, &chunk, &finder, holds, visit)? {
                return Ok(());
            }
            line_end = line_start - 1;
            upper = newline;
            holds = false;
        }
        // The rest of this chunk is the tail of a line that starts earlier: that line spans chunks,
        // so it is read whole once its start is found (and checked for the needle then).
        holds = true;
        cursor = begin;
    }
    visit_line(file, start, line_end, start, &chunk, &finder, true, visit).map(|_| ())
}

/// One line [`line_start`, `line_end`) for [`lines_backward`]: from the chunk when it lies in it,
/// else (`spans`: it runs over several chunks) read whole, once.
#[allow(clippy::too_many_arguments)]
fn visit_line<R: ReadAt + ?Sized>(
    file: &R,
    line_start: u64,
    line_end: u64,
    chunk_start: u64,
    chunk: &[u8],
    finder: &memchr::memmem::Finder<'_>,
    spans: bool,
    visit: &mut dyn FnMut(&[u8]) -> bool,
) -> std::io::Result<bool> {
    if line_end <= line_start {
        return Ok(false);
    }
    let chunk_end = chunk_start + chunk.len() as u64;
    if line_start >= chunk_start && line_end <= chunk_end {
        let line = &chunk[(line_start - chunk_start) as usize..(line_end - chunk_start) as usize];
        return Ok(finder.find(line).is_some() && visit(line));
    }
    if !spans {
        return Ok(false);
    }
    let mut line = vec![0; (line_end - line_start) as usize];
    file.read_exact_at(&mut line, line_start)?;
    Ok(finder.find(&line).is_some() && visit(&line))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn write(lines: &[&str]) -> tempfile::NamedTempFile {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        for line in lines {
            writeln!(file, "{line}").unwrap();
        }
        file
    }

    const HEADER: &str = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;

    fn user(id: &str, parent: Option<&str>, text: &str) -> String {
        serde_json::json!({"type": "message", "id": id, "parentId": parent, "timestamp": "2026-01-01T00:00:01.000Z",
                           "message": {"role": "user", "content": text}})
        .to_string()
    }

    fn assistant(id: &str, parent: &str) -> String {
        serde_json::json!({"type": "message", "id": id, "parentId": parent, "timestamp": "2026-01-01T00:00:02.000Z",
                           "message": {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}})
        .to_string()
    }

    #[test]
    fn first_and_last_prompts_names_and_counts() {
        let file = write(&[
            HEADER,
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"  "}]}}"#,
            r#"{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"first"}}"#,
            r#"{"type":"message","id":"c","parentId":"b","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"assistant","content":[{"type":"text","text":"hi"}]}}"#,
            r#"{"type":"session_info","id":"d","parentId":"c","timestamp":"2026-01-01T00:00:04.000Z","name":"named"}"#,
            r#"{"type":"message","id":"e","parentId":"d","timestamp":"2026-01-01T00:00:05.000Z","message":{"role":"user","content":[{"type":"text","text":"last"},{"type":"text","text":"part"}]}}"#,
            r#"{"type":"message","id":"f","parentId":"e","timestamp":"2026-01-01T00:00:06.000Z","message":{"role":"user","content":"hidden","meta":{"isMeta":true}}}"#,
        ]);
        let row = listing_row(file.path(), None).unwrap();
        assert_eq!(row.first_message, Text::Known(Some("first".into())));
        assert_eq!(row.last_prompt, Text::Known(Some("last\npart".into())));
        assert_eq!(row.name.as_deref(), Some("named"));
        assert_eq!(row.message_count, 4);
        assert_eq!(row.header.unwrap().2, "/w");
        assert_eq!(row.fingerprint.len(), 32);
    }

    #[test]
    fn a_line_serde_cannot_read_is_left_to_the_caller() {
        let file = write(&[
            HEADER,
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"\udc80"}}"#,
        ]);
        let row = listing_row(file.path(), None).unwrap();
        assert_eq!(row.first_message, Text::Undecided);
        assert_eq!(row.last_prompt, Text::Undecided);
    }

    #[test]
    fn the_name_is_the_latest_session_info_found_from_the_end() {
        let info = |id: &str, name: &str| {
            format!(
                r#"{{"type":"session_info","id":"{id}","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","name":"{name}"}}"#
            )
        };
        let (first, second, empty) = (info("a", " first "), info("b", "second"), info("c", "  "));
        let mention = r#"{"type":"message","id":"m","parentId":"b","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"session_info"}}"#;
        let named = write(&[HEADER, &first, &second, mention, "{torn session_info"]);
        let (cwd, name) = name_of(named.path(), None).unwrap();
        assert_eq!((cwd.as_deref(), name), (Some("/w"), Text::Known(Some("second".into()))));
        assert_eq!(listing_row(named.path(), None).unwrap().name.as_deref(), Some("second"));
        let cleared = write(&[HEADER, &first, &empty]);
        assert_eq!(name_of(cleared.path(), None).unwrap().1, Text::Known(None));
        let unnamed = write(&[HEADER, mention]);
        assert_eq!(name_of(unnamed.path(), None).unwrap().1, Text::Known(None));
        let legacy = write(&[r#"{"type":"user","sessionId":"s"}"#, &first]);
        assert_eq!(name_of(legacy.path(), None).unwrap().1, Text::Undecided);
        let two_headers = write(&[HEADER, &first, HEADER]);
        assert_eq!(name_of(two_headers.path(), None).unwrap().1, Text::Known(Some("first".into())));
        assert_eq!(listing_row(two_headers.path(), None).unwrap().name.as_deref(), Some("first"));
        assert_eq!(listing_row(cleared.path(), None).unwrap().name, None);
    }

    #[test]
    fn a_name_check_believes_a_sidecar_only_while_it_describes_the_file() {
        let info = |id: &str, name: &str| {
            format!(
                r#"{{"type":"session_info","id":"{id}","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","name":"{name}"}}"#
            )
        };
        let file = write(&[HEADER, &info("a", "early name")]);
        let folder = tempfile::tempdir().unwrap();
        let sidecar = folder.path().join("s.idx");
        super::super::open(file.path(), &sidecar).unwrap(); // writes the sidecar
        assert!(sidecar.exists());
        let from_sidecar = name_of(file.path(), Some(&sidecar)).unwrap();
        assert_eq!(from_sidecar, (Some("/w".into()), Text::Known(Some("early name".into()))));
        // a sidecar describing another file (or none at all) is not believed: the file is read
        let other = write(&[HEADER, &info("b", "other")]);
        assert_eq!(name_of(other.path(), Some(&sidecar)).unwrap().1, Text::Known(Some("other".into())));
        assert_eq!(
            name_of(file.path(), Some(&folder.path().join("none.idx"))).unwrap().1,
            Text::Known(Some("early name".into()))
        );
        // appended behind the sidecar's back: the new name, from the file
        let mut handle = std::fs::OpenOptions::new().append(true).open(file.path()).unwrap();
        std::io::Write::write_all(&mut handle, format!("{}\n", info("c", "renamed")).as_bytes()).unwrap();
        assert_eq!(name_of(file.path(), Some(&sidecar)).unwrap().1, Text::Known(Some("renamed".into())));
    }

    #[test]
    fn lines_longer_than_a_chunk_are_read_whole_once() {
        let long = "y".repeat(3 * TAIL_CHUNK as usize + 17);
        let prompt = format!(
            r#"{{"type":"message","id":"p","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":"{long}"}}}}"#
        );
        let info =
            r#"{"type":"session_info","id":"i","parentId":"p","timestamp":"2026-01-01T00:00:02.000Z","name":"kept"}"#;
        let filler = format!(
            r#"{{"type":"custom","id":"c","parentId":"i","timestamp":"2026-01-01T00:00:03.000Z","customType":"x","data":"{long}"}}"#
        );
        let file = write(&[HEADER, &prompt, info, &filler]);
        let (_, name) = name_of(file.path(), None).unwrap();
        assert_eq!(name, Text::Known(Some("kept".into())));
        let opened = File::open(file.path()).unwrap();
        let size = opened.metadata().unwrap().len();
        assert_eq!(last_prompt(&opened, size), Text::Known(Some(long.clone())));
        let mut seen = Vec::new();
        lines_backward(&opened, 0, size, b"\"type\"", &mut |line| {
            seen.push(line.len());
            false
        })
        .unwrap();
        assert_eq!(seen, vec![filler.len(), info.len(), prompt.len(), HEADER.len()]);
    }

    #[test]
    fn a_file_read_whole_gives_the_row_its_streamed_reads_give() {
        let long = "x".repeat(300 << 10); // longer than a tail chunk: the last prompt spans chunks
        let files: Vec<(Vec<String>, &str)> = vec![
            (
                vec![HEADER.into(), user("u1", None, "first"), assistant("a1", "u1"), user("u2", Some("a1"), "second")],
                "",
            ),
            (vec![HEADER.into(), "{not json".into(), user("u1", None, "after a corrupt line")], ""),
            (vec![HEADER.into(), user("u1", None, &long), assistant("a1", "u1")], ""),
            (vec![HEADER.into(), user("u1", None, "torn tail follows")], "{\"type\":\"message\",\"id\":\"u"),
            (vec![HEADER.into(), r#"{"type":"session_info","id":"n1","parentId":null,"name":" named "}"#.into()], ""),
            (vec![user("u1", None, "no header: legacy or synthesized")], ""),
            (vec![], ""),
        ];
        for (lines, tail) in files {
            let mut file = tempfile::NamedTempFile::new().unwrap();
            for line in &lines {
                writeln!(file, "{line}").unwrap();
            }
            write!(file, "{tail}").unwrap();
            file.flush().unwrap();
            let whole = row_reading_whole(file.path(), None, u64::MAX).unwrap();
            let streamed = row_reading_whole(file.path(), None, 0).unwrap();
            assert_eq!(format!("{whole:?}"), format!("{streamed:?}"), "{lines:?} {tail:?}");
        }
    }

    #[test]
    fn fingerprint_sees_a_changed_end() {
        let one = write(&[HEADER, "x"]);
        let two = write(&[HEADER, "y"]);
        let size = std::fs::metadata(one.path()).unwrap().len();
        let (a, b) = (File::open(one.path()).unwrap(), File::open(two.path()).unwrap());
        assert_ne!(fingerprint(&a, size), fingerprint(&b, size));
        assert_eq!(fingerprint(&a, size), fingerprint(&File::open(one.path()).unwrap(), size));
    }
}
