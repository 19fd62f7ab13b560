//! Completing a restore a crash interrupted (version 2 journals, see `journal.rs`).
//!
//! Every target is brought to the state the journal names, from durable sources only: objects
//! of the store, real-CLI blobs, the companion's copy beside the journal. Each step first looks
//! at what is on disk, so running it again after another crash is harmless:
//!
//! - a write whose target already holds the new content only gets its mode;
//! - a target overwritten in place is written again (a crash may have torn it);
//! - a swapped target is replaced only while it holds its original (or is missing); a target
//!   that did not exist before and holds something else was put there by somebody else since,
//!   and is left alone;
//! - a delete removes the target only while it holds its original (a target whose folder is
//!   gone is gone too);
//! - a symlink, FIFO or folder to make is made (through a temp, exchanged into place) unless the
//!   target already is one such, under the same rule as a swapped write.

use super::folders::{exists_at, remove_at, Folders};
use super::journal::{Journal, JournalOp, JournalSource, Method};
use super::special::{holds_special, read_at, replace_at};
use super::target_io::{file_name, holds, overwrite, replace_via_temp, set_mode_at};
use super::Action;
use super::Special;
use crate::error::{Error, Result};
use crate::store::digest::ContentId;
use crate::store::objects::{read_raw_blob, ObjectStore};

/// Brings every target of `journal` to its restored state (see the module docs).
pub(super) fn redo_all(journal: &Journal, folders: &Folders) -> Result<()> {
    let store = journal.store.as_deref().map(ObjectStore::open).transpose()?;
    // A write that names no new content, or no source to read it from, is a journal of the wrong
    // shape: refused before the first folder is made or target touched, not halfway through.
    if let Some(op) = journal.ops.iter().find(|op| !names_its_content(op, store.is_some())) {
        return Err(malformed(op));
    }
    // Every backup a write still needs must be there before the first target is touched: a
    // missing one refuses the recovery with the tree as the crash left it, not half finished.
    for op in &journal.ops {
        missing_source(op, store.as_ref(), folders)?;
    }
    for folder in &journal.created_dirs {
        folders.make_dir(folder).map_err(|source| Error::io(folder, source))?;
    }
    for op in &journal.ops {
        redo_op(op, store.as_ref(), folders)?;
    }
    Ok(())
}

fn redo_op(op: &JournalOp, store: Option<&ObjectStore>, folders: &Folders) -> Result<()> {
    let io = |source: std::io::Error| Error::io(&op.target, source);
    let name = file_name(&op.target);
    let folder = match folders.open(&op.folder) {
        Ok(folder) => folder,
        // A delete whose folder is gone has nothing left to delete: the Python layer removes a
        // folder the restore emptied right after the commit returned, while the settle may still
        // be running (a kill then leaves the journal open).
        Err(error) if op.action == Action::Delete && error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(error) => return Err(io(error)),
    };
    let holds_original = || op.before.is_none_or(|before| holds(&folder, name, &before));
    match op.action {
        Action::Delete => {
            if exists_at(&folder, name) && holds_original() {
                remove_at(&folder, name).map_err(io)?;
            }
        }
        Action::Write if op.special.is_some() => {
            // A symlink, FIFO or folder: made again unless already there (never followed).
            let special = op.special.as_ref().ok_or_else(|| malformed(op))?;
            let present = exists_at(&folder, name);
            if !holds_special(&folder, name, special) && (!present || (op.original_existed && holds_original())) {
                replace_at(&folder, name, special).map_err(io)?;
            }
            if let Some(temp) = &op.temp {
                let (temp_folder, temp_name) = folders.split(temp).map_err(io)?;
                remove_at(&temp_folder, temp_name).map_err(io)?;
            }
        }
        Action::Write => {
            let content = op.content.ok_or_else(|| malformed(op))?;
            if holds(&folder, name, &content) {
                set_mode_at(&folder, name, op.mode).map_err(io)?;
            } else {
                let present = exists_at(&folder, name);
                let replace = match op.method {
                    Method::InPlace => true,
                    Method::Swap => !present || (op.original_existed && holds_original()),
                };
                if replace {
                    let bytes = read_source(op, &content, store)?;
                    if present
                        && op.original_existed
                        && read_at(&folder, name).is_some_and(|found| matches!(found, Special::Folder { .. }))
                    {
                        remove_at(&folder, name).map_err(io)?; // an empty folder a command put in the file's place
                    }
                    let written = if op.method == Method::InPlace && present {
                        overwrite(&folder, name, &bytes, op.mode, None, None, true, || ())
                    } else {
                        replace_via_temp(&folder, name, &bytes, op.mode)
                    };
                    written.map_err(io)?;
                }
            }
            if let Some(temp) = &op.temp {
                let (temp_folder, temp_name) = folders.split(temp).map_err(io)?;
                remove_at(&temp_folder, temp_name).map_err(io)?;
            }
        }
        Action::Unchanged => {}
    }
    Ok(())
}

/// Fails when a write whose target does not hold its new content yet names a source that is
/// not there (an object of the store, a real-CLI blob, the companion's copy).
fn missing_source(op: &JournalOp, store: Option<&ObjectStore>, folders: &Folders) -> Result<()> {
    let (Action::Write, None, Some(content), Some(source)) = (op.action, &op.special, &op.content, &op.source) else {
        return Ok(());
    };
    let done = folders.open(&op.folder).is_ok_and(|folder| holds(&folder, file_name(&op.target), content));
    let path = match source {
        _ if done => return Ok(()),
        JournalSource::Object(id) => match store {
            Some(store) if store.contains(id) => return Ok(()),
            Some(store) => store.object_path(id),
            None => return Err(malformed(op)),
        },
        JournalSource::RawBlob { folder, digest } => folder.join(digest.to_string()),
        JournalSource::File(path) => path.clone(),
    };
    if std::fs::symlink_metadata(&path).is_ok() {
        return Ok(());
    }
    let id = match source {
        JournalSource::Object(id) => id.to_string(),
        JournalSource::RawBlob { digest, .. } => digest.to_string(),
        JournalSource::File(_) => content.to_string(),
    };
    Err(Error::ObjectMissing { id, path })
}

/// Whether a write names its new content and a source it can be read from (`read_source`).
fn names_its_content(op: &JournalOp, has_store: bool) -> bool {
    op.action != Action::Write
        || op.special.is_some()
        || (op.content.is_some()
            && match &op.source {
                None => false,
                Some(JournalSource::Object(_)) => has_store,
                Some(_) => true,
            })
}

fn malformed(op: &JournalOp) -> Error {
    Error::io(&op.target, std::io::Error::other("the journal names no new content for this write"))
}

/// The new content of a write, read from its durable source and checked against its digest.
fn read_source(op: &JournalOp, content: &ContentId, store: Option<&ObjectStore>) -> Result<Vec<u8>> {
    let (bytes, path) = match op.source.as_ref().ok_or_else(|| malformed(op))? {
        JournalSource::Object(id) => {
            let store = store.ok_or_else(|| malformed(op))?;
            (store.read(id)?, store.object_path(id))
        }
        JournalSource::RawBlob { folder, digest } => (read_raw_blob(folder, digest)?, folder.join(digest.to_string())),
        JournalSource::File(path) => (
            crate::fsopen::read_regular(path, crate::fsopen::Follow::No).map_err(|source| Error::io(path, source))?,
            path.clone(),
        ),
    };
    let actual = ContentId::of(&bytes);
    if actual != *content {
        return Err(Error::ObjectCorrupt {
            id: content.to_string(),
            path,
            reason: format!("holds {} instead", &actual.to_string()[..12]),
        });
    }
    Ok(bytes)
}
