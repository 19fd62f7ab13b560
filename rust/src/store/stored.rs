//! Stored frames: zstd frames whose blocks are raw (the bytes as they are, not compressed).
//!
//! A redo point keeps the files a rewind replaces so that the redo can put them back
//! (`restore/keep.rs`); the redo reads them all, and decompressing a thousand zstd frames was
//! about a quarter of its CPU. A stored frame is a valid zstd frame (RFC 8878: the magic, a
//! single-segment header stating the content size in 8 bytes, raw blocks of at most 128 KiB, no
//! checksum), so every zstd decoder, and every reader of the store, reads it as any other frame;
//! [`content`] reads one without the decoder: the blocks' bytes copied out, nothing decoded.
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

/// Whether `frame` starts as a stored frame does (the caller may then use [`content`]).
pub fn is_stored(frame: &[u8]) -> bool {
    frame.len() >= HEADER && frame[..4] == MAGIC && frame[4] == DESCRIPTOR
}

/// The content of a stored frame, or `None` when `frame` is not exactly one (another kind of
/// frame, a torn one, blocks that do not add up to the stated size, bytes after the last block):
/// such a frame is left to the zstd decoder, which has the final word on what is corrupt.
pub fn content(frame: &[u8], max_size: u64) -> Option<Vec<u8>> {
    if !is_stored(frame) {
        return None;
    }
    let size = u64::from_le_bytes(frame[5..HEADER].try_into().expect("8 bytes"));
    if size > max_size {
        return None;
    }
    let mut bytes = Vec::with_capacity(usize::try_from(size).ok()?);
    let mut rest = &frame[HEADER..];
    loop {
        let header = rest.get(..BLOCK_HEADER)?;
        let value = u32::from_le_bytes([header[0], header[1], header[2], 0]);
        let (last, kind, length) = (value & 1 == 1, (value >> 1) & 3, (value >> 3) as usize);
        if kind != 0 || length > MAX_BLOCK {
            return None;
        }
        bytes.extend_from_slice(rest.get(BLOCK_HEADER..BLOCK_HEADER + length)?);
        rest = &rest[BLOCK_HEADER + length..];
        if last {
            break;
        }
    }
    (rest.is_empty() && bytes.len() as u64 == size).then_some(bytes)
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
            assert_eq!(content(&stored, u64::MAX).unwrap(), bytes, "and so does `content`");
        }
    }

    #[test]
    fn anything_but_a_whole_stored_frame_is_left_to_the_decoder() {
        let bytes = sample(MAX_BLOCK + 10);
        let stored = frame(&bytes);
        assert_eq!(content(&zstd::bulk::compress(&bytes, 1).unwrap(), u64::MAX), None, "a compressed frame");
        assert_eq!(content(&stored[..stored.len() - 1], u64::MAX), None, "torn");
        assert_eq!(content(&[stored.as_slice(), b"x"].concat(), u64::MAX), None, "bytes after the last block");
        assert_eq!(content(&stored, bytes.len() as u64 - 1), None, "over the size limit");
        let mut wrong_size = stored.clone();
        wrong_size[5] ^= 1;
        assert_eq!(content(&wrong_size, u64::MAX), None, "blocks that do not add up to the stated size");
        let mut compressed_block = stored.clone();
        compressed_block[HEADER] |= 0b100; // block type 2: compressed
        assert_eq!(content(&compressed_block, u64::MAX), None);
        let mut no_last = frame(b"abc");
        no_last[HEADER] &= !1;
        assert_eq!(content(&no_last, u64::MAX), None, "no last block");
    }
}
