//! Folder handles for a restore: every file-system step of staging, applying and undoing runs
//! relative to an open folder (`openat`, `renameat`, `linkat`, `unlinkat`, `mkdirat`), never on
//! a full path, so a folder swapped for a symlink after verification is never followed.
//!
//! A folder is opened component by component from `/` with `O_DIRECTORY|O_NOFOLLOW`; the paths
//! given here are real paths (verification resolved them, see `verify.rs`), so any symlink met
//! on the way was put there since, and the walk fails. Handles are cached per folder (targets
//! share folders) together with the identity (device, inode) of what was opened;
//! [`Folders::check`] re-reads every component of a folder's path and fails when one no longer
//! names the folder that was opened, which the apply phase does before each step
//! ([`Folders::check_once`]: once per folder for steps that run in no set order).

use std::collections::{HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path};
use std::sync::{Arc, Mutex};

use rustix::fs::{AtFlags, Mode, OFlags};

/// An open folder and the identity it had when opened.
#[derive(Clone)]
struct Handle {
    fd: Arc<OwnedFd>,
    device: u64,
    inode: u64,
}

/// The folder handles of one restore (or recovery), by the folder's path as bytes (hashing a
/// `Path` walks its components; these paths are plain, so the bytes name the folder).
#[derive(Default)]
pub(super) struct Folders {
    open: Mutex<HashMap<OsString, Handle>>,
}

fn changed(folder: &Path) -> std::io::Error {
    std::io::Error::other(format!(
        "{} is no longer the folder that was checked (a symlink or another folder is in its place)",
        folder.display()
    ))
}

fn identity(fd: BorrowedFd<'_>) -> std::io::Result<(u64, u64)> {
    let status = rustix::fs::fstat(fd)?;
    Ok((status.st_dev, status.st_ino))
}

impl Folders {
    fn handle(&self, folder: &Path) -> std::io::Result<Handle> {
        if let Some(known) = self.open.lock().expect("no panics while held").get(folder.as_os_str()) {
            return Ok(known.clone());
        }
        let directory = OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC;
        let fd = match (folder.parent(), folder.file_name()) {
            (Some(parent), Some(name)) => {
                let parent = self.handle(parent)?;
                match rustix::fs::openat(&*parent.fd, name, directory | OFlags::NOFOLLOW, Mode::empty()) {
                    Ok(fd) => fd,
                    Err(rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR) => return Err(changed(folder)),
                    Err(errno) => return Err(errno.into()),
                }
            }
            _ if folder.components().eq([Component::RootDir]) => rustix::fs::open(folder, directory, Mode::empty())?,
            _ => return Err(std::io::Error::other(format!("{} is not an absolute folder", folder.display()))),
        };
        let (device, inode) = identity(fd.as_fd())?;
        let handle = Handle { fd: Arc::new(fd), device, inode };
        self.open.lock().expect("no panics while held").insert(folder.as_os_str().to_owned(), handle.clone());
        Ok(handle)
    }

    /// The open folder at `folder` (a real path: no symlink, no `..`).
    pub fn open(&self, folder: &Path) -> std::io::Result<Arc<OwnedFd>> {
        Ok(self.handle(folder)?.fd)
    }

    /// The open folder at `folder` and the device it is on (as opened: no second `fstat`).
    pub fn open_on(&self, folder: &Path) -> std::io::Result<(Arc<OwnedFd>, u64)> {
        let handle = self.handle(folder)?;
        Ok((handle.fd, handle.device))
    }

    /// The open folder holding `path`, and the name of `path` in it.
    pub fn split<'a>(&self, path: &'a Path) -> std::io::Result<(Arc<OwnedFd>, &'a OsStr)> {
        match (path.parent(), path.file_name()) {
            (Some(parent), Some(name)) => Ok((self.open(parent)?, name)),
            _ => Err(std::io::Error::other(format!("{} has no parent folder", path.display()))),
        }
    }

    /// Fails when some component of `folder`'s path no longer names the folder opened for it.
    /// The walk stops at `trusted` (the confinement root: what lies above it is as trusted as
    /// the root itself), else at `/`.
    pub fn check(&self, folder: &Path, trusted: Option<&Path>) -> std::io::Result<()> {
        self.check_above(folder, trusted, None)
    }

    /// [`check`](Self::check), stopping at a folder `seen` holds (one this walk's caller checked
    /// already); every folder checked is added to `seen`. Steps that run in no set order (the
    /// parallel in-place overwrites) thereby check each folder once, not once per file in it.
    pub fn check_once(
        &self,
        folder: &Path,
        trusted: Option<&Path>,
        seen: &Mutex<HashSet<OsString>>,
    ) -> std::io::Result<()> {
        self.check_above(folder, trusted, Some(seen))
    }

    fn check_above(
        &self,
        folder: &Path,
        trusted: Option<&Path>,
        seen: Option<&Mutex<HashSet<OsString>>>,
    ) -> std::io::Result<()> {
        let known = |current: &Path| {
            seen.is_some_and(|seen| seen.lock().expect("no panics while held").contains(current.as_os_str()))
        };
        let mut cursor = Some(folder);
        let mut walked = Vec::new();
        while let (Some(current), Some(parent), Some(name)) =
            (cursor, cursor.and_then(Path::parent), cursor.and_then(Path::file_name))
        {
            if Some(current) == trusted || known(current) {
                break;
            }
            let handle = self.handle(current)?;
            let parent_handle = self.handle(parent)?;
            match rustix::fs::statat(&*parent_handle.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(status) if (status.st_dev, status.st_ino) == (handle.device, handle.inode) => {}
                _ => return Err(changed(current)),
            }
            walked.push(current);
            cursor = Some(parent);
        }
        if let Some(seen) = seen {
            seen.lock()
                .expect("no panics while held")
                .extend(walked.into_iter().map(|folder| folder.as_os_str().to_owned()));
        }
        Ok(())
    }

    /// Creates `folder` (its parent must exist) through the parent's handle; one that exists
    /// already is fine.
    pub fn make_dir(&self, folder: &Path) -> std::io::Result<()> {
        let (parent, name) = self.split(folder)?;
        match rustix::fs::mkdirat(&*parent, name, Mode::from_raw_mode(0o777)) {
            Ok(()) | Err(rustix::io::Errno::EXIST) => Ok(()),
            Err(errno) => Err(errno.into()),
        }
    }
}

/// Whether something (of any kind) is at `name` in `folder`.
pub(super) fn exists_at(folder: &OwnedFd, name: &OsStr) -> bool {
    rustix::fs::statat(folder, name, AtFlags::SYMLINK_NOFOLLOW).is_ok()
}

/// Removes the file `name` from `folder` (a folder only when empty: a staged or restored
/// empty folder); a missing one is fine.
pub(super) fn remove_at(folder: &OwnedFd, name: &OsStr) -> std::io::Result<()> {
    match rustix::fs::unlinkat(folder, name, AtFlags::empty()) {
        Ok(()) | Err(rustix::io::Errno::NOENT) => Ok(()),
        Err(rustix::io::Errno::ISDIR) => match rustix::fs::unlinkat(folder, name, AtFlags::REMOVEDIR) {
            Ok(()) | Err(rustix::io::Errno::NOENT) => Ok(()),
            Err(errno) => Err(errno.into()),
        },
        Err(errno) => Err(errno.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// A temp dir (by its real path) holding the folders `deep` and `side`.
    fn tree(deep: &str, side: &str) -> (tempfile::TempDir, PathBuf) {
        let base = tempfile::tempdir().unwrap();
        let real = std::fs::canonicalize(base.path()).unwrap();
        std::fs::create_dir_all(real.join(deep)).unwrap();
        std::fs::create_dir(real.join(side)).unwrap();
        (base, real)
    }

    #[test]
    fn opens_real_folders_and_refuses_a_symlink_on_the_way() {
        let (_base, real) = tree("a/b", "elsewhere");
        std::os::unix::fs::symlink(real.join("elsewhere"), real.join("link")).unwrap();
        let folders = Folders::default();
        folders.open(&real.join("a/b")).unwrap();
        folders.check(&real.join("a/b"), None).unwrap();
        assert!(folders.open(&real.join("link")).is_err());
        assert!(folders.open(&real.join("link/x")).is_err());
    }

    #[test]
    fn check_once_walks_each_folder_once_and_still_catches_a_swap() {
        let (_base, real) = tree("project/a/b", "outside");
        let folders = Folders::default();
        folders.open(&real.join("project/a/b")).unwrap();
        folders.open(&real.join("project/a")).unwrap();
        let seen = Mutex::new(HashSet::new());
        let project = real.join("project");
        folders.check_once(&real.join("project/a/b"), Some(&project), &seen).unwrap();
        let walked: HashSet<OsString> =
            [real.join("project/a/b"), real.join("project/a")].iter().map(|path| path.as_os_str().to_owned()).collect();
        assert_eq!(*seen.lock().unwrap(), walked, "the folders walked, up to the trusted root");
        // A folder not yet seen is walked (up to the first seen one) and a swap there is caught.
        std::fs::create_dir(real.join("project/a/c")).unwrap();
        folders.open(&real.join("project/a/c")).unwrap();
        std::fs::rename(real.join("project/a/c"), real.join("project/a/c.moved")).unwrap();
        std::os::unix::fs::symlink(real.join("outside"), real.join("project/a/c")).unwrap();
        assert!(folders.check_once(&real.join("project/a/c"), Some(&project), &seen).is_err());
        assert!(!seen.lock().unwrap().contains(real.join("project/a/c").as_os_str()), "a failed walk adds nothing");
    }

    #[test]
    fn check_fails_once_a_folder_is_swapped_for_a_symlink() {
        let (_base, real) = tree("project/dir", "outside");
        let folders = Folders::default();
        let handle = folders.open(&real.join("project/dir")).unwrap();
        std::fs::rename(real.join("project/dir"), real.join("project/dir.moved")).unwrap();
        std::os::unix::fs::symlink(real.join("outside"), real.join("project/dir")).unwrap();
        assert!(folders.check(&real.join("project/dir"), None).is_err());
        assert!(folders.check(&real.join("project/dir"), Some(&real.join("project"))).is_err());
        assert!(folders.check(&real.join("project/dir"), Some(&real.join("project/dir"))).is_ok());
        // The handle still names the moved folder: a step through it never reaches `outside`.
        std::fs::write(real.join("project/dir.moved/x"), b"x").unwrap();
        assert!(exists_at(&handle, OsStr::new("x")));
        assert!(!real.join("outside/x").exists());
    }
}
