//! The index sidecar: a compact binary cache of one transcript's scan, so that reopening an
//! unchanged session costs O(1) and an appended one only the appended bytes.
//!
//! Owns: when a sidecar is trusted, extended or rebuilt, how it is written, and [`Session`], the
//! opened transcript the Python binding serves from (whether it came from a scan, from the
//! sidecar, or from both). The byte layout is in `format`, the cached facts in `summary`.
//!
//! # What is cached
//! A [`Summary`] (everything a resume or a listing asks for: the header, skipped lines, format
//! flags, counts, name, model, leaf, labels and the context plan with the byte spans of its
//! lines), every entry envelope, and the hashes of all entry ids. Opening reads and checks the
//! summary only; the envelopes are decoded when something asks for the whole tree.
//!
//! # When the cache is trusted
//! The sidecar records the transcript's device and inode, its size when scanned (the byte
//! offset scanned up to), its mtime, and a blake3 of the first and of the last 64 KiB of the
//! scanned region. On open, with the transcript's current state:
//! - same inode, same size, same mtime, both hashes equal: the summary is used as is;
//! - same inode, larger, both hashes of the old region equal: only the bytes after the old end
//!   are scanned (from the start of the old last line when it had no `\n`) and merged. When the
//!   summary alone is enough to merge them exactly ([`Summary::extend`]: the new entries
//!   continue from the old leaf and repeat no old id, as a normal append does), a small delta
//!   segment is appended to the sidecar (O(appended bytes)); otherwise the old entries are
//!   decoded, the tree rebuilt and the sidecar rewritten;
//! - anything else (or a sidecar that does not decode, has another version, a bad checksum, a
//!   broken chain of segments): a full scan, and the sidecar is rewritten.
//!
//! A sidecar is never trusted without these checks, and a broken one is rebuilt, never an
//! error. Whole sidecars are written to a temporary file (mode 0600), fsynced and renamed into
//! place; a delta is appended and fsynced, and a torn or foreign delta breaks the chain, which
//! makes the next open rebuild. A scan during which the transcript changed (other than by
//! appending) writes no sidecar.

mod fork_source;
mod format;
mod listing;
mod quick_tree;
mod release;
mod summary;
mod tail;

pub use fork_source::{fork_source, ForkSource};
pub use format::{decode_sidecar, id_hash, FORMAT_VERSION};
pub use listing::{
    fingerprint, fingerprints, listing_row, listing_rows, name_of, names_of, ListingRow, Text, FINGERPRINT_BYTES,
};
pub use summary::{PlanItem, Summary, FIRST_USER_IDS};
use tail::{read_tail, Limits};
pub use tail::{Tail, TailItem};

use crate::error::{Error, Result};
use crate::fsopen::{self, Follow};
use crate::scan::{self, Entry, FileSource, ScanReport};
use crate::tree::SessionTree;
use format::{Segment, SegmentKind};
use std::fs::{File, Metadata};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Bytes hashed at each end of the scanned region.
pub const EDGE_BYTES: u64 = 64 << 10;

/// Delta segments allowed before the next change rewrites the sidecar whole (so do deltas
/// totalling more than half the base segment, or 4 MiB when that is more).
const MAX_DELTAS: usize = 32;

/// The transcript state a sidecar was built from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    pub device: u64,
    pub inode: u64,
    /// Bytes scanned: the file's size when it was scanned.
    pub scanned_to: u64,
    pub mtime_seconds: i64,
    pub mtime_nanos: i64,
    /// blake3 of bytes `[0, min(64 KiB, scanned_to))`.
    pub head_hash: [u8; 32],
    /// blake3 of bytes `[max(0, scanned_to - 64 KiB), scanned_to)`.
    pub tail_hash: [u8; 32],
}

/// The whole scan: every envelope, and the tree over them (built on first use).
#[derive(Debug)]
pub struct Full {
    pub report: ScanReport,
    tree: OnceLock<SessionTree>,
}

impl Full {
    fn new(report: ScanReport) -> Self {
        Full { report, tree: OnceLock::new() }
    }

    /// The session tree over the entries.
    pub fn tree(&self) -> &SessionTree {
        self.tree.get_or_init(|| SessionTree::build(&self.report.entries))
    }
}

/// How a [`Session`] was obtained (for tests and diagnostics).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenKind {
    /// A full scan; no sidecar involved.
    Scanned,
    /// A full scan after which the sidecar was (re)written, or could not be.
    Rebuilt,
    /// The sidecar matched: nothing of the transcript was parsed.
    Loaded,
    /// The sidecar matched a prefix: only the appended bytes were scanned, and a delta was
    /// appended to the sidecar.
    Appended,
    /// The sidecar matched a prefix: only the appended bytes were scanned, but merging them
    /// needed the old entries, and the sidecar was rewritten.
    AppendedRewritten,
}

/// A loaded sidecar's segments, to decode the entries from on demand.
#[derive(Debug)]
struct LazyEntries {
    sidecar: PathBuf,
    segments: Vec<Segment>,
    scanned_to: u64,
}

/// An opened transcript: the summary always, the full entry list and tree on demand.
#[derive(Debug)]
pub struct Session {
    pub transcript: PathBuf,
    pub summary: Summary,
    pub kind: OpenKind,
    full: OnceLock<Full>,
    lazy: Option<LazyEntries>,
    /// The sorted id hashes of each sidecar segment (`None`: unreadable), loaded on demand.
    id_hashes: OnceLock<Option<Vec<Vec<u64>>>>,
}

/// A large entry list is freed on a thread of its own ([`release::release`]).
impl Drop for Session {
    fn drop(&mut self) {
        if let Some(full) = self.full.take() {
            let _ = release::release(full);
        }
    }
}

impl Session {
    fn from_report(transcript: &Path, report: ScanReport, kind: OpenKind) -> Self {
        let summary = summarize(&report);
        let full = OnceLock::from(Full::new(report));
        Session { transcript: transcript.to_path_buf(), summary, kind, full, lazy: None, id_hashes: OnceLock::new() }
    }

    fn lazy(transcript: &Path, summary: Summary, kind: OpenKind, lazy: LazyEntries) -> Self {
        Session {
            transcript: transcript.to_path_buf(),
            summary,
            kind,
            full: OnceLock::new(),
            lazy: Some(lazy),
            id_hashes: OnceLock::new(),
        }
    }

    fn with_full(transcript: &Path, summary: Summary, kind: OpenKind, full: OnceLock<Full>) -> Self {
        Session { transcript: transcript.to_path_buf(), summary, kind, full, lazy: None, id_hashes: OnceLock::new() }
    }

    /// Whether some entry may have this id: exact once the entries are at hand, else from the
    /// sidecar's id hashes (never a false "no"), without decoding any entry.
    pub fn may_contain(&self, id: &str) -> bool {
        if let Some(full) = self.full.get() {
            return full.tree().index_of(&full.report.entries, id).is_some();
        }
        let Some(lazy) = &self.lazy else { return true };
        let hashes = self.id_hashes.get_or_init(|| {
            let file = open_sidecar(&lazy.sidecar).ok()?;
            lazy.segments.iter().map(|segment| format::read_hashes(&file, segment)).collect()
        });
        match hashes {
            Some(hashes) => {
                let hash = id_hash(id);
                hashes.iter().any(|hashes| hashes.binary_search(&hash).is_ok())
            }
            None => true,
        }
    }

    /// The entry list and tree: at hand after a scan, decoded from the sidecar after a load
    /// (or, should the sidecar have changed or broken since, rescanned up to the same byte).
    pub fn full(&self) -> Result<&Full> {
        if let Some(full) = self.full.get() {
            return Ok(full);
        }
        let report = match &self.lazy {
            Some(lazy) => match decode_lazy(lazy) {
                Some(entries) if entries.len() as u64 == self.summary.entry_count => {
                    ScanReport { entries, ..summary::without_entries(&self.summary.report) }
                }
                _ => rescan_prefix(&self.transcript, lazy.scanned_to)?,
            },
            None => scan::scan_file(&self.transcript)?,
        };
        Ok(self.full.get_or_init(|| Full::new(report)))
    }
}

/// The summary of a whole scan (what a cold open computes after scanning).
pub fn summarize(report: &ScanReport) -> Summary {
    quick_tree::QuickTree::summarize_report(report)
        .unwrap_or_else(|| Summary::from_scan(report, &SessionTree::build(&report.entries)))
}

fn decode_lazy(lazy: &LazyEntries) -> Option<Vec<Entry>> {
    let file = open_sidecar(&lazy.sidecar).ok()?;
    format::read_all_entries(&file, &lazy.segments)
}

/// Opens a sidecar for reading: never through a symlink, never a FIFO or device.
fn open_sidecar(sidecar: &Path) -> io::Result<File> {
    fsopen::open_regular_read(sidecar, Follow::No)
}

/// Opens a transcript for reading (a transcript path a user names may be a symlink).
fn open_transcript(transcript: &Path) -> io::Result<File> {
    fsopen::open_regular_read(transcript, Follow::Yes)
}

/// Scans the transcript without any sidecar.
pub fn open_plain(transcript: &Path) -> Result<Session> {
    Ok(Session::from_report(transcript, scan::scan_file(transcript)?, OpenKind::Scanned))
}

/// Opens a transcript through the sidecar at `sidecar`: loads it when it matches, scans only
/// the appended bytes when the transcript grew, else scans everything; updates the sidecar
/// whenever it was not used as is. Sidecar problems are never errors (the scan decides).
pub fn open(transcript: &Path, sidecar: &Path) -> Result<Session> {
    match open_with(transcript, sidecar, false)? {
        Opening::Whole(session) => Ok(session),
        Opening::Tail(tail) => tail.complete(),
    }
}

/// A transcript opened by [`open_for_context`].
#[derive(Debug)]
#[expect(clippy::large_enum_variant, reason = "one per open, moved once into its owner")]
pub enum Opening {
    /// Scanned whole, or loaded from (or extended through) its sidecar.
    Whole(Session),
    /// Only its end was read: the context is known, the rest is scanned when asked for.
    Tail(Box<TailOpen>),
}

/// A transcript of which only the end was read ([`read_tail`]), and how to complete it.
#[derive(Debug)]
pub struct TailOpen {
    pub tail: Tail,
    transcript: PathBuf,
    sidecar: Option<PathBuf>,
    before: Metadata,
}

impl TailOpen {
    /// The whole session as it was when the tail was read: the transcript scanned up to the size
    /// it had then (an append since is left out, as after a sidecar load); with a sidecar path,
    /// the sidecar is written when the transcript is still what was scanned.
    pub fn complete(&self) -> Result<Session> {
        let report = rescan_prefix(&self.transcript, self.tail.file_size)?;
        let Some(sidecar) = &self.sidecar else {
            return Ok(Session::from_report(&self.transcript, report, OpenKind::Scanned));
        };
        let session = Session::from_report(&self.transcript, report, OpenKind::Rebuilt);
        write_base_sidecar(&self.transcript, sidecar, &self.before, &session);
        Ok(session)
    }
}

/// Opens a transcript for a caller that may need only its context: like [`open`] (or
/// [`open_plain`] without a sidecar path), except that on a first contact (no sidecar path given,
/// or nothing at it) it first reads the file from its end ([`read_tail`]) and, when that answers,
/// stops there. A first contact through a sidecar path leaves an empty file there: the next open
/// finds no sidecar it can use, scans the whole file and writes one (format §9), so only the
/// first contact is a tail open and a session opened again and again loads its sidecar.
pub fn open_for_context(transcript: &Path, sidecar: Option<&Path>) -> Result<Opening> {
    if let Some(sidecar) = sidecar {
        return open_with(transcript, sidecar, true);
    }
    let file = open_transcript(transcript).map_err(|source| Error::io(transcript, source))?;
    let before = file.metadata().map_err(|source| Error::io(transcript, source))?;
    let source = FileSource { file, size: before.len() };
    if let Some(tail) = read_tail(&source, Limits::for_size(source.size)) {
        return Ok(Opening::Tail(Box::new(TailOpen {
            tail,
            transcript: transcript.to_path_buf(),
            sidecar: None,
            before,
        })));
    }
    Ok(Opening::Whole(Session::from_report(transcript, scan::scan_source(&source, transcript)?, OpenKind::Scanned)))
}

fn open_with(transcript: &Path, sidecar: &Path, tail_first: bool) -> Result<Opening> {
    let file = open_transcript(transcript).map_err(|source| Error::io(transcript, source))?;
    let before = file.metadata().map_err(|source| Error::io(transcript, source))?;
    if is_same_file(sidecar, &before) || sidecar == transcript {
        // A sidecar path naming the transcript itself would replace it: never.
        return Ok(Opening::Whole(Session::from_report(
            transcript,
            scan::scan_source(&FileSource { file, size: before.len() }, transcript)?,
            OpenKind::Scanned,
        )));
    }
    let first_contact =
        || matches!(std::fs::symlink_metadata(sidecar), Err(error) if error.kind() == io::ErrorKind::NotFound);
    if tail_first && first_contact() {
        let source = FileSource { file, size: before.len() };
        if let Some(tail) = read_tail(&source, Limits::for_size(source.size)) {
            mark_first_contact(sidecar);
            let (transcript, sidecar) = (transcript.to_path_buf(), Some(sidecar.to_path_buf()));
            return Ok(Opening::Tail(Box::new(TailOpen { tail, transcript, sidecar, before })));
        }
        let session = Session::from_report(transcript, scan::scan_source(&source, transcript)?, OpenKind::Rebuilt);
        write_base_sidecar(transcript, sidecar, &before, &session);
        return Ok(Opening::Whole(session));
    }
    let chain = open_sidecar(sidecar).ok().and_then(|handle| format::read_chain(&handle).map(|chain| (handle, chain)));
    if let Some((handle, (segments, identity, summary))) = chain {
        match judge(&file, &before, &identity) {
            Verdict::Unchanged => {
                let lazy = LazyEntries { sidecar: sidecar.to_path_buf(), segments, scanned_to: identity.scanned_to };
                return Ok(Opening::Whole(Session::lazy(transcript, summary, OpenKind::Loaded, lazy)));
            }
            Verdict::Appended => {
                let old = Old { handle, segments, identity, summary };
                if let Some(session) = append(transcript, sidecar, &file, &before, old)? {
                    return Ok(Opening::Whole(session));
                }
            }
            Verdict::Changed => {}
        }
    }
    let report = scan::scan_source(&FileSource { file, size: before.len() }, transcript)?;
    let session = Session::from_report(transcript, report, OpenKind::Rebuilt);
    write_base_sidecar(transcript, sidecar, &before, &session);
    Ok(Opening::Whole(session))
}

/// Leaves the mark of a first contact: an empty file (mode 0600) at the sidecar path, never
/// replacing anything there. Best effort: without it, the next open is a first contact again.
fn mark_first_contact(sidecar: &Path) {
    if let Some(parent) = sidecar.parent() {
        let _ = std::fs::DirBuilder::new().recursive(true).mode(0o700).create(parent);
    }
    let _ = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(sidecar);
}

/// The summary of the sidecar at `sidecar` when it describes the transcript `file` exactly as it
/// is now (same device, inode, size and mtime, both edge hashes equal); nothing is scanned or
/// written. `None` when there is no such sidecar (the caller reads the transcript itself).
pub(crate) fn trusted_summary(file: &File, metadata: &Metadata, sidecar: &Path) -> Option<Summary> {
    if is_same_file(sidecar, metadata) {
        return None;
    }
    let handle = open_sidecar(sidecar).ok()?;
    let (_segments, identity, summary) = format::read_chain(&handle)?;
    matches!(judge(file, metadata, &identity), Verdict::Unchanged).then_some(summary)
}

/// Replaces the sidecar with one base segment describing `session`, when the transcript is
/// still what was scanned (else writes nothing: the next open rebuilds). Best effort: a sidecar
/// that cannot be written is only a cache miss next time.
fn write_base_sidecar(transcript: &Path, sidecar: &Path, before: &Metadata, session: &Session) {
    if let (Some(identity), Some(full)) =
        (identity_after_scan(transcript, before, &session.summary), session.full.get())
    {
        let bytes = format::encode_segment(
            SegmentKind::Base,
            [0; 32],
            &identity,
            &session.summary,
            &full.report.entries,
            &format::sorted_hashes(&full.report.entries),
        );
        let _ = write_atomically(sidecar, &bytes);
    }
}

fn is_same_file(path: &Path, metadata: &Metadata) -> bool {
    std::fs::metadata(path).is_ok_and(|other| other.dev() == metadata.dev() && other.ino() == metadata.ino())
}

enum Verdict {
    Unchanged,
    Appended,
    Changed,
}

/// Compares the transcript's current state with the one a sidecar was built from.
fn judge(file: &File, metadata: &Metadata, identity: &Identity) -> Verdict {
    let size = metadata.len();
    if metadata.dev() != identity.device || metadata.ino() != identity.inode || size < identity.scanned_to {
        return Verdict::Changed;
    }
    match edge_hashes(file, identity.scanned_to) {
        Ok((head, tail)) if head == identity.head_hash && tail == identity.tail_hash => {}
        _ => return Verdict::Changed,
    }
    if size > identity.scanned_to {
        Verdict::Appended
    } else if metadata.mtime() == identity.mtime_seconds && metadata.mtime_nsec() == identity.mtime_nanos {
        Verdict::Unchanged
    } else {
        Verdict::Changed
    }
}

/// The sidecar as found, matching a prefix of the transcript.
struct Old {
    handle: File,
    segments: Vec<Segment>,
    identity: Identity,
    summary: Summary,
}

/// Merges the bytes appended since the sidecar into its scan: from the summary alone when it
/// can (a delta segment is appended), else with the old entries decoded (the sidecar is
/// rewritten). `None` when neither works (no header in the old part, a torn old header, old
/// entries that do not decode): the caller scans it all.
fn append(transcript: &Path, sidecar: &Path, file: &File, before: &Metadata, old: Old) -> Result<Option<Session>> {
    let Old { handle, segments, identity, summary } = old;
    if summary.report.header.is_none() {
        return Ok(None);
    }
    let mut report = summary::without_entries(&summary.report);
    let mut resume_at = identity.scanned_to;
    let mut drops_old_entry = false;
    if !report.ends_with_newline && report.line_count > 0 {
        // The old last line had no `\n`: it may continue in the appended bytes. Forget it and
        // scan again from its start.
        let last_line = report.line_count;
        let Some(start) = report.last_line_offset else { return Ok(None) };
        if report.header.as_ref().is_some_and(|header| header.line == last_line) {
            return Ok(None);
        }
        if report.skipped.last().is_some_and(|skipped| skipped.line == last_line) {
            report.skipped.pop();
        } else if summary.last_entry_line == Some(last_line) {
            // A complete entry without its `\n`: only the old entries can be told without it.
            drops_old_entry = true;
        }
        report.line_count -= 1;
        resume_at = start;
    }
    let Ok(file) = file.try_clone() else { return Ok(None) };
    let source = FileSource { file, size: before.len() };
    // Deltas repeat the summary: past a point, one rewrite is cheaper than reading them.
    let base_bytes = segments.first().map_or(0, Segment::end);
    let delta_bytes = segments.last().map_or(0, Segment::end) - base_bytes;
    if !drops_old_entry && segments.len() <= MAX_DELTAS && delta_bytes <= (base_bytes / 2).max(4 << 20) {
        let merged = scan::resume_scan(&source, resume_at, report.clone(), transcript)?;
        if let Some(session) = append_delta(transcript, sidecar, before, &handle, &segments, &summary, merged)? {
            return Ok(Some(session));
        }
    }
    // The slower way: the old entries, the new ones, a new tree, a new sidecar.
    let Some(mut entries) = format::read_all_entries(&handle, &segments) else { return Ok(None) };
    if entries.len() as u64 != summary.entry_count {
        return Ok(None);
    }
    if drops_old_entry {
        entries.pop();
    }
    report.entries = entries;
    let merged = scan::resume_scan(&source, resume_at, report, transcript)?;
    let session = Session::from_report(transcript, merged, OpenKind::AppendedRewritten);
    write_base_sidecar(transcript, sidecar, before, &session);
    Ok(Some(session))
}

/// The fast merge: the new summary from the old one and the appended entries alone, written as
/// a delta segment. `None` when the summary is not enough ([`Summary::extend`]).
fn append_delta(
    transcript: &Path,
    sidecar: &Path,
    before: &Metadata,
    handle: &File,
    segments: &[Segment],
    old: &Summary,
    merged: ScanReport,
) -> Result<Option<Session>> {
    let mut old_hashes: Vec<Vec<u64>> = Vec::with_capacity(segments.len());
    for segment in segments {
        match format::read_hashes(handle, segment) {
            Some(hashes) => old_hashes.push(hashes),
            None => return Ok(None),
        }
    }
    let maybe_old_id = |id: &str| {
        let hash = id_hash(id);
        old_hashes.iter().any(|hashes| hashes.binary_search(&hash).is_ok())
    };
    let Some(summary) = old.extend(&merged, maybe_old_id) else { return Ok(None) };
    let added = merged.entries;
    let mut segments = segments.to_vec();
    if let Some(identity) = identity_after_scan(transcript, before, &summary) {
        let previous = segments.last().map(|segment| segment.summary_hash).unwrap_or([0; 32]);
        let bytes = format::encode_segment(
            SegmentKind::Delta,
            previous,
            &identity,
            &summary,
            &added,
            &format::sorted_hashes(&added),
        );
        if let Ok(segment) = append_segment(sidecar, handle, &bytes) {
            segments.push(segment);
            let scanned_to = summary.report.file_size;
            let lazy = LazyEntries { sidecar: sidecar.to_path_buf(), segments, scanned_to };
            return Ok(Some(Session::lazy(transcript, summary, OpenKind::Appended, lazy)));
        }
        // The delta could not be added: the loaded chain is still valid for what it holds,
        // but the entries of this session now live only in memory.
    }
    // Here the delta was not written (or the transcript changed during the scan: then nothing is
    // written, and nothing lazy either): the old entries are read whole and the new ones added.
    let mut entries = format::read_all_entries(handle, &segments).unwrap_or_default();
    if entries.len() as u64 != old.entry_count {
        return Ok(None);
    }
    entries.extend(added);
    let report = ScanReport { entries, ..summary::without_entries(&summary.report) };
    Ok(Some(Session::with_full(transcript, summary, OpenKind::Appended, OnceLock::from(Full::new(report)))))
}

/// Appends a segment to the sidecar `handle` was opened from, if that is still the file at
/// `sidecar` and still ends where the loaded chain ends; returns where it went.
fn append_segment(sidecar: &Path, handle: &File, bytes: &[u8]) -> io::Result<Segment> {
    let expected_end = handle.metadata()?.len();
    let mut file = fsopen::open_regular(sidecar, std::fs::OpenOptions::new().append(true), Follow::No)?;
    let metadata = file.metadata()?;
    let original = handle.metadata()?;
    if metadata.ino() != original.ino() || metadata.dev() != original.dev() || metadata.len() != expected_end {
        return Err(io::Error::other("the sidecar changed meanwhile"));
    }
    let segment = format::parse_segment(expected_end, bytes).ok_or_else(|| io::Error::other("unreadable segment"))?;
    file.write_all(bytes)?;
    file.sync_data()?;
    Ok(segment)
}

/// Scans `[0, scanned_to)` of the transcript (the region a loaded sidecar described).
fn rescan_prefix(transcript: &Path, scanned_to: u64) -> Result<ScanReport> {
    let file = open_transcript(transcript).map_err(|source| Error::io(transcript, source))?;
    let size = file.metadata().map_err(|source| Error::io(transcript, source))?.len().min(scanned_to);
    scan::scan_source(&FileSource { file, size }, transcript)
}

/// Bytes of an edge read (and hashed) at a time by [`edge_hashes`].
const EDGE_READ_BYTES: usize = 16 << 10;

/// blake3 of the first and of the last [`EDGE_BYTES`] of `[0, end)`.
///
/// Both edges go through one small buffer on the stack, [`EDGE_READ_BYTES`] at a time (the same
/// hashes as of each edge at once: blake3 is a stream): two fresh 64 KiB allocations cost every
/// warm open their zeroing and ~30 page faults as the reads first touched them.
fn edge_hashes(file: &File, end: u64) -> io::Result<([u8; 32], [u8; 32])> {
    let mut buffer = [0u8; EDGE_READ_BYTES];
    let mut hash = |start: u64| -> io::Result<[u8; 32]> {
        let stop = end.min(start + EDGE_BYTES);
        let mut hasher = blake3::Hasher::new();
        let mut at = start;
        while at < stop {
            let piece = &mut buffer[..(stop - at).min(EDGE_READ_BYTES as u64) as usize];
            file.read_exact_at(piece, at)?;
            hasher.update(piece);
            at += piece.len() as u64;
        }
        Ok(*hasher.finalize().as_bytes())
    };
    Ok((hash(0)?, hash(end.saturating_sub(EDGE_BYTES))?))
}

/// The identity to record for a scan that read the transcript up to `summary`'s file size,
/// given its state `before` the scan; `None` when it changed during the scan other than by
/// appending (then no sidecar is written).
fn identity_after_scan(transcript: &Path, before: &Metadata, summary: &Summary) -> Option<Identity> {
    let scanned_to = summary.report.file_size;
    let file = open_transcript(transcript).ok()?;
    let (head_hash, tail_hash) = edge_hashes(&file, scanned_to).ok()?;
    let after = file.metadata().ok()?;
    let same_file = after.dev() == before.dev() && after.ino() == before.ino();
    let unchanged =
        after.len() == scanned_to && after.mtime() == before.mtime() && after.mtime_nsec() == before.mtime_nsec();
    if !same_file || scanned_to != before.len() || !(unchanged || after.len() > scanned_to) {
        return None;
    }
    Some(Identity {
        device: before.dev(),
        inode: before.ino(),
        scanned_to,
        mtime_seconds: before.mtime(),
        mtime_nanos: before.mtime_nsec(),
        head_hash,
        tail_hash,
    })
}

/// Writes `bytes` to `path` through a fsynced temporary file (mode 0600) and a rename.
fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    fsopen::check_replaceable(path)?;
    if let Some(parent) = path.parent() {
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(parent)?;
    }
    let file_name = path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    let nonce =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|time| time.subsec_nanos()).unwrap_or(0);
    let temporary = path.with_file_name(format!(".{file_name}.{}.{nonce:08x}.tmp", std::process::id()));
    let result = (|| {
        let mut file = fsopen::open_regular(
            &temporary,
            std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600),
            Follow::No,
        )?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&temporary, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::SkipReason;
    use format::HEADER_BYTES;
    use std::time::{Duration, SystemTime};

    const HEADER: &str = r#"{"type":"session","version":3,"id":"s1","timestamp":"t0","cwd":"/p"}"#;

    fn message(id: &str, parent: Option<&str>, role: &str, text: &str) -> String {
        let parent = parent.map_or("null".to_owned(), |parent| format!("\"{parent}\""));
        format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-0{}T00:00:00.000Z","message":{{"role":"{role}","content":[{{"type":"text","text":"{text}"}}],"meta":{{"messageId":"m-{id}"}}}},"model":"m"}}"#,
            id.len() % 9
        )
    }

    fn transcript(count: usize) -> String {
        let mut data = format!("{HEADER}\n");
        for index in 0..count {
            let id = format!("e{index}");
            let parent = (index > 0).then(|| format!("e{}", index - 1));
            let line = match index % 7 {
                3 => format!(
                    r#"{{"type":"compaction","id":"{id}","parentId":"{}","timestamp":"t","summary":"s","firstKeptEntryId":"e{}","tokensBefore":1}}"#,
                    parent.clone().unwrap_or_default(),
                    index / 2
                ),
                5 => format!(
                    r#"{{"type":"label","id":"{id}","parentId":"{}","timestamp":"t","targetId":"e0","label":"l{index}"}}"#,
                    parent.clone().unwrap_or_default()
                ),
                6 => format!(
                    r#"{{"type":"session_info","id":"{id}","parentId":"{}","timestamp":"t","name":"n{index}"}}"#,
                    parent.clone().unwrap_or_default()
                ),
                _ => message(
                    &id,
                    parent.as_deref(),
                    if index % 2 == 0 { "user" } else { "assistant" },
                    &"x".repeat(index * 13 % 300),
                ),
            };
            data.push_str(&line);
            data.push('\n');
        }
        data.push_str("not json\n");
        data
    }

    struct Fixture {
        _directory: tempfile::TempDir,
        transcript: PathBuf,
        sidecar: PathBuf,
    }

    fn fixture(content: &str) -> Fixture {
        let directory = tempfile::tempdir().unwrap();
        let transcript = directory.path().join("s.jsonl");
        let sidecar = directory.path().join("index").join("slug").join("s.idx");
        std::fs::write(&transcript, content).unwrap();
        Fixture { _directory: directory, transcript, sidecar }
    }

    /// Opens through the sidecar, checks that it equals a plain scan, returns how it opened.
    fn open_and_compare(fixture: &Fixture) -> OpenKind {
        let session = open(&fixture.transcript, &fixture.sidecar).unwrap();
        let plain = open_plain(&fixture.transcript).unwrap();
        assert_eq!(session.summary, plain.summary);
        let (full, plain_full) = (session.full().unwrap(), plain.full().unwrap());
        assert_eq!(full.report, plain_full.report);
        assert_eq!(full.tree().path(), plain_full.tree().path());
        session.kind
    }

    fn append(path: &Path, text: &str) {
        let mut file = std::fs::OpenOptions::new().append(true).open(path).unwrap();
        file.write_all(text.as_bytes()).unwrap();
    }

    fn set_mtime(path: &Path, time: SystemTime) {
        std::fs::OpenOptions::new().write(true).open(path).unwrap().set_modified(time).unwrap();
    }

    #[test]
    fn round_trip() {
        let fixture = fixture(&transcript(50));
        let plain = open_plain(&fixture.transcript).unwrap();
        let identity = Identity {
            device: 1,
            inode: 2,
            scanned_to: 3,
            mtime_seconds: -4,
            mtime_nanos: 5,
            head_hash: [6; 32],
            tail_hash: [7; 32],
        };
        let entries = &plain.full().unwrap().report.entries;
        let bytes = format::encode_segment(
            SegmentKind::Base,
            [0; 32],
            &identity,
            &plain.summary,
            entries,
            &format::sorted_hashes(entries),
        );
        let (decoded_identity, summary, decoded_entries) = decode_sidecar(&bytes).unwrap();
        assert_eq!(decoded_identity, identity);
        assert_eq!(summary, plain.summary);
        assert_eq!(&decoded_entries, entries);
        assert!(!summary.plan.is_empty() && !summary.labels().is_empty() && summary.name.is_some());
        assert_eq!(summary.report.skipped.len(), 1);
    }

    #[test]
    fn unchanged_loads_and_decodes_lazily() {
        let fixture = fixture(&transcript(40));
        assert_eq!(open_and_compare(&fixture), OpenKind::Rebuilt);
        assert_eq!(open_and_compare(&fixture), OpenKind::Loaded);
        let mode = std::fs::metadata(&fixture.sidecar).unwrap().permissions();
        assert_eq!(std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777, 0o600);
    }

    #[test]
    fn every_kind_of_mismatch_rebuilds() {
        let content = transcript(30);
        let fixture = fixture(&content);
        open_and_compare(&fixture);
        // Same size, other bytes.
        std::fs::write(&fixture.transcript, content.replace("\"n6\"", "\"N6\"")).unwrap();
        assert_eq!(open_and_compare(&fixture), OpenKind::Rebuilt);
        assert_eq!(open_and_compare(&fixture), OpenKind::Loaded);
        // Only the mtime.
        set_mtime(&fixture.transcript, SystemTime::now() - Duration::from_secs(3600));
        assert_eq!(open_and_compare(&fixture), OpenKind::Rebuilt);
        // Shorter.
        std::fs::write(&fixture.transcript, &content[..content.len() / 2]).unwrap();
        assert_eq!(open_and_compare(&fixture), OpenKind::Rebuilt);
        // Another file renamed over it (same content, other inode).
        let copy = fixture.transcript.with_extension("copy");
        std::fs::copy(&fixture.transcript, &copy).unwrap();
        std::fs::rename(&copy, &fixture.transcript).unwrap();
        assert_eq!(open_and_compare(&fixture), OpenKind::Rebuilt);
        assert_eq!(open_and_compare(&fixture), OpenKind::Loaded);
        // Grown, but the old region changed.
        std::fs::write(&fixture.transcript, format!("{}\n", content.replace("\"n6\"", "\"M6\""))).unwrap();
        assert_eq!(open_and_compare(&fixture), OpenKind::Rebuilt);
    }

    #[test]
    fn edge_hashes_are_the_blake3_of_each_whole_edge() {
        // Read piece by piece, the hashes must be those of each edge hashed at once, which every
        // sidecar written so far records: any other value would rebuild them all.
        let directory = tempfile::tempdir().unwrap();
        let path = directory.path().join("edges");
        let content: Vec<u8> = (0..3 * EDGE_BYTES + 7).map(|index| (index * 31 % 251) as u8).collect();
        std::fs::write(&path, &content).unwrap();
        let file = File::open(&path).unwrap();
        let piece = EDGE_READ_BYTES as u64;
        for end in [
            0,
            1,
            piece - 1,
            piece,
            piece + 1,
            EDGE_BYTES - 1,
            EDGE_BYTES,
            EDGE_BYTES + 1,
            2 * EDGE_BYTES + 5,
            3 * EDGE_BYTES + 7,
        ] {
            let edge = EDGE_BYTES.min(end) as usize;
            let end = end as usize;
            let expected =
                (*blake3::hash(&content[..edge]).as_bytes(), *blake3::hash(&content[end - edge..end]).as_bytes());
            assert_eq!(edge_hashes(&file, end as u64).unwrap(), expected, "end {end}");
        }
        // A region the file no longer holds is an error, not a hash of fewer bytes.
        assert!(edge_hashes(&file, content.len() as u64 + 1).is_err());
    }

    #[test]
    fn a_change_in_the_middle_of_a_big_file_is_caught_by_the_mtime() {
        let content = transcript(3000);
        assert!(content.len() as u64 > 3 * EDGE_BYTES);
        let fixture = fixture(&content);
        open_and_compare(&fixture);
        let middle = content.len() / 2;
        let position = middle + content[middle..].find("\"x").unwrap() + 1;
        let mut changed = content.into_bytes();
        changed[position] = b'y';
        std::fs::write(&fixture.transcript, &changed).unwrap();
        set_mtime(&fixture.transcript, SystemTime::now() + Duration::from_secs(5));
        assert_eq!(open_and_compare(&fixture), OpenKind::Rebuilt);
    }

    #[test]
    fn garbage_sidecars_are_rebuilt() {
        let fixture = fixture(&transcript(25));
        open_and_compare(&fixture);
        let good = std::fs::read(&fixture.sidecar).unwrap();
        let mut variants: Vec<Vec<u8>> =
            vec![Vec::new(), b"garbage".to_vec(), good[..good.len() / 2].to_vec(), good[..HEADER_BYTES].to_vec()];
        let mut doubled = good.clone();
        doubled.extend_from_slice(&good);
        variants.push(doubled);
        let mut extended = good.clone();
        extended.push(0);
        variants.push(extended);
        let summary_length = u64::from_le_bytes(good[16..24].try_into().unwrap()) as usize;
        for position in [
            0,
            9,
            13,
            20,
            40,
            100,
            170,
            HEADER_BYTES + 3,
            HEADER_BYTES + summary_length / 2,
            HEADER_BYTES + summary_length - 1,
        ] {
            let mut flipped = good.clone();
            flipped[position] ^= 0x40;
            variants.push(flipped);
        }
        for (number, variant) in variants.into_iter().enumerate() {
            std::fs::write(&fixture.sidecar, &variant).unwrap();
            assert_eq!(open_and_compare(&fixture), OpenKind::Rebuilt, "variant {number}");
            assert_eq!(std::fs::read(&fixture.sidecar).unwrap(), good, "variant {number}");
        }
        // A damaged entries section is found only when the entries are needed: then rescanned.
        for which in 0..3 {
            open_and_compare(&fixture);
            let good = std::fs::read(&fixture.sidecar).unwrap();
            let entries_start = HEADER_BYTES + u64::from_le_bytes(good[16..24].try_into().unwrap()) as usize;
            let entries_length = u64::from_le_bytes(good[24..32].try_into().unwrap()) as usize;
            let position =
                [entries_start, entries_start + entries_length / 2, entries_start + entries_length - 1][which];
            let mut damaged = good.clone();
            damaged[position] ^= 1;
            std::fs::write(&fixture.sidecar, &damaged).unwrap();
            let session = open(&fixture.transcript, &fixture.sidecar).unwrap();
            assert_eq!(session.kind, OpenKind::Loaded);
            assert_eq!(session.full().unwrap().report, open_plain(&fixture.transcript).unwrap().full().unwrap().report);
            // An append that needs them: the whole file is scanned again.
            let before = std::fs::read(&fixture.transcript).unwrap();
            append(&fixture.transcript, &format!("{}\n", message("late", Some("e3"), "user", "x")));
            assert_eq!(open_and_compare(&fixture), OpenKind::Rebuilt);
            std::fs::write(&fixture.transcript, before).unwrap();
            assert_eq!(open_and_compare(&fixture), OpenKind::Rebuilt);
        }
    }

    #[test]
    fn a_first_contact_reads_the_tail_and_the_sidecar_comes_after() {
        let fixture = fixture(&transcript(30));
        let plain = open_plain(&fixture.transcript).unwrap();
        let Opening::Tail(opened) = open_for_context(&fixture.transcript, Some(&fixture.sidecar)).unwrap() else {
            panic!("a v3 transcript is opened from its end")
        };
        assert_eq!(std::fs::read(&fixture.sidecar).unwrap(), b"", "a tail open leaves only its mark");
        assert_eq!(opened.tail.leaf.as_deref(), plain.summary.leaf.as_ref().map(|(_, id)| id.as_str()));
        let ids: Vec<&str> = opened.tail.plan.iter().map(|item| item.id.as_str()).collect();
        let expected: Vec<&str> = plain.summary.plan.iter().map(|item| item.id.as_str()).collect();
        assert_eq!(ids, expected);
        // An append after the tail read is left out of the completed session, as after a load.
        append(&fixture.transcript, &format!("{}\n", message("late", Some("e29"), "user", "x")));
        let session = opened.complete().unwrap();
        assert_eq!(session.kind, OpenKind::Rebuilt);
        assert_eq!(session.summary, plain.summary);
        assert!(fixture.sidecar.exists(), "completing writes the sidecar of what it scanned");
        // The sidecar then serves the next opens, the appended line through a delta.
        let Opening::Whole(next) = open_for_context(&fixture.transcript, Some(&fixture.sidecar)).unwrap() else {
            panic!("a matching sidecar is used before any tail read")
        };
        assert_eq!(next.kind, OpenKind::Appended);
        assert!(matches!(
            open_for_context(&fixture.transcript, Some(&fixture.sidecar)).unwrap(),
            Opening::Whole(Session { kind: OpenKind::Loaded, .. })
        ));
        // The mark makes the second contact scan the whole file and write the sidecar.
        let marked = self::fixture(&transcript(12));
        assert!(matches!(open_for_context(&marked.transcript, Some(&marked.sidecar)).unwrap(), Opening::Tail(_)));
        let Opening::Whole(second) = open_for_context(&marked.transcript, Some(&marked.sidecar)).unwrap() else {
            panic!("the second contact is a whole scan")
        };
        assert_eq!(second.kind, OpenKind::Rebuilt);
        assert_eq!(second.summary, open_plain(&marked.transcript).unwrap().summary);
        assert!(matches!(
            open_for_context(&marked.transcript, Some(&marked.sidecar)).unwrap(),
            Opening::Whole(Session { kind: OpenKind::Loaded, .. })
        ));
        // Without a v3 header first, the whole file is scanned (and the sidecar written).
        let legacy = self::fixture(&format!("{}\n{HEADER}\n", message("a", None, "user", "x")));
        let Opening::Whole(session) = open_for_context(&legacy.transcript, Some(&legacy.sidecar)).unwrap() else {
            panic!("an entry before the header makes the tail decline")
        };
        assert_eq!(session.kind, OpenKind::Rebuilt);
        assert!(legacy.sidecar.exists());
    }

    #[test]
    fn random_bytes_never_decode_into_a_sidecar() {
        let mut state = 0x1234_5678_9abc_def0u64;
        for length in 0..2000 {
            let bytes: Vec<u8> = (0..length)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    state as u8
                })
                .collect();
            assert!(decode_sidecar(&bytes).is_none());
            let _ = format::decode_entries(&bytes, &mut Vec::new());
        }
    }

    #[test]
    fn appends_scan_only_the_new_bytes() {
        let fixture = fixture(&transcript(30));
        open_and_compare(&fixture);
        let mut leaf = "e29".to_owned();
        for round in 0..5 {
            let id = format!("n{round}");
            append(&fixture.transcript, &format!("{}\n", message(&id, Some(&leaf), "user", "more")));
            leaf = id;
            assert_eq!(open_and_compare(&fixture), OpenKind::Appended, "round {round}");
            assert_eq!(open_and_compare(&fixture), OpenKind::Loaded, "round {round}");
        }
        // Appends that branch, repeat an id, compact or rename still agree (some need the old
        // entries).
        append(&fixture.transcript, &format!("{}\n", message("b1", Some("e10"), "user", "branch")));
        assert_eq!(open_and_compare(&fixture), OpenKind::AppendedRewritten);
        append(&fixture.transcript, &format!("{}\n", message("e3", Some("b1"), "user", "dup")));
        assert_eq!(open_and_compare(&fixture), OpenKind::AppendedRewritten);
        append(
            &fixture.transcript,
            r#"{"type":"compaction","id":"c9","parentId":"e3","timestamp":"t","summary":"s","firstKeptEntryId":"e5","tokensBefore":1,"stripThinkingFromKept":true}"#,
        );
        append(&fixture.transcript, "\n");
        assert_eq!(open_and_compare(&fixture), OpenKind::AppendedRewritten);
        append(
            &fixture.transcript,
            "{\"type\":\"session_info\",\"id\":\"i9\",\"parentId\":\"c9\",\"timestamp\":\"t\",\"name\":\"  \"}\n",
        );
        assert_eq!(open_and_compare(&fixture), OpenKind::Appended);
        append(&fixture.transcript, &format!("{}\n", message("k1", Some("i9"), "user", "kept")));
        append(
            &fixture.transcript,
            r#"{"type":"compaction","id":"c10","parentId":"k1","timestamp":"t","summary":"s","firstKeptEntryId":"k1","tokensBefore":1}"#,
        );
        append(&fixture.transcript, &format!("\n{}\n", message("after", Some("c10"), "assistant", "x")));
        assert_eq!(open_and_compare(&fixture), OpenKind::Appended);
        append(&fixture.transcript, &format!("{}\n", message("root2", None, "user", "new root")));
        assert_eq!(open_and_compare(&fixture), OpenKind::Appended);
        append(&fixture.transcript, &format!("{}\n", message("orphan", Some("nowhere"), "user", "x")));
        assert_eq!(open_and_compare(&fixture), OpenKind::Appended);
        append(&fixture.transcript, &format!("{}\n", message("nowhere", Some("orphan"), "user", "x")));
        assert_eq!(open_and_compare(&fixture), OpenKind::AppendedRewritten);
    }

    #[test]
    fn many_deltas_are_folded_into_a_new_base() {
        let fixture = fixture(&transcript(5));
        open_and_compare(&fixture);
        let mut leaf = "e4".to_owned();
        let mut kinds = Vec::new();
        for round in 0..(MAX_DELTAS + 3) {
            let id = format!("d{round}");
            append(&fixture.transcript, &format!("{}\n", message(&id, Some(&leaf), "assistant", "x")));
            leaf = id;
            kinds.push(open_and_compare(&fixture));
        }
        assert!(kinds[..MAX_DELTAS].iter().all(|kind| *kind == OpenKind::Appended));
        assert_eq!(kinds[MAX_DELTAS], OpenKind::AppendedRewritten);
        assert_eq!(kinds[MAX_DELTAS + 1], OpenKind::Appended);
        let (_, _, entries) = decode_sidecar(&std::fs::read(&fixture.sidecar).unwrap()).unwrap();
        assert_eq!(entries, open_plain(&fixture.transcript).unwrap().full().unwrap().report.entries);
    }

    #[test]
    fn a_broken_delta_chain_is_rebuilt() {
        let fixture = fixture(&transcript(10));
        open_and_compare(&fixture);
        let base = std::fs::read(&fixture.sidecar).unwrap();
        append(&fixture.transcript, &format!("{}\n", message("x1", Some("e9"), "user", "x")));
        assert_eq!(open_and_compare(&fixture), OpenKind::Appended);
        let with_delta = std::fs::read(&fixture.sidecar).unwrap();
        assert!(with_delta.len() > base.len() && with_delta.starts_with(&base));
        // A torn delta, a delta appended twice, a delta whose summary is damaged.
        let mut twice = with_delta.clone();
        twice.extend_from_slice(&with_delta[base.len()..]);
        let mut damaged = with_delta.clone();
        let last = damaged.len() - 1;
        damaged[base.len() + HEADER_BYTES + 2] ^= 4;
        damaged[last] ^= 0;
        for (number, variant) in [with_delta[..with_delta.len() - 3].to_vec(), twice, damaged].into_iter().enumerate() {
            std::fs::write(&fixture.sidecar, &variant).unwrap();
            assert_eq!(open_and_compare(&fixture), OpenKind::Rebuilt, "variant {number}");
        }
    }

    #[test]
    fn extending_a_summary_equals_summarizing_everything() {
        // Random transcripts cut at every line: whenever `extend` answers, it answers right.
        let mut state = 0x5eed_u64;
        let mut random = move |bound: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % bound
        };
        let (mut answered, mut declined) = (0, 0);
        for _ in 0..60 {
            let mut lines = vec![HEADER.to_owned()];
            for index in 0..(5 + random(25)) as usize {
                let id = if random(15) == 0 && index > 0 {
                    format!("e{}", random(index as u64))
                } else {
                    format!("e{index}")
                };
                let parent = match random(10) {
                    0 => None,
                    1 => Some("ghost".to_owned()),
                    2 if index > 1 => Some(format!("e{}", random(index as u64))),
                    _ if index > 0 => Some(format!("e{}", index - 1)),
                    _ => None,
                };
                let parent_json = parent.map_or("null".to_owned(), |parent| format!("\"{parent}\""));
                lines.push(match random(9) {
                    0 => format!(r#"{{"type":"compaction","id":"{id}","parentId":{parent_json},"timestamp":"t","summary":"s","firstKeptEntryId":"e{}","tokensBefore":1,"stripThinkingFromKept":{}}}"#, random(index as u64 + 2), random(2) == 0),
                    1 => format!(r#"{{"type":"label","id":"{id}","parentId":{parent_json},"timestamp":"t{index}","targetId":"e{}"{}}}"#, random(5), if random(3) == 0 { "" } else { r#","label":"l""# }),
                    2 => format!(r#"{{"type":"model_change","id":"{id}","parentId":{parent_json},"timestamp":"t","model":"m{index}"}}"#),
                    3 => format!(r#"{{"type":"effort_change","id":"{id}","parentId":{parent_json},"timestamp":"t"}}"#),
                    4 => format!(r#"{{"type":"session_info","id":"{id}","parentId":{parent_json},"timestamp":"t","name":"n{index}"}}"#),
                    5 => "garbage".to_owned(),
                    _ => {
                        let role = if random(2) == 0 { "user" } else { "assistant" };
                        format!(r#"{{"type":"message","id":"{id}","parentId":{parent_json},"timestamp":"t{}","message":{{"role":"{role}","content":[],"meta":{{"isMeta":{}}}}},"model":"x{index}"}}"#, random(50), random(4) == 0)
                    }
                });
            }
            let data: String = lines.iter().map(|line| format!("{line}\n")).collect();
            let whole = scan::scan_bytes(data.as_bytes()).unwrap();
            let expected = Summary::from_scan(&whole, &SessionTree::build(&whole.entries));
            let mut cut = 0;
            for line in &lines {
                cut += line.len() + 1;
                let prefix = scan::scan_bytes(&data.as_bytes()[..cut]).unwrap();
                let old = Summary::from_scan(&prefix, &SessionTree::build(&prefix.entries));
                let source = scan::MemorySource(data.as_bytes());
                let merged =
                    scan::resume_scan(&source, cut as u64, summary::without_entries(&prefix), Path::new("x")).unwrap();
                let old_ids: std::collections::HashSet<&str> = prefix.entries.iter().map(|entry| &*entry.id).collect();
                match old.extend(&merged, |id| old_ids.contains(id)) {
                    Some(extended) => {
                        answered += 1;
                        assert_eq!(extended, expected, "cut at {cut} of {data}");
                    }
                    None => declined += 1,
                }
            }
        }
        assert!(answered > 200 && declined > 50, "{answered} answered, {declined} declined");
    }

    #[test]
    fn a_torn_tail_is_rescanned_from_its_start() {
        let base = transcript(20);
        let whole = message("z1", Some("e19"), "assistant", "finished");
        let (first, second) = whole.split_at(whole.len() / 2);
        let fixture = fixture(&format!("{base}{first}"));
        assert_eq!(open_and_compare(&fixture), OpenKind::Rebuilt);
        let session = open(&fixture.transcript, &fixture.sidecar).unwrap();
        assert_eq!(session.summary.report.skipped.last().unwrap().reason, SkipReason::TornTail);
        append(&fixture.transcript, &format!("{second}\n"));
        assert_eq!(open_and_compare(&fixture), OpenKind::Appended);
        let session = open(&fixture.transcript, &fixture.sidecar).unwrap();
        assert_eq!(session.summary.leaf.as_ref().unwrap().1, "z1");
        // A torn tail that parses (valid JSON, no newline yet), then continued.
        append(&fixture.transcript, &message("z15", Some("z1"), "user", "complete but unterminated"));
        assert_eq!(open_and_compare(&fixture), OpenKind::Appended);
        append(&fixture.transcript, "\n");
        assert_eq!(open_and_compare(&fixture), OpenKind::AppendedRewritten);
        // A torn tail that stays invalid, then more lines.
        append(&fixture.transcript, "{\"type\":");
        assert_eq!(open_and_compare(&fixture), OpenKind::Appended);
        append(&fixture.transcript, &format!("\n{}\n", message("z2", Some("z15"), "user", "again")));
        assert_eq!(open_and_compare(&fixture), OpenKind::Appended);
        // A torn blank tail.
        append(&fixture.transcript, "   ");
        assert_eq!(open_and_compare(&fixture), OpenKind::Appended);
        append(&fixture.transcript, &format!("{}\n", message("z3", Some("z2"), "user", "blank before")));
        assert_eq!(open_and_compare(&fixture), OpenKind::Appended);
    }

    #[test]
    fn files_without_a_header_are_rescanned_whole() {
        let fixture = fixture(&format!("{}\n", message("a", None, "user", "x")));
        assert_eq!(open_and_compare(&fixture), OpenKind::Rebuilt);
        append(&fixture.transcript, &format!("{HEADER}\n{}\n", message("b", Some("a"), "user", "y")));
        assert_eq!(open_and_compare(&fixture), OpenKind::Rebuilt);
        let fixture = self::fixture("");
        assert_eq!(open_and_compare(&fixture), OpenKind::Rebuilt);
        assert_eq!(open_and_compare(&fixture), OpenKind::Loaded);
        append(&fixture.transcript, &format!("{HEADER}\n"));
        assert_eq!(open_and_compare(&fixture), OpenKind::Rebuilt);
    }

    #[test]
    fn a_sidecar_path_naming_the_transcript_is_never_written() {
        let content = transcript(5);
        let fixture = fixture(&content);
        let link = fixture.transcript.with_extension("link");
        std::fs::hard_link(&fixture.transcript, &link).unwrap();
        for sidecar in [&fixture.transcript, &link] {
            let session = open(&fixture.transcript, sidecar).unwrap();
            assert_eq!(session.kind, OpenKind::Scanned);
            assert_eq!(std::fs::read_to_string(&fixture.transcript).unwrap(), content);
        }
    }

    #[test]
    fn a_newer_version_is_an_error_and_writes_nothing() {
        let fixture = fixture("{\"type\":\"session\",\"version\":9,\"id\":\"s\",\"timestamp\":\"t\",\"cwd\":\"/\"}\n");
        assert!(matches!(open(&fixture.transcript, &fixture.sidecar), Err(Error::NewerVersion { .. })));
        assert!(!fixture.sidecar.exists());
    }
}
