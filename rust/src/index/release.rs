//! Freeing a large scan off the caller's thread.
//!
//! A scan of a 1 GB transcript holds about 150,000 entries and half a million small heap
//! blocks; freeing them one by one took 16–21 ms (measured at the end of a cold open from
//! Python), which the caller (an interpreter exiting, an agent dropping one session for
//! another) would otherwise wait for. A [`Full`] that large is handed to a short-lived thread to
//! free; a process that exits meanwhile simply does not wait for it. Smaller ones are freed at
//! once: a thread costs more than freeing them.
//!
//! Owns: that decision ([`release`]). `tests::large_scans_are_freed_on_another_thread` pins it.

use super::Full;
use std::thread::JoinHandle;

/// Entries from which a scan is freed on its own thread (about 2 ms of freeing; a thread costs
/// tens of microseconds).
const BACKGROUND_FREE_ENTRIES: usize = 10_000;

/// Frees `full`: on a new thread when it holds at least [`BACKGROUND_FREE_ENTRIES`] entries
/// (the thread's handle is returned), else here. Should the thread fail to start, it is freed
/// here too.
pub fn release(full: Full) -> Option<JoinHandle<()>> {
    if full.report.entries.len() < BACKGROUND_FREE_ENTRIES {
        return None;
    }
    // On failure the closure, and `full` with it, is dropped inside `spawn`.
    std::thread::Builder::new().name("commandcode-free".into()).spawn(move || drop(full)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::scan_bytes;

    fn full_of(entries: usize) -> Full {
        let mut data =
            String::from("{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"t\",\"cwd\":\"/\"}\n");
        for index in 0..entries {
            data.push_str(&format!(
                "{{\"type\":\"custom\",\"id\":\"e{index}\",\"parentId\":null,\"timestamp\":\"t\",\"customType\":\"x\"}}\n"
            ));
        }
        Full::new(scan_bytes(data.as_bytes()).unwrap())
    }

    #[test]
    fn large_scans_are_freed_on_another_thread() {
        let large = full_of(BACKGROUND_FREE_ENTRIES);
        let _ = large.tree();
        let handle = release(large).expect("a large scan is freed on its own thread");
        assert_eq!(handle.thread().name(), Some("commandcode-free"));
        handle.join().unwrap();
        assert!(release(full_of(BACKGROUND_FREE_ENTRIES - 1)).is_none());
    }
}
