//! The P4-16 front end of hwxdp, first brick: a small preprocessor, lexer, recursive-descent parser and typed AST for
//! the language subset P4C-XDP programs use, with the XDP and eBPF architecture models bundled as include files.
//!
//! ```
//! let program = hwxdp_p4::parse_str("drop.p4", "#include <xdp_model.p4>\nconst bit<16> ETH_IPV4 = 0x800;").unwrap();
//! let text = hwxdp_p4::pretty(&program);
//! assert!(text.contains("const bit<16> ETH_IPV4 = 0x800;"));
//! ```
//!
//! Errors are [`Diagnostic`]s shown as `file:line:col: message`; no input makes the front end panic.

pub mod ast;
mod check;
pub mod codegen;
mod diag;
pub mod ir;
mod lexer;
mod parser;
mod ppexpr;
mod preproc;
mod pretty;
pub mod stf;

use std::path::Path;

pub use ast::Program;
pub use check::check;
pub use diag::{Diagnostic, FileId, SourceFile, SourceMap, Span};
pub use lexer::MAX_WIDTH;
pub use preproc::bundled_include;
pub use pretty::{pretty, pretty_decl, pretty_expr, pretty_type};

/// Reads and parses a P4 file. `#include "f"` looks next to the including file first, then among the bundled
/// includes; `#include <f>` looks among the bundled includes first.
pub fn parse_file(path: &Path) -> Result<Program, Diagnostic> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| Diagnostic {
        file: name.clone(),
        line: 1,
        col: 1,
        message: format!("cannot read file: {}", e.kind()),
    })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        let valid = e.utf8_error().valid_up_to();
        let mut sources = SourceMap::default();
        let bytes = e.into_bytes();
        let prefix = String::from_utf8_lossy(bytes.get(..valid).unwrap_or(&[])).into_owned();
        let file = sources.add(name.clone(), prefix);
        sources.diagnostic(
            Span::new(file, valid as u32, valid as u32 + 1),
            "file is not valid utf-8",
        )
    })?;
    parse_source(&name, text, Some(path))
}

/// Reads, parses and checks a P4 file: [`parse_file`], then [`check`].
pub fn check_file(path: &Path) -> Result<ir::Checked, Diagnostic> {
    check(&parse_file(path)?)
}

/// Parses P4 text held in memory; `name` is the file name shown in diagnostics. Includes resolve against the bundled
/// include files only.
pub fn parse_str(name: &str, text: &str) -> Result<Program, Diagnostic> {
    parse_source(name, text.to_string(), None)
}

fn parse_source(name: &str, text: String, path: Option<&Path>) -> Result<Program, Diagnostic> {
    let (sources, tokens) = preproc::Preprocessor::new().run(name, text, path);
    let tokens = tokens.map_err(|e| sources.diagnostic(e.span, e.message))?;
    let decls = parser::parse_tokens(&tokens).map_err(|e| sources.diagnostic(e.span, e.message))?;
    Ok(Program { decls, sources })
}
