//! `Redactor`: the secret-redaction rule table compiled once, applied with the GIL released.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::redact;

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
    fn redact(&self, py: Python<'_>, text: Bound<'_, pyo3::types::PyString>) -> PyResult<(Py<PyAny>, Vec<(usize, usize)>)> {
        let borrowed = text.to_cow()?;
        let source: &str = &borrowed;
        let (replaced, counts) = py.detach(|| self.inner.redact(source));
        Ok(match replaced {
            Some(replaced) => (replaced.into_pyobject(py)?.into_any().unbind(), counts),
            None => (text.clone().into_any().unbind(), counts),
        })
    }
}
