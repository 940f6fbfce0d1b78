//! Source positions and the one error type of the front end.
//!
//! Every token and AST node carries a [`Span`]: a byte range in one [`SourceFile`] of the [`SourceMap`]. Byte offsets
//! keep spans small and cheap to copy; they become `file:line:col` only when a [`Diagnostic`] is made.

use thiserror::Error;

/// Index of a file in a [`SourceMap`]; file 0 is the program itself, includes follow in the order they were read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(pub u32);

/// A byte range `lo..hi` in one source file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Span {
    /// The file the range lies in.
    pub file: FileId,
    /// Offset of the first byte.
    pub lo: u32,
    /// Offset one past the last byte.
    pub hi: u32,
}

impl Span {
    /// A span from `lo` to `hi` in `file`.
    pub fn new(file: FileId, lo: u32, hi: u32) -> Span {
        Span { file, lo, hi }
    }

    /// The smallest span covering `self` and `other`; `self`'s file wins when they differ (a macro use site).
    pub fn to(self, other: Span) -> Span {
        if self.file != other.file {
            return self;
        }
        Span {
            file: self.file,
            lo: self.lo.min(other.lo),
            hi: self.hi.max(other.hi),
        }
    }
}

/// One file read while parsing: the program or one of its includes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceFile {
    /// The name shown in diagnostics: the path as given, or `<bundled>/NAME` for the bundled includes.
    pub name: String,
    /// The file's text.
    pub text: String,
}

/// All files of one parse, indexed by [`FileId`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

impl SourceMap {
    /// Adds a file and returns its id.
    pub fn add(&mut self, name: String, text: String) -> FileId {
        let id = FileId(self.files.len() as u32);
        self.files.push(SourceFile { name, text });
        id
    }

    /// The file with this id, if it exists.
    pub fn file(&self, id: FileId) -> Option<&SourceFile> {
        self.files.get(id.0 as usize)
    }

    /// Every file, in id order.
    pub fn files(&self) -> &[SourceFile] {
        &self.files
    }

    /// The 1-based line and column (in characters) of a byte offset of a file; (0, 0) for an unknown file.
    pub fn line_col(&self, file: FileId, offset: u32) -> (u32, u32) {
        let Some(f) = self.file(file) else {
            return (0, 0);
        };
        let mut end = (offset as usize).min(f.text.len());
        while !f.text.is_char_boundary(end) {
            end -= 1;
        }
        let before = &f.text[..end];
        let line = before.matches('\n').count() as u32 + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let col = before[line_start..].chars().count() as u32 + 1;
        (line, col)
    }

    /// A diagnostic at the start of `span`.
    pub fn diagnostic(&self, span: Span, message: impl Into<String>) -> Diagnostic {
        let (line, col) = self.line_col(span.file, span.lo);
        let file = self
            .file(span.file)
            .map_or_else(|| "<unknown>".to_string(), |f| f.name.clone());
        Diagnostic {
            file,
            line,
            col,
            message: message.into(),
        }
    }
}

/// A front-end error: where it is and what is wrong, shown as `file:line:col: message`.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{file}:{line}:{col}: {message}")]
pub struct Diagnostic {
    /// The file the error lies in (an include's own name for errors inside includes).
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in characters.
    pub col: u32,
    /// One short lower-case sentence.
    pub message: String,
}

/// An error found before its position became a line and column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SpanError {
    pub span: Span,
    pub message: String,
}

impl SpanError {
    pub fn new(span: Span, message: impl Into<String>) -> SpanError {
        SpanError {
            span,
            message: message.into(),
        }
    }
}
