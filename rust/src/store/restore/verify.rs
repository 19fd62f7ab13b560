//! Pre-verification: everything a restore checks before it writes a single byte.
//!
//! Runs over all targets in parallel and collects every problem (not just the first), so the
//! refusal names each failing file. Verified bytes are kept for staging within a memory budget.

use super::{
    Action, BackupSource, Desired, Expected, Plan, PlanEntry, ProblemKind, RestoreItem, RestoreOptions, RestoreProblem,
};
use crate::error::{Error, Result};
use crate::store::digest::ContentId;
use crate::store::durable::open_no_follow;
use crate::store::objects::{read_raw_blob, ObjectStore};
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};
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
    /// Owner of the file being replaced, carried over to the new one.
    pub owner: Option<(u32, u32)>,
    pub original_existed: bool,
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
        uid: u32,
        gid: u32,
    },
    /// A symlink, folder or special file (already reported as a problem).
    Blocked,
}

struct Root {
    lexical: PathBuf,
    canonical: PathBuf,
    /// Resolved folders (`realpath` of a target's deepest existing folder), by target folder:
    /// targets share folders, and resolving costs a readlink per path component.
    resolved: Mutex<HashMap<PathBuf, std::result::Result<PathBuf, String>>>,
}

impl Root {
    fn new(lexical: PathBuf, canonical: PathBuf) -> Self {
        Root { lexical, canonical, resolved: Mutex::new(HashMap::new()) }
    }

    fn resolve(&self, folder: &Path) -> std::result::Result<PathBuf, String> {
        if let Some(known) = self.resolved.lock().expect("no panics while held").get(folder) {
            return known.clone();
        }
        let resolved = match nearest_existing(folder) {
            Some(existing) => std::fs::canonicalize(existing).map_err(|error| error.to_string()),
            None => Err("no existing parent folder".to_owned()),
        };
        self.resolved.lock().expect("no panics while held").insert(folder.to_owned(), resolved.clone());
        resolved
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

/// The deepest existing folder at or above `path` (`lstat`-based).
fn nearest_existing(path: &Path) -> Option<&Path> {
    let mut cursor = Some(path);
    while let Some(candidate) = cursor {
        if std::fs::symlink_metadata(candidate).is_ok() {
            return Some(candidate);
        }
        cursor = candidate.parent();
    }
    None
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
    let mut seen = HashSet::new();
    let duplicates: Vec<bool> = items.iter().map(|item| !seen.insert(normalize(&item.target))).collect();
    let budget = AtomicI64::new(options.memory_budget.min(i64::MAX as u64) as i64);
    let outcomes: Vec<(Option<PlanEntry>, Option<Step>, Vec<RestoreProblem>)> = items
        .par_iter()
        .zip(duplicates.par_iter())
        .map(|(item, &duplicate)| verify_item(store, item, duplicate, root.as_ref(), &budget))
        .collect();
    let mut verified = Verified { plan: Plan::default(), steps: Vec::new() };
    for (entry, step, problems) in outcomes {
        verified.plan.entries.extend(entry);
        verified.steps.extend(step);
        verified.plan.problems.extend(problems);
    }
    Ok(verified)
}

fn verify_item(
    store: &ObjectStore,
    item: &RestoreItem,
    duplicate: bool,
    root: Option<&Root>,
    budget: &AtomicI64,
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
    if let Some(root) = root {
        if let Some(kind) = confinement_problem(&target, root) {
            problem(kind);
            return (None, None, problems);
        }
    }

    let current = match current_state(&target) {
        Ok(current) => current,
        Err(kind) => {
            problem(kind);
            Current::Blocked
        }
    };

    let (content, bytes) = match &item.desired {
        Desired::Absent => (None, None),
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
    };
    // Only a target that would change can be clobbered; one that already holds the wanted state
    // is fine whatever happened to it.
    let changed_outside = match (&item.expected, &current) {
        _ if action == Action::Unchanged => false,
        (Expected::Unknown, _) | (_, Current::Blocked) => false,
        (Expected::Absent, current) => *current != Current::Absent,
        (Expected::Content(expected), Current::File { content, .. }) => content != expected,
        (Expected::Content(_), Current::Absent) => true,
    };
    if changed_outside {
        problem(ProblemKind::ChangedOutside);
    }

    if action != Action::Unchanged && current != Current::Blocked {
        if let Some(kind) = writability_problem(&target, current != Current::Absent) {
            problem(kind);
        }
    }

    let entry = PlanEntry { target: target.clone(), action, changed_outside, content };
    if action == Action::Unchanged || !problems.iter().all(|problem| problem.kind == ProblemKind::ChangedOutside) {
        return (Some(entry), None, problems);
    }
    let (mode, owner) = match (&item.desired, &current) {
        (Desired::Content { mode: Some(mode), .. }, Current::File { uid, gid, .. }) => (*mode, Some((*uid, *gid))),
        (Desired::Content { mode: Some(mode), .. }, _) => (*mode, None),
        (_, Current::File { mode, uid, gid, .. }) => (*mode, Some((*uid, *gid))),
        _ => (0o644, None),
    };
    let bytes = bytes.filter(|bytes| {
        let size = bytes.len() as i64;
        budget.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| (left >= size).then(|| left - size)).is_ok()
    });
    let source = match &item.desired {
        Desired::Content { source, .. } => Some(source.clone()),
        Desired::Absent => None,
    };
    let step = Step {
        target,
        action,
        source,
        content,
        bytes,
        mode: mode & 0o7777,
        owner,
        original_existed: current != Current::Absent,
    };
    (Some(entry), Some(step), problems)
}

fn confinement_problem(target: &Path, root: &Root) -> Option<ProblemKind> {
    let outside = || ProblemKind::Outside { root: root.lexical.clone() };
    if !target.starts_with(&root.lexical) || target == root.lexical {
        return Some(outside());
    }
    // A symlinked folder on the way may lead out: resolve the deepest existing folder.
    match root.resolve(target.parent()?) {
        Ok(resolved) if resolved.starts_with(&root.canonical) => None,
        Ok(_) => Some(outside()),
        Err(reason) => Some(ProblemKind::Unreadable { reason }),
    }
}

fn current_state(target: &Path) -> std::result::Result<Current, ProblemKind> {
    let metadata = match std::fs::symlink_metadata(target) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Current::Absent),
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
    let mut file = open_no_follow(target).map_err(|error| ProblemKind::Unreadable { reason: error.to_string() })?;
    let opened = file.metadata().map_err(|error| ProblemKind::Unreadable { reason: error.to_string() })?;
    if !opened.file_type().is_file() {
        return Err(ProblemKind::NotRegular);
    }
    let mut hasher = blake3::Hasher::new();
    hasher.update_reader(&mut file).map_err(|error| ProblemKind::Unreadable { reason: error.to_string() })?;
    Ok(Current::File {
        content: hasher.finalize().into(),
        mode: opened.mode() & 0o7777,
        uid: opened.uid(),
        gid: opened.gid(),
    })
}

/// Reads and verifies a backup's bytes; returns their blake3 and the bytes.
pub(super) fn load(
    store: &ObjectStore,
    source: &BackupSource,
) -> std::result::Result<(ContentId, Vec<u8>), ProblemKind> {
    let result = match source {
        BackupSource::Object(id) => store.read(id).map(|bytes| (*id, bytes)),
        BackupSource::RawBlob { folder, digest } => {
            read_raw_blob(folder, digest).map(|bytes| (ContentId::of(&bytes), bytes))
        }
    };
    result.map_err(|error| match error {
        Error::ObjectMissing { id, .. } => ProblemKind::ObjectMissing { id },
        Error::ObjectCorrupt { id, reason, .. } => ProblemKind::ObjectCorrupt { id, reason },
        other => ProblemKind::Unreadable { reason: other.to_string() },
    })
}

fn writability_problem(target: &Path, exists: bool) -> Option<ProblemKind> {
    let parent = target.parent()?;
    let Some(existing) = nearest_existing(parent) else {
        return Some(ProblemKind::NotWritable { reason: "no existing parent folder".into() });
    };
    match std::fs::metadata(existing) {
        Ok(metadata) if metadata.is_dir() => {}
        Ok(_) => return Some(ProblemKind::NotWritable { reason: format!("{} is not a folder", existing.display()) }),
        Err(error) => return Some(ProblemKind::NotWritable { reason: error.to_string() }),
    }
    let access = rustix::fs::Access::WRITE_OK | rustix::fs::Access::EXEC_OK;
    if let Err(errno) = rustix::fs::access(existing, access) {
        let error: std::io::Error = errno.into();
        return Some(ProblemKind::NotWritable { reason: format!("{}: {error}", existing.display()) });
    }
    if exists {
        let flags = rustix::fs::AtFlags::SYMLINK_NOFOLLOW;
        if let Ok(stat) = rustix::fs::statx(rustix::fs::CWD, target, flags, rustix::fs::StatxFlags::BASIC_STATS) {
            let locked = rustix::fs::StatxAttributes::IMMUTABLE | rustix::fs::StatxAttributes::APPEND;
            if stat.stx_attributes.intersects(locked) {
                return Some(ProblemKind::NotWritable { reason: "the file is immutable or append-only".into() });
            }
        }
    }
    None
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
        assert!(confinement_problem(&normalize(&project.join("../../x")), &root).is_some());
        assert!(confinement_problem(Path::new("/etc/x"), &root).is_some());
        assert!(confinement_problem(&project.join("escape/x"), &root).is_some());
        assert!(confinement_problem(&project.join("new/deep/x"), &root).is_none());
    }
}
