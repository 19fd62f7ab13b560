//! Stored frames: zstd frames whose blocks are raw (the bytes as they are, not compressed).
//!
//! A redo point keeps the files a rewind replaces so that the redo can put them back
//! (`restore/keep.rs`); the redo reads them all, and decompressing a thousand zstd frames was
//! about a quarter of its CPU. A stored frame is a valid zstd frame (RFC 8878: the magic, a
//! single-segment header stating the content size in 8 bytes, raw blocks of at most 128 KiB, no
//! checksum), so every zstd decoder, and every reader of the store, reads it as any other frame;
//! [`into_content`] reads one without the decoder: the block headers cut out, nothing decoded.
//! Its price is disk: the bytes take their full size until a collection absorbs the pack and
//! compresses them (`packs.rs`).

const MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];
/// Frame header descriptor: an 8-byte content size, single segment, no checksum, no dictionary.
const DESCRIPTOR: u8 = 0b1110_0000;
const HEADER: usize = MAGIC.len() + 1 + 8;
const BLOCK_HEADER: usize = 3;
/// The largest block a frame may hold (RFC 8878, `Block_Maximum_Size`).
const MAX_BLOCK: usize = 128 << 10;

/// The stored frame holding `bytes`.
pub fn frame(bytes: &[u8]) -> Vec<u8> {
    let blocks = bytes.len().div_ceil(MAX_BLOCK).max(1);
    let mut frame = Vec::with_capacity(HEADER + blocks * BLOCK_HEADER + bytes.len());
    frame.extend_from_slice(&MAGIC);
    frame.push(DESCRIPTOR);
    frame.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    let mut chunks = bytes.chunks(MAX_BLOCK).peekable();
    if chunks.peek().is_none() {
        frame.extend_from_slice(&block_header(0, true)); // an empty content is one empty last block
    }
    while let Some(chunk) = chunks.next() {
        frame.extend_from_slice(&block_header(chunk.len(), chunks.peek().is_none()));
        frame.extend_from_slice(chunk);
    }
    frame
}

/// A raw block's header: `Last_Block` in bit 0, `Block_Type` 0 (raw) in bits 1-2, the size above.
fn block_header(size: usize, last: bool) -> [u8; BLOCK_HEADER] {
    let value = (size as u32) << 3 | u32::from(last);
    let bytes = value.to_le_bytes();
    [bytes[0], bytes[1], bytes[2]]
}

/// Whether `frame` starts as a stored frame does.
fn is_stored(frame: &[u8]) -> bool {
    frame.len() >= HEADER && frame[..4] == MAGIC && frame[4] == DESCRIPTOR
}

/// The content of a stored frame, made from the frame's own buffer (the block headers cut out
/// in place: no second buffer), or the frame back untouched when it is not exactly a stored frame
/// of at most `max_size` bytes (another kind of frame, a torn one, blocks that do not add up to
/// the stated size, bytes after the last block): such a frame is left to the zstd decoder, which
/// has the final word on what is corrupt.
pub fn into_content(mut frame: Vec<u8>, max_size: u64) -> Result<Vec<u8>, Vec<u8>> {
    let Some(size) = checked_size(&frame, max_size) else { return Err(frame) };
    let (mut read, mut written) = (HEADER, 0);
    loop {
        let (last, length) = block_at(&frame, read).expect("checked");
        frame.copy_within(read + BLOCK_HEADER..read + BLOCK_HEADER + length, written);
        (read, written) = (read + BLOCK_HEADER + length, written + length);
        if last {
            break;
        }
    }
    debug_assert_eq!(written as u64, size);
    frame.truncate(written);
    Ok(frame)
}

/// The content size of `frame` when it is exactly a stored frame of at most `max_size` bytes.
fn checked_size(frame: &[u8], max_size: u64) -> Option<u64> {
    if !is_stored(frame) {
        return None;
    }
    let size = u64::from_le_bytes(frame[5..HEADER].try_into().expect("8 bytes"));
    if size > max_size {
        return None;
    }
    let (mut at, mut total) = (HEADER, 0u64);
    loop {
        let (last, length) = block_at(frame, at)?;
        (at, total) = (at + BLOCK_HEADER + length, total + length as u64);
        if last {
            break;
        }
    }
    (at == frame.len() && total == size).then_some(size)
}

/// `(last, length)` of the raw block whose header is at `at`, when it is one and lies whole in
/// `frame`.
fn block_at(frame: &[u8], at: usize) -> Option<(bool, usize)> {
    let header = frame.get(at..at + BLOCK_HEADER)?;
    let value = u32::from_le_bytes([header[0], header[1], header[2], 0]);
    let (last, kind, length) = (value & 1 == 1, (value >> 1) & 3, (value >> 3) as usize);
    if kind != 0 || length > MAX_BLOCK || at + BLOCK_HEADER + length > frame.len() {
        return None;
    }
    Some((last, length))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(length: usize) -> Vec<u8> {
        (0..length).map(|index| (index * 31 % 251) as u8).collect()
    }

    #[test]
    fn a_stored_frame_is_read_back_by_zstd_and_without_it() {
        for length in [0, 1, 255, 256, 4096, MAX_BLOCK - 1, MAX_BLOCK, MAX_BLOCK + 1, 3 * MAX_BLOCK + 17] {
            let bytes = sample(length);
            let stored = frame(&bytes);
            assert!(is_stored(&stored));
            let decoded = zstd::stream::decode_all(stored.as_slice()).unwrap();
            assert_eq!(decoded, bytes, "zstd reads a stored frame of {length} bytes");
            assert_eq!(zstd::zstd_safe::get_frame_content_size(&stored).unwrap(), Some(length as u64));
            assert_eq!(into_content(stored, u64::MAX).unwrap(), bytes, "and so does `into_content`");
        }
    }

    #[test]
    fn anything_but_a_whole_stored_frame_is_given_back_untouched_for_the_decoder() {
        let bytes = sample(MAX_BLOCK + 10);
        let stored = frame(&bytes);
        let content = |frame: Vec<u8>, max_size: u64| {
            let given = frame.clone();
            into_content(frame, max_size).map_err(|back| assert_eq!(back, given, "given back untouched")).ok()
        };
        assert_eq!(content(zstd::bulk::compress(&bytes, 1).unwrap(), u64::MAX), None, "a compressed frame");
        assert_eq!(content(stored[..stored.len() - 1].to_vec(), u64::MAX), None, "torn");
        assert_eq!(content([stored.as_slice(), b"x"].concat(), u64::MAX), None, "bytes after the last block");
        assert_eq!(content(stored.clone(), bytes.len() as u64 - 1), None, "over the size limit");
        let mut wrong_size = stored.clone();
        wrong_size[5] ^= 1;
        assert_eq!(content(wrong_size, u64::MAX), None, "blocks that do not add up to the stated size");
        let mut compressed_block = stored.clone();
        compressed_block[HEADER] |= 0b100; // block type 2: compressed
        assert_eq!(content(compressed_block, u64::MAX), None);
        let mut no_last = frame(b"abc");
        no_last[HEADER] &= !1;
        assert_eq!(content(no_last, u64::MAX), None, "no last block");
        assert_eq!(content(stored, u64::MAX), Some(bytes));
    }
}
