//! The backup store: everything that touches the bytes of backed-up files.
//!
//! - [`digest`]: [`ContentId`] (blake3, names our objects) and [`Sha256Digest`] (the real CLI's blobs).
//! - [`objects`]: the shared content-addressed, zstd-compressed object folder ([`ObjectStore`]).
//! - [`batch`]: many new objects made durable by one flush (an absorbed pack's, [`Batch`]).
//! - [`packs`]: many objects in one file (a redo point's, [`PackWriter`]), absorbed by a collection.
//! - [`stored`]: zstd frames of raw blocks (a redo point's objects, read back without decoding).
//! - [`source`]: reading a user's file without following symlinks, under a size cap.
//! - [`mod@restore`]: verified, all-or-nothing restore with a crash journal.
//! - [`space`]: free space for the disk-low pause.
//! - [`stat_scan`]: which files of a project changed since a table of stat keys (shell tracking).
//! - [`tree_items`]: the symlinks, FIFOs and empty folders of a project (shell tracking).
//! - [`watch`]: inotify change events on a project's folders, so a stat pass looks only at what changed.
//! - [`durable`]: temp-file, fsync and rename helpers.
//!
//! Checkpoint records (which file was backed up in which turn) live in Python; this module only
//! stores, verifies and puts back bytes.
//!
//! # On-disk format (version 1)
//!
//! ```text
//! <data dir>/objects/                  one store for every session (fork copies nothing)
//! ├── config                           {"version":1,"name":"blake3","compression":"zstd"}
//! ├── external-checkpoints.txt         checkpoints files outside projects/ (Python keeps it)
//! ├── ab/                              fan-out by the first two hex characters
//! │   └── cdef…(62 hex)                one zstd frame; blake3(original bytes) = "abcdef…"
//! └── packs/<name>.pack                a redo point's new objects in one file ([`packs`])
//! <data dir>/journals/<session>.json   a restore in flight: {"version":1,"state":"open"|"committed",…}
//! <data dir>/journals/<session>.json.lock   flock held while restoring or recovering
//! <data dir>/file-history/<session>/<sha256>   the real CLI's raw blobs (read, never written)
//! ```
//!
//! Objects are written once (temp file `.<name>.<pid>.<nanos>.<n>.cctmp` → fsync → rename →
//! fsync folder; a redo point's in one pack, [`packs`]), mode 0400, and never modified; a re-put only bumps the mtime. Every read
//! decompresses and checks the blake3 against the name. A `config` with another version makes
//! [`ObjectStore::open`] fail rather than guess.

pub mod batch;
pub mod digest;
pub mod durable;
pub mod objects;
pub mod packs;
pub mod restore;
pub mod source;
pub mod space;
pub mod stat_scan;
pub mod stored;
pub mod tree_items;
pub mod watch;

pub use batch::Batch;
pub use digest::{Algorithm, ContentId, InvalidDigest, Sha256Digest};
pub use objects::{read_raw_blob, Backup, ObjectStore, StoreUsage, SweepReport};
pub use packs::{absorb, packed_ids, packed_sizes, AbsorbReport, PackWriter};
pub use restore::{
    check, prepare, recover, restore, Action, BackupSource, Companion, Desired, Expected, FaultInjection, KeepOptions,
    KeptFile, KeptState, Plan, PlanEntry, Prepared, ProblemKind, RecoveryBounds, RecoveryOutcome, RestoreItem,
    RestoreOptions, RestoreProblem, SettleFailure, Special,
};
pub use restore::{settle_all, wait_for_journal};
pub use source::{read_file_state, FileState, MAX_BACKUP_SIZE};
pub use space::free_space;
pub use tree_items::{scan_tree_items, TreeItem};
