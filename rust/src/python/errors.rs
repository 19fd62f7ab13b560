//! The single mapping from [`crate::Error`] to Python exceptions. The exception classes are
//! defined in Python (`commandcode.errors`), so the whole hierarchy lives in one place.

use crate::Error;
use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use pyo3::PyTypeInfo;

pyo3::import_exception!(commandcode.errors, UnsupportedFormatError);
pyo3::import_exception!(commandcode.errors, SessionChangedError);
pyo3::import_exception!(commandcode.errors, CommandcodeError);
pyo3::import_exception!(commandcode.errors, BackupIntegrityError);
pyo3::import_exception!(commandcode.errors, RestoreError);
pyo3::import_exception!(commandcode.errors, ChangedOutsideError);

impl From<Error> for PyErr {
    fn from(error: Error) -> PyErr {
        let message = error.to_string();
        match error {
            Error::Io { path, source } => {
                let errno = source.raw_os_error().unwrap_or(0);
                PyOSError::new_err((errno, strerror(&source), path.display().to_string()))
            }
            Error::NewerVersion { .. } => UnsupportedFormatError::new_err(message),
            Error::Stale { .. } => SessionChangedError::new_err(message),
            Error::ObjectMissing { .. } | Error::ObjectCorrupt { .. } => BackupIntegrityError::new_err(message),
            Error::UnsupportedStore { .. } => UnsupportedFormatError::new_err(message),
            Error::RestoreRefused { problems } => restore_refused(message, &problems),
            Error::RestoreFailed { .. }
            | Error::RestoreInProgress { .. }
            | Error::JournalInvalid { .. }
            | Error::JournalUntrusted { .. }
            | Error::RecoveryIncomplete { .. } => RestoreError::new_err(message),
            #[allow(unreachable_patterns, reason = "Error is non_exhaustive")]
            _ => CommandcodeError::new_err(message),
        }
    }
}

/// The words of an I/O error as Python's `strerror` has them: without the ` (os error N)` that
/// Rust's `Display` adds, which would otherwise reach every one-line error and warning.
fn strerror(source: &std::io::Error) -> String {
    let text = source.to_string();
    match source.raw_os_error() {
        Some(code) => text.strip_suffix(&format!(" (os error {code})")).map_or_else(|| text.clone(), str::to_owned),
        None => text,
    }
}

/// A refused restore: `BackupIntegrityError` when only backups are bad, `ChangedOutsideError`
/// when only outside edits stop it, else `RestoreError`; `.problems` holds
/// `(target, code, message)` for each failing file, passed as the classes' `problems=` argument.
fn restore_refused(message: String, problems: &[crate::store::RestoreProblem]) -> PyErr {
    use crate::store::ProblemKind;
    let rows: Vec<(String, &'static str, String)> = problems
        .iter()
        .map(|problem| (problem.target.display().to_string(), problem.kind.code(), problem.to_string()))
        .collect();
    pyo3::Python::attach(|py| {
        let class = if problems.iter().all(|problem| problem.kind.is_integrity()) {
            BackupIntegrityError::type_object(py)
        } else if problems.iter().all(|problem| problem.kind == ProblemKind::ChangedOutside) {
            ChangedOutsideError::type_object(py)
        } else {
            RestoreError::type_object(py)
        };
        let kwargs = PyDict::new(py);
        let instance = kwargs.set_item("problems", rows).and_then(|()| class.call((message,), Some(&kwargs)));
        match instance {
            Ok(instance) => PyErr::from_value(instance),
            Err(error) => error,
        }
    })
}
