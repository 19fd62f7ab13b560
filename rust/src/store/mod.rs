//! The backup store: everything that touches the bytes of backed-up files.
//!
//! - [`digest`]: [`ContentId`] (blake3, names our objects) and [`Sha256Digest`] (the real CLI's blobs).
//! - [`objects`]: the shared content-addressed, zstd-compressed object folder ([`ObjectStore`]).
//! - [`source`]: reading a user's file without following symlinks, under a size cap.
//! - [`restore`]: verified, all-or-nothing restore with a crash journal.
//! - [`space`]: free space for the disk-low pause.
//! - [`durable`]: temp-file, fsync and rename helpers.
//!
//! Checkpoint records (which file was backed up in which turn) live in Python; this module only
//! stores, verifies and puts back bytes.

pub mod digest;
pub mod durable;
pub mod objects;
pub mod restore;
pub mod source;
pub mod space;

pub use digest::{Algorithm, ContentId, InvalidDigest, Sha256Digest};
pub use objects::{read_raw_blob, Backup, ObjectStore, StoreUsage, SweepReport};
pub use restore::{
    check, recover, restore, Action, BackupSource, Desired, Expected, FaultInjection, Plan, PlanEntry, ProblemKind,
    RecoveryOutcome, RestoreItem, RestoreOptions, RestoreProblem,
};
pub use source::{read_file_state, FileState, MAX_BACKUP_SIZE};
pub use space::free_space;
