//! The shared, content-addressed object store: `<root>/ab/cdef…` holds the zstd-compressed
//! bytes whose blake3 is `abcdef…`. One store serves every session, so identical content is kept
//! once across sessions and forks.
//!
//! Objects are written temp file → length check → fsync → rename → fsync folder (or many at once
//! with one flush, [`super::batch::Batch`]) and are never modified after (a re-put only refreshes the mtime, so a concurrent sweep's grace period
//! protects it). Reads always verify: the bytes must decompress and hash to the object's name.
//! `<root>/config` records the store version; an unknown version is refused.
//! The real CLI's raw sha256 blobs are read by [`read_raw_blob`]; they live elsewhere.

use super::digest::{ContentId, Sha256Digest};
use super::durable::{self, TEMP_SUFFIX};
use super::packs::{Located, SharedPacks};
use super::source::{read_file_state, FileState};
use crate::error::{Error, Result};
use crate::fsopen::{read_regular, Follow};
use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// The store layout version written to `<root>/config`.
pub const STORE_VERSION: u64 = 1;
/// zstd level for new objects (level 3: ~4× on source text at well over 100 MB/s).
pub const COMPRESSION_LEVEL: i32 = 3;
/// The largest object the store accepts or decompresses (a guard against corrupt frames).
pub const MAX_OBJECT_SIZE: u64 = 256 << 20;

pub(super) const OBJECT_MODE: u32 = 0o400;
const FOLDER_MODE: u32 = 0o700;

/// A handle on the object folder. Cheap to clone; its clones share what they learnt of the
/// packs (`packs.rs`), and hold the packs they read from open.
#[derive(Clone, Debug)]
pub struct ObjectStore {
    root: PathBuf,
    pub(super) packs: SharedPacks,
}

/// What [`ObjectStore::backup_file`] did with a path.
#[derive(Debug, PartialEq, Eq)]
pub enum Backup {
    /// The bytes are in the store under `id` (`new` when this call wrote the object).
    Stored { id: ContentId, size: u64, mode: u32, new: bool },
    /// Nothing was at the path.
    Missing,
    /// A symlink: never followed, not backed up.
    Symlink,
    /// A folder, FIFO, socket or device: not backed up.
    NotRegular,
    /// Over the size cap: not read, not backed up.
    TooLarge { size: u64 },
}

/// The result of a sweep.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct SweepReport {
    pub deleted_objects: u64,
    pub deleted_bytes: u64,
    pub kept_objects: u64,
    /// Unreferenced objects kept because they are younger than the grace period.
    pub kept_young: u64,
    pub removed_temporaries: u64,
}

/// Object count and bytes on disk.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct StoreUsage {
    pub objects: u64,
    pub bytes: u64,
}

thread_local! {
    /// One decompression context per thread, reused across objects (creating one per object
    /// costs more than decompressing a small source file).
    static DECOMPRESSOR: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { std::cell::RefCell::new(None) };
}

/// The fast path: a single frame that states its size (every object we write does) is
/// decompressed in one call into a buffer of exactly that size. `None` sends the caller to
/// [`decompress_streaming`], which has the final word on what is corrupt.
fn decompress_sized(compressed: &[u8]) -> Option<Vec<u8>> {
    let size = zstd::zstd_safe::get_frame_content_size(compressed).ok()??;
    if size > MAX_OBJECT_SIZE {
        return None;
    }
    DECOMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            *slot = zstd::bulk::Decompressor::new().ok();
        }
        let bytes = slot.as_mut()?.decompress(compressed, size as usize).ok()?;
        (bytes.len() as u64 == size).then_some(bytes)
    })
}

/// Decompresses any frame sequence, refusing output past [`MAX_OBJECT_SIZE`].
fn decompress_streaming(compressed: &[u8]) -> std::result::Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    let decoder = zstd::stream::read::Decoder::new(compressed).map_err(|error| error.to_string())?;
    decoder
        .take(MAX_OBJECT_SIZE + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| format!("does not decompress ({error})"))?;
    if bytes.len() as u64 > MAX_OBJECT_SIZE {
        return Err("decompresses past the size limit".into());
    }
    Ok(bytes)
}

impl ObjectStore {
    /// Opens the store at `root`, creating it (mode 0700) and its `config` when missing.
    ///
    /// Fails with [`Error::UnsupportedStore`] when `config` names another version.
    pub fn open(root: impl Into<PathBuf>) -> Result<Self> {
        let root = root.into();
        let config = root.join("config");
        match read_regular(&config, Follow::Yes) {
            Ok(bytes) => {
                let value: serde_json::Value = serde_json::from_slice(&bytes).map_err(|error| {
                    Error::UnsupportedStore { path: config.clone(), found: format!("unreadable config ({error})") }
                })?;
                let version = value.get("version").and_then(serde_json::Value::as_u64);
                if version != Some(STORE_VERSION) {
                    return Err(Error::UnsupportedStore { path: config, found: format!("version {value}") });
                }
            }
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                let created = durable::create_dirs(&root)?;
                for folder in &created {
                    set_folder_mode(folder)?;
                }
                let text = serde_json::json!({"version": STORE_VERSION, "name": "blake3", "compression": "zstd"});
                durable::write_atomic(&config, text.to_string().as_bytes(), 0o600)?;
            }
            Err(source) => return Err(Error::io(config, source)),
        }
        Ok(ObjectStore { root, packs: SharedPacks::default() })
    }

    /// The store folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where the object named `id` lives: `<root>/ab/cdef…`.
    pub fn object_path(&self, id: &ContentId) -> PathBuf {
        let hex = id.to_string();
        self.root.join(&hex[..2]).join(&hex[2..])
    }

    /// Whether object `id` exists, loose or in a pack (its content is not checked).
    pub fn contains(&self, id: &ContentId) -> bool {
        self.contains_loose(id) || self.packed(id, true).is_some()
    }

    /// Whether an object file named `id` exists (its content is not checked).
    pub fn contains_loose(&self, id: &ContentId) -> bool {
        std::fs::symlink_metadata(self.object_path(id)).is_ok_and(|metadata| metadata.is_file())
    }

    /// Where object `id` is among the packs: those seen so far, else (`look`) after listing the
    /// packs folder again when it changed.
    fn packed(&self, id: &ContentId, look: bool) -> Option<Located> {
        let mut packs = self.packs.lock().expect("no panics while held");
        if let Some(found) = packs.find(id) {
            return Some(found);
        }
        if !look {
            return None;
        }
        packs.refresh(&self.root, false);
        packs.find(id)
    }

    /// Lists the packs folder again (`force`), or when it changed since it was last listed.
    pub(super) fn refresh_packs(&self, force: bool) {
        self.packs.lock().expect("no panics while held").refresh(&self.root, force);
    }

    /// Tells this handle (and its clones) of a pack it just wrote.
    pub(super) fn add_pack(&self, path: PathBuf) -> Result<()> {
        let mut packs = self.packs.lock().expect("no panics while held");
        packs.add(path.clone()).map_err(|source| Error::io(path, source))
    }

    /// Stores `bytes`; returns its id and whether this call wrote a new object.
    pub fn put_bytes(&self, bytes: &[u8]) -> Result<(ContentId, bool)> {
        let id = ContentId::of(bytes);
        Ok((id, self.put_hashed(&id, bytes)?))
    }

    /// Whether object `id` exists; refreshes its modification time when it does, so that a
    /// collection judging old objects keeps it (what a put of the same bytes does). A packed
    /// object needs no refresh: a collection absorbs every pack before it judges any object,
    /// and the objects it makes loose are young.
    pub fn refresh(&self, id: &ContentId) -> bool {
        self.refresh_existing(&self.object_path(id)) || self.packed(id, true).is_some()
    }

    /// Stores `bytes` under `id`, which the caller computed from exactly these bytes (a restore
    /// hashed them while verifying); returns whether this call wrote a new object.
    pub fn put_hashed(&self, id: &ContentId, bytes: &[u8]) -> Result<bool> {
        let path = self.object_path(id);
        if bytes.len() as u64 > MAX_OBJECT_SIZE {
            return Err(Error::io(&path, std::io::Error::other("object over the 256 MiB limit")));
        }
        if self.refresh_existing(&path) {
            return Ok(false);
        }
        let folder = path.parent().expect("object paths have a fan-out folder");
        let created = durable::create_dirs(folder)?;
        for new_folder in &created {
            set_folder_mode(new_folder)?;
        }
        let compressed = zstd::bulk::compress(bytes, COMPRESSION_LEVEL).map_err(|source| Error::io(&path, source))?;
        durable::write_atomic(&path, &compressed, OBJECT_MODE)?;
        if !created.is_empty() {
            durable::fsync_dir(&self.root)?;
        }
        Ok(true)
    }

    /// Backs up the file at `path`: reads it without following symlinks (skipping anything over
    /// `max_size` unread) and stores its bytes.
    pub fn backup_file(&self, path: &Path, max_size: u64) -> Result<Backup> {
        match read_file_state(path, max_size)? {
            FileState::Missing => Ok(Backup::Missing),
            FileState::Symlink => Ok(Backup::Symlink),
            FileState::NotRegular => Ok(Backup::NotRegular),
            FileState::TooLarge { size, .. } => Ok(Backup::TooLarge { size }),
            FileState::Regular(file) => {
                let (id, new) = self.put_bytes(&file.bytes)?;
                Ok(Backup::Stored { id, size: file.bytes.len() as u64, mode: file.mode, new })
            }
        }
    }

    /// The original bytes of object `id`, verified: it must exist, decompress and hash to `id`.
    ///
    /// A packed object is read from its pack (a pack seen before is looked in first: no path
    /// walk); one whose frame fails is read loose, when there is a loose copy.
    pub fn read(&self, id: &ContentId) -> Result<Vec<u8>> {
        let path = self.object_path(id);
        let from_pack =
            self.packed(id, false).map(|found| found.frame().and_then(|frame| decode(id, frame, found.path())));
        if let Some(Ok(bytes)) = from_pack {
            return Ok(bytes);
        }
        let compressed = match read_regular(&path, Follow::Yes) {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                if let Some(failed) = from_pack {
                    return failed;
                }
                let found = self.packed(id, true).or_else(|| {
                    self.refresh_packs(true); // another process's pack, in the folder's same mtime tick
                    self.packed(id, false)
                });
                return match found {
                    Some(found) => decode(id, found.frame()?, found.path()),
                    None => Err(Error::ObjectMissing { id: id.to_string(), path }),
                };
            }
            Err(source) => return Err(Error::io(path, source)),
        };
        decode(id, compressed, &path)
    }

    /// Checks object `id` as [`read`](Self::read) does, discarding the bytes.
    pub fn verify(&self, id: &ContentId) -> Result<()> {
        self.read(id).map(drop)
    }

    /// Deletes every object not in `referenced` whose mtime is older than `grace`, and stale
    /// temp files. Referenced objects are never touched.
    pub fn sweep(&self, referenced: &HashSet<ContentId>, grace: Duration) -> Result<SweepReport> {
        let mut report = SweepReport::default();
        let cutoff = SystemTime::now().checked_sub(grace).unwrap_or(SystemTime::UNIX_EPOCH);
        for (path, id) in self.entries()? {
            let metadata = match std::fs::symlink_metadata(&path) {
                Ok(metadata) => metadata,
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue,
                Err(source) => return Err(Error::io(path, source)),
            };
            let old = metadata.modified().map(|modified| modified < cutoff).unwrap_or(false);
            match id {
                Some(id) if referenced.contains(&id) => report.kept_objects += 1,
                Some(_) if !old => {
                    report.kept_objects += 1;
                    report.kept_young += 1;
                }
                Some(_) => {
                    remove_if_present(&path)?;
                    report.deleted_objects += 1;
                    report.deleted_bytes += metadata.len();
                }
                None if old => {
                    remove_if_present(&path)?;
                    report.removed_temporaries += 1;
                }
                None => {}
            }
        }
        Ok(report)
    }

    /// Counts objects and their bytes on disk.
    pub fn usage(&self) -> Result<StoreUsage> {
        let mut usage = StoreUsage::default();
        let mut loose = HashSet::new();
        for (path, id) in self.entries()? {
            if let Some(id) = id {
                if let Ok(metadata) = std::fs::symlink_metadata(&path) {
                    usage.objects += 1;
                    usage.bytes += metadata.len();
                    loose.insert(id);
                }
            }
        }
        // A packed object counts once, by its frame, until a collection makes it loose.
        for (id, length) in super::packs::packed_sizes(self) {
            if !loose.contains(&id) {
                usage.objects += 1;
                usage.bytes += length;
            }
        }
        Ok(usage)
    }

    /// Every file in the fan-out folders: `(path, Some(id))` for objects, `(path, None)` for
    /// temp files. Anything else is left alone and not listed.
    fn entries(&self) -> Result<Vec<(PathBuf, Option<ContentId>)>> {
        let mut entries = Vec::new();
        let folders = match std::fs::read_dir(&self.root) {
            Ok(folders) => folders,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(entries),
            Err(source) => return Err(Error::io(&self.root, source)),
        };
        for folder in folders {
            let folder = folder.map_err(|source| Error::io(&self.root, source))?;
            let prefix = folder.file_name();
            let Some(prefix) = prefix.to_str().filter(|name| name.len() == 2 && is_hex(name)) else { continue };
            let prefix = prefix.to_owned();
            let files = match std::fs::read_dir(folder.path()) {
                Ok(files) => files,
                Err(source) => return Err(Error::io(folder.path(), source)),
            };
            for file in files {
                let file = file.map_err(|source| Error::io(folder.path(), source))?;
                let name = file.file_name();
                let Some(name) = name.to_str() else { continue };
                if name.ends_with(TEMP_SUFFIX) {
                    entries.push((file.path(), None));
                } else if name.len() == 62 && is_hex(name) {
                    if let Ok(id) = ContentId::parse(&format!("{prefix}{name}")) {
                        entries.push((file.path(), Some(id)));
                    }
                }
            }
        }
        Ok(entries)
    }

    /// When the object already exists, bumps its mtime (so a concurrent sweep keeps it) and
    /// returns true. Its bytes are never rewritten. An object whose mtime is less than
    /// [`FRESH_FOR`] old is left as it is: every collection keeps it for most of an hour more
    /// anyway (one `lstat`, where a bump costs an open, a timestamp write and a dirty inode the
    /// next sync writes out; a rewind refreshes each object it keeps).
    fn refresh_existing(&self, path: &Path) -> bool {
        match std::fs::symlink_metadata(path) {
            Ok(metadata) if !metadata.is_file() => return false,
            Ok(metadata) if metadata.modified().is_ok_and(|modified| is_fresh(modified, SystemTime::now())) => {
                return true
            }
            Ok(_) => {}
            Err(_) => return false,
        }
        match crate::fsopen::open_regular_read(path, Follow::No) {
            Ok(file) => {
                let _ = file.set_modified(SystemTime::now());
                true
            }
            Err(_) => false,
        }
    }
}

/// How recent an object's mtime must be for a re-put or refresh to leave it as it is. A
/// collection keeps every object younger than its start less the grace period (one hour,
/// `checkpoints/references.py`), so one touched less than this long ago stays safe from any
/// collection for at least 50 minutes: ample for the record that names it to land.
pub const FRESH_FOR: Duration = Duration::from_secs(10 * 60);

/// Whether an mtime of `modified` is fresh at `now` (one in the future, after a clock step, is not).
fn is_fresh(modified: SystemTime, now: SystemTime) -> bool {
    now.duration_since(modified).is_ok_and(|age| age < FRESH_FOR)
}

/// The original bytes of object `id` from its zstd frame `compressed` (read from `path`),
/// checked: it must decompress and hash to `id`. A stored frame (a redo point's, `stored.rs`)
/// becomes its content in its own buffer, not decoded.
fn decode(id: &ContentId, frame: Vec<u8>, path: &Path) -> Result<Vec<u8>> {
    let corrupt = |reason: String| Error::ObjectCorrupt { id: id.to_string(), path: path.to_owned(), reason };
    let bytes = match super::stored::into_content(frame, MAX_OBJECT_SIZE) {
        Ok(bytes) => bytes,
        Err(compressed) => match decompress_sized(&compressed) {
            Some(bytes) => bytes,
            None => decompress_streaming(&compressed).map_err(corrupt)?,
        },
    };
    let actual = ContentId::of(&bytes);
    if actual != *id {
        return Err(corrupt(format!("hashes to {}", actual.short())));
    }
    Ok(bytes)
}

/// Reads a real-CLI raw blob `<folder>/<sha256>` and checks that its bytes hash to its name.
pub fn read_raw_blob(folder: &Path, digest: &Sha256Digest) -> Result<Vec<u8>> {
    let (path, bytes) = read_blob_file(folder, digest)?;
    check_sha256(path, digest, bytes)
}

/// Reads a raw blob as [`read_raw_blob`] does, for a record that also names its bytes by blake3
/// (`named`, a compatible backup's twin); returns their blake3 and the bytes. The blake3 is
/// computed anyway (a restore writes it down): when it is the one named, the bytes are the ones
/// the record means, and the sha256 (a second pass over them) is not computed; otherwise the
/// blob must still hash to its name, as [`read_raw_blob`] checks.
pub fn read_raw_blob_named(
    folder: &Path,
    digest: &Sha256Digest,
    named: Option<&ContentId>,
) -> Result<(ContentId, Vec<u8>)> {
    let (path, bytes) = read_blob_file(folder, digest)?;
    let content = ContentId::of(&bytes);
    if named == Some(&content) {
        return Ok((content, bytes));
    }
    Ok((content, check_sha256(path, digest, bytes)?))
}

fn read_blob_file(folder: &Path, digest: &Sha256Digest) -> Result<(PathBuf, Vec<u8>)> {
    let path = folder.join(digest.to_string());
    match read_regular(&path, Follow::Yes) {
        Ok(bytes) => Ok((path, bytes)),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            Err(Error::ObjectMissing { id: digest.to_string(), path })
        }
        Err(source) => Err(Error::io(path, source)),
    }
}

fn check_sha256(path: PathBuf, digest: &Sha256Digest, bytes: Vec<u8>) -> Result<Vec<u8>> {
    let actual = Sha256Digest::of(&bytes);
    if actual != *digest {
        return Err(Error::ObjectCorrupt {
            id: digest.to_string(),
            path,
            reason: format!("hashes to {}", actual.short()),
        });
    }
    Ok(bytes)
}

fn is_hex(text: &str) -> bool {
    text.bytes().all(|byte| byte.is_ascii_hexdigit())
}

pub(super) fn set_folder_mode(folder: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(folder, std::fs::Permissions::from_mode(FOLDER_MODE))
        .map_err(|source| Error::io(folder, source))
}

fn remove_if_present(path: &Path) -> Result<()> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(Error::io(path, source)),
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// A new store in a temp dir (kept alive by the returned guard).
    pub(in crate::store) fn store() -> (tempfile::TempDir, ObjectStore) {
        let folder = tempfile::tempdir().unwrap();
        let store = ObjectStore::open(folder.path().join("objects")).unwrap();
        (folder, store)
    }

    #[test]
    fn a_refresh_bumps_an_old_mtime_and_leaves_a_fresh_one() {
        let (_folder, store) = store();
        let (id, _) = store.put_bytes(b"kept for a redo").unwrap();
        let path = store.object_path(&id);
        let old = SystemTime::now() - FRESH_FOR - Duration::from_secs(60);
        std::fs::File::open(&path).unwrap().set_modified(old).unwrap();
        assert!(store.refresh(&id));
        let bumped = std::fs::metadata(&path).unwrap().modified().unwrap();
        assert!(is_fresh(bumped, SystemTime::now()), "an old object is young again");
        let recent = SystemTime::now() - Duration::from_secs(5);
        std::fs::File::open(&path).unwrap().set_modified(recent).unwrap();
        assert!(store.refresh(&id));
        assert_eq!(std::fs::metadata(&path).unwrap().modified().unwrap(), recent, "a fresh one is left as it is");
        let future = SystemTime::now() + Duration::from_secs(3600);
        assert!(!is_fresh(future, SystemTime::now()), "an mtime in the future is bumped back to now");
        assert!(!store.refresh(&ContentId::of(b"never stored")));
    }

    #[test]
    fn put_then_read_gives_the_same_bytes_and_fans_out() {
        let (_folder, store) = store();
        let bytes = b"hello objects\n".repeat(100);
        let (id, new) = store.put_bytes(&bytes).unwrap();
        assert!(new);
        let path = store.object_path(&id);
        assert_eq!(path.parent().unwrap().file_name().unwrap().to_str().unwrap(), &id.to_string()[..2]);
        assert!(std::fs::metadata(&path).unwrap().len() < bytes.len() as u64, "compressed");
        assert_eq!(store.read(&id).unwrap(), bytes);
        let (again, new_again) = store.put_bytes(&bytes).unwrap();
        assert_eq!(again, id);
        assert!(!new_again, "identical content is stored once");
    }

    #[test]
    fn read_reports_missing_and_corrupt_objects() {
        let (_folder, store) = store();
        let (id, _) = store.put_bytes(b"payload").unwrap();
        let path = store.object_path(&id);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::write(&path, b"not zstd").unwrap();
        assert!(matches!(store.read(&id), Err(Error::ObjectCorrupt { .. })));
        std::fs::write(&path, zstd::bulk::compress(b"other payload", 3).unwrap()).unwrap();
        let error = store.read(&id).unwrap_err();
        assert!(matches!(error, Error::ObjectCorrupt { .. }), "{error}");
        std::fs::remove_file(&path).unwrap();
        assert!(matches!(store.read(&id), Err(Error::ObjectMissing { .. })));
    }

    #[test]
    fn backup_file_skips_symlinks_and_large_files() {
        let (folder, store) = store();
        let file = folder.path().join("a.txt");
        std::fs::write(&file, b"abc").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
        let Backup::Stored { id, size, mode, .. } = store.backup_file(&file, 10).unwrap() else { panic!() };
        assert_eq!((size, mode), (3, 0o640));
        assert_eq!(store.read(&id).unwrap(), b"abc");
        let link = folder.path().join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert_eq!(store.backup_file(&link, 10).unwrap(), Backup::Symlink);
        assert_eq!(store.backup_file(&file, 2).unwrap(), Backup::TooLarge { size: 3 });
        assert_eq!(store.backup_file(&folder.path().join("none"), 2).unwrap(), Backup::Missing);
    }

    #[test]
    fn sweep_keeps_referenced_and_young_objects() {
        let (_folder, store) = store();
        let (kept, _) = store.put_bytes(b"kept").unwrap();
        let (dropped, _) = store.put_bytes(b"dropped").unwrap();
        let young = store.sweep(&HashSet::from([kept]), Duration::from_secs(3600)).unwrap();
        assert_eq!(young.deleted_objects, 0);
        assert_eq!(young.kept_young, 1);
        let report = store.sweep(&HashSet::from([kept]), Duration::ZERO).unwrap();
        assert_eq!(report.deleted_objects, 1);
        assert!(store.contains(&kept));
        assert!(!store.contains(&dropped));
        assert_eq!(store.usage().unwrap().objects, 1);
    }

    #[test]
    fn open_refuses_an_unknown_store_version() {
        let folder = tempfile::tempdir().unwrap();
        let root = folder.path().join("objects");
        ObjectStore::open(&root).unwrap();
        std::fs::write(root.join("config"), br#"{"version":99}"#).unwrap();
        assert!(matches!(ObjectStore::open(&root), Err(Error::UnsupportedStore { .. })));
    }

    #[test]
    fn raw_blobs_are_checked_against_their_sha256_name() {
        let folder = tempfile::tempdir().unwrap();
        let digest = Sha256Digest::of(b"base\n");
        std::fs::write(folder.path().join(digest.to_string()), b"base\n").unwrap();
        assert_eq!(read_raw_blob(folder.path(), &digest).unwrap(), b"base\n");
        std::fs::write(folder.path().join(digest.to_string()), b"tampered\n").unwrap();
        assert!(matches!(read_raw_blob(folder.path(), &digest), Err(Error::ObjectCorrupt { .. })));
        let absent = Sha256Digest::of(b"absent");
        assert!(matches!(read_raw_blob(folder.path(), &absent), Err(Error::ObjectMissing { .. })));
    }

    #[test]
    fn a_raw_blob_named_by_blake3_too_is_checked_by_either_name() {
        let folder = tempfile::tempdir().unwrap();
        let digest = Sha256Digest::of(b"base\n");
        let path = folder.path().join(digest.to_string());
        std::fs::write(&path, b"base\n").unwrap();
        let right = ContentId::of(b"base\n");
        let read = |named: Option<&ContentId>| read_raw_blob_named(folder.path(), &digest, named);
        assert_eq!(read(Some(&right)).unwrap(), (right, b"base\n".to_vec()));
        // A twin that names other bytes proves nothing: the blob's own name still decides.
        let wrong = ContentId::of(b"other");
        assert_eq!(read(Some(&wrong)).unwrap(), (right, b"base\n".to_vec()));
        assert_eq!(read(None).unwrap(), (right, b"base\n".to_vec()));
        std::fs::write(&path, b"bad\n").unwrap();
        for named in [Some(&right), Some(&wrong), None] {
            assert!(matches!(read(named), Err(Error::ObjectCorrupt { .. })), "{named:?}");
        }
        // Bytes that are the ones the record names by blake3 are those bytes, whatever the file is called.
        let renamed = ContentId::of(b"bad\n");
        assert_eq!(read(Some(&renamed)).unwrap(), (renamed, b"bad\n".to_vec()));
    }
}
