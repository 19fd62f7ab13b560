//! The restore journal: a small JSON file, written atomically before each phase, that lets the
//! next open finish or undo a restore a crash interrupted. Also the lock that keeps two
//! processes from restoring (or recovering) the same session at once.
//!
//! States: `open` (written before the first target is touched: temps may exist beside targets,
//! targets may be partly swapped or partly overwritten) and `committed` (every target is in place
//! and synced; only set-aside originals remain to be removed; finished on recovery).
//!
//! What recovery does with an `open` journal depends on its version. Version 2 (this one) names
//! the durable source of every new content (an object of the store, a real-CLI blob, or the
//! companion's copy beside the journal), so recovery *completes* the restore from them: targets
//! overwritten in place cannot be undone after a crash, but they can always be finished.
//! Version 1 (written by earlier releases, swaps only) is undone from its set-aside originals.

use super::{Action, Special};
use crate::error::{Error, Result};
use crate::store::digest::{ContentId, Sha256Digest};
use crate::store::durable;
use serde_json::{json, Value};
use std::ffi::OsStr;
use std::fs::{File, OpenOptions};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Journal format version written now.
pub const JOURNAL_VERSION: u64 = 2;
/// The swap-only version of earlier releases, still read (and undone) on recovery.
const UNDO_JOURNAL_VERSION: u64 = 1;

/// Which way recovery takes an `open` journal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// Put every target back as it was, from the set-aside originals (version 1 journals).
    Undo,
    /// Finish the restore from the durable sources the journal names (version 2).
    Redo,
}

/// How one target gets its new content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// A temp file beside the target takes its place; the original is set aside.
    Swap,
    /// The existing file (a single-link, non-executable regular file) is overwritten in place:
    /// no new inode, no freed blocks, ownership, links and extended attributes kept. Its old
    /// bytes are held in memory for an in-process undo; after a crash the restore is completed
    /// instead.
    InPlace,
}

impl Method {
    fn as_str(self) -> &'static str {
        match self {
            Method::Swap => "swap",
            Method::InPlace => "in_place",
        }
    }
}

/// Where the new content of a write comes from, durably (for recovery to complete it).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JournalSource {
    Object(ContentId),
    RawBlob {
        folder: PathBuf,
        digest: Sha256Digest,
    },
    /// A file holding exactly the new bytes (the companion's copy beside the journal).
    File(PathBuf),
}

/// Where a restore stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JournalState {
    Open,
    Committed,
}

impl JournalState {
    fn as_str(self) -> &'static str {
        match self {
            JournalState::Open => "open",
            JournalState::Committed => "committed",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        match text {
            "open" => Some(JournalState::Open),
            "committed" => Some(JournalState::Committed),
            _ => None,
        }
    }
}

/// One target's swap.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JournalOp {
    /// [`Action::Write`] or [`Action::Delete`].
    pub action: Action,
    pub target: PathBuf,
    /// The real path of the target's folder, which every step opens without following a
    /// symlink (journals written before this field existed: the target's parent).
    pub folder: PathBuf,
    /// The staged new content (writes only).
    pub temp: Option<PathBuf>,
    /// Where the original is set aside while the restore is open.
    pub rollback: PathBuf,
    pub original_existed: bool,
    /// blake3 of the new content (writes only): an undo removes a target that did not exist
    /// before only when it holds exactly this.
    pub content: Option<ContentId>,
    pub method: Method,
    /// The durable source of the new content (writes; `None` in version 1 journals).
    pub source: Option<JournalSource>,
    /// Permission bits the written file gets.
    pub mode: u32,
    /// blake3 of the original, when known: recovery replaces or deletes a swapped target only
    /// while it holds this (or the new content), never a file somebody else put there since.
    pub before: Option<ContentId>,
    /// A write that makes a symlink, FIFO or folder (`"make"`) instead of a file: no content,
    /// no source; the temp beside the target is that item.
    pub special: Option<Special>,
}

/// The journal's content.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Journal {
    pub state: JournalState,
    /// Set by the version read (new journals: [`Recovery::Redo`]).
    pub recovery: Recovery,
    /// The object store the sources are in (version 2).
    pub store: Option<PathBuf>,
    /// The confinement root the restore had (its real path; `None` in journals written before
    /// it was recorded, and for a restore let outside it). Recovery keeps every target inside
    /// it as well as inside the root its caller gives (see `bounds.rs`).
    pub root: Option<PathBuf>,
    /// Folders this restore creates (outermost first); removed again, when empty, on undo.
    pub created_dirs: Vec<PathBuf>,
    /// The folder (beside the journal) that holds the set-aside originals of targets on the
    /// same file system; the others are set aside next to their target.
    pub trash: Option<PathBuf>,
    pub ops: Vec<JournalOp>,
}

/// What [`super::recover`] did with a pending journal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RecoveryOutcome {
    /// An interrupted restore was undone: every target is as it was before it.
    RolledBack { targets: Vec<PathBuf> },
    /// An interrupted restore was finished: every target holds its restored state.
    Completed { targets: Vec<PathBuf> },
}

fn path_to_json(path: &Path) -> Value {
    match path.to_str() {
        Some(text) => Value::String(text.to_owned()),
        None => {
            json!({ "hex": path.as_os_str().as_bytes().iter().map(|byte| format!("{byte:02x}")).collect::<String>() })
        }
    }
}

fn path_from_json(value: &Value) -> Option<PathBuf> {
    match value {
        Value::String(text) => Some(PathBuf::from(text)),
        Value::Object(map) => {
            let hex = map.get("hex")?.as_str()?;
            let bytes = (0..hex.len())
                .step_by(2)
                .map(|index| u8::from_str_radix(hex.get(index..index + 2)?, 16).ok())
                .collect::<Option<Vec<u8>>>()?;
            Some(PathBuf::from(OsStr::from_bytes(&bytes)))
        }
        _ => None,
    }
}

/// `null` or a blake3 hex digest; `None` when the value is neither.
fn optional_id(value: &Value) -> Option<Option<ContentId>> {
    match value {
        Value::Null => Some(None),
        other => Some(Some(ContentId::parse(other.as_str()?).ok()?)),
    }
}

fn source_to_json(source: &JournalSource) -> Value {
    match source {
        JournalSource::Object(id) => json!({ "object": id.to_string() }),
        JournalSource::RawBlob { folder, digest } => {
            json!({ "blob": path_to_json(folder), "sha256": digest.to_string() })
        }
        JournalSource::File(path) => json!({ "file": path_to_json(path) }),
    }
}

fn source_from_json(value: &Value) -> Option<JournalSource> {
    if let Some(id) = value.get("object") {
        return Some(JournalSource::Object(ContentId::parse(id.as_str()?).ok()?));
    }
    if let Some(folder) = value.get("blob") {
        let digest = Sha256Digest::parse(value.get("sha256")?.as_str()?).ok()?;
        return Some(JournalSource::RawBlob { folder: path_from_json(folder)?, digest });
    }
    Some(JournalSource::File(path_from_json(value.get("file")?)?))
}

fn special_to_json(special: &Special) -> Value {
    match special {
        Special::Symlink(link) => json!({ "symlink": path_to_json(link) }),
        Special::Fifo { mode } => json!({ "fifo": mode }),
        Special::Socket { mode } => json!({ "socket": mode }),
        Special::Folder { mode } => json!({ "folder": mode }),
    }
}

fn special_from_json(value: &Value) -> Option<Special> {
    let mode = |value: &Value| value.as_u64().map(|mode| (mode & 0o7777) as u32);
    if let Some(link) = value.get("symlink") {
        return Some(Special::Symlink(path_from_json(link)?));
    }
    if let Some(fifo) = value.get("fifo") {
        return Some(Special::Fifo { mode: mode(fifo)? });
    }
    if let Some(socket) = value.get("socket") {
        return Some(Special::Socket { mode: mode(socket)? });
    }
    Some(Special::Folder { mode: mode(value.get("folder")?)? })
}

impl Journal {
    /// An open journal of the current version, for these ops.
    pub fn open(
        store: &Path,
        root: Option<PathBuf>,
        created_dirs: Vec<PathBuf>,
        trash: Option<PathBuf>,
        ops: Vec<JournalOp>,
    ) -> Journal {
        Journal {
            state: JournalState::Open,
            recovery: Recovery::Redo,
            store: Some(store.to_owned()),
            root,
            created_dirs,
            trash,
            ops,
        }
    }

    pub(super) fn to_json(&self) -> Value {
        let ops: Vec<Value> = self
            .ops
            .iter()
            .map(|op| {
                let mut value = json!({
                    "action": op.action.as_str(),
                    "target": path_to_json(&op.target),
                    "folder": path_to_json(&op.folder),
                    "temp": op.temp.as_deref().map(path_to_json),
                    "rollback": path_to_json(&op.rollback),
                    "originalExisted": op.original_existed,
                    "content": op.content.map(|id| id.to_string()),
                    "method": op.method.as_str(),
                    "source": op.source.as_ref().map(source_to_json),
                    "mode": op.mode,
                    "before": op.before.map(|id| id.to_string()),
                });
                if let (Some(special), Value::Object(map)) = (&op.special, &mut value) {
                    map.insert("make".into(), special_to_json(special)); // only then: file-only journals are as before
                }
                value
            })
            .collect();
        let version = match self.recovery {
            Recovery::Redo => JOURNAL_VERSION,
            Recovery::Undo => UNDO_JOURNAL_VERSION,
        };
        json!({
            "version": version,
            "state": self.state.as_str(),
            "store": self.store.as_deref().map(path_to_json),
            "root": self.root.as_deref().map(path_to_json),
            "createdDirs": self.created_dirs.iter().map(|path| path_to_json(path)).collect::<Vec<_>>(),
            "trash": self.trash.as_deref().map(path_to_json),
            "ops": ops,
        })
    }

    fn from_json(value: &Value) -> Option<Journal> {
        let recovery = match value.get("version")?.as_u64()? {
            JOURNAL_VERSION => Recovery::Redo,
            UNDO_JOURNAL_VERSION => Recovery::Undo,
            _ => return None,
        };
        let store = match value.get("store") {
            None | Some(Value::Null) => None,
            Some(other) => Some(path_from_json(other)?),
        };
        let root = match value.get("root") {
            None | Some(Value::Null) => None,
            Some(other) => Some(path_from_json(other)?),
        };
        let state = JournalState::parse(value.get("state")?.as_str()?)?;
        let created_dirs =
            value.get("createdDirs")?.as_array()?.iter().map(path_from_json).collect::<Option<Vec<_>>>()?;
        let trash = match value.get("trash") {
            None | Some(Value::Null) => None,
            Some(other) => Some(path_from_json(other)?),
        };
        let ops = value
            .get("ops")?
            .as_array()?
            .iter()
            .map(|op| {
                let action = match op.get("action")?.as_str()? {
                    "write" => Action::Write,
                    "delete" => Action::Delete,
                    _ => return None,
                };
                let temp = match op.get("temp")? {
                    Value::Null => None,
                    other => Some(path_from_json(other)?),
                };
                let content = optional_id(op.get("content")?)?;
                let method = match op.get("method").and_then(Value::as_str) {
                    None | Some("swap") => Method::Swap,
                    Some("in_place") => Method::InPlace,
                    Some(_) => return None,
                };
                let source = match op.get("source") {
                    None | Some(Value::Null) => None,
                    Some(other) => Some(source_from_json(other)?),
                };
                let before = match op.get("before") {
                    None => None,
                    Some(other) => optional_id(other)?,
                };
                let special = match op.get("make") {
                    None | Some(Value::Null) => None,
                    Some(other) => Some(special_from_json(other)?),
                };
                let target = path_from_json(op.get("target")?)?;
                let folder = match op.get("folder") {
                    None => target.parent()?.to_owned(),
                    Some(other) => path_from_json(other)?,
                };
                Some(JournalOp {
                    action,
                    target,
                    folder,
                    temp,
                    rollback: path_from_json(op.get("rollback")?)?,
                    original_existed: op.get("originalExisted")?.as_bool()?,
                    content,
                    method,
                    source,
                    mode: op.get("mode").and_then(Value::as_u64).map_or(0o644, |mode| (mode & 0o7777) as u32),
                    before,
                    special,
                })
            })
            .collect::<Option<Vec<_>>>()?;
        if recovery == Recovery::Undo && ops.iter().any(|op| op.method == Method::InPlace) {
            return None;
        }
        Some(Journal { state, recovery, store, root, created_dirs, trash, ops })
    }

    /// Writes the journal atomically and durably.
    pub fn write(&self, path: &Path) -> Result<()> {
        durable::write_atomic(path, self.to_json().to_string().as_bytes(), 0o600)
    }

    /// Reads the journal at `path`; `None` when there is none.
    pub fn read(path: &Path) -> Result<Option<Journal>> {
        let bytes = match crate::fsopen::read_regular(path, crate::fsopen::Follow::Yes) {
            Ok(bytes) => bytes,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(Error::io(path, source)),
        };
        let value: Value = serde_json::from_slice(&bytes)
            .map_err(|error| Error::JournalInvalid { path: path.to_owned(), reason: error.to_string() })?;
        Journal::from_json(&value)
            .map(Some)
            .ok_or_else(|| Error::JournalInvalid { path: path.to_owned(), reason: "unknown version or shape".into() })
    }

    /// Deletes the journal file and syncs its folder.
    pub fn remove(path: &Path) -> Result<()> {
        match std::fs::remove_file(path) {
            Ok(()) => {}
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(source) => return Err(Error::io(path, source)),
        }
        durable::fsync_dir(path.parent().unwrap_or(Path::new(".")))
    }
}

/// An exclusive `flock` on `<journal>.lock`, held for a whole restore or recovery (and the
/// settle after a commit, `settle.rs`). A process killed while holding it releases it, so a
/// crashed restore never blocks the next open.
pub struct JournalLock {
    file: File,
}

/// How long [`JournalLock::acquire`] tries again while another process holds the lock: a
/// restore's settle holds it for tens of milliseconds after that process's rewind returned.
const LOCK_PATIENCE: std::time::Duration = std::time::Duration::from_millis(500);
const LOCK_RETRY: std::time::Duration = std::time::Duration::from_millis(5);

impl JournalLock {
    /// Takes the lock. A pending settle of this journal in this process is waited for; another
    /// process's hold is tried again for up to half a second, then fails with
    /// [`Error::RestoreInProgress`].
    pub fn acquire(journal: &Path) -> Result<Self> {
        if let Some(folder) = journal.parent() {
            for created in durable::create_dirs(folder)? {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&created, std::fs::Permissions::from_mode(0o700))
                    .map_err(|source| Error::io(&created, source))?;
            }
        }
        let mut name = journal.as_os_str().to_owned();
        name.push(".lock");
        let lock_path = PathBuf::from(name);
        let file = crate::fsopen::open_regular(
            &lock_path,
            OpenOptions::new().read(true).write(true).create(true).truncate(false).mode(0o600),
            crate::fsopen::Follow::No,
        )
        .map_err(|source| Error::io(&lock_path, source))?;
        let lock = JournalLock { file };
        super::settle::wait_for_lock(lock.key());
        let deadline = std::time::Instant::now() + LOCK_PATIENCE;
        loop {
            match rustix::fs::flock(&lock.file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => return Ok(lock),
                Err(rustix::io::Errno::WOULDBLOCK) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(LOCK_RETRY);
                }
                Err(rustix::io::Errno::WOULDBLOCK) => {
                    return Err(Error::RestoreInProgress { journal: journal.to_owned() })
                }
                Err(errno) => return Err(Error::io(lock_path, errno.into())),
            }
        }
    }

    /// The lock file's identity (device, inode).
    pub(super) fn key(&self) -> super::settle::LockKey {
        use std::os::unix::fs::MetadataExt;
        self.file.metadata().map_or((0, 0), |metadata| (metadata.dev(), metadata.ino()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn journal_round_trips_including_non_utf8_paths() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("journal.json");
        let odd = PathBuf::from(OsStr::from_bytes(b"/tmp/\xff\xfe"));
        let write = |target: PathBuf, method: Method, source: JournalSource| JournalOp {
            action: Action::Write,
            target,
            folder: PathBuf::from("/tmp"),
            temp: Some(PathBuf::from("/tmp/.x.tmp")),
            rollback: PathBuf::from("/tmp/.x.rb"),
            original_existed: true,
            content: Some(ContentId::of(b"new")),
            method,
            source: Some(source),
            mode: 0o755,
            before: Some(ContentId::of(b"old")),
            special: None,
        };
        let journal = Journal::open(
            Path::new("/tmp/objects"),
            Some(PathBuf::from("/tmp/project")),
            vec![PathBuf::from("/tmp/new")],
            Some(PathBuf::from("/tmp/.j.trash")),
            vec![
                write(odd.clone(), Method::InPlace, JournalSource::Object(ContentId::of(b"new"))),
                write(
                    PathBuf::from("/tmp/r"),
                    Method::Swap,
                    JournalSource::RawBlob { folder: odd.clone(), digest: Sha256Digest::of(b"new") },
                ),
                write(PathBuf::from("/tmp/c"), Method::Swap, JournalSource::File(PathBuf::from("/tmp/j.companion"))),
                JournalOp {
                    action: Action::Delete,
                    target: PathBuf::from("/tmp/y"),
                    folder: PathBuf::from("/tmp"),
                    temp: None,
                    rollback: PathBuf::from("/tmp/.y.rb"),
                    original_existed: true,
                    content: None,
                    method: Method::Swap,
                    source: None,
                    mode: 0o644,
                    before: None,
                    special: None,
                },
                JournalOp {
                    action: Action::Write,
                    target: odd.join("link"),
                    folder: odd.clone(),
                    temp: Some(odd.join(".link.tmp")),
                    rollback: PathBuf::from("/tmp/.l.rb"),
                    original_existed: false,
                    content: None,
                    method: Method::Swap,
                    source: None,
                    mode: 0o777,
                    before: None,
                    special: Some(Special::Symlink(odd.join("elsewhere"))),
                },
                JournalOp {
                    action: Action::Write,
                    target: PathBuf::from("/tmp/fifo"),
                    folder: PathBuf::from("/tmp"),
                    temp: Some(PathBuf::from("/tmp/.fifo.tmp")),
                    rollback: PathBuf::from("/tmp/.f.rb"),
                    original_existed: true,
                    content: None,
                    method: Method::Swap,
                    source: None,
                    mode: 0o600,
                    before: None,
                    special: Some(Special::Fifo { mode: 0o600 }),
                },
            ],
        );
        journal.write(&path).unwrap();
        assert_eq!(Journal::read(&path).unwrap(), Some(journal));
        Journal::remove(&path).unwrap();
        assert_eq!(Journal::read(&path).unwrap(), None);
    }

    #[test]
    fn a_version_1_journal_is_read_for_undo() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("journal.json");
        let text = r#"{"version":1,"state":"open","createdDirs":[],"trash":null,"ops":[{"action":"write","target":"/p/a","temp":"/p/.a.tmp","rollback":"/p/.a.rb","originalExisted":true,"content":null}]}"#;
        std::fs::write(&path, text).unwrap();
        let journal = Journal::read(&path).unwrap().unwrap();
        assert_eq!(journal.recovery, Recovery::Undo);
        assert_eq!(journal.ops[0].method, Method::Swap);
        assert_eq!(journal.ops[0].folder, PathBuf::from("/p"));
        // Written back, it stays a version 1 journal.
        journal.write(&path).unwrap();
        assert_eq!(Journal::read(&path).unwrap().unwrap().recovery, Recovery::Undo);
    }

    #[test]
    fn a_second_lock_is_refused_while_the_first_is_held() {
        let folder = tempfile::tempdir().unwrap();
        let journal = folder.path().join("j.json");
        let first = JournalLock::acquire(&journal).unwrap();
        assert!(matches!(JournalLock::acquire(&journal), Err(Error::RestoreInProgress { .. })));
        drop(first);
        JournalLock::acquire(&journal).unwrap();
    }

    #[test]
    fn garbage_is_an_invalid_journal() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("j.json");
        std::fs::write(&path, b"{\"version\":7}").unwrap();
        assert!(matches!(Journal::read(&path), Err(Error::JournalInvalid { .. })));
    }
}
