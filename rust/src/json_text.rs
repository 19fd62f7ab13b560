//! JSON text pieces written exactly as CPython's `json` module writes them (with
//! `ensure_ascii=False`), for the native encoder in `python/json_encode.rs`: string literals and
//! float literals. Pure Rust, so `cargo test` pins them without an interpreter.
//!
//! Strings: `"` and `\` are escaped, `\b \f \n \r \t` by letter, every other C0 control as
//! `\u00XX` (lowercase hex); DEL and everything non-ASCII is written raw. Lone surrogates arrive
//! as the 3-byte sequences `surrogatepass` makes (`ED A0..BF xx`, never valid UTF-8) and are
//! written as `\udXXX`, as `JSON.stringify` does, so the output is always valid UTF-8.
//!
//! Floats: `float.__repr__` (the shortest text that round-trips; fixed notation for decimal
//! exponents -4..16, else `1e+16` / `5e-324` style), or `NaN` / `Infinity` / `-Infinity`.

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Per byte: 0 when written as itself, else the escape letter (`u` for `\u00XX`), or `S` for
/// 0xED, the lead byte of a surrogate's `surrogatepass` encoding.
static ESCAPE: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut byte = 0;
    while byte < 0x20 {
        table[byte] = b'u';
        byte += 1;
    }
    table[0x08] = b'b';
    table[0x09] = b't';
    table[0x0a] = b'n';
    table[0x0c] = b'f';
    table[0x0d] = b'r';
    table[b'"' as usize] = b'"';
    table[b'\\' as usize] = b'\\';
    table[0xed] = b'S';
    table
};

/// Whether any of the 8 bytes in `word` may need attention: a control character, `"`, `\`, or
/// 0xED (a possible surrogate). Exact for "none"; a false "some" only costs a byte-wise look.
#[inline]
fn needs_look(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let has_zero = |value: u64| value.wrapping_sub(ONES) & !value & HIGHS;
    let below_space = word.wrapping_sub(ONES * 0x20) & !word & HIGHS;
    (below_space
        | has_zero(word ^ (ONES * u64::from(b'"')))
        | has_zero(word ^ (ONES * u64::from(b'\\')))
        | has_zero(word ^ (ONES * 0xed)))
        != 0
}

/// Per byte: its JSON text packed little-endian into a word, and that text's length. Lets a
/// word of input be written without a branch per byte (escape-dense text mispredicts them).
static REPLACEMENT: [(u64, u8); 256] = {
    let mut table = [(0u64, 1u8); 256];
    let mut byte = 0;
    while byte < 256 {
        let escape = ESCAPE[byte];
        table[byte] = if escape == 0 || escape == b'S' {
            (byte as u64, 1)
        } else if escape == b'u' {
            let text = [b'\\', b'u', b'0', b'0', HEX[byte >> 4], HEX[byte & 0xf], 0, 0];
            (u64::from_le_bytes(text), 6)
        } else {
            (u64::from_le_bytes([b'\\', escape, 0, 0, 0, 0, 0, 0]), 2)
        };
        byte += 1;
    }
    table
};

/// Appends `text` (UTF-8, or UTF-8 with `surrogatepass`-encoded lone surrogates) as a quoted JSON
/// string literal. Input goes 8 bytes at a time: words with nothing to escape are copied in
/// stretches; others are written through `REPLACEMENT`; only words holding 0xED (a possible
/// surrogate) and the last few bytes are looked at byte by byte.
pub fn write_string(out: &mut Vec<u8>, text: &[u8]) {
    out.reserve(text.len() + 2);
    out.push(b'"');
    let mut index = 0;
    let mut plain_from = 0;
    while let Some(chunk) = text.get(index..index + 8) {
        let word = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
        if !needs_look(word) {
            index += 8;
            continue;
        }
        out.extend_from_slice(&text[plain_from..index]);
        if has_byte(word, 0xed) {
            index = write_bytes(out, text, index, index + 8);
        } else {
            write_word(out, chunk);
            index += 8;
        }
        plain_from = index;
    }
    out.extend_from_slice(&text[plain_from..index]);
    write_bytes(out, text, index, text.len());
    out.push(b'"');
}

#[inline]
fn has_byte(word: u64, byte: u8) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let value = word ^ (ONES * u64::from(byte));
    value.wrapping_sub(ONES) & !value & (ONES * 0x80) != 0
}

/// Writes 8 bytes with no 0xED among them, branch-free.
#[inline]
fn write_word(out: &mut Vec<u8>, chunk: &[u8]) {
    let base = out.len();
    out.resize(base + 6 * 8 + 8, 0);
    let buffer = &mut out[base..];
    let mut position = 0;
    for &byte in chunk {
        let (packed, length) = REPLACEMENT[usize::from(byte)];
        buffer[position..position + 8].copy_from_slice(&packed.to_le_bytes());
        position += usize::from(length);
    }
    out.truncate(base + position);
}

/// Writes `text[from..to]` byte by byte; returns where it stopped (past `to` when a surrogate's
/// three bytes straddle it).
fn write_bytes(out: &mut Vec<u8>, text: &[u8], from: usize, to: usize) -> usize {
    let mut index = from;
    while index < to {
        let byte = text[index];
        if ESCAPE[usize::from(byte)] == 0 {
            out.push(byte);
            index += 1;
        } else {
            index += write_escape(out, byte, &text[index..]);
        }
    }
    index
}

/// Writes the byte at the start of `rest` (one `ESCAPE` marks) and returns how many bytes it used.
#[inline]
fn write_escape(out: &mut Vec<u8>, byte: u8, rest: &[u8]) -> usize {
    match ESCAPE[usize::from(byte)] {
        b'S' => match rest {
            // ED 80..9F is U+D000..U+D7FF (valid UTF-8, written raw); ED A0..BF is a surrogate.
            &[_, second, third, ..] if second >= 0xa0 => {
                let code = (u32::from(byte & 0x0f) << 12) | (u32::from(second & 0x3f) << 6) | u32::from(third & 0x3f);
                out.extend_from_slice(&[
                    b'\\',
                    b'u',
                    HEX[(code >> 12) as usize & 0xf],
                    HEX[(code >> 8) as usize & 0xf],
                    HEX[(code >> 4) as usize & 0xf],
                    HEX[code as usize & 0xf],
                ]);
                3
            }
            _ => {
                out.push(byte);
                1
            }
        },
        b'u' => {
            out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(byte >> 4)],
                HEX[usize::from(byte & 0xf)],
            ]);
            1
        }
        escape => {
            out.extend_from_slice(&[b'\\', escape]);
            1
        }
    }
}

/// A float that JSON cannot hold (NaN or an infinity) while non-finite values are refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutOfRange;

/// Appends `value` as `json` writes a float: `float.__repr__`, or (when `allow_nan`) `NaN`,
/// `Infinity`, `-Infinity`.
pub fn write_float(out: &mut Vec<u8>, value: f64, allow_nan: bool) -> Result<(), OutOfRange> {
    if !value.is_finite() {
        if !allow_nan {
            return Err(OutOfRange);
        }
        out.extend_from_slice(if value.is_nan() {
            b"NaN"
        } else if value > 0.0 {
            b"Infinity"
        } else {
            b"-Infinity"
        });
        return Ok(());
    }
    write_float_repr(out, value);
    Ok(())
}

/// Python's `repr` of a finite float: the shortest digits that read back as `value`, the ones
/// nearest the value when several are as short (ties to even), laid out by CPython's rules
/// (`format_float_short`, mode `r`).
///
/// Rust's `{:e}` gives the shortest length but not always CPython's choice among equally short
/// digits (562949953421312.2 vs .3, an exact tie); `{:.N$e}` rounds correctly, ties to even. So:
/// the correctly rounded digits at the shortest length, unless those do not read back (next to a
/// power of two, where the interval is lopsided), when the shortest digits are the only other.
pub fn write_float_repr(out: &mut Vec<u8>, value: f64) {
    let shortest = format!("{value:e}"); // "-1.2345e-7", "1e16", "0e0", "-0e0"
    let length =
        shortest.split_once('e').map_or(1, |(mantissa, _)| mantissa.bytes().filter(u8::is_ascii_digit).count());
    let rounded = format!("{value:.precision$e}", precision = length - 1);
    let scientific = if rounded.parse::<f64>() == Ok(value) { rounded } else { shortest };
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let (negative, mantissa) = match mantissa.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, mantissa),
    };
    let mut digits: Vec<u8> = mantissa.bytes().filter(u8::is_ascii_digit).collect();
    while digits.len() > 1 && digits.last() == Some(&b'0') {
        digits.pop();
    }
    if negative {
        out.push(b'-');
    }
    // The value is 0.DIGITS x 10^point.
    let point = exponent + 1;
    if point <= -4 || point > 16 {
        out.push(digits[0]);
        if digits.len() > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits[1..]);
        }
        let shown = point - 1;
        out.push(b'e');
        out.push(if shown < 0 { b'-' } else { b'+' });
        let magnitude = shown.unsigned_abs();
        if magnitude < 10 {
            out.push(b'0');
        }
        out.extend_from_slice(magnitude.to_string().as_bytes());
    } else if point <= 0 {
        out.extend_from_slice(b"0.");
        out.extend(std::iter::repeat_n(b'0', point.unsigned_abs() as usize));
        out.extend_from_slice(&digits);
    } else {
        let point = point as usize;
        if point < digits.len() {
            out.extend_from_slice(&digits[..point]);
            out.push(b'.');
            out.extend_from_slice(&digits[point..]);
        } else {
            out.extend_from_slice(&digits);
            out.extend(std::iter::repeat_n(b'0', point - digits.len()));
            out.extend_from_slice(b".0");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn string(text: &[u8]) -> String {
        let mut out = Vec::new();
        write_string(&mut out, text);
        String::from_utf8(out).expect("valid UTF-8")
    }

    fn float(value: f64) -> String {
        let mut out = Vec::new();
        write_float(&mut out, value, true).expect("allowed");
        String::from_utf8(out).expect("ASCII")
    }

    #[test]
    fn strings_escape_as_python_json_does() {
        assert_eq!(string(b"plain"), "\"plain\"");
        assert_eq!(string(b"a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(string(b"\x08\x09\x0a\x0c\x0d"), r#""\b\t\n\f\r""#);
        assert_eq!(string(b"\x00\x1f\x0b\x7f"), "\"\\u0000\\u001f\\u000b\x7f\"");
        assert_eq!(string("é€😀\u{d7ff}".as_bytes()), "\"é€😀\u{d7ff}\"");
    }

    #[test]
    fn lone_surrogates_become_lowercase_escapes() {
        // "a\ud800b\udfff" encoded with surrogatepass
        assert_eq!(string(b"a\xed\xa0\x80b\xed\xbf\xbf"), r#""a\ud800b\udfff""#);
        // a pair stays two escapes, as the regex did
        assert_eq!(string(b"\xed\xa0\xbd\xed\xb8\x80"), r#""\ud83d\ude00""#);
        // U+D000..U+D7FF share the lead byte and stay raw
        assert_eq!(string("\u{d000}\u{d7a3}".as_bytes()), "\"\u{d000}\u{d7a3}\"");
    }

    /// The plain one-byte-at-a-time reading of the escape rules.
    fn reference(text: &[u8]) -> Vec<u8> {
        let mut out = vec![b'"'];
        let mut index = 0;
        while index < text.len() {
            let byte = text[index];
            match byte {
                b'"' => out.extend_from_slice(b"\\\""),
                b'\\' => out.extend_from_slice(b"\\\\"),
                b'\n' => out.extend_from_slice(b"\\n"),
                b'\r' => out.extend_from_slice(b"\\r"),
                b'\t' => out.extend_from_slice(b"\\t"),
                0x08 => out.extend_from_slice(b"\\b"),
                0x0c => out.extend_from_slice(b"\\f"),
                0..0x20 => out.extend_from_slice(format!("\\u{byte:04x}").as_bytes()),
                0xed if text.get(index + 1).is_some_and(|&second| second >= 0xa0) && index + 2 < text.len() => {
                    let code = (u32::from(byte & 0x0f) << 12)
                        | (u32::from(text[index + 1] & 0x3f) << 6)
                        | u32::from(text[index + 2] & 0x3f);
                    out.extend_from_slice(format!("\\u{code:04x}").as_bytes());
                    index += 2;
                }
                _ => out.push(byte),
            }
            index += 1;
        }
        out.push(b'"');
        out
    }

    #[test]
    fn the_word_at_a_time_writer_matches_the_byte_wise_rules() {
        let pieces: &[&[u8]] = &[
            b"a",
            b"bcdefghijklmnopqrstuvwxyz0123456789",
            b"\"",
            b"\\",
            b"\n",
            b"\x00",
            b"\x1f",
            b" ",
            b"\x7f",
            "é".as_bytes(),
            "😀".as_bytes(),
            "\u{d7ff}".as_bytes(),
            b"\xed\xa0\x80",
            b"\xed\xbf\xbf",
            b"!",
            b"~",
        ];
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20_000 {
            let mut text = Vec::new();
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let count = (state % 40) as usize;
            for step in 0..count {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                text.extend_from_slice(pieces[((state >> (step % 8)) % pieces.len() as u64) as usize]);
            }
            let mut out = Vec::new();
            write_string(&mut out, &text);
            assert_eq!(out, reference(&text), "{text:?}");
        }
    }

    #[test]
    fn floats_read_as_python_repr() {
        let cases: &[(f64, &str)] = &[
            (0.0, "0.0"),
            (-0.0, "-0.0"),
            (1.0, "1.0"),
            (1.5, "1.5"),
            (0.1, "0.1"),
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (123456789012345680.0, "1.2345678901234568e+17"),
            (9007199254740993.0, "9007199254740992.0"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (1.5e-7, "1.5e-07"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
            (-2.5e100, "-2.5e+100"),
            (123.456, "123.456"),
            (562949953421312.2, "562949953421312.2"), // a tie between two 16-digit strings
            (1e23, "1e+23"),
            (f64::from_bits(1), "5e-324"),
            (f64::NAN, "NaN"),
            (f64::INFINITY, "Infinity"),
            (f64::NEG_INFINITY, "-Infinity"),
        ];
        for &(value, expected) in cases {
            assert_eq!(float(value), expected, "{value:e}");
        }
        assert_eq!(write_float(&mut Vec::new(), f64::NAN, false), Err(OutOfRange));
    }
}
