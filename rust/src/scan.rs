//! Torn-line-tolerant scanning of a transcript file into a [`ScanReport`].
//!
//! The file is cut into pieces of [`PIECE_BYTES`] that parallel tasks read (`pread`, into a
//! reused per-thread buffer that stays in cache, the bytes placed at their file offset's place
//! within a cache line: `COPY_ALIGN`), split into lines with memchr and validate as
//! JSON; a line belongs to the piece it starts in, and the task reads past its piece's end to
//! finish its last line. Pieces are handled a window at a time, and each window's results are
//! applied in file order, while the next window is parsed, by the order-dependent rules (which
//! line is the header, which lines come before it, the torn tail), exactly as the real CLI reads
//! a v3 file (format §4.5). Memory stays flat in the file size: a window's worth of results
//! plus one buffer per thread (a single huge line needs about its own size once).
//! Nothing here writes: a damaged file is reported, never repaired.
//!
//! Scanning can also resume at a line start after an earlier scan (`resume_scan`), which the
//! index sidecar ([`crate::index`]) uses to read only the bytes appended since.
//!
//! Owns: reading a transcript, line splitting, the per-line outcome and the file-order rules
//! (§4.5). `tests::pieces_match_a_sequential_scan` pins the parallel reading to a plain
//! sequential pass for pieces of every size.

use crate::envelope::{parse_fields, EntryKind, Extra, LineFields, Loose, Role};
use crate::error::{Error, Result};
use crate::json::JsonError;
use std::cell::RefCell;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// The format version this build reads and writes.
pub const SUPPORTED_VERSION: u64 = 3;

/// Bytes one parallel task reads and parses at a time (small enough to stay in the L2 cache).
pub const PIECE_BYTES: u64 = 256 << 10;

/// Pieces parsed together before their results are applied in file order.
const WINDOW_PIECES: u64 = 64;

/// A per-thread read buffer larger than this is given back after its piece (after a huge line).
const KEEP_BUFFER_BYTES: usize = 4 << 20;

/// The UTF-8 byte-order mark, skipped (not an error) at the start of a file.
pub(crate) const BOM: &[u8] = b"\xEF\xBB\xBF";

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

/// Which format the first parseable object announced (format §4.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceFormat {
    V3,
    LegacyV2,
    LegacyV1,
}

/// Everything a scan learned about a transcript.
#[derive(Clone, Debug, Default, PartialEq)]
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
    /// Byte offset where the last physical line starts (`None` for a file without lines); the
    /// index resumes there when that line was torn.
    pub last_line_offset: Option<u64>,
}

/// What one line turned out to be, before order-dependent rules apply.
enum LineOutcome {
    Header(Header),
    NewerHeader(f64),
    Entry(Entry),
    /// A JSON object that is neither a valid header nor a valid entry.
    OtherObject {
        detail: &'static str,
        legacy: Option<SourceFormat>,
        entrypoint: Option<String>,
    },
    Skip(SkipReason, String),
}

impl LineOutcome {
    fn is_object(&self) -> bool {
        !matches!(self, LineOutcome::Skip(..))
    }
}

/// The kernel copies a read out of the page cache up to four times slower when the destination
/// sits at another offset within its 64-byte cache line than the file offset does (measured on
/// this machine's AMD EPYC: 1 GB in 256 KiB preads, 0.10 s of system time aligned, 0.41-0.43 s
/// with the destination 1 or 16 bytes off; a piece's read starts one byte before a 256 KiB
/// boundary, so every piece was a slow copy).
pub(crate) const COPY_ALIGN: usize = 64;

/// A read buffer that keeps its bytes initialized across reuse (so refilling it costs no
/// zeroing): `bytes[shift..shift + valid]` holds data, the rest is old data or zeros. `shift`
/// puts the data's first byte at the same offset within a cache line as its file offset
/// ([`COPY_ALIGN`]).
#[derive(Default)]
pub(crate) struct ReadBuffer {
    bytes: Vec<u8>,
    shift: usize,
    valid: usize,
}

impl ReadBuffer {
    pub(crate) fn clear(&mut self) {
        self.valid = 0;
    }

    /// Makes room for `wanted` bytes read from file offset `start`, with the data placed so the
    /// destination address and `start` agree modulo [`COPY_ALIGN`] (the valid bytes move along
    /// when growing the buffer moved it).
    fn prepare(&mut self, start: u64, wanted: usize) {
        let needed = wanted + COPY_ALIGN;
        if self.bytes.len() < needed {
            self.bytes.resize(needed, 0);
        }
        let shift = (start as usize).wrapping_sub(self.bytes.as_ptr() as usize) % COPY_ALIGN;
        if shift != self.shift {
            self.bytes.copy_within(self.shift..self.shift + self.valid, shift);
            self.shift = shift;
        }
    }
}

/// A readable byte source of known size: a file (read with `pread`) or memory.
pub(crate) trait Source: Sync {
    /// The size to scan up to (a file growing meanwhile is read up to here only).
    fn size(&self) -> u64;
    /// Makes `buffer` hold the bytes `[start, end)` (`end` clamped to the size), given that it
    /// already holds `[start, start + valid)`, and returns them. A source that shrank returns
    /// fewer bytes.
    fn load<'s>(&'s self, start: u64, end: u64, buffer: &'s mut ReadBuffer) -> io::Result<&'s [u8]>;
}

/// A file read with positioned reads (shared by all tasks; no seeking).
pub(crate) struct FileSource {
    pub file: File,
    pub size: u64,
}

impl Source for FileSource {
    fn size(&self) -> u64 {
        self.size
    }

    fn load<'s>(&'s self, start: u64, end: u64, buffer: &'s mut ReadBuffer) -> io::Result<&'s [u8]> {
        let end = end.min(self.size);
        let wanted = end.saturating_sub(start) as usize;
        buffer.prepare(start, wanted);
        let shift = buffer.shift;
        while buffer.valid < wanted {
            let into = &mut buffer.bytes[shift + buffer.valid..shift + wanted];
            match self.file.read_at(into, start + buffer.valid as u64) {
                Ok(0) => break,
                Ok(read) => buffer.valid += read,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
            }
        }
        Ok(&buffer.bytes[shift..shift + wanted.min(buffer.valid)])
    }
}

/// Bytes in memory.
pub(crate) struct MemorySource<'a>(pub &'a [u8]);

impl Source for MemorySource<'_> {
    fn size(&self) -> u64 {
        self.0.len() as u64
    }

    fn load<'s>(&'s self, start: u64, end: u64, _buffer: &'s mut ReadBuffer) -> io::Result<&'s [u8]> {
        let size = self.0.len() as u64;
        let (start, end) = (start.min(size) as usize, end.min(size) as usize);
        Ok(&self.0[start..end.max(start)])
    }
}

/// Scans the transcript at `path`.
///
/// Fails only on I/O errors and on a header that declares a newer format version
/// ([`Error::NewerVersion`]); every malformed line is reported in [`ScanReport::skipped`].
pub fn scan_file(path: &Path) -> Result<ScanReport> {
    let file =
        crate::fsopen::open_regular_read(path, crate::fsopen::Follow::Yes).map_err(|source| Error::io(path, source))?;
    let size = file.metadata().map_err(|source| Error::io(path, source))?.len();
    scan_source(&FileSource { file, size }, path)
}

/// Scans an in-memory transcript (tests, fuzzing).
pub fn scan_bytes(data: &[u8]) -> Result<ScanReport> {
    scan_source(&MemorySource(data), Path::new("<memory>"))
}

/// Scans a whole source from its first byte.
pub(crate) fn scan_source(source: &impl Source, path: &Path) -> Result<ScanReport> {
    scan_source_in_pieces(source, path, PIECE_BYTES)
}

fn scan_source_in_pieces(source: &impl Source, path: &Path, piece_bytes: u64) -> Result<ScanReport> {
    let mut builder = ReportBuilder::default();
    let mut head = ReadBuffer::default();
    let head = source.load(0, BOM.len() as u64, &mut head).map_err(|error| Error::io(path, error))?;
    let start = if head == BOM {
        builder.report.has_bom = true;
        BOM.len() as u64
    } else {
        0
    };
    run(source, start, builder, path, piece_bytes)
}

/// Continues an earlier scan (`report`, which must have a header) at `start`, the first byte of a
/// line: the lines from there on are scanned and merged as if the whole source had been scanned.
/// `report` must describe exactly the bytes before `start` (the caller drops a torn last line).
pub(crate) fn resume_scan(source: &impl Source, start: u64, report: ScanReport, path: &Path) -> Result<ScanReport> {
    debug_assert!(report.header.is_some(), "resuming needs a header");
    let builder = ReportBuilder {
        seen_object: report.format.is_some(),
        last_line_terminated: true,
        report,
        pending_before_header: Vec::new(),
    };
    run(source, start, builder, path, PIECE_BYTES)
}

fn run(
    source: &impl Source,
    start: u64,
    mut builder: ReportBuilder,
    path: &Path,
    piece_bytes: u64,
) -> Result<ScanReport> {
    let size = source.size();
    builder.report.file_size = size;
    let piece_count = size.saturating_sub(start).div_ceil(piece_bytes);
    let piece = |index: u64| -> io::Result<Piece> {
        let piece_start = start + index * piece_bytes;
        read_piece(source, start, piece_start, (piece_start + piece_bytes).min(size), size)
    };
    let mut pending: Option<Vec<Piece>> = None;
    let mut window_start = 0;
    while window_start < piece_count || pending.is_some() {
        let window_end = (window_start + WINDOW_PIECES).min(piece_count);
        let (applied, parsed) = rayon::join(
            || match pending.take() {
                Some(pieces) => builder.apply_pieces(pieces, path),
                None => Ok(()),
            },
            || -> io::Result<Vec<Piece>> {
                use rayon::prelude::*;
                (window_start..window_end).into_par_iter().map(piece).collect()
            },
        );
        applied?;
        let parsed = parsed.map_err(|error| Error::io(path, error))?;
        if window_start < window_end {
            pending = Some(parsed);
        }
        window_start = window_end;
    }
    Ok(builder.finish())
}

/// The lines that start in one piece.
#[derive(Default)]
struct Piece {
    /// Physical lines that start in this piece, blank ones included.
    lines: u32,
    /// Non-blank lines: index among this piece's lines, offset, length, outcome.
    outcomes: Vec<(u32, u64, u64, LineOutcome)>,
    /// The piece's last line runs to the end of the source without a `\n`.
    unterminated_tail: bool,
    /// Where the piece's last line starts.
    last_line_start: Option<u64>,
}

thread_local! {
    static READ_BUFFER: RefCell<ReadBuffer> = RefCell::new(ReadBuffer::default());
}

/// Reads and classifies the lines starting in `[piece_start, piece_end)`. `data_start` is where
/// the scanned region starts (a line start).
fn read_piece(source: &impl Source, data_start: u64, piece_start: u64, piece_end: u64, size: u64) -> io::Result<Piece> {
    READ_BUFFER.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buffer) => {
            buffer.clear();
            let piece = read_piece_into(source, data_start, piece_start, piece_end, size, &mut buffer);
            if buffer.bytes.len() > KEEP_BUFFER_BYTES {
                *buffer = ReadBuffer::default();
            }
            piece
        }
        Err(_) => read_piece_into(source, data_start, piece_start, piece_end, size, &mut ReadBuffer::default()),
    })
}

fn read_piece_into(
    source: &impl Source,
    data_start: u64,
    piece_start: u64,
    piece_end: u64,
    size: u64,
    buffer: &mut ReadBuffer,
) -> io::Result<Piece> {
    // Read from one byte early: a line starts here only if the byte before is a newline.
    let low = if piece_start == data_start { piece_start } else { piece_start - 1 };
    let local_end = (piece_end - low) as usize;
    let mut high = piece_end;
    let mut extension = 64u64 << 10;
    let mut searched = local_end;
    let mut first_line;
    loop {
        let bytes = source.load(low, high, buffer)?;
        first_line = if piece_start == data_start {
            0
        } else {
            match memchr::memchr(b'\n', &bytes[..local_end.min(bytes.len())]) {
                Some(newline) => newline + 1,
                None => return Ok(Piece::default()),
            }
        };
        if first_line >= local_end || bytes.len() < local_end {
            // No line starts in this piece, or the source shrank: take what is there.
            break;
        }
        // Complete when the piece ends at a newline or its last line ends further on.
        if bytes[local_end - 1] == b'\n' || memchr::memchr(b'\n', &bytes[searched..]).is_some() || high >= size {
            break;
        }
        searched = bytes.len();
        high = (high + extension).min(size);
        extension = extension.saturating_mul(2);
    }
    let bytes = source.load(low, high, buffer)?;
    if first_line >= local_end.min(bytes.len()) {
        return Ok(Piece::default());
    }
    let mut piece = Piece::default();
    let mut line_start = first_line;
    let limit = local_end.min(bytes.len());
    while line_start < limit {
        let (line_end, next) = match memchr::memchr(b'\n', &bytes[line_start..]) {
            Some(newline) => (line_start + newline, line_start + newline + 1),
            None => {
                piece.unterminated_tail = true;
                (bytes.len(), bytes.len())
            }
        };
        let line = &bytes[line_start..line_end];
        let offset = low + line_start as u64;
        if !is_blank(line) {
            let outcome = classify(line, offset);
            piece.outcomes.push((piece.lines, offset, line.len() as u64, outcome));
        }
        piece.last_line_start = Some(offset);
        piece.lines += 1;
        line_start = next;
    }
    Ok(piece)
}

/// Whether a line holds only whitespace (such lines are dropped, as the real CLI does).
#[inline]
fn is_blank(line: &[u8]) -> bool {
    line.iter().all(|byte| byte.is_ascii_whitespace())
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
    fn apply_pieces(&mut self, pieces: Vec<Piece>, path: &Path) -> Result<()> {
        for piece in pieces {
            let first_line = self.report.line_count + 1;
            let last_index = piece.lines.saturating_sub(1);
            for (index, offset, length, outcome) in piece.outcomes {
                let torn = piece.unterminated_tail && index == last_index;
                self.apply(outcome, first_line + u64::from(index), offset, length, torn, path)?;
            }
            if piece.lines > 0 {
                self.last_line_terminated = !piece.unterminated_tail;
                self.report.last_line_offset = piece.last_line_start;
            }
            self.report.line_count += u64::from(piece.lines);
        }
        Ok(())
    }

    fn apply(
        &mut self,
        outcome: LineOutcome,
        line: u64,
        offset: u64,
        length: u64,
        torn: bool,
        path: &Path,
    ) -> Result<()> {
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
            LineOutcome::Header(mut header) if self.report.header.is_none() => {
                for entry in self.pending_before_header.drain(..) {
                    self.report.skipped.push(SkippedLine {
                        line: entry.line,
                        offset: entry.offset,
                        length: entry.length,
                        reason: SkipReason::BeforeHeader,
                        detail: "entry precedes the session header".into(),
                    });
                }
                header.line = line;
                self.report.header = Some(header);
            }
            LineOutcome::Header(_) => {
                self.report.skipped.push(skip(SkipReason::FailsValidation, "a second session header".into()))
            }
            LineOutcome::NewerHeader(found) if self.report.header.is_none() => {
                return Err(Error::NewerVersion {
                    path: path.to_path_buf(),
                    found: found as u64,
                    supported: SUPPORTED_VERSION,
                });
            }
            LineOutcome::NewerHeader(found) => self.report.skipped.push(skip(
                SkipReason::FailsValidation,
                format!("a session header of version {found} after the header"),
            )),
            LineOutcome::Entry(mut entry) => {
                entry.line = line;
                if self.report.header.is_none() {
                    self.pending_before_header.push(entry);
                } else {
                    self.report.entries.push(entry);
                }
            }
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
        self.report.ends_with_newline = self.last_line_terminated || self.report.line_count == 0;
        self.report
    }
}

/// What one line is on its own: `Ok(Some(entry))` for a valid entry line, `Ok(None)` for any
/// other line, `Err(())` for a header (valid or not: the caller must read the file in order).
pub(crate) fn classify_alone(line: &[u8]) -> std::result::Result<Option<Entry>, ()> {
    match classify(line, 0) {
        LineOutcome::Entry(entry) => Ok(Some(entry)),
        LineOutcome::Header(_) | LineOutcome::NewerHeader(_) => Err(()),
        _ => Ok(None),
    }
}

/// What the first lines of a file say about it (format §4.6): `None` for a line that is not a
/// JSON object (the next one decides), `Some(Some(header))` for a valid v3 header, `Some(None)`
/// for any other object (an entry, a legacy record, an older or newer header).
pub(crate) fn classify_first(line: &[u8]) -> Option<Option<Header>> {
    match classify(line, 0) {
        LineOutcome::Skip(..) => None,
        LineOutcome::Header(header) => Some(Some(header)),
        _ => Some(None),
    }
}

/// Decides what one line is. Runs in parallel; must not depend on other lines.
/// Line numbers are filled in when the outcome is applied.
fn classify(line: &[u8], offset: u64) -> LineOutcome {
    // Invalid UTF-8 is not an error: like the real CLI, which decodes files with replacement
    // characters before parsing, the cursor decodes the fields it reads lossily.
    match parse_fields(line) {
        Ok(parsed) => from_parsed(parsed, line, offset),
        Err(error) => LineOutcome::Skip(SkipReason::InvalidJson, json_error_detail(&error)),
    }
}

#[cold]
fn json_error_detail(error: &JsonError) -> String {
    error.to_string()
}

fn from_parsed(parsed: Option<LineFields<'_>>, line: &[u8], offset: u64) -> LineOutcome {
    let Some(fields) = parsed else {
        return LineOutcome::Skip(SkipReason::NotObject, "valid JSON but not an object".into());
    };
    let kind_text = fields.kind.as_ref().and_then(Loose::as_str);
    if kind_text == Some("session") {
        return header_outcome(&fields, line, offset);
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
        line: 0,
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

fn header_outcome(fields: &LineFields<'_>, line: &[u8], offset: u64) -> LineOutcome {
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
        line: 0,
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
                tool_only: message.is_some_and(|message| message.content.tool_only()),
                message_id: meta.and_then(|meta| boxed(&meta.message_id)),
                model: boxed(&fields.model),
            }
        }
        EntryKind::Compaction => Extra::Compaction {
            first_kept_entry_id: boxed(&fields.first_kept_entry_id).unwrap_or_default(),
            strip_thinking_from_kept: fields.strip_thinking_from_kept.as_ref().is_some_and(Loose::truthy),
        },
        EntryKind::Label => {
            Extra::Label { target_id: boxed(&fields.target_id).unwrap_or_default(), label: boxed(&fields.label) }
        }
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
        format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"t","message":{{"role":"user","content":[]}}}}"#
        )
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
        assert_eq!(
            &data.as_bytes()[first.offset as usize..(first.offset + first.length) as usize],
            entry("e0", None).as_bytes()
        );
    }

    #[test]
    fn invalid_utf8_is_read_lossily_like_the_real_cli() {
        let mut data = format!("{HEADER}\n").into_bytes();
        data.extend_from_slice(
            b"{\"type\":\"custom\",\"id\":\"x\",\"parentId\":null,\"timestamp\":\"t\",\"data\":\"\xff\"}\n",
        );
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

    /// The scan as one sequential pass over the lines (the definition the pieces must match).
    fn sequential(data: &[u8]) -> Result<ScanReport> {
        let mut builder = ReportBuilder::default();
        let base = if data.starts_with(BOM) { BOM.len() } else { 0 };
        builder.report.has_bom = base > 0;
        let body = &data[base..];
        let mut spans = Vec::new();
        let mut start = 0;
        for (index, &byte) in body.iter().enumerate() {
            if byte == b'\n' {
                spans.push((start, index));
                start = index + 1;
            }
        }
        let tail = start < body.len();
        if tail {
            spans.push((start, body.len()));
        }
        builder.last_line_terminated = !tail;
        for (index, &(from, to)) in spans.iter().enumerate() {
            let line = &body[from..to];
            let offset = (base + from) as u64;
            if !is_blank(line) {
                let torn = tail && index + 1 == spans.len();
                builder.apply(
                    classify(line, offset),
                    index as u64 + 1,
                    offset,
                    line.len() as u64,
                    torn,
                    Path::new("x"),
                )?;
            }
            builder.report.last_line_offset = Some(offset);
        }
        builder.report.line_count = spans.len() as u64;
        builder.report.file_size = data.len() as u64;
        Ok(builder.finish())
    }

    /// A small deterministic generator (xorshift) of transcripts with every kind of line.
    struct Lines(u64);

    impl Lines {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, bound: u64) -> u64 {
            self.next() % bound
        }

        fn line(&mut self, index: usize) -> String {
            let id = format!("e{index}");
            let parent = if index == 0 { "null".to_owned() } else { format!("\"e{}\"", self.below(index as u64)) };
            match self.below(16) {
                0 => HEADER.to_owned(),
                1 => String::new(),
                2 => " \t ".to_owned(),
                3 => "{\"type\":\"mess".to_owned(),
                4 => "[1,2]".to_owned(),
                5 => format!("{{\"type\":\"label\",\"id\":\"{id}\",\"parentId\":{parent},\"timestamp\":\"t\",\"targetId\":\"e0\",\"label\":\"x\"}}"),
                6 => format!("{{\"type\":\"custom\",\"id\":\"{id}\",\"parentId\":{parent},\"timestamp\":\"t\",\"data\":\"{}\"}}", "y\\n\\\"".repeat(self.below(400) as usize)),
                7 => format!("{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":{parent},\"timestamp\":\"t\",\"message\":{{\"role\":\"user\",\"content\":[]}}}}\r"),
                8 => "{\"type\":\"session\",\"version\":4,\"id\":\"s\",\"timestamp\":\"t\",\"cwd\":\"/\"}".to_owned(),
                9 => format!("{{\"type\":\"nope\",\"id\":\"{id}\"}}"),
                _ => format!(
                    "{{\"type\":\"message\",\"id\":\"{id}\",\"parentId\":{parent},\"timestamp\":\"t{index}\",\"message\":{{\"role\":\"assistant\",\"content\":[{{\"type\":\"text\",\"text\":\"{}\"}}]}}}}",
                    "word ".repeat(self.below(60) as usize)
                ),
            }
        }

        fn transcript(&mut self) -> Vec<u8> {
            let mut data = Vec::new();
            if self.below(4) == 0 {
                data.extend_from_slice(BOM);
            }
            if self.below(3) != 0 {
                data.extend_from_slice(HEADER.as_bytes());
                data.push(b'\n');
            }
            let count = self.below(40) as usize;
            for index in 0..count {
                data.extend_from_slice(self.line(index).as_bytes());
                if index + 1 < count || self.below(2) == 0 {
                    data.push(b'\n');
                }
            }
            data
        }
    }

    #[test]
    fn pieces_match_a_sequential_scan() {
        let mut lines = Lines(0x9e37_79b9_7f4a_7c15);
        for round in 0..300 {
            let data = lines.transcript();
            let expected = sequential(&data);
            for piece_bytes in [1, 2, 3, 7, 64, 1000, PIECE_BYTES] {
                let actual = scan_source_in_pieces(&MemorySource(&data), Path::new("x"), piece_bytes);
                match (&expected, &actual) {
                    (Ok(expected), Ok(actual)) => {
                        assert_eq!(expected, actual, "round {round}, pieces of {piece_bytes}")
                    }
                    (Err(Error::NewerVersion { .. }), Err(Error::NewerVersion { .. })) => {}
                    _ => panic!("round {round}, pieces of {piece_bytes}: {expected:?} vs {actual:?}"),
                }
            }
        }
    }

    /// Compares the piece-parallel scan, for pieces of several sizes (down to one byte, so every
    /// line straddles pieces and both cores), with the sequential definition.
    fn assert_pieces_match(data: &[u8], what: &str) {
        let expected = sequential(data);
        // One-byte pieces cost a task per byte: only for small inputs.
        let smallest = if data.len() <= 8192 { 1 } else { 17 };
        for piece_bytes in [1, 2, 5, 17, 256, 4096, PIECE_BYTES].into_iter().filter(|&bytes| bytes >= smallest) {
            let actual = scan_source_in_pieces(&MemorySource(data), Path::new("x"), piece_bytes);
            match (&expected, &actual) {
                (Ok(expected), Ok(actual)) => assert_eq!(expected, actual, "{what}, pieces of {piece_bytes}"),
                (Err(Error::NewerVersion { .. }), Err(Error::NewerVersion { .. })) => {}
                _ => panic!("{what}, pieces of {piece_bytes}: {expected:?} vs {actual:?}"),
            }
        }
    }

    /// Every hostile fixture and every saved fuzz input (`tests/fixtures/`), as is and mutated
    /// (bytes flipped, newlines added and removed, cut at 30 places), scans the same in
    /// pieces as sequentially.
    #[test]
    fn hostile_and_fuzzed_files_scan_the_same_in_pieces() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
        let mut files = Vec::new();
        for folder in ["hostile", "fuzz_regressions"] {
            for item in std::fs::read_dir(fixtures.join(folder)).unwrap() {
                let path = item.unwrap().path();
                if path.extension().is_some_and(|extension| extension == "jsonl") {
                    files.push(path);
                }
            }
        }
        files.sort();
        assert!(files.len() >= 10, "fixtures not found under {}", fixtures.display());
        let mut lines = Lines(0x5ca1_ab1e);
        for path in &files {
            let data = std::fs::read(path).unwrap();
            let name = path.display();
            assert_pieces_match(&data, &format!("{name}"));
            for cut in (0..data.len()).step_by((data.len() / 30).max(7)) {
                assert_pieces_match(&data[..cut], &format!("{name} cut at {cut}"));
            }
            for round in 0..20 {
                let mut mutated = data.clone();
                for _ in 0..=lines.below(4) {
                    if mutated.is_empty() {
                        break;
                    }
                    let at = lines.below(mutated.len() as u64) as usize;
                    match lines.below(4) {
                        0 => mutated[at] ^= 1 << lines.below(8),
                        1 => mutated.insert(at, b'\n'),
                        2 => mutated[at] = b'\n',
                        _ => {
                            mutated.remove(at);
                        }
                    }
                }
                assert_pieces_match(&mutated, &format!("{name} mutation {round}"));
            }
        }
    }

    #[test]
    fn files_are_read_in_pieces_like_memory() {
        let mut lines = Lines(7);
        let directory = tempfile::tempdir().unwrap();
        for round in 0..20 {
            let mut data = lines.transcript();
            data.extend(std::iter::repeat_n(b'\n', round * 1000));
            let path = directory.path().join(format!("{round}.jsonl"));
            std::fs::write(&path, &data).unwrap();
            let file = File::open(&path).unwrap();
            let source = FileSource { size: data.len() as u64, file };
            for piece_bytes in [5, 333, PIECE_BYTES] {
                let from_file = scan_source_in_pieces(&source, &path, piece_bytes).ok();
                let from_memory = scan_source_in_pieces(&MemorySource(&data), &path, piece_bytes).ok();
                assert_eq!(from_file, from_memory);
            }
        }
    }

    /// A file read lands in the buffer at the file offset's place within a cache line (the
    /// kernel's copy is several times slower otherwise, see [`COPY_ALIGN`]), and reads that
    /// extend a buffer which had to grow keep the bytes already read.
    #[test]
    fn file_reads_land_at_the_file_offsets_cache_line_offset() {
        let data: Vec<u8> = (0..300_000u32).map(|index| (index % 251) as u8).collect();
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("bytes");
        std::fs::write(&path, &data).unwrap();
        let source = FileSource { file: File::open(&path).unwrap(), size: data.len() as u64 };
        let mut buffer = ReadBuffer::default();
        for start in [0u64, 1, 63, 64, 4095, 262_143, 299_999] {
            buffer.clear();
            let mut end = start + 1;
            while end <= data.len() as u64 + 10 {
                let bytes = source.load(start, end, &mut buffer).unwrap();
                let expected = &data[start as usize..(end as usize).min(data.len())];
                assert_eq!(bytes, expected, "start {start}, end {end}");
                assert_eq!(bytes.as_ptr() as usize % COPY_ALIGN, start as usize % COPY_ALIGN, "start {start}");
                end = end * 3 + 17;
            }
        }
    }

    #[test]
    fn one_huge_line_is_read_whole() {
        let text = "x".repeat(3 * PIECE_BYTES as usize + 12345);
        let data = format!("{HEADER}\n{{\"type\":\"custom\",\"id\":\"a\",\"parentId\":null,\"timestamp\":\"t\",\"data\":\"{text}\"}}\n{}\n", entry("b", Some("a")));
        let report = scan_bytes(data.as_bytes()).unwrap();
        assert_eq!(report.entries.len(), 2);
        assert_eq!(report.entries[1].line, 3);
        assert!(report.skipped.is_empty());
    }

    #[test]
    fn resuming_equals_scanning_everything() {
        let mut lines = Lines(99);
        for _ in 0..200 {
            let data = lines.transcript();
            let Ok(whole) = scan_bytes(&data) else { continue };
            if whole.header.is_none() {
                continue;
            }
            // Resume at every line start after the header.
            let header_end =
                whole.header.as_ref().map(|header| header.offset + header.length + 1).unwrap_or(0) as usize;
            for cut in header_end..=data.len() {
                if cut < data.len() && cut > 0 && data[cut - 1] != b'\n' {
                    continue;
                }
                let Ok(prefix) = scan_bytes(&data[..cut]) else { continue };
                if !prefix.ends_with_newline {
                    continue;
                }
                let resumed = resume_scan(&MemorySource(&data), cut as u64, prefix, Path::new("x")).unwrap();
                assert_eq!(resumed, whole);
            }
        }
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
