//! What a restore journal may name: the confinement recovery checks before it touches anything.
//!
//! A journal is input like any other (a file in the data dir anybody with the user's rights can
//! write), so before recovery acts on one, every path it names is checked against the
//! confinement the restore itself had, supplied by the caller and never by the journal:
//!
//! - targets, their folders, temps and created folders lie inside the confinement root (the
//!   session's working directory; no root only for a restore the user let out of it), never in
//!   a protected folder (commandcode's data dir), and name real paths: absolute, without `.` or
//!   `..`, and with no symlink in the part that exists (a symlinked parent that escapes);
//! - the one exception is the companion (the session's checkpoints file, given by the caller):
//!   the op whose target is exactly that file, sourced from the companion's copy beside the
//!   journal;
//! - a temp lies beside its target; a set-aside original beside its target or in the trash;
//! - the trash is the journal's own folder: `.<journal name>.<…>.trash` beside the journal;
//! - sources are the object store the caller names, the real CLI's blob folder of this session,
//!   or the companion's copy;
//! - a written file gets permission bits only (no setuid, setgid or sticky bit).
//!
//! A journal naming a recorded root (journals written since) must moreover keep every target
//! inside that root: the journal can only narrow the caller's confinement, never widen it.
//! A journal that fails is kept as it is and nothing is touched ([`Error::JournalUntrusted`]).

use super::journal::{Journal, JournalOp, JournalSource};
use super::verify::normalize;
use super::Action;
use crate::error::{Error, Result};
use std::path::{Component, Path, PathBuf};

/// The confinement a recovery checks a journal against (see the module docs).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RecoveryBounds {
    /// Every target must lie inside this folder (`None`: the restore was let outside it).
    pub root: Option<PathBuf>,
    /// No target may lie inside these folders (commandcode's own data dir).
    pub protected: Vec<PathBuf>,
    /// The object store the sources may come from.
    pub store: Option<PathBuf>,
    /// The real CLI's blob folder of this session (`<data>/file-history/<session id>`).
    pub blob_folder: Option<PathBuf>,
    /// The caller's companion file (the session's checkpoints file).
    pub companion: Option<PathBuf>,
}

/// A folder in its given and its real form (one that does not exist has only the given form).
struct Folder {
    lexical: PathBuf,
    real: PathBuf,
}

/// The real path of `path`: its deepest existing folder resolved, the rest appended.
fn resolve(path: &Path) -> PathBuf {
    let mut missing = Vec::new();
    let mut cursor = Some(path);
    while let Some(candidate) = cursor {
        if let Ok(real) = std::fs::canonicalize(candidate) {
            return missing.iter().rev().fold(real, |folder, name| folder.join(name));
        }
        missing.extend(candidate.file_name());
        cursor = candidate.parent();
    }
    path.to_owned()
}

impl Folder {
    fn new(path: &Path) -> Folder {
        let lexical = normalize(path);
        let real = resolve(&lexical);
        Folder { lexical, real }
    }

    fn holds(&self, path: &Path) -> bool {
        path.starts_with(&self.lexical) || path.starts_with(&self.real)
    }

    fn is(&self, path: &Path) -> bool {
        path == self.lexical || path == self.real
    }
}

/// Why a journal is refused: the field and the path it names.
type Refusal = String;

fn refuse(field: &str, path: &Path, why: &str) -> Refusal {
    format!("its {field} {} {why}", path.display())
}

/// Absolute, and no `.` or `..` component.
fn plain(path: &Path) -> bool {
    path.is_absolute() && path.components().all(|part| matches!(part, Component::RootDir | Component::Normal(_)))
}

/// Whether the part of the folder `path` that exists contains no symlink (the deepest existing
/// folder at or above it is its own real path).
fn real_folder(path: &Path) -> bool {
    let mut cursor = Some(path);
    while let Some(folder) = cursor {
        if std::fs::symlink_metadata(folder).is_ok() {
            return std::fs::canonicalize(folder).is_ok_and(|real| real == folder);
        }
        cursor = folder.parent();
    }
    true
}

struct Checker<'a> {
    bounds: &'a RecoveryBounds,
    root: Option<Folder>,
    recorded_root: Option<Folder>,
    protected: Vec<Folder>,
    trash: Option<PathBuf>,
    companion_copy: PathBuf,
}

impl Checker<'_> {
    /// A path of a target's (file, folder, created folder) that must be confined; a folder
    /// (`folder`) must moreover be a real path, since every step runs through it.
    fn confined(&self, field: &str, path: &Path, folder: bool) -> std::result::Result<(), Refusal> {
        if !plain(path) || path.parent().is_none() {
            return Err(refuse(field, path, "is not a plain absolute path"));
        }
        for root in self.root.iter().chain(&self.recorded_root) {
            if !root.holds(path) {
                return Err(refuse(field, path, &format!("is outside {}", root.lexical.display())));
            }
        }
        if let Some(folder) = self.protected.iter().find(|folder| folder.holds(path)) {
            return Err(refuse(
                field,
                path,
                &format!("is inside commandcode's data folder {}", folder.lexical.display()),
            ));
        }
        if folder && !real_folder(path) {
            return Err(refuse(field, path, "lies under a symlink"));
        }
        Ok(())
    }

    fn beside(&self, field: &str, path: &Path, folder: &Path) -> std::result::Result<(), Refusal> {
        if !plain(path) || path.parent() != Some(folder) {
            return Err(refuse(field, path, &format!("is not beside its target in {}", folder.display())));
        }
        Ok(())
    }

    fn rollback(&self, op: &JournalOp) -> std::result::Result<(), Refusal> {
        let in_trash =
            plain(&op.rollback) && self.trash.as_deref().is_some_and(|trash| op.rollback.parent() == Some(trash));
        if in_trash {
            return Ok(());
        }
        self.beside("set-aside original", &op.rollback, &op.folder)
    }

    fn source(&self, op: &JournalOp, journal: &Journal, companion: bool) -> std::result::Result<(), Refusal> {
        let Some(source) = &op.source else { return Ok(()) };
        let allowed = |expected: &Option<PathBuf>, given: &Path| {
            expected.as_deref().is_some_and(|expected| Folder::new(expected).is(&normalize(given)))
        };
        match source {
            JournalSource::File(path) if companion && normalize(path) == self.companion_copy => Ok(()),
            JournalSource::File(path) => Err(refuse("source", path, "is not the companion's copy beside the journal")),
            JournalSource::Object(_) if !companion => match &journal.store {
                Some(store) if allowed(&self.bounds.store, store) => Ok(()),
                Some(store) => Err(refuse("store", store, "is not commandcode's object store")),
                None => Err("it names an object source without a store".to_owned()),
            },
            JournalSource::RawBlob { folder, .. } if !companion && allowed(&self.bounds.blob_folder, folder) => Ok(()),
            JournalSource::RawBlob { folder, .. } => Err(refuse("source", folder, "is not this session's blob folder")),
            JournalSource::Object(_) => Err("its companion is not sourced from the companion's copy".to_owned()),
        }
    }

    fn op(&self, op: &JournalOp, journal: &Journal) -> std::result::Result<(), Refusal> {
        let companion = self.bounds.companion.as_deref().is_some_and(|path| Folder::new(path).is(&op.target));
        if companion {
            if op.action != Action::Write {
                return Err(refuse("target", &op.target, "is the checkpoints file, which is never deleted"));
            }
            let parent = op.target.parent().map(Folder::new);
            if !parent.is_some_and(|parent| parent.is(&op.folder)) {
                return Err(refuse("folder", &op.folder, "is not the checkpoints file's folder"));
            }
        } else {
            self.confined("target", &op.target, false)?;
            self.confined("target folder", &op.folder, true)?;
            // Every step acts on the target's name in `folder`: the two must agree.
            if !op.target.parent().is_some_and(|parent| Folder::new(parent).is(&op.folder)) {
                return Err(refuse("target", &op.target, &format!("is not in its folder {}", op.folder.display())));
            }
        }
        if op.mode & 0o7000 != 0 {
            // Restored files get permission bits only; a journal cannot hand out setuid, setgid
            // or sticky bits.
            return Err(refuse("target", &op.target, &format!("would get mode {:o}", op.mode)));
        }
        if let Some(temp) = &op.temp {
            self.beside("temp", temp, &op.folder)?;
        }
        self.rollback(op)?;
        if companion && op.source.is_none() {
            return Err("its companion names no source".to_owned());
        }
        self.source(op, journal, companion)
    }

    fn journal(&self, journal: &Journal) -> std::result::Result<(), Refusal> {
        for folder in &journal.created_dirs {
            self.confined("created folder", folder, true)?;
        }
        journal.ops.iter().try_for_each(|op| self.op(op, journal))
    }
}

/// The trash folder must be the journal's own: `.<journal name>.<…>.trash` beside it.
fn check_trash(journal: &Journal, journal_path: &Path) -> std::result::Result<Option<PathBuf>, Refusal> {
    let Some(trash) = &journal.trash else { return Ok(None) };
    let folder = journal_path.parent().map(Folder::new);
    // `unique_name` keeps at most 120 bytes of the journal's name.
    let name = journal_path.file_name().map(|name| name.as_encoded_bytes()).unwrap_or_default();
    let name = String::from_utf8_lossy(&name[..name.len().min(120)]).into_owned();
    let own = plain(trash)
        && trash.parent().is_some_and(|parent| folder.as_ref().is_some_and(|folder| folder.is(parent)))
        && trash
            .file_name()
            .map(|file| file.to_string_lossy())
            .is_some_and(|file| file.starts_with(&format!(".{name}.")) && file.ends_with(super::apply::TRASH_SUFFIX));
    if !own {
        return Err(refuse("trash", trash, "is not the journal's own trash folder"));
    }
    Ok(Some(trash.clone()))
}

/// Fails with [`Error::JournalUntrusted`] unless every path `journal` names is within `bounds`
/// (see the module docs); touches nothing.
pub(super) fn check(journal: &Journal, journal_path: &Path, bounds: &RecoveryBounds) -> Result<()> {
    let untrusted = |reason: Refusal| Error::JournalUntrusted { path: journal_path.to_owned(), reason };
    let trash = check_trash(journal, journal_path).map_err(untrusted)?;
    let checker = Checker {
        bounds,
        root: bounds.root.as_deref().map(Folder::new),
        recorded_root: journal.root.as_deref().map(Folder::new),
        protected: bounds.protected.iter().map(|folder| Folder::new(folder)).collect(),
        trash,
        companion_copy: normalize(&super::apply::companion_copy(journal_path)),
    };
    checker.journal(journal).map_err(untrusted)
}
