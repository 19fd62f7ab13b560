//! The string index of one JSON line (simdjson's stage 1, in safe code): one pass over the whole
//! line, 64 bytes at a time, that finds every quote that is not escaped and checks every string
//! body on the way, so that the cursor ([`crate::json::Cursor::indexed`]) crosses a string by
//! looking up its closing quote in a bitmap instead of scanning the string itself.
//!
//! Per block: masks of quotes, backslashes and common escape letters ([`json::block_masks`]),
//! the escaped bytes branch-free (the odd-backslash-run carry), the unescaped quotes, and the
//! bytes inside strings as their prefix xor (a shift-xor cascade). A control character inside a
//! string, a rare escape letter (`/`, `b`, `f`, `r`, `u`: checked one by one, `\u` with its four
//! hex digits), or a string still open at the line's end makes [`index_strings`] give up; the
//! exact walk then decides the line. Nothing else is decided here: the cursor still checks the
//! structure between strings byte by byte, and a line it refuses is walked again exactly, so an
//! error names the same byte it always did.
//!
//! Why the index agrees with the exact walk on every line the indexed cursor accepts: outside
//! strings a valid line has no backslash, so every quote the cursor meets there starts a string
//! whose first byte no backslash run reaches; escapes inside a body are then found from the body
//! alone, and the string the cursor skips is exactly the one between two consecutive unescaped
//! quotes, whose bytes this pass checked. `tests::indexed_parse_matches_the_exact_parse` pins it.
//!
//! Owns: the quote bitmap and the string checks of stage 1. Not the grammar (see `json.rs`).

use crate::json::{self, ESCAPE_CLASS};

/// Bits of a 64-byte block from its first byte up to (not including) each set bit's partner:
/// bit `i` is set when an odd number of set bits lie at or below `i`.
#[inline(always)]
fn prefix_xor(mut bits: u64) -> u64 {
    bits ^= bits << 1;
    bits ^= bits << 2;
    bits ^= bits << 4;
    bits ^= bits << 8;
    bits ^= bits << 16;
    bits ^= bits << 32;
    bits
}

/// Fills `quotes` with one bit per byte of `line` (word `i` bit `j` for byte `64 i + j`), set at
/// every quote that no backslash escapes, and checks every string body: no control character,
/// only valid escapes, closed before the line ends. Returns `false` when any check fails (the
/// bitmap is then incomplete and must not be used).
pub(crate) fn index_strings(line: &[u8], quotes: &mut Vec<u64>) -> bool {
    quotes.clear();
    quotes.reserve(line.len().div_ceil(64));
    let mut escape_carry = 0u64;
    // All ones while the previous block ended inside a string.
    let mut in_string = 0u64;
    let mut blocks = line.chunks_exact(64);
    let mut base = 0;
    for block in &mut blocks {
        let block: &[u8; 64] = block.try_into().unwrap_or(&[b' '; 64]);
        match index_block(line, block, base, &mut escape_carry, &mut in_string) {
            Some(unescaped) => quotes.push(unescaped),
            None => return false,
        }
        base += 64;
    }
    let rest = blocks.remainder();
    if !rest.is_empty() {
        // Spaces after the end: neither quotes, backslashes nor control characters.
        let mut padded = [b' '; 64];
        padded[..rest.len()].copy_from_slice(rest);
        match index_block(line, &padded, base, &mut escape_carry, &mut in_string) {
            Some(unescaped) => quotes.push(unescaped),
            None => return false,
        }
    }
    in_string == 0
}

/// One block of [`index_strings`]: its unescaped quotes, or `None` when a string check fails.
#[inline(always)]
fn index_block(line: &[u8], block: &[u8; 64], base: usize, escape_carry: &mut u64, in_string: &mut u64) -> Option<u64> {
    let (quotes, backslashes, common_letters, any_control) = json::block_masks(block);
    let escaped = json::escaped_bytes(backslashes, escape_carry);
    let unescaped = quotes & !escaped;
    // From each opening quote up to its closing quote (the opening one included).
    let inside = prefix_xor(unescaped) ^ *in_string;
    *in_string = ((inside as i64) >> 63) as u64;
    if any_control && json::control_mask(block) & inside != 0 {
        return None;
    }
    let mut rare = escaped & inside & !common_letters;
    while rare != 0 {
        let offset = rare.trailing_zeros() as usize;
        rare &= rare - 1;
        match ESCAPE_CLASS[usize::from(block[offset])] {
            1 => {}
            2 => {
                let hex_start = base + offset + 1;
                if !line.get(hex_start..hex_start + 4)?.iter().all(u8::is_ascii_hexdigit) {
                    return None;
                }
            }
            _ => return None,
        }
    }
    Some(unescaped)
}

/// The index of the first quote at or after `position` in a bitmap made by [`index_strings`].
#[inline]
pub(crate) fn next_quote(quotes: &[u64], position: usize) -> Option<usize> {
    let mut word = position / 64;
    let mut bits = quotes.get(word)? & (u64::MAX << (position % 64));
    while bits == 0 {
        word += 1;
        bits = *quotes.get(word)?;
    }
    Some(word * 64 + bits.trailing_zeros() as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::envelope::parse_fields;

    #[test]
    fn prefix_xor_marks_from_each_opening_quote_to_its_partner() {
        assert_eq!(prefix_xor(0b1000_0100), 0b0111_1100);
        assert_eq!(prefix_xor(1 << 63), 1 << 63);
        assert_eq!(prefix_xor(0), 0);
    }

    #[test]
    fn quotes_are_found_across_blocks_and_escapes() {
        let mut quotes = Vec::new();
        let body = "x".repeat(70);
        let line = format!(r#"{{"a":"{body}\"\\","b":1}}"#);
        assert!(index_strings(line.as_bytes(), &mut quotes));
        let positions: Vec<usize> = std::iter::successors(next_quote(&quotes, 0), |&at| next_quote(&quotes, at + 1))
            .take_while(|&at| at < line.len())
            .collect();
        let expected: Vec<usize> = line
            .char_indices()
            .filter(|&(at, ch)| ch == '"' && (at == 0 || !line[..at].ends_with('\\') || line[..at].ends_with("\\\\")))
            .map(|(at, _)| at)
            .collect();
        assert_eq!(positions, expected);
        assert!(!index_strings(br#"{"a":"open"#, &mut quotes));
        assert!(!index_strings(b"{\"a\":\"\x01\"}", &mut quotes));
        assert!(!index_strings(br#"{"a":"\x"}"#, &mut quotes));
        assert!(!index_strings(br#"{"a":"\u12"}"#, &mut quotes));
        assert!(index_strings(br#"{"a":"\u00e9\/\b\f\r"}"#, &mut quotes));
        // A control character outside strings is the cursor's business, not this pass's.
        assert!(index_strings(b"{\"a\":\t1}", &mut quotes));
    }

    /// Parses `line` with the index when it can be built (falling back to the exact walk when
    /// the indexed cursor refuses), as the scanner does, and compares with the exact parse:
    /// the same fields, or the same error at the same byte.
    fn assert_same_parse(line: &[u8], what: &str) {
        let exact = format!("{:?}", parse_fields(line));
        let mut quotes = Vec::new();
        if index_strings(line, &mut quotes) {
            let indexed = crate::envelope::parse_fields_indexed(line, &quotes);
            if indexed.is_ok() {
                assert_eq!(format!("{indexed:?}"), exact, "{what}: {:?}", String::from_utf8_lossy(line));
            } else {
                assert!(parse_fields(line).is_err(), "{what}: indexed refused a line the exact walk accepts");
            }
        }
    }

    /// A deterministic generator of transcript-like lines, then mutated.
    struct Random(u64);

    impl Random {
        fn below(&mut self, bound: u64) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % bound) as usize
        }

        fn text(&mut self) -> String {
            const PIECES: &[&str] = &[
                "a", "word ", "é", "😀", "\\n", "\\\"", "\\\\", "\\t", "\\/", "\\r", "\\b", "\\f", "\\u00e9",
                "\\ud800", "{", "}", "[", "]", ":", ",", "'", "\\\\\\\"", "    ",
            ];
            let length = [0, 3, 20, 90, 300][self.below(5)];
            (0..self.below(length as u64 + 1)).map(|_| PIECES[self.below(PIECES.len() as u64)]).collect()
        }

        fn line(&mut self) -> Vec<u8> {
            let kind = ["message", "custom", "label", "compaction", "session", "nope"][self.below(6)];
            let content = match self.below(4) {
                0 => format!("\"{}\"", self.text()),
                1 => format!(
                    r#"[{{"type":"text","text":"{}"}},{{"type":"tool_result","content":[{{"type":"text","text":"{}"}}],"n":-1.5e3}}]"#,
                    self.text(),
                    self.text()
                ),
                2 => format!(r#"[{{"type":"tool_use","input":{{"cmd":"{}","a":[true,false,null,0]}}}}]"#, self.text()),
                _ => "[]".to_owned(),
            };
            let line = format!(
                r#"{{"type":"{kind}","id":"e{}","parentId":"{}","timestamp":"t","message":{{"role":"user","content":{content},"meta":{{"isMeta":false,"messageId":"{}"}}}},"model":"m","label":"{}"}}"#,
                self.below(100),
                self.text(),
                self.text(),
                self.text()
            );
            let mut bytes = line.into_bytes();
            const BYTES: &[u8] = b"\"\\{}[],:0eE+-.tfnrul \t\r\x01\x1f\x7f\x80\xc3\xff";
            for _ in 0..self.below(4) {
                if bytes.is_empty() {
                    break;
                }
                let at = self.below(bytes.len() as u64);
                let byte = BYTES[self.below(BYTES.len() as u64)];
                match self.below(3) {
                    0 => {
                        bytes.remove(at);
                    }
                    1 => bytes[at] = byte,
                    _ => bytes.insert(at, byte),
                }
            }
            bytes
        }
    }

    #[test]
    fn indexed_parse_matches_the_exact_parse() {
        let mut random = Random(0x0dd_ba11);
        let mut indexed = 0;
        for case in 0..40_000 {
            let line = random.line();
            let mut quotes = Vec::new();
            indexed += usize::from(index_strings(&line, &mut quotes));
            assert_same_parse(&line, &format!("case {case}"));
        }
        assert!(indexed > 10_000, "only {indexed} lines indexed");
    }

    /// Every hostile fixture and saved fuzz input, line by line.
    #[test]
    fn fixture_lines_parse_the_same_indexed() {
        let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures");
        let mut lines = 0;
        for folder in ["hostile", "fuzz_regressions"] {
            for item in std::fs::read_dir(fixtures.join(folder)).unwrap() {
                let path = item.unwrap().path();
                if path.extension().is_some_and(|extension| extension == "jsonl") {
                    for line in std::fs::read(&path).unwrap().split(|&byte| byte == b'\n') {
                        assert_same_parse(line, &path.display().to_string());
                        lines += 1;
                    }
                }
            }
        }
        assert!(lines > 50, "{lines} fixture lines");
    }
}
