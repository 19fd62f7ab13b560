//! Staging, applying and undoing a verified restore, and recovering one a crash interrupted
//! (see the module docs of [`super`] for the phases).
//!
//! Undo after an in-process failure: a swapped target is judged from what is on disk (which of
//! target / temp / set-aside original exist, and whether a new file holds the content this
//! restore wrote); a target overwritten in place gets back the original bytes verification
//! read, and only if its overwrite had begun. Recovery after a crash completes a version 2
//! journal (`redo.rs`) and undoes a version 1 journal with the same on-disk judgement.
//!
//! Every step runs relative to a folder handle ([`Folders`]): folders are opened from `/`
//! without following symlinks along the real path verification resolved, and before each apply
//! step the target folder's path is checked to still name the opened folder (the parallel
//! in-place overwrites check each folder once, before the first of them in it). A folder swapped
//! for a symlink after verification is therefore never followed: the restore is refused and
//! rolled back. A file overwritten in place must moreover still be the very file verified
//! (device, inode, one link).
//!
//! Durability: the companion's copy and the journal are fsynced before the first target is
//! touched, and every new content's source (an object of the store, a real-CLI blob, that copy)
//! was durable before. The commit is the moment every target holds its new content: from then
//! on the open journal guarantees it (a recovery completes it from those sources), so [`run`]
//! returns, and the [`Settle`] (on a thread of its own, `settle.rs`) flushes the new bytes and
//! the renames by one `syncfs`, then deletes the journal durably (first marking it `committed`
//! and deleting the set-aside originals beside their targets, when some are not in the trash
//! folder). A power loss at any point therefore leaves either an `open` journal (completed from
//! the durable sources), a `committed` one whose new files are on disk, or none (the new files
//! are on disk; the trash is swept by the next recovery).

use super::bounds::{check as check_bounds, RecoveryBounds};
use super::folders::{exists_at, remove_at, Folders};
use super::journal::{Journal, JournalLock, JournalOp, JournalSource, JournalState, Method, Recovery, RecoveryOutcome};
use super::redo::redo_all;
use super::special::{holds_special, make_at};
use super::target_io::{file_name, holds, overwrite};
use super::verify::{load, Original, Step, Verified};
use super::{Action, BackupSource, Plan, RestoreOptions, Special};
use crate::error::{Error, Result};
use crate::store::durable::{self, unique_name, TEMP_SUFFIX};
use crate::store::objects::ObjectStore;
use rayon::prelude::*;
use rustix::fs::{AtFlags, Mode, OFlags, RenameFlags};
use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

const ROLLBACK_SUFFIX: &str = ".ccrollback";
pub(super) const TRASH_SUFFIX: &str = ".trash";

fn exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// A fresh name in `folder` for a file beside `target`.
fn sibling(folder: &Path, target: &Path, suffix: &str) -> PathBuf {
    folder.join(unique_name(file_name(target), suffix))
}

/// Missing folders the writes need (real paths), outermost first.
fn missing_dirs(steps: &[Step]) -> Vec<PathBuf> {
    let mut missing = BTreeSet::new();
    let mut present = HashSet::new();
    // A folder verification found needs no second look.
    for step in steps.iter().filter(|step| step.action == Action::Write && step.folder_device.is_none()) {
        let mut cursor = Some(step.folder.as_path());
        while let Some(folder) = cursor {
            if present.contains(folder) || missing.contains(folder) {
                break;
            }
            if exists(folder) {
                present.insert(folder);
                break;
            }
            missing.insert(folder.to_path_buf());
            cursor = folder.parent();
        }
    }
    // BTreeSet order puts a parent before its children.
    missing.into_iter().collect()
}

/// A fresh trash folder for one restore, beside the journal: `.<journal name>.<pid>.<…>.trash`
/// (returned as a real path, since steps open it through [`Folders`]).
fn new_trash_dir(journal_path: &Path) -> Result<PathBuf> {
    let trash = journal_path.with_file_name(unique_name(file_name(journal_path), TRASH_SUFFIX));
    std::fs::create_dir(&trash).map_err(|source| Error::io(&trash, source))?;
    std::fs::set_permissions(&trash, std::fs::Permissions::from_mode(0o700))
        .map_err(|source| Error::io(&trash, source))?;
    std::fs::canonicalize(&trash).map_err(|source| Error::io(&trash, source))
}

/// The file system a folder lives on (its deepest existing folder's).
fn device_of(folder: &Path) -> Option<u64> {
    let mut cursor = Some(folder);
    while let Some(folder) = cursor {
        if let Ok(metadata) = std::fs::metadata(folder) {
            return Some(metadata.dev());
        }
        cursor = folder.parent();
    }
    None
}

/// Where the companion's new bytes are kept, durably, while a restore is open: recovery
/// completes the companion from this copy.
pub(super) fn companion_copy(journal_path: &Path) -> PathBuf {
    let mut name = journal_path.as_os_str().to_owned();
    name.push(".companion");
    PathBuf::from(name)
}

/// The journal ops for verified steps. A target kept for overwriting in place gets no temp and
/// no set-aside original; every other write gets a temp name beside its target, and every
/// swapped or deleted original a place to be set aside: in the trash folder when it shares the
/// target's file system (the user's folders then never see a stray file, and freeing the old
/// bytes can wait), else beside it. The companion's source is its copy beside the journal.
fn journal_ops(steps: &[Step], trash: Option<&Path>, companion: &Path) -> Vec<JournalOp> {
    let trash_device = trash.and_then(|folder| std::fs::metadata(folder).ok()).map(|metadata| metadata.dev());
    let mut devices: HashMap<&Path, Option<u64>> = HashMap::new();
    steps
        .iter()
        .enumerate()
        .map(|(index, step)| {
            let device =
                *devices.entry(&step.folder).or_insert_with(|| step.folder_device.or_else(|| device_of(&step.folder)));
            let rollback = match trash {
                Some(folder) if trash_device.is_some() && device == trash_device => folder.join(index.to_string()),
                _ => sibling(&step.folder, &step.target, ROLLBACK_SUFFIX),
            };
            let write = step.action == Action::Write;
            let method = if step.original.is_some() { Method::InPlace } else { Method::Swap };
            let source = match &step.source {
                _ if !write || step.special.is_some() => None,
                Some(BackupSource::Object(id)) => Some(JournalSource::Object(*id)),
                Some(BackupSource::RawBlob { folder, digest, .. }) => {
                    Some(JournalSource::RawBlob { folder: folder.clone(), digest: *digest })
                }
                None => Some(JournalSource::File(companion.to_owned())),
            };
            JournalOp {
                action: step.action,
                target: step.target.clone(),
                folder: step.folder.clone(),
                temp: (write && method == Method::Swap).then(|| sibling(&step.folder, &step.target, TEMP_SUFFIX)),
                rollback,
                original_existed: step.original_existed,
                content: step.content.filter(|_| write),
                method,
                source,
                mode: step.mode,
                before: step.before,
                special: step.special.clone(),
            }
        })
        .collect()
}

/// Makes the trash folder, writes the companion's copy, then the open journal, all durably:
/// every source must be durable before the journal that names it, since recovery completes
/// the restore from them (the two files' bytes are flushed together, then each is renamed into
/// place in that order, see [`durable::write_atomic_all`]). On failure nothing is left behind.
fn open_restore(store: &ObjectStore, steps: &[Step], journal_path: &Path, root: Option<PathBuf>) -> Result<Journal> {
    let trash = new_trash_dir(journal_path)?;
    let companion = companion_copy(journal_path);
    let ops = journal_ops(steps, Some(&trash), &companion);
    let journal = Journal::open(store.root(), root, missing_dirs(steps), Some(trash), ops);
    let companion_bytes = companion_step(steps).and_then(|step| step.bytes.as_deref());
    let text = journal.to_json().to_string();
    let mut files = Vec::with_capacity(2);
    if let Some(bytes) = companion_bytes {
        files.push((companion.as_path(), bytes, 0o600));
    }
    files.push((journal_path, text.as_bytes(), 0o600));
    match durable::write_atomic_all(&files) {
        Ok(()) => Ok(journal),
        Err(error) => {
            remove_trash(&journal);
            let _ = std::fs::remove_file(&companion);
            Err(error)
        }
    }
}

/// The step that replaces the caller's companion file (a write with no backup source).
fn companion_step(steps: &[Step]) -> Option<&Step> {
    steps.iter().find(|step| step.action == Action::Write && step.source.is_none() && step.special.is_none())
}

/// Carries out a verified restore up to the commit: returns its plan once every target holds its
/// new content, and the settle that is left (`None` when nothing was written), which the caller
/// runs, usually on a thread of its own (`settle.rs`).
pub(super) fn run(
    store: &ObjectStore,
    verified: Verified,
    journal_path: &Path,
    options: &RestoreOptions,
) -> Result<(Plan, Option<Settle>)> {
    let Verified { plan, steps } = verified;
    if steps.is_empty() {
        return Ok((plan, None));
    }
    let trusted = options.confine_to.as_deref().and_then(|root| std::fs::canonicalize(root).ok());
    let journal = open_restore(store, &steps, journal_path, trusted.clone())?;
    // By op, the original of each target overwritten in place once its overwrite has begun:
    // an undo writes back exactly these (and never touches a file it did not write).
    let mut touched: Vec<Option<&Original>> = vec![None; steps.len()];

    // Every existing target folder is opened now, just after verification: later steps run
    // through these handles, and each apply step first checks its folder's path still leads here.
    let folders = Folders::default();
    let staged = open_folders(&journal, journal_path, &folders)
        .and_then(|()| stage(store, &steps, &journal, journal_path, &folders));
    if let Err(error) = staged {
        return Err(abandon(&journal, journal_path, error, &folders, &touched));
    }
    let applied = apply_all(store, &steps, &journal, journal_path, options, &folders, trusted.as_deref(), &mut touched);
    if let Err(failure) = applied {
        return Err(abandon(&journal, journal_path, failure, &folders, &touched));
    }
    // The commit: every target holds its new content, and the open journal (durable, naming
    // only durable sources) guarantees it from here on, since a recovery completes it.
    let settle = Settle { journal, journal_path: journal_path.to_owned(), folders, pause: options.faults.settle_pause };
    Ok((plan, Some(settle)))
}

/// What is left of a restore after its commit: the new bytes made durable, then the journal
/// that guaranteed them removed. Until it ran, the journal stays open (see `settle.rs` for the
/// window that leaves).
pub(super) struct Settle {
    journal: Journal,
    journal_path: PathBuf,
    folders: Folders,
    /// Slept before the flush, before the companion copy's removal, between it and the journal's
    /// removal, and after that (a crash-test hook).
    pause: std::time::Duration,
}

impl Settle {
    /// Whether some original is set aside beside its target (not in the trash folder): the
    /// settle then removes a file from the user's folders.
    pub(super) fn sets_aside_beside_targets(&self) -> bool {
        let trash = self.journal.trash.as_deref();
        !self.journal.ops.iter().all(|op| trash.is_some_and(|folder| op.rollback.starts_with(folder)))
    }

    /// Flushes the new bytes and renames (one `syncfs` per file system), then removes the
    /// companion's copy and the journal, durably; returns the trash folder, now garbage. A
    /// failure leaves the open journal, which the next recovery completes (never undoes: the
    /// caller was told the restore is done).
    pub(super) fn run(self) -> Result<Option<PathBuf>> {
        let beside = self.sets_aside_beside_targets();
        let Settle { mut journal, journal_path, folders, pause } = self;
        let rest = || {
            if !pause.is_zero() {
                std::thread::sleep(pause);
            }
        };
        rest(); // before the flush
        sync_filesystems(&journal.ops, &folders)?;
        rest(); // before the journal's removal

        // When every original was set aside in the trash folder, deleting the journal (durably)
        // is all that is left: after it, the trash is garbage. Otherwise (an original beside its
        // target, on another file system) the journal first says `committed`, so that a
        // recovery finishes the restore once those originals start to disappear.
        if beside {
            journal.state = JournalState::Committed;
            journal.write(&journal_path)?;
            finish(&journal, &folders);
        }
        // The companion's copy goes first: its file holds the new bytes durably by now, which is
        // all a recovery of this journal asks of it, and no copy is left behind once the journal
        // is gone (the journal's removal flushes the folder both are in).
        let _ = std::fs::remove_file(companion_copy(&journal_path));
        rest(); // the journal still open, its companion's copy gone: recovery has the file's own bytes
        Journal::remove(&journal_path)?;
        rest(); // after it: the process (whose exit waits for this settle) is still there to kill
        Ok(journal.trash)
    }
}

/// Runs every step, each after checking its folder still is the one verified; the first
/// failure is returned (the caller undoes everything). Records in `touched` each target whose
/// in-place overwrite began.
///
/// The in-place overwrites run first, on every core: each touches only its own file (a single
/// link, in a folder that stays; a folder is replaced only while empty), so their order does not
/// matter, and a failure stops the rest as it does in order. Then the other steps (swaps,
/// deletes, made items, the companion) run in order.
#[allow(clippy::too_many_arguments, reason = "the state of one restore, passed down")]
fn apply_all<'a>(
    store: &ObjectStore,
    steps: &'a [Step],
    journal: &Journal,
    journal_path: &Path,
    options: &RestoreOptions,
    folders: &Folders,
    trusted: Option<&Path>,
    touched: &mut [Option<&'a Original>],
) -> Result<()> {
    let began: Vec<AtomicBool> = steps.iter().map(|_| AtomicBool::new(false)).collect();
    // The in-place overwrites run in no set order: each folder on their way is checked once,
    // before the first of them that writes in it (the ordered steps check before each step).
    let checked = Mutex::new(HashSet::new());
    let one = |index: usize, op: &JournalOp, step: &Step| -> Result<()> {
        if !options.faults.step_delay.is_zero() {
            std::thread::sleep(options.faults.step_delay);
        }
        let result = if options.faults.fail_before_step == Some(index) {
            Err(std::io::Error::other("injected failure"))
        } else if let (Method::InPlace, Some(original)) = (op.method, &step.original) {
            let bytes = step_bytes(store, step)?;
            let data = step.content != Some(original.content);
            folders.check_once(&op.folder, trusted, &checked).and_then(|()| {
                let (folder, name) = folders.split(&op.target)?;
                let identity = Some((original.device, original.inode));
                let held = Some((original.bytes.as_slice(), original.stamp));
                let mark = || began[index].store(true, Ordering::Relaxed);
                overwrite(&folder, name, &bytes, step.mode, identity, held, data, mark)
            })
        } else {
            folders.check(&op.folder, trusted).and_then(|()| apply_op(op, folders))
        };
        result.map_err(|source| Error::RestoreFailed {
            path: op.target.clone(),
            source,
            rolled_back: true,
            journal: journal_path.to_owned(),
        })
    };
    let in_place = |op: &JournalOp, step: &Step| op.method == Method::InPlace && step.original.is_some();
    let ops: Vec<(usize, (&JournalOp, &Step))> = journal.ops.iter().zip(steps).enumerate().collect();
    let overwritten = ops
        .par_iter()
        .filter(|(_, (op, step))| in_place(op, step))
        .try_for_each(|&(index, (op, step))| one(index, op, step));
    let rest = || {
        ops.iter()
            .filter(|(_, (op, step))| !in_place(op, step))
            .try_for_each(|&(index, (op, step))| one(index, op, step))
    };
    let result = overwritten.and_then(|()| rest());
    for ((slot, began), step) in touched.iter_mut().zip(&began).zip(steps) {
        if began.load(Ordering::Relaxed) {
            *slot = step.original.as_ref();
        }
    }
    result
}

/// Undoes everything after a failure and returns the error to report: `error` itself when the
/// undo worked (the journal is removed), else a failure that says the journal was kept.
fn abandon(
    journal: &Journal,
    journal_path: &Path,
    error: Error,
    folders: &Folders,
    touched: &[Option<&Original>],
) -> Error {
    match undo_all(journal, folders, touched) {
        Ok(()) => match Journal::remove(journal_path) {
            Ok(()) => {
                let _ = std::fs::remove_file(companion_copy(journal_path));
                error
            }
            Err(remove_error) => remove_error,
        },
        Err(source) => {
            let path = match &error {
                Error::RestoreFailed { path, .. } => path.clone(),
                _ => journal_path.to_owned(),
            };
            Error::RestoreFailed { path, source, rolled_back: false, journal: journal_path.to_owned() }
        }
    }
}

fn open_folders(journal: &Journal, journal_path: &Path, folders: &Folders) -> Result<()> {
    let distinct: BTreeSet<&Path> = journal.ops.iter().map(|op| op.folder.as_path()).collect();
    for folder in distinct.into_iter().filter(|folder| !journal.created_dirs.iter().any(|created| created == folder)) {
        folders.open(folder).map_err(|source| Error::RestoreFailed {
            path: folder.to_owned(),
            source,
            rolled_back: true,
            journal: journal_path.to_owned(),
        })?;
    }
    Ok(())
}

/// Writes each new content to its temp file (parents created first), in parallel. An I/O
/// failure (a full disk, say) is reported against the target it was for; no target was touched.
fn stage(store: &ObjectStore, steps: &[Step], journal: &Journal, journal_path: &Path, folders: &Folders) -> Result<()> {
    let failed = |target: &Path, error: Error| match error {
        Error::Io { source, .. } => Error::RestoreFailed {
            path: target.to_owned(),
            source,
            rolled_back: true,
            journal: journal_path.to_owned(),
        },
        other => other,
    };
    for folder in &journal.created_dirs {
        folders.make_dir(folder).map_err(|error| failed(folder, Error::io(folder, error)))?;
    }
    let copy = companion_copy(journal_path);
    steps.par_iter().zip(journal.ops.par_iter()).try_for_each(|(step, op)| match &op.temp {
        Some(temp) => stage_one(store, step, temp, folders, &copy).map_err(|error| failed(&step.target, error)),
        None => Ok(()),
    })
}

/// The new bytes of a write: kept from verification, else read again (and checked again).
fn step_bytes<'a>(store: &ObjectStore, step: &'a Step) -> Result<Cow<'a, [u8]>> {
    match (&step.bytes, &step.source) {
        (Some(bytes), _) => Ok(Cow::Borrowed(bytes)),
        (None, Some(source)) => {
            let (content, bytes) = load(store, source).map_err(|kind| Error::RestoreRefused {
                problems: vec![super::RestoreProblem { target: step.target.clone(), kind }],
            })?;
            if Some(content) != step.content {
                return Err(Error::ObjectCorrupt {
                    id: content.to_string(),
                    path: step.target.clone(),
                    reason: "changed between verification and staging".into(),
                });
            }
            Ok(Cow::Owned(bytes))
        }
        (None, None) => unreachable!("a write step always has a source"),
    }
}

/// Writes one new content to its temp. The companion's temp is a hard link of its durable copy
/// beside the journal (written and flushed already: its bytes are neither written nor flushed a
/// second time), unless the two are on different file systems.
fn stage_one(store: &ObjectStore, step: &Step, temp: &Path, folders: &Folders, copy: &Path) -> Result<()> {
    let (folder, name) = folders.split(temp).map_err(|source| Error::io(temp, source))?;
    if let Some(special) = &step.special {
        return make_at(&folder, name, special).map_err(|source| Error::io(temp, source));
    }
    if step.source.is_none() && rustix::fs::linkat(rustix::fs::CWD, copy, &*folder, name, AtFlags::empty()).is_ok() {
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let linked =
            rustix::fs::openat(&*folder, name, flags, Mode::empty()).map_err(|errno| Error::io(temp, errno.into()))?;
        return give_owner_and_mode(&std::fs::File::from(linked), step).map_err(|source| Error::io(temp, source));
    }
    let bytes = step_bytes(store, step)?;
    // Created with the wanted permission bits (as the umask leaves them): the usual file then
    // needs no `fchmod` of its own.
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let created = rustix::fs::openat(&*folder, name, flags, Mode::from_raw_mode(step.mode & 0o777))
        .map_err(|errno| Error::io(temp, errno.into()))?;
    let mut file = std::fs::File::from(created);
    file.write_all(&bytes).map_err(|source| Error::io(temp, source))?;
    give_owner_and_mode(&file, step).map_err(|source| Error::io(temp, source))
}

/// Gives a staged file the owner of the file it replaces (when this process may) and the
/// step's permission bits.
fn give_owner_and_mode(file: &std::fs::File, step: &Step) -> std::io::Result<()> {
    let mut mode_right = false;
    if let Some((uid, gid)) = step.owner {
        let metadata = file.metadata()?;
        if metadata.uid() != uid || metadata.gid() != gid {
            // Only root may give a file away; for anyone else the new file stays theirs.
            let _ =
                rustix::fs::fchown(file, Some(rustix::fs::Uid::from_raw(uid)), Some(rustix::fs::Gid::from_raw(gid)));
        } else {
            mode_right = metadata.mode() & 0o7777 == step.mode;
        }
    }
    if !mode_right {
        file.set_permissions(std::fs::Permissions::from_mode(step.mode))?;
    }
    Ok(())
}

/// One syncfs per file system the ops touch: staged bytes and renames reach the disk together.
/// (`bench_flush.py` measured the alternative, a flush of each written file: on ext4 it cost
/// several times one `syncfs` on a quiet file system, and still more than it with 1 GB of
/// another program's data waiting to be written.)
fn sync_filesystems(ops: &[JournalOp], folders: &Folders) -> Result<()> {
    let mut devices = BTreeSet::new();
    let distinct: BTreeSet<&Path> = ops.iter().map(|op| op.folder.as_path()).collect();
    for folder in distinct {
        let (handle, device) = match folders.open_on(folder) {
            Ok(opened) => opened,
            // Removed since (a folder the restore emptied, after the commit returned, before a
            // kill): its removal is flushed with the file system of its nearest existing folder.
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                match folder.ancestors().skip(1).find_map(|above| folders.open_on(above).ok()) {
                    Some(opened) => opened,
                    None => continue,
                }
            }
            Err(source) => return Err(Error::io(folder, source)),
        };
        if devices.insert(device) {
            rustix::fs::syncfs(&*handle).map_err(|errno| Error::io(folder, errno.into()))?;
        }
    }
    Ok(())
}

/// Swaps one target: the original is set aside (hard link, else rename), then the temp takes
/// its place.
///
/// With the original hard-linked aside, the temp and the target are exchanged
/// (`RENAME_EXCHANGE`) and the temp's name, now a second link to the original, is removed: a
/// plain rename over an existing file makes ext4 write the renamed file's data out on the spot
/// (`auto_da_alloc`), one file after another, where the `syncfs` that follows writes them all at
/// once. Every intermediate state is one [`undo_op`] already handles: the set-aside link puts the
/// original back, and whatever is left at the temp name is removed.
fn apply_op(op: &JournalOp, folders: &Folders) -> std::io::Result<()> {
    let folder = folders.open(&op.folder)?;
    let name = file_name(&op.target);
    let (aside, aside_name) = folders.split(&op.rollback)?;
    match (op.action, &op.temp) {
        (Action::Write, Some(temp)) => {
            let (staged, staged_name) = folders.split(temp)?;
            if let Some(special @ Special::Folder { mode }) = &op.special {
                if !op.original_existed && holds_special(&folder, name, special) {
                    // Made meanwhile as the folder of another target: only its mode is set.
                    rustix::fs::chmodat(&*folder, name, Mode::from_raw_mode(*mode), AtFlags::empty())?;
                    return remove_at(&staged, staged_name);
                }
            }
            if op.original_existed {
                // A hard link keeps the target path present throughout; rename is the fallback
                // on file systems without links.
                if rustix::fs::linkat(&*folder, name, &*aside, aside_name, AtFlags::empty()).is_err() {
                    rustix::fs::renameat(&*folder, name, &*aside, aside_name)?;
                } else if rustix::fs::renameat_with(&*staged, staged_name, &*folder, name, RenameFlags::EXCHANGE)
                    .is_ok()
                {
                    return remove_at(&staged, staged_name);
                }
                // No exchange (a file system without it): a plain rename replaces the target.
            }
            Ok(rustix::fs::renameat(&*staged, staged_name, &*folder, name)?)
        }
        (Action::Delete, _) => Ok(rustix::fs::renameat(&*folder, name, &*aside, aside_name)?),
        _ => Err(std::io::Error::other("malformed restore step")),
    }
}

/// Puts one target back as it was before the restore, judging from what is on disk. The
/// target's folder is opened only when something must change in it, so an op that never ran in
/// a folder that has since been swapped away does not fail the undo.
fn undo_op(op: &JournalOp, original: Option<&Original>, folders: &Folders) -> std::io::Result<()> {
    let name = file_name(&op.target);
    if op.method == Method::InPlace {
        // Untouched (its overwrite never began): nothing to put back.
        let Some(original) = original else { return Ok(()) };
        let folder = folders.open(&op.folder)?;
        let data = !holds(&folder, name, &original.content);
        return overwrite(&folder, name, &original.bytes, original.mode, None, None, data, || ());
    }
    let staged = |temp: &Path| -> std::io::Result<bool> {
        let (folder, temp_name) = folders.split(temp)?;
        Ok(exists_at(&folder, temp_name))
    };
    if op.original_existed {
        let (aside, aside_name) = folders.split(&op.rollback)?;
        if exists_at(&aside, aside_name) {
            let folder = folders.open(&op.folder)?;
            if op.special.as_ref().is_some_and(|special| holds_special(&folder, name, special)) {
                remove_at(&folder, name)?; // a folder cannot be renamed over; nothing else was there
            }
            if let Err(errno) = rustix::fs::renameat(&*aside, aside_name, &*folder, name) {
                // An empty folder set aside cannot be renamed over what this restore put there
                // (nor a file over a folder it made): that goes first.
                if !matches!(errno, rustix::io::Errno::ISDIR | rustix::io::Errno::NOTDIR | rustix::io::Errno::NOTEMPTY)
                {
                    return Err(errno.into());
                }
                remove_at(&folder, name)?;
                rustix::fs::renameat(&*aside, aside_name, &*folder, name)?;
            }
            // Renaming a hard link onto the same inode is a no-op that leaves the link behind.
            remove_at(&aside, aside_name)?;
        }
    } else if op.action == Action::Write && !op.temp.as_deref().map(staged).transpose()?.unwrap_or(false) {
        // No temp left: it was renamed into place (or never written). Remove the target only
        // when it holds what this restore wrote, so a file someone else made is never touched.
        if let Some(special) = &op.special {
            let folder = folders.open(&op.folder)?;
            if holds_special(&folder, name, special) {
                let removed = remove_at(&folder, name);
                // A folder still holding another target's undo is removed with the created folders.
                if !matches!(special, Special::Folder { .. }) {
                    removed?;
                }
            }
        } else if let Some(content) = &op.content {
            let folder = folders.open(&op.folder)?;
            if holds(&folder, name, content) {
                remove_at(&folder, name)?;
            }
        }
    }
    if let Some(temp) = &op.temp {
        if staged(temp)? {
            let (folder, temp_name) = folders.split(temp)?;
            remove_at(&folder, temp_name)?;
        }
    }
    Ok(())
}

/// Undoes every op (newest first) and removes the folders the restore created, when empty.
/// `touched` holds, by op, the originals of targets whose in-place overwrite began (empty for
/// a version 1 journal, which overwrites nothing in place).
fn undo_all(journal: &Journal, folders: &Folders, touched: &[Option<&Original>]) -> std::io::Result<()> {
    let mut first_error = None;
    for (index, op) in journal.ops.iter().enumerate().rev() {
        if let Err(error) = undo_op(op, touched.get(index).copied().flatten(), folders) {
            first_error.get_or_insert(error);
        }
    }
    for folder in journal.created_dirs.iter().rev() {
        // Fails (and is left) when not empty: something else lives there now.
        if let Ok((parent, name)) = folders.split(folder) {
            let _ = rustix::fs::unlinkat(&*parent, name, AtFlags::REMOVEDIR);
        }
    }
    if first_error.is_none() {
        remove_trash(journal);
    }
    let distinct: BTreeSet<&Path> = journal.ops.iter().map(|op| op.folder.as_path()).collect();
    for folder in distinct {
        if let Ok(handle) = folders.open(folder) {
            let _ = rustix::fs::fsync(&*handle);
        }
    }
    first_error.map_or(Ok(()), Err)
}

/// Removes the set-aside originals a committed restore left beside their targets (the trash
/// folder goes as a whole, afterwards).
fn finish(journal: &Journal, folders: &Folders) {
    let trash = journal.trash.as_deref();
    journal.ops.par_iter().filter(|op| !trash.is_some_and(|folder| op.rollback.starts_with(folder))).for_each(|op| {
        if let Ok((aside, aside_name)) = folders.split(&op.rollback) {
            let _ = remove_at(&aside, aside_name);
        }
    });
}

fn remove_trash(journal: &Journal) {
    if let Some(trash) = &journal.trash {
        let _ = std::fs::remove_dir_all(trash);
    }
}

/// Deletes trash folders of earlier restores of this journal that no pending journal uses
/// (a process that exited before its background cleanup finished leaves them), and the temps a
/// killed write of this journal or its companion's copy left (`.<journal name>.….cctmp`: the
/// caller holds the journal lock, so nobody is writing them now).
fn sweep_stale(journal_path: &Path, keep: Option<&Path>) {
    let (Some(folder), Some(name)) = (journal_path.parent(), journal_path.file_name()) else { return };
    let prefix = format!(".{}.", name.to_string_lossy());
    let Ok(entries) = std::fs::read_dir(folder) else { return };
    for entry in entries.flatten() {
        let entry_name = entry.file_name().to_string_lossy().into_owned();
        if !entry_name.starts_with(&prefix) {
            continue;
        }
        let path = entry.path();
        if entry_name.ends_with(TEMP_SUFFIX) {
            let _ = std::fs::remove_file(path);
            continue;
        }
        let kept = keep.is_some_and(|keep| std::fs::canonicalize(&path).is_ok_and(|real| real == keep));
        if entry_name.ends_with(TRASH_SUFFIX) && !kept {
            let _ = std::fs::remove_dir_all(path);
        }
    }
}

/// Finishes or undoes a restore a crash interrupted, if `journal` records one.
///
/// Takes the journal lock; fails with [`Error::RestoreInProgress`] while another process is
/// restoring.
/// Every path the journal names is first checked against `bounds` (`bounds.rs`): a journal that
/// names anything outside them fails with [`Error::JournalUntrusted`], kept, nothing touched.
pub fn recover(journal: &Path, bounds: &RecoveryBounds) -> Result<Option<RecoveryOutcome>> {
    let _lock = JournalLock::acquire(journal)?;
    recover_locked(journal, bounds)
}

/// [`recover`] for a caller that already holds the lock.
pub(super) fn recover_locked(journal_path: &Path, bounds: &RecoveryBounds) -> Result<Option<RecoveryOutcome>> {
    let Some(journal) = Journal::read(journal_path)? else {
        sweep_stale(journal_path, None);
        let _ = std::fs::remove_file(companion_copy(journal_path));
        return Ok(None);
    };
    check_bounds(&journal, journal_path, bounds)?;
    sweep_stale(journal_path, journal.trash.as_deref());
    let targets = journal.ops.iter().map(|op| op.target.clone()).collect();
    let folders = Folders::default();
    let outcome = match (journal.state, journal.recovery) {
        (JournalState::Open, Recovery::Undo) => {
            undo_all(&journal, &folders, &[]).map_err(|source| Error::RestoreFailed {
                path: journal_path.to_owned(),
                source,
                rolled_back: false,
                journal: journal_path.to_owned(),
            })?;
            RecoveryOutcome::RolledBack { targets }
        }
        (JournalState::Open, Recovery::Redo) => {
            redo_all(&journal, &folders).and_then(|()| sync_filesystems(&journal.ops, &folders)).map_err(|error| {
                Error::RecoveryIncomplete { journal: journal_path.to_owned(), reason: error.to_string() }
            })?;
            finish(&journal, &folders);
            remove_trash(&journal);
            RecoveryOutcome::Completed { targets }
        }
        (JournalState::Committed, _) => {
            finish(&journal, &folders);
            remove_trash(&journal);
            RecoveryOutcome::Completed { targets }
        }
    };
    Journal::remove(journal_path)?;
    let _ = std::fs::remove_file(companion_copy(journal_path));
    Ok(Some(outcome))
}

#[cfg(test)]
mod tests {
    use super::super::{check, restore, BackupSource, Desired, Expected, FaultInjection, ProblemKind, RestoreItem};
    use super::*;
    use crate::store::digest::ContentId;
    use std::collections::BTreeMap;

    struct Fixture {
        _folder: tempfile::TempDir,
        project: PathBuf,
        journal: PathBuf,
        store: ObjectStore,
    }

    fn fixture() -> Fixture {
        let folder = tempfile::tempdir().unwrap();
        let project = folder.path().join("project");
        std::fs::create_dir(&project).unwrap();
        let store = ObjectStore::open(folder.path().join("objects")).unwrap();
        let journal = folder.path().join("journals/session.json");
        Fixture { project, journal, store, _folder: folder }
    }

    /// Every file under a folder: its bytes and permission bits.
    type Tree = BTreeMap<PathBuf, (Vec<u8>, u32)>;

    fn tree(root: &Path) -> Tree {
        super::super::test_tree::entries(root)
            .into_iter()
            .filter(|(_, metadata)| !metadata.is_dir())
            .map(|(path, metadata)| {
                let bytes = std::fs::read(&path).unwrap();
                (path, (bytes, metadata.mode() & 0o7777))
            })
            .collect()
    }

    fn content(fixture: &Fixture, bytes: &[u8], mode: u32) -> Desired {
        let (id, _) = fixture.store.put_bytes(bytes).unwrap();
        Desired::Content { source: BackupSource::Object(id), mode: Some(mode) }
    }

    /// Verifies `items` and builds the open journal a restore of them starts with (its trash
    /// folder made), for tests that then stage and apply by hand to simulate a crash. With
    /// [`Recovery::Undo`] it is the swap-only journal of earlier releases (nothing in place).
    fn open_journal(fixture: &Fixture, items: &[RestoreItem], recovery: Recovery) -> (Verified, Journal) {
        open_journal_with(fixture, items, recovery, &options(fixture))
    }

    fn open_journal_with(
        fixture: &Fixture,
        items: &[RestoreItem],
        recovery: Recovery,
        options: &RestoreOptions,
    ) -> (Verified, Journal) {
        let mut verified = super::super::verify::verify(&fixture.store, items, options).unwrap();
        if recovery == Recovery::Undo {
            verified.steps.iter_mut().for_each(|step| step.original = None);
        }
        std::fs::create_dir_all(fixture.journal.parent().unwrap()).unwrap();
        let root = options.confine_to.as_deref().map(|root| std::fs::canonicalize(root).unwrap());
        let journal = open_restore(&fixture.store, &verified.steps, &fixture.journal, root).unwrap();
        if recovery == Recovery::Undo {
            let undo = Journal { recovery, ..journal };
            undo.write(&fixture.journal).unwrap();
            return (verified, undo);
        }
        (verified, journal)
    }

    /// What recovery may touch in these tests: the project, the store, the companion file.
    fn bounds(fixture: &Fixture) -> RecoveryBounds {
        RecoveryBounds {
            root: Some(fixture.project.clone()),
            store: Some(fixture.store.root().to_owned()),
            companion: Some(fixture.project.join("../records.jsonl")),
            ..RecoveryBounds::default()
        }
    }

    fn options(fixture: &Fixture) -> RestoreOptions {
        RestoreOptions { confine_to: Some(fixture.project.clone()), ..RestoreOptions::default() }
    }

    #[test]
    fn a_kill_before_the_settle_is_completed_even_after_an_emptied_folder_was_removed() {
        let fixture = fixture();
        let kept = fixture.project.join("a.txt");
        let deleted = fixture.project.join("gone/b.bin");
        std::fs::write(&kept, b"now").unwrap();
        std::fs::create_dir_all(deleted.parent().unwrap()).unwrap();
        std::fs::write(&deleted, b"made by the turn").unwrap();
        let items = vec![
            RestoreItem {
                target: kept.clone(),
                desired: content(&fixture, b"then", 0o644),
                expected: Expected::Unknown,
            },
            RestoreItem { target: deleted.clone(), desired: Desired::Absent, expected: Expected::Unknown },
        ];
        std::fs::create_dir_all(fixture.journal.parent().unwrap()).unwrap();
        let verified = super::super::verify::verify(&fixture.store, &items, &options(&fixture)).unwrap();
        let (_, settle) = run(&fixture.store, verified, &fixture.journal, &options(&fixture)).unwrap();
        drop(settle); // the process is killed before its settle runs: the journal stays open
        assert!(fixture.journal.exists());
        // The Python layer removes the folder the restore emptied as soon as the commit returned.
        std::fs::remove_dir(deleted.parent().unwrap()).unwrap();
        let outcome = recover(&fixture.journal, &bounds(&fixture)).unwrap();
        assert!(matches!(outcome, Some(RecoveryOutcome::Completed { .. })), "{outcome:?}");
        assert_eq!(std::fs::read(&kept).unwrap(), b"then");
        assert!(!deleted.parent().unwrap().exists() && !fixture.journal.exists());
    }

    #[test]
    fn restores_modified_deleted_and_created_files() {
        let fixture = fixture();
        let modified = fixture.project.join("a.txt");
        let created = fixture.project.join("new/deep.txt");
        let deleted = fixture.project.join("gone/b.bin");
        std::fs::write(&modified, b"after").unwrap();
        std::fs::create_dir_all(created.parent().unwrap()).unwrap();
        std::fs::write(&created, b"created later").unwrap();
        let items = vec![
            RestoreItem {
                target: modified.clone(),
                desired: content(&fixture, b"before", 0o755),
                expected: Expected::Content(ContentId::of(b"after")),
            },
            RestoreItem { target: created.clone(), desired: Desired::Absent, expected: Expected::Unknown },
            RestoreItem {
                target: deleted.clone(),
                desired: content(&fixture, &[0, 159, 146, 150], 0o600),
                expected: Expected::Absent,
            },
        ];
        let plan = restore(&fixture.store, &items, &fixture.journal, &options(&fixture)).unwrap();
        assert_eq!(
            plan.entries.iter().map(|entry| entry.action).collect::<Vec<_>>(),
            [Action::Write, Action::Delete, Action::Write]
        );
        assert_eq!(std::fs::read(&modified).unwrap(), b"before");
        assert_eq!(std::fs::metadata(&modified).unwrap().mode() & 0o7777, 0o755);
        assert!(!created.exists());
        assert_eq!(std::fs::read(&deleted).unwrap(), [0, 159, 146, 150]);
        assert!(!fixture.journal.exists());
        let leftovers: Vec<_> = tree(&fixture.project)
            .into_keys()
            .filter(|path| path.file_name().unwrap().to_string_lossy().starts_with('.'))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }

    #[test]
    fn refusals_name_every_failing_file_and_write_nothing() {
        let fixture = fixture();
        let inside = fixture.project.join("ok.txt");
        std::fs::write(&inside, b"now").unwrap();
        let link = fixture.project.join("link");
        std::os::unix::fs::symlink(&inside, &link).unwrap();
        let missing = ContentId::of(b"never stored");
        let items = vec![
            RestoreItem {
                target: inside.clone(),
                desired: content(&fixture, b"then", 0o644),
                expected: Expected::Unknown,
            },
            RestoreItem {
                target: fixture.project.join("../../x"),
                desired: Desired::Absent,
                expected: Expected::Unknown,
            },
            RestoreItem { target: PathBuf::from("/etc/x"), desired: Desired::Absent, expected: Expected::Unknown },
            RestoreItem { target: link.clone(), desired: content(&fixture, b"y", 0o644), expected: Expected::Unknown },
            RestoreItem {
                target: fixture.project.join("m.txt"),
                desired: Desired::Content { source: BackupSource::Object(missing), mode: None },
                expected: Expected::Unknown,
            },
        ];
        let before = tree(&fixture.project);
        let error = restore(&fixture.store, &items, &fixture.journal, &options(&fixture)).unwrap_err();
        let Error::RestoreRefused { problems } = &error else { panic!("{error}") };
        let kinds: Vec<&str> = problems.iter().map(|problem| problem.kind.code()).collect();
        assert_eq!(kinds, ["outside", "outside", "symlink", "object_missing"]);
        assert_eq!(tree(&fixture.project), before);
        let message = error.to_string();
        assert!(message.contains("m.txt") && message.contains("link"), "{message}");
    }

    #[test]
    fn changed_outside_is_refused_unless_forced() {
        let fixture = fixture();
        let target = fixture.project.join("a.txt");
        std::fs::write(&target, b"edited by hand").unwrap();
        let items = vec![RestoreItem {
            target: target.clone(),
            desired: content(&fixture, b"original", 0o644),
            expected: Expected::Content(ContentId::of(b"written by the tool")),
        }];
        let plan = check(&fixture.store, &items, &options(&fixture)).unwrap();
        assert_eq!(plan.problems[0].kind, ProblemKind::ChangedOutside);
        assert!(restore(&fixture.store, &items, &fixture.journal, &options(&fixture)).is_err());
        assert_eq!(std::fs::read(&target).unwrap(), b"edited by hand");
        let forced = RestoreOptions { force: true, ..options(&fixture) };
        restore(&fixture.store, &items, &fixture.journal, &forced).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"original");
    }

    #[test]
    fn a_failure_midway_puts_back_what_was_written() {
        for fail_at in 0..4 {
            let fixture = fixture();
            let mut items = Vec::new();
            for index in 0..4 {
                let target = fixture.project.join(format!("f{index}"));
                if index != 3 {
                    std::fs::write(&target, format!("current {index}")).unwrap();
                }
                let desired = if index == 2 {
                    Desired::Absent
                } else {
                    content(&fixture, format!("old {index}").as_bytes(), 0o644)
                };
                items.push(RestoreItem { target, desired, expected: Expected::Unknown });
            }
            let before = tree(&fixture.project);
            let failing = RestoreOptions {
                faults: FaultInjection { fail_before_step: Some(fail_at), ..FaultInjection::default() },
                ..options(&fixture)
            };
            let error = restore(&fixture.store, &items, &fixture.journal, &failing).unwrap_err();
            assert!(matches!(error, Error::RestoreFailed { rolled_back: true, .. }), "{error}");
            assert_eq!(tree(&fixture.project), before, "failing at step {fail_at}");
            assert!(!fixture.journal.exists());
        }
    }

    #[test]
    fn recovery_rolls_back_an_open_version_1_journal_at_every_step() {
        // Simulate a crash after each apply step: stage and apply `done` ops by hand, then recover.
        for done in 0..=3 {
            let fixture = fixture();
            let targets: Vec<PathBuf> = (0..3).map(|index| fixture.project.join(format!("f{index}"))).collect();
            std::fs::write(&targets[0], b"zero").unwrap();
            std::fs::write(&targets[1], b"one").unwrap();
            let items = vec![
                RestoreItem {
                    target: targets[0].clone(),
                    desired: content(&fixture, b"ZERO", 0o644),
                    expected: Expected::Unknown,
                },
                RestoreItem { target: targets[1].clone(), desired: Desired::Absent, expected: Expected::Unknown },
                RestoreItem {
                    target: targets[2].clone(),
                    desired: content(&fixture, b"TWO", 0o644),
                    expected: Expected::Unknown,
                },
            ];
            let before = tree(&fixture.project);
            let (verified, journal) = open_journal(&fixture, &items, Recovery::Undo);
            let folders = Folders::default();
            stage(&fixture.store, &verified.steps, &journal, &fixture.journal, &folders).unwrap();
            std::fs::create_dir_all(fixture.journal.parent().unwrap()).unwrap();
            journal.write(&fixture.journal).unwrap();
            for op in &journal.ops[..done] {
                apply_op(op, &folders).unwrap();
            }
            let outcome = recover(&fixture.journal, &bounds(&fixture)).unwrap();
            assert!(matches!(outcome, Some(RecoveryOutcome::RolledBack { .. })));
            assert_eq!(tree(&fixture.project), before, "crash after {done} steps");
        }
    }

    #[test]
    fn recovery_puts_back_an_original_caught_mid_exchange() {
        // A crash between the exchange and the removal of the temp name leaves the new file at
        // the target, the original both set aside and at the temp name.
        let fixture = fixture();
        let target = fixture.project.join("a.txt");
        std::fs::write(&target, b"original").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o640)).unwrap();
        let items = vec![RestoreItem {
            target: target.clone(),
            desired: content(&fixture, b"restored", 0o644),
            expected: Expected::Unknown,
        }];
        let before = tree(&fixture.project);
        let (verified, journal) = open_journal(&fixture, &items, Recovery::Undo);
        journal.write(&fixture.journal).unwrap();
        let folders = Folders::default();
        stage(&fixture.store, &verified.steps, &journal, &fixture.journal, &folders).unwrap();
        let op = &journal.ops[0];
        let temp = op.temp.as_deref().unwrap();
        std::fs::hard_link(&op.target, &op.rollback).unwrap();
        let (folder, name) = folders.split(&op.target).unwrap();
        let (staged, staged_name) = folders.split(temp).unwrap();
        rustix::fs::renameat_with(&*staged, staged_name, &*folder, name, RenameFlags::EXCHANGE).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"restored");
        assert_eq!(std::fs::read(temp).unwrap(), b"original");
        let outcome = recover(&fixture.journal, &bounds(&fixture)).unwrap();
        assert!(matches!(outcome, Some(RecoveryOutcome::RolledBack { .. })));
        assert_eq!(tree(&fixture.project), before);
    }

    /// Three targets: one overwritten in place (shrinking, new mode), one created, one deleted.
    fn mixed_items(fixture: &Fixture) -> (Vec<RestoreItem>, Tree) {
        let targets: Vec<PathBuf> = (0..3).map(|index| fixture.project.join(format!("f{index}"))).collect();
        std::fs::write(&targets[0], b"zero, as edited later").unwrap();
        std::fs::write(&targets[1], b"one").unwrap();
        let items = vec![
            RestoreItem {
                target: targets[0].clone(),
                desired: content(fixture, b"ZERO", 0o600),
                expected: Expected::Unknown,
            },
            RestoreItem { target: targets[1].clone(), desired: Desired::Absent, expected: Expected::Unknown },
            RestoreItem {
                target: targets[2].clone(),
                desired: content(fixture, b"TWO", 0o755),
                expected: Expected::Unknown,
            },
        ];
        let wanted = BTreeMap::from([
            (targets[0].clone(), (b"ZERO".to_vec(), 0o600)),
            (targets[2].clone(), (b"TWO".to_vec(), 0o755)),
        ]);
        (items, wanted)
    }

    #[test]
    fn recovery_completes_an_open_journal_at_every_step() {
        // Simulate a crash after each apply step (and once mid-way through the in-place write),
        // then recover: the restore is finished from the store.
        for done in 0..=4 {
            let fixture = fixture();
            let (items, wanted) = mixed_items(&fixture);
            let (verified, journal) = open_journal(&fixture, &items, Recovery::Redo);
            assert_eq!(journal.ops[0].method, Method::InPlace);
            assert_eq!(journal.ops[2].method, Method::Swap);
            journal.write(&fixture.journal).unwrap();
            let folders = Folders::default();
            stage(&fixture.store, &verified.steps, &journal, &fixture.journal, &folders).unwrap();
            if done == 4 {
                // Torn: half the new bytes written over the old ones.
                std::fs::write(&journal.ops[0].target, b"ZE").unwrap();
            } else {
                let failing = RestoreOptions {
                    faults: FaultInjection { fail_before_step: Some(done), ..FaultInjection::default() },
                    ..options(&fixture)
                };
                let mut touched = vec![None; verified.steps.len()];
                let _ = apply_all(
                    &fixture.store,
                    &verified.steps,
                    &journal,
                    &fixture.journal,
                    &failing,
                    &folders,
                    None,
                    &mut touched,
                );
            }
            let outcome = recover(&fixture.journal, &bounds(&fixture)).unwrap();
            assert!(matches!(outcome, Some(RecoveryOutcome::Completed { .. })), "{outcome:?}");
            assert_eq!(tree(&fixture.project), wanted, "crash after {done} steps");
            assert!(!fixture.journal.exists());
            let trash_left = std::fs::read_dir(fixture.journal.parent().unwrap())
                .unwrap()
                .flatten()
                .any(|entry| entry.file_name().to_string_lossy().ends_with(TRASH_SUFFIX));
            assert!(!trash_left);
        }
    }

    /// The options of a restore that replaces `records.jsonl` (beside the project) with `bytes`
    /// and `mode` as its companion, and that file's path.
    fn with_records(fixture: &Fixture, bytes: &[u8], mode: u32) -> (PathBuf, RestoreOptions) {
        let records = fixture.project.join("../records.jsonl");
        if !records.exists() {
            std::fs::write(&records, b"old records").unwrap();
        }
        let companion = super::super::Companion { path: records.clone(), bytes: bytes.to_vec(), mode };
        (records, RestoreOptions { companion: Some(companion), ..options(fixture) })
    }

    #[test]
    fn recovery_completes_the_companion_from_its_copy() {
        let fixture = fixture();
        let (records, with_companion) = with_records(&fixture, b"new records", 0o600);
        let (items, wanted) = mixed_items(&fixture);
        let (_, journal) = open_journal_with(&fixture, &items, Recovery::Redo, &with_companion);
        let companion = companion_copy(&fixture.journal);
        assert_eq!(journal.ops[3].source, Some(JournalSource::File(companion.clone())));
        // Crash before any target was touched.
        recover(&fixture.journal, &bounds(&fixture)).unwrap();
        assert_eq!(std::fs::read(&records).unwrap(), b"new records");
        assert_eq!(tree(&fixture.project), wanted);
        assert!(!companion.exists());
    }

    #[test]
    fn the_companion_is_written_once_its_temp_a_link_of_its_durable_copy() {
        let fixture = fixture();
        let (records, with_companion) = with_records(&fixture, b"new records", 0o640);
        let (items, wanted) = mixed_items(&fixture);
        let (verified, journal) = open_journal_with(&fixture, &items, Recovery::Redo, &with_companion);
        let folders = Folders::default();
        stage(&fixture.store, &verified.steps, &journal, &fixture.journal, &folders).unwrap();
        let copy = companion_copy(&fixture.journal);
        let temp = journal.ops[3].temp.clone().unwrap();
        let (temp_status, copy_status) = (std::fs::metadata(&temp).unwrap(), std::fs::metadata(&copy).unwrap());
        assert_eq!((temp_status.dev(), temp_status.ino()), (copy_status.dev(), copy_status.ino()));
        assert_eq!(temp_status.mode() & 0o7777, 0o640);
        assert_eq!(std::fs::read(&temp).unwrap(), b"new records");
        // Recovery completes it from the copy, which the staged temp shares.
        recover(&fixture.journal, &bounds(&fixture)).unwrap();
        assert_eq!(std::fs::read(&records).unwrap(), b"new records");
        assert_eq!(tree(&fixture.project), wanted);
        assert!(!copy.exists() && !temp.exists());
        // A whole restore leaves one link to the new records and no copy.
        let (_, again) = with_records(&fixture, b"newer records", 0o600);
        std::fs::write(fixture.project.join("f0"), b"edited").unwrap();
        restore(&fixture.store, &items, &fixture.journal, &again).unwrap();
        assert_eq!(std::fs::read(&records).unwrap(), b"newer records");
        assert_eq!(std::fs::metadata(&records).unwrap().nlink(), 1);
        assert_eq!(std::fs::metadata(&records).unwrap().mode() & 0o7777, 0o600);
        assert!(!copy.exists());
    }

    #[test]
    fn temps_a_killed_journal_write_left_are_swept_by_the_next_recovery() {
        let fixture = fixture();
        let folder = fixture.journal.parent().unwrap();
        std::fs::create_dir_all(folder).unwrap();
        let journal_temp = durable::temp_path_beside(&fixture.journal);
        let copy_temp = durable::temp_path_beside(&companion_copy(&fixture.journal));
        let another_sessions = folder.join(".another.json.1.2.3.cctmp");
        for path in [&journal_temp, &copy_temp, &another_sessions] {
            std::fs::write(path, b"torn").unwrap();
        }
        assert!(recover(&fixture.journal, &bounds(&fixture)).unwrap().is_none());
        assert!(!journal_temp.exists() && !copy_temp.exists());
        assert!(another_sessions.exists());
    }

    #[test]
    fn recovery_without_a_needed_backup_keeps_the_journal_and_says_how_to_go_on() {
        let fixture = fixture();
        let (items, wanted) = mixed_items(&fixture);
        let (_, journal) = open_journal(&fixture, &items, Recovery::Redo);
        let Some(JournalSource::Object(id)) = journal.ops[2].source else { panic!("{journal:?}") };
        let object = fixture.store.object_path(&id);
        let saved = std::fs::read(&object).unwrap();
        std::fs::remove_file(&object).unwrap();
        let error = recover(&fixture.journal, &bounds(&fixture)).unwrap_err();
        assert!(matches!(error, Error::RecoveryIncomplete { .. }), "{error}");
        let message = error.to_string();
        assert!(message.contains("is missing") && message.contains("delete the journal"), "{message}");
        assert!(fixture.journal.exists());
        // With the backup back, the next attempt finishes.
        std::fs::write(&object, saved).unwrap();
        assert!(matches!(
            recover(&fixture.journal, &bounds(&fixture)).unwrap(),
            Some(RecoveryOutcome::Completed { .. })
        ));
        assert_eq!(tree(&fixture.project), wanted);
    }

    #[test]
    fn an_in_place_write_keeps_the_inode_and_a_hard_linked_file_is_swapped() {
        let fixture = fixture();
        let single = fixture.project.join("single.txt");
        let linked = fixture.project.join("linked.txt");
        let other_link = fixture.project.join("elsewhere.txt");
        std::fs::write(&single, b"single now").unwrap();
        std::fs::write(&linked, b"linked now").unwrap();
        std::fs::hard_link(&linked, &other_link).unwrap();
        let inode = std::fs::metadata(&single).unwrap().ino();
        let items = vec![
            RestoreItem {
                target: single.clone(),
                desired: content(&fixture, b"single then", 0o644),
                expected: Expected::Unknown,
            },
            RestoreItem {
                target: linked.clone(),
                desired: content(&fixture, b"linked then", 0o644),
                expected: Expected::Unknown,
            },
        ];
        restore(&fixture.store, &items, &fixture.journal, &options(&fixture)).unwrap();
        assert_eq!(std::fs::read(&single).unwrap(), b"single then");
        assert_eq!(std::fs::metadata(&single).unwrap().ino(), inode);
        assert_eq!(std::fs::read(&linked).unwrap(), b"linked then");
        // The file's other name (outside the restore) keeps its bytes.
        assert_eq!(std::fs::read(&other_link).unwrap(), b"linked now");
    }

    #[test]
    fn a_running_program_is_replaced_and_put_back() {
        // A file a running process was started from cannot be opened for writing (ETXTBSY).
        // An executable is never overwritten in place; this one lost its execute bits after it
        // was started, so it is, and the write falls back to a new file.
        let fixture = fixture();
        let program = fixture.project.join("tool");
        std::fs::copy("/bin/sleep", &program).unwrap();
        let original = std::fs::read(&program).unwrap();
        let mut running = std::process::Command::new(&program).arg("30").spawn().unwrap();
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o644)).unwrap();
        let verified = super::super::verify::verify(
            &fixture.store,
            &[RestoreItem {
                target: program.clone(),
                desired: content(&fixture, b"x", 0o644),
                expected: Expected::Unknown,
            }],
            &options(&fixture),
        )
        .unwrap();
        assert!(verified.steps[0].original.is_some(), "planned in place");
        let items = vec![
            RestoreItem {
                target: program.clone(),
                desired: content(&fixture, b"#!/bin/sh\n", 0o755),
                expected: Expected::Unknown,
            },
            RestoreItem {
                target: fixture.project.join("second"),
                desired: content(&fixture, b"x", 0o644),
                expected: Expected::Unknown,
            },
        ];
        let failing = RestoreOptions {
            faults: FaultInjection { fail_before_step: Some(1), ..FaultInjection::default() },
            ..options(&fixture)
        };
        let error = restore(&fixture.store, &items, &fixture.journal, &failing).unwrap_err();
        assert!(matches!(error, Error::RestoreFailed { rolled_back: true, .. }), "{error}");
        assert_eq!(std::fs::read(&program).unwrap(), original);
        restore(&fixture.store, &items, &fixture.journal, &options(&fixture)).unwrap();
        assert_eq!(std::fs::read(&program).unwrap(), b"#!/bin/sh\n");
        assert_eq!(std::fs::metadata(&program).unwrap().mode() & 0o7777, 0o755);
        running.kill().unwrap();
        running.wait().unwrap();
    }

    #[test]
    fn executables_are_replaced_by_a_new_file_never_written_in_place() {
        let fixture = fixture();
        let script = fixture.project.join("run.sh");
        std::fs::write(&script, b"#!/bin/sh\necho now\n").unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let inode = std::fs::metadata(&script).unwrap().ino();
        let items = vec![RestoreItem {
            target: script.clone(),
            desired: content(&fixture, b"#!/bin/sh\necho then\n", 0o755),
            expected: Expected::Unknown,
        }];
        let verified = super::super::verify::verify(&fixture.store, &items, &options(&fixture)).unwrap();
        assert!(verified.steps[0].original.is_none());
        restore(&fixture.store, &items, &fixture.journal, &options(&fixture)).unwrap();
        assert_eq!(std::fs::read(&script).unwrap(), b"#!/bin/sh\necho then\n");
        assert_ne!(std::fs::metadata(&script).unwrap().ino(), inode);
    }

    #[test]
    fn a_target_replaced_after_verification_is_not_overwritten_in_place() {
        let fixture = fixture();
        let (items, _) = mixed_items(&fixture);
        let verified = super::super::verify::verify(&fixture.store, &items, &options(&fixture)).unwrap();
        let target = &items[0].target;
        // Someone replaces the file (a new inode) between verification and apply.
        let fresh = fixture.project.join("fresh");
        std::fs::write(&fresh, b"somebody's new file").unwrap();
        std::fs::rename(&fresh, target).unwrap();
        let before = tree(&fixture.project);
        std::fs::create_dir_all(fixture.journal.parent().unwrap()).unwrap();
        let Err(error) = run(&fixture.store, verified, &fixture.journal, &options(&fixture)) else {
            panic!("a replaced target was restored")
        };
        assert!(matches!(error, Error::RestoreFailed { rolled_back: true, .. }), "{error}");
        assert!(error.to_string().contains("replaced"), "{error}");
        assert_eq!(tree(&fixture.project), before);
    }

    #[test]
    fn unchanged_targets_are_not_rewritten() {
        let fixture = fixture();
        let target = fixture.project.join("same.txt");
        std::fs::write(&target, b"same").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o644)).unwrap();
        let items = vec![RestoreItem {
            target: target.clone(),
            desired: content(&fixture, b"same", 0o644),
            expected: Expected::Unknown,
        }];
        let plan = restore(&fixture.store, &items, &fixture.journal, &options(&fixture)).unwrap();
        assert_eq!(plan.entries[0].action, Action::Unchanged);
    }

    #[test]
    fn recovery_never_deletes_a_new_file_it_did_not_write() {
        let fixture = fixture();
        let target = fixture.project.join("appeared.txt");
        let items = vec![RestoreItem {
            target: target.clone(),
            desired: content(&fixture, b"ours", 0o644),
            expected: Expected::Unknown,
        }];
        let verified = super::super::verify::verify(&fixture.store, &items, &options(&fixture)).unwrap();
        let ops = journal_ops(&verified.steps, None, &companion_copy(&fixture.journal));
        let journal = Journal::open(fixture.store.root(), None, vec![], None, ops);
        std::fs::create_dir_all(fixture.journal.parent().unwrap()).unwrap();
        journal.write(&fixture.journal).unwrap();
        // Crash before staging; meanwhile someone else creates the file.
        std::fs::write(&target, b"somebody else's").unwrap();
        recover(&fixture.journal, &bounds(&fixture)).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"somebody else's");
    }

    /// Writes a random current tree (bytes and modes, or absent) and builds the items that
    /// restore a random wanted tree; returns them and the tree they must give.
    fn random_case(
        fixture: &Fixture,
        current: &[Option<(Vec<u8>, u32)>],
        wanted: &[Option<(Vec<u8>, u32)>],
    ) -> (Vec<RestoreItem>, Tree) {
        let names = ["a", "dir/b", "dir/deep/c", "d.bin"];
        for (name, state) in names.iter().zip(current) {
            if let Some((bytes, mode)) = state {
                let path = fixture.project.join(name);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, bytes).unwrap();
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(*mode)).unwrap();
            }
        }
        let items = names
            .iter()
            .zip(wanted)
            .map(|(name, wanted)| RestoreItem {
                target: fixture.project.join(name),
                desired: match wanted {
                    Some((bytes, mode)) => content(fixture, bytes, *mode),
                    None => Desired::Absent,
                },
                expected: Expected::Unknown,
            })
            .collect();
        let expected = names
            .iter()
            .zip(wanted)
            .filter_map(|(name, wanted)| wanted.clone().map(|state| (fixture.project.join(name), state)))
            .collect();
        (items, expected)
    }

    fn file_states() -> impl proptest::strategy::Strategy<Value = Vec<Option<(Vec<u8>, u32)>>> {
        use proptest::prelude::*;
        proptest::collection::vec(
            proptest::option::of((
                proptest::collection::vec(any::<u8>(), 0..64),
                proptest::sample::select(vec![0o600u32, 0o644, 0o755]),
            )),
            4,
        )
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 48, ..Default::default() })]

        /// Any current tree, restored to any wanted tree, gives exactly the wanted bytes and modes.
        #[test]
        fn restore_gives_back_exactly_the_wanted_tree(current in file_states(), wanted in file_states()) {
            let fixture = fixture();
            let (items, expected) = random_case(&fixture, &current, &wanted);
            restore(&fixture.store, &items, &fixture.journal, &options(&fixture)).unwrap();
            proptest::prop_assert_eq!(tree(&fixture.project), expected);
        }

        /// A crash before any apply step (and, when `torn`, in the middle of an in-place write)
        /// is completed by recovery into exactly the wanted tree.
        #[test]
        fn a_crash_at_any_step_is_completed_by_recovery(
            current in file_states(),
            wanted in file_states(),
            crash_at in 0usize..5,
            torn in proptest::prelude::any::<bool>(),
        ) {
            let fixture = fixture();
            let (items, expected) = random_case(&fixture, &current, &wanted);
            let (verified, journal) = open_journal(&fixture, &items, Recovery::Redo);
            let folders = Folders::default();
            stage(&fixture.store, &verified.steps, &journal, &fixture.journal, &folders).unwrap();
            let crashing = RestoreOptions {
                faults: FaultInjection { fail_before_step: Some(crash_at), ..FaultInjection::default() },
                ..options(&fixture)
            };
            let mut touched = vec![None; verified.steps.len()];
            let _ = apply_all(&fixture.store, &verified.steps, &journal, &fixture.journal, &crashing, &folders, None, &mut touched);
            if torn {
                if let Some(op) = journal.ops.iter().find(|op| op.method == Method::InPlace) {
                    std::fs::write(&op.target, b"torn").unwrap();
                }
            }
            recover(&fixture.journal, &bounds(&fixture)).unwrap();
            proptest::prop_assert_eq!(tree(&fixture.project), expected);
            proptest::prop_assert!(!fixture.journal.exists());
        }
    }
}
