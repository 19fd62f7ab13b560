//! Storing many objects with two flushes in all: the objects of a pack being absorbed (`packs.rs`).
//!
//! [`ObjectStore::put_hashed`] makes each object durable on its own (an fsync of the file, then
//! one of its folder). A [`Batch`] writes each new object to a temp file in its fan-out folder
//! without a flush; [`Batch::finish`] then makes every byte durable with one `syncfs` of the
//! store's file system, renames the temps to their object names, and makes the names durable
//! with a second `syncfs`. An object's name therefore never appears before its bytes are on disk:
//! a kill or a power loss at any moment leaves temps (which a collection sweeps, `.cctmp`) and
//! whole objects, never a short one under its name. A batch dropped unfinished removes its temps.
//!
//! The caller holds `gc.lock` shared from the first [`Batch::add_frame`] to the end of `finish`
//! (as for any put).

use super::digest::ContentId;
use super::durable::{create_dirs, temp_path_beside};
use super::objects::{set_folder_mode, ObjectStore, OBJECT_MODE};
use crate::error::{Error, Result};
use std::collections::HashSet;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// New objects staged for one flush.
pub struct Batch<'a> {
    store: &'a ObjectStore,
    staged: Mutex<Staged>,
}

#[derive(Default)]
struct Staged {
    /// `(temp, object path)` of every object written by this batch, not yet renamed.
    temps: Vec<(PathBuf, PathBuf)>,
    ids: HashSet<ContentId>,
}

impl<'a> Batch<'a> {
    /// An empty batch.
    pub fn new(store: &'a ObjectStore) -> Self {
        Batch { store, staged: Mutex::default() }
    }

    /// Stages an object already compressed (a pack's frame, `packs.rs`) unless this batch staged
    /// it; the caller checked that the store holds no loose copy. Returns whether it staged it.
    pub fn add_frame(&self, id: &ContentId, frame: &[u8]) -> Result<bool> {
        if !self.staged.lock().expect("no panics while held").ids.insert(*id) {
            return Ok(false);
        }
        let path = self.store.object_path(id);
        let folder = path.parent().expect("object paths have a fan-out folder");
        for created in create_dirs(folder)? {
            set_folder_mode(&created)?;
        }
        let temp = temp_path_beside(&path);
        let written = write_new(&temp, frame);
        if written.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        written?;
        self.staged.lock().expect("no panics while held").temps.push((temp, path));
        Ok(true)
    }

    /// Makes every staged object durable under its name (see the module docs); `pause` is a
    /// crash-test hook slept after each of the three phases. On failure the temps not yet
    /// renamed are removed (the objects already renamed are whole and durable-to-be: harmless).
    pub fn finish(self, pause: Duration) -> Result<()> {
        let temps = std::mem::take(&mut self.staged.lock().expect("no panics while held").temps);
        if temps.is_empty() {
            return Ok(());
        }
        let mut left = temps.as_slice();
        let result = (|| {
            sleep(pause);
            sync_store(self.store.root())?;
            sleep(pause);
            while let Some(((temp, path), rest)) = left.split_first() {
                std::fs::rename(temp, path).map_err(|source| Error::io(path, source))?;
                left = rest;
            }
            sleep(pause);
            sync_store(self.store.root())
        })();
        for (temp, _) in left {
            let _ = std::fs::remove_file(temp);
        }
        result
    }
}

impl Drop for Batch<'_> {
    /// An unfinished batch (an error on another thread, a refused restore) leaves no temp.
    fn drop(&mut self) {
        if let Ok(staged) = self.staged.get_mut() {
            for (temp, _) in staged.temps.drain(..) {
                let _ = std::fs::remove_file(temp);
            }
        }
    }
}

fn sleep(pause: Duration) {
    if !pause.is_zero() {
        std::thread::sleep(pause);
    }
}

/// A new file at `temp` (never through a symlink) holding `bytes`, mode [`OBJECT_MODE`],
/// not flushed.
fn write_new(temp: &Path, bytes: &[u8]) -> Result<()> {
    let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::CLOEXEC;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(OBJECT_MODE)
        .custom_flags(flags.bits() as i32)
        .open(temp)
        .map_err(|source| Error::io(temp, source))?;
    file.write_all(bytes).map_err(|source| Error::io(temp, source))
}

/// One `syncfs` of the file system holding the store.
fn sync_store(root: &Path) -> Result<()> {
    let folder = crate::fsopen::open_folder(root).map_err(|source| Error::io(root, source))?;
    rustix::fs::syncfs(&folder).map_err(|errno| Error::io(root, errno.into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::objects::tests::store;

    fn temps(root: &Path) -> usize {
        walk(root).iter().filter(|path| path.to_string_lossy().ends_with(".cctmp")).count()
    }

    fn walk(root: &Path) -> Vec<PathBuf> {
        let mut found = Vec::new();
        for entry in std::fs::read_dir(root).unwrap().flatten() {
            if entry.file_type().unwrap().is_dir() {
                found.extend(walk(&entry.path()));
            } else {
                found.push(entry.path());
            }
        }
        found
    }

    #[test]
    fn a_finished_batch_names_each_new_object_once_and_leaves_no_temp() {
        let (_folder, store) = store();
        let batch = Batch::new(&store);
        let new = ContentId::of(b"new bytes");
        let frame = zstd::bulk::compress(b"new bytes", 1).unwrap();
        assert!(batch.add_frame(&new, &frame).unwrap());
        assert!(!batch.add_frame(&new, &frame).unwrap(), "staged once");
        assert!(!store.contains(&new), "no name before the flush");
        batch.finish(Duration::ZERO).unwrap();
        assert_eq!(store.read(&new).unwrap(), b"new bytes");
        assert_eq!(std::fs::metadata(store.object_path(&new)).unwrap().permissions().mode() & 0o777, 0o400);
        assert_eq!(temps(store.root()), 0);
    }

    #[test]
    fn an_unfinished_batch_leaves_neither_objects_nor_temps() {
        let (_folder, store) = store();
        let new = ContentId::of(b"never finished");
        {
            let batch = Batch::new(&store);
            assert!(batch.add_frame(&new, &zstd::bulk::compress(b"never finished", 3).unwrap()).unwrap());
            assert_eq!(temps(store.root()), 1);
        }
        assert_eq!(temps(store.root()), 0);
        assert!(!store.contains(&new));
    }

    use std::os::unix::fs::PermissionsExt;
}
