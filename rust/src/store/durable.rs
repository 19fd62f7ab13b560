//! Durable file-system primitives for the store: unique temp names, exclusive no-follow
//! creation, directory fsync and atomic replacement (temp → write → length check → fsync →
//! rename → fsync folder, the restic `Save` recipe).
//!
//! Nothing here knows about objects or checkpoints; every error names its path.

use crate::error::{Error, Result};
use crate::fsopen::{self, Follow};
use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Suffix of every temporary file the store creates; sweeps and recovery recognise it.
pub const TEMP_SUFFIX: &str = ".cctmp";

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A name unique to this process and call: `.<stem>.<pid>.<nanos>.<counter><suffix>`.
pub fn unique_name(stem: &std::ffi::OsStr, suffix: &str) -> OsString {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.subsec_nanos())
        .unwrap_or(0);
    let counter = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut name = OsString::from(".");
    // Keep names well under NAME_MAX even for long stems.
    let stem_bytes = stem.as_bytes();
    let cut = &stem_bytes[..stem_bytes.len().min(120)];
    name.push(std::ffi::OsStr::from_bytes(cut));
    name.push(format!(".{}.{nanos:x}.{counter}{suffix}", std::process::id()));
    name
}

/// A temp path beside `target`, in the same folder (so a rename is atomic).
pub fn temp_path_beside(target: &Path) -> PathBuf {
    let stem = target.file_name().unwrap_or_else(|| std::ffi::OsStr::new("file"));
    target.with_file_name(unique_name(stem, TEMP_SUFFIX))
}

/// Creates `path` exclusively (`O_CREAT|O_EXCL|O_NOFOLLOW`) with `mode`, for writing.
pub fn create_exclusive(path: &Path, mode: u32) -> Result<File> {
    fsopen::open_regular(path, OpenOptions::new().write(true).create_new(true).mode(mode), Follow::No)
        .map_err(|source| Error::io(path, source))
}

/// Opens `path` for reading without following a final symlink (`O_NOFOLLOW`).
/// A folder, FIFO, socket or device fails with an error [`fsopen::is_not_regular`] knows.
pub fn open_no_follow(path: &Path) -> std::io::Result<File> {
    fsopen::open_regular_read(path, Follow::No)
}

/// Flushes a folder's entries (a create or rename inside it) to disk.
pub fn fsync_dir(path: &Path) -> Result<()> {
    let folder = fsopen::open_folder(path).map_err(|source| Error::io(path, source))?;
    folder.sync_all().map_err(|source| Error::io(path, source))
}

/// Creates `path` and its missing parents; returns the folders it created, outermost first.
pub fn create_dirs(path: &Path) -> Result<Vec<PathBuf>> {
    let mut missing = Vec::new();
    let mut cursor = Some(path);
    while let Some(folder) = cursor {
        match std::fs::symlink_metadata(folder) {
            Ok(_) => break,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                missing.push(folder.to_path_buf());
                cursor = folder.parent();
            }
            Err(source) => return Err(Error::io(folder, source)),
        }
    }
    missing.reverse();
    let mut created = Vec::new();
    for folder in missing {
        match std::fs::create_dir(&folder) {
            Ok(()) => created.push(folder),
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(source) => return Err(Error::io(folder, source)),
        }
    }
    Ok(created)
}

/// Writes `bytes` to a new temp file beside `target` with permission bits `mode` and checks the
/// length; returns the temp's path and its open file. The temp is removed on failure.
fn write_temp(target: &Path, bytes: &[u8], mode: u32) -> Result<(PathBuf, File)> {
    fsopen::check_replaceable(target).map_err(|source| Error::io(target, source))?;
    let temporary = temp_path_beside(target);
    let result = (|| {
        let mut file = create_exclusive(&temporary, 0o600)?;
        file.write_all(bytes).map_err(|source| Error::io(&temporary, source))?;
        let written = file.metadata().map_err(|source| Error::io(&temporary, source))?.len();
        if written != bytes.len() as u64 {
            return Err(Error::io(
                &temporary,
                std::io::Error::other(format!("wrote {written} of {} bytes", bytes.len())),
            ));
        }
        file.set_permissions(std::fs::Permissions::from_mode(mode)).map_err(|source| Error::io(&temporary, source))?;
        Ok(file)
    })();
    match result {
        Ok(file) => Ok((temporary, file)),
        Err(error) => {
            let _ = std::fs::remove_file(&temporary);
            Err(error)
        }
    }
}

/// Writes `bytes` to a new temp file beside `target`, checks the length, sets `mode`, fsyncs,
/// renames it over `target` and fsyncs the folder. The temp file is removed on any failure.
pub fn write_atomic(target: &Path, bytes: &[u8], mode: u32) -> Result<()> {
    write_atomic_all(&[(target, bytes, mode)])
}

/// [`write_atomic`] of several files, for a caller that needs every one durable and none
/// before the ones listed ahead of it: each is written to its temp, the temps are flushed at
/// the same time (one thread each: the disk writes them together instead of one flush after
/// another), then each in turn is renamed into place and its folder flushed. A crash leaves
/// each target old or new, whole either way, and a file durable only when every earlier one
/// is. On failure every temp still there is removed (a target already renamed stays).
pub fn write_atomic_all(files: &[(&Path, &[u8], u32)]) -> Result<()> {
    let mut temps: Vec<(PathBuf, File)> = Vec::with_capacity(files.len());
    let result = (|| {
        for &(target, bytes, mode) in files {
            temps.push(write_temp(target, bytes, mode)?);
        }
        std::thread::scope(|scope| {
            let others: Vec<_> = temps
                .iter()
                .skip(1)
                .map(|(temporary, file)| {
                    scope.spawn(move || file.sync_all().map_err(|source| Error::io(temporary, source)))
                })
                .collect();
            let first = temps
                .first()
                .map_or(Ok(()), |(temporary, file)| file.sync_all().map_err(|source| Error::io(temporary, source)));
            others.into_iter().map(|handle| handle.join().expect("fsync does not panic")).fold(first, Result::and)
        })?;
        for ((temporary, _), &(target, ..)) in temps.iter().zip(files) {
            std::fs::rename(temporary, target).map_err(|source| Error::io(target, source))?;
            fsync_dir(target.parent().unwrap_or(Path::new(".")))?;
        }
        Ok(())
    })();
    if result.is_err() {
        for (temporary, _) in &temps {
            let _ = std::fs::remove_file(temporary);
        }
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_atomic_replaces_and_leaves_no_temp() {
        let folder = tempfile::tempdir().unwrap();
        let target = folder.path().join("file");
        write_atomic(&target, b"one", 0o600).unwrap();
        write_atomic(&target, b"two", 0o640).unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"two");
        assert_eq!(std::fs::metadata(&target).unwrap().permissions().mode() & 0o777, 0o640);
        assert_eq!(std::fs::read_dir(folder.path()).unwrap().count(), 1);
    }

    #[test]
    fn write_atomic_all_writes_every_file_or_leaves_no_temp() {
        let folder = tempfile::tempdir().unwrap();
        let (first, second) = (folder.path().join("first"), folder.path().join("second"));
        std::fs::write(&second, b"old").unwrap();
        write_atomic_all(&[(&first, b"one", 0o600), (&second, b"two", 0o640)]).unwrap();
        assert_eq!(std::fs::read(&first).unwrap(), b"one");
        assert_eq!(std::fs::read(&second).unwrap(), b"two");
        assert_eq!(std::fs::metadata(&second).unwrap().permissions().mode() & 0o777, 0o640);
        assert_eq!(std::fs::read_dir(folder.path()).unwrap().count(), 2);
        // A folder in the way of the second: nothing is renamed, no temp is left.
        let blocked = folder.path().join("blocked");
        std::fs::create_dir(&blocked).unwrap();
        assert!(write_atomic_all(&[(&first, b"three", 0o600), (&blocked, b"x", 0o600)]).is_err());
        assert_eq!(std::fs::read(&first).unwrap(), b"one");
        assert_eq!(std::fs::read_dir(folder.path()).unwrap().count(), 3);
    }

    #[test]
    fn create_exclusive_refuses_existing_and_symlinks() {
        let folder = tempfile::tempdir().unwrap();
        let existing = folder.path().join("existing");
        std::fs::write(&existing, b"x").unwrap();
        assert!(create_exclusive(&existing, 0o600).is_err());
        let link = folder.path().join("link");
        std::os::unix::fs::symlink(folder.path().join("nowhere"), &link).unwrap();
        assert!(create_exclusive(&link, 0o600).is_err());
        assert!(!folder.path().join("nowhere").exists());
    }

    #[test]
    fn open_no_follow_refuses_a_symlink() {
        let folder = tempfile::tempdir().unwrap();
        let real = folder.path().join("real");
        std::fs::write(&real, b"x").unwrap();
        let link = folder.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert!(open_no_follow(&real).is_ok());
        assert!(open_no_follow(&link).is_err());
    }

    #[test]
    fn create_dirs_reports_only_new_folders() {
        let folder = tempfile::tempdir().unwrap();
        let deep = folder.path().join("a/b/c");
        let created = create_dirs(&deep).unwrap();
        assert_eq!(created, vec![folder.path().join("a"), folder.path().join("a/b"), deep.clone()]);
        assert!(create_dirs(&deep).unwrap().is_empty());
    }

    #[test]
    fn unique_names_differ() {
        let first = unique_name(std::ffi::OsStr::new("x"), TEMP_SUFFIX);
        let second = unique_name(std::ffi::OsStr::new("x"), TEMP_SUFFIX);
        assert_ne!(first, second);
        assert!(first.to_string_lossy().ends_with(TEMP_SUFFIX));
    }
}
