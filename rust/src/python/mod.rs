//! The `commandcode._native` extension module: thin wrappers that convert arguments, run the
//! core with the GIL released, and convert results. No logic lives here.
//!
//! The classes and the functions a warm session open does not call are created on first use
//! (the module's `__getattr__`, or the first instance a function returns), not when the module
//! loads: a warm open needs only `scan_session` and `SessionIndex`, and making the other eight
//! types and 20 functions was a measurable part of its time (the functions alone ~0.06M
//! instructions, callgrind, issue 30).

mod errors;
mod folder_stat;
mod json_decode;
mod json_encode;
mod listing;
mod prepared;
mod redact;
mod session_index;
mod stat_scan;
mod store;
mod temp_names;
mod text_extract;

use pyo3::prelude::*;
use pyo3::types::PyList;

#[pymodule(gil_used = false)]
#[pyo3(name = "_native")]
fn native_module(module: &Bound<'_, PyModule>) -> PyResult<()> {
    // `__all__` is made whole first: `add` would look it up, and its first lookup fails (an
    // AttributeError made and fetched: ~0.07M instructions of a warm open, callgrind, issue 30).
    // It names the lazy classes and functions from the start (as the stub does), though they
    // are made on first use.
    let names = EAGER_NAMES.iter().chain(&LAZY_CLASSES).chain(&LAZY_FUNCTIONS);
    module.setattr("__all__", PyList::new(module.py(), names)?)?;
    module.setattr("__version__", env!("CARGO_PKG_VERSION"))?;
    module.setattr("SUPPORTED_VERSION", crate::scan::SUPPORTED_VERSION)?;
    module.setattr("__getattr__", wrap_pyfunction!(made_on_first_use, module)?)?;
    module.setattr("__dir__", wrap_pyfunction!(names_with_lazy_ones, module)?)?;
    module.setattr("scan_session", wrap_pyfunction!(session_index::scan_session, module)?)?;
    module.setattr("MAX_BACKUP_SIZE", crate::store::MAX_BACKUP_SIZE)?;
    module.setattr("MAX_TOOL_CHARS", crate::text_extract::MAX_TOOL_CHARS)?;
    module.setattr("MAX_RESULT_CHARS", crate::text_extract::MAX_RESULT_CHARS)?;
    Ok(())
}

/// What the module sets when it loads and exports (`__getattr__` and `__dir__` are set, not
/// exported).
const EAGER_NAMES: [&str; 6] =
    ["__version__", "SUPPORTED_VERSION", "scan_session", "MAX_BACKUP_SIZE", "MAX_TOOL_CHARS", "MAX_RESULT_CHARS"];

/// The classes [`made_on_first_use`] adds, by their Python names.
const LAZY_CLASSES: [&str; 8] = [
    "SessionIndex",
    "ObjectStore",
    "StatTable",
    "FileState",
    "RestoreItem",
    "RestorePlan",
    "PreparedRestore",
    "Redactor",
];

/// The functions [`made_on_first_use`] adds, by their Python names.
const LAZY_FUNCTIONS: [&str; 22] = [
    "check_restore",
    "prepare_restore",
    "settle_restores",
    "recover_restore",
    "free_space",
    "content_id",
    "scan_tree_items",
    "json_dumps",
    "json_encode_line",
    "json_encode_entry",
    "sanitize_paths",
    "sanitize_path",
    "folder_changes",
    "listing_rows_of",
    "fingerprints_of",
    "names_of_files",
    "fork_source_of",
    "extract_texts",
    "search_texts",
    "texts_at",
    "fold_text",
    "names_like",
];

/// The module's `__getattr__` (PEP 562): adds a class or a function to the module when it is
/// first asked for.
#[pyfunction]
#[pyo3(pass_module, name = "__getattr__")]
fn made_on_first_use<'py>(module: &Bound<'py, PyModule>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    let py = module.py();
    // set, not `add_class`/`add_function`: those would list the name in `__all__` a second time
    let value = match name {
        "SessionIndex" => py.get_type::<session_index::SessionIndex>().into_any(),
        "ObjectStore" => py.get_type::<store::PyObjectStore>().into_any(),
        "StatTable" => py.get_type::<stat_scan::PyStatTable>().into_any(),
        "FileState" => py.get_type::<store::FileState>().into_any(),
        "RestoreItem" => py.get_type::<store::RestoreItem>().into_any(),
        "RestorePlan" => py.get_type::<store::RestorePlan>().into_any(),
        "PreparedRestore" => py.get_type::<prepared::PreparedRestore>().into_any(),
        "Redactor" => py.get_type::<redact::PyRedactor>().into_any(),
        "check_restore" => wrap_pyfunction!(store::check_restore, module)?.into_any(),
        "prepare_restore" => wrap_pyfunction!(prepared::prepare_restore, module)?.into_any(),
        "settle_restores" => wrap_pyfunction!(prepared::settle_restores, module)?.into_any(),
        "recover_restore" => wrap_pyfunction!(store::recover_restore, module)?.into_any(),
        "free_space" => wrap_pyfunction!(store::free_space, module)?.into_any(),
        "content_id" => wrap_pyfunction!(store::content_id, module)?.into_any(),
        "scan_tree_items" => wrap_pyfunction!(store::scan_tree_items, module)?.into_any(),
        "json_dumps" => wrap_pyfunction!(json_encode::json_dumps, module)?.into_any(),
        "json_encode_line" => wrap_pyfunction!(json_encode::json_encode_line, module)?.into_any(),
        "json_encode_entry" => wrap_pyfunction!(json_encode::json_encode_entry, module)?.into_any(),
        "sanitize_paths" => wrap_pyfunction!(redact::sanitize_paths, module)?.into_any(),
        "sanitize_path" => wrap_pyfunction!(redact::sanitize_path, module)?.into_any(),
        "folder_changes" => wrap_pyfunction!(folder_stat::folder_changes, module)?.into_any(),
        "listing_rows_of" => wrap_pyfunction!(listing::listing_rows_of, module)?.into_any(),
        "fingerprints_of" => wrap_pyfunction!(listing::fingerprints_of, module)?.into_any(),
        "names_of_files" => wrap_pyfunction!(listing::names_of_files, module)?.into_any(),
        "fork_source_of" => wrap_pyfunction!(listing::fork_source_of, module)?.into_any(),
        "extract_texts" => wrap_pyfunction!(text_extract::extract_texts, module)?.into_any(),
        "search_texts" => wrap_pyfunction!(text_extract::search_texts, module)?.into_any(),
        "texts_at" => wrap_pyfunction!(text_extract::texts_at, module)?.into_any(),
        "fold_text" => wrap_pyfunction!(text_extract::fold_text, module)?.into_any(),
        "names_like" => wrap_pyfunction!(temp_names::names_like, module)?.into_any(),
        _ => {
            return Err(pyo3::exceptions::PyAttributeError::new_err(format!(
                "module 'commandcode._native' has no attribute '{name}'"
            )))
        }
    };
    module.setattr(name, &value)?;
    Ok(value)
}

/// The module's `__dir__` (PEP 562): its names, the classes and functions not yet made included.
#[pyfunction]
#[pyo3(pass_module, name = "__dir__")]
fn names_with_lazy_ones(module: &Bound<'_, PyModule>) -> PyResult<Vec<String>> {
    let mut names: Vec<String> = module.dict().keys().extract()?;
    names.extend(LAZY_CLASSES.iter().chain(&LAZY_FUNCTIONS).map(|name| (*name).to_owned()));
    names.sort_unstable();
    names.dedup();
    Ok(names)
}
