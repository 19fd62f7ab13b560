//! The settle of a committed restore: the part after the commit returned, on a thread of its own,
//! and the register of this process's pending settles.
//!
//! A commit returns once every target holds its new bytes. The open version 2 journal, durable
//! since before the first target was touched and naming only durable sources, guarantees them:
//! a recovery completes it (`redo.rs`). The settle (`apply.rs`, `Settle`) then makes the
//! journal unnecessary: one `syncfs` per file system (the new bytes and renames reach the disk),
//! the companion's copy and the journal removed (durably); it holds the journal lock until the
//! journal is gone, then frees the trash.
//!
//! In this process, whatever takes that journal's lock (the next restore, a recovery) first
//! waits for its pending settle ([`wait_for_lock`]: a second `flock` of the same file in one
//! process would fail), and [`settle_all`] waits for every one (the Python layer calls it at
//! exit). A settle interrupted by an exit or a kill, or whose flush failed, leaves the open
//! journal for the next recovery to complete; a failure is kept for [`settle_all`] to report.
//!
//! A restore that set an original aside beside its target (another file system than the
//! journal's) waits for its settle before returning, so the user's folders never show it.
//!
//! The window: until a settle removed its journal (one `syncfs`, tens of ms), a kill -9 leaves
//! an open journal whose recovery rewrites every target overwritten in place from its source,
//! and the companion from its copy. In this process the Python layer keeps its own writes out of
//! that window (`checkpoints/settling.py`: a checkpoints file's writes wait for that session's
//! settle, the agent's tool calls for all); an edit another program made after the restore
//! returned is rewritten by such a recovery.

use super::journal::JournalLock;
use crate::error::Result;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};

/// A lock file's identity (device, inode): one journal, however its path is spelled.
pub(super) type LockKey = (u64, u64);

/// A settle that failed: its journal stays for the next recovery.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettleFailure {
    pub journal: PathBuf,
    pub reason: String,
}

#[derive(Default)]
struct Register {
    /// By lock, the process that started the settle (a child after `fork` has no such thread,
    /// so it never waits for its parent's) and the journal.
    pending: HashMap<LockKey, (u32, PathBuf)>,
    failures: Vec<SettleFailure>,
}

fn register() -> &'static (Mutex<Register>, Condvar) {
    static REGISTER: OnceLock<(Mutex<Register>, Condvar)> = OnceLock::new();
    REGISTER.get_or_init(Default::default)
}

fn locked() -> MutexGuard<'static, Register> {
    register().0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Waits while `pending` (of this process) holds an entry `matches` accepts.
fn wait_while(matches: impl Fn(&LockKey, &PathBuf) -> bool) -> MutexGuard<'static, Register> {
    let pid = std::process::id();
    let mut guard = locked();
    while guard.pending.iter().any(|(key, (owner, journal))| *owner == pid && matches(key, journal)) {
        guard = register().1.wait(guard).unwrap_or_else(std::sync::PoisonError::into_inner);
    }
    guard
}

/// Runs `work` (the settle: `Ok(Some(trash))` when it removed the journal and a trash folder is
/// left to free) on a thread of its own, holding `lock` until it returns; a failure is kept
/// for [`settle_all`]. Runs it here when no thread can be started.
pub(super) fn spawn(
    lock: JournalLock,
    journal: PathBuf,
    work: impl FnOnce() -> Result<Option<PathBuf>> + Send + 'static,
) {
    let key = lock.key();
    locked().pending.insert(key, (std::process::id(), journal.clone()));
    let body = move || {
        let outcome = work();
        drop(lock);
        let mut guard = locked();
        guard.pending.remove(&key);
        let trash = match outcome {
            Ok(trash) => trash,
            Err(error) => {
                guard.failures.push(SettleFailure { journal, reason: error.to_string() });
                None
            }
        };
        drop(guard);
        register().1.notify_all();
        // Garbage once the journal is gone; an exit that interrupts this leaves it to the sweep
        // of the next recovery.
        if let Some(trash) = trash {
            let _ = std::fs::remove_dir_all(trash);
        }
    };
    let slot = std::sync::Arc::new(Mutex::new(Some(body)));
    let taken = std::sync::Arc::clone(&slot);
    let started = std::thread::Builder::new().name("restore-settle".into()).spawn(move || {
        if let Some(body) = taken.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take() {
            body();
        }
    });
    if started.is_err() {
        if let Some(body) = slot.lock().unwrap_or_else(std::sync::PoisonError::into_inner).take() {
            body();
        }
    }
}

/// Waits for this process's pending settle of the journal whose lock file is `key`, if any.
pub(super) fn wait_for_lock(key: LockKey) {
    drop(wait_while(|pending, _| *pending == key));
}

/// Waits for this process's pending settle of `journal` (spelled as the restore was given it);
/// returns its failure, if it failed.
pub fn wait_for_journal(journal: &Path) -> Option<SettleFailure> {
    let mut guard = wait_while(|_, pending| pending == journal);
    let found = guard.failures.iter().position(|failure| failure.journal == journal)?;
    Some(guard.failures.remove(found))
}

/// Waits for every pending settle of this process; returns (and forgets) the failures since the
/// last call.
pub fn settle_all() -> Vec<SettleFailure> {
    std::mem::take(&mut wait_while(|_, _| true).failures)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn the_next_lock_of_a_journal_waits_for_its_settle_and_failures_are_reported_once() {
        let folder = tempfile::tempdir().unwrap();
        let journal = folder.path().join("s.json");
        let lock = JournalLock::acquire(&journal).unwrap();
        let (release, released) = std::sync::mpsc::channel::<()>();
        spawn(lock, journal.clone(), move || {
            released.recv().unwrap();
            Err(crate::error::Error::io(Path::new("/x"), std::io::Error::other("flush failed")))
        });
        let waiter = std::thread::spawn({
            let journal = journal.clone();
            move || {
                let started = Instant::now();
                let lock = JournalLock::acquire(&journal).unwrap();
                drop(lock);
                started.elapsed()
            }
        });
        std::thread::sleep(Duration::from_millis(50));
        assert!(!waiter.is_finished(), "the second lock waits for the settle");
        release.send(()).unwrap();
        assert!(waiter.join().unwrap() >= Duration::from_millis(50));
        let failure = wait_for_journal(&journal).unwrap();
        assert!(failure.reason.contains("flush failed"), "{failure:?}");
        assert!(wait_for_journal(&journal).is_none(), "reported once");
    }
}
