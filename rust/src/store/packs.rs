//! Pack files: the new objects of one redo point in one file (`restore/keep.rs`).
//!
//! A rewind that keeps a thousand replaced files for its redo created, flushed and named a
//! thousand object files, most of its time (`benches/compare_rewind.py --fresh`). A pack is one
//! file, written whole and made durable (temp, fsync, rename, folder fsync) before the journal
//! that names its objects, and never modified:
//!
//! ```text
//! <store>/packs/<name>.pack
//!   "ccpack1\n"                        8 bytes
//!   count                              u32 little-endian
//!   count x (id, offset, length)       32 raw bytes, u64 LE, u32 LE; ids ascending
//!   frames                             one zstd frame per object (stored or compressed), at its offset
//! ```
//!
//! A redo point's frames are stored frames (`stored.rs`: raw blocks, not compressed), which its
//! redo reads back without decoding. A packed object is read as a loose one is: decompressed and
//! hashed against its id ([`ObjectStore::read`]). Packs are never swept: a collection first
//! absorbs every pack ([`absorb`]: its objects become loose objects by one batched flush, a stored
//! frame compressed at the store's level on the way, then the pack is deleted),
//! so the sweep, and everything that reads objects by path, sees loose objects only. A kill during
//! an absorb leaves the pack and some of its objects loose as well: both copies are whole, and the
//! next absorb finishes.

use super::batch::Batch;
use super::digest::ContentId;
use super::durable::{self, TEMP_SUFFIX};
use super::objects::{set_folder_mode, ObjectStore, COMPRESSION_LEVEL, FRESH_FOR, MAX_OBJECT_SIZE, OBJECT_MODE};
use super::stored;
use crate::error::{Error, Result};
use rayon::prelude::*;
use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::fs::File;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

/// The folder of the packs, inside the store.
pub const PACKS_FOLDER: &str = "packs";
/// The suffix of a pack's name.
pub const PACK_SUFFIX: &str = ".pack";
const MAGIC: &[u8; 8] = b"ccpack1\n";
const HEADER: usize = 12;
const ENTRY: usize = 32 + 8 + 4;
/// Staged frames are written out as a pack once they pass this many bytes (a redo point of
/// very many large files makes several packs rather than holding them all in memory).
const PACK_LIMIT: usize = 64 << 20;

/// The bytes of a pack holding `frames` (compressed objects), sorted by id.
pub fn encode(frames: &mut [(ContentId, Vec<u8>)]) -> Vec<u8> {
    frames.sort_unstable_by_key(|frame| frame.0);
    let start = HEADER + ENTRY * frames.len();
    let total = start + frames.iter().map(|(_, frame)| frame.len()).sum::<usize>();
    let mut bytes = Vec::with_capacity(total);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&u32::try_from(frames.len()).expect("a pack holds few objects").to_le_bytes());
    let mut offset = start as u64;
    for (id, frame) in frames.iter() {
        bytes.extend_from_slice(id.as_bytes());
        bytes.extend_from_slice(&offset.to_le_bytes());
        bytes.extend_from_slice(&u32::try_from(frame.len()).expect("frames stay under 4 GiB").to_le_bytes());
        offset += frame.len() as u64;
    }
    for (_, frame) in frames.iter() {
        bytes.extend_from_slice(frame);
    }
    bytes
}

/// Where each object of a pack is: `(id, offset, length)`. Fails on a pack that is not one or
/// whose entries point outside its `size` bytes.
fn read_index(file: &File, size: u64) -> std::io::Result<Vec<(ContentId, u64, u32)>> {
    let invalid = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, format!("not a pack: {what}"));
    let mut header = [0u8; HEADER];
    file.read_exact_at(&mut header, 0).map_err(|_| invalid("no header"))?;
    if &header[..8] != MAGIC {
        return Err(invalid("bad magic"));
    }
    let count = u32::from_le_bytes(header[8..12].try_into().expect("4 bytes")) as usize;
    let start = HEADER as u64 + (ENTRY * count) as u64;
    if start > size {
        return Err(invalid("index past the end"));
    }
    let mut table = vec![0u8; ENTRY * count];
    file.read_exact_at(&mut table, HEADER as u64)?;
    table
        .chunks_exact(ENTRY)
        .map(|entry| {
            let id = ContentId::from_bytes(entry[..32].try_into().expect("32 bytes"));
            let offset = u64::from_le_bytes(entry[32..40].try_into().expect("8 bytes"));
            let length = u32::from_le_bytes(entry[40..44].try_into().expect("4 bytes"));
            if offset < start || offset.checked_add(u64::from(length)).is_none_or(|end| end > size) {
                return Err(invalid("an entry points outside the pack"));
            }
            Ok((id, offset, length))
        })
        .collect()
}

/// One pack, open for reading.
#[derive(Debug)]
struct PackFile {
    path: PathBuf,
    file: File,
}

/// Where a packed object is.
#[derive(Clone, Debug)]
pub(super) struct Located {
    pack: Arc<PackFile>,
    offset: u64,
    length: u32,
}

impl Located {
    /// The compressed frame (read into a buffer that is not zeroed first: a redo's verification
    /// reads a thousand frames).
    pub(super) fn frame(&self) -> Result<Vec<u8>> {
        let length = self.length as usize;
        let mut frame = Vec::with_capacity(length);
        while frame.len() < length {
            let at = self.offset + frame.len() as u64;
            let spare = rustix::buffer::spare_capacity(&mut frame);
            match rustix::io::pread(&self.pack.file, spare, at) {
                Ok(0) => {
                    let short = std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "the pack ends inside a frame");
                    return Err(Error::io(&self.pack.path, short));
                }
                Ok(_) | Err(rustix::io::Errno::INTR) => {}
                Err(errno) => return Err(Error::io(&self.pack.path, errno.into())),
            }
        }
        Ok(frame)
    }

    /// The pack's path, for messages.
    pub(super) fn path(&self) -> &Path {
        &self.pack.path
    }
}

/// The packs a store handle has seen, and where each of their objects is. Packs are never
/// modified, so what was read of one stays true; a pack deleted since (absorbed: its objects are
/// loose by then) is still read through its open file until the next listing lets it go.
#[derive(Debug, Default)]
pub(super) struct PackCache {
    packs: HashSet<OsString>,
    by_id: HashMap<ContentId, Located>,
    /// The packs folder's `(inode, mtime ns, ctime ns)` when it was last listed.
    listed: Option<(u64, i64, i64)>,
}

/// A store handle's [`PackCache`], shared by its clones.
pub(super) type SharedPacks = Arc<Mutex<PackCache>>;

impl PackCache {
    /// Where object `id` is, among the packs seen so far.
    pub(super) fn find(&self, id: &ContentId) -> Option<Located> {
        self.by_id.get(id).cloned()
    }

    /// Lists the packs folder again when it changed since the last listing (`force`: always),
    /// reading the index of each pack not seen before. A pack that cannot be read is left out.
    pub(super) fn refresh(&mut self, root: &Path, force: bool) {
        let folder = root.join(PACKS_FOLDER);
        let Ok(metadata) = std::fs::symlink_metadata(&folder) else { return };
        let key = (
            metadata.ino(),
            metadata.mtime() * 1_000_000_000 + metadata.mtime_nsec(),
            metadata.ctime() * 1_000_000_000 + metadata.ctime_nsec(),
        );
        if !force && self.listed == Some(key) {
            return;
        }
        let Ok(entries) = std::fs::read_dir(&folder) else { return };
        self.listed = Some(key);
        let names: HashSet<OsString> = entries.flatten().map(|entry| entry.file_name()).collect();
        if self.packs.iter().any(|name| !names.contains(name)) {
            self.packs.retain(|name| names.contains(name));
            self.by_id.retain(|_, located| located.pack.path.file_name().is_some_and(|name| names.contains(name)));
        }
        for name in names {
            if !self.packs.contains(&name) && is_pack_name(&name) {
                let _ = self.add(folder.join(name));
            }
        }
    }

    /// Reads the index of the pack at `path` and adds its objects.
    pub(super) fn add(&mut self, path: PathBuf) -> std::io::Result<()> {
        let file = durable::open_no_follow(&path)?;
        let size = file.metadata()?.len();
        let index = read_index(&file, size)?;
        let name = path.file_name().map(ToOwned::to_owned).unwrap_or_default();
        let pack = Arc::new(PackFile { path, file });
        for (id, offset, length) in index {
            self.by_id.entry(id).or_insert(Located { pack: pack.clone(), offset, length });
        }
        self.packs.insert(name);
        Ok(())
    }
}

fn is_pack_name(name: &std::ffi::OsStr) -> bool {
    name.to_str().is_some_and(|name| name.ends_with(PACK_SUFFIX) && !name.starts_with('.'))
}

/// New objects staged for one pack: a redo point's (`restore/keep.rs`).
pub struct PackWriter<'a> {
    store: &'a ObjectStore,
    level: Option<i32>,
    staged: Mutex<Staged>,
}

#[derive(Default)]
struct Staged {
    frames: Vec<(ContentId, Vec<u8>)>,
    bytes: usize,
    ids: HashSet<ContentId>,
}

impl<'a> PackWriter<'a> {
    /// A writer compressing new objects at zstd `level`, or (`None`) storing them as stored
    /// frames (`stored.rs`: read back without decoding, at their full size until absorbed).
    pub fn new(store: &'a ObjectStore, level: Option<i32>) -> Self {
        store.refresh_packs(false);
        PackWriter { store, level, staged: Mutex::default() }
    }

    /// Whether the store holds object `id` (then refreshed, as a put does) or this writer staged it.
    pub fn refreshed(&self, id: &ContentId) -> bool {
        self.store.refresh(id) || self.staged.lock().expect("no panics while held").ids.contains(id)
    }

    /// Stages `bytes` (whose blake3 the caller computed: `id`) as a new object, unless the store
    /// holds it already or this writer staged it; returns whether this call staged it. Safe to
    /// call from several threads (the compression runs outside the lock).
    pub fn add(&self, id: &ContentId, bytes: &[u8]) -> Result<bool> {
        if bytes.len() as u64 > MAX_OBJECT_SIZE {
            let path = self.store.object_path(id);
            return Err(Error::io(&path, std::io::Error::other("object over the 256 MiB limit")));
        }
        if self.store.refresh(id) || !self.staged.lock().expect("no panics while held").ids.insert(*id) {
            return Ok(false);
        }
        let frame = match self.level {
            Some(level) => zstd::bulk::compress(bytes, level).map_err(|source| Error::io(self.store.root(), source))?,
            None => stored::frame(bytes),
        };
        let full = {
            let mut staged = self.staged.lock().expect("no panics while held");
            staged.bytes += frame.len();
            staged.frames.push((*id, frame));
            (staged.bytes > PACK_LIMIT).then(|| std::mem::take(&mut *staged))
        };
        if let Some(mut full) = full {
            self.write(&mut full.frames, Duration::ZERO)?;
        }
        Ok(true)
    }

    /// Writes what is staged as one pack, durably (see the module docs); `pause` is a crash-test
    /// hook slept before the write and after it.
    pub fn finish(self, pause: Duration) -> Result<()> {
        let mut frames = std::mem::take(&mut self.staged.lock().expect("no panics while held").frames);
        self.write(&mut frames, pause)
    }

    fn write(&self, frames: &mut [(ContentId, Vec<u8>)], pause: Duration) -> Result<()> {
        if frames.is_empty() {
            return Ok(());
        }
        let bytes = encode(frames);
        sleep(pause);
        let folder = self.store.root().join(PACKS_FOLDER);
        let created = durable::create_dirs(&folder)?;
        for new_folder in &created {
            set_folder_mode(new_folder)?;
        }
        if !created.is_empty() {
            durable::fsync_dir(self.store.root())?;
        }
        let name = durable::unique_name(std::ffi::OsStr::new("redo"), PACK_SUFFIX);
        let path = folder.join(&name.to_string_lossy()[1..]); // without the leading dot of a temp
        durable::write_atomic(&path, &bytes, OBJECT_MODE)?;
        sleep(pause);
        self.store.add_pack(path)
    }
}

fn sleep(pause: Duration) {
    if !pause.is_zero() {
        std::thread::sleep(pause);
    }
}

/// What [`absorb`] did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct AbsorbReport {
    /// Packs whose objects are loose now, and which were deleted.
    pub packs: u64,
    /// Objects written loose (the others were loose already).
    pub objects: u64,
    /// Temp files of killed pack writes removed.
    pub removed_temporaries: u64,
}

/// Makes the objects of every pack loose objects (one batched flush for all), then deletes the
/// packs, and removes the temps of pack writes older than [`FRESH_FOR`]; `pause` is a crash-test
/// hook slept after the flush and after each deletion. The caller holds `gc.lock` shared, as for
/// any put. A pack that is not one (a corrupt index) is left where it is.
pub fn absorb(store: &ObjectStore, pause: Duration) -> Result<AbsorbReport> {
    let folder = store.root().join(PACKS_FOLDER);
    let mut report = AbsorbReport::default();
    let entries = match std::fs::read_dir(&folder) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(report),
        Err(source) => return Err(Error::io(&folder, source)),
    };
    let cutoff = SystemTime::now().checked_sub(FRESH_FOR).unwrap_or(SystemTime::UNIX_EPOCH);
    let mut packs = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| Error::io(&folder, source))?;
        let name = entry.file_name();
        if is_pack_name(&name) {
            packs.push(entry.path());
        } else if name.to_string_lossy().ends_with(TEMP_SUFFIX) {
            let old = entry.metadata().and_then(|metadata| metadata.modified()).is_ok_and(|modified| modified < cutoff);
            if old && std::fs::remove_file(entry.path()).is_ok() {
                report.removed_temporaries += 1;
            }
        }
    }
    let batch = Batch::new(store);
    let mut whole = Vec::new();
    for path in packs {
        let mut cache = PackCache::default();
        if cache.add(path.clone()).is_err() {
            continue;
        }
        let added = cache
            .by_id
            .par_iter()
            .map(
                |(id, located)| Ok(!store.contains_loose(id) && batch.add_frame(id, &compacted(id, located.frame()?))?),
            )
            .collect::<Result<Vec<bool>>>()?;
        report.objects += added.into_iter().filter(|&added| added).count() as u64;
        whole.push(path);
    }
    batch.finish(Duration::ZERO)?;
    sleep(pause);
    for path in whole {
        std::fs::remove_file(&path).map_err(|source| Error::io(&path, source))?;
        report.packs += 1;
        sleep(pause);
    }
    if report.packs > 0 {
        durable::fsync_dir(&folder)?;
    }
    Ok(report)
}

/// The frame a packed object gets as a loose one: a stored frame whose bytes hash to `id` is
/// compressed at the store's level (the disk a redo point's stored frames took is given back);
/// any other frame is kept as it is (a corrupt one stays for the reader to report).
fn compacted(id: &ContentId, frame: Vec<u8>) -> Vec<u8> {
    match stored::into_content(frame, MAX_OBJECT_SIZE) {
        Ok(bytes) if ContentId::of(&bytes) == *id => {
            zstd::bulk::compress(&bytes, COMPRESSION_LEVEL).unwrap_or_else(|_| stored::frame(&bytes))
        }
        Ok(bytes) => stored::frame(&bytes), // as it was: the reader reports it corrupt
        Err(frame) => frame,
    }
}

/// The ids of every object in the store's packs (for checks and tests).
pub fn packed_ids(store: &ObjectStore) -> Vec<ContentId> {
    packed_sizes(store).into_iter().map(|(id, _)| id).collect()
}

/// Every object in the store's packs with the bytes its frame takes there, ascending by id: what
/// footprints count for an object no collection has absorbed yet.
pub fn packed_sizes(store: &ObjectStore) -> Vec<(ContentId, u64)> {
    let mut cache = PackCache::default();
    cache.refresh(store.root(), true);
    let mut sizes: Vec<(ContentId, u64)> =
        cache.by_id.into_iter().map(|(id, located)| (id, u64::from(located.length))).collect();
    sizes.sort_unstable_by_key(|(id, _)| *id);
    sizes
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::objects::tests::store;

    fn pack_files(root: &Path) -> usize {
        std::fs::read_dir(root.join(PACKS_FOLDER))
            .map_or(0, |entries| entries.flatten().filter(|entry| is_pack_name(&entry.file_name())).count())
    }

    #[test]
    fn a_pack_holds_each_new_object_once_and_its_objects_read_back_verified() {
        let (_folder, store) = store();
        let (old, _) = store.put_bytes(b"already loose").unwrap();
        let writer = PackWriter::new(&store, Some(1));
        let first = ContentId::of(b"first");
        assert!(!writer.add(&old, b"already loose").unwrap(), "a loose object is only refreshed");
        assert!(writer.add(&first, b"first").unwrap());
        assert!(!writer.add(&first, b"first").unwrap(), "staged once");
        assert!(writer.add(&ContentId::of(b"second"), b"second").unwrap());
        assert!(!store.contains(&first), "no object before the pack is written");
        writer.finish(Duration::ZERO).unwrap();
        assert_eq!(pack_files(store.root()), 1);
        assert!(!store.contains_loose(&first));
        assert_eq!(store.read(&first).unwrap(), b"first");
        let other = ObjectStore::open(store.root()).unwrap();
        assert!(other.contains(&first), "another handle finds the new pack");
        assert_eq!(other.read(&ContentId::of(b"second")).unwrap(), b"second");
        assert_eq!(packed_ids(&store).len(), 2);
    }

    #[test]
    fn usage_counts_a_packed_object_by_its_frame_until_it_is_loose() {
        let (_folder, store) = store();
        let (loose, _) = store.put_bytes(b"already loose").unwrap();
        let before = store.usage().unwrap();
        assert_eq!(before.objects, 1);
        let writer = PackWriter::new(&store, Some(1));
        let bytes = vec![7u8; 100_000];
        let packed = ContentId::of(&bytes);
        assert!(!writer.add(&loose, b"already loose").unwrap());
        assert!(writer.add(&packed, &bytes).unwrap());
        writer.finish(Duration::ZERO).unwrap();
        let frame = packed_sizes(&store);
        assert_eq!(frame.len(), 1);
        assert_eq!(frame[0].0, packed);
        assert!(frame[0].1 > 0 && frame[0].1 < 100_000, "the compressed frame: {}", frame[0].1);
        let with_pack = store.usage().unwrap();
        assert_eq!(with_pack.objects, 2);
        assert_eq!(with_pack.bytes, before.bytes + frame[0].1);
        absorb(&store, Duration::ZERO).unwrap();
        let absorbed = store.usage().unwrap();
        assert_eq!(absorbed.objects, 2, "loose now, counted once");
        assert_eq!(absorbed.bytes, before.bytes + std::fs::metadata(store.object_path(&packed)).unwrap().len());
    }

    #[test]
    fn a_frame_that_does_not_hash_to_its_id_is_reported_corrupt() {
        let (_folder, store) = store();
        let id = ContentId::of(b"what the index says");
        let mut frames = vec![(id, zstd::bulk::compress(b"something else", 1).unwrap())];
        let folder = store.root().join(PACKS_FOLDER);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("forged.pack"), encode(&mut frames)).unwrap();
        assert!(matches!(store.read(&id), Err(Error::ObjectCorrupt { .. })));
    }

    #[test]
    fn a_file_that_is_not_a_pack_holds_nothing() {
        let (_folder, store) = store();
        let folder = store.root().join(PACKS_FOLDER);
        std::fs::create_dir_all(&folder).unwrap();
        let id = ContentId::of(b"x");
        let mut frames = vec![(id, zstd::bulk::compress(b"x", 1).unwrap())];
        let mut bytes = encode(&mut frames);
        bytes.truncate(bytes.len() - 2); // the entry now points past the end
        std::fs::write(folder.join("torn.pack"), bytes).unwrap();
        std::fs::write(folder.join("junk.pack"), b"hello").unwrap();
        assert!(!store.contains(&id));
        assert!(matches!(store.read(&id), Err(Error::ObjectMissing { .. })));
        assert_eq!(absorb(&store, Duration::ZERO).unwrap().packs, 0, "left where it is");
    }

    #[test]
    fn absorbing_makes_every_packed_object_loose_and_deletes_the_pack() {
        let (_folder, store) = store();
        let writer = PackWriter::new(&store, Some(1));
        let ids: Vec<ContentId> = (0..50)
            .map(|number| {
                let bytes = format!("object {number}").into_bytes();
                let id = ContentId::of(&bytes);
                writer.add(&id, &bytes).unwrap();
                id
            })
            .collect();
        writer.finish(Duration::ZERO).unwrap();
        store.put_bytes(b"object 7").unwrap(); // loose already: not written twice
        let report = absorb(&store, Duration::ZERO).unwrap();
        assert_eq!((report.packs, report.objects), (1, 49));
        assert_eq!(pack_files(store.root()), 0);
        for (number, id) in ids.iter().enumerate() {
            assert!(store.contains_loose(id));
            assert_eq!(store.read(id).unwrap(), format!("object {number}").into_bytes());
        }
        assert_eq!(absorb(&store, Duration::ZERO).unwrap(), AbsorbReport::default());
        store.refresh_packs(true);
        let cache = store.packs.lock().unwrap();
        assert!(cache.packs.is_empty() && cache.by_id.is_empty(), "a deleted pack's file is let go");
    }

    #[test]
    fn stored_frames_are_read_back_whole_and_an_absorb_compresses_them() {
        let (_folder, store) = store();
        let writer = PackWriter::new(&store, None);
        let bytes = b"a line of source text\n".repeat(10_000);
        let id = ContentId::of(&bytes);
        assert!(writer.add(&id, &bytes).unwrap());
        writer.finish(Duration::ZERO).unwrap();
        let packed = packed_sizes(&store);
        assert_eq!(packed.len(), 1);
        assert!(packed[0].1 > bytes.len() as u64, "stored, not compressed: {}", packed[0].1);
        assert_eq!(store.read(&id).unwrap(), bytes);
        assert_eq!(absorb(&store, Duration::ZERO).unwrap().objects, 1);
        let loose = std::fs::metadata(store.object_path(&id)).unwrap().len();
        assert!(loose < bytes.len() as u64 / 20, "compressed once loose: {loose}");
        assert_eq!(store.read(&id).unwrap(), bytes);
    }

    #[test]
    fn a_stored_frame_that_does_not_hash_to_its_id_is_absorbed_as_it_is_and_reported_corrupt() {
        let (_folder, store) = store();
        let id = ContentId::of(b"what the index says");
        let mut frames = vec![(id, stored::frame(b"something else"))];
        let folder = store.root().join(PACKS_FOLDER);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("forged.pack"), encode(&mut frames)).unwrap();
        assert!(matches!(store.read(&id), Err(Error::ObjectCorrupt { .. })));
        assert_eq!(absorb(&store, Duration::ZERO).unwrap().objects, 1);
        assert_eq!(
            std::fs::read(store.object_path(&id)).unwrap(),
            stored::frame(b"something else"),
            "not recompressed"
        );
        assert!(matches!(store.read(&id), Err(Error::ObjectCorrupt { .. })));
    }

    #[test]
    fn staged_frames_past_the_limit_go_out_as_a_pack_of_their_own() {
        let (_folder, store) = store();
        let writer = PackWriter::new(&store, Some(1));
        let mut random = 1u64;
        let mut noise = |length: usize| -> Vec<u8> {
            (0..length)
                .map(|_| {
                    random = random.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    (random >> 56) as u8
                })
                .collect()
        };
        let big: Vec<Vec<u8>> = (0..3).map(|_| noise(PACK_LIMIT / 2 + 1)).collect();
        for bytes in &big {
            writer.add(&ContentId::of(bytes), bytes).unwrap();
        }
        writer.finish(Duration::ZERO).unwrap();
        assert_eq!(pack_files(store.root()), 2);
        for bytes in &big {
            assert_eq!(&store.read(&ContentId::of(bytes)).unwrap(), bytes);
        }
    }
}
