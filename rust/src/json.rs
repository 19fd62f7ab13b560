//! A minimal validating JSON cursor, built for one job: walk a transcript line at memory
//! speed, check that all of it is valid JSON (as `JSON.parse` would), and decode only the few
//! values the caller asks for. Payloads are skipped in place; containers iteratively (so nesting
//! depth costs heap, never stack, and shallow nesting not even that).
//!
//! Strings, where nearly all the bytes are, go 64 bytes at a time (SIMD through `wide`, safe
//! code): one pass makes masks of quotes, backslashes and the common escape letters, finds the
//! escaped bytes branch-free (simdjson's odd/even backslash-run trick, carried across blocks)
//! and so the closing quote; only rare escape letters (`/`, `b`, `f`, `u`, invalid ones) are
//! looked at one by one. Anything unusual (a control character, a bad escape, no closing quote)
//! is walked again byte by byte, which decides exactly as before and places the error. (An AVX2
//! build of the block masks, dispatched at run time, measured no faster on a 1 GB scan: the
//! masks are not where the time goes, so the crate stays free of `unsafe`. Two branchier
//! scanners, `memchr2` from one quote or backslash to the next, and one mask of quotes,
//! backslashes and control characters per block walked bit by bit, were slower still on a
//! generated 1 GB transcript, which has a backslash every 34 bytes: `memchr2` 1.75x the
//! instructions, the bit walk 11% fewer instructions but about 25% more user time.)
//!
//! Like the real CLI, which decodes files as UTF-8 with replacement characters before parsing,
//! invalid UTF-8 inside strings is not an error; decoded strings are decoded lossily. Escapes
//! of lone surrogates are accepted too, as `JSON.parse` does (serde_json refuses them).
//!
//! Owns: JSON validity and value decoding for the scanner. `tests::accepts_exactly_what_serde_json_accepts`
//! pins validity to serde_json's (but for the two differences above) on generated and mutated text.

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
            JsonErrorKind::ControlCharacterInString => {
                write!(formatter, "control character in a string at column {column}")
            }
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

/// Bytes that are allowed after a backslash: 1 = a one-letter escape, 2 = `u` (four hex digits follow).
const ESCAPE_CLASS: [u8; 256] = {
    let mut table = [0u8; 256];
    let mut letters: &[u8] = b"\"\\/bfnrt";
    while let [letter, rest @ ..] = letters {
        table[*letter as usize] = 1;
        letters = rest;
    }
    table[b'u' as usize] = 2;
    table
};

/// Even bit positions of a 64-bit mask (simdjson's escape trick).
const EVEN_BITS: u64 = 0x5555_5555_5555_5555;

/// Masks of a 64-byte block: quotes, backslashes, and the common escape letters that need no
/// further check besides `"` and `\\` (`n`, `t`); plus whether any byte is below 0x20.
#[inline(always)]
fn block_masks(block: &[u8; 64]) -> (u64, u64, u64, bool) {
    let mut quotes = 0u64;
    let mut backslashes = 0u64;
    let mut letters = 0u64;
    // The bytewise minimum of the four lanes: a byte below 0x20 anywhere shows in it, at one
    // instruction a lane instead of a compare and an or.
    let mut minimum = u8x16::splat(u8::MAX);
    for index in 0..4 {
        let mut lane = [0u8; 16];
        lane.copy_from_slice(&block[16 * index..16 * index + 16]);
        let bytes = u8x16::new(lane);
        let quote = bytes.cmp_eq(u8x16::splat(b'"'));
        let backslash = bytes.cmp_eq(u8x16::splat(b'\\'));
        let letter = bytes.cmp_eq(u8x16::splat(b'n')) | bytes.cmp_eq(u8x16::splat(b't'));
        quotes |= u64::from(quote.move_mask() as u32 as u16) << (16 * index);
        backslashes |= u64::from(backslash.move_mask() as u32 as u16) << (16 * index);
        letters |= u64::from(letter.move_mask() as u32 as u16) << (16 * index);
        minimum = minimum.min(bytes);
    }
    let any_control = minimum.min(u8x16::splat(0x1f)).cmp_eq(minimum).any();
    (quotes, backslashes, letters | quotes | backslashes, any_control)
}

/// Bits of the bytes below 0x20 in a 64-byte block (only computed when [`block_masks`] saw one).
#[cold]
fn control_mask(block: &[u8; 64]) -> u64 {
    block.iter().enumerate().fold(0u64, |mask, (index, &byte)| mask | (u64::from(byte < 0x20) << index))
}

/// The characters escaped by a backslash in this block (the byte after each escaping
/// backslash), carrying an odd backslash run at the block end into the next block through
/// `carry` (simdjson's branchless escape finder).
#[inline(always)]
fn escaped_bytes(backslashes: u64, carry: &mut u64) -> u64 {
    let backslashes = backslashes & !*carry;
    let follows_escape = (backslashes << 1) | *carry;
    let odd_sequence_starts = backslashes & !EVEN_BITS & !follows_escape;
    let (sequences_starting_on_even_bits, overflow) = odd_sequence_starts.overflowing_add(backslashes);
    *carry = u64::from(overflow);
    let invert_mask = sequences_starting_on_even_bits << 1;
    (EVEN_BITS ^ invert_mask) & follows_escape
}

/// The bits of the quotes, backslashes and control characters among 16 bytes.
#[inline(always)]
fn special_mask(slice: &[u8]) -> u32 {
    let mut lane = [0u8; 16];
    lane.copy_from_slice(slice);
    let bytes = u8x16::new(lane);
    let special = bytes.cmp_eq(u8x16::splat(b'"'))
        | bytes.cmp_eq(u8x16::splat(b'\\'))
        | bytes.min(u8x16::splat(0x1f)).cmp_eq(bytes);
    special.move_mask() as u32
}

/// Finds the closing quote of the string body starting at `start`, 64 bytes at a time, in the
/// common case: the quote exists, no control character comes before it and every escape is
/// valid. Returns `(closing quote index, had escapes)`, or `None` when any of that fails or
/// is unsure, in which case the exact byte-by-byte walk decides (and places the error).
#[inline]
fn fast_string_end(data: &[u8], start: usize) -> Option<(usize, bool)> {
    // Short strings (keys, ids, roles) usually end within sixteen bytes: one probe settles them.
    if let Some(slice) = data.get(start..start + 16) {
        let mask = special_mask(slice);
        if mask != 0 {
            let offset = mask.trailing_zeros() as usize;
            if slice[offset] == b'"' {
                return Some((start + offset, false));
            }
        }
    }
    let mut position = start;
    let mut carry = 0u64;
    let mut had_escapes = false;
    let mut padded = [b' '; 64];
    loop {
        let block: &[u8; 64] = match data.get(position..position + 64) {
            Some(slice) => slice.try_into().ok()?,
            None => {
                let rest = data.get(position..).filter(|rest| !rest.is_empty())?;
                // At most once per string: the next block would start past the end.
                padded[..rest.len()].copy_from_slice(rest);
                &padded
            }
        };
        let (quotes, backslashes, common_letters, any_control) = block_masks(block);
        let escaped = escaped_bytes(backslashes, &mut carry);
        let ends = quotes & !escaped;
        let before_end = if ends == 0 { u64::MAX } else { (ends & ends.wrapping_neg()) - 1 };
        if any_control && control_mask(block) & before_end != 0 {
            return None;
        }
        had_escapes |= escaped & before_end != 0;
        // Only the rare escape letters (`/`, `b`, `f`, `u`, or invalid ones) are looked at one by one.
        let mut escapes = escaped & before_end & !common_letters;
        while escapes != 0 {
            let offset = escapes.trailing_zeros() as usize;
            escapes &= escapes - 1;
            match ESCAPE_CLASS[usize::from(block[offset])] {
                1 => {}
                2 => {
                    let hex_start = position + offset + 1;
                    if !data.get(hex_start..hex_start + 4)?.iter().all(u8::is_ascii_hexdigit) {
                        return None;
                    }
                }
                _ => return None,
            }
        }
        if ends != 0 {
            return Some((position + ends.trailing_zeros() as usize, had_escapes));
        }
        position += 64;
    }
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
    /// The common case goes through [`fast_string_end`] (64-byte blocks, escapes found
    /// branch-free); anything unusual is walked again byte by byte by
    /// [`Self::skip_string_body_exact`], which also says precisely what is wrong and where.
    #[inline]
    fn skip_string_body(&mut self) -> Result<bool, JsonError> {
        match fast_string_end(self.data, self.position) {
            Some((end, had_escapes)) => {
                self.position = end + 1;
                Ok(had_escapes)
            }
            None => self.skip_string_body_exact(),
        }
    }

    /// The reference walk over a string body: every byte in order, the first error wins.
    #[cold]
    #[inline(never)]
    fn skip_string_body_exact(&mut self) -> Result<bool, JsonError> {
        let data = self.data;
        let mut position = self.position;
        let mut escaped = false;
        loop {
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
        Ok(if escaped {
            Cow::Owned(unescape(raw))
        } else {
            // `from_utf8` has an ASCII fast path; the lossy decoder only runs on invalid bytes.
            match std::str::from_utf8(raw) {
                Ok(text) => Cow::Borrowed(text),
                Err(_) => String::from_utf8_lossy(raw),
            }
        })
    }

    /// Reads and decodes a string (the cursor is at its opening quote, after whitespace) in one
    /// pass, 16 bytes at a time: the raw body when it has no escapes (not checked for UTF-8),
    /// else the decoded bytes in `out` (cleared first). A control character, an invalid escape
    /// or no closing quote is an error, as in the scan; an escaped lone surrogate, which is valid
    /// JSON, is [`Decoded::LoneSurrogate`] (the string is not read further).
    ///
    /// After the first escape, each 16-byte block is appended to `out` whole as it is looked at
    /// (a fixed-size copy) and cut back at the special byte it holds: the text between two
    /// escapes (some 40 bytes in a transcript) was a `memcpy` call of its own. 64-byte blocks,
    /// here and in `next_special`, measured no fewer instructions on the 1 GB bench session's
    /// warm open (callgrind, issue 30): most runs end within the first block anyway.
    pub fn decode_string(&mut self, out: &mut Vec<u8>) -> Result<Decoded<'a>, JsonError> {
        self.expect(b'"')?;
        let data = self.data;
        let start = self.position;
        let mut at = self.special_at(start)?;
        if data[at] == b'"' {
            self.position = at + 1;
            return Ok(Decoded::Raw(&data[start..at]));
        }
        out.clear();
        out.extend_from_slice(&data[start..at]);
        loop {
            if data[at] != b'\\' {
                self.position = at;
                return Err(self.error(JsonErrorKind::ControlCharacterInString));
            }
            // The common one-letter escapes inline; `\\u` and invalid ones in `push_escape`.
            let simple = match data.get(at + 1) {
                Some(b'n') => Some(b'\n'),
                Some(&letter @ (b'"' | b'\\')) => Some(letter),
                Some(b't') => Some(b'\t'),
                _ => None,
            };
            let mut run = match simple {
                Some(byte) => {
                    out.push(byte);
                    at + 2
                }
                None => {
                    self.position = at + 1;
                    match push_escape(data, at + 1, out) {
                        Some(Some(next)) => next,
                        Some(None) => return Ok(Decoded::LoneSurrogate),
                        None => return Err(self.error(JsonErrorKind::InvalidEscape)),
                    }
                }
            };
            at = loop {
                let Some(block) = data.get(run..run + 16) else {
                    let found = self.special_at(run)?;
                    out.extend_from_slice(&data[run..found]);
                    break found;
                };
                let block: &[u8; 16] = block.try_into().expect("16 bytes");
                let mask = special_mask(block);
                let kept = out.len();
                out.extend_from_slice(block);
                if mask != 0 {
                    let offset = mask.trailing_zeros() as usize;
                    out.truncate(kept + offset);
                    break run + offset;
                }
                run += 16;
            };
            if data[at] == b'"' {
                self.position = at + 1;
                return Ok(Decoded::Unescaped);
            }
        }
    }

    /// The index of the first `"`, `\\` or control character at or after `position`, or the
    /// error of a string without its closing quote.
    fn special_at(&mut self, position: usize) -> Result<usize, JsonError> {
        next_special(self.data, position).ok_or_else(|| {
            self.position = self.data.len();
            self.error(JsonErrorKind::UnexpectedEnd)
        })
    }

    /// Reads a number's text (the cursor is at its first byte), validated as JSON.
    pub fn raw_number(&mut self) -> Result<&'a [u8], JsonError> {
        let start = self.position;
        self.skip_number()?;
        Ok(&self.data[start..self.position])
    }

    /// Consumes `byte` if it is the next byte that is not white space.
    #[inline]
    pub fn eat(&mut self, byte: u8) -> bool {
        let found = self.peek() == Some(byte);
        self.position += usize::from(found);
        found
    }

    /// Consumes the literal `true`, `false` or `null` (the cursor is at its first byte).
    pub fn literal(&mut self, literal: &[u8]) -> Result<(), JsonError> {
        self.skip_literal(literal)
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
        // Open containers as a bit stack (1 = object, 0 = array), the top in bit 0; every 64
        // levels spill to the heap, so only pathological nesting allocates.
        let mut bits: u64 = 0;
        let mut depth: usize = 0;
        let mut spilled: Vec<u64> = Vec::new();
        'value: loop {
            self.skip_whitespace();
            if !self.skip_scalar()? {
                let is_object = self.data[self.position] == b'{';
                self.position += 1;
                let close = if is_object { b'}' } else { b']' };
                if self.peek() == Some(close) {
                    self.position += 1;
                } else {
                    if depth > 0 && depth % 64 == 0 {
                        spilled.push(bits);
                        bits = 0;
                    }
                    bits = (bits << 1) | u64::from(is_object);
                    depth += 1;
                    if is_object {
                        self.skip_key()?;
                    }
                    continue 'value;
                }
            }
            while depth > 0 {
                let in_object = bits & 1 == 1;
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
                bits >>= 1;
                depth -= 1;
                if depth > 0 && depth % 64 == 0 {
                    bits = spilled.pop().unwrap_or(0);
                }
            }
            return Ok(());
        }
    }

    /// Validates and skips one value, returning its raw bytes (the text extractor keeps a tool
    /// call's input as written).
    pub fn raw_value(&mut self) -> Result<&'a [u8], JsonError> {
        self.skip_whitespace();
        let start = self.position;
        self.skip_value()?;
        Ok(&self.data[start..self.position])
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

    /// Walks an array (the cursor is before its `[`), calling `on_item` for every element with
    /// the cursor before it; `on_item` must consume the element. Returns `Ok(false)` without
    /// consuming anything when the next value is not an array.
    pub fn visit_array(
        &mut self,
        mut on_item: impl FnMut(&mut Self) -> Result<(), JsonError>,
    ) -> Result<bool, JsonError> {
        if self.peek() != Some(b'[') {
            return Ok(false);
        }
        self.position += 1;
        if self.peek() == Some(b']') {
            self.position += 1;
            return Ok(true);
        }
        loop {
            self.skip_whitespace();
            on_item(self)?;
            match self.peek() {
                Some(b',') => self.position += 1,
                Some(b']') => {
                    self.position += 1;
                    return Ok(true);
                }
                _ => return Err(self.unexpected()),
            }
        }
    }

    /// Reads a value and says whether it is a string with nothing but white space in it
    /// (`Some(true)`), a string with more (`Some(false)`), or no string (`None`). Decodes the
    /// string only when its first byte that is not ASCII white space is an escape or non-ASCII,
    /// so a text block costs no more than skipping it.
    pub fn read_blank_string(&mut self) -> Result<Option<bool>, JsonError> {
        if self.peek() != Some(b'"') {
            self.skip_value()?;
            return Ok(None);
        }
        let start = self.position + 1;
        self.position += 1;
        self.skip_string_body()?;
        let raw = &self.data[start..self.position - 1];
        match raw.iter().find(|byte| !matches!(byte, b' ' | b'\t' | b'\r' | b'\n')) {
            None => Ok(Some(true)),
            Some(byte) if byte.is_ascii() && *byte != b'\\' => Ok(Some(false)),
            Some(_) => {
                let text = if raw.contains(&b'\\') { Cow::Owned(unescape(raw)) } else { String::from_utf8_lossy(raw) };
                Ok(Some(text.trim().is_empty()))
            }
        }
    }

    /// Reads an object key as bytes: the raw bytes when it has no escapes (no UTF-8 check: keys
    /// are only compared with ASCII names, which invalid bytes can never equal, decoded or not),
    /// the decoded string otherwise.
    #[inline]
    fn read_key(&mut self) -> Result<Cow<'a, [u8]>, JsonError> {
        self.expect(b'"')?;
        let start = self.position;
        let escaped = self.skip_string_body()?;
        let raw = &self.data[start..self.position - 1];
        Ok(if escaped { Cow::Owned(unescape(raw).into_bytes()) } else { Cow::Borrowed(raw) })
    }

    /// Walks an object (the cursor is before its `{`), calling `on_key` for every key with the
    /// cursor before the value. `on_key` returns `false` to have the value skipped. Returns
    /// `Ok(false)` without consuming anything when the next value is not an object.
    pub fn visit_object(
        &mut self,
        mut on_key: impl FnMut(&str, &mut Self) -> Result<bool, JsonError>,
    ) -> Result<bool, JsonError> {
        self.visit_object_raw(|key, cursor| match std::str::from_utf8(key) {
            Ok(key) => on_key(key, cursor),
            Err(_) => on_key(&String::from_utf8_lossy(key), cursor),
        })
    }

    /// [`Self::visit_object`] with keys as bytes (raw when unescaped, decoded otherwise): the
    /// scanner's hot path.
    pub fn visit_object_raw(
        &mut self,
        mut on_key: impl FnMut(&[u8], &mut Self) -> Result<bool, JsonError>,
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
            let key = self.read_key()?;
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

/// What [`Cursor::decode_string`] read.
#[derive(Debug, PartialEq, Eq)]
pub enum Decoded<'a> {
    /// The string had no escapes: its bytes as they are in the line.
    Raw(&'a [u8]),
    /// The string had escapes: its decoded bytes are in the caller's buffer.
    Unescaped,
    /// An escape is a lone surrogate, which only a host string that holds surrogates can keep.
    LoneSurrogate,
}

/// The index of the first `"`, `\\` or control character at or after `position`.
#[inline]
fn next_special(data: &[u8], mut position: usize) -> Option<usize> {
    while let Some(slice) = data.get(position..position + 16) {
        let mask = special_mask(slice);
        if mask != 0 {
            return Some(position + mask.trailing_zeros() as usize);
        }
        position += 16;
    }
    let rest = data.get(position..)?;
    rest.iter().position(|&byte| byte == b'"' || byte == b'\\' || byte < 0x20).map(|offset| position + offset)
}

/// Decodes the escape whose letter is at `position` onto `out`: `Some(Some(next position))`,
/// `Some(None)` for a lone surrogate, `None` for an invalid escape.
fn push_escape(data: &[u8], position: usize, out: &mut Vec<u8>) -> Option<Option<usize>> {
    let byte = match *data.get(position)? {
        letter @ (b'"' | b'\\' | b'/') => letter,
        b'b' => 0x08,
        b'f' => 0x0c,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        b'u' => {
            let unit = hex_unit(data.get(position + 1..)?)?;
            let (code, next) = match unit {
                0xD800..=0xDBFF => {
                    let low = data
                        .get(position + 5..)
                        .and_then(|rest| rest.strip_prefix(b"\\u"))
                        .and_then(hex_unit)
                        .filter(|low| (0xDC00..=0xDFFF).contains(low));
                    match low {
                        Some(low) => {
                            (0x10000 + ((u32::from(unit) - 0xD800) << 10) + (u32::from(low) - 0xDC00), position + 11)
                        }
                        None => return Some(None),
                    }
                }
                0xDC00..=0xDFFF => return Some(None),
                _ => (u32::from(unit), position + 5),
            };
            let mut buffer = [0; 4];
            out.extend_from_slice(char::from_u32(code)?.encode_utf8(&mut buffer).as_bytes());
            return Some(Some(next));
        }
        _ => return None,
    };
    out.push(byte);
    Some(Some(position + 1))
}

/// The four hex digits at the start of `bytes` as a UTF-16 code unit.
fn hex_unit(bytes: &[u8]) -> Option<u16> {
    bytes.get(..4)?.iter().try_fold(0u16, |unit, &digit| Some(unit << 4 | (digit as char).to_digit(16)? as u16))
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
            "{}",
            "[]",
            "{\"a\":[1,2,{\"b\":null}],\"c\":\"x\\n\\u00e9\"}",
            "1",
            "-0.5e+10",
            "\"\"",
            "true",
            "{\"a\":}",
            "[1,]",
            "{,}",
            "01",
            "1.",
            "-",
            "\"\\x\"",
            "\"\\u12\"",
            "\"a\u{1}\"",
            "{\"a\" 1}",
            "[1 2]",
            "nul",
            "{\"a\":1}}",
            "\"unterminated",
            "[[[[]]]]",
            "{\"k\":\"long string with no escapes at all, more than eight bytes\"}",
            "\"\\ud800\"",
            " { \"a\" : [ true , false ] } ",
        ];
        for case in cases {
            let expected = serde_json::from_str::<serde::de::IgnoredAny>(case).is_ok();
            assert_eq!(valid(case), expected, "{case}");
        }
    }

    /// Makes an input comparable with serde_json, which differs from `JSON.parse` (and from us)
    /// on purpose in two ways: invalid UTF-8 becomes U+FFFD (as the real CLI decodes files) and
    /// escapes of lone surrogates, which JavaScript accepts, become an ordinary escape.
    fn as_serde_sees_it(input: &[u8]) -> String {
        let mut text = String::from_utf8_lossy(input).into_owned().into_bytes();
        let mut index = 0;
        while index < text.len() {
            if text[index] == b'\\' {
                let hex = text.get(index + 2..index + 6).map(|hex| hex.to_vec());
                if text.get(index + 1) == Some(&b'u') {
                    if let Some(hex) = hex.filter(|hex| hex.iter().all(u8::is_ascii_hexdigit)) {
                        if matches!(hex[0], b'd' | b'D') && matches!(hex[1], b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F') {
                            text[index + 2..index + 6].copy_from_slice(b"0041");
                        }
                    }
                }
                index += 2;
            } else {
                index += 1;
            }
        }
        String::from_utf8(text).unwrap_or_default()
    }

    /// A deterministic generator of JSON texts, valid and then mutated.
    struct Generator(u64);

    impl Generator {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn below(&mut self, bound: u64) -> usize {
            (self.next() % bound) as usize
        }

        fn pick<'t>(&mut self, items: &[&'t str]) -> &'t str {
            items[self.below(items.len() as u64)]
        }

        fn whitespace(&mut self, out: &mut String) {
            if self.below(6) == 0 {
                out.push_str(self.pick(&[" ", "\t", "\r", "  ", "\n"]));
            }
        }

        fn string(&mut self, out: &mut String) {
            out.push('"');
            let length = match self.below(4) {
                0 => self.below(4),
                1 => self.below(20),
                _ => self.below(300),
            };
            for _ in 0..length {
                out.push_str(self.pick(&[
                    "a",
                    "b",
                    "z",
                    " ",
                    "0",
                    "é",
                    "→",
                    "😀",
                    "\\n",
                    "\\\"",
                    "\\\\",
                    "\\/",
                    "\\t",
                    "\\r",
                    "\\b",
                    "\\f",
                    "\\u00e9",
                    "\\uD83D\\uDE00",
                    "\\ud800",
                    "\\uDC00",
                    "'",
                    "{",
                    "]",
                    ":",
                    ",",
                ]));
            }
            out.push('"');
        }

        fn value(&mut self, out: &mut String, depth: usize) {
            self.whitespace(out);
            match self.below(if depth > 4 { 6 } else { 9 }) {
                0 => out.push_str(self.pick(&["true", "false", "null"])),
                1 | 2 => out.push_str(self.pick(&[
                    "0",
                    "-0",
                    "1",
                    "-12",
                    "3.25",
                    "1e5",
                    "-2.5E-3",
                    "10e+2",
                    "123456789012345678901234567890",
                ])),
                3..=5 => self.string(out),
                6 | 7 => {
                    out.push('{');
                    for index in 0..self.below(5) {
                        if index > 0 {
                            out.push(',');
                        }
                        self.whitespace(out);
                        self.string(out);
                        self.whitespace(out);
                        out.push(':');
                        self.value(out, depth + 1);
                    }
                    self.whitespace(out);
                    out.push('}');
                }
                _ => {
                    out.push('[');
                    for index in 0..self.below(5) {
                        if index > 0 {
                            out.push(',');
                        }
                        self.value(out, depth + 1);
                    }
                    self.whitespace(out);
                    out.push(']');
                }
            }
            self.whitespace(out);
        }

        fn mutate(&mut self, bytes: &mut Vec<u8>) {
            const BYTES: &[u8] = b"\"\\{}[],:0123456789eE+-.tfnrul \t\r\x01\x1f\x7f\x80\xc3\xff";
            for _ in 0..=self.below(3) {
                let position = self.below(bytes.len() as u64 + 1);
                let byte = BYTES[self.below(BYTES.len() as u64)];
                match self.below(3) {
                    0 if position < bytes.len() => {
                        bytes.remove(position);
                    }
                    1 if position < bytes.len() => bytes[position] = byte,
                    _ => bytes.insert(position, byte),
                }
            }
        }
    }

    #[test]
    fn accepts_exactly_what_serde_json_accepts() {
        let mut generator = Generator(0x2545_f491_4f6c_dd1d);
        let (mut valid, mut invalid) = (0, 0);
        for case in 0..60_000 {
            let mut text = String::new();
            generator.value(&mut text, 0);
            let mut bytes = text.into_bytes();
            if case % 3 != 0 {
                generator.mutate(&mut bytes);
            }
            let expected = serde_json::from_str::<serde::de::IgnoredAny>(&as_serde_sees_it(&bytes)).is_ok();
            let mut cursor = Cursor::new(&bytes);
            let actual = cursor.skip_value().and_then(|()| cursor.finish()).is_ok();
            assert_eq!(actual, expected, "case {case}: {:?}", String::from_utf8_lossy(&bytes));
            if expected {
                valid += 1;
            } else {
                invalid += 1;
            }
            // The fast string path and the exact walk agree on every error and its position.
            if bytes.first() == Some(&b'"') {
                let mut fast = Cursor::new(&bytes[1..]);
                let mut exact = Cursor::new(&bytes[1..]);
                let fast_result = fast.skip_string_body();
                assert_eq!(fast_result, exact.skip_string_body_exact(), "case {case}");
                assert_eq!(fast.position, exact.position, "case {case}");
            }
        }
        assert!(valid > 10_000 && invalid > 10_000, "{valid} valid, {invalid} invalid");
    }

    /// The fast string scanner's outcome and the exact walk's, which must agree whenever the
    /// scanner decides (`Some`); `None` hands the string to the exact walk, which must refuse it.
    fn check_scanners_agree(bytes: &[u8], start: usize, what: &str) {
        let fast = fast_string_end(bytes, start);
        let mut exact = Cursor::new(bytes);
        exact.position = start;
        let walked = exact.skip_string_body_exact();
        match fast {
            Some((end, had_escapes)) => {
                assert_eq!(walked, Ok(had_escapes), "{what}: {:?} from {start}", String::from_utf8_lossy(bytes));
                assert_eq!(exact.position, end + 1, "{what}");
            }
            None => assert!(walked.is_err(), "{what}: the exact walk accepts what the scanner passed on"),
        }
    }

    #[test]
    fn the_block_string_scanner_matches_the_exact_walk() {
        // Escapes, lone and doubled backslashes, cut `\u` escapes, control characters and
        // invalid UTF-8, placed at every offset around the 16-byte probe and the 64-byte blocks
        // (a lone backslash at the very end included).
        const TAILS: &[&[u8]] = &[
            b"\"",
            b"\\",
            b"\\\\",
            b"\\\"",
            b"\\\\\"",
            b"\\\\\\\"",
            b"\\u",
            b"\\u00",
            b"\\u00e9\"",
            b"\\u00g9\"",
            b"\\x\"",
            b"\\n\"",
            b"\x01\"",
            b"\x1f",
            b"\x7f\"",
            b"\x80\xff\"",
            b"\xe2\x82",
            b"\t\\\"",
            b" \"",
        ];
        for prefix in 0..200 {
            for tail in TAILS {
                let mut bytes = vec![b'x'; prefix];
                bytes.extend_from_slice(tail);
                check_scanners_agree(&bytes, 0, "adversarial");
                bytes.extend_from_slice(b"tail\"");
                check_scanners_agree(&bytes, 0, "adversarial, closed later");
            }
        }
        // Random bodies: runs of plain bytes between tokens drawn from the same hostile set.
        const TOKENS: &[&[u8]] = &[
            b"\"",
            b"\\",
            b"\\\\",
            b"\\\"",
            b"\\n",
            b"\\t",
            b"\\/",
            b"\\b",
            b"\\f",
            b"\\r",
            b"\\u",
            b"\\u00e9",
            b"\\uD83D\\uDE00",
            b"\\ud800",
            b"\\u12",
            b"\\uZZZZ",
            b"\\x",
            b"\\ ",
            b"\x00",
            b"\x01",
            b"\x1f",
            b"\x20",
            b"\x7f",
            b"\x80",
            b"\xc3",
            b"\xc3\xa9",
            b"\xff",
            b"\xf0\x9f\x98",
            b"\n",
            b"\r",
            b"\t",
            b"{",
            b"'",
        ];
        let mut generator = Generator(0x9e37_79b9_7f4a_7c15);
        for case in 0..100_000 {
            let mut bytes = Vec::new();
            for _ in 0..generator.below(8) {
                let run = match generator.below(3) {
                    0 => generator.below(4),
                    1 => generator.below(20),
                    _ => generator.below(130),
                };
                bytes.extend(std::iter::repeat_n(b"az 9~"[generator.below(5)], run));
                // Control characters and quotes rarer than the rest, so that long strings get through.
                let token = TOKENS[generator.below(TOKENS.len() as u64)];
                if !token.iter().any(|&byte| byte < 0x20 || byte == b'"') || generator.below(6) == 0 {
                    bytes.extend_from_slice(token);
                }
            }
            if generator.below(3) != 0 {
                bytes.push(b'"');
            }
            let start = if bytes.is_empty() { 0 } else { generator.below(bytes.len() as u64 / 4 + 1) };
            check_scanners_agree(&bytes, start, &format!("case {case}"));
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

    #[test]
    fn decode_string_decodes_every_escape_and_refuses_lone_surrogates() {
        let decode = |text: &str| {
            let mut cursor = Cursor::new(text.as_bytes());
            let mut out = b"stale".to_vec();
            let decoded = cursor.decode_string(&mut out).unwrap();
            cursor.finish().unwrap();
            match decoded {
                Decoded::Raw(raw) => format!("raw {}", String::from_utf8(raw.to_vec()).unwrap()),
                Decoded::Unescaped => format!("unescaped {}", String::from_utf8(out).unwrap()),
                Decoded::LoneSurrogate => "lone".to_owned(),
            }
        };
        assert_eq!(decode(r#""a\"b\\c\/d\be\ff\ng\rh\ti""#), "unescaped a\"b\\c/d\u{8}e\u{c}f\ng\rh\ti");
        assert_eq!(decode(r#""\u00e9\u20AC\ud83d\ude00\u0000 end""#), "unescaped é€😀\0 end");
        assert_eq!(decode(r#""\\u0041""#), "unescaped \\u0041");
        assert_eq!(
            decode(r#""plain, and more than sixteen bytes long é""#),
            "raw plain, and more than sixteen bytes long é"
        );
        assert_eq!(decode(r#""""#), "raw ");
        let long = format!("\"{}\\n{}\"", "x".repeat(40), "y".repeat(40));
        assert_eq!(decode(&long), format!("unescaped {}\n{}", "x".repeat(40), "y".repeat(40)));
        for lone in [r#""\ud800""#, r#""\udc00 x""#, r#""\ud83dx""#, r#""\ud83d\u0041""#, r#""\ud83d\n""#] {
            let mut out = Vec::new();
            assert_eq!(Cursor::new(lone.as_bytes()).decode_string(&mut out), Ok(Decoded::LoneSurrogate), "{lone}");
        }
        for bad in [r#""a\u01""#, r#""a\x01""#, "\"a\u{1}\"", "\"no end", r#""ends in \"#, r#""\u12"#] {
            assert!(Cursor::new(bad.as_bytes()).decode_string(&mut Vec::new()).is_err(), "{bad}");
        }
        // Agrees with the lossy decoder wherever there is no lone surrogate.
        let raw = r#"x\ty\u00e9\"\\\ud83d\ude00 and a longer run of plain text after it"#;
        let mut out = Vec::new();
        assert_eq!(Cursor::new(format!("\"{raw}\"").as_bytes()).decode_string(&mut out), Ok(Decoded::Unescaped));
        assert_eq!(String::from_utf8(out).unwrap(), unescape(raw.as_bytes()));
        // Escapes at every place in the 16-byte blocks the decoder copies whole, with runs of
        // every length between them, at the end of the line too: the lossy decoder's bytes.
        for prefix in 0..34 {
            for gap in 0..34 {
                let raw = format!(
                    r#"{}\n{}\"{}\u00e9{}\\"#,
                    "a".repeat(prefix),
                    "b".repeat(gap),
                    "c".repeat(gap / 3),
                    "d".repeat(prefix % 17)
                );
                let mut out = b"stale".to_vec();
                let quoted = format!("\"{raw}\"");
                let mut cursor = Cursor::new(quoted.as_bytes());
                assert_eq!(cursor.decode_string(&mut out), Ok(Decoded::Unescaped), "{raw}");
                assert_eq!(cursor.position, quoted.len(), "{raw}");
                assert_eq!(String::from_utf8(out).unwrap(), unescape(raw.as_bytes()), "{raw}");
                // A control character or the line's end after an escape is found where it is.
                let bad = format!("\"{}\\t{}\u{1}{}\"", "a".repeat(prefix), "b".repeat(gap), "c".repeat(prefix));
                let error = Cursor::new(bad.as_bytes()).decode_string(&mut Vec::new()).unwrap_err();
                assert_eq!(
                    (error.kind, error.position),
                    (JsonErrorKind::ControlCharacterInString, prefix + gap + 3),
                    "{bad}"
                );
                let open = format!("\"{}\\t{}", "a".repeat(prefix), "b".repeat(gap));
                let error = Cursor::new(open.as_bytes()).decode_string(&mut Vec::new()).unwrap_err();
                assert_eq!((error.kind, error.position), (JsonErrorKind::UnexpectedEnd, open.len()), "{open}");
            }
        }
    }

    #[test]
    fn raw_tokens_read_what_they_validate() {
        let mut cursor = Cursor::new(br#" {"k" : [ -1.5e3 , true, null ] } "#);
        assert!(cursor.eat(b'{') && !cursor.eat(b'}'));
        assert_eq!(cursor.decode_string(&mut Vec::new()), Ok(Decoded::Raw(b"k")));
        assert!(cursor.eat(b':') && cursor.eat(b'['));
        cursor.skip_whitespace();
        assert_eq!(cursor.raw_number().unwrap(), b"-1.5e3");
        assert!(cursor.eat(b','));
        cursor.skip_whitespace();
        cursor.literal(b"true").unwrap();
        assert!(cursor.eat(b','));
        cursor.skip_whitespace();
        assert!(cursor.literal(b"nul").is_ok() && cursor.literal(b"l").is_ok());
        assert!(cursor.eat(b']') && cursor.eat(b'}'));
        cursor.finish().unwrap();
        assert!(Cursor::new(b"01").raw_number().is_ok_and(|text| text == b"0"));
    }
}
