//! Reading and writing one target through its folder handle: whether it holds given bytes,
//! overwriting it in place, setting its mode, and replacing it by a fresh file. Shared by the
//! apply step, the in-process undo and crash recovery (`redo.rs`). Every open is `O_NOFOLLOW`
//! (and `O_NONBLOCK`, so a FIFO put in a target's place never blocks).

use crate::store::digest::ContentId;
use crate::store::durable::{unique_name, TEMP_SUFFIX};
use rustix::fd::OwnedFd;
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use std::ffi::OsStr;
use std::io::Write;
use std::path::Path;

/// The last component of a target path (what every `*at` call names in the folder handle).
pub(super) fn file_name(path: &Path) -> &OsStr {
    path.file_name().unwrap_or_else(|| OsStr::new("file"))
}

fn changed(what: &str) -> std::io::Error {
    std::io::Error::other(what.to_owned())
}

/// Whether the regular file `name` in `folder` holds exactly `content`.
pub(super) fn holds(folder: &OwnedFd, name: &OsStr, content: &ContentId) -> bool {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let Ok(opened) = rustix::fs::openat(folder, name, flags, Mode::empty()) else { return false };
    let Ok(status) = rustix::fs::fstat(&opened) else { return false };
    if FileType::from_raw_mode(status.st_mode) != FileType::RegularFile {
        return false;
    }
    let mut hasher = blake3::Hasher::new();
    hasher.update_reader(std::fs::File::from(opened)).is_ok() && ContentId::from(hasher.finalize()) == *content
}

/// Fails unless `status` is a regular file and, when `identity` (device, inode) is given, that
/// very file with a single link.
fn check_identity(status: &rustix::fs::Stat, identity: Option<(u64, u64)>) -> std::io::Result<()> {
    if FileType::from_raw_mode(status.st_mode) != FileType::RegularFile {
        return Err(changed("is no longer a regular file"));
    }
    match identity {
        Some(identity) if (status.st_dev, status.st_ino) != identity || status.st_nlink != 1 => {
            Err(changed("was replaced or hard-linked since it was checked"))
        }
        _ => Ok(()),
    }
}

/// Overwrites the regular file `name` in `folder` with `bytes` (then cuts it to their length)
/// and gives it `mode`; `data` false only sets the mode (the bytes are already right).
///
/// `identity` is the (device, inode) the file was verified as: nothing is written when the
/// name now leads to another file, or to one with more than one link. `began` is called just
/// before the first change. A file a running program was started from cannot be opened for
/// writing (`ETXTBSY`); it is replaced by a new file instead (written beside it, renamed over).
pub(super) fn overwrite(
    folder: &OwnedFd,
    name: &OsStr,
    bytes: &[u8],
    mode: u32,
    identity: Option<(u64, u64)>,
    data: bool,
    began: impl FnOnce(),
) -> std::io::Result<()> {
    let flags = OFlags::WRONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let opened = match rustix::fs::openat(folder, name, flags, Mode::empty()) {
        Ok(opened) => opened,
        Err(rustix::io::Errno::TXTBSY) => {
            check_identity(&rustix::fs::statat(folder, name, AtFlags::SYMLINK_NOFOLLOW)?, identity)?;
            began();
            return replace_via_temp(folder, name, bytes, mode);
        }
        Err(errno) => return Err(errno.into()),
    };
    let status = rustix::fs::fstat(&opened)?;
    check_identity(&status, identity)?;
    began();
    let mut file = std::fs::File::from(opened);
    if data {
        file.write_all(bytes)?;
        if status.st_size as u64 > bytes.len() as u64 {
            file.set_len(bytes.len() as u64)?;
        }
    }
    if status.st_mode & 0o7777 != mode {
        rustix::fs::fchmod(&file, Mode::from_raw_mode(mode))?;
    }
    Ok(())
}

/// Gives the regular file `name` in `folder` the permission bits `mode`, if it has others.
pub(super) fn set_mode_at(folder: &OwnedFd, name: &OsStr, mode: u32) -> std::io::Result<()> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let opened = rustix::fs::openat(folder, name, flags, Mode::empty())?;
    let status = rustix::fs::fstat(&opened)?;
    if FileType::from_raw_mode(status.st_mode) == FileType::RegularFile && status.st_mode & 0o7777 != mode {
        rustix::fs::fchmod(&opened, Mode::from_raw_mode(mode))?;
    }
    Ok(())
}

/// Puts a new file holding `bytes` (with `mode`) at `name` in `folder`, replacing whatever
/// file is there: written to a fresh temp name first, then renamed into place.
pub(super) fn replace_via_temp(folder: &OwnedFd, name: &OsStr, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    let temp = unique_name(name, TEMP_SUFFIX);
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let created = rustix::fs::openat(folder, &temp, flags, Mode::from_raw_mode(mode & 0o777))?;
    let mut file = std::fs::File::from(created);
    let written = file
        .write_all(bytes)
        .and_then(|()| Ok(rustix::fs::fchmod(&file, Mode::from_raw_mode(mode))?))
        .and_then(|()| Ok(rustix::fs::renameat(folder, &temp, folder, name)?));
    if written.is_err() {
        let _ = rustix::fs::unlinkat(folder, &temp, AtFlags::empty());
    }
    written
}
