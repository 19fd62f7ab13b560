//! What a fork needs of its source transcript, read from the file's ends (format §4.8), so that a
//! fork of a session of any size costs about the kernel's copy of it and no scan.
//!
//! Owns: [`fork_source`]: the header's `cwd` and where the body starts; the leaf (the last
//! valid entry line) and the model its path last used, read backwards from the end; where the
//! bytes the fork keeps end (a torn tail stays out, a valid unterminated last line gets its
//! newline); and, in one forward pass over the body on one thread, the latest `session_info`
//! name and a fresh entry id for the fork's naming entry (the first of the caller's candidates
//! whose JSON string the body does not hold). A name it reads of the whole file is remembered
//! for the name checks that follow in the same process (`listing::name_of`).
//!
//! Each fact is decided the way the scan decides it ([`scan::classify_alone`] on the lines it
//! looks at); where reading from the ends cannot be sure to agree with a whole scan (no v3 header
//! first, a header line among the last lines or the name's candidates), the answer is `None` and
//! the caller scans.

#[cfg(test)]
use super::listing::Text;
use super::listing::{header_of, lines_backward, remember_name};
use crate::envelope::{Extra, Role};
use crate::error::{Error, Result};
use crate::scan::{self, COPY_ALIGN};
use memchr::memmem;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// Bytes searched at a time by the forward pass (each piece overlaps the next by a needle).
const SEARCH_PIECE: u64 = 4 << 20;

/// How far back from the end the leaf's path is followed for its model (the last assistant
/// reply is nearly always in the last few turns; a path that leaves the window gets no model).
const MODEL_WINDOW: u64 = 16 << 20;

/// Bytes read at a time when the last line is searched backwards from the end.
const TAIL_CHUNK: u64 = 64 << 10;

const INFO: &[u8] = b"session_info";

/// What a fork copies of its source and what it writes after it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ForkSource {
    /// The header's `cwd`.
    pub cwd: String,
    /// The offset just past the header line.
    pub body_start: u64,
    /// The end of the bytes the fork keeps (a torn last line is left out).
    pub body_end: u64,
    /// Whether the kept bytes end in a line without its newline (the fork adds it).
    pub adds_newline: bool,
    /// The id of the last valid entry line (`None`: the file holds no entry).
    pub leaf: Option<String>,
    /// The latest `session_info` name, trimmed (`None`: none, or a blank one).
    pub name: Option<String>,
    /// The model the leaf's path last used, when found within [`MODEL_WINDOW`] bytes of the end.
    pub model: Option<String>,
    /// The first candidate id the body does not hold (`None`: every one does, or none was given).
    pub fresh_id: Option<String>,
}

/// The facts of the transcript's first `end` bytes (`None`: scan it to be sure); `candidates`:
/// entry ids to pick the fork's fresh one from (they should share their first characters: the
/// pass searches for that prefix once).
///
/// # Errors
/// The transcript cannot be opened or read.
pub fn fork_source(transcript: &Path, end: u64, candidates: &[String]) -> Result<Option<ForkSource>> {
    let file = super::open_transcript(transcript).map_err(|source| Error::io(transcript, source))?;
    let io = |source| Error::io(transcript, source);
    let metadata = file.metadata().map_err(io)?;
    let Some((cwd, body_start)) = header_of(&file, end) else { return Ok(None) };
    if body_start > end {
        return Ok(None); // the header is the unterminated last line
    }
    let Some((body_end, adds_newline)) = kept_end(&file, body_start, end).map_err(io)? else { return Ok(None) };
    let Some((leaf, model)) = leaf_and_model(&file, body_start, body_end).map_err(io)? else { return Ok(None) };
    let (infos, seen) = forward_pass(&file, body_start, body_end, candidates).map_err(io)?;
    let Some(name) = latest_name(&file, &infos, body_start, body_end).map_err(io)? else { return Ok(None) };
    if end == metadata.len() {
        remember_name(&metadata, &cwd, name.clone());
    }
    let fresh_id = candidates.iter().zip(seen).find(|(_, seen)| !seen).map(|(id, _)| id.clone());
    Ok(Some(ForkSource { cwd, body_start, body_end, adds_newline, leaf, name, model, fresh_id }))
}

/// Where the kept bytes end, and whether they end in a line without its newline: an
/// unterminated last line is kept when it is a valid entry (or blank), left out when the scan
/// would skip it as a torn tail; `None` when it is a header line (only a scan in order can say
/// what it is).
fn kept_end(file: &File, start: u64, end: u64) -> std::io::Result<Option<(u64, bool)>> {
    if end <= start {
        return Ok(Some((end, false)));
    }
    let mut last = [0u8; 1];
    file.read_exact_at(&mut last, end - 1)?;
    if last[0] == b'\n' {
        return Ok(Some((end, false)));
    }
    let tail_start = line_start(file, end, start)?;
    let mut tail = vec![0; (end - tail_start) as usize];
    file.read_exact_at(&mut tail, tail_start)?;
    if tail.iter().all(u8::is_ascii_whitespace) {
        return Ok(Some((end, true))); // blank: every reader ignores it; the newline ends it
    }
    Ok(match scan::classify_alone(&tail) {
        Ok(Some(_)) => Some((end, true)),
        Ok(None) => Some((tail_start, false)),
        Err(()) => None,
    })
}

/// The id of the last valid entry line in `[start, end)` and the model its path last used, as
/// `tree::SessionTree::model` finds it: the path followed backwards by `parentId` through the
/// lines before, as far as [`MODEL_WINDOW`] bytes from the end (`None` beyond, or on no model).
/// `Some((None, None))`: there is no entry; `None`: a header line came first, which only a scan
/// in order can place.
fn leaf_and_model(file: &File, start: u64, end: u64) -> std::io::Result<Option<(Option<String>, Option<String>)>> {
    let mut leaf: Option<String> = None;
    let mut wanted: Option<Box<str>> = None; // the next id on the path, backwards
    let mut model: Option<String> = None;
    let mut header = false;
    let mut read = 0u64;
    lines_backward(file, start, end, b"", &mut |line| {
        read += line.len() as u64 + 1;
        match scan::classify_alone(line) {
            Err(()) if leaf.is_none() => {
                header = true;
                true
            }
            Err(()) | Ok(None) => read > MODEL_WINDOW,
            Ok(Some(entry)) => {
                if leaf.is_none() {
                    leaf = Some(entry.id.to_string());
                    wanted = Some(entry.id.clone());
                }
                if wanted.as_deref() == Some(&*entry.id) {
                    model = match &entry.extra {
                        Extra::ModelChange { model: Some(model) } => Some(model.to_string()),
                        Extra::Message { role: Role::Assistant, model: Some(model), .. } => Some(model.to_string()),
                        _ => None,
                    };
                    wanted = entry.parent_id.clone();
                    if model.is_some() || wanted.is_none() {
                        return true;
                    }
                }
                read > MODEL_WINDOW
            }
        }
    })?;
    Ok((!header).then_some((leaf, model)))
}

/// One pass over `[start, end)` in pieces, on one thread (the kernel's copy of the same file has
/// the other core: on both, the pass slowed the copy more than it gained), the offsets of every `session_info` in
/// file order, and which of `candidates` occur as JSON strings.
fn forward_pass(file: &File, start: u64, end: u64, candidates: &[String]) -> std::io::Result<(Vec<u64>, Vec<bool>)> {
    let info = memmem::Finder::new(INFO);
    let shared = candidates.iter().skip(1).fold(candidates.first().map_or("", String::as_str), |prefix, id| {
        let length = prefix.bytes().zip(id.bytes()).take_while(|(a, b)| a == b).count();
        &prefix[..length]
    });
    let id_needle = format!("\"{shared}");
    let ids = memmem::Finder::new(id_needle.as_bytes());
    let longest = candidates.iter().map(|id| id.len() as u64 + 2).max().unwrap_or(0).max(INFO.len() as u64);
    let pieces: Vec<u64> = (start..end).step_by(SEARCH_PIECE as usize).collect();
    let found = pieces
        .iter()
        .map(|&offset| -> std::io::Result<(Vec<u64>, Vec<bool>)> {
            let own = (offset + SEARCH_PIECE).min(end) - offset; // matches starting here are this piece's
            let length = ((offset + own + longest - 1).min(end) - offset) as usize;
            // placed at the file offset's place in a cache line: the kernel copies it several
            // times faster so (`scan::COPY_ALIGN`)
            let mut buffer = vec![0; length + COPY_ALIGN];
            let shift = (offset as usize).wrapping_sub(buffer.as_ptr() as usize) % COPY_ALIGN;
            let piece = &mut buffer[shift..shift + length];
            file.read_exact_at(piece, offset)?;
            let piece = &*piece;
            let infos =
                info.find_iter(piece).take_while(|&at| (at as u64) < own).map(|at| offset + at as u64).collect();
            let mut seen = vec![false; candidates.len()];
            if !candidates.is_empty() {
                for at in ids.find_iter(piece).take_while(|&at| (at as u64) < own) {
                    let rest = &piece[at + 1..];
                    for (seen, id) in seen.iter_mut().zip(candidates) {
                        *seen |= rest.starts_with(id.as_bytes()) && rest.get(id.len()) == Some(&b'"');
                    }
                }
            }
            Ok((infos, seen))
        })
        .collect::<std::io::Result<Vec<_>>>()?;
    let mut infos = Vec::new();
    let mut seen = vec![false; candidates.len()];
    for (piece_infos, piece_seen) in found {
        infos.extend(piece_infos);
        seen.iter_mut().zip(piece_seen).for_each(|(seen, here)| *seen |= here);
    }
    Ok((infos, seen))
}

/// The latest `session_info` name among the lines holding `infos` (offsets in `[start, end)`, in
/// file order), read back from the last (`Some(None)`: none; `None`: a header line among them).
fn latest_name(file: &File, infos: &[u64], start: u64, end: u64) -> std::io::Result<Option<Option<String>>> {
    let mut checked = u64::MAX; // the start of the line looked at last
    for &at in infos.iter().rev() {
        if at >= checked {
            continue; // the same line again
        }
        let (line_start, line) = line_around(file, at, start, end)?;
        checked = line_start;
        match scan::classify_alone(&line) {
            Err(()) => return Ok(None),
            Ok(Some(entry)) => {
                if let Extra::SessionInfo { name } = entry.extra {
                    return Ok(Some(name.as_deref().map(str::trim).filter(|name| !name.is_empty()).map(str::to_owned)));
                }
            }
            Ok(None) => {}
        }
    }
    Ok(Some(None))
}

/// Where the line holding offset `at` starts: just past the last newline before `at`, or `start`.
fn line_start(file: &File, at: u64, start: u64) -> std::io::Result<u64> {
    let mut cursor = at;
    let mut chunk = Vec::new();
    while cursor > start {
        let begin = cursor.saturating_sub(TAIL_CHUNK).max(start);
        chunk.resize((cursor - begin) as usize, 0);
        file.read_exact_at(&mut chunk, begin)?;
        if let Some(newline) = memchr::memrchr(b'\n', &chunk) {
            return Ok(begin + newline as u64 + 1);
        }
        cursor = begin;
    }
    Ok(start)
}

/// The line of `[start, end)` holding offset `at`, without its newline, and where it starts.
fn line_around(file: &File, at: u64, start: u64, end: u64) -> std::io::Result<(u64, Vec<u8>)> {
    let line_start = line_start(file, at, start)?;
    let mut chunk = Vec::new();
    let mut line_end = end;
    let mut cursor = at;
    while cursor < end {
        let stop = (cursor + TAIL_CHUNK).min(end);
        chunk.resize((stop - cursor) as usize, 0);
        file.read_exact_at(&mut chunk, cursor)?;
        if let Some(newline) = memchr::memchr(b'\n', &chunk) {
            line_end = cursor + newline as u64;
            break;
        }
        cursor = stop;
    }
    let mut line = vec![0; (line_end - line_start) as usize];
    file.read_exact_at(&mut line, line_start)?;
    Ok((line_start, line))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const HEADER: &str = r#"{"type":"session","version":3,"id":"s","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}"#;

    fn entry(id: &str, parent: Option<&str>) -> String {
        let parent = parent.map_or("null".to_owned(), |parent| format!("\"{parent}\""));
        format!(
            r#"{{"type":"message","id":"{id}","parentId":{parent},"timestamp":"2026-01-01T00:00:01.000Z","message":{{"role":"user","content":"hi"}}}}"#
        )
    }

    fn info(id: &str, parent: &str, name: &str) -> String {
        format!(
            r#"{{"type":"session_info","id":"{id}","parentId":"{parent}","timestamp":"2026-01-01T00:00:02.000Z","name":"{name}"}}"#
        )
    }

    fn file_of(text: &str) -> tempfile::NamedTempFile {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(text.as_bytes()).unwrap();
        file
    }

    fn facts(text: &str) -> Option<ForkSource> {
        let file = file_of(text);
        fork_source(file.path(), text.len() as u64, &[]).unwrap()
    }

    /// The leaf, the name and the model a whole scan gives of the same bytes.
    fn scanned(text: &str) -> (Option<String>, Option<String>, Option<String>) {
        let summary = super::super::summarize(&scan::scan_bytes(text.as_bytes()).unwrap());
        (summary.leaf.map(|(_, id)| id), summary.name, summary.model)
    }

    fn reply(id: &str, parent: &str, model: &str) -> String {
        format!(
            r#"{{"type":"message","id":"{id}","parentId":"{parent}","timestamp":"2026-01-01T00:00:03.000Z","message":{{"role":"assistant","content":"ok"}},"model":"{model}"}}"#
        )
    }

    #[test]
    fn the_model_is_the_last_on_the_leafs_path_not_in_the_file() {
        // a1 ← r1 (model-a) ← u2 (the leaf's branch); a1 ← r2 (model-b), an abandoned branch written later
        let text = format!(
            "{HEADER}\n{}\n{}\n{}\n{}\n{}\n",
            entry("a1", None),
            reply("r1", "a1", "model-a"),
            reply("r2", "a1", "model-b"),
            entry("u3", Some("r1")),
            info("i4", "u3", "named"),
        );
        let found = facts(&text).unwrap();
        assert_eq!((found.leaf.as_deref(), found.model.as_deref()), (Some("i4"), Some("model-a")));
        assert_eq!(scanned(&text), (found.leaf, found.name, found.model));
        let none = format!("{HEADER}\n{}\n", entry("a1", None));
        assert_eq!(facts(&none).unwrap().model, None);
    }

    #[test]
    fn leaf_name_and_body_agree_with_a_scan() {
        let text = format!(
            "{HEADER}\n{}\n{}\nnot json\n{}\n{{\"type\":\"message\"}}\n\n",
            entry("a1", None),
            info("b2", "a1", " first "),
            info("c3", "b2", "second"),
        );
        let found = facts(&text).unwrap();
        assert_eq!(found.cwd, "/w");
        assert_eq!(found.body_start, HEADER.len() as u64 + 1);
        assert_eq!((found.body_end, found.adds_newline), (text.len() as u64, false));
        assert_eq!((found.leaf.as_deref(), found.name.as_deref()), (Some("c3"), Some("second")));
        assert_eq!(scanned(&text), (found.leaf, found.name, found.model));
    }

    #[test]
    fn a_torn_tail_stays_out_and_a_valid_unterminated_line_gets_its_newline() {
        let kept = format!("{HEADER}\n{}\n", entry("a1", None));
        let torn = format!("{kept}{{\"type\":\"mess");
        let found = facts(&torn).unwrap();
        assert_eq!((found.body_end, found.adds_newline), (kept.len() as u64, false));
        assert_eq!(found.leaf.as_deref(), Some("a1"));
        assert_eq!(scanned(&torn).0, found.leaf);

        let unterminated = format!("{kept}{}", entry("b2", Some("a1")));
        let found = facts(&unterminated).unwrap();
        assert_eq!((found.body_end, found.adds_newline), (unterminated.len() as u64, true));
        assert_eq!(found.leaf.as_deref(), Some("b2"));
        assert_eq!(scanned(&unterminated).0, found.leaf);

        let blank = format!("{kept}   ");
        assert_eq!(facts(&blank).map(|found| (found.body_end, found.adds_newline)), Some((blank.len() as u64, true)));
    }

    #[test]
    fn what_only_a_scan_can_place_is_left_to_it() {
        // no header first, a header among the last lines, a header unterminated at the end
        assert_eq!(facts(&format!("{}\n{HEADER}\n", entry("a1", None))), None);
        assert_eq!(facts(&format!("{HEADER}\n{}\n{HEADER}\n", entry("a1", None))), None);
        assert_eq!(facts(&format!("{HEADER}\n{}\n{HEADER}", entry("a1", None))), None);
        // a header alone, with or without its newline: nothing to copy, no entry, no name
        for alone in [HEADER.to_owned(), format!("{HEADER}\n")] {
            let found = facts(&alone).unwrap();
            assert_eq!((found.body_start, found.body_end), (alone.len() as u64, alone.len() as u64));
            assert_eq!((found.leaf, found.name), (None, None));
        }
    }

    #[test]
    fn only_the_first_end_bytes_count() {
        let first = format!("{HEADER}\n{}\n", entry("a1", None));
        let text = format!("{first}{}\n", info("b2", "a1", "later"));
        let file = file_of(&text);
        let found = fork_source(file.path(), first.len() as u64, &[]).unwrap().unwrap();
        assert_eq!((found.leaf.as_deref(), found.name), (Some("a1"), None));
        assert_eq!(found.body_end, first.len() as u64);
    }

    #[test]
    fn the_fresh_id_skips_every_id_the_body_holds_even_across_pieces() {
        let mut text = format!("{HEADER}\n");
        // the entry's id (23 bytes into its line) straddles the first piece's end
        let filler = SEARCH_PIECE as usize - 4 - 23 - 1;
        text.push_str(&" ".repeat(filler));
        text.push('\n');
        text.push_str(&entry("abcd1234", Some("abcd5678")));
        text.push('\n');
        text.push_str(&info("abcd9abc", "abcd1234", "far"));
        text.push('\n');
        let file = file_of(&text);
        let end = text.len() as u64;
        let ids = |list: &[&str]| list.iter().map(|id| (*id).to_owned()).collect::<Vec<_>>();
        let fresh = |list: &[&str]| fork_source(file.path(), end, &ids(list)).unwrap().unwrap().fresh_id;
        assert_eq!(fresh(&["abcd1234", "abcd5678", "abcd9abc", "abcd0000"]).as_deref(), Some("abcd0000"));
        assert_eq!(fresh(&["abcd1234"]), None);
        assert_eq!(fresh(&["abcd123"]).as_deref(), Some("abcd123")); // a prefix of a held id is not it
        assert_eq!(fresh(&[]), None);
        let found = fork_source(file.path(), end, &[]).unwrap().unwrap();
        assert_eq!((found.name.as_deref(), found.leaf.as_deref()), (Some("far"), Some("abcd9abc")));
    }

    #[test]
    fn a_name_read_of_the_whole_file_answers_the_name_checks_until_the_file_changes() {
        let text = format!("{HEADER}\n{}\n{}\n", entry("a1", None), info("b2", "a1", "kept"));
        let file = file_of(&text);
        let name_of = || super::super::name_of(file.path(), None).unwrap();
        assert!(fork_source(file.path(), text.len() as u64, &[]).unwrap().is_some());
        assert_eq!(name_of(), (Some("/w".to_owned()), Text::Known(Some("kept".to_owned()))));
        // what is remembered answers without reading: a planted name shows it
        let metadata = std::fs::metadata(file.path()).unwrap();
        remember_name(&metadata, "/w", Some("planted".to_owned()));
        assert_eq!(name_of().1, Text::Known(Some("planted".to_owned())));
        // an append changes the file's size: it is read again
        std::fs::OpenOptions::new().append(true).open(file.path()).unwrap().write_all(b"\n").unwrap();
        assert_eq!(name_of().1, Text::Known(Some("kept".to_owned())));
    }
}
