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

/// A regular file's size and modification and change times, from one `stat`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Stamp {
    pub size: u64,
    pub modified: (i64, i64),
    pub changed: (i64, i64),
}

impl Stamp {
    fn of(status: &rustix::fs::Stat) -> Stamp {
        Stamp {
            size: status.st_size as u64,
            modified: (status.st_mtime, status.st_mtime_nsec as i64),
            changed: (status.st_ctime, status.st_ctime_nsec as i64),
        }
    }
}

/// What a file held when it was verified: its bytes and their [`Stamp`].
pub(super) type Held<'a> = (&'a [u8], Stamp);

/// The block size the in-place write compares in (a page).
const BLOCK: usize = 4096;

/// The byte ranges of `new` whose blocks differ from `old` (or lie past its end), adjacent
/// blocks joined.
fn changed_ranges(old: &[u8], new: &[u8]) -> Vec<std::ops::Range<usize>> {
    let mut ranges: Vec<std::ops::Range<usize>> = Vec::new();
    for start in (0..new.len()).step_by(BLOCK) {
        let end = (start + BLOCK).min(new.len());
        if end <= old.len() && old[start..end] == new[start..end] {
            continue;
        }
        match ranges.last_mut() {
            Some(last) if last.end == start => last.end = end,
            _ => ranges.push(start..end),
        }
    }
    ranges
}

/// Overwrites the regular file `name` in `folder` with `bytes` (then cuts it to their length)
/// and gives it `mode`; `data` false only sets the mode (the bytes are already right).
///
/// `held` is what the file held when it was verified: while its size, mtime and ctime are still
/// the ones taken then (so nothing wrote it since), only the blocks that differ are written:
/// an edit that appended a line or changed a few gets back a page or two per file, not the whole
/// file, and the sync that follows flushes that much. Otherwise every byte is written.
///
/// `identity` is the (device, inode) the file was verified as: nothing is written when the
/// name now leads to another file, or to one with more than one link. `began` is called just
/// before the first change. A file a running program was started from cannot be opened for
/// writing (`ETXTBSY`); it is replaced by a new file instead (written beside it, renamed over).
#[allow(clippy::too_many_arguments, reason = "one write's target, bytes and checks")]
pub(super) fn overwrite(
    folder: &OwnedFd,
    name: &OsStr,
    bytes: &[u8],
    mode: u32,
    identity: Option<(u64, u64)>,
    held: Option<Held<'_>>,
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
        match held.filter(|(old, stamp)| old.len() as u64 == stamp.size && Stamp::of(&status) == *stamp) {
            Some((old, _)) => {
                use std::os::unix::fs::FileExt;
                for range in changed_ranges(old, bytes) {
                    file.write_all_at(&bytes[range.clone()], range.start as u64)?;
                }
            }
            None => file.write_all(bytes)?,
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn folder_of(path: &Path) -> OwnedFd {
        rustix::fs::open(path, OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty()).unwrap()
    }

    fn stamp_of(path: &Path) -> Stamp {
        Stamp::of(&rustix::fs::stat(path).unwrap())
    }

    #[test]
    fn changed_ranges_are_the_differing_blocks_joined() {
        let old = vec![1u8; 5 * BLOCK];
        let mut new = old.clone();
        new[BLOCK + 7] = 2;
        new[2 * BLOCK] = 2;
        new[4 * BLOCK + 1] = 2;
        assert_eq!(changed_ranges(&old, &new), vec![BLOCK..3 * BLOCK, 4 * BLOCK..5 * BLOCK]);
        let longer = [old.as_slice(), b"# changed\n"].concat();
        assert_eq!(changed_ranges(&old, &longer), vec![5 * BLOCK..5 * BLOCK + 10], "an appended line: one block");
        assert_eq!(
            changed_ranges(&longer, &old),
            Vec::<std::ops::Range<usize>>::new(),
            "a cut: no block, only set_len"
        );
        assert_eq!(changed_ranges(&old[..100], &old[..BLOCK + 3]), vec![0..BLOCK + 3], "a block past the old end");
    }

    #[test]
    fn an_unchanged_file_gets_only_its_differing_blocks_and_a_changed_one_every_byte() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("target");
        let old: Vec<u8> = (0..3 * BLOCK).map(|i| (i % 251) as u8).collect();
        let mut new = old.clone();
        new.extend_from_slice(b"# changed\n");
        new[2 * BLOCK + 5] ^= 0xff;
        let folder = folder_of(dir.path());
        let name = OsStr::new("target");

        // Held as verified: the result is exactly the new bytes (the first two blocks untouched).
        std::fs::write(&path, &old).unwrap();
        overwrite(&folder, name, &new, 0o644, None, Some((&old, stamp_of(&path))), true, || ()).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), new);
        overwrite(&folder, name, &old, 0o644, None, Some((&new, stamp_of(&path))), true, || ()).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), old, "back again: the tail block rewritten, the file cut");

        // Only the differing blocks are written: a block the held bytes claim is already right
        // is left as the file has it (here, deliberately not what was held).
        let mut claimed = old.clone();
        claimed[0] ^= 0xff;
        std::fs::write(&path, &old).unwrap();
        overwrite(&folder, name, &claimed, 0o644, None, Some((&claimed, stamp_of(&path))), true, || ()).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), old, "nothing differed from what was held: nothing written");

        // Written since it was verified (its stamp differs): every byte is written.
        let mut stale = stamp_of(&path);
        stale.changed.1 += 1;
        overwrite(&folder, name, &claimed, 0o644, None, Some((&claimed, stale)), true, || ()).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), claimed);
        let mut resized = stamp_of(&path);
        resized.size += 1;
        overwrite(&folder, name, &new, 0o644, None, Some((&claimed, resized)), true, || ()).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), new);
    }
}
