//! Tests of `text_extract`: which texts a line holds, and reading them by range and by offset.

use super::*;
use std::io::Write;

fn rows(line: &str) -> Vec<(TextKind, String)> {
    line_rows(line.as_bytes(), 0, ALL_KINDS).into_iter().map(|row| (row.kind, row.text)).collect()
}

#[test]
fn message_blocks_become_rows_of_their_kind() {
    let line = r#"{"type":"message","id":"e1","timestamp":"t","message":{"content":[{"type":"text","text":"hi"},{"type":"tool_use","name":"bash","input":{"command":"ls -l","n":[1,2]}},{"type":"tool_result","content":[{"type":"text","text":"a"},{"text":"b"}]}],"role":"assistant"}}"#;
    assert_eq!(
        rows(line),
        vec![
            (TextKind::Assistant, "hi".to_owned()),
            (TextKind::Tool, r#"bash {"command": "ls -l", "n": [1, 2]}"#.to_owned()),
            (TextKind::Result, "a\nb".to_owned()),
        ]
    );
    let user = r#"{"type":"message","id":"e2","message":{"role":"user","content":"  École  "}}"#;
    assert_eq!(rows(user), vec![(TextKind::User, "  École  ".to_owned())]);
}

#[test]
fn hidden_blank_idless_and_other_lines_give_nothing() {
    for line in [
        r#"{"type":"message","id":"e","message":{"role":"user","content":"x","meta":{"isMeta":true}}}"#,
        r#"{"type":"message","id":"e","message":{"role":"user","content":"   "}}"#,
        r#"{"type":"message","id":7,"message":{"role":"user","content":"x"}}"#,
        r#"{"type":"custom_message","id":"e","message":{"role":"user","content":"x"}}"#,
        r#"{"type":"message","id":"e","message":{"role":"user","content":"x"}"#,
        r#"not json "message""#,
    ] {
        assert!(rows(line).is_empty(), "{line}");
    }
    let shown = r#"{"type":"message","id":"e","message":{"role":"user","content":"x","meta":{"isMeta":1}}}"#;
    assert_eq!(rows(shown).len(), 1);
}

#[test]
fn long_texts_are_whole_and_tool_texts_are_cut() {
    let long = format!("{} needle", "word ".repeat(20_000));
    let line = format!(r#"{{"type":"message","id":"e","message":{{"role":"user","content":"{long}"}}}}"#);
    assert_eq!(rows(&line)[0].1, long);
    let result = "é".repeat(MAX_RESULT_CHARS + 5);
    let line = format!(
        r#"{{"type":"message","id":"e","message":{{"role":"user","content":[{{"type":"tool_result","content":"{result}"}}]}}}}"#
    );
    assert_eq!(rows(&line)[0].1.chars().count(), MAX_RESULT_CHARS);
}

#[test]
fn fold_lowercases_unicode() {
    assert_eq!(fold("ÉCOLE Straße"), "école straße");
    assert_eq!(fold("ABC"), "abc");
    assert!(matches!(fold("abc"), Cow::Borrowed(_)));
}

#[test]
fn ranges_searches_and_read_back_agree() {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    let first = r#"{"type":"message","id":"a","timestamp":"1","message":{"role":"user","content":"Alpha ÉCOLE"}}"#;
    let second = r#"{"type":"message","id":"b","timestamp":"2","message":{"role":"assistant","content":"beta école"}}"#;
    write!(file, "{first}\n{second}\n{{\"torn").unwrap();
    let all = extract(file.path(), 0, u64::MAX, ALL_KINDS).unwrap();
    assert_eq!(all.end, (first.len() + second.len() + 2) as u64);
    assert_eq!(all.rows.iter().map(|row| row.entry.as_str()).collect::<Vec<_>>(), ["a", "b"]);
    let part = extract(file.path(), 0, 1, ALL_KINDS).unwrap();
    assert_eq!((part.rows.len(), part.end), (1, first.len() as u64 + 1));
    let found = search(file.path(), 0, u64::MAX, "éc", 0b11, 10).unwrap();
    assert_eq!(found.rows.len(), 2);
    let newest = search(file.path(), 0, u64::MAX, "éc", 0b11, 1).unwrap();
    assert_eq!(newest.rows[0].entry, "b");
    let users = search(file.path(), 0, u64::MAX, "éc", 0b01, 10).unwrap();
    assert_eq!(users.rows.len(), 1);
    let back = rows_at(file.path(), &[first.len() as u64 + 1, 5, 10_000]).unwrap();
    assert_eq!(back[0][0].text, "beta école");
    assert!(back[1].is_empty() && back[2].is_empty());
}

#[test]
fn ordinals_do_not_depend_on_the_kinds_asked_for() {
    let line = r#"{"type":"message","id":"e","message":{"role":"user","content":[{"type":"tool_result","content":"out"},{"type":"text","text":"  "},{"type":"text","text":"hi"}]}}"#;
    let all: Vec<(u32, TextKind)> =
        line_rows(line.as_bytes(), 0, ALL_KINDS).iter().map(|row| (row.ordinal, row.kind)).collect();
    assert_eq!(all, [(0, TextKind::Result), (2, TextKind::User)]);
    let users: Vec<u32> = line_rows(line.as_bytes(), 0, 0b1).iter().map(|row| row.ordinal).collect();
    assert_eq!(users, [2]);
}

/// Chunks are read at their file offset's place in a cache line (the kernel's copy is several
/// times slower otherwise, see `scan::COPY_ALIGN`), whatever line offset a chunk starts at.
#[test]
fn chunk_reads_land_at_the_file_offsets_cache_line_offset() {
    let mut buffer = Vec::new();
    for (offset, want) in [(0, 10), (1, 100), (63, 5), (64, 1 << 20), (1_000_003, 17), (12_345, 64 << 10), (7, 0)] {
        let window = aligned_window(&mut buffer, offset, want);
        assert_eq!(window.len(), want);
        assert!(window.end <= buffer.len());
        let address = buffer[window.start..].as_ptr() as usize;
        assert_eq!(address % COPY_ALIGN, offset as usize % COPY_ALIGN, "offset {offset}");
    }
}
