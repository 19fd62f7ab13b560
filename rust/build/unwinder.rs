//! Links the unwinder into the extension module (libgcc's `libgcc_eh.a`) instead of depending on
//! `libgcc_s.so.1`, for a build with the platform's default linker.
//!
//! Rust's std on `*-linux-gnu` names `libgcc_s.so.1` for unwinding (panics, backtraces), and
//! CPython does not load it, so every `import commandcode` made the loader find, map and relocate
//! one more library: ~0.13 ms and 8 page faults of issue 30's 3 ms warm open. The wheel never had
//! it (zig links its own libunwind: the wheel's module needs only libc, libpthread and libdl), so
//! an editable or source build now carries its unwinder the same way. The archive's objects are
//! all kept (`--whole-archive`), so they define every `_Unwind_*` std asks for and `--as-needed`
//! (rustc's default) drops `libgcc_s`; the module's version script keeps them private. A build
//! with another linker configured (`RUSTC_LINKER`: maturin's zig, cross linkers) or a compiler
//! that has no `libgcc_eh.a` keeps the shared libgcc_s as before.

use std::path::PathBuf;
use std::process::Command;

pub fn link_statically() {
    println!("cargo:rerun-if-env-changed=RUSTC_LINKER");
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    if var("CARGO_CFG_TARGET_OS") != "linux" || var("CARGO_CFG_TARGET_ENV") != "gnu" || var("TARGET") != var("HOST") {
        return;
    }
    if std::env::var_os("RUSTC_LINKER").is_some() {
        return;
    }
    let Some(archive) = libgcc_eh() else { return };
    println!("cargo:rustc-link-arg-cdylib=-Wl,--whole-archive");
    println!("cargo:rustc-link-arg-cdylib={}", archive.display());
    println!("cargo:rustc-link-arg-cdylib=-Wl,--no-whole-archive");
}

/// Where the default linker driver (`cc`, the one rustc links with) keeps `libgcc_eh.a`.
fn libgcc_eh() -> Option<PathBuf> {
    let output = Command::new("cc").arg("-print-file-name=libgcc_eh.a").output().ok()?;
    let path = PathBuf::from(String::from_utf8(output.stdout).ok()?.trim());
    // A driver without the file prints the bare name back.
    (output.status.success() && path.is_absolute() && path.is_file()).then_some(path)
}
