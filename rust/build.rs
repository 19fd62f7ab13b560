//! Build script: gives the wheel's launchers (`wheel-data/scripts/`) their executable bit, and
//! links the unwinder into the module where the default linker builds it (`build/unwinder.rs`).
//!
//! `maturin sdist` stores every file with mode 0644, and a wheel built from that sdist packs the
//! scripts as it finds them, so pip would install `commandcode` and `cmd` without the execute
//! bit ("Permission denied"). The build runs before maturin packs the wheel, so setting the bit
//! here fixes every wheel built from an sdist; in a git checkout the files already have it.

use std::path::PathBuf;

#[path = "build/unwinder.rs"]
mod unwinder;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=build/unwinder.rs");
    unwinder::link_statically();
    let Some(manifest_dir) = std::env::var_os("CARGO_MANIFEST_DIR") else { return };
    let scripts = PathBuf::from(manifest_dir).join("../wheel-data/scripts");
    println!("cargo:rerun-if-changed={}", scripts.display());
    make_executable(&scripts);
}

#[cfg(unix)]
fn make_executable(folder: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;

    let Ok(entries) = std::fs::read_dir(folder) else { return };
    for entry in entries.flatten() {
        let Ok(metadata) = entry.metadata() else { continue };
        let mode = metadata.permissions().mode();
        if metadata.is_file() && mode & 0o111 != 0o111 {
            // Best effort: a read-only source tree keeps its modes and the wheel its 0644 scripts.
            let _ = std::fs::set_permissions(entry.path(), std::fs::Permissions::from_mode(mode | 0o111));
        }
    }
}

#[cfg(not(unix))]
fn make_executable(_folder: &std::path::Path) {}
