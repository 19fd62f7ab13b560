//! What a redo needs of a restore: the bytes of every file it replaces, kept in the store.
//!
//! Verification already read and hashed every current target (`verify.rs`): a file overwritten
//! in place even has its bytes in memory. Keeping them costs no second read or hash: an object
//! the store holds already is only refreshed (a collection running now keeps it); another is
//! stored from the bytes in memory, or read once more and checked against the hash verification
//! took (a file that changed since refuses the restore, nothing written). The new objects go into
//! one pack, at the caller's zstd level or as stored frames (`store/packs.rs`, `store/stored.rs`):
//! one file, written and made durable before this returns (not a file, a temp and a rename per
//! object), so the journal that follows may name the records that name them.

use super::verify::Step;
use super::Action;
use crate::error::{Error, Result};
use crate::fsopen::{read_regular, Follow};
use crate::store::digest::ContentId;
use crate::store::objects::ObjectStore;
use crate::store::packs::PackWriter;
use rayon::prelude::*;
use std::path::PathBuf;
use std::time::Duration;

/// What a target held before the restore, as kept for its redo.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeptState {
    /// No file was there.
    Missing,
    /// A regular file, now an object of the store; `stored_now` when this call wrote it.
    Regular { content: ContentId, mode: u32, size: u64, stored_now: bool },
    /// Something this module does not keep (a symlink, FIFO, folder, or a file over `max_size`):
    /// the caller looks at it itself.
    Other,
}

/// One replaced target and what it held.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeptFile {
    pub target: PathBuf,
    pub state: KeptState,
}

/// How [`keep`] stores new objects.
#[derive(Clone, Copy, Debug)]
pub struct KeepOptions {
    /// Regular files over this size are not kept ([`KeptState::Other`]).
    pub max_size: u64,
    /// The zstd level of new objects; `None` stores them uncompressed (stored frames,
    /// `store/stored.rs`: the redo reads them back without decoding).
    pub level: Option<i32>,
    /// A crash-test hook: slept before the pack is written and after ([`PackWriter::finish`]).
    pub pause: Duration,
}

/// Keeps the current state of every target the steps change (see the module docs).
pub(super) fn keep(store: &ObjectStore, steps: &[Step], options: &KeepOptions) -> Result<Vec<KeptFile>> {
    let batch = PackWriter::new(store, options.level);
    let kept = steps
        .par_iter()
        .filter(|step| step.action != Action::Unchanged)
        .map(|step| Ok(KeptFile { target: step.target.clone(), state: keep_one(&batch, step, options.max_size)? }))
        .collect::<Result<Vec<_>>>()?;
    batch.finish(options.pause)?;
    Ok(kept)
}

fn keep_one(batch: &PackWriter<'_>, step: &Step, max_size: u64) -> Result<KeptState> {
    if !step.original_existed {
        return Ok(KeptState::Missing);
    }
    let (Some(content), Some((mode, size)), None) = (step.before, step.before_file, &step.special) else {
        return Ok(KeptState::Other);
    };
    if size > max_size {
        return Ok(KeptState::Other);
    }
    let stored_now = if let Some(original) = &step.original {
        batch.add(&content, &original.bytes)?
    } else if batch.refreshed(&content) {
        false
    } else {
        let bytes = read_regular(&step.target, Follow::No).map_err(|source| Error::io(&step.target, source))?;
        if ContentId::of(&bytes) != content {
            let changed = std::io::Error::other("it changed while the restore was checking it; nothing was restored");
            return Err(Error::io(&step.target, changed));
        }
        batch.add(&content, &bytes)?
    };
    Ok(KeptState::Regular { content, mode, size, stored_now })
}
