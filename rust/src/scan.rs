//! Torn-line-tolerant scanning of a transcript file into a [`ScanReport`].
//!
//! The file is streamed in large chunks (never mapped or held whole, so memory stays flat in
//! the file size), split on `\n` with memchr, and every line is validated as JSON in parallel.
//! Order-dependent rules (which line is the header, which lines come before it, the torn tail)
//! are applied afterwards in file order, exactly as the real CLI reads a v3 file (format §2.6).
//! Nothing here writes: a damaged file is reported, never repaired.

use crate::envelope::{parse_line, EntryKind, Extra, LineFields, Loose, ParsedLine, Role};
use crate::json::JsonError;
use crate::error::{Error, Result};
use rayon::prelude::*;
use std::io::Read;
use std::path::Path;

/// The format version this build reads and writes.
pub const SUPPORTED_VERSION: u64 = 3;

/// Lines are processed in batches of about this many bytes.
const CHUNK_BYTES: usize = 32 << 20;

/// The session header (the first valid `{"type":"session",...}` line).
#[derive(Clone, Debug, PartialEq)]
pub struct Header {
    pub id: String,
    pub timestamp: String,
    pub cwd: String,
    /// Absolute path of the source transcript, written by `/clone`.
    pub parent_session: Option<String>,
    /// The `sessionId` key a real-CLI fork adds to every line (the header `id` stays the parent's).
    pub session_id: Option<String>,
    pub line: u64,
    pub offset: u64,
    pub length: u64,
}

/// One valid entry line.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub kind: EntryKind,
    pub id: Box<str>,
    pub parent_id: Option<Box<str>>,
    pub timestamp: Box<str>,
    /// 1-based physical line number.
    pub line: u64,
    /// Byte offset of the line's first byte.
    pub offset: u64,
    /// Length of the line without its `\n`.
    pub length: u64,
    pub extra: Extra,
}

/// Why a line was skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SkipReason {
    InvalidJson,
    NotObject,
    FailsValidation,
    BeforeHeader,
    TornTail,
}

impl SkipReason {
    /// The reason as reported to users.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidJson => "invalid JSON",
            Self::NotObject => "not an object",
            Self::FailsValidation => "fails validation",
            Self::BeforeHeader => "before the header",
            Self::TornTail => "torn tail without newline",
        }
    }
}

/// A line the scan passed over.
#[derive(Clone, Debug, PartialEq)]
pub struct SkippedLine {
    pub line: u64,
    pub offset: u64,
    pub length: u64,
    pub reason: SkipReason,
    /// A short human explanation (the JSON error, the failed rule).
    pub detail: String,
}

/// Which format the first parseable object announced (format §2.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceFormat {
    V3,
    LegacyV2,
    LegacyV1,
}

/// Everything a scan learned about a transcript.
#[derive(Debug, Default)]
pub struct ScanReport {
    pub header: Option<Header>,
    pub format: Option<SourceFormat>,
    pub entries: Vec<Entry>,
    pub skipped: Vec<SkippedLine>,
    pub file_size: u64,
    /// Whether the file ends with `\n` (an empty file counts as ending cleanly).
    pub ends_with_newline: bool,
    /// The file starts with a UTF-8 byte-order mark (skipped, not an error).
    pub has_bom: bool,
    /// `metadata.entrypoint` of the first legacy line, if any.
    pub legacy_entrypoint: Option<String>,
    /// Number of physical lines, blank ones included.
    pub line_count: u64,
}

/// What one line turned out to be, before order-dependent rules apply.
enum LineOutcome {
    Blank,
    Header(Header),
    NewerHeader(f64),
    Entry(Entry),
    /// A JSON object that is neither a valid header nor a valid entry.
    OtherObject { detail: &'static str, legacy: Option<SourceFormat>, entrypoint: Option<String> },
    Skip(SkipReason, String),
}

impl LineOutcome {
    fn is_object(&self) -> bool {
        !matches!(self, LineOutcome::Blank | LineOutcome::Skip(..))
    }
}

/// Scans the transcript at `path`.
///
/// Fails only on I/O errors and on a header that declares a newer format version
/// ([`Error::NewerVersion`]); every malformed line is reported in [`ScanReport::skipped`].
pub fn scan_file(path: &Path) -> Result<ScanReport> {
    let file = std::fs::File::open(path).map_err(|source| Error::io(path, source))?;
    scan_reader(file, path)
}

/// Scans an in-memory transcript (tests, fuzzing).
pub fn scan_bytes(data: &[u8]) -> Result<ScanReport> {
    scan_reader(data, Path::new("<memory>"))
}

fn scan_reader(mut reader: impl Read, path: &Path) -> Result<ScanReport> {
    let mut builder = ReportBuilder::default();
    let mut buffer: Vec<u8> = Vec::with_capacity(CHUNK_BYTES);
    let mut base_offset: u64 = 0;
    let mut at_start = true;
    let mut eof = false;
    while !eof {
        let target = (buffer.len() + CHUNK_BYTES).max(CHUNK_BYTES);
        eof = fill(&mut reader, &mut buffer, target).map_err(|source| Error::io(path, source))?;
        if at_start {
            at_start = false;
            if buffer.starts_with(b"\xEF\xBB\xBF") {
                builder.report.has_bom = true;
                buffer.drain(..3);
                base_offset = 3;
            }
        }
        let end = if eof {
            buffer.len()
        } else {
            match memchr::memrchr(b'\n', &buffer) {
                Some(position) => position + 1,
                None => continue, // one line longer than the buffer: read on
            }
        };
        builder.push_block(&buffer[..end], base_offset, eof, path)?;
        buffer.drain(..end);
        base_offset += end as u64;
    }
    builder.report.file_size = base_offset;
    Ok(builder.finish())
}

/// Reads until `buffer` holds `target` bytes or the input ends; returns whether it ended.
/// Reads into spare capacity (no zero-filling of the buffer first).
fn fill(reader: &mut impl Read, buffer: &mut Vec<u8>, target: usize) -> std::io::Result<bool> {
    let wanted = target.saturating_sub(buffer.len());
    buffer.reserve(wanted);
    let read = reader.by_ref().take(wanted as u64).read_to_end(buffer)?;
    Ok(read < wanted)
}

#[derive(Default)]
struct ReportBuilder {
    report: ScanReport,
    /// Entries seen before any valid header: kept if no header ever comes, skipped otherwise.
    pending_before_header: Vec<Entry>,
    seen_object: bool,
    last_line_terminated: bool,
}

impl ReportBuilder {
    fn push_block(&mut self, block: &[u8], base_offset: u64, is_last: bool, path: &Path) -> Result<()> {
        let mut spans: Vec<(usize, usize)> = Vec::with_capacity(block.len() / 2048 + 1);
        let mut start = 0;
        for newline in memchr::memchr_iter(b'\n', block) {
            spans.push((start, newline));
            start = newline + 1;
        }
        let tail_unterminated = start < block.len();
        if tail_unterminated {
            spans.push((start, block.len()));
        }
        if is_last {
            self.last_line_terminated = !tail_unterminated;
        }
        let first_line = self.report.line_count + 1;
        let outcomes: Vec<LineOutcome> = spans
            .par_iter()
            .with_min_len(64)
            .enumerate()
            .map(|(index, &(from, to))| {
                classify(&block[from..to], first_line + index as u64, base_offset + from as u64)
            })
            .collect();
        let count = spans.len();
        for (index, outcome) in outcomes.into_iter().enumerate() {
            let (from, to) = spans[index];
            let line = first_line + index as u64;
            let torn = is_last && tail_unterminated && index + 1 == count;
            self.apply(outcome, line, base_offset + from as u64, (to - from) as u64, torn, path)?;
        }
        self.report.line_count += count as u64;
        Ok(())
    }

    fn apply(&mut self, outcome: LineOutcome, line: u64, offset: u64, length: u64, torn: bool, path: &Path) -> Result<()> {
        if outcome.is_object() && !self.seen_object {
            self.seen_object = true;
            self.report.format = Some(match &outcome {
                LineOutcome::NewerHeader(found) => {
                    return Err(Error::NewerVersion {
                        path: path.to_path_buf(),
                        found: *found as u64,
                        supported: SUPPORTED_VERSION,
                    })
                }
                LineOutcome::OtherObject { legacy: Some(format), entrypoint, .. } => {
                    self.report.legacy_entrypoint = entrypoint.clone();
                    *format
                }
                _ => SourceFormat::V3,
            });
        }
        let skip = |reason: SkipReason, detail: String| SkippedLine { line, offset, length, reason, detail };
        match outcome {
            LineOutcome::Blank => {}
            LineOutcome::Header(header) if self.report.header.is_none() => {
                for entry in self.pending_before_header.drain(..) {
                    self.report.skipped.push(SkippedLine {
                        line: entry.line,
                        offset: entry.offset,
                        length: entry.length,
                        reason: SkipReason::BeforeHeader,
                        detail: "entry precedes the session header".into(),
                    });
                }
                self.report.header = Some(header);
            }
            LineOutcome::Header(_) => {
                self.report.skipped.push(skip(SkipReason::FailsValidation, "a second session header".into()))
            }
            LineOutcome::NewerHeader(found) if self.report.header.is_none() => {
                return Err(Error::NewerVersion { path: path.to_path_buf(), found: found as u64, supported: SUPPORTED_VERSION });
            }
            LineOutcome::NewerHeader(found) => self
                .report
                .skipped
                .push(skip(SkipReason::FailsValidation, format!("a session header of version {found} after the header"))),
            LineOutcome::Entry(entry) if self.report.header.is_none() => self.pending_before_header.push(entry),
            LineOutcome::Entry(entry) => self.report.entries.push(entry),
            LineOutcome::OtherObject { detail, .. } => {
                self.report.skipped.push(skip(SkipReason::FailsValidation, detail.into()))
            }
            LineOutcome::Skip(reason, detail) => {
                let reason = if torn { SkipReason::TornTail } else { reason };
                self.report.skipped.push(skip(reason, detail));
            }
        }
        Ok(())
    }

    fn finish(mut self) -> ScanReport {
        if self.report.header.is_none() {
            self.report.entries = std::mem::take(&mut self.pending_before_header);
        }
        self.report.skipped.sort_by_key(|skipped| skipped.line);
        self.report.ends_with_newline = self.last_line_terminated || self.report.file_size == 0;
        self.report
    }
}

/// Decides what one line is. Runs in parallel; must not depend on other lines.
fn classify(line: &[u8], line_number: u64, offset: u64) -> LineOutcome {
    if line.iter().all(|byte| byte.is_ascii_whitespace()) {
        return LineOutcome::Blank;
    }
    // Invalid UTF-8 is not an error: like the real CLI, which decodes files with replacement
    // characters before parsing, the cursor decodes the fields it reads lossily.
    match parse_line(line) {
        Ok(parsed) => from_parsed(parsed, line, line_number, offset),
        Err(error) => LineOutcome::Skip(SkipReason::InvalidJson, json_error_detail(&error)),
    }
}

#[cold]
fn json_error_detail(error: &JsonError) -> String {
    error.to_string()
}

fn from_parsed(parsed: ParsedLine<'_>, line: &[u8], line_number: u64, offset: u64) -> LineOutcome {
    let fields = match parsed {
        ParsedLine::NotObject => return LineOutcome::Skip(SkipReason::NotObject, "valid JSON but not an object".into()),
        ParsedLine::Object(fields) => fields,
    };
    let kind_text = fields.kind.as_ref().and_then(Loose::as_str);
    if kind_text == Some("session") {
        return header_outcome(&fields, line, line_number, offset);
    }
    let Some(kind) = kind_text.and_then(EntryKind::parse) else {
        return other_object(&fields, if kind_text.is_some() { "unknown entry type" } else { "no entry type" });
    };
    let Some(id) = str_field(&fields.id) else {
        return other_object(&fields, "`id` is not a string");
    };
    let parent_id = match &fields.parent_id {
        Some(Loose::Null) => None,
        Some(Loose::Str(text)) => Some(Box::from(text.as_ref())),
        _ => return other_object(&fields, "`parentId` is neither null nor a string"),
    };
    let Some(timestamp) = str_field(&fields.timestamp) else {
        return other_object(&fields, "`timestamp` is not a string");
    };
    LineOutcome::Entry(Entry {
        kind,
        id: id.into(),
        parent_id,
        timestamp: timestamp.into(),
        line: line_number,
        offset,
        length: line.len() as u64,
        extra: extra_for(kind, &fields),
    })
}

fn str_field<'a>(value: &'a Option<Loose<'_>>) -> Option<&'a str> {
    value.as_ref().and_then(Loose::as_str)
}

fn boxed(value: &Option<Loose<'_>>) -> Option<Box<str>> {
    str_field(value).map(Box::from)
}

fn header_outcome(fields: &LineFields<'_>, line: &[u8], line_number: u64, offset: u64) -> LineOutcome {
    let version = match fields.version {
        Some(Loose::Number(version)) => Some(version),
        _ => None,
    };
    if let Some(version) = version {
        if version > SUPPORTED_VERSION as f64 {
            return LineOutcome::NewerHeader(version);
        }
    }
    let (Some(id), Some(timestamp), Some(cwd)) =
        (str_field(&fields.id), str_field(&fields.timestamp), str_field(&fields.cwd))
    else {
        return other_object(fields, "session header lacks a string `id`, `timestamp` or `cwd`");
    };
    if version != Some(SUPPORTED_VERSION as f64) {
        return other_object(fields, "session header version is not 3");
    }
    LineOutcome::Header(Header {
        id: id.to_owned(),
        timestamp: timestamp.to_owned(),
        cwd: cwd.to_owned(),
        parent_session: str_field(&fields.parent_session).map(str::to_owned),
        session_id: str_field(&fields.session_id).map(str::to_owned),
        line: line_number,
        offset,
        length: line.len() as u64,
    })
}

/// A JSON object that is not a v3 line; remembers whether it looks like a legacy record.
fn other_object(fields: &LineFields<'_>, detail: &'static str) -> LineOutcome {
    let metadata_version = fields.metadata.as_ref().and_then(|metadata| match metadata.version {
        Some(Loose::Number(version)) => Some(version),
        _ => None,
    });
    let legacy = if metadata_version == Some(2.0) {
        Some(SourceFormat::LegacyV2)
    } else if fields.kind.is_none() && str_field(&fields.role).is_some() {
        Some(SourceFormat::LegacyV1)
    } else {
        None
    };
    let entrypoint = fields.metadata.as_ref().and_then(|metadata| boxed(&metadata.entrypoint)).map(String::from);
    LineOutcome::OtherObject { detail, legacy, entrypoint }
}

fn extra_for(kind: EntryKind, fields: &LineFields<'_>) -> Extra {
    match kind {
        EntryKind::Message => {
            let message = fields.message.as_ref();
            let role = match message.and_then(|message| str_field(&message.role)) {
                Some("user") => Role::User,
                Some("assistant") => Role::Assistant,
                _ => Role::Other,
            };
            let meta = message.and_then(|message| message.meta.as_ref());
            Extra::Message {
                role,
                is_meta: meta.and_then(|meta| meta.is_meta.as_ref()).is_some_and(Loose::truthy),
                message_id: meta.and_then(|meta| boxed(&meta.message_id)),
                model: boxed(&fields.model),
            }
        }
        EntryKind::Compaction => Extra::Compaction {
            first_kept_entry_id: boxed(&fields.first_kept_entry_id).unwrap_or_default(),
            strip_thinking_from_kept: fields.strip_thinking_from_kept.as_ref().is_some_and(Loose::truthy),
        },
        EntryKind::Label => Extra::Label {
            target_id: boxed(&fields.target_id).unwrap_or_default(),
            label: boxed(&fields.label),
        },
        EntryKind::SessionInfo => Extra::SessionInfo { name: boxed(&fields.name) },
        EntryKind::ModelChange => Extra::ModelChange { model: boxed(&fields.model) },
        EntryKind::EffortChange => Extra::EffortChange { effort: boxed(&fields.effort) },
        _ => Extra::None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = r#"{"type":"session","version":3,"id":"s1","timestamp":"t0","cwd":"/p"}"#;

    fn entry(id: &str, parent: Option<&str>) -> String {
        let parent = parent.map_or("null".to_owned(), |parent| format!("\"{parent}\""));
        format!(r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"t","message":{{"role":"user","content":[]}}}}"#)
    }

    #[test]
    fn reads_header_entries_and_torn_tail() {
        let data = format!("{HEADER}\n{}\n{}\n{{\"type\":\"mess", entry("a", None), entry("b", Some("a")));
        let report = scan_bytes(data.as_bytes()).unwrap();
        assert_eq!(report.header.as_ref().unwrap().id, "s1");
        assert_eq!(report.entries.len(), 2);
        assert_eq!(report.entries[1].parent_id.as_deref(), Some("a"));
        assert_eq!(report.skipped.len(), 1);
        assert_eq!(report.skipped[0].reason, SkipReason::TornTail);
        assert_eq!(report.skipped[0].line, 4);
        assert!(!report.ends_with_newline);
    }

    #[test]
    fn entries_before_the_header_are_skipped() {
        let data = format!("{}\n{HEADER}\n{}\n", entry("a", None), entry("b", None));
        let report = scan_bytes(data.as_bytes()).unwrap();
        assert_eq!(report.entries.len(), 1);
        assert_eq!(report.skipped[0].reason, SkipReason::BeforeHeader);
    }

    #[test]
    fn without_a_header_entries_are_kept() {
        let data = format!("{{\"type\":\"sess\n{}\n", entry("a", None));
        let report = scan_bytes(data.as_bytes()).unwrap();
        assert!(report.header.is_none());
        assert_eq!(report.format, Some(SourceFormat::V3));
        assert_eq!(report.entries.len(), 1);
    }

    #[test]
    fn newer_version_is_refused() {
        let data = r#"{"type":"session","version":4,"id":"s","timestamp":"t","cwd":"/"}"#;
        assert!(matches!(scan_bytes(data.as_bytes()), Err(Error::NewerVersion { found: 4, .. })));
    }

    #[test]
    fn line_numbers_offsets_and_reasons_across_chunks() {
        let mut data = format!("{HEADER}\n");
        for index in 0..5000 {
            data.push_str(&entry(&format!("e{index}"), None));
            data.push('\n');
            if index % 1000 == 0 {
                data.push_str("[1]\n");
            }
        }
        let report = scan_bytes(data.as_bytes()).unwrap();
        assert_eq!(report.entries.len(), 5000);
        assert_eq!(report.skipped.len(), 5);
        assert!(report.skipped.iter().all(|skipped| skipped.reason == SkipReason::NotObject));
        let first = &report.entries[0];
        assert_eq!(&data.as_bytes()[first.offset as usize..(first.offset + first.length) as usize], entry("e0", None).as_bytes());
    }

    #[test]
    fn invalid_utf8_is_read_lossily_like_the_real_cli() {
        let mut data = format!("{HEADER}\n").into_bytes();
        data.extend_from_slice(b"{\"type\":\"custom\",\"id\":\"x\",\"parentId\":null,\"timestamp\":\"t\",\"data\":\"\xff\"}\n");
        data.extend_from_slice(b"{\"type\":\"custom\",\"id\":\"\xfe\",\"parentId\":null,\"timestamp\":\"t\"}\n");
        let report = scan_bytes(&data).unwrap();
        assert_eq!(report.entries.len(), 2);
        assert_eq!(&*report.entries[1].id, "\u{fffd}");
    }

    #[test]
    fn bom_and_crlf_are_tolerated() {
        let data = format!("\u{feff}{HEADER}\r\n{}\r\n", entry("a", None));
        let report = scan_bytes(data.as_bytes()).unwrap();
        assert!(report.has_bom);
        assert!(report.header.is_some());
        assert_eq!(report.entries.len(), 1);
        assert!(report.skipped.is_empty());
    }

    #[test]
    fn legacy_formats_are_detected() {
        let v2 = r#"{"id":"x","role":"user","content":"hi","metadata":{"version":2,"entrypoint":"print"}}"#;
        let report = scan_bytes(v2.as_bytes()).unwrap();
        assert_eq!(report.format, Some(SourceFormat::LegacyV2));
        assert_eq!(report.legacy_entrypoint.as_deref(), Some("print"));
        let v1 = r#"{"role":"user","content":"hi"}"#;
        assert_eq!(scan_bytes(v1.as_bytes()).unwrap().format, Some(SourceFormat::LegacyV1));
    }
}
