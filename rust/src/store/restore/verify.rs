//! Pre-verification: everything a restore checks before it writes a single byte.
//!
//! Runs over all targets in parallel and collects every problem (not just the first), so the
//! refusal names each failing file. Verified bytes are kept for staging within a memory budget.

use super::target_io::Stamp;
use super::{
    special, Action, BackupSource, Companion, Desired, Expected, Plan, PlanEntry, ProblemKind, RestoreItem,
    RestoreOptions, RestoreProblem, Special,
};
use crate::error::{Error, Result};
use crate::store::digest::ContentId;
use crate::store::objects::{read_raw_blob_named, ObjectStore};
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Mutex;

/// A verified write or delete, ready to stage.
#[derive(Debug)]
pub(super) struct Step {
    pub target: PathBuf,
    pub action: Action,
    pub source: Option<BackupSource>,
    /// blake3 of the bytes to write.
    pub content: Option<ContentId>,
    /// The verified bytes, when they fit the memory budget.
    pub bytes: Option<Vec<u8>>,
    /// Permission bits of the written file.
    pub mode: u32,
    /// The real path (no symlink) of the target's folder, resolved at verification: the apply
    /// phase opens it component by component and refuses when that path changed since.
    pub folder: PathBuf,
    /// The device of that folder, when verification found it there (the apply phase then
    /// neither looks for it again nor asks which file system it is on).
    pub folder_device: Option<u64>,
    /// Owner of the file being replaced, carried over to the new one.
    pub owner: Option<(u32, u32)>,
    pub original_existed: bool,
    /// blake3 of the file there now (when it is a regular file).
    pub before: Option<ContentId>,
    /// Permission bits and size of that regular file (what a redo point keeps of it).
    pub before_file: Option<(u32, u64)>,
    /// Set when the target is overwritten in place (see [`super::journal::Method::InPlace`]).
    pub original: Option<Original>,
    /// A symlink, FIFO or folder to make instead of a file (no source, no bytes).
    pub special: Option<Special>,
}

/// The file a write overwrites in place: what an in-process undo writes back, and the identity
/// the apply step checks it still has.
#[derive(Debug)]
pub(super) struct Original {
    pub bytes: Vec<u8>,
    pub content: ContentId,
    pub mode: u32,
    pub device: u64,
    pub inode: u64,
    /// Its size and timestamps when `bytes` were read: while they still match, only the blocks
    /// that differ are written ([`super::target_io::overwrite`]).
    pub stamp: Stamp,
}

/// A regular file's bytes read at verification, kept when it may be overwritten in place: it
/// has one link, no execute bit (a program or library may be running or mapped from it: it
/// gets a new file, as `git checkout` does, and its users keep the old one), this process owns
/// it (or is root) and may write it, and it fits the memory budget (whose share it holds until
/// released).
struct Kept {
    bytes: Vec<u8>,
    device: u64,
    inode: u64,
    stamp: Stamp,
}

/// The plan plus the steps that carry it out.
#[derive(Debug)]
pub(super) struct Verified {
    pub plan: Plan,
    pub steps: Vec<Step>,
}

/// The current state of a target.
#[derive(Debug, PartialEq, Eq)]
enum Current {
    Absent,
    File {
        content: ContentId,
        mode: u32,
        size: u64,
        uid: u32,
        gid: u32,
        /// Immutable or append-only (`chattr +i`/`+a`): it cannot be replaced.
        locked: bool,
    },
    /// A symlink, FIFO or folder, where the item is about one (a command made or removed it).
    Special(Special),
    /// A symlink, folder or special file (already reported as a problem).
    Blocked,
}

/// A folder given by the caller: the confinement root, or a protected folder.
struct Root {
    lexical: PathBuf,
    canonical: PathBuf,
}

impl Root {
    fn new(lexical: PathBuf, canonical: PathBuf) -> Self {
        Root { lexical, canonical }
    }

    /// Whether `target` (normalised), or the real folder it would go in, lies in this folder.
    fn holds(&self, target: &Path, resolved_parent: Option<&Path>) -> bool {
        target.starts_with(&self.lexical) || resolved_parent.is_some_and(|folder| folder.starts_with(&self.canonical))
    }
}

/// Per-folder answers, by target folder: resolved folders (`realpath` of a target's deepest
/// existing folder; resolving costs a readlink per path component) and writability.
///
/// Keyed by the folder's bytes (every path here is [`normalize`]d, so equal paths have equal
/// bytes): a `Path` hashes component by component, a few percent of a rewind's CPU. Each folder
/// is `lstat`ed once for both answers (a thousand targets share some 700 folders).
#[derive(Default)]
pub(super) struct Resolver {
    resolved: Mutex<HashMap<OsString, std::result::Result<PathBuf, String>>>,
    /// [`Resolver::folder_verdict`] by target folder (it costs system calls, and targets share
    /// folders), with the folder's device when it exists.
    writable: Mutex<HashMap<OsString, FolderVerdict>>,
    /// What `lstat` said of a folder (`None`: it failed), for both of the above.
    status: Mutex<HashMap<OsString, Option<std::fs::Metadata>>>,
}

/// Why files cannot be written in a folder (`None`: they can), and its device when it exists.
type FolderVerdict = (Option<ProblemKind>, Option<u64>);

impl Resolver {
    fn folder_problem(&self, folder: &Path) -> Option<ProblemKind> {
        if let Some((known, _)) = self.writable.lock().expect("no panics while held").get(folder.as_os_str()) {
            return known.clone();
        }
        let (problem, device) = self.folder_verdict(folder);
        self.writable.lock().expect("no panics while held").insert(folder.into(), (problem.clone(), device));
        problem
    }

    /// The device of `folder` as [`Self::folder_problem`] found it (`None`: not asked, or no
    /// such folder).
    fn folder_device(&self, folder: &Path) -> Option<u64> {
        self.writable.lock().expect("no panics while held").get(folder.as_os_str()).and_then(|(_, device)| *device)
    }

    /// What `lstat` says of `folder`, asked once.
    fn status(&self, folder: &Path) -> Option<std::fs::Metadata> {
        if let Some(known) = self.status.lock().expect("no panics while held").get(folder.as_os_str()) {
            return known.clone();
        }
        let status = std::fs::symlink_metadata(folder).ok();
        self.status.lock().expect("no panics while held").insert(folder.into(), status.clone());
        status
    }

    fn resolve(&self, folder: &Path) -> std::result::Result<PathBuf, String> {
        if let Some(known) = self.resolved.lock().expect("no panics while held").get(folder.as_os_str()) {
            return known.clone();
        }
        // The real path: the parent's (resolved once for all the folders it holds), then this
        // name, unless it is a symlink, which the system resolves. A folder that does not exist
        // yet keeps its name (the restore creates it).
        let resolved = match (folder.parent(), folder.file_name()) {
            (Some(parent), Some(name)) => self.resolve(parent).and_then(|real_parent| match self.status(folder) {
                Some(metadata) if metadata.file_type().is_symlink() => {
                    std::fs::canonicalize(folder).map_err(|error| error.to_string())
                }
                _ => Ok(real_parent.join(name)),
            }),
            _ => Ok(folder.to_path_buf()),
        };
        self.resolved.lock().expect("no panics while held").insert(folder.into(), resolved.clone());
        resolved
    }

    /// The deepest existing folder at or above `path` (`lstat`-based), with what `stat` says of
    /// it (the `lstat` itself unless it is a symlink: one call for the usual folder, not two).
    fn nearest_existing<'a>(&self, path: &'a Path) -> Option<(&'a Path, std::io::Result<std::fs::Metadata>)> {
        let mut cursor = Some(path);
        while let Some(candidate) = cursor {
            if let Some(metadata) = self.status(candidate) {
                let followed =
                    if metadata.file_type().is_symlink() { std::fs::metadata(candidate) } else { Ok(metadata) };
                return Some((candidate, followed));
            }
            cursor = candidate.parent();
        }
        None
    }

    /// Whether files can be created and replaced in `folder` (or, when it does not exist yet,
    /// in its deepest existing folder); and the device of `folder` when it exists.
    fn folder_verdict(&self, folder: &Path) -> FolderVerdict {
        let Some((existing, metadata)) = self.nearest_existing(folder) else {
            return (Some(ProblemKind::NotWritable { reason: "no existing parent folder".into() }), None);
        };
        let device = match metadata {
            Ok(metadata) if metadata.is_dir() => (existing == folder).then(|| metadata.dev()),
            Ok(_) => {
                let reason = format!("{} is not a folder", existing.display());
                return (Some(ProblemKind::NotWritable { reason }), None);
            }
            Err(error) => return (Some(ProblemKind::NotWritable { reason: error.to_string() }), None),
        };
        let access = rustix::fs::Access::WRITE_OK | rustix::fs::Access::EXEC_OK;
        if let Err(errno) = rustix::fs::access(existing, access) {
            let error: std::io::Error = errno.into();
            return (Some(ProblemKind::NotWritable { reason: format!("{}: {error}", existing.display()) }), None);
        }
        (None, device)
    }
}

/// Resolves `.` and `..` without touching the disk (`..` never climbs above `/`).
pub(super) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Prefix(prefix) => out.push(prefix.as_os_str()),
            Component::RootDir => out.push("/"),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => out.push(name),
        }
    }
    out
}

/// The folders no target may lie in, as given and as resolved (a folder that does not exist
/// yet has only its lexical form).
fn protected_roots(options: &RestoreOptions) -> Vec<Root> {
    options
        .protected
        .iter()
        .map(|folder| {
            let lexical = normalize(folder);
            let canonical = std::fs::canonicalize(&lexical).unwrap_or_else(|_| lexical.clone());
            Root::new(lexical, canonical)
        })
        .collect()
}

pub(super) fn verify(store: &ObjectStore, items: &[RestoreItem], options: &RestoreOptions) -> Result<Verified> {
    let root = match &options.confine_to {
        Some(root) => {
            let lexical = normalize(root);
            let canonical = std::fs::canonicalize(&lexical).map_err(|source| Error::io(&lexical, source))?;
            Some(Root::new(lexical, canonical))
        }
        None => None,
    };
    let bounds = Bounds { root, protected: protected_roots(options), resolver: Resolver::default() };
    let mut seen = HashSet::new();
    let duplicates: Vec<bool> =
        items.iter().map(|item| !seen.insert(normalize(&item.target).into_os_string())).collect();
    let me = rustix::process::geteuid();
    let budget = AtomicI64::new(options.memory_budget.min(i64::MAX as u64) as i64);
    let outcomes: Vec<(Option<PlanEntry>, Option<Step>, Vec<RestoreProblem>)> = items
        .par_iter()
        .zip(duplicates.par_iter())
        .map(|(item, &duplicate)| verify_item(store, item, duplicate, &bounds, &budget, options.in_place, me))
        .collect();
    let mut verified = Verified { plan: Plan::default(), steps: Vec::new() };
    for (entry, step, problems) in outcomes {
        verified.plan.entries.extend(entry);
        verified.steps.extend(step);
        verified.plan.problems.extend(problems);
    }
    if let Some(companion) = &options.companion {
        match companion_step(companion, &bounds.resolver) {
            Ok(step) => verified.steps.push(step),
            Err(problem) => verified.plan.problems.push(problem),
        }
    }
    Ok(verified)
}

/// The step that replaces the caller's companion file (see [`Companion`]); it is not a target,
/// so it is neither confined nor checked for outside changes, only for being replaceable.
pub(super) fn companion_step(companion: &Companion, resolver: &Resolver) -> std::result::Result<Step, RestoreProblem> {
    let target = normalize(&companion.path);
    let problem = |kind: ProblemKind| RestoreProblem { target: target.clone(), kind };
    if !target.is_absolute() {
        // Refused before anything is written: every step opens folders from `/`.
        return Err(problem(ProblemKind::NotAbsolute));
    }
    let (original_existed, owner) = match std::fs::symlink_metadata(&target) {
        Ok(metadata) if metadata.is_file() || metadata.file_type().is_symlink() => {
            (true, Some((metadata.uid(), metadata.gid())))
        }
        Ok(_) => return Err(problem(ProblemKind::NotRegular)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => (false, None),
        Err(error) => return Err(problem(ProblemKind::Unreadable { reason: error.to_string() })),
    };
    let parent = target.parent().ok_or_else(|| problem(ProblemKind::NotAbsolute))?;
    if let Some(kind) = resolver.folder_problem(parent) {
        return Err(problem(kind));
    }
    let folder = resolver.resolve(parent).map_err(|reason| problem(ProblemKind::Unreadable { reason }))?;
    Ok(Step {
        action: Action::Write,
        source: None,
        content: Some(ContentId::of(&companion.bytes)),
        bytes: Some(companion.bytes.clone()),
        mode: companion.mode & 0o7777,
        folder_device: resolver.folder_device(parent),
        folder,
        owner,
        original_existed,
        before: None,
        before_file: None,
        original: None,
        special: None,
        target,
    })
}

/// Where targets may go: inside the confinement root (when set), never in a protected folder.
struct Bounds {
    root: Option<Root>,
    protected: Vec<Root>,
    resolver: Resolver,
}

/// Verifies one item; `me` is this process's effective user (asked once, not per file).
#[allow(clippy::too_many_arguments, reason = "one item and what the whole verification shares")]
fn verify_item(
    store: &ObjectStore,
    item: &RestoreItem,
    duplicate: bool,
    bounds: &Bounds,
    budget: &AtomicI64,
    in_place: bool,
    me: rustix::process::Uid,
) -> (Option<PlanEntry>, Option<Step>, Vec<RestoreProblem>) {
    let target = normalize(&item.target);
    let mut problems = Vec::new();
    let mut problem = |kind: ProblemKind| problems.push(RestoreProblem { target: target.clone(), kind });
    if !target.is_absolute() || target.parent().is_none() {
        problem(ProblemKind::NotAbsolute);
        return (None, None, problems);
    }
    if duplicate {
        problem(ProblemKind::Duplicate);
        return (None, None, problems);
    }
    if let Some(kind) = bounds_problem(&target, bounds) {
        problem(kind);
        return (None, None, problems);
    }

    // A symlink, FIFO or folder at the target is this item's business only when the item is
    // about one (a command put it there, or one is to be put back); otherwise it is refused.
    let about_special = matches!(item.desired, Desired::Special(_)) || matches!(item.expected, Expected::Special(_));
    let found = if about_special { special::current(&target) } else { None };
    let in_place = in_place && matches!(item.desired, Desired::Content { .. });
    let state = match found {
        Some(found) => Ok((Current::Special(found), None)),
        None => current_state(&target, budget, in_place, me),
    };
    let (current, kept) = match state {
        Ok(state) => state,
        Err(kind) => {
            problem(kind);
            (Current::Blocked, None)
        }
    };
    let release = |kept: Option<Kept>| {
        if let Some(kept) = kept {
            budget.fetch_add(kept.bytes.len() as i64, Ordering::Relaxed);
        }
    };

    let (content, bytes) = match &item.desired {
        Desired::Absent | Desired::Special(_) => (None, None),
        Desired::Content { source, .. } => match load(store, source) {
            Ok((content, bytes)) => (Some(content), Some(bytes)),
            Err(kind) => {
                problem(kind);
                (None, None)
            }
        },
    };

    let action = match (&item.desired, &current) {
        (Desired::Absent, Current::Absent) => Action::Unchanged,
        (Desired::Absent, _) => Action::Delete,
        (Desired::Content { mode, .. }, Current::File { content: current_content, mode: current_mode, .. })
            if Some(*current_content) == content && mode.is_none_or(|mode| mode == *current_mode) =>
        {
            Action::Unchanged
        }
        (Desired::Content { .. }, _) => Action::Write,
        (Desired::Special(wanted), Current::Special(found)) if wanted.matches(found) => Action::Unchanged,
        (Desired::Special(_), _) => Action::Write,
    };
    // A folder is never deleted here (one a command made is removed by the caller once the
    // restore emptied it), and only an empty one is replaced (a command put it where a file was).
    let hollow = || std::fs::read_dir(&target).is_ok_and(|mut entries| entries.next().is_none());
    if action != Action::Unchanged
        && matches!(current, Current::Special(Special::Folder { .. }))
        && (action == Action::Delete || !hollow())
    {
        problem(ProblemKind::NotRegular);
    }
    // Only a target that would change can be clobbered; one that already holds the wanted state
    // is fine whatever happened to it.
    let changed_outside = match (&item.expected, &current) {
        _ if action == Action::Unchanged => false,
        (Expected::Unknown, _) | (_, Current::Blocked) => false,
        (Expected::Absent, current) => *current != Current::Absent,
        (Expected::Content(expected), Current::File { content, .. }) => content != expected,
        (Expected::Content(_), Current::Absent | Current::Special(_)) => true,
        (Expected::Special(expected), Current::Special(found)) => !expected.matches(found),
        (Expected::Special(_), Current::Absent | Current::File { .. }) => true,
    };
    if changed_outside {
        problem(ProblemKind::ChangedOutside);
    }

    if action != Action::Unchanged && current != Current::Blocked {
        let locked = matches!(current, Current::File { locked: true, .. });
        if let Some(kind) = writability_problem(&target, locked, &bounds.resolver) {
            problem(kind);
        }
    }

    let entry = PlanEntry { target: target.clone(), action, changed_outside, content };
    if action == Action::Unchanged || !problems.iter().all(|problem| problem.kind == ProblemKind::ChangedOutside) {
        release(kept);
        return (Some(entry), None, problems);
    }
    let (mode, owner) = match (&item.desired, &current) {
        (Desired::Special(special), _) => (special.mode(), None),
        (Desired::Content { mode: Some(mode), .. }, Current::File { uid, gid, .. }) => (*mode, Some((*uid, *gid))),
        (Desired::Content { mode: Some(mode), .. }, _) => (*mode, None),
        (_, Current::File { mode, uid, gid, .. }) => (*mode, Some((*uid, *gid))),
        _ => (0o644, None),
    };
    let bytes = bytes.filter(|bytes| reserve(budget, bytes.len() as i64));
    let source = match &item.desired {
        Desired::Content { source, .. } => Some(source.clone()),
        Desired::Absent | Desired::Special(_) => None,
    };
    let special = match &item.desired {
        Desired::Special(special) => Some(special.clone()),
        _ => None,
    };
    let folder = match bounds.resolver.resolve(target.parent().unwrap_or(Path::new("/"))) {
        Ok(folder) => folder,
        Err(reason) => {
            release(kept);
            problems.push(RestoreProblem { target, kind: ProblemKind::Unreadable { reason } });
            return (Some(entry), None, problems);
        }
    };
    let (before, before_file) = match &current {
        Current::File { content, mode, size, .. } => (Some(*content), Some((*mode, *size))),
        _ => (None, None),
    };
    let original = match (&current, kept) {
        (Current::File { content, mode, .. }, Some(kept)) if action == Action::Write => Some(Original {
            bytes: kept.bytes,
            content: *content,
            mode: *mode,
            device: kept.device,
            inode: kept.inode,
            stamp: kept.stamp,
        }),
        (_, kept) => {
            release(kept);
            None
        }
    };
    let folder_device = target.parent().and_then(|parent| bounds.resolver.folder_device(parent));
    let step = Step {
        target,
        action,
        source,
        content,
        bytes,
        mode: mode & 0o7777,
        folder,
        folder_device,
        owner,
        original_existed: current != Current::Absent,
        before,
        before_file,
        original,
        special,
    };
    (Some(entry), Some(step), problems)
}

fn bounds_problem(target: &Path, bounds: &Bounds) -> Option<ProblemKind> {
    if let Some(root) = &bounds.root {
        if !target.starts_with(&root.lexical) || target == root.lexical {
            return Some(ProblemKind::Outside { root: root.lexical.clone() });
        }
    }
    if let Some(folder) = bounds.protected.iter().find(|folder| folder.holds(target, None)) {
        return Some(ProblemKind::Protected { root: folder.lexical.clone() });
    }
    // A symlinked folder on the way may lead out (or in): resolve the deepest existing folder.
    if bounds.root.is_none() && bounds.protected.is_empty() {
        return None;
    }
    let resolved = match bounds.resolver.resolve(target.parent()?) {
        Ok(resolved) => resolved,
        Err(reason) => return Some(ProblemKind::Unreadable { reason }),
    };
    if let Some(root) = bounds.root.as_ref().filter(|root| !resolved.starts_with(&root.canonical)) {
        return Some(ProblemKind::Outside { root: root.lexical.clone() });
    }
    let protected = bounds.protected.iter().find(|folder| folder.holds(target, Some(&resolved)));
    protected.map(|folder| ProblemKind::Protected { root: folder.lexical.clone() })
}

/// The target's state, and (when `in_place`) its bytes if it could be overwritten in place (see
/// [`Kept`]) by `me`.
fn current_state(
    target: &Path,
    budget: &AtomicI64,
    in_place: bool,
    me: rustix::process::Uid,
) -> std::result::Result<(Current, Option<Kept>), ProblemKind> {
    let metadata = match std::fs::symlink_metadata(target) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok((Current::Absent, None)),
        Err(error) if error.raw_os_error() == Some(rustix::io::Errno::NOTDIR.raw_os_error()) => {
            return Err(ProblemKind::NotWritable { reason: "a parent is not a folder".into() })
        }
        Err(error) => return Err(ProblemKind::Unreadable { reason: error.to_string() }),
    };
    if metadata.file_type().is_symlink() {
        return Err(ProblemKind::Symlink);
    }
    if !metadata.file_type().is_file() {
        return Err(ProblemKind::NotRegular);
    }
    let unreadable = |error: std::io::Error| ProblemKind::Unreadable { reason: error.to_string() };
    // Opened as the `lstat` above found it (a regular file): never through a symlink put there
    // since, never blocking on a FIFO; the `statx` below checks what was opened.
    let flags = rustix::fs::OFlags::RDONLY
        | rustix::fs::OFlags::NOFOLLOW
        | rustix::fs::OFlags::NONBLOCK
        | rustix::fs::OFlags::NOCTTY
        | rustix::fs::OFlags::CLOEXEC;
    let opened =
        rustix::fs::open(target, flags, rustix::fs::Mode::empty()).map_err(|errno| unreadable(errno.into()))?;
    let mut file = std::fs::File::from(opened);
    // One statx of the opened file gives its type, mode, owner, links and the immutable/append flags.
    let flags = rustix::fs::AtFlags::EMPTY_PATH;
    let opened = rustix::fs::statx(&file, "", flags, rustix::fs::StatxFlags::BASIC_STATS)
        .map_err(|errno| unreadable(errno.into()))?;
    if rustix::fs::FileType::from_raw_mode(opened.stx_mode.into()) != rustix::fs::FileType::RegularFile {
        return Err(ProblemKind::NotRegular);
    }
    let locked =
        opened.stx_attributes.intersects(rustix::fs::StatxAttributes::IMMUTABLE | rustix::fs::StatxAttributes::APPEND);
    let size = opened.stx_size.min(i64::MAX as u64) as i64;
    let mode = u32::from(opened.stx_mode) & 0o7777;
    let keep = in_place
        && !locked
        && opened.stx_nlink == 1
        && mode & 0o111 == 0
        && may_overwrite(me, opened.stx_uid, mode)
        && reserve(budget, size);
    let (content, kept) = if keep {
        let mut bytes = Vec::new();
        let read = crate::fsopen::read_sized(&file, size as u64).map(|read| bytes = read);
        let kept = Kept {
            device: rustix::fs::makedev(opened.stx_dev_major, opened.stx_dev_minor),
            inode: opened.stx_ino,
            bytes,
            stamp: Stamp {
                size: opened.stx_size,
                modified: (opened.stx_mtime.tv_sec, i64::from(opened.stx_mtime.tv_nsec)),
                changed: (opened.stx_ctime.tv_sec, i64::from(opened.stx_ctime.tv_nsec)),
            },
        };
        // The reservation is what the file's size was; settle it to what was read.
        budget.fetch_sub(kept.bytes.len() as i64 - size, Ordering::Relaxed);
        if let Err(error) = read {
            budget.fetch_add(kept.bytes.len() as i64, Ordering::Relaxed);
            return Err(unreadable(error));
        }
        (ContentId::of(&kept.bytes), Some(kept))
    } else {
        let mut hasher = blake3::Hasher::new();
        hasher.update_reader(&mut file).map_err(unreadable)?;
        (hasher.finalize().into(), None)
    };
    let size = kept.as_ref().map_or(opened.stx_size, |kept| kept.bytes.len() as u64);
    let current = Current::File { content, mode, size, uid: opened.stx_uid, gid: opened.stx_gid, locked };
    Ok((current, kept))
}

/// Takes `size` bytes of the memory budget, if that much is left.
fn reserve(budget: &AtomicI64, size: i64) -> bool {
    budget.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| (left >= size).then(|| left - size)).is_ok()
}

/// Whether the process running as `me` may rewrite a file and set its mode: it is root, or it
/// owns the file and the owner may write it.
fn may_overwrite(me: rustix::process::Uid, owner: u32, mode: u32) -> bool {
    me.is_root() || (me.as_raw() == owner && mode & 0o200 != 0)
}

/// Reads and verifies a backup's bytes; returns their blake3 and the bytes.
pub(super) fn load(
    store: &ObjectStore,
    source: &BackupSource,
) -> std::result::Result<(ContentId, Vec<u8>), ProblemKind> {
    let result = match source {
        BackupSource::Object(id) => store.read(id).map(|bytes| (*id, bytes)),
        BackupSource::RawBlob { folder, digest, named } => read_raw_blob_named(folder, digest, named.as_ref()),
    };
    result.map_err(|error| match error {
        Error::ObjectMissing { id, .. } => ProblemKind::ObjectMissing { id },
        Error::ObjectCorrupt { id, reason, .. } => ProblemKind::ObjectCorrupt { id, reason },
        other => ProblemKind::Unreadable { reason: other.to_string() },
    })
}

fn writability_problem(target: &Path, locked: bool, resolver: &Resolver) -> Option<ProblemKind> {
    if locked {
        return Some(ProblemKind::NotWritable { reason: "the file is immutable or append-only".into() });
    }
    resolver.folder_problem(target.parent()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_resolves_dots_lexically() {
        assert_eq!(normalize(Path::new("/a/b/../c/./d")), PathBuf::from("/a/c/d"));
        assert_eq!(normalize(Path::new("/a/../../etc/x")), PathBuf::from("/etc/x"));
    }

    #[test]
    fn confinement_catches_dot_dot_absolute_and_symlinked_folders() {
        let folder = tempfile::tempdir().unwrap();
        let project = folder.path().join("project");
        std::fs::create_dir(&project).unwrap();
        let outside = folder.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, project.join("escape")).unwrap();
        let root = Root::new(project.clone(), std::fs::canonicalize(&project).unwrap());
        let bounds = Bounds { root: Some(root), protected: vec![], resolver: Resolver::default() };
        assert!(bounds_problem(&normalize(&project.join("../../x")), &bounds).is_some());
        assert!(bounds_problem(Path::new("/etc/x"), &bounds).is_some());
        assert!(bounds_problem(&project.join("escape/x"), &bounds).is_some());
        assert!(bounds_problem(&project.join("new/deep/x"), &bounds).is_none());
    }

    #[test]
    fn a_protected_folder_inside_the_root_is_refused_also_through_a_symlink() {
        let folder = tempfile::tempdir().unwrap();
        let project = folder.path().join("project");
        let data = project.join(".commandcode");
        std::fs::create_dir_all(data.join("projects")).unwrap();
        std::os::unix::fs::symlink(data.join("projects"), project.join("alias")).unwrap();
        let options = RestoreOptions { protected: vec![data.clone()], ..RestoreOptions::default() };
        let root = Root::new(project.clone(), std::fs::canonicalize(&project).unwrap());
        let bounds = Bounds { root: Some(root), protected: protected_roots(&options), resolver: Resolver::default() };
        let protected = |path: PathBuf| matches!(bounds_problem(&path, &bounds), Some(ProblemKind::Protected { .. }));
        assert!(protected(data.join("projects/session.jsonl")));
        assert!(protected(project.join("alias/session.jsonl")));
        assert!(protected(data.join("new/x")));
        assert!(bounds_problem(&project.join("src/x"), &bounds).is_none());
    }
}
