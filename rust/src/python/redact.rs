//! `Redactor` (the secret-redaction rule table compiled once) and the path sanitizer, both run
//! with the GIL released.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::redact;

/// What `redact` returns: the text, and `(rule index, replacements)` for each rule that matched.
type Redacted = (Py<PyAny>, Vec<(usize, usize)>);

/// A compiled redaction rule table (`export/redact.py` owns the rules).
#[pyclass(frozen, module = "commandcode._native", name = "Redactor")]
pub struct PyRedactor {
    inner: redact::Redactor,
}

#[pymethods]
impl PyRedactor {
    /// Compiles `patterns`; each match's `s` group is replaced by the marker of the same index.
    #[new]
    fn new(patterns: Vec<String>, markers: Vec<String>) -> PyResult<Self> {
        let inner = redact::Redactor::new(&patterns, &markers)
            .map_err(|(index, message)| PyValueError::new_err(format!("redaction rule {index}: {message}")))?;
        Ok(PyRedactor { inner })
    }

    /// `(text, [(rule index, count), ...])`: the text itself when nothing matched.
    fn redact(&self, py: Python<'_>, text: Bound<'_, pyo3::types::PyString>) -> PyResult<Redacted> {
        let borrowed = text.to_cow()?;
        let source: &str = &borrowed;
        let (replaced, counts) = py.detach(|| self.inner.redact(source));
        Ok(match replaced {
            Some(replaced) => (replaced.into_pyobject(py)?.into_any().unbind(), counts),
            None => (text.clone().into_any().unbind(), counts),
        })
    }
}

/// `text` with every absolute path sanitized against `project` and `home` (`crate::paths`);
/// `text` itself when it has none.
#[pyfunction]
#[pyo3(signature = (text, project = None, home = None))]
pub fn sanitize_paths(
    py: Python<'_>,
    text: Bound<'_, pyo3::types::PyString>,
    project: Option<String>,
    home: Option<String>,
) -> PyResult<Py<PyAny>> {
    let borrowed = text.to_cow()?;
    let source: &str = &borrowed;
    let replaced = py.detach(|| crate::paths::sanitize_text(source, project.as_deref(), home.as_deref()));
    Ok(match replaced {
        Some(replaced) => replaced.into_pyobject(py)?.into_any().unbind(),
        None => text.clone().into_any().unbind(),
    })
}

/// One absolute path, sanitized against `project` and `home`.
#[pyfunction]
#[pyo3(signature = (path, project = None, home = None))]
pub fn sanitize_path(path: &str, project: Option<&str>, home: Option<&str>) -> String {
    crate::paths::sanitize_path(path, project, home)
}
