//! The context of a transcript read from its end (issue 30): the leaf, the context plan, the
//! model and effort, found by reading lines backwards from the end of the file in pieces and
//! walking the active path from the leaf only as far back as the context needs.
//!
//! Owns: [`read_tail`], which answers only when its answer is exactly what a whole scan and
//! [`crate::tree::SessionTree`] give (format §4.4); otherwise it declines and the caller scans
//! the whole file. Why reading backwards is exact: ids resolve last-one-wins, so the first line
//! met backwards with an id is the one the whole scan would pick, and an id not met yet can
//! only name a line further back. `tests::tail_agrees_with_the_whole_scan` pins it.

use crate::envelope::{EntryKind, Extra, Role};
use crate::scan::{self, Entry, Header, ReadBuffer, Source};
use std::collections::HashMap;
use std::io;

/// Bytes read from the start of the file to find the header.
const HEAD_BYTES: u64 = 64 << 10;

/// How [`read_tail`] reads, and when it gives up.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Bytes read backwards at a time.
    pub piece: u64,
    /// Bytes read backwards after which the walk gives up (the whole scan is then cheaper than
    /// going on line by line on one core).
    pub budget: u64,
}

impl Limits {
    /// Pieces of [`scan::PIECE_BYTES`]; a budget of an eighth of the file, at least 1 MiB (a
    /// small file is read whole) and at most 32 MiB.
    pub fn for_size(size: u64) -> Self {
        Limits { piece: scan::PIECE_BYTES, budget: (size / 8).clamp(1 << 20, 32 << 20) }
    }
}

/// One entry of the context plan: its id and the byte span of its line.
#[derive(Clone, Debug, PartialEq)]
pub struct TailItem {
    pub id: String,
    pub offset: u64,
    pub length: u64,
}

/// What the end of a transcript says, exactly as a whole scan would say it.
#[derive(Clone, Debug, PartialEq)]
pub struct Tail {
    pub header: Header,
    pub has_bom: bool,
    pub file_size: u64,
    pub ends_with_newline: bool,
    /// The leaf's id (the last valid entry line), `None` when the file has no entry.
    pub leaf: Option<String>,
    /// The context plan in context order ([`crate::tree::ContextPlan`]).
    pub plan: Vec<TailItem>,
    /// The id of the compaction that starts the context.
    pub compaction: Option<String>,
    pub strip_thinking_until: u64,
    /// The model on the active path; `None` when the walk stopped before it could know.
    pub model: Option<Option<String>>,
    /// The effort on the active path; `None` when the walk stopped before it could know.
    pub effort: Option<Option<String>>,
    /// Bytes read backwards (for benchmarks and tests).
    pub bytes_read: u64,
}

/// The header when the first JSON object of the file is a valid v3 header, with the offset
/// where the line after it starts. `None` for anything else (the whole scan decides then).
fn read_head(source: &impl Source) -> io::Result<Option<(Header, bool, u64)>> {
    let mut buffer = ReadBuffer::default();
    let has_bom = source.load(0, scan::BOM.len() as u64, &mut buffer)? == scan::BOM;
    let start = if has_bom { scan::BOM.len() as u64 } else { 0 };
    buffer.clear();
    let bytes = source.load(start, start + HEAD_BYTES, &mut buffer)?;
    let mut line_start = 0;
    let mut line_number = 0;
    while let Some(newline) = memchr::memchr(b'\n', &bytes[line_start..]) {
        line_number += 1;
        let line = &bytes[line_start..line_start + newline];
        if !line.iter().all(u8::is_ascii_whitespace) {
            match scan::classify_first(line) {
                None => {}
                Some(Some(mut header)) => {
                    header.line = line_number;
                    header.offset = start + line_start as u64;
                    return Ok(Some((header, has_bom, start + (line_start + newline + 1) as u64)));
                }
                Some(None) => return Ok(None),
            }
        }
        line_start += newline + 1;
    }
    Ok(None)
}

/// Lines read backwards from the end of a source down to `low`, a piece at a time.
struct Backward<'a, S: Source> {
    source: &'a S,
    piece: u64,
    low: u64,
    /// Bytes `[cursor, size)` have been read.
    cursor: u64,
    /// The end (its `\n` excluded) of the line that ends in bytes read but starts before `cursor`.
    line_end: u64,
    /// Whether the line `[low, line_end)` has been handed out too.
    finished: bool,
    chunk: ReadBuffer,
    whole: ReadBuffer,
}

impl<S: Source> Backward<'_, S> {
    fn exhausted(&self) -> bool {
        self.finished
    }

    fn bytes_read(&self) -> u64 {
        self.source.size() - self.cursor
    }

    /// Reads one more piece and hands each line that now lies complete to `visit` with its
    /// offset, last line first. `visit` returns false to stop everything (a header line).
    fn read_piece(&mut self, visit: &mut impl FnMut(u64, &[u8]) -> bool) -> io::Result<bool> {
        let Backward { source, piece, low, cursor, line_end, finished, chunk, whole } = self;
        let begin = cursor.saturating_sub(*piece).max(*low);
        chunk.clear();
        let bytes = source.load(begin, *cursor, chunk)?;
        if (bytes.len() as u64) < *cursor - begin {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        let chunk_end = *cursor;
        let mut line_at = |start: u64, end: u64| -> io::Result<Vec<u8>> {
            // Most lines lie in this piece; one that runs over pieces is read whole, once.
            if end <= chunk_end {
                return Ok(bytes[(start - begin) as usize..(end - begin) as usize].to_vec());
            }
            whole.clear();
            let line = source.load(start, end, whole)?;
            if (line.len() as u64) < end - start {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            Ok(line.to_vec())
        };
        let mut upper = bytes.len();
        while let Some(newline) = memchr::memrchr(b'\n', &bytes[..upper]) {
            let line_start = begin + newline as u64 + 1;
            if !visit(line_start, &line_at(line_start, *line_end)?) {
                return Ok(false);
            }
            *line_end = line_start - 1;
            upper = newline;
        }
        *cursor = begin;
        if begin == *low {
            *finished = true;
            if !visit(begin, &line_at(begin, *line_end)?) {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// The walk up the active path from the leaf.
#[derive(Default)]
struct Walk {
    /// Path positions, leaf first: indices into the entries read (last line first).
    path: Vec<usize>,
    /// The entry to visit next.
    next: Option<usize>,
    /// The parent id the walk waits for (not read yet).
    waiting: Option<Box<str>>,
    visited: Vec<bool>,
    /// Position in `path` of the compaction that starts the context.
    compaction: Option<usize>,
    /// Position in `path` of the compaction's first kept entry.
    kept: Option<usize>,
    /// The context is known: the compaction and its first kept entry (or none to find) met.
    context_done: bool,
    /// The path ended (root, unknown parent, cycle): everything on it has been seen.
    ended: bool,
    model: Option<Option<String>>,
    effort: Option<Option<String>>,
}

/// The first model fact of one entry, as [`crate::tree::SessionTree::model`] reads the path.
fn model_of(entry: &Entry) -> Option<&str> {
    match &entry.extra {
        Extra::ModelChange { model } => model.as_deref(),
        Extra::Message { role: Role::Assistant, model: Some(model), .. } => Some(model),
        _ => None,
    }
}

/// A compaction's `firstKeptEntryId` (empty: none), as the tree reads it.
fn first_kept(entry: &Entry) -> &str {
    match &entry.extra {
        Extra::Compaction { first_kept_entry_id, .. } => first_kept_entry_id,
        _ => "",
    }
}

fn effort_of(entry: &Entry) -> Option<&str> {
    match &entry.extra {
        Extra::EffortChange { effort } => effort.as_deref(),
        _ => None,
    }
}

impl Walk {
    /// Walks as far as the entries read allow. `all_read`: no line is left to read, so an id not
    /// read names no entry.
    fn advance(&mut self, entries: &[Entry], by_id: &HashMap<Box<str>, usize>, all_read: bool) {
        self.visited.resize(entries.len(), false);
        if let Some(parent) = &self.waiting {
            match by_id.get(parent) {
                Some(&index) => {
                    self.next = Some(index);
                    self.waiting = None;
                }
                None if all_read => {
                    self.ended = true;
                    return;
                }
                None => return,
            }
        }
        while let Some(index) = self.next.take() {
            if self.visited[index] {
                self.ended = true;
                return;
            }
            self.visited[index] = true;
            let entry = &entries[index];
            let position = self.path.len();
            self.path.push(index);
            if self.model.is_none() {
                self.model = model_of(entry).map(|model| Some(model.to_owned()));
            }
            if self.effort.is_none() {
                self.effort = effort_of(entry).map(|effort| Some(effort.to_owned()));
            }
            match self.compaction {
                None if entry.kind == EntryKind::Compaction => {
                    self.compaction = Some(position);
                    self.context_done = first_kept(entry).is_empty();
                }
                Some(compaction) if !self.context_done && *entry.id == *first_kept(&entries[self.path[compaction]]) => {
                    self.kept = Some(position);
                    self.context_done = true;
                }
                _ => {}
            }
            let Some(parent) = entry.parent_id.as_deref() else {
                self.ended = true;
                return;
            };
            match by_id.get(parent) {
                Some(&parent) => self.next = Some(parent),
                None if all_read => {
                    self.ended = true;
                    return;
                }
                None => {
                    self.waiting = Some(parent.into());
                    return;
                }
            }
        }
    }
}

/// The context of the transcript in `source` read from its end, or `None` when that cannot be
/// sure to agree with a whole scan: no v3 header first, a header line after it, a path the walk
/// could not finish within `limits.budget`, or a read error (the whole scan reports it).
pub(crate) fn read_tail(source: &impl Source, limits: Limits) -> Option<Tail> {
    read_tail_io(source, limits).ok().flatten()
}

fn read_tail_io(source: &impl Source, limits: Limits) -> io::Result<Option<Tail>> {
    let size = source.size();
    let Some((header, has_bom, header_end)) = read_head(source)? else { return Ok(None) };
    let mut backward = Backward {
        source,
        piece: limits.piece.max(1),
        low: header_end,
        cursor: size,
        line_end: size,
        finished: false,
        chunk: ReadBuffer::default(),
        whole: ReadBuffer::default(),
    };
    // Entries read, last line first, and id → the first of them with that id (the file's last).
    let mut entries: Vec<Entry> = Vec::new();
    let mut by_id: HashMap<Box<str>, usize> = HashMap::new();
    let mut walk = Walk::default();
    let mut bailed = false;
    loop {
        if !entries.is_empty() || backward.exhausted() {
            if walk.path.is_empty() && walk.next.is_none() && !walk.ended {
                if entries.is_empty() {
                    walk.ended = true;
                } else {
                    walk.next = Some(0);
                }
            }
            walk.advance(&entries, &by_id, backward.exhausted());
            // Once the context is known, nothing more is read for the model or the effort: a
            // caller that asks for them when the walk did not reach them gets the whole scan.
            if walk.ended || walk.context_done {
                break;
            }
        }
        if backward.bytes_read() >= limits.budget {
            return Ok(None);
        }
        let complete = backward.read_piece(&mut |offset, line| {
            if line.iter().all(u8::is_ascii_whitespace) {
                return true;
            }
            match scan::classify_alone(line) {
                Err(()) => {
                    bailed = true;
                    false
                }
                Ok(Some(mut entry)) => {
                    entry.offset = offset;
                    by_id.entry(entry.id.clone()).or_insert(entries.len());
                    entries.push(entry);
                    true
                }
                Ok(None) => true,
            }
        })?;
        if !complete || bailed {
            return Ok(None);
        }
    }
    let path = &walk.path;
    let contextual = |positions: &mut dyn Iterator<Item = &usize>| -> Vec<TailItem> {
        positions
            .map(|&index| &entries[index])
            .filter(|entry| entry.kind.is_contextual())
            .map(|entry| TailItem { id: entry.id.to_string(), offset: entry.offset, length: entry.length })
            .collect()
    };
    let (plan, compaction, strip_thinking_until) = match walk.compaction {
        Some(position) => {
            let entry = &entries[path[position]];
            let strip = matches!(entry.extra, Extra::Compaction { strip_thinking_from_kept: true, .. });
            let mut plan = vec![TailItem { id: entry.id.to_string(), offset: entry.offset, length: entry.length }];
            if let Some(kept) = walk.kept {
                plan.extend(contextual(&mut path[position + 1..=kept].iter().rev()));
            }
            let strip_until = if strip { plan.len() as u64 } else { 0 };
            plan.extend(contextual(&mut path[..position].iter().rev()));
            (plan, Some(entry.id.to_string()), strip_until)
        }
        None => (contextual(&mut path.iter().rev()), None, 0),
    };
    let known = |fact: Option<Option<String>>| if walk.ended { Some(fact.flatten()) } else { fact };
    let mut last = ReadBuffer::default();
    let ends_with_newline = size == 0 || source.load(size - 1, size, &mut last)? == b"\n";
    Ok(Some(Tail {
        header,
        has_bom,
        file_size: size,
        ends_with_newline,
        leaf: entries.first().map(|entry| entry.id.to_string()),
        plan,
        compaction,
        strip_thinking_until,
        model: known(walk.model.clone()),
        effort: known(walk.effort.clone()),
        bytes_read: backward.bytes_read(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::{scan_bytes, MemorySource};
    use crate::tree::SessionTree;

    const HEADER: &str = r#"{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/w"}"#;

    /// A small xorshift generator: every transcript comes from one seed.
    struct Random(u64);

    impl Random {
        fn below(&mut self, bound: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % bound.max(1)
        }

        fn chance(&mut self, one_in: u64) -> bool {
            self.below(one_in) == 0
        }
    }

    /// A hostile transcript: duplicate ids, cycles, unknown parents, compactions whose first kept
    /// entry is missing, before, after or the compaction itself, leaf moves, labels, names,
    /// invalid lines on and off the path, blank and CRLF lines, long lines, torn or unterminated
    /// tails, and now and then a BOM, a legacy or missing header, or a header line later on.
    fn transcript(random: &mut Random) -> Vec<u8> {
        let mut lines: Vec<String> = Vec::new();
        match random.below(40) {
            0 => {}
            1 => lines.push(r#"{"type":"session","version":2,"id":"s","timestamp":"t","cwd":"/"}"#.into()),
            2 => lines.push(r#"{"role":"user","content":"legacy v1"}"#.into()),
            3 => lines.push(r#"{"type":"message","id":"x","parentId":null,"timestamp":"t"}"#.into()),
            4 => lines.push("not json before the header".into()),
            _ => {}
        }
        lines.push(HEADER.into());
        let count = 1 + random.below(60) as usize;
        let mut ids: Vec<String> = Vec::new();
        for index in 0..count {
            let id = if !ids.is_empty() && random.chance(8) {
                ids[random.below(ids.len() as u64) as usize].clone()
            } else {
                format!("e{index}")
            };
            let any_id = |random: &mut Random, ids: &[String]| -> String {
                match random.below(6) {
                    0 => "ghost".into(),
                    1 => format!("e{}", index + 1 + random.below(5) as usize),
                    _ if ids.is_empty() => "ghost".into(),
                    _ => ids[random.below(ids.len() as u64) as usize].clone(),
                }
            };
            let parent = match random.below(12) {
                0 => "null".to_owned(),
                1 | 2 => format!("\"{}\"", any_id(random, &ids)),
                _ => ids.last().map_or("null".to_owned(), |last| format!("\"{last}\"")),
            };
            let head = format!(r#""id":"{id}","parentId":{parent},"timestamp":"t{}""#, random.below(99));
            let line = match random.below(16) {
                0 | 1 => {
                    let kept = match random.below(5) {
                        0 => String::new(),
                        1 => id.clone(),
                        _ => any_id(random, &ids),
                    };
                    let strip = random.chance(2);
                    format!(
                        r#"{{"type":"compaction",{head},"summary":"s","firstKeptEntryId":"{kept}","tokensBefore":1,"stripThinkingFromKept":{strip}}}"#
                    )
                }
                2 => format!(r#"{{"type":"label",{head},"targetId":"{}","label":"l{index}"}}"#, any_id(random, &ids)),
                3 => format!(r#"{{"type":"session_info",{head},"name":"n{index}"}}"#),
                4 => format!(r#"{{"type":"model_change",{head},"model":"m{index}"}}"#),
                5 => format!(r#"{{"type":"effort_change",{head},"effort":"f{index}"}}"#),
                6 => format!(
                    r#"{{"type":"custom",{head},"customType":"commandcode.leaf","data":{{"reason":"rewind"}}}}"#
                ),
                7 => format!(r#"{{"type":"branch_summary",{head},"fromId":"e0","summary":"b"}}"#),
                8 => format!(r#"{{"type":"custom_message",{head},"customType":"c","content":"x","display":true}}"#),
                9 => match random.below(6) {
                    0 => "{\"type\":".to_owned(),
                    1 => "[1,2]".to_owned(),
                    2 => format!(r#"{{"type":"message","id":7,{head}}}"#),
                    3 => HEADER.to_owned(),
                    4 => "   ".to_owned(),
                    _ => format!(r#"{{"type":"mystery",{head}}}"#),
                },
                10 => format!(
                    r#"{{"type":"message",{head},"message":{{"role":"user","content":"{}"}}}}"#,
                    "x".repeat(random.below(900) as usize)
                ),
                _ => {
                    let role = if random.chance(2) { "user" } else { "assistant" };
                    let model = if random.chance(3) { format!(r#","model":"a{index}""#) } else { String::new() };
                    format!(r#"{{"type":"message",{head},"message":{{"role":"{role}","content":[]}}{model}}}"#)
                }
            };
            // A header line is rare: it makes the tail decline, and hides the other cases.
            if line == HEADER && !random.chance(4) {
                continue;
            }
            lines.push(line);
            ids.push(id);
        }
        let mut data = Vec::new();
        if random.chance(20) {
            data.extend_from_slice(scan::BOM);
        }
        for line in &lines {
            data.extend_from_slice(line.as_bytes());
            data.extend_from_slice(if random.chance(15) { b"\r\n" } else { b"\n" });
        }
        match random.below(6) {
            0 => data.truncate(data.len() - 1),
            1 => data.extend_from_slice(b"{\"type\":\"message\",\"id\":\"torn"),
            2 => {
                let cut = data.len() - 1 - random.below(40).min(data.len() as u64 - 1) as usize;
                data.truncate(cut);
            }
            _ => {}
        }
        data
    }

    /// Compares a tail answer with the whole scan, field by field.
    fn check(data: &[u8], tail: &Tail) -> Result<(), String> {
        let whole = scan_bytes(data).map_err(|error| error.to_string())?;
        let entries = &whole.entries;
        let tree = SessionTree::build(entries);
        let plan = tree.context_plan(entries);
        let expected: Vec<TailItem> = plan
            .entries
            .iter()
            .map(|&index| TailItem {
                id: entries[index].id.to_string(),
                offset: entries[index].offset,
                length: entries[index].length,
            })
            .collect();
        let mut header = whole.header.clone().ok_or("a tail answer for a file without a header")?;
        header.length = tail.header.length;
        let checks = [
            (whole.header.as_ref() == Some(&tail.header), "header"),
            (whole.has_bom == tail.has_bom, "has_bom"),
            (whole.file_size == tail.file_size, "file_size"),
            (whole.ends_with_newline == tail.ends_with_newline, "ends_with_newline"),
            (tree.leaf().map(|index| entries[index].id.to_string()) == tail.leaf, "leaf"),
            (expected == tail.plan, "plan"),
            (plan.compaction.map(|index| entries[index].id.to_string()) == tail.compaction, "compaction"),
            (plan.strip_thinking_until as u64 == tail.strip_thinking_until, "strip_thinking_until"),
            (tail.model.as_ref().is_none_or(|model| model.as_deref() == tree.model(entries)), "model"),
            (tail.effort.as_ref().is_none_or(|effort| effort.as_deref() == tree.effort(entries)), "effort"),
        ];
        match checks.iter().find(|(same, _)| !same) {
            Some((_, field)) => Err(format!("{field} differs: tail {tail:?}")),
            None => Ok(()),
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 2000, ..Default::default() })]

        /// On hostile transcripts read in pieces of every size, the tail's answer is the whole
        /// scan's, and it answers whenever the file starts with a v3 header and has no other
        /// header line (an unlimited budget).
        #[test]
        fn tail_agrees_with_the_whole_scan(seed in 1u64.., piece in 1u64..600) {
            let mut random = Random(seed);
            let data = transcript(&mut random);
            let answer = read_tail(&MemorySource(&data), Limits { piece, budget: u64::MAX });
            match &answer {
                Some(tail) => proptest::prop_assert_eq!(check(&data, tail), Ok(())),
                None => {
                    let whole = scan_bytes(&data).unwrap();
                    let starts_with_header = whole.header.as_ref().is_some_and(|header| {
                        header.offset + header.length < data.len() as u64 &&
                        whole.skipped.iter().all(|skipped| skipped.line < header.line || !is_header_line(&data, skipped.offset, skipped.length))
                            && whole.format == Some(scan::SourceFormat::V3)
                            && whole.entries.first().is_none_or(|entry| entry.line > header.line)
                            && !whole.skipped.iter().any(|skipped| skipped.line < header.line && skipped.reason != scan::SkipReason::InvalidJson && skipped.reason != scan::SkipReason::NotObject)
                    });
                    proptest::prop_assert!(!starts_with_header, "declined a file it should answer: {}", String::from_utf8_lossy(&data));
                }
            }
            // A small budget: it answers less often, never differently.
            if let Some(tail) = read_tail(&MemorySource(&data), Limits { piece, budget: 1 + random.below(2000) }) {
                proptest::prop_assert_eq!(check(&data, &tail), Ok(()));
            }
        }
    }

    fn is_header_line(data: &[u8], offset: u64, length: u64) -> bool {
        scan::classify_alone(&data[offset as usize..(offset + length) as usize]).is_err()
    }

    #[test]
    fn a_long_session_is_answered_from_its_last_compaction() {
        let mut data = format!("{HEADER}\n");
        for index in 0..2000 {
            let parent = if index == 0 { "null".to_owned() } else { format!("\"e{}\"", index - 1) };
            data.push_str(&format!(
                r#"{{"type":"message","id":"e{index}","parentId":{parent},"timestamp":"t","message":{{"role":"assistant","content":[]}},"model":"m{index}"}}"#
            ));
            data.push('\n');
        }
        data.push_str(r#"{"type":"compaction","id":"c","parentId":"e1999","timestamp":"t","summary":"s","firstKeptEntryId":"e1990","tokensBefore":1}"#);
        data.push('\n');
        let tail = read_tail(&MemorySource(data.as_bytes()), Limits { piece: 4096, budget: u64::MAX }).unwrap();
        check(data.as_bytes(), &tail).unwrap();
        assert_eq!(tail.plan.len(), 11);
        assert!(tail.bytes_read < 3 * 4096, "read {} bytes", tail.bytes_read);
        assert_eq!(tail.model, Some(Some("m1999".to_owned())));
        assert_eq!(tail.effort, None, "the effort lies before the context: unknown");
        // Without a compaction the whole path is needed: past the budget, it declines.
        let plain = data.rsplit_once(r#"{"type":"compaction""#).unwrap().0;
        assert!(read_tail(&MemorySource(plain.as_bytes()), Limits { piece: 4096, budget: 64 << 10 }).is_none());
        let whole = read_tail(&MemorySource(plain.as_bytes()), Limits { piece: 4096, budget: u64::MAX }).unwrap();
        check(plain.as_bytes(), &whole).unwrap();
        assert_eq!(whole.effort, Some(None));
    }
}
