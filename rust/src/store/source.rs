//! Reading a user's file safely: never through a symlink (`lstat`, then `O_NOFOLLOW` and a
//! same-inode check), never a FIFO or device, and never more than a size cap (a file over the
//! cap is not read at all).
//!
//! Used both to back a file up and to look at the current state of a restore target.

use crate::error::{Error, Result};
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// The documented per-file backup cap: files over 10 MB (10,485,760 bytes) are never read.
pub const MAX_BACKUP_SIZE: u64 = 10_485_760;

/// What is at a path, as far as backups are concerned.
#[derive(Debug, PartialEq, Eq)]
pub enum FileState {
    /// Nothing is there.
    Missing,
    /// A symbolic link; it is never followed.
    Symlink,
    /// A folder, FIFO, socket or device.
    NotRegular,
    /// A regular file over the cap; it was not read.
    TooLarge { size: u64, mode: u32 },
    /// A regular file, read whole.
    Regular(RegularFile),
}

/// A regular file's bytes and metadata.
#[derive(Debug, PartialEq, Eq)]
pub struct RegularFile {
    pub bytes: Vec<u8>,
    /// Permission bits (`st_mode & 0o7777`).
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
}

/// Reads what is at `path` without following symlinks, reading at most `max_size` bytes.
pub fn read_file_state(path: &Path, max_size: u64) -> Result<FileState> {
    let metadata = match std::fs::symlink_metadata(path) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(FileState::Missing),
        Err(source) => return Err(Error::io(path, source)),
    };
    let file_type = metadata.file_type();
    if file_type.is_symlink() {
        return Ok(FileState::Symlink);
    }
    if !file_type.is_file() {
        return Ok(FileState::NotRegular);
    }
    if metadata.len() > max_size {
        return Ok(FileState::TooLarge { size: metadata.len(), mode: metadata.mode() & 0o7777 });
    }
    let mut file = match super::durable::open_no_follow(path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(FileState::Missing),
        Err(error) if error.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) => {
            return Ok(FileState::Symlink)
        }
        Err(error) if crate::fsopen::is_not_regular(&error) => return Ok(FileState::NotRegular),
        Err(source) => return Err(Error::io(path, source)),
    };
    let opened = file.metadata().map_err(|source| Error::io(path, source))?;
    // The path may have been swapped between lstat and open; trust only the opened descriptor.
    if !opened.file_type().is_file() {
        return Ok(FileState::NotRegular);
    }
    if opened.len() > max_size {
        return Ok(FileState::TooLarge { size: opened.len(), mode: opened.mode() & 0o7777 });
    }
    let mut bytes = Vec::with_capacity(opened.len() as usize);
    (&mut file).take(max_size + 1).read_to_end(&mut bytes).map_err(|source| Error::io(path, source))?;
    if bytes.len() as u64 > max_size {
        return Ok(FileState::TooLarge { size: bytes.len() as u64, mode: opened.mode() & 0o7777 });
    }
    Ok(FileState::Regular(RegularFile { bytes, mode: opened.mode() & 0o7777, uid: opened.uid(), gid: opened.gid() }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn reads_a_regular_file_with_its_mode() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("script.sh");
        std::fs::write(&path, b"#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        let FileState::Regular(file) = read_file_state(&path, MAX_BACKUP_SIZE).unwrap() else { panic!() };
        assert_eq!(file.bytes, b"#!/bin/sh\n");
        assert_eq!(file.mode, 0o755);
    }

    #[test]
    fn classifies_missing_symlink_folder_and_too_large() {
        let folder = tempfile::tempdir().unwrap();
        assert_eq!(read_file_state(&folder.path().join("absent"), 10).unwrap(), FileState::Missing);
        let target = folder.path().join("target");
        std::fs::write(&target, b"0123456789ab").unwrap();
        let link = folder.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert_eq!(read_file_state(&link, 100).unwrap(), FileState::Symlink);
        assert_eq!(read_file_state(folder.path(), 100).unwrap(), FileState::NotRegular);
        assert!(matches!(read_file_state(&target, 10).unwrap(), FileState::TooLarge { size: 12, .. }));
        assert!(matches!(read_file_state(&target, 12).unwrap(), FileState::Regular(_)));
    }
}
