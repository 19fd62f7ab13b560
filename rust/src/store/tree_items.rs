//! The symlinks, FIFOs, sockets and hollow folders of a project, for shell tracking: what a
//! `bash` call created, removed or put in a file's place besides regular files (which
//! `stat_scan` tracks).
//!
//! [`scan_tree_items`] walks the project without following any symlink, skipping `.git` and the
//! excluded folders (commandcode's data dir inside the project; the folders git ignores whole),
//! and returns every symlink (with its target as `readlink` gives it), every FIFO, socket and
//! device node and every *hollow* folder: one whose whole subtree holds nothing but folders
//! (`mkdir -p a/b/c` makes three). Device nodes are listed only so the caller can warn about
//! them (an unprivileged rewind cannot make one). Folders are read in parallel.

use rayon::prelude::*;
use std::collections::HashSet;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// What a tracked item is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TreeKind {
    Symlink(PathBuf),
    Fifo,
    Socket,
    /// A block or character device (never restored: only named in a warning).
    Device,
    Folder,
}

/// One item: its absolute path, kind and permission bits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TreeItem {
    pub path: PathBuf,
    pub kind: TreeKind,
    pub mode: u32,
}

/// The items under `root` (see the module docs), sorted by path; unreadable folders are skipped.
pub fn scan_tree_items(root: &Path, excluded: &[PathBuf]) -> Vec<TreeItem> {
    let mut items = Vec::new();
    let excluded: HashSet<&Path> = excluded.iter().map(PathBuf::as_path).collect();
    walk(root, &excluded, &mut items);
    items.sort_by(|a, b| a.path.cmp(&b.path));
    items
}

/// Collects the items of `folder`'s subtree into `items`; returns whether the folder is hollow.
fn walk(folder: &Path, excluded: &HashSet<&Path>, items: &mut Vec<TreeItem>) -> bool {
    let Ok(entries) = std::fs::read_dir(folder) else { return false };
    let mut hollow = true;
    let mut subfolders: Vec<(PathBuf, u32)> = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            hollow = false;
            continue;
        };
        if kind.is_dir() {
            if entry.file_name() == ".git" || excluded.contains(path.as_path()) {
                hollow = false;
                continue;
            }
            let mode = entry.metadata().map_or(0o755, |metadata| metadata.mode() & 0o7777);
            subfolders.push((path, mode));
            continue;
        }
        hollow = false;
        let mode = || entry.metadata().map_or(0o644, |metadata| metadata.mode() & 0o7777);
        if kind.is_symlink() {
            if let Ok(link) = std::fs::read_link(&path) {
                items.push(TreeItem { path, kind: TreeKind::Symlink(link), mode: 0o777 });
            }
        } else if kind.is_fifo() {
            items.push(TreeItem { path, mode: mode(), kind: TreeKind::Fifo });
        } else if kind.is_socket() {
            items.push(TreeItem { path, mode: mode(), kind: TreeKind::Socket });
        } else if kind.is_block_device() || kind.is_char_device() {
            items.push(TreeItem { path, mode: mode(), kind: TreeKind::Device });
        }
    }
    let found: Vec<(Vec<TreeItem>, bool, PathBuf, u32)> = subfolders
        .into_par_iter()
        .map(|(path, mode)| {
            let mut inner = Vec::new();
            let inner_hollow = walk(&path, excluded, &mut inner);
            (inner, inner_hollow, path, mode)
        })
        .collect();
    for (inner, inner_hollow, path, mode) in found {
        items.extend(inner);
        if inner_hollow {
            items.push(TreeItem { path, kind: TreeKind::Folder, mode });
        } else {
            hollow = false;
        }
    }
    hollow
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_links_fifos_and_hollow_folders_and_follows_nothing() {
        let base = tempfile::tempdir().unwrap();
        let root = base.path();
        std::fs::create_dir_all(root.join("a/b/c")).unwrap();
        std::fs::create_dir_all(root.join("full/empty")).unwrap();
        std::fs::write(root.join("full/file"), b"x").unwrap();
        std::fs::create_dir_all(root.join(".git/objects")).unwrap();
        std::os::unix::fs::symlink("/etc", root.join("full/out")).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            root.join("pipe"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let _socket = std::os::unix::net::UnixListener::bind(root.join("a.sock")).unwrap();
        let found: Vec<(String, TreeKind)> = scan_tree_items(root, &[])
            .into_iter()
            .map(|item| (item.path.strip_prefix(root).unwrap().display().to_string(), item.kind))
            .collect();
        let expected = vec![
            ("a".to_owned(), TreeKind::Folder),
            ("a/b".to_owned(), TreeKind::Folder),
            ("a/b/c".to_owned(), TreeKind::Folder),
            ("a.sock".to_owned(), TreeKind::Socket),
            ("full/empty".to_owned(), TreeKind::Folder),
            ("full/out".to_owned(), TreeKind::Symlink(PathBuf::from("/etc"))),
            ("pipe".to_owned(), TreeKind::Fifo),
        ];
        assert_eq!(found, expected);
    }
}
