//! The `commandcode._native` extension module: thin wrappers that convert arguments, run the
//! core with the GIL released, and convert results. No logic lives here.
//!
//! The classes are created on first use (the module's `__getattr__`, or the first instance a
//! function returns), not when the module loads: creating the eight types cost a warm session
//! open, which needs only `SessionIndex`, a measurable part of its time.

mod errors;
mod folder_stat;
mod json_encode;
mod listing;
mod prepared;
mod redact;
mod session_index;
mod stat_scan;
mod store;
mod text_extract;

use pyo3::prelude::*;

#[pymodule(gil_used = false)]
#[pyo3(name = "_native")]
fn native_module(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add("__version__", env!("CARGO_PKG_VERSION"))?;
    module.add("SUPPORTED_VERSION", crate::scan::SUPPORTED_VERSION)?;
    // set, not added: `add_function` would list them in `__all__`, which names what the module exports
    module.setattr("__getattr__", wrap_pyfunction!(class_on_first_use, module)?)?;
    module.setattr("__dir__", wrap_pyfunction!(names_with_lazy_classes, module)?)?;
    module.add_function(wrap_pyfunction!(session_index::scan_session, module)?)?;
    module.add("MAX_BACKUP_SIZE", crate::store::MAX_BACKUP_SIZE)?;
    module.add_function(wrap_pyfunction!(store::check_restore, module)?)?;
    module.add_function(wrap_pyfunction!(prepared::prepare_restore, module)?)?;
    module.add_function(wrap_pyfunction!(store::recover_restore, module)?)?;
    module.add_function(wrap_pyfunction!(store::free_space, module)?)?;
    module.add_function(wrap_pyfunction!(store::content_id, module)?)?;
    module.add_function(wrap_pyfunction!(store::scan_tree_items, module)?)?;
    module.add_function(wrap_pyfunction!(json_encode::json_dumps, module)?)?;
    module.add_function(wrap_pyfunction!(json_encode::json_encode_line, module)?)?;
    module.add_function(wrap_pyfunction!(json_encode::json_encode_entry, module)?)?;
    module.add_function(wrap_pyfunction!(redact::sanitize_paths, module)?)?;
    module.add_function(wrap_pyfunction!(redact::sanitize_path, module)?)?;
    module.add_function(wrap_pyfunction!(folder_stat::folder_changes, module)?)?;
    module.add_function(wrap_pyfunction!(listing::listing_rows_of, module)?)?;
    module.add_function(wrap_pyfunction!(listing::fingerprints_of, module)?)?;
    module.add_function(wrap_pyfunction!(listing::names_of_files, module)?)?;
    module.add_function(wrap_pyfunction!(listing::fork_source_of, module)?)?;
    module.add_function(wrap_pyfunction!(text_extract::extract_texts, module)?)?;
    module.add_function(wrap_pyfunction!(text_extract::search_texts, module)?)?;
    module.add_function(wrap_pyfunction!(text_extract::texts_at, module)?)?;
    module.add_function(wrap_pyfunction!(text_extract::fold_text, module)?)?;
    module.add("MAX_TOOL_CHARS", crate::text_extract::MAX_TOOL_CHARS)?;
    module.add("MAX_RESULT_CHARS", crate::text_extract::MAX_RESULT_CHARS)?;
    // `__all__` names the classes from the start (as the stub does), though they are made on first use
    let all = module.index()?;
    for name in LAZY_CLASSES {
        all.append(name)?;
    }
    Ok(())
}

/// The classes [`class_on_first_use`] adds, by their Python names.
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

/// The module's `__getattr__` (PEP 562): adds a class to the module when it is first asked for.
#[pyfunction]
#[pyo3(pass_module, name = "__getattr__")]
fn class_on_first_use<'py>(module: &Bound<'py, PyModule>, name: &str) -> PyResult<Bound<'py, PyAny>> {
    let py = module.py();
    // set, not `add_class`: that would list the name in `__all__` a second time
    let class = match name {
        "SessionIndex" => py.get_type::<session_index::SessionIndex>(),
        "ObjectStore" => py.get_type::<store::PyObjectStore>(),
        "StatTable" => py.get_type::<stat_scan::PyStatTable>(),
        "FileState" => py.get_type::<store::FileState>(),
        "RestoreItem" => py.get_type::<store::RestoreItem>(),
        "RestorePlan" => py.get_type::<store::RestorePlan>(),
        "PreparedRestore" => py.get_type::<prepared::PreparedRestore>(),
        "Redactor" => py.get_type::<redact::PyRedactor>(),
        _ => {
            return Err(pyo3::exceptions::PyAttributeError::new_err(format!(
                "module 'commandcode._native' has no attribute '{name}'"
            )))
        }
    };
    module.setattr(name, &class)?;
    Ok(class.into_any())
}

/// The module's `__dir__` (PEP 562): its names, the classes not yet created included.
#[pyfunction]
#[pyo3(pass_module, name = "__dir__")]
fn names_with_lazy_classes(module: &Bound<'_, PyModule>) -> PyResult<Vec<String>> {
    let mut names: Vec<String> = module.dict().keys().extract()?;
    names.extend(LAZY_CLASSES.iter().map(|name| (*name).to_owned()));
    names.sort_unstable();
    names.dedup();
    Ok(names)
}
