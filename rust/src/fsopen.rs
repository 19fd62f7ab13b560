//! The one way the crate opens a file by path: [`open_regular`] (and [`read_regular`] on top
//! of it), plus [`open_folder`] for the folder fsyncs.
//!
//! Every open adds `O_NONBLOCK | O_NOCTTY | O_CLOEXEC`, so a FIFO, socket or device put where a
//! file belongs can never block the program, and `O_NOFOLLOW` unless the caller follows a final
//! symlink on purpose ([`Follow::Yes`]: reading a transcript a user named through a link). The
//! path is `stat`ed first (a device is not even opened) and the opened descriptor `fstat`ed
//! after (the path may have been swapped meanwhile): anything but a regular file fails with an
//! error that [`is_not_regular`] recognises. On a regular file `O_NONBLOCK` changes nothing.
//!
//! The restore's target I/O opens relative to a folder handle (`openat`, in
//! `store/restore/target_io.rs`) with the same flags and the same `fstat` check.

use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// Whether a final symlink is followed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Follow {
    Yes,
    No,
}

/// The payload of the error for a folder, FIFO, socket or device where a file was expected.
#[derive(Debug)]
pub struct NotRegular(pub &'static str);

impl std::fmt::Display for NotRegular {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "{}, not a regular file", self.0)
    }
}

impl std::error::Error for NotRegular {}

/// Whether `error` says the path is not a regular file.
pub fn is_not_regular(error: &io::Error) -> bool {
    error.get_ref().is_some_and(|inner| inner.is::<NotRegular>())
}

fn kind(file_type: std::fs::FileType) -> &'static str {
    if file_type.is_dir() {
        "a folder"
    } else if file_type.is_fifo() {
        "a FIFO"
    } else if file_type.is_socket() {
        "a socket"
    } else if file_type.is_char_device() {
        "a character device"
    } else if file_type.is_block_device() {
        "a block device"
    } else if file_type.is_symlink() {
        "a symlink"
    } else {
        "an unknown kind of file"
    }
}

fn not_regular(file_type: std::fs::FileType) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, NotRegular(kind(file_type)))
}

/// Opens `path` as a regular file with `options` (read, write, append, create, mode...; its
/// custom flags are set here).
pub fn open_regular(path: &Path, options: &mut OpenOptions, follow: Follow) -> io::Result<File> {
    open_regular_stat(path, options, follow).map(|(file, _)| file)
}

/// [`open_regular`], with the `fstat` of the opened file it takes anyway.
fn open_regular_stat(path: &Path, options: &mut OpenOptions, follow: Follow) -> io::Result<(File, Metadata)> {
    let before = match follow {
        Follow::Yes => std::fs::metadata(path),
        Follow::No => std::fs::symlink_metadata(path),
    };
    match before {
        Ok(metadata) if metadata.file_type().is_symlink() => {
            return Err(io::Error::from_raw_os_error(rustix::io::Errno::LOOP.raw_os_error()))
        }
        Ok(metadata) if !metadata.file_type().is_file() => return Err(not_regular(metadata.file_type())),
        Ok(_) => {}
        Err(error) if error.kind() == io::ErrorKind::NotFound => {} // the open decides (create or fail)
        Err(error) => return Err(error),
    }
    let mut flags = rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::NOCTTY | rustix::fs::OFlags::CLOEXEC;
    if follow == Follow::No {
        flags |= rustix::fs::OFlags::NOFOLLOW;
    }
    let file = options.custom_flags(flags.bits() as i32).open(path)?;
    let opened = file.metadata()?;
    if !opened.is_file() {
        return Err(not_regular(opened.file_type()));
    }
    Ok((file, opened))
}

/// Opens `path` read-only as a regular file.
pub fn open_regular_read(path: &Path, follow: Follow) -> io::Result<File> {
    open_regular(path, OpenOptions::new().read(true), follow)
}

/// The whole content of the regular file at `path`.
pub fn read_regular(path: &Path, follow: Follow) -> io::Result<Vec<u8>> {
    let (file, metadata) = open_regular_stat(path, OpenOptions::new().read(true), follow)?;
    read_sized(&file, metadata.len())
}

/// The rest of `file`, whose size a `stat` just gave as `size` (a file that grew since is read to
/// its end all the same). `File::read_to_end` would ask its size and position once more (a
/// `statx` and an `lseek`: two of the dozen calls a restore makes per file), and it always reads
/// until a read returns nothing: a second `read` per file. Here one `read` asks for a byte more
/// than `size`; when it stops short at exactly `size` bytes, that is the file's end as the read
/// found it (a regular file's read stops short only there), the same moment a read returning
/// nothing would have found it. A read that stops anywhere else, or fills the extra byte (the file
/// grew), goes on until a read returns nothing.
pub fn read_sized(file: &File, size: u64) -> io::Result<Vec<u8>> {
    let expected = usize::try_from(size).unwrap_or(0);
    let mut bytes = Vec::with_capacity(expected.saturating_add(1));
    loop {
        if bytes.len() == bytes.capacity() {
            bytes.reserve(bytes.capacity().max(8192));
        }
        let asked = bytes.capacity() - bytes.len();
        match rustix::io::read(file, rustix::buffer::spare_capacity(&mut bytes)) {
            Ok(0) => return Ok(bytes),
            Ok(read) if read < asked && bytes.len() == expected => return Ok(bytes),
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(errno) => return Err(errno.into()),
        }
    }
}

/// Fails when something other than a regular file or a symlink is at `path`: a file written
/// by a rename over `path` replaces a file or a link (never what it points to), but leaves a
/// folder, FIFO, socket or device that someone put there as it is.
pub fn check_replaceable(path: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(metadata) if !metadata.file_type().is_file() && !metadata.file_type().is_symlink() => {
            Err(not_regular(metadata.file_type()))
        }
        Err(error) if error.kind() != io::ErrorKind::NotFound => Err(error),
        _ => Ok(()),
    }
}

/// Opens the folder at `path` (`O_DIRECTORY`: anything else fails at once, never blocks).
pub fn open_folder(path: &Path) -> io::Result<File> {
    let flags = rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::CLOEXEC;
    OpenOptions::new().read(true).custom_flags(flags.bits() as i32).open(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::net::UnixListener;

    #[test]
    fn refuses_every_kind_but_a_regular_file_without_blocking() {
        let folder = tempfile::tempdir().unwrap();
        let fifo = folder.path().join("fifo");
        rustix::fs::mkfifoat(rustix::fs::CWD, &fifo, rustix::fs::Mode::from_raw_mode(0o600)).unwrap();
        let socket = folder.path().join("socket");
        let _listener = UnixListener::bind(&socket).unwrap();
        let regular = folder.path().join("regular");
        std::fs::write(&regular, b"x").unwrap();
        let link = folder.path().join("link");
        std::os::unix::fs::symlink(&regular, &link).unwrap();
        let zero = folder.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        for path in [&fifo, &socket, &folder.path().to_path_buf()] {
            for follow in [Follow::Yes, Follow::No] {
                assert!(is_not_regular(&open_regular_read(path, follow).unwrap_err()), "{path:?}");
                let writing = open_regular(path, OpenOptions::new().write(true).append(true), follow).unwrap_err();
                assert!(is_not_regular(&writing), "{path:?}: {writing}");
            }
        }
        assert!(is_not_regular(&read_regular(&zero, Follow::Yes).unwrap_err()));
        assert_eq!(read_regular(&link, Follow::Yes).unwrap(), b"x");
        let refused = read_regular(&link, Follow::No).unwrap_err();
        assert_eq!(refused.raw_os_error(), Some(rustix::io::Errno::LOOP.raw_os_error()));
        assert_eq!(read_regular(&regular, Follow::No).unwrap(), b"x");
        assert_eq!(
            read_regular(&folder.path().join("missing"), Follow::No).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
        assert!(open_folder(&fifo).is_err() && open_folder(folder.path()).is_ok());
        assert!(is_not_regular(&check_replaceable(&fifo).unwrap_err()));
        assert!(check_replaceable(&link).is_ok() && check_replaceable(&regular).is_ok());
        assert!(check_replaceable(&folder.path().join("missing")).is_ok());
    }

    #[test]
    fn read_sized_reads_the_whole_file_whatever_size_it_was_told() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("file");
        for length in [0usize, 1, 4095, 4096, 70_000, 300_000] {
            let bytes: Vec<u8> = (0..length).map(|index| (index % 251) as u8).collect();
            std::fs::write(&path, &bytes).unwrap();
            // The true size; a stale smaller one (the file grew since its stat: read to its end);
            // a stale larger one (it shrank: what is there); and none (a procfs-like size of 0).
            for told in [length as u64, length as u64 / 2, length as u64 + 10, 0] {
                let read = read_sized(&File::open(&path).unwrap(), told).unwrap();
                assert!(read == bytes, "{length} bytes told {told}: read {}", read.len());
            }
        }
        // A file read from where its position is (the rest of it).
        std::fs::write(&path, b"0123456789").unwrap();
        let mut file = File::open(&path).unwrap();
        std::io::Read::read_exact(&mut file, &mut [0u8; 4]).unwrap();
        assert_eq!(read_sized(&file, 10).unwrap(), b"456789");
    }
}
