//! Rust core of `commandcode`: the hot paths behind the Python package.
//!
//! - [`scan`]: torn-line-tolerant scanning of a Command Code v3 transcript into entry envelopes.
//! - [`json`]: a validating JSON cursor that skips payloads at memory speed.
//! - [`json_text`]: JSON string and float literals written exactly as Python's `json` writes them.
//! - [`envelope`]: what one line is: its type, ids and the few fields the tree needs.
//! - [`tree`]: the session tree (leaf, active path, labels, context plan) over scanned envelopes.
//! - [`index`]: the index sidecar (a cached scan, reused when the transcript is unchanged or appended).
//! - [`paths`]: path sanitizing of text that leaves (`./rel`, `~/…`, `<system-path>/…`).
//! - [`redact`]: secret redaction, a caller's rule table applied to text.
//! - [`store`]: the shared blake3+zstd backup store and verified, all-or-nothing restore.
//! - [`text_extract`]: the searchable texts of transcript lines (the catalog's full-text index).
//! - [`folder_stat`]: a project folder's file signatures against a snapshot (catalog freshness).
//! - [`temp_names`]: the temp-file-shaped names of many folders in one pass (a killed write's leftovers).
//! - [`error`]: the one error type of the crate.
//!
//! Nothing here prints; everything takes paths or bytes and returns plain Rust values. The
//! Python binding lives in `python/` behind the `python` feature.

pub mod envelope;
pub mod error;
pub mod folder_stat;
pub mod fsopen;
pub mod index;
pub mod json;
pub mod json_text;
pub mod layout;
pub mod paths;
pub mod redact;
pub mod scan;
pub mod store;
pub mod temp_names;
pub mod text_extract;
pub mod tree;

#[cfg(feature = "python")]
mod python;

pub use envelope::{EntryKind, Extra, Role};
pub use error::{Error, Result};
pub use scan::{scan_bytes, scan_file, Entry, Header, ScanReport, SkipReason, SkippedLine, SourceFormat};
pub use tree::{ContextPlan, SessionTree};
