//! A minimal validating JSON cursor, built for one job: walk a transcript line at memory
//! speed, check that all of it is valid JSON (as `JSON.parse` would), and decode only the few
//! values the caller asks for. Payloads are skipped in place, strings sixteen bytes at a time
//! (SIMD through `wide`, safe code), containers iteratively (so nesting depth costs heap, never stack).
//!
//! Like the real CLI, which decodes files as UTF-8 with replacement characters before parsing,
//! invalid UTF-8 inside strings is not an error; decoded strings are decoded lossily.

use std::borrow::Cow;
use std::fmt;
use wide::u8x16;

/// Why a line is not valid JSON, and where (a byte index into the line).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JsonError {
    pub kind: JsonErrorKind,
    pub position: usize,
}

/// The kinds of JSON syntax error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JsonErrorKind {
    UnexpectedEnd,
    UnexpectedByte(u8),
    ControlCharacterInString,
    InvalidEscape,
    InvalidNumber,
    TrailingCharacters,
}

impl fmt::Display for JsonError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let column = self.position + 1;
        match self.kind {
            JsonErrorKind::UnexpectedEnd => write!(formatter, "unexpected end of line at column {column}"),
            JsonErrorKind::UnexpectedByte(byte) if byte.is_ascii_graphic() => {
                write!(formatter, "unexpected '{}' at column {column}", byte as char)
            }
            JsonErrorKind::UnexpectedByte(byte) => write!(formatter, "unexpected byte 0x{byte:02x} at column {column}"),
            JsonErrorKind::ControlCharacterInString => write!(formatter, "control character in a string at column {column}"),
            JsonErrorKind::InvalidEscape => write!(formatter, "invalid escape at column {column}"),
            JsonErrorKind::InvalidNumber => write!(formatter, "invalid number at column {column}"),
            JsonErrorKind::TrailingCharacters => write!(formatter, "trailing characters at column {column}"),
        }
    }
}

/// A scalar or a skipped container, decoded only as far as the scanner cares.
#[derive(Debug, Default, PartialEq)]
pub enum Loose<'a> {
    Str(Cow<'a, str>),
    Number(f64),
    Bool(bool),
    Null,
    /// An object or array (validated and skipped).
    #[default]
    Other,
}

impl Loose<'_> {
    /// The string value, if this is a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Loose::Str(text) => Some(text),
            _ => None,
        }
    }

    /// JavaScript truthiness, for flags such as `meta.isMeta`.
    pub fn truthy(&self) -> bool {
        match self {
            Loose::Str(text) => !text.is_empty(),
            Loose::Number(number) => *number != 0.0 && !number.is_nan(),
            Loose::Bool(flag) => *flag,
            Loose::Null => false,
            Loose::Other => true,
        }
    }
}

/// Offsets (as a bit mask) of the bytes in `chunk` that end a run of plain string bytes:
/// `"`, `\\`, and control characters below 0x20, which JSON forbids inside strings.
#[inline(always)]
fn special_bytes(chunk: [u8; 16]) -> u32 {
    let bytes = u8x16::new(chunk);
    let quote = bytes.cmp_eq(u8x16::splat(b'"'));
    let backslash = bytes.cmp_eq(u8x16::splat(b'\\'));
    let control = bytes.min(u8x16::splat(0x1f)).cmp_eq(bytes);
    (quote | backslash | control).move_mask() as u32
}

/// [`special_bytes`] over a 64-byte block, as one 64-bit mask.
#[inline(always)]
fn block_marks(block: &[u8]) -> u64 {
    let mut marks = 0u64;
    for (index, chunk) in block.chunks_exact(16).enumerate() {
        marks |= u64::from(special_bytes(chunk.try_into().unwrap_or([0; 16]))) << (16 * index);
    }
    marks
}

/// A position in one line of JSON.
pub struct Cursor<'a> {
    data: &'a [u8],
    position: usize,
}

impl<'a> Cursor<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Cursor { data, position: 0 }
    }

    #[cold]
    fn error(&self, kind: JsonErrorKind) -> JsonError {
        JsonError { kind, position: self.position }
    }

    #[cold]
    fn unexpected(&self) -> JsonError {
        match self.data.get(self.position) {
            Some(&byte) => self.error(JsonErrorKind::UnexpectedByte(byte)),
            None => self.error(JsonErrorKind::UnexpectedEnd),
        }
    }

    #[inline]
    pub fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.data.get(self.position) {
            self.position += 1;
        }
    }

    /// The next non-whitespace byte, not consumed.
    #[inline]
    pub fn peek(&mut self) -> Option<u8> {
        self.skip_whitespace();
        self.data.get(self.position).copied()
    }

    #[inline]
    fn expect(&mut self, byte: u8) -> Result<(), JsonError> {
        if self.peek() == Some(byte) {
            self.position += 1;
            Ok(())
        } else {
            Err(self.unexpected())
        }
    }

    /// Checks that only whitespace is left.
    pub fn finish(&mut self) -> Result<(), JsonError> {
        self.skip_whitespace();
        if self.position == self.data.len() {
            Ok(())
        } else {
            Err(self.error(JsonErrorKind::TrailingCharacters))
        }
    }

    /// Skips a string body (after its opening quote) up to and including the closing quote.
    /// Returns whether the string had escapes.
    ///
    /// Works on 64-byte blocks: one mask of the special bytes per block, then every escape in
    /// the block is handled from the mask without reloading (source code in tool results has an
    /// escape every few dozen bytes).
    #[inline]
    fn skip_string_body(&mut self) -> Result<bool, JsonError> {
        let data = self.data;
        let mut position = self.position;
        let mut escaped = false;
        loop {
            if let Some(block) = data.get(position..position + 64) {
                let mut marks = block_marks(block);
                let base = position;
                let mut next = position;
                while marks != 0 {
                    let offset = base + marks.trailing_zeros() as usize;
                    marks &= marks - 1;
                    if offset < next {
                        continue;
                    }
                    match data[offset] {
                        b'"' => {
                            self.position = offset + 1;
                            return Ok(escaped);
                        }
                        b'\\' => {
                            escaped = true;
                            next = self.skip_escape(offset + 1)?;
                        }
                        _ => {
                            self.position = offset;
                            return Err(self.error(JsonErrorKind::ControlCharacterInString));
                        }
                    }
                }
                position = next.max(base + 64);
                continue;
            }
            match data.get(position) {
                None => {
                    self.position = position;
                    return Err(self.error(JsonErrorKind::UnexpectedEnd));
                }
                Some(b'"') => {
                    self.position = position + 1;
                    return Ok(escaped);
                }
                Some(b'\\') => {
                    escaped = true;
                    position = self.skip_escape(position + 1)?;
                }
                Some(&byte) if byte < 0x20 => {
                    self.position = position;
                    return Err(self.error(JsonErrorKind::ControlCharacterInString));
                }
                Some(_) => position += 1,
            }
        }
    }

    /// Validates the escape whose letter is at `position`; returns the position after it.
    #[inline]
    fn skip_escape(&mut self, position: usize) -> Result<usize, JsonError> {
        match self.data.get(position) {
            Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => Ok(position + 1),
            Some(b'u') => match self.data.get(position + 1..position + 5) {
                Some(hex) if hex.iter().all(u8::is_ascii_hexdigit) => Ok(position + 5),
                _ => {
                    self.position = position;
                    Err(self.error(JsonErrorKind::InvalidEscape))
                }
            },
            _ => {
                self.position = position;
                Err(self.error(JsonErrorKind::InvalidEscape))
            }
        }
    }

    /// Reads a string value (the cursor is at its opening quote, after whitespace).
    pub fn read_string(&mut self) -> Result<Cow<'a, str>, JsonError> {
        self.expect(b'"')?;
        let start = self.position;
        let escaped = self.skip_string_body()?;
        let raw = &self.data[start..self.position - 1];
        Ok(if escaped { Cow::Owned(unescape(raw)) } else { String::from_utf8_lossy(raw) })
    }

    fn skip_number(&mut self) -> Result<(), JsonError> {
        let data = self.data;
        let mut position = self.position;
        let digits = |position: &mut usize| {
            let start = *position;
            while data.get(*position).is_some_and(u8::is_ascii_digit) {
                *position += 1;
            }
            *position - start
        };
        if data.get(position) == Some(&b'-') {
            position += 1;
        }
        match data.get(position) {
            Some(b'0') => position += 1,
            Some(b'1'..=b'9') => {
                digits(&mut position);
            }
            _ => {
                self.position = position;
                return Err(self.error(JsonErrorKind::InvalidNumber));
            }
        }
        if data.get(position) == Some(&b'.') {
            position += 1;
            if digits(&mut position) == 0 {
                self.position = position;
                return Err(self.error(JsonErrorKind::InvalidNumber));
            }
        }
        if let Some(b'e' | b'E') = data.get(position) {
            position += 1;
            if let Some(b'+' | b'-') = data.get(position) {
                position += 1;
            }
            if digits(&mut position) == 0 {
                self.position = position;
                return Err(self.error(JsonErrorKind::InvalidNumber));
            }
        }
        self.position = position;
        Ok(())
    }

    fn skip_literal(&mut self, literal: &[u8]) -> Result<(), JsonError> {
        if self.data[self.position..].starts_with(literal) {
            self.position += literal.len();
            Ok(())
        } else {
            Err(self.unexpected())
        }
    }

    /// Skips one scalar (the cursor is at its first byte); `Ok(false)` if the byte opens a container.
    fn skip_scalar(&mut self) -> Result<bool, JsonError> {
        match self.data.get(self.position) {
            Some(b'"') => {
                self.position += 1;
                self.skip_string_body()?;
            }
            Some(b't') => self.skip_literal(b"true")?,
            Some(b'f') => self.skip_literal(b"false")?,
            Some(b'n') => self.skip_literal(b"null")?,
            Some(b'-' | b'0'..=b'9') => self.skip_number()?,
            Some(b'{' | b'[') => return Ok(false),
            _ => return Err(self.unexpected()),
        }
        Ok(true)
    }

    /// Skips `"key":` inside an object (after `{` or `,`).
    fn skip_key(&mut self) -> Result<(), JsonError> {
        self.expect(b'"')?;
        self.skip_string_body()?;
        self.expect(b':')
    }

    /// Validates and skips one value of any depth, without recursion.
    pub fn skip_value(&mut self) -> Result<(), JsonError> {
        // true = inside an object, false = inside an array.
        let mut stack: Vec<bool> = Vec::new();
        'value: loop {
            self.skip_whitespace();
            if !self.skip_scalar()? {
                let is_object = self.data[self.position] == b'{';
                self.position += 1;
                let close = if is_object { b'}' } else { b']' };
                if self.peek() == Some(close) {
                    self.position += 1;
                } else {
                    stack.push(is_object);
                    if is_object {
                        self.skip_key()?;
                    }
                    continue 'value;
                }
            }
            loop {
                let Some(&in_object) = stack.last() else { return Ok(()) };
                match self.peek() {
                    Some(b',') => {
                        self.position += 1;
                        if in_object {
                            self.skip_key()?;
                        }
                        continue 'value;
                    }
                    Some(b'}') if in_object => self.position += 1,
                    Some(b']') if !in_object => self.position += 1,
                    _ => return Err(self.unexpected()),
                }
                stack.pop();
            }
        }
    }

    /// Reads any value as a [`Loose`]: scalars decoded, containers validated and skipped.
    pub fn read_loose(&mut self) -> Result<Loose<'a>, JsonError> {
        Ok(match self.peek() {
            Some(b'"') => Loose::Str(self.read_string()?),
            Some(b't') => {
                self.skip_literal(b"true")?;
                Loose::Bool(true)
            }
            Some(b'f') => {
                self.skip_literal(b"false")?;
                Loose::Bool(false)
            }
            Some(b'n') => {
                self.skip_literal(b"null")?;
                Loose::Null
            }
            Some(b'-' | b'0'..=b'9') => {
                let start = self.position;
                self.skip_number()?;
                let text = std::str::from_utf8(&self.data[start..self.position]).unwrap_or("NaN");
                Loose::Number(text.parse().unwrap_or(f64::NAN))
            }
            _ => {
                self.skip_value()?;
                Loose::Other
            }
        })
    }

    /// Walks an object (the cursor is before its `{`), calling `on_key` for every key with the
    /// cursor before the value. `on_key` returns `false` to have the value skipped. Returns
    /// `Ok(false)` without consuming anything when the next value is not an object.
    pub fn visit_object(
        &mut self,
        mut on_key: impl FnMut(&str, &mut Self) -> Result<bool, JsonError>,
    ) -> Result<bool, JsonError> {
        if self.peek() != Some(b'{') {
            return Ok(false);
        }
        self.position += 1;
        if self.peek() == Some(b'}') {
            self.position += 1;
            return Ok(true);
        }
        loop {
            let key = self.read_string()?;
            self.expect(b':')?;
            self.skip_whitespace();
            if !on_key(&key, self)? {
                self.skip_value()?;
            }
            match self.peek() {
                Some(b',') => self.position += 1,
                Some(b'}') => {
                    self.position += 1;
                    return Ok(true);
                }
                _ => return Err(self.unexpected()),
            }
        }
    }
}

/// Decodes a string body that has escapes (already validated), lossily for invalid UTF-8 and
/// for lone surrogates (which JavaScript keeps and Rust strings cannot hold).
fn unescape(raw: &[u8]) -> String {
    let mut bytes = Vec::with_capacity(raw.len());
    let mut index = 0;
    let mut pending_high: Option<u16> = None;
    let hex = |slice: &[u8]| u16::from_str_radix(std::str::from_utf8(slice).unwrap_or("0"), 16).unwrap_or(0);
    let push_char = |bytes: &mut Vec<u8>, character: char| {
        let mut buffer = [0; 4];
        bytes.extend_from_slice(character.encode_utf8(&mut buffer).as_bytes());
    };
    while index < raw.len() {
        if raw[index] != b'\\' {
            if let Some(_high) = pending_high.take() {
                push_char(&mut bytes, char::REPLACEMENT_CHARACTER);
            }
            bytes.push(raw[index]);
            index += 1;
            continue;
        }
        let letter = raw[index + 1];
        index += 2;
        if letter == b'u' {
            let unit = hex(&raw[index..index + 4]);
            index += 4;
            match (pending_high.take(), unit) {
                (Some(high), 0xDC00..=0xDFFF) => {
                    let code = 0x10000 + ((u32::from(high) - 0xD800) << 10) + (u32::from(unit) - 0xDC00);
                    push_char(&mut bytes, char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER));
                }
                (previous, 0xD800..=0xDBFF) => {
                    if previous.is_some() {
                        push_char(&mut bytes, char::REPLACEMENT_CHARACTER);
                    }
                    pending_high = Some(unit);
                }
                (previous, _) => {
                    if previous.is_some() {
                        push_char(&mut bytes, char::REPLACEMENT_CHARACTER);
                    }
                    push_char(&mut bytes, char::from_u32(u32::from(unit)).unwrap_or(char::REPLACEMENT_CHARACTER));
                }
            }
            continue;
        }
        if pending_high.take().is_some() {
            push_char(&mut bytes, char::REPLACEMENT_CHARACTER);
        }
        bytes.push(match letter {
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            other => other,
        });
    }
    if pending_high.is_some() {
        push_char(&mut bytes, char::REPLACEMENT_CHARACTER);
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(text: &str) -> bool {
        let mut cursor = Cursor::new(text.as_bytes());
        cursor.skip_value().and_then(|()| cursor.finish()).is_ok()
    }

    #[test]
    fn agrees_with_serde_json_on_validity() {
        let cases = [
            "{}", "[]", "{\"a\":[1,2,{\"b\":null}],\"c\":\"x\\n\\u00e9\"}", "1", "-0.5e+10", "\"\"", "true",
            "{\"a\":}", "[1,]", "{,}", "01", "1.", "-", "\"\\x\"", "\"\\u12\"", "\"a\u{1}\"", "{\"a\" 1}",
            "[1 2]", "nul", "{\"a\":1}}", "\"unterminated", "[[[[]]]]", "{\"k\":\"long string with no escapes at all, more than eight bytes\"}",
            "\"\\ud800\"", " { \"a\" : [ true , false ] } ",
        ];
        for case in cases {
            let expected = serde_json::from_str::<serde::de::IgnoredAny>(case).is_ok();
            assert_eq!(valid(case), expected, "{case}");
        }
    }

    #[test]
    fn deep_nesting_needs_no_stack() {
        let depth = 200_000;
        let text = "[".repeat(depth) + &"]".repeat(depth);
        assert!(valid(&text));
        assert!(!valid(&("[".repeat(depth) + &"]".repeat(depth - 1))));
    }

    #[test]
    fn strings_decode_escapes_and_surrogates() {
        let mut cursor = Cursor::new(br#""a\"b\\c\u00e9\ud83d\ude00\ud800x""#);
        assert_eq!(cursor.read_string().unwrap(), "a\"b\\cé😀\u{fffd}x");
    }

    #[test]
    fn control_characters_and_every_quote_position_are_found() {
        for prefix in 0..140 {
            let body = "x".repeat(prefix);
            assert!(valid(&format!("\"{body}\"")));
            assert!(!valid(&format!("\"{body}\t\"")));
            assert!(valid(&format!("\"{body}\\\"\"")));
            assert!(valid(&format!("\"{body}\\\\\"")));
            assert!(!valid(&format!("\"{body}\\\"")));
            assert!(valid(&format!("\"{body}\\u00e9{body}\\n{body}\"")));
            assert!(!valid(&format!("\"{body}\\u00g9{body}\"")));
        }
    }

    #[test]
    fn visits_keys_and_skips_the_rest() {
        let mut cursor = Cursor::new(br#"{"a":{"deep":[1]},"b":"keep","a2":3}"#);
        let mut seen = Vec::new();
        let is_object = cursor
            .visit_object(|key, cursor| {
                if key == "b" {
                    seen.push(cursor.read_loose()?);
                    return Ok(true);
                }
                Ok(false)
            })
            .unwrap();
        assert!(is_object);
        assert_eq!(seen, vec![Loose::Str(Cow::Borrowed("keep"))]);
        cursor.finish().unwrap();
    }
}
