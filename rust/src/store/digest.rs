//! Content digests: [`ContentId`] (blake3, names our objects) and [`Sha256Digest`] (names the real
//! Command Code CLI's raw `file-history/<session>/<sha256>` blobs).
//!
//! Both are 32-byte newtypes with a length-checked [`parse`](ContentId::parse) from lowercase or
//! uppercase hex, a full lowercase-hex `Display` and a [`short`](ContentId::short) form for
//! humans. They are distinct types so a blake3 name can never be looked up as a sha256 blob.

use sha2::Digest as _;
use std::fmt;

/// Which hash names a stored backup. Checkpoint records say it with `"algo"`; absent means the
/// real CLI's sha256 raw blob.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// blake3 of the original bytes; the object is zstd-compressed in our shared store.
    Blake3,
    /// sha256 of the original bytes; the blob is stored raw in the real CLI's `file-history/`.
    Sha256,
}

impl Algorithm {
    /// The name used in checkpoint records and on the Python side.
    pub fn as_str(self) -> &'static str {
        match self {
            Algorithm::Blake3 => "blake3",
            Algorithm::Sha256 => "sha256",
        }
    }

    /// Parses `"blake3"` or `"sha256"`.
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "blake3" => Some(Algorithm::Blake3),
            "sha256" => Some(Algorithm::Sha256),
            _ => None,
        }
    }
}

/// Why a hex string is not a digest.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not a 64-character hex digest")]
pub struct InvalidDigest {
    /// The rejected text (cut to 80 characters).
    pub text: String,
}

fn parse_hex32(text: &str) -> Result<[u8; 32], InvalidDigest> {
    let invalid = || InvalidDigest { text: text.chars().take(80).collect() };
    let bytes = text.as_bytes();
    if bytes.len() != 64 {
        return Err(invalid());
    }
    let mut out = [0u8; 32];
    for (index, pair) in bytes.chunks_exact(2).enumerate() {
        let high = (pair[0] as char).to_digit(16).ok_or_else(invalid)?;
        let low = (pair[1] as char).to_digit(16).ok_or_else(invalid)?;
        out[index] = (high * 16 + low) as u8;
    }
    Ok(out)
}

/// Lowercase hex, written in one piece: a restore formats a few thousand digests (its journal,
/// its plan), and a `write!` per byte cost a few percent of its CPU time.
fn write_hex(bytes: &[u8; 32], formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = [0u8; 64];
    for (pair, byte) in text.chunks_exact_mut(2).zip(bytes) {
        pair[0] = DIGITS[usize::from(byte >> 4)];
        pair[1] = DIGITS[usize::from(byte & 0x0f)];
    }
    formatter.write_str(std::str::from_utf8(&text).expect("hex digits are ASCII"))
}

/// The blake3 digest of an object's original (uncompressed) bytes; its name in the store.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContentId([u8; 32]);

impl ContentId {
    /// The id of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        ContentId(*blake3::hash(bytes).as_bytes())
    }

    /// Parses 64 hex characters.
    pub fn parse(text: &str) -> Result<Self, InvalidDigest> {
        parse_hex32(text).map(ContentId)
    }

    /// The raw 32 bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// The id whose raw bytes are `bytes` (a pack's index stores them so, `packs.rs`).
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        ContentId(bytes)
    }

    /// The first 12 hex characters, for messages.
    pub fn short(&self) -> String {
        self.to_string()[..12].to_owned()
    }
}

impl From<blake3::Hash> for ContentId {
    fn from(hash: blake3::Hash) -> Self {
        ContentId(*hash.as_bytes())
    }
}

impl fmt::Display for ContentId {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_hex(&self.0, formatter)
    }
}

impl fmt::Debug for ContentId {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "ContentId({})", self.short())
    }
}

/// The sha256 digest that names a real-CLI raw blob.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Sha256Digest([u8; 32]);

impl Sha256Digest {
    /// The digest of `bytes`.
    pub fn of(bytes: &[u8]) -> Self {
        Sha256Digest(sha2::Sha256::digest(bytes).into())
    }

    /// Parses 64 hex characters.
    pub fn parse(text: &str) -> Result<Self, InvalidDigest> {
        parse_hex32(text).map(Sha256Digest)
    }

    /// The first 12 hex characters, for messages.
    pub fn short(&self) -> String {
        self.to_string()[..12].to_owned()
    }
}

impl fmt::Display for Sha256Digest {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_hex(&self.0, formatter)
    }
}

impl fmt::Debug for Sha256Digest {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "Sha256Digest({})", self.short())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_id_round_trips_through_hex() {
        let id = ContentId::of(b"base\n");
        let text = id.to_string();
        assert_eq!(text.len(), 64);
        assert_eq!(ContentId::parse(&text).unwrap(), id);
        assert_eq!(ContentId::parse(&text.to_uppercase()).unwrap(), id);
        assert_eq!(id.short(), &text[..12]);
    }

    #[test]
    fn sha256_matches_the_real_cli_sample_blob() {
        // The sample blob `file-history/1ccb4627-…/f34848…` holds `base\n`.
        let digest = Sha256Digest::of(b"base\n");
        assert_eq!(digest.to_string(), "f34848ca92665c342abd5816c9e3eda0e82180671195362bcd0080544a3bc2ac");
    }

    #[test]
    fn parse_rejects_wrong_length_and_non_hex() {
        assert!(ContentId::parse("abc").is_err());
        assert!(ContentId::parse(&"g".repeat(64)).is_err());
        assert!(Sha256Digest::parse(&"0".repeat(63)).is_err());
        assert!(ContentId::parse(&"é".repeat(32)).is_err());
    }

    #[test]
    fn algorithm_names_round_trip() {
        for algorithm in [Algorithm::Blake3, Algorithm::Sha256] {
            assert_eq!(Algorithm::parse(algorithm.as_str()), Some(algorithm));
        }
        assert_eq!(Algorithm::parse("md5"), None);
    }
}
