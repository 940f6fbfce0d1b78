//! `-o/--out` of the commands that write one file (`p4c`, `synth`): like the commands that write several (`gen`,
//! `compile`, `run`, `man`), it takes a directory, and it also takes the file itself.

use anyhow::Result;
use std::path::{Path, PathBuf};

/// The file to write for `-o/--out PATH`: `PATH/default_name` when PATH is an existing directory or is written with a
/// trailing `/` (the directory is created then), else PATH itself.
pub fn file_or_dir(path: &Path, default_name: &str) -> Result<PathBuf> {
    let dir_form = path.to_string_lossy().ends_with(std::path::MAIN_SEPARATOR);
    if dir_form {
        crate::common::create_dir(path)?;
    }
    if dir_form || path.is_dir() {
        Ok(path.join(default_name))
    } else {
        Ok(path.to_path_buf())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_gets_the_default_name_and_a_file_is_itself() {
        let root = std::env::temp_dir().join(format!("hwxdp-output-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).unwrap();
        // An existing directory.
        assert_eq!(file_or_dir(&root, "x.o").unwrap(), root.join("x.o"));
        // A new directory, said with a trailing slash, is created.
        let fresh = root.join("fresh");
        let with_slash = PathBuf::from(format!("{}/", fresh.display()));
        assert_eq!(
            file_or_dir(&with_slash, "x.o").unwrap(),
            with_slash.join("x.o")
        );
        assert!(fresh.is_dir());
        // Anything else is the file, existing or not.
        let file = root.join("y.o");
        assert_eq!(file_or_dir(&file, "x.o").unwrap(), file);
        std::fs::write(&file, b"").unwrap();
        assert_eq!(file_or_dir(&file, "x.o").unwrap(), file);
        let _ = std::fs::remove_dir_all(&root);
    }
}
