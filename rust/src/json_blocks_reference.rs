//! The string scanner the validator used before it moved to `memchr2` (64-byte blocks of SIMD
//! masks, simdjson's odd/even backslash-run trick), kept only as a test reference:
//! `json::tests::the_memchr_string_scanner_matches_the_block_scanner` checks that the new scanner
//! decides every string exactly as this one did.
//!
//! Owns: nothing outside tests.

use wide::u8x16;

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
    let mut control = u8x16::splat(0);
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
        control |= bytes.min(u8x16::splat(0x1f)).cmp_eq(bytes);
    }
    (quotes, backslashes, letters | quotes | backslashes, control.any())
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

/// Finds the closing quote of the string body starting at `start`, 64 bytes at a time, in the
/// common case: the quote exists, no control character comes before it and every escape is
/// valid. Returns `(closing quote index, had escapes)`, or `None` when any of that fails or
/// is unsure, in which case the exact byte-by-byte walk decides (and places the error).
#[inline]
pub(super) fn block_string_end(data: &[u8], start: usize) -> Option<(usize, bool)> {
    // Short strings (keys, ids, roles) usually end within sixteen bytes: one probe settles them.
    if let Some(slice) = data.get(start..start + 16) {
        let mut lane = [0u8; 16];
        lane.copy_from_slice(slice);
        let bytes = u8x16::new(lane);
        let special = bytes.cmp_eq(u8x16::splat(b'"'))
            | bytes.cmp_eq(u8x16::splat(b'\\'))
            | bytes.min(u8x16::splat(0x1f)).cmp_eq(bytes);
        let mask = special.move_mask() as u32;
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
