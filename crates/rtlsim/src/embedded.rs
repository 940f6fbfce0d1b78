//! The repository's Verilog sources, embedded at build time (see the crate's `build.rs`), and what a light scan of
//! them tells: which modules each file defines, their overridable parameters and the modules they instantiate.
//!
//! The scan is lexical (comments and strings removed, then keywords and identifiers), which is enough for the
//! Verilog-2005 subset `docs/rtl.md` allows; Yosys remains the judge of the sources themselves.

use std::collections::BTreeSet;

/// One Verilog source from the repository's `rtl/` tree, embedded in the binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RtlFile {
    /// The path relative to `rtl/`, `/`-separated, e.g. `sephirot/alu.sv`.
    pub path: &'static str,
    /// The file's contents when the crate was built.
    pub text: &'static str,
}

/// Every `rtl/**/*.sv` of the repository, sorted by path.
pub fn rtl_files() -> &'static [RtlFile] {
    include!(concat!(env!("OUT_DIR"), "/rtl_files.rs"))
}

/// Every Verilator waiver file of the repository's `rtl/` tree (`rtl/**/*.vlt`), sorted by path; Verilator reads
/// them before the sources they waive.
pub fn rtl_waivers() -> &'static [RtlFile] {
    include!(concat!(env!("OUT_DIR"), "/rtl_waivers.rs"))
}

/// The directory of `rtl/` whose blocks (memories and the like) every unit shares.
pub const COMMON: &str = "common";

/// Whether `path` (relative to `rtl/`) is a file directly in `rtl/<dir>/`.
pub fn in_dir(dir: &str, path: &str) -> bool {
    path.strip_prefix(dir)
        .and_then(|p| p.strip_prefix('/'))
        .is_some_and(|name| !name.contains('/'))
}

/// Whether `path` (relative to `rtl/`) is a source of the unit in `rtl/<dir>/`: one of its own files or a block of
/// `rtl/common/`.
pub fn unit_owns(dir: &str, path: &str) -> bool {
    in_dir(dir, path) || in_dir(COMMON, path)
}

/// A module found in a Verilog source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RtlModule {
    /// The module's name.
    pub name: String,
    /// The source defining it (its path as given to [`scan`]).
    pub file: String,
    /// Its parameters that an instantiation or `chparam` may override (`parameter`, not `localparam`), in order.
    pub parameters: Vec<String>,
    /// Identifiers used in its body; the module names among them are the modules it instantiates.
    words: BTreeSet<String>,
}

/// The modules defined by `files` (path, text), in file order.
pub fn scan<'a>(files: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vec<RtlModule> {
    let mut modules = Vec::new();
    for (path, text) in files {
        let tokens = tokens(&strip_comments(text));
        let mut i = 0;
        while i < tokens.len() {
            if tokens[i] == "module" && i + 1 < tokens.len() {
                let end = tokens[i..]
                    .iter()
                    .position(|t| t == "endmodule")
                    .map_or(tokens.len(), |p| i + p);
                modules.push(module(path, &tokens[i + 1..end]));
                i = end;
            }
            i += 1;
        }
    }
    modules
}

/// The files needed to elaborate `top`: the one defining it and, transitively, those defining the modules it
/// instantiates, in the order of `files`. `None` when no file defines `top`.
pub fn sources_of<'a>(files: &[(&'a str, &'a str)], top: &str) -> Option<Vec<(&'a str, &'a str)>> {
    let modules = scan(files.iter().copied());
    let mut needed: BTreeSet<&str> = BTreeSet::new();
    let mut pending = vec![modules.iter().find(|m| m.name == top)?];
    while let Some(module) = pending.pop() {
        if !needed.insert(module.name.as_str()) {
            continue;
        }
        // A word naming another module is taken as an instantiation; a signal that happens to share a module's name
        // only adds a file that Yosys then reads and leaves out of the hierarchy.
        pending.extend(
            modules
                .iter()
                .filter(|m| m.name != module.name && module.words.contains(&m.name)),
        );
    }
    let needed_files: BTreeSet<&str> = modules
        .iter()
        .filter(|m| needed.contains(m.name.as_str()))
        .map(|m| m.file.as_str())
        .collect();
    Some(
        files
            .iter()
            .copied()
            .filter(|(path, _)| needed_files.contains(path))
            .collect(),
    )
}

/// The module whose tokens (after the `module` keyword, up to `endmodule`) are `body`.
fn module(path: &str, body: &[String]) -> RtlModule {
    let name = body.first().cloned().unwrap_or_default();
    let mut parameters = Vec::new();
    let mut i = 1;
    // Header parameters: `#( parameter integer A = 1, B = 2, parameter C = 3 )`; every item is a parameter.
    if body.get(i).map(String::as_str) == Some("#")
        && body.get(i + 1).map(String::as_str) == Some("(")
    {
        let mut depth = 0usize;
        let mut item: Vec<&str> = Vec::new();
        i += 1;
        while i < body.len() {
            let token = body[i].as_str();
            match token {
                "(" | "[" | "{" => depth += 1,
                ")" | "]" | "}" => depth = depth.saturating_sub(1),
                _ => {}
            }
            if depth == 0 || (depth == 1 && token == ",") {
                parameters.extend(assigned_name(&item));
                item.clear();
                if depth == 0 {
                    break;
                }
            } else if !(depth == 1 && token == "(" && item.is_empty()) {
                item.push(token);
            }
            i += 1;
        }
    }
    // Body parameters: `parameter [type] A = 1, B = 2;` (a localparam cannot be overridden).
    while i < body.len() {
        if body[i] == "parameter" {
            let mut depth = 0usize;
            let mut item: Vec<&str> = Vec::new();
            i += 1;
            while i < body.len() && !(depth == 0 && body[i] == ";") {
                let token = body[i].as_str();
                match token {
                    "(" | "[" | "{" => depth += 1,
                    ")" | "]" | "}" => depth = depth.saturating_sub(1),
                    _ => {}
                }
                if depth == 0 && token == "," {
                    parameters.extend(assigned_name(&item));
                    item.clear();
                } else {
                    item.push(token);
                }
                i += 1;
            }
            parameters.extend(assigned_name(&item));
        }
        i += 1;
    }
    let words = body
        .iter()
        .skip(1)
        .filter(|t| t.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
        .cloned()
        .collect();
    RtlModule {
        name,
        file: path.to_string(),
        parameters,
        words,
    }
}

/// The identifier right before the first `=` of a parameter item (`parameter integer A = 1` gives `A`).
fn assigned_name(item: &[&str]) -> Option<String> {
    let eq = item.iter().position(|t| *t == "=")?;
    let name = item[..eq].last()?;
    is_identifier(name).then(|| name.to_string())
}

/// Whether `token` is a plain Verilog identifier.
fn is_identifier(token: &str) -> bool {
    token.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && token
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

/// `text` with `//` and `/* */` comments and the contents of string literals replaced by spaces.
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
                out.push(' ');
            }
            '"' => {
                let mut escaped = false;
                for c in chars.by_ref() {
                    if !escaped && c == '"' {
                        break;
                    }
                    escaped = !escaped && c == '\\';
                }
                out.push(' ');
            }
            _ => out.push(c),
        }
    }
    out
}

/// Identifiers and keywords (with `$` and `` ` `` allowed inside, so `$clog2` and `` `default_nettype `` stay whole),
/// numbers, and every other non-space character as a token of its own.
fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() || c == '_' || c == '$' || c == '`' || c == '\'' {
            current.push(c);
            continue;
        }
        if !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        if !c.is_whitespace() {
            out.push(c.to_string());
        }
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOP: &str = "`default_nettype none
// top: module fake in a comment
module top #(
  parameter integer LANES = 4,   // lanes, (comment with a comma)
  parameter integer AW = $clog2(LANES, 2), DEPTH = 8,
  parameter [7:0] MASK = 8'hff
) (
  input wire logic clk_i
);
  localparam integer Hidden = 2;
  parameter integer BODY = 1, BODY2 = 2;
  leaf #(.W(LANES)) u_leaf (.clk_i(clk_i));
  initial $display(\"mid endmodule\");
endmodule
";
    const LEAF: &str = "module leaf #(parameter W = 1) (input wire logic clk_i);\n  /* module ghost; */\nendmodule\n";
    const OTHER: &str = "module other (input wire logic a_i);\nendmodule\n";

    #[test]
    fn scan_finds_modules_parameters_and_no_commented_ones() {
        let modules = scan([("a/top.sv", TOP), ("a/leaf.sv", LEAF)]);
        let names: Vec<&str> = modules.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, ["top", "leaf"]);
        assert_eq!(
            modules[0].parameters,
            ["LANES", "AW", "DEPTH", "MASK", "BODY", "BODY2"]
        );
        assert_eq!(modules[1].parameters, ["W"]);
        assert_eq!(modules[1].file, "a/leaf.sv");
    }

    #[test]
    fn sources_of_follows_instantiations_only() {
        let files = [
            ("a/leaf.sv", LEAF),
            ("a/other.sv", OTHER),
            ("a/top.sv", TOP),
        ];
        let needed: Vec<&str> = sources_of(&files, "top")
            .expect("top is defined")
            .iter()
            .map(|(path, _)| *path)
            .collect();
        assert_eq!(needed, ["a/leaf.sv", "a/top.sv"]);
        let needed: Vec<&str> = sources_of(&files, "leaf")
            .expect("leaf is defined")
            .iter()
            .map(|(path, _)| *path)
            .collect();
        assert_eq!(needed, ["a/leaf.sv"]);
        assert!(sources_of(&files, "ghost").is_none());
    }

    #[test]
    fn the_repository_sources_are_embedded() {
        let files = rtl_files();
        let alu = files
            .iter()
            .find(|f| f.path == "sephirot/alu.sv")
            .expect("rtl/sephirot/alu.sv is embedded");
        assert!(alu.text.contains("module alu"));
        let sephirot = scan(files.iter().map(|f| (f.path, f.text)))
            .into_iter()
            .find(|m| m.name == "sephirot")
            .expect("the core's module is found");
        assert_eq!(
            sephirot.parameters,
            ["LANES", "IMEM_BUNDLES", "STACK_FRAMES"]
        );
    }
}
