//! Change events for shell tracking: an inotify watch on each folder of a project, so that the
//! stat pass around a `bash` call looks only at the paths something touched.
//!
//! [`Watcher::drain`] reads every queued event without blocking and sorts it: files touched
//! (written, chmod-ed or touched, created, deleted, moved), folders whose entries changed, and
//! folders created or removed. A queue overflow or a read error makes it fail: the caller then
//! falls back to a full stat pass and places its watches again. Watches are added with
//! `IN_ONLYDIR | IN_DONT_FOLLOW`, so a symlinked folder is never watched through.

use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};
use rustix::io::Errno;
use std::collections::{HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// What the queued events say changed.
#[derive(Default, Debug)]
pub struct Drained {
    /// Paths of non-folder entries that were written, chmod-ed, created, deleted or moved.
    pub touched: HashSet<OsString>,
    /// Folders whose entries were created, deleted or moved (their listing changed).
    pub relisted: HashSet<OsString>,
    /// Folders created or moved in (to list and watch).
    pub new_folders: Vec<OsString>,
    /// Folders deleted or moved out (everything known below them is gone or elsewhere).
    pub gone_folders: Vec<OsString>,
}

impl Drained {
    /// Adds what `other` saw (events read later).
    pub fn merge(&mut self, other: Drained) {
        self.touched.extend(other.touched);
        self.relisted.extend(other.relisted);
        self.new_folders.extend(other.new_folders);
        self.gone_folders.extend(other.gone_folders);
    }
}

/// An inotify instance watching folders.
pub struct Watcher {
    fd: OwnedFd,
    folders: HashMap<i32, OsString>,
    watched: HashSet<OsString>,
}

fn mask() -> WatchFlags {
    WatchFlags::MODIFY
        | WatchFlags::ATTRIB
        | WatchFlags::CLOSE_WRITE
        | WatchFlags::CREATE
        | WatchFlags::DELETE
        | WatchFlags::MOVED_FROM
        | WatchFlags::MOVED_TO
        | WatchFlags::DELETE_SELF
        | WatchFlags::MOVE_SELF
        | WatchFlags::ONLYDIR
        | WatchFlags::DONT_FOLLOW
        | WatchFlags::EXCL_UNLINK
}

impl Watcher {
    /// A new watcher (close-on-exec: the commands run never inherit it), or `None`.
    pub fn new() -> Option<Self> {
        let fd = inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK).ok()?;
        Some(Watcher { fd, folders: HashMap::new(), watched: HashSet::new() })
    }

    /// Watches `folder`; `false` when it cannot (the user's watch limit, a folder gone).
    pub fn add(&mut self, folder: &OsStr) -> bool {
        if self.watched.contains(folder) {
            return true;
        }
        match inotify::add_watch(&self.fd, Path::new(folder), mask()) {
            Ok(wd) => {
                self.folders.insert(wd, folder.to_os_string());
                self.watched.insert(folder.to_os_string());
                true
            }
            Err(_) => false,
        }
    }

    /// Whether `folder` is watched.
    pub fn watches(&self, folder: &OsStr) -> bool {
        self.watched.contains(folder)
    }

    /// Every queued event, sorted (see [`Drained`]); `None` after a queue overflow or a read error.
    pub fn drain(&mut self) -> Option<Drained> {
        let mut drained = Drained::default();
        let mut buffer = [MaybeUninit::<u8>::uninit(); 64 * 1024];
        let mut reader = inotify::Reader::new(&self.fd, &mut buffer);
        let mut removed: Vec<i32> = Vec::new();
        loop {
            let event = match reader.next() {
                Ok(event) => event,
                Err(Errno::AGAIN) => break,
                Err(Errno::INTR) => continue,
                Err(_) => return None,
            };
            let flags = event.events();
            if flags.contains(ReadFlags::QUEUE_OVERFLOW) {
                return None;
            }
            let Some(folder) = self.folders.get(&event.wd()) else { continue };
            if flags.intersects(ReadFlags::DELETE_SELF | ReadFlags::MOVE_SELF | ReadFlags::IGNORED) {
                drained.gone_folders.push(folder.clone());
                removed.push(event.wd());
                continue;
            }
            let Some(name) = event.file_name() else { continue };
            let mut path = folder.clone();
            path.push("/");
            path.push(OsStr::from_bytes(name.to_bytes()));
            let structural =
                flags.intersects(ReadFlags::CREATE | ReadFlags::DELETE | ReadFlags::MOVED_FROM | ReadFlags::MOVED_TO);
            if structural {
                drained.relisted.insert(folder.clone());
            }
            if flags.contains(ReadFlags::ISDIR) {
                if flags.intersects(ReadFlags::CREATE | ReadFlags::MOVED_TO) {
                    drained.new_folders.push(path);
                } else if flags.intersects(ReadFlags::DELETE | ReadFlags::MOVED_FROM) {
                    drained.gone_folders.push(path);
                }
            } else {
                drained.touched.insert(path);
            }
        }
        for wd in removed {
            if let Some(folder) = self.folders.remove(&wd) {
                self.watched.remove(&folder);
            }
        }
        for folder in &drained.gone_folders {
            // A folder moved out keeps its watch (and would report from its new place): drop it.
            if let Some((&wd, _)) = self.folders.iter().find(|(_, known)| *known == folder) {
                let _ = inotify::remove_watch(&self.fd, wd);
                self.folders.remove(&wd);
                self.watched.remove(folder);
            }
        }
        Some(drained)
    }
}
