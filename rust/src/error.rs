//! The crate's single error type. Every variant carries the evidence a user needs to act on it
//! (the path, the version found, the byte offset). Torn or corrupt lines are *not* errors: they
//! are data, reported in [`crate::scan::ScanReport::skipped`].

use std::path::PathBuf;

/// Result alias used across the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can make a core operation fail.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An I/O call failed on `path`.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The transcript's header declares a format version newer than this build understands.
    #[error("{path} uses session format version {found}, newer than the supported version {supported}; upgrade commandcode to open it")]
    NewerVersion { path: PathBuf, found: u64, supported: u64 },
    /// A caller asked for a byte range that is not inside the file (the file changed underneath).
    #[error("{path}: entry at byte {offset} is no longer readable (the file changed since it was scanned)")]
    Stale { path: PathBuf, offset: u64 },
    /// A valid entry is nested deeper than Python objects can be built (the scan, `show` and
    /// `tree` still work; only decoding that entry cannot).
    #[error("{path}: entry at byte {offset} is nested too deeply to decode into Python objects; `sessions tree` and `sessions show` still work")]
    TooDeep { path: PathBuf, offset: u64 },
    /// A backup object (ours or a real-CLI blob) is not where its record says.
    #[error("backup {id} is missing ({path})")]
    ObjectMissing { id: String, path: PathBuf },
    /// A backup object does not decompress or does not hash to its name.
    #[error("backup {id} is corrupt: {reason} ({path})")]
    ObjectCorrupt { id: String, path: PathBuf, reason: String },
    /// The object store's `config` names a layout this build does not know.
    #[error("{path}: unsupported backup store ({found}); upgrade commandcode")]
    UnsupportedStore { path: PathBuf, found: String },
    /// Pre-verification failed; nothing was written. Lists every failing target.
    #[error("nothing was restored: {}", crate::store::restore::describe_problems(problems))]
    RestoreRefused { problems: Vec<crate::store::RestoreProblem> },
    /// A write failed midway. When `rolled_back`, every target is back as it was; otherwise the
    /// journal is kept for the next open to complete the restore (or, for a journal of an older
    /// release, to finish the undo).
    #[error("restoring {path} failed: {source}; {}", if *rolled_back { "every file was put back as it was".to_owned() } else { format!("not every file could be put back; the journal {} is kept for the next open to finish", journal.display()) })]
    RestoreFailed {
        path: PathBuf,
        #[source]
        source: std::io::Error,
        rolled_back: bool,
        journal: PathBuf,
    },
    /// An interrupted restore could not be completed (a backup it needs is gone, a target
    /// cannot be written); the journal is kept so the next open tries again.
    #[error("cannot finish the restore a crash interrupted: {reason}; fix that and run the command again, or delete the journal {journal} to leave the files as they are now")]
    RecoveryIncomplete { journal: PathBuf, reason: String },
    /// Another process is restoring (or recovering) the same session.
    #[error("another restore is running for this session (lock {journal}.lock)")]
    RestoreInProgress { journal: PathBuf },
    /// A restore journal cannot be read; it is left in place for a human to look at.
    #[error("{path}: unreadable restore journal ({reason}); inspect it, then delete it")]
    JournalInvalid { path: PathBuf, reason: String },
    /// A restore journal names a path outside what its restore could touch (see
    /// `store/restore/bounds.rs`); it is left in place and nothing was touched.
    #[error("{path}: restore journal refused, nothing was touched: {reason}; inspect it, then delete it")]
    JournalUntrusted { path: PathBuf, reason: String },
}

impl Error {
    /// Wraps an I/O error with the path it happened on.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }
}
