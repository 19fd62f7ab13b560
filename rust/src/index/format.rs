//! The sidecar's bytes: segment headers, the varint encoding of identities, summaries, entry
//! envelopes and id hashes, and the walk over a chain of segments.
//!
//! Owns: the on-disk layout (see [`crate::index`] for what it means). Decoding never panics and
//! never trusts a length: anything out of place is `None`, and the caller rebuilds.
//!
//! ```text
//! segment := header (200 bytes) | summary | entries | id hashes
//! header  := magic "ccindex\0" | version u32 | kind u32 (0 base, 1 delta)
//!          | summary length u64 | entries length u64 | id hashes length u64
//!          | blake3(previous segment's summary) (zeros for a base) | blake3(summary)
//!          | blake3(entries) | blake3(id hashes) | blake3(the 168 bytes before)
//! ```
//! A file is one base segment followed by delta segments, each extending the one before (its
//! first hash names the previous summary). Every summary is complete; entries and id hashes of a
//! delta hold only what it added.

use super::{Identity, PlanItem, Summary};
use crate::envelope::{EntryKind, Extra, Role};
use crate::scan::{Entry, Header, ScanReport, SkipReason, SkippedLine, SourceFormat};
use std::fs::File;
use std::os::unix::fs::FileExt;

/// Bumped whenever the layout or the meaning of anything cached changes (including what the
/// scanner reports), so older sidecars are rebuilt rather than misread.
pub const FORMAT_VERSION: u32 = 2;

pub(super) const HEADER_BYTES: usize = 200;
const MAGIC: &[u8; 8] = b"ccindex\0";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum SegmentKind {
    Base,
    Delta,
}

/// Where one segment's sections are and what they hash to.
#[derive(Clone, Debug)]
pub(super) struct Segment {
    pub kind: SegmentKind,
    pub offset: u64,
    pub summary_length: u64,
    pub entries_length: u64,
    pub hashes_length: u64,
    pub previous: [u8; 32],
    pub summary_hash: [u8; 32],
    pub entries_hash: [u8; 32],
    pub hashes_hash: [u8; 32],
}

impl Segment {
    pub fn summary_at(&self) -> u64 {
        self.offset + HEADER_BYTES as u64
    }

    pub fn entries_at(&self) -> u64 {
        self.summary_at() + self.summary_length
    }

    pub fn hashes_at(&self) -> u64 {
        self.entries_at() + self.entries_length
    }

    pub fn end(&self) -> u64 {
        self.hashes_at() + self.hashes_length
    }
}

/// A whole segment: header and sections.
pub(super) fn encode_segment(
    kind: SegmentKind,
    previous: [u8; 32],
    identity: &Identity,
    summary: &Summary,
    entries: &[Entry],
    hashes: &[u64],
) -> Vec<u8> {
    let mut summary_bytes = Writer::default();
    write_identity(&mut summary_bytes, identity);
    write_summary(&mut summary_bytes, summary);
    let mut entry_bytes = Writer::default();
    write_entries(&mut entry_bytes, entries);
    let hash_bytes: Vec<u8> = hashes.iter().flat_map(|hash| hash.to_le_bytes()).collect();
    let (summary_bytes, entry_bytes) = (summary_bytes.0, entry_bytes.0);
    let mut out = Vec::with_capacity(HEADER_BYTES + summary_bytes.len() + entry_bytes.len() + hash_bytes.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&(kind as u32).to_le_bytes());
    for length in [summary_bytes.len(), entry_bytes.len(), hash_bytes.len()] {
        out.extend_from_slice(&(length as u64).to_le_bytes());
    }
    out.extend_from_slice(&previous);
    for section in [&summary_bytes, &entry_bytes, &hash_bytes] {
        out.extend_from_slice(blake3::hash(section).as_bytes());
    }
    let header_hash = blake3::hash(&out);
    out.extend_from_slice(header_hash.as_bytes());
    debug_assert_eq!(out.len(), HEADER_BYTES);
    out.extend_from_slice(&summary_bytes);
    out.extend_from_slice(&entry_bytes);
    out.extend_from_slice(&hash_bytes);
    out
}

/// The segment whose encoded bytes (from [`encode_segment`]) start at `offset`.
pub(super) fn parse_segment(offset: u64, bytes: &[u8]) -> Option<Segment> {
    parse_header(offset, bytes.get(..HEADER_BYTES)?.try_into().ok()?)
}

fn parse_header(offset: u64, header: &[u8; HEADER_BYTES]) -> Option<Segment> {
    if &header[..8] != MAGIC || u32::from_le_bytes(header[8..12].try_into().ok()?) != FORMAT_VERSION {
        return None;
    }
    if *blake3::hash(&header[..168]).as_bytes() != header[168..200] {
        return None;
    }
    let kind = match u32::from_le_bytes(header[12..16].try_into().ok()?) {
        0 => SegmentKind::Base,
        1 => SegmentKind::Delta,
        _ => return None,
    };
    let number = |at: usize| header[at..at + 8].try_into().ok().map(u64::from_le_bytes);
    let hash = |at: usize| -> Option<[u8; 32]> { header[at..at + 32].try_into().ok() };
    let segment = Segment {
        kind,
        offset,
        summary_length: number(16)?,
        entries_length: number(24)?,
        hashes_length: number(32)?,
        previous: hash(40)?,
        summary_hash: hash(72)?,
        entries_hash: hash(104)?,
        hashes_hash: hash(136)?,
    };
    // Lengths that do not add up are garbage, not a reason to overflow.
    segment
        .summary_at()
        .checked_add(segment.summary_length)?
        .checked_add(segment.entries_length)?
        .checked_add(segment.hashes_length)?;
    (segment.hashes_length % 8 == 0).then_some(segment)
}

/// The segments of a sidecar file, checked to form one chain that ends exactly at the end of
/// the file, and the decoded identity and summary of the last one.
pub(super) fn read_chain(file: &File) -> Option<(Vec<Segment>, Identity, Summary)> {
    let size = file.metadata().ok()?.len();
    let mut segments: Vec<Segment> = Vec::new();
    let mut offset = 0;
    while offset < size {
        let mut header = [0u8; HEADER_BYTES];
        file.read_exact_at(&mut header, offset).ok()?;
        let segment = parse_header(offset, &header)?;
        let linked = match segments.last() {
            None => segment.kind == SegmentKind::Base,
            Some(previous) => segment.kind == SegmentKind::Delta && segment.previous == previous.summary_hash,
        };
        if !linked || segment.end() > size {
            return None;
        }
        offset = segment.end();
        segments.push(segment);
    }
    let last = segments.last()?;
    let bytes = read_section(file, last.summary_at(), last.summary_length, &last.summary_hash)?;
    let (identity, summary) = decode_summary(&bytes)?;
    Some((segments, identity, summary))
}

/// A section's bytes, checked against its hash.
pub(super) fn read_section(file: &File, at: u64, length: u64, hash: &[u8; 32]) -> Option<Vec<u8>> {
    let mut bytes = vec![0u8; usize::try_from(length).ok()?];
    file.read_exact_at(&mut bytes, at).ok()?;
    (blake3::hash(&bytes).as_bytes() == hash).then_some(bytes)
}

/// Every entry of the chain, in file order.
pub(super) fn read_all_entries(file: &File, segments: &[Segment]) -> Option<Vec<Entry>> {
    let mut entries = Vec::new();
    for segment in segments {
        let bytes = read_section(file, segment.entries_at(), segment.entries_length, &segment.entries_hash)?;
        decode_entries(&bytes, &mut entries)?;
    }
    Some(entries)
}

/// The sorted id hashes of one segment.
pub(super) fn read_hashes(file: &File, segment: &Segment) -> Option<Vec<u64>> {
    let bytes = read_section(file, segment.hashes_at(), segment.hashes_length, &segment.hashes_hash)?;
    let hashes: Vec<u64> =
        bytes.chunks_exact(8).map(|chunk| u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]))).collect();
    hashes.is_sorted().then_some(hashes)
}

/// A stable 64-bit hash of an entry id (FNV-1a with a final mix): equal ids hash equal, so a
/// hash that is absent proves the id absent; a collision only costs a slower path.
pub fn id_hash(id: &str) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for byte in id.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash ^ (hash >> 29)
}

/// The sorted hashes of these entries' ids.
pub(super) fn sorted_hashes(entries: &[Entry]) -> Vec<u64> {
    let mut hashes: Vec<u64> = entries.iter().map(|entry| id_hash(&entry.id)).collect();
    hashes.sort_unstable();
    hashes
}

fn decode_summary(bytes: &[u8]) -> Option<(Identity, Summary)> {
    let mut reader = Reader::new(bytes);
    let identity = read_identity(&mut reader)?;
    let summary = read_summary(&mut reader)?;
    reader.at_end().then_some((identity, summary))
}

/// Decodes an entries section, appending to `entries`.
pub(super) fn decode_entries(bytes: &[u8], entries: &mut Vec<Entry>) -> Option<()> {
    let mut reader = Reader::new(bytes);
    let count = reader.length()?;
    entries.reserve(count);
    let first = entries.len();
    for _ in 0..count {
        let previous = entries.len().checked_sub(1).filter(|&last| last >= first).map(|last| &entries[last]);
        let entry = read_entry(&mut reader, previous)?;
        entries.push(entry);
    }
    reader.at_end().then_some(())
}

/// Decodes a whole single-file sidecar held in memory (tests, tools).
pub fn decode_sidecar(bytes: &[u8]) -> Option<(Identity, Summary, Vec<Entry>)> {
    let mut entries = Vec::new();
    let mut offset = 0usize;
    let mut last: Option<(Identity, Summary)> = None;
    let mut previous_hash: Option<[u8; 32]> = None;
    while offset < bytes.len() {
        let header: &[u8; HEADER_BYTES] = bytes.get(offset..offset.checked_add(HEADER_BYTES)?)?.try_into().ok()?;
        let segment = parse_header(offset as u64, header)?;
        match previous_hash {
            None if segment.kind != SegmentKind::Base => return None,
            Some(hash) if segment.kind != SegmentKind::Delta || segment.previous != hash => return None,
            _ => {}
        }
        let section = |at: u64, length: u64, hash: &[u8; 32]| -> Option<&[u8]> {
            let start = usize::try_from(at).ok()?;
            let slice = bytes.get(start..start.checked_add(usize::try_from(length).ok()?)?)?;
            (blake3::hash(slice).as_bytes() == hash).then_some(slice)
        };
        last = Some(decode_summary(section(segment.summary_at(), segment.summary_length, &segment.summary_hash)?)?);
        decode_entries(section(segment.entries_at(), segment.entries_length, &segment.entries_hash)?, &mut entries)?;
        section(segment.hashes_at(), segment.hashes_length, &segment.hashes_hash)?;
        previous_hash = Some(segment.summary_hash);
        offset = usize::try_from(segment.end()).ok()?;
    }
    let (identity, summary) = last?;
    (entries.len() as u64 == summary.entry_count).then_some((identity, summary, entries))
}

#[derive(Default)]
struct Writer(Vec<u8>);

impl Writer {
    fn u8(&mut self, value: u8) {
        self.0.push(value);
    }

    fn varint(&mut self, mut value: u64) {
        while value >= 0x80 {
            self.0.push((value as u8) | 0x80);
            value >>= 7;
        }
        self.0.push(value as u8);
    }

    fn signed(&mut self, value: i64) {
        self.varint(((value << 1) ^ (value >> 63)) as u64);
    }

    fn bool(&mut self, value: bool) {
        self.u8(u8::from(value));
    }

    fn str(&mut self, value: &str) {
        self.varint(value.len() as u64);
        self.0.extend_from_slice(value.as_bytes());
    }

    fn opt_str(&mut self, value: Option<&str>) {
        match value {
            Some(value) => {
                self.u8(1);
                self.str(value);
            }
            None => self.u8(0),
        }
    }

    fn opt_u64(&mut self, value: Option<u64>) {
        match value {
            Some(value) => {
                self.u8(1);
                self.varint(value);
            }
            None => self.u8(0),
        }
    }

    fn indexed(&mut self, value: &Option<(u64, String)>) {
        match value {
            Some((index, id)) => {
                self.u8(1);
                self.varint(*index);
                self.str(id);
            }
            None => self.u8(0),
        }
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    position: usize,
}

impl<'a> Reader<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Reader { bytes, position: 0 }
    }

    fn at_end(&self) -> bool {
        self.position == self.bytes.len()
    }

    fn u8(&mut self) -> Option<u8> {
        let value = *self.bytes.get(self.position)?;
        self.position += 1;
        Some(value)
    }

    fn varint(&mut self) -> Option<u64> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.u8()?;
            value |= u64::from(byte & 0x7f).checked_shl(shift)?;
            if byte & 0x80 == 0 {
                return Some(value);
            }
        }
        None
    }

    fn signed(&mut self) -> Option<i64> {
        let value = self.varint()?;
        Some(((value >> 1) as i64) ^ -((value & 1) as i64))
    }

    /// A count or length, bounded by the bytes left (every counted item takes at least one).
    fn length(&mut self) -> Option<usize> {
        let value = usize::try_from(self.varint()?).ok()?;
        (value <= self.bytes.len() - self.position).then_some(value)
    }

    fn bool(&mut self) -> Option<bool> {
        match self.u8()? {
            0 => Some(false),
            1 => Some(true),
            _ => None,
        }
    }

    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        let slice = self.bytes.get(self.position..self.position.checked_add(N)?)?;
        self.position += N;
        slice.try_into().ok()
    }

    fn str(&mut self) -> Option<&'a str> {
        let length = self.length()?;
        let slice = &self.bytes[self.position..self.position + length];
        self.position += length;
        std::str::from_utf8(slice).ok()
    }

    fn string(&mut self) -> Option<String> {
        self.str().map(str::to_owned)
    }

    fn opt_string(&mut self) -> Option<Option<String>> {
        match self.u8()? {
            0 => Some(None),
            1 => Some(Some(self.string()?)),
            _ => None,
        }
    }

    fn opt_boxed(&mut self) -> Option<Option<Box<str>>> {
        match self.u8()? {
            0 => Some(None),
            1 => Some(Some(Box::from(self.str()?))),
            _ => None,
        }
    }

    fn opt_u64(&mut self) -> Option<Option<u64>> {
        match self.u8()? {
            0 => Some(None),
            1 => Some(Some(self.varint()?)),
            _ => None,
        }
    }

    fn indexed(&mut self) -> Option<Option<(u64, String)>> {
        match self.u8()? {
            0 => Some(None),
            1 => Some(Some((self.varint()?, self.string()?))),
            _ => None,
        }
    }

    fn strings(&mut self) -> Option<Vec<String>> {
        let count = self.length()?;
        (0..count).map(|_| self.string()).collect()
    }
}

fn write_identity(out: &mut Writer, identity: &Identity) {
    out.varint(identity.device);
    out.varint(identity.inode);
    out.varint(identity.scanned_to);
    out.signed(identity.mtime_seconds);
    out.signed(identity.mtime_nanos);
    out.0.extend_from_slice(&identity.head_hash);
    out.0.extend_from_slice(&identity.tail_hash);
}

fn read_identity(input: &mut Reader<'_>) -> Option<Identity> {
    Some(Identity {
        device: input.varint()?,
        inode: input.varint()?,
        scanned_to: input.varint()?,
        mtime_seconds: input.signed()?,
        mtime_nanos: input.signed()?,
        head_hash: input.array()?,
        tail_hash: input.array()?,
    })
}

fn format_code(format: Option<SourceFormat>) -> u8 {
    match format {
        None => 0,
        Some(SourceFormat::V3) => 1,
        Some(SourceFormat::LegacyV2) => 2,
        Some(SourceFormat::LegacyV1) => 3,
    }
}

fn format_from(code: u8) -> Option<Option<SourceFormat>> {
    Some(match code {
        0 => None,
        1 => Some(SourceFormat::V3),
        2 => Some(SourceFormat::LegacyV2),
        3 => Some(SourceFormat::LegacyV1),
        _ => return None,
    })
}

const REASONS: [SkipReason; 5] = [
    SkipReason::InvalidJson,
    SkipReason::NotObject,
    SkipReason::FailsValidation,
    SkipReason::BeforeHeader,
    SkipReason::TornTail,
];

const KINDS: [EntryKind; 9] = [
    EntryKind::Message,
    EntryKind::ModelChange,
    EntryKind::EffortChange,
    EntryKind::Compaction,
    EntryKind::BranchSummary,
    EntryKind::Custom,
    EntryKind::CustomMessage,
    EntryKind::Label,
    EntryKind::SessionInfo,
];

const ROLES: [Role; 3] = [Role::User, Role::Assistant, Role::Other];

fn code_of<T: PartialEq>(table: &[T], value: &T) -> u8 {
    table.iter().position(|candidate| candidate == value).unwrap_or(0) as u8
}

fn write_summary(out: &mut Writer, summary: &Summary) {
    let report = &summary.report;
    out.u8(format_code(report.format));
    out.bool(report.has_bom);
    out.bool(report.ends_with_newline);
    out.varint(report.file_size);
    out.varint(report.line_count);
    out.opt_u64(report.last_line_offset);
    out.opt_str(report.legacy_entrypoint.as_deref());
    match &report.header {
        Some(header) => {
            out.u8(1);
            out.str(&header.id);
            out.str(&header.timestamp);
            out.str(&header.cwd);
            out.opt_str(header.parent_session.as_deref());
            out.opt_str(header.session_id.as_deref());
            out.varint(header.line);
            out.varint(header.offset);
            out.varint(header.length);
        }
        None => out.u8(0),
    }
    out.varint(report.skipped.len() as u64);
    for skipped in &report.skipped {
        out.varint(skipped.line);
        out.varint(skipped.offset);
        out.varint(skipped.length);
        out.u8(code_of(&REASONS, &skipped.reason));
        out.str(&skipped.detail);
    }
    out.varint(summary.entry_count);
    out.indexed(&summary.leaf);
    out.opt_u64(summary.last_entry_line);
    out.varint(summary.path_len);
    out.bool(summary.cycle_detected);
    out.varint(summary.unknown_parents);
    out.varint(summary.duplicate_ids);
    out.varint(summary.unresolved_parents.len() as u64);
    for id in &summary.unresolved_parents {
        out.str(id);
    }
    out.bool(summary.unresolved_overflow);
    write_items(out, &summary.plan);
    out.indexed(&summary.compaction);
    out.varint(summary.strip_thinking_until);
    out.varint(summary.label_state.len() as u64);
    for (target, label) in &summary.label_state {
        out.str(target);
        out.opt_str(label.as_deref());
    }
    out.opt_str(summary.name.as_deref());
    out.opt_str(summary.model.as_deref());
    out.opt_str(summary.effort.as_deref());
    out.varint(summary.message_count);
    out.opt_str(summary.last_timestamp.as_deref());
    write_items(out, &summary.first_users);
    out.bool(summary.first_users_complete);
}

fn write_items(out: &mut Writer, items: &[PlanItem]) {
    out.varint(items.len() as u64);
    for item in items {
        out.varint(item.index);
        out.str(&item.id);
        out.varint(item.offset);
        out.varint(item.length);
    }
}

fn read_items(input: &mut Reader<'_>, entry_count: u64) -> Option<Vec<PlanItem>> {
    let count = input.length()?;
    let mut items = Vec::with_capacity(count);
    for _ in 0..count {
        let item =
            PlanItem { index: input.varint()?, id: input.string()?, offset: input.varint()?, length: input.varint()? };
        if item.index >= entry_count {
            return None;
        }
        items.push(item);
    }
    Some(items)
}

fn read_summary(input: &mut Reader<'_>) -> Option<Summary> {
    let format = format_from(input.u8()?)?;
    let has_bom = input.bool()?;
    let ends_with_newline = input.bool()?;
    let file_size = input.varint()?;
    let line_count = input.varint()?;
    let last_line_offset = input.opt_u64()?;
    let legacy_entrypoint = input.opt_string()?;
    let header = match input.u8()? {
        0 => None,
        1 => Some(Header {
            id: input.string()?,
            timestamp: input.string()?,
            cwd: input.string()?,
            parent_session: input.opt_string()?,
            session_id: input.opt_string()?,
            line: input.varint()?,
            offset: input.varint()?,
            length: input.varint()?,
        }),
        _ => return None,
    };
    let skipped_count = input.length()?;
    let mut skipped = Vec::with_capacity(skipped_count);
    for _ in 0..skipped_count {
        skipped.push(SkippedLine {
            line: input.varint()?,
            offset: input.varint()?,
            length: input.varint()?,
            reason: *REASONS.get(usize::from(input.u8()?))?,
            detail: input.string()?,
        });
    }
    let entry_count = input.varint()?;
    let leaf = input.indexed()?;
    let last_entry_line = input.opt_u64()?;
    let path_len = input.varint()?;
    let cycle_detected = input.bool()?;
    let unknown_parents = input.varint()?;
    let duplicate_ids = input.varint()?;
    let unresolved_parents = input.strings()?;
    let unresolved_overflow = input.bool()?;
    let plan = read_items(input, entry_count)?;
    let compaction = input.indexed()?;
    let strip_thinking_until = input.varint()?;
    let label_count = input.length()?;
    let mut label_state = Vec::with_capacity(label_count);
    for _ in 0..label_count {
        label_state.push((input.string()?, input.opt_string()?));
    }
    let name = input.opt_string()?;
    let model = input.opt_string()?;
    let effort = input.opt_string()?;
    let message_count = input.varint()?;
    let last_timestamp = input.opt_string()?;
    let first_users = read_items(input, entry_count)?;
    let first_users_complete = input.bool()?;
    let in_range = |value: &Option<(u64, String)>| value.as_ref().is_none_or(|(index, _)| *index < entry_count);
    if !in_range(&leaf) || !in_range(&compaction) || strip_thinking_until > plan.len() as u64 || path_len > entry_count
    {
        return None;
    }
    Some(Summary {
        report: ScanReport {
            header,
            format,
            entries: Vec::new(),
            skipped,
            file_size,
            ends_with_newline,
            has_bom,
            legacy_entrypoint,
            line_count,
            last_line_offset,
        },
        entry_count,
        leaf,
        last_entry_line,
        path_len,
        cycle_detected,
        unknown_parents,
        duplicate_ids,
        unresolved_parents,
        unresolved_overflow,
        plan,
        compaction,
        strip_thinking_until,
        label_state,
        name,
        model,
        effort,
        message_count,
        last_timestamp,
        first_users,
        first_users_complete,
    })
}

// Entry flags.
const PARENT_SOME: u8 = 1;
/// The parent id equals the previous entry's id (the common chain): not stored again.
const PARENT_IS_PREVIOUS: u8 = 2;

fn write_entries(out: &mut Writer, entries: &[Entry]) {
    out.varint(entries.len() as u64);
    let mut previous: Option<&Entry> = None;
    for entry in entries {
        let mut flags = 0;
        if let Some(parent) = &entry.parent_id {
            flags |= PARENT_SOME;
            if previous.is_some_and(|previous| previous.id == *parent) {
                flags |= PARENT_IS_PREVIOUS;
            }
        }
        out.u8(code_of(&KINDS, &entry.kind));
        out.u8(flags);
        // Lines and offsets only grow: store the steps.
        let (line_base, offset_base) = previous.map_or((0, 0), |previous| (previous.line, previous.offset));
        out.signed(entry.line.wrapping_sub(line_base) as i64);
        out.signed(entry.offset.wrapping_sub(offset_base) as i64);
        out.varint(entry.length);
        out.str(&entry.id);
        if flags & PARENT_SOME != 0 && flags & PARENT_IS_PREVIOUS == 0 {
            out.str(entry.parent_id.as_deref().unwrap_or_default());
        }
        out.str(&entry.timestamp);
        write_extra(out, &entry.extra);
        previous = Some(entry);
    }
}

fn read_entry(input: &mut Reader<'_>, previous: Option<&Entry>) -> Option<Entry> {
    let kind = *KINDS.get(usize::from(input.u8()?))?;
    let flags = input.u8()?;
    if flags & !(PARENT_SOME | PARENT_IS_PREVIOUS) != 0 {
        return None;
    }
    let (line_base, offset_base) = previous.map_or((0, 0), |previous| (previous.line, previous.offset));
    let line = line_base.wrapping_add(input.signed()? as u64);
    let offset = offset_base.wrapping_add(input.signed()? as u64);
    let length = input.varint()?;
    let id: Box<str> = Box::from(input.str()?);
    let parent_id = if flags & PARENT_SOME == 0 {
        None
    } else if flags & PARENT_IS_PREVIOUS != 0 {
        Some(previous?.id.clone())
    } else {
        Some(Box::from(input.str()?))
    };
    let timestamp = Box::from(input.str()?);
    let extra = read_extra(input)?;
    Some(Entry { kind, id, parent_id, timestamp, line, offset, length, extra })
}

fn write_extra(out: &mut Writer, extra: &Extra) {
    match extra {
        Extra::None => out.u8(0),
        Extra::Message { role, is_meta, tool_only, message_id, model } => {
            out.u8(1);
            out.u8(code_of(&ROLES, role));
            out.bool(*is_meta);
            out.bool(*tool_only);
            out.opt_str(message_id.as_deref());
            out.opt_str(model.as_deref());
        }
        Extra::Compaction { first_kept_entry_id, strip_thinking_from_kept } => {
            out.u8(2);
            out.str(first_kept_entry_id);
            out.bool(*strip_thinking_from_kept);
        }
        Extra::Label { target_id, label } => {
            out.u8(3);
            out.str(target_id);
            out.opt_str(label.as_deref());
        }
        Extra::SessionInfo { name } => {
            out.u8(4);
            out.opt_str(name.as_deref());
        }
        Extra::ModelChange { model } => {
            out.u8(5);
            out.opt_str(model.as_deref());
        }
        Extra::EffortChange { effort } => {
            out.u8(6);
            out.opt_str(effort.as_deref());
        }
    }
}

fn read_extra(input: &mut Reader<'_>) -> Option<Extra> {
    Some(match input.u8()? {
        0 => Extra::None,
        1 => Extra::Message {
            role: *ROLES.get(usize::from(input.u8()?))?,
            is_meta: input.bool()?,
            tool_only: input.bool()?,
            message_id: input.opt_boxed()?,
            model: input.opt_boxed()?,
        },
        2 => {
            Extra::Compaction { first_kept_entry_id: Box::from(input.str()?), strip_thinking_from_kept: input.bool()? }
        }
        3 => Extra::Label { target_id: Box::from(input.str()?), label: input.opt_boxed()? },
        4 => Extra::SessionInfo { name: input.opt_boxed()? },
        5 => Extra::ModelChange { model: input.opt_boxed()? },
        6 => Extra::EffortChange { effort: input.opt_boxed()? },
        _ => return None,
    })
}
