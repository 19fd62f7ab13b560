//! Targets that are not regular files: symlinks, FIFOs and empty folders a shell command created,
//! removed or put in a file's place (see [`Special`]). Reading what is at a target, making one
//! at a name, and replacing a target by one, always through the folder handle and never
//! following a symlink: a symlink is read with `readlinkat` and made with `symlinkat`, so no
//! restore ever writes through a link.

use super::folders::remove_at;
use super::Special;
use crate::store::durable::{unique_name, TEMP_SUFFIX};
use rustix::fd::OwnedFd;
use rustix::fs::{AtFlags, FileType, Mode, RenameFlags};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// What a non-regular target is now, by path (`lstat`): `None` for a regular file, a device or
/// socket, or nothing.
pub(super) fn current(target: &Path) -> Option<Special> {
    let metadata = std::fs::symlink_metadata(target).ok()?;
    let kind = metadata.file_type();
    let mode = metadata.mode() & 0o7777;
    if kind.is_symlink() {
        std::fs::read_link(target).ok().map(Special::Symlink)
    } else if kind.is_fifo() {
        Some(Special::Fifo { mode })
    } else if kind.is_dir() {
        Some(Special::Folder { mode })
    } else {
        None
    }
}

/// What a non-regular `name` in `folder` is (see [`current`]).
pub(super) fn read_at(folder: &OwnedFd, name: &OsStr) -> Option<Special> {
    let status = rustix::fs::statat(folder, name, AtFlags::SYMLINK_NOFOLLOW).ok()?;
    let mode = status.st_mode & 0o7777;
    match FileType::from_raw_mode(status.st_mode) {
        FileType::Symlink => {
            let link = rustix::fs::readlinkat(folder, name, Vec::new()).ok()?;
            Some(Special::Symlink(PathBuf::from(OsStr::from_bytes(link.as_bytes()))))
        }
        FileType::Fifo => Some(Special::Fifo { mode }),
        FileType::Directory => Some(Special::Folder { mode }),
        _ => None,
    }
}

/// Whether `name` in `folder` is `special` already.
pub(super) fn holds_special(folder: &OwnedFd, name: &OsStr, special: &Special) -> bool {
    read_at(folder, name).is_some_and(|found| special.matches(&found))
}

/// Makes `special` at `name` in `folder` (nothing may be there).
pub(super) fn make_at(folder: &OwnedFd, name: &OsStr, special: &Special) -> std::io::Result<()> {
    match special {
        Special::Symlink(link) => rustix::fs::symlinkat(link.as_os_str(), folder, name)?,
        Special::Fifo { mode } => {
            rustix::fs::mknodat(folder, name, FileType::Fifo, Mode::from_raw_mode(*mode & 0o777), 0)?;
            rustix::fs::chmodat(folder, name, Mode::from_raw_mode(*mode & 0o7777), AtFlags::empty())?;
        }
        Special::Folder { mode } => {
            rustix::fs::mkdirat(folder, name, Mode::from_raw_mode(*mode & 0o777))?;
            rustix::fs::chmodat(folder, name, Mode::from_raw_mode(*mode & 0o7777), AtFlags::empty())?;
        }
    }
    Ok(())
}

/// Puts `special` at `name` in `folder`, replacing whatever non-folder is there: made at a
/// fresh temp name, then exchanged with the target (a folder cannot be renamed over a file)
/// and the old one removed, or renamed into place when nothing is there.
pub(super) fn replace_at(folder: &OwnedFd, name: &OsStr, special: &Special) -> std::io::Result<()> {
    let temp = unique_name(name, TEMP_SUFFIX);
    make_at(folder, &temp, special)?;
    let present = rustix::fs::statat(folder, name, AtFlags::SYMLINK_NOFOLLOW).is_ok();
    let placed = if present {
        rustix::fs::renameat_with(folder, &temp, folder, name, RenameFlags::EXCHANGE)
            .map_err(std::io::Error::from)
            .and_then(|()| remove_at(folder, &temp))
    } else {
        rustix::fs::renameat(folder, &temp, folder, name).map_err(std::io::Error::from)
    };
    if placed.is_err() {
        let _ = remove_at(folder, &temp);
    }
    placed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn makes_reads_and_replaces_every_kind_without_following_links() {
        let base = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), b"keep").unwrap();
        let handle: OwnedFd = rustix::fs::open(base.path(), rustix::fs::OFlags::DIRECTORY, Mode::empty()).unwrap();
        let link = Special::Symlink(outside.path().join("secret"));
        make_at(&handle, OsStr::new("a"), &link).unwrap();
        assert!(holds_special(&handle, OsStr::new("a"), &link));
        // A FIFO, then a folder, in the link's place: the link is replaced, never followed.
        replace_at(&handle, OsStr::new("a"), &Special::Fifo { mode: 0o600 }).unwrap();
        assert_eq!(current(&base.path().join("a")), Some(Special::Fifo { mode: 0o600 }));
        replace_at(&handle, OsStr::new("a"), &Special::Folder { mode: 0o750 }).unwrap();
        assert_eq!(read_at(&handle, OsStr::new("a")), Some(Special::Folder { mode: 0o750 }));
        assert_eq!(std::fs::read(outside.path().join("secret")).unwrap(), b"keep");
        remove_at(&handle, OsStr::new("a")).unwrap();
        assert!(current(&base.path().join("a")).is_none());
        assert_eq!(std::fs::read_dir(base.path()).unwrap().count(), 0, "no temp left behind");
    }
}
