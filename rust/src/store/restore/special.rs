//! Targets that are not regular files: symlinks, FIFOs, sockets and empty folders a shell command created,
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

/// What a non-regular target is now, by path (`lstat`): `None` for a regular file, a device,
/// or nothing.
pub(super) fn current(target: &Path) -> Option<Special> {
    let metadata = std::fs::symlink_metadata(target).ok()?;
    let kind = metadata.file_type();
    let mode = metadata.mode() & 0o7777;
    if kind.is_symlink() {
        std::fs::read_link(target).ok().map(Special::Symlink)
    } else if kind.is_fifo() {
        Some(Special::Fifo { mode })
    } else if kind.is_socket() {
        Some(Special::Socket { mode })
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
        FileType::Socket => Some(Special::Socket { mode }),
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
        Special::Fifo { mode } | Special::Socket { mode } => {
            let kind = if matches!(special, Special::Fifo { .. }) { FileType::Fifo } else { FileType::Socket };
            rustix::fs::mknodat(folder, name, kind, Mode::from_raw_mode(*mode & 0o777), 0)?;
            rustix::fs::chmodat(folder, name, Mode::from_raw_mode(*mode & 0o777), AtFlags::empty())?;
        }
        Special::Folder { mode } => {
            rustix::fs::mkdirat(folder, name, Mode::from_raw_mode(*mode & 0o777))?;
            rustix::fs::chmodat(folder, name, Mode::from_raw_mode(*mode & 0o777), AtFlags::empty())?;
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
    use super::super::{restore, BackupSource, Desired, Expected, FaultInjection, RestoreItem, RestoreOptions};
    use super::*;
    use crate::store::objects::ObjectStore;
    use std::collections::BTreeMap;

    /// Every entry under `root`, by kind: a file's bytes and mode, a link's target, a FIFO's or folder's mode.
    fn snapshot(root: &Path) -> BTreeMap<PathBuf, String> {
        let mut out = BTreeMap::new();
        for (path, metadata) in super::super::test_tree::entries(root) {
            let mode = metadata.mode() & 0o7777;
            let kind = metadata.file_type();
            let shown = if kind.is_symlink() {
                format!("link {}", std::fs::read_link(&path).unwrap().display())
            } else if kind.is_dir() {
                format!("folder {mode:o}")
            } else if kind.is_fifo() {
                format!("fifo {mode:o}")
            } else {
                format!("file {:?} {mode:o}", std::fs::read(&path).unwrap())
            };
            out.insert(path.strip_prefix(root).unwrap().to_owned(), shown);
        }
        out
    }

    #[test]
    fn every_kind_is_restored_and_a_failure_at_any_step_puts_the_tree_back() {
        for fail in [None, Some(0), Some(2), Some(4), Some(6), Some(7)] {
            let base = tempfile::tempdir().unwrap();
            let project = base.path().join("project");
            std::fs::create_dir(&project).unwrap();
            let outside = base.path().join("outside");
            std::fs::write(&outside, b"secret").unwrap();
            let store = ObjectStore::open(base.path().join("objects")).unwrap();
            let (file_id, _) = store.put_bytes(b"was a file").unwrap();
            // The tree a command left ...
            std::os::unix::fs::symlink(&outside, project.join("file_now_link")).unwrap();
            std::fs::write(project.join("link_now_file"), b"new").unwrap();
            std::os::unix::fs::symlink("a", project.join("created_link")).unwrap();
            rustix::fs::mknodat(
                rustix::fs::CWD,
                project.join("created_fifo"),
                FileType::Fifo,
                Mode::from_raw_mode(0o600),
                0,
            )
            .unwrap();
            std::fs::write(project.join("folder_now_file"), b"x").unwrap();
            let special = |special: Special| Desired::Special(special);
            let item = |name: &str, desired: Desired, expected: Expected| RestoreItem {
                target: project.join(name),
                desired,
                expected,
            };
            // ... and the state the checkpoint saw.
            let items = vec![
                item(
                    "file_now_link",
                    Desired::Content { source: BackupSource::Object(file_id), mode: Some(0o640) },
                    Expected::Special(Special::Symlink(outside.clone())),
                ),
                item("link_now_file", special(Special::Symlink("a".into())), Expected::Unknown),
                item("created_link", Desired::Absent, Expected::Special(Special::Symlink("a".into()))),
                item("created_fifo", Desired::Absent, Expected::Special(Special::Fifo { mode: 0 })),
                item("folder_now_file", special(Special::Folder { mode: 0o750 }), Expected::Unknown),
                item("removed_fifo", special(Special::Fifo { mode: 0o640 }), Expected::Absent),
                item("removed/nested", special(Special::Folder { mode: 0o700 }), Expected::Absent),
                item("removed", special(Special::Folder { mode: 0o711 }), Expected::Absent),
            ];
            let before = snapshot(&project);
            let options = RestoreOptions {
                confine_to: Some(project.clone()),
                faults: FaultInjection { fail_before_step: fail, ..FaultInjection::default() },
                ..RestoreOptions::default()
            };
            let journal = base.path().join("journals/s.json");
            std::fs::create_dir_all(journal.parent().unwrap()).unwrap();
            let outcome = restore(&store, &items, &journal, &options);
            if fail.is_some() {
                assert!(outcome.is_err(), "step {fail:?}");
                assert_eq!(snapshot(&project), before, "a failure before step {fail:?} left the tree changed");
                continue;
            }
            outcome.unwrap();
            let shown: Vec<(String, String)> =
                snapshot(&project).into_iter().map(|(path, shown)| (path.display().to_string(), shown)).collect();
            let expected = [
                ("file_now_link", "file [119, 97, 115, 32, 97, 32, 102, 105, 108, 101] 640"),
                ("folder_now_file", "folder 750"),
                ("link_now_file", "link a"),
                ("removed", "folder 711"),
                ("removed/nested", "folder 700"),
                ("removed_fifo", "fifo 640"),
            ];
            let expected: Vec<(String, String)> =
                expected.iter().map(|(path, shown)| ((*path).to_owned(), (*shown).to_owned())).collect();
            assert_eq!(shown, expected);
            assert_eq!(std::fs::read(&outside).unwrap(), b"secret", "written through a link");
        }
    }

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
