//! Putting files back, all or nothing.
//!
//! A restore is a list of [`RestoreItem`]s (a target path, the state it must get back, and the
//! last state our tools left there). It runs in four phases:
//!
//! 1. **Verify** (`verify.rs`), touching nothing: every needed object exists, decompresses and
//!    hashes to its name; every target is inside the confinement root, is not a symlink, can be
//!    written, and (unless forced) still holds what our tools left there. Every failing target
//!    is reported at once, and nothing is written.
//!    [`prepare`] stops here, holding the journal lock: its caller keeps the current bytes of
//!    every target the restore changes (`keep.rs`, a redo point's objects, from what this phase
//!    read and hashed) and builds the companion, then [`Prepared::commit`] runs the rest.
//! 2. **Stage** (`apply.rs`): a write-ahead [`journal`] naming every target, the durable source
//!    of its new content, and every temp and set-aside file is fsynced; then each new content
//!    that needs a new file goes to a temp file beside its target.
//! 3. **Apply**: a target that is a single-link, non-executable regular file this process may
//!    write is overwritten in place (its old bytes were read at verification and stay in memory); any
//!    other original is hard-linked (or renamed) aside and its temp exchanged (or renamed) into
//!    place. The in-place overwrites run first, in parallel (each touches only its own file); the
//!    rest in order. If a step fails, every step already taken is undone, so nothing is left half
//!    done. Once every target holds its new content the restore is committed: the journal is a
//!    write-ahead log, and from here on a crash is completed, never undone, so the commit returns.
//! 4. **Settle** (`settle.rs`, on a thread of its own, holding the journal lock): one `syncfs`
//!    makes the new bytes and the renames durable together, then the journal is deleted
//!    (durably) and the trash of set-aside originals removed; originals set aside beside their
//!    targets (another file system) are removed only after the journal was marked committed. A
//!    crash (or an exit that does not wait, or a failed flush) leaves the journal; [`recover()`]
//!    (run before the next restore, and by the Python layer on open) completes an open journal
//!    from the sources it names (`redo.rs`) and finishes a committed one. Until the settle ends,
//!    a kill -9 would have that recovery rewrite a file overwritten in place that the user
//!    edited after the commit returned (the window, tens of ms: `settle.rs`).
//!
//! Why in place: on ext4, creating a thousand files and freeing a thousand old ones (with
//! `discard`, each free is a trim) cost several times what rewriting the same bytes into the
//! existing blocks costs; `benches/bench_checkpoints.py` measures the restore.
//!
//! This module decides nothing about checkpoints: it gets targets and sources, not turns.

mod apply;
mod bounds;
mod folders;
pub mod journal;
mod keep;
mod redo;
mod settle;
mod special;
mod target_io;
#[cfg(test)]
mod test_tree;
mod verify;

use super::digest::{ContentId, Sha256Digest};
use super::objects::ObjectStore;
use crate::error::{Error, Result};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use apply::recover;
pub use bounds::RecoveryBounds;
pub use journal::RecoveryOutcome;
pub use keep::{KeepOptions, KeptFile, KeptState};
pub use settle::{settle_all, wait_for_journal, SettleFailure};

/// Where the bytes of a backup come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BackupSource {
    /// An object of our shared store, named by blake3.
    Object(ContentId),
    /// A real-CLI raw blob `<folder>/<sha256>`; `named` is the blake3 the record also names it
    /// by (a compatible backup's twin): a blob that hashes to it is not hashed by sha256 too.
    RawBlob { folder: PathBuf, digest: Sha256Digest, named: Option<ContentId> },
}

/// The state a target must get back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Desired {
    /// The file did not exist: delete it.
    Absent,
    /// These bytes, with these permission bits (`None`: keep the current file's, else 0644).
    Content { source: BackupSource, mode: Option<u32> },
    /// A symlink, FIFO or empty folder (what a shell command removed or replaced).
    Special(Special),
}

/// A target state that is not a regular file: never followed, never written through.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Special {
    /// A symlink with this target (as `readlink` gives it; never resolved).
    Symlink(PathBuf),
    /// A FIFO with these permission bits.
    Fifo { mode: u32 },
    /// A socket's name with these permission bits (made again unbound: nothing listens on it).
    Socket { mode: u32 },
    /// A folder with these permission bits (made empty; a folder already there is left as it is).
    Folder { mode: u32 },
}

impl Special {
    /// Whether `found` is this state (a symlink by its target; a FIFO, socket or folder by kind
    /// alone).
    pub fn matches(&self, found: &Special) -> bool {
        match (self, found) {
            (Special::Symlink(wanted), Special::Symlink(found)) => wanted == found,
            (Special::Fifo { .. }, Special::Fifo { .. })
            | (Special::Socket { .. }, Special::Socket { .. })
            | (Special::Folder { .. }, Special::Folder { .. }) => true,
            _ => false,
        }
    }

    /// The permission bits it is made with (a symlink's are not used; never setuid, setgid or
    /// sticky, which a journal may not carry).
    pub fn mode(&self) -> u32 {
        match self {
            Special::Symlink(_) => 0o777,
            Special::Fifo { mode } | Special::Socket { mode } | Special::Folder { mode } => *mode & 0o777,
        }
    }
}

/// The last state our own tools left at a target; anything else there was changed outside.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expected {
    /// Not recorded (a real-CLI checkpoint, or a tool that never finished): not checked.
    Unknown,
    /// Our tools left no file there.
    Absent,
    /// Our tools left these bytes there.
    Content(ContentId),
    /// A shell command left this symlink, FIFO or folder there.
    Special(Special),
}

/// One file to put back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RestoreItem {
    /// An absolute path.
    pub target: PathBuf,
    pub desired: Desired,
    pub expected: Expected,
}

/// Test hooks that make a restore fail or slow down at a chosen step (crash and rollback tests).
#[derive(Clone, Debug, Default)]
pub struct FaultInjection {
    /// Fail with an I/O error just before apply step number `n` (0-based).
    pub fail_before_step: Option<usize>,
    /// Sleep this long before each apply step.
    pub step_delay: Duration,
    /// Sleep this long in the settle after the commit: before its flush, before the companion
    /// copy's removal, between it and the journal's removal, and after that (the kill points of
    /// the crash tests).
    pub settle_pause: Duration,
}

/// How to run a restore.
#[derive(Clone, Debug)]
pub struct RestoreOptions {
    /// When set, every target must resolve inside this folder.
    pub confine_to: Option<PathBuf>,
    /// No target may resolve inside these folders (commandcode's own data dir), even when they
    /// lie inside `confine_to`.
    pub protected: Vec<PathBuf>,
    /// A file of the caller's replaced together with the targets (see [`Companion`]).
    pub companion: Option<Companion>,
    /// Overwrite targets changed outside the tracked tools.
    pub force: bool,
    /// Overwrite single-link, non-executable files in place (the default); `false` replaces
    /// every target by a new file, which concurrent readers see change atomically, at several times the cost on
    /// disks that trim freed blocks.
    pub in_place: bool,
    /// Decompressed bytes kept in memory between verify and stage; past it they are re-read
    /// (and re-verified) while staging.
    pub memory_budget: u64,
    pub faults: FaultInjection,
}

impl Default for RestoreOptions {
    fn default() -> Self {
        RestoreOptions {
            confine_to: None,
            protected: Vec::new(),
            companion: None,
            force: false,
            in_place: true,
            memory_budget: 512 << 20,
            faults: FaultInjection::default(),
        }
    }
}

/// A file the caller wants replaced in the same all-or-nothing step as the targets: its new
/// bytes are staged, swapped in, made durable and committed with them, and put back with them on
/// rollback or crash recovery. The Python layer passes the session's checkpoints file with the
/// after-digests of the restored state, so the records never disagree with the files (a crash
/// between the two made the next rewind take our own restore for an outside edit).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Companion {
    /// An absolute path (outside the confinement rules: it is the caller's own file).
    pub path: PathBuf,
    pub bytes: Vec<u8>,
    /// Permission bits of the new file.
    pub mode: u32,
}

/// Why a target cannot be restored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProblemKind {
    NotAbsolute,
    /// Resolves outside the confinement root.
    Outside {
        root: PathBuf,
    },
    /// Resolves inside a protected folder (commandcode's own data).
    Protected {
        root: PathBuf,
    },
    /// The target (or the folder it would go in) is a symlink nobody recorded there.
    Symlink,
    /// A folder, FIFO or device is in the way.
    NotRegular,
    /// The same target is listed twice.
    Duplicate,
    ObjectMissing {
        id: String,
    },
    ObjectCorrupt {
        id: String,
        reason: String,
    },
    /// The target or its folder cannot be written.
    NotWritable {
        reason: String,
    },
    /// The current file cannot be read to check it.
    Unreadable {
        reason: String,
    },
    /// The file differs from what our tools last left there.
    ChangedOutside,
}

impl ProblemKind {
    /// A short machine name, for `--json` and the Python side.
    pub fn code(&self) -> &'static str {
        match self {
            ProblemKind::NotAbsolute => "not_absolute",
            ProblemKind::Outside { .. } => "outside",
            ProblemKind::Protected { .. } => "protected",
            ProblemKind::Symlink => "symlink",
            ProblemKind::NotRegular => "not_regular",
            ProblemKind::Duplicate => "duplicate",
            ProblemKind::ObjectMissing { .. } => "object_missing",
            ProblemKind::ObjectCorrupt { .. } => "object_corrupt",
            ProblemKind::NotWritable { .. } => "not_writable",
            ProblemKind::Unreadable { .. } => "unreadable",
            ProblemKind::ChangedOutside => "changed_outside",
        }
    }

    /// Whether this is about a backup's bytes (as opposed to the target).
    pub fn is_integrity(&self) -> bool {
        matches!(self, ProblemKind::ObjectMissing { .. } | ProblemKind::ObjectCorrupt { .. })
    }
}

impl fmt::Display for ProblemKind {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProblemKind::NotAbsolute => write!(formatter, "is not an absolute path"),
            ProblemKind::Outside { root } => write!(formatter, "is outside {}", root.display()),
            ProblemKind::Protected { root } => {
                write!(formatter, "is inside commandcode's own data folder {} (never restored)", root.display())
            }
            ProblemKind::Symlink => write!(formatter, "is a symlink (never followed)"),
            ProblemKind::NotRegular => write!(formatter, "is not a regular file"),
            ProblemKind::Duplicate => write!(formatter, "is listed twice"),
            ProblemKind::ObjectMissing { id } => write!(formatter, "backup {} is missing", &id[..id.len().min(12)]),
            ProblemKind::ObjectCorrupt { id, reason } => {
                write!(formatter, "backup {} is corrupt ({reason})", &id[..id.len().min(12)])
            }
            ProblemKind::NotWritable { reason } => write!(formatter, "cannot be written ({reason})"),
            ProblemKind::Unreadable { reason } => write!(formatter, "cannot be read ({reason})"),
            ProblemKind::ChangedOutside => write!(formatter, "was changed outside the tracked tools"),
        }
    }
}

/// One failing target.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RestoreProblem {
    pub target: PathBuf,
    pub kind: ProblemKind,
}

impl fmt::Display for RestoreProblem {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(formatter, "{} {}", self.target.display(), self.kind)
    }
}

/// What a restore does (or did) to one target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// New bytes (or mode) are written.
    Write,
    /// The file is deleted.
    Delete,
    /// The target already holds the wanted state.
    Unchanged,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Write => "write",
            Action::Delete => "delete",
            Action::Unchanged => "unchanged",
        }
    }
}

/// One target's verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanEntry {
    pub target: PathBuf,
    pub action: Action,
    /// The current file differs from what our tools last left (overwritten only when forced).
    pub changed_outside: bool,
    /// blake3 of the content the target gets (`None` for a delete, or when the backup is bad).
    pub content: Option<ContentId>,
}

/// The outcome of verification: what would happen, and what stops it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    pub entries: Vec<PlanEntry>,
    pub problems: Vec<RestoreProblem>,
}

impl Plan {
    /// The problems that stop the restore (changed-outside ones are waived by `force`).
    pub fn blocking(&self, force: bool) -> Vec<RestoreProblem> {
        self.problems
            .iter()
            .filter(|problem| !(force && problem.kind == ProblemKind::ChangedOutside))
            .cloned()
            .collect()
    }
}

/// Verifies `items` without writing anything; see the module docs for what is checked.
pub fn check(store: &ObjectStore, items: &[RestoreItem], options: &RestoreOptions) -> Result<Plan> {
    Ok(verify::verify(store, items, options)?.plan)
}

/// Verifies, then puts every target back, all or nothing, and waits for the settle (returns
/// once the restore is durable and its journal gone). `journal` is this restore's journal file
/// (its folder must exist); a pending journal there is recovered first.
///
/// Fails with [`Error::RestoreRefused`] (nothing written) when any target fails verification,
/// and with [`Error::RestoreFailed`] when a write fails midway (everything already written is
/// put back, unless the error says otherwise); with [`Error::RecoveryIncomplete`] when the
/// settle failed (every target holds its new content; the journal is left for the next recovery).
pub fn restore(store: &ObjectStore, items: &[RestoreItem], journal: &Path, options: &RestoreOptions) -> Result<Plan> {
    let plan = prepare(store, items, journal, options)?.commit(store, options)?;
    settle::wait_for_journal(journal).map_or(Ok(plan), |failure| Err(settle_failed(failure)))
}

/// A settle that failed, as the error of a caller that waited for it: every target holds its
/// new content, and the journal is kept for the next open to finish.
fn settle_failed(failure: SettleFailure) -> Error {
    Error::RestoreFailed {
        path: failure.journal.clone(),
        source: std::io::Error::other(failure.reason),
        rolled_back: false,
        journal: failure.journal,
    }
}

/// A verified restore waiting to be carried out: the caller looks at its plan, keeps what the
/// restore replaces ([`Prepared::keep`], for a redo), builds its companion, then commits. The
/// journal lock is held from verification to the end of the commit (or until dropped), so no
/// other restore of the journal runs in between; what the targets hold is checked again where
/// it matters (in-place originals by identity, folders by path) as the steps run.
pub struct Prepared {
    _lock: journal::JournalLock,
    verified: verify::Verified,
    journal: std::path::PathBuf,
}

/// Recovers a pending journal, then verifies `items` (see [`restore`]); nothing is written.
/// `options.companion` is ignored: [`Prepared::commit`] takes it.
pub fn prepare(
    store: &ObjectStore,
    items: &[RestoreItem],
    journal: &Path,
    options: &RestoreOptions,
) -> Result<Prepared> {
    let lock = journal::JournalLock::acquire(journal)?;
    apply::recover_locked(journal, &pending_bounds(store, journal, options))?;
    let options = RestoreOptions { companion: None, ..options.clone() };
    let verified = verify::verify(store, items, &options)?;
    Ok(Prepared { _lock: lock, verified, journal: journal.to_owned() })
}

impl Prepared {
    /// What the restore would do, and what stops it.
    pub fn plan(&self) -> &Plan {
        &self.verified.plan
    }

    /// Stores in `store` the current bytes of every target the restore changes, from what
    /// verification read and hashed, all made durable by one flush (see `keep.rs`); regular
    /// files over `options.max_size` and non-regular ones are left to the caller
    /// ([`KeptState::Other`]).
    pub fn keep(&self, store: &ObjectStore, options: &KeepOptions) -> Result<Vec<KeptFile>> {
        keep::keep(store, &self.verified.steps, options)
    }

    /// Carries the restore out, all or nothing, with `options.companion` replaced in the same
    /// step; refused (nothing written) when the plan has a problem `options.force` does not waive.
    /// Returns once every target holds its new content: the settle (flush, journal removal)
    /// runs on a thread of its own, holding the journal lock (`settle.rs`).
    pub fn commit(self, store: &ObjectStore, options: &RestoreOptions) -> Result<Plan> {
        let Prepared { _lock: lock, mut verified, journal } = self;
        let blocking = verified.plan.blocking(options.force);
        if !blocking.is_empty() {
            return Err(Error::RestoreRefused { problems: blocking });
        }
        if let Some(companion) = &options.companion {
            let step = verify::companion_step(companion, &verify::Resolver::default())
                .map_err(|problem| Error::RestoreRefused { problems: vec![problem] })?;
            verified.steps.push(step);
        }
        let (plan, settle) = apply::run(store, verified, &journal, options)?;
        let Some(settle) = settle else { return Ok(plan) };
        // Originals set aside beside their targets (another file system than the journal's) are
        // waited for: the user's folders never show them once the restore returned.
        let beside = settle.sets_aside_beside_targets();
        settle::spawn(lock, journal.clone(), move || settle.run());
        match beside.then(|| settle::wait_for_journal(&journal)).flatten() {
            Some(failure) => Err(settle_failed(failure)),
            None => Ok(plan),
        }
    }
}

/// What a pending journal found before a restore may name: this restore's own confinement, store
/// and companion, and the session's real-CLI blob folder (`<data>/file-history/<journal stem>`,
/// the data dir being the journal folder's parent).
fn pending_bounds(store: &ObjectStore, journal: &Path, options: &RestoreOptions) -> RecoveryBounds {
    let blob_folder = match (journal.parent().and_then(Path::parent), journal.file_stem()) {
        (Some(data), Some(stem)) => Some(data.join("file-history").join(stem)),
        _ => None,
    };
    RecoveryBounds {
        root: options.confine_to.clone(),
        protected: options.protected.clone(),
        store: Some(store.root().to_owned()),
        blob_folder,
        companion: options.companion.as_ref().map(|companion| companion.path.clone()),
    }
}

/// One line naming every problem: `a.txt is a symlink (never followed); b.txt backup 3f2a… is missing`.
pub fn describe_problems(problems: &[RestoreProblem]) -> String {
    problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
}
