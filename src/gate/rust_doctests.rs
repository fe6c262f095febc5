//! Rust doc tests read from a library file's text: which examples rustdoc runs as
//! checks, by the item they document, so the merge lane can tell a doc test the change
//! deleted or stopped running (fenced `ignore`, `no_run`, `compile_fail`,
//! `should_panic` or as another language) from one it only moved (its line, part of
//! rustdoc's name, shifts with any edit above it). Pure: texts in, names out.
//!
//! Read: `///` blocks (the item after them, its path through the `mod`, `impl` and
//! `trait` blocks around it and the file's module), `//!` blocks (the module they are
//! in). Not read: `/** */` and `#[doc = "…"]` docs, indented code blocks, docs included
//! from other files (`#![doc = include_str!("../README.md")]`).

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;

use super::touched::rust_code_only;

/// How many lines after a doc comment its item may start (attributes between).
const ITEM_LINES: usize = 12;

/// One example rustdoc runs as a check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocTest {
    /// The item's path as rustdoc names it (`sub`, `m::S::f`; empty for the crate's own
    /// docs).
    pub item: String,
    /// The line of its opening fence (1-based), as in rustdoc's name.
    pub line: usize,
}

impl DocTest {
    /// rustdoc's name for it in the file `path`: `src/lib.rs - sub (line 10)`.
    pub fn name(&self, path: &str) -> String {
        if self.item.is_empty() {
            format!("{path} - (line {})", self.line)
        } else {
            format!("{path} - {} (line {})", self.item, self.line)
        }
    }
}

/// Whether `path` can hold doc tests cargo runs: a source file of a library, not under
/// `tests`, `examples`, `benches` or `src/bin`, not a `main.rs` or `build.rs`.
pub fn in_a_library(path: &str) -> bool {
    let parts: Vec<&str> = path.split('/').collect();
    let file = parts.last().copied().unwrap_or_default();
    std::path::Path::new(path)
        .extension()
        .is_some_and(|extension| extension == "rs")
        && !matches!(file, "main.rs" | "build.rs")
        && !parts[..parts.len().saturating_sub(1)]
            .iter()
            .any(|part| matches!(*part, "tests" | "examples" | "benches" | "bin"))
}

/// The examples of `text` (the file `path` of a library) that rustdoc runs as checks, in
/// order.
pub fn checking_doc_tests(path: &str, text: &str) -> Vec<DocTest> {
    if !in_a_library(path) || !text.contains("```") && !text.contains("~~~") {
        return Vec::new();
    }
    let code = rust_code_only(text);
    let blocks = named_blocks(code.as_bytes());
    let module = file_module(path);
    let lines: Vec<(usize, &str)> = {
        let mut at = 0;
        text.split('\n')
            .map(|line| {
                let start = at;
                at += line.len() + 1;
                (start, line)
            })
            .collect()
    };
    let mut found = Vec::new();
    let mut index = 0;
    while index < lines.len() {
        let (start, line) = lines[index];
        let Some(kind) = doc_kind(line) else {
            index += 1;
            continue;
        };
        let first = index;
        while index < lines.len() && doc_kind(lines[index].1) == Some(kind) {
            index += 1;
        }
        let item = match kind {
            DocKind::Inner => path_at(&module, &blocks, start, None),
            DocKind::Outer => {
                // The item: the first line after the doc comment that declares one,
                // across attributes (a few lines), before the next doc comment.
                let Some(name) = lines[index..]
                    .iter()
                    .take(ITEM_LINES)
                    .take_while(|(_, l)| doc_kind(l).is_none())
                    .find_map(|(_, l)| item_name(l))
                else {
                    continue;
                };
                path_at(&module, &blocks, start, Some(name))
            }
        };
        for line in checking_fences(&lines[first..index]) {
            found.push(DocTest {
                item: item.clone(),
                line: first + line + 1,
            });
        }
    }
    found
}

/// The doc tests of `base` that `head` no longer runs: per item, those beyond the
/// number the head still runs (a moved example keeps its item; a deleted or fenced-off
/// one lowers the count).
pub fn gone(path: &str, base: &str, head: Option<&str>) -> Vec<DocTest> {
    let base = checking_doc_tests(path, base);
    if base.is_empty() {
        return Vec::new();
    }
    let mut at_head: BTreeMap<String, usize> = BTreeMap::new();
    for test in checking_doc_tests(path, head.unwrap_or_default()) {
        *at_head.entry(test.item).or_default() += 1;
    }
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    base.iter()
        .filter(|test| {
            let nth = seen.entry(&test.item).or_default();
            *nth += 1;
            *nth > at_head.get(&test.item).copied().unwrap_or(0)
        })
        .cloned()
        .collect()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DocKind {
    /// `///`: the item after it.
    Outer,
    /// `//!`: the module it is in.
    Inner,
}

fn doc_kind(line: &str) -> Option<DocKind> {
    let trimmed = line.trim_start();
    if trimmed.starts_with("///") && !trimmed.starts_with("////") {
        Some(DocKind::Outer)
    } else if trimmed.starts_with("//!") {
        Some(DocKind::Inner)
    } else {
        None
    }
}

/// The item `line` declares (`fn sub`, `pub struct S`, `impl<T> S<T>`), if it does.
fn item_name(line: &str) -> Option<String> {
    static ITEM: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(concat!(
            r"^\s*(?:pub(?:\s*\([^)]*\))?\s+)?(?:default\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+(?:\x22[^\x22]*\x22\s+)?)?",
            r"(?:fn|struct|enum|trait|type|const|static|mod|union|macro_rules\s*!)\s+([A-Za-z_][A-Za-z0-9_]*)",
        ))
        .expect("a valid pattern")
    });
    if let Some(found) = ITEM.captures(line) {
        return Some(found[1].to_owned());
    }
    let trimmed = line.trim_start();
    let after = trimmed
        .strip_prefix("impl")
        .filter(|rest| rest.starts_with(['<', ' ']))?;
    Some(impl_type(after))
}

/// The type an `impl` block is for (after `impl`): the last identifier of its path,
/// generics left out (`impl<T> fmt::Display for Wrapper<T>` is `Wrapper`).
fn impl_type(after: &str) -> String {
    let mut depth = 0usize;
    let mut header = String::new();
    for c in after.chars() {
        match c {
            '<' => depth += 1,
            '>' => depth = depth.saturating_sub(1),
            '{' if depth == 0 => break,
            _ if depth == 0 => header.push(c),
            _ => {}
        }
    }
    let header = header.split(" where ").next().unwrap_or_default();
    let target = header.rsplit(" for ").next().unwrap_or_default();
    target
        .trim()
        .rsplit("::")
        .next()
        .unwrap_or_default()
        .trim_start_matches(['&', '*'])
        .trim_start_matches("mut ")
        .trim()
        .to_owned()
}

/// `mod`, `impl` and `trait` blocks of the code (comments and literals blanked): their
/// name and byte range.
fn named_blocks(code: &[u8]) -> Vec<(String, std::ops::Range<usize>)> {
    static OPENING: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(
            r"(?m)^\s*(?:pub(?:\s*\([^)]*\))?\s+)?(?:unsafe\s+)?(mod|trait|impl)\b([^;{]*)\{",
        )
        .expect("a valid pattern")
    });
    let text = String::from_utf8_lossy(code);
    OPENING
        .captures_iter(&text)
        .filter_map(|found| {
            let whole = found.get(0)?;
            let name = match &found[1] {
                "impl" => impl_type(&found[2]),
                _ => found[2]
                    .split(|c: char| !c.is_alphanumeric() && c != '_')
                    .find(|word| !word.is_empty())?
                    .to_owned(),
            };
            let end = super::rust_base::group_end(text.as_bytes(), whole.end() - 1);
            // From the keyword: the blanked doc comment above it, which `^\s*` may
            // cross, documents the block's own item, not one inside it.
            Some((name, found.get(1)?.start()..end))
        })
        .collect()
}

/// The module of a file from its path: `src/a/b.rs` and `src/a/b/mod.rs` are `a::b`,
/// `src/lib.rs` the crate (no segment).
fn file_module(path: &str) -> Vec<String> {
    let parts: Vec<&str> = path.split('/').collect();
    let after_src = parts
        .iter()
        .rposition(|part| *part == "src")
        .map_or(&parts[parts.len().saturating_sub(1)..], |at| {
            &parts[at + 1..]
        });
    let mut module: Vec<String> = after_src
        .iter()
        .map(|part| part.trim_end_matches(".rs").to_owned())
        .collect();
    if module
        .last()
        .is_some_and(|last| matches!(last.as_str(), "lib" | "mod"))
    {
        module.pop();
    }
    module
}

/// The path of the item at `offset`: the file's module, the blocks around it, then
/// `name`.
fn path_at(
    module: &[String],
    blocks: &[(String, std::ops::Range<usize>)],
    offset: usize,
    name: Option<String>,
) -> String {
    let mut path: Vec<String> = module.to_vec();
    path.extend(
        blocks
            .iter()
            .filter(|(_, range)| range.contains(&offset))
            .map(|(block, _)| block.clone()),
    );
    path.extend(name);
    path.join("::")
}

/// The lines (0-based, in `lines`) of the opening fences of the examples rustdoc runs as
/// checks among a doc comment's lines.
fn checking_fences(lines: &[(usize, &str)]) -> Vec<usize> {
    let mut found = Vec::new();
    let mut open: Option<(char, usize)> = None;
    for (index, (_, line)) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let content = trimmed.get(3..).unwrap_or_default().trim_start().trim_end();
        let fence = content.chars().next().filter(|c| matches!(c, '`' | '~'));
        let Some(mark) = fence else { continue };
        let count = content.chars().take_while(|c| *c == mark).count();
        if count < 3 {
            continue;
        }
        let info = &content[count * mark.len_utf8()..];
        if let Some((opened, length)) = open {
            if opened == mark && count >= length && info.trim().is_empty() {
                open = None;
            }
        } else {
            open = Some((mark, count));
            if runs_as_a_check(info) {
                found.push(index);
            }
        }
    }
    found
}

/// Whether rustdoc runs an example with this info string and a failing assertion in it
/// fails: Rust (`rust`, or no word that is not one of rustdoc's attributes) and none of
/// `ignore`, `ignore-…`, `no_run`, `compile_fail`, `should_panic`.
fn runs_as_a_check(info: &str) -> bool {
    let mut rust = false;
    let mut other = false;
    for token in info
        .split(|c: char| c == ',' || c.is_whitespace())
        .filter(|t| !t.is_empty())
    {
        match token {
            "rust" => rust = true,
            "ignore" | "no_run" | "compile_fail" | "should_panic" => return false,
            _ if token.starts_with("ignore-") => return false,
            "test_harness" | "standalone_crate" | "allow_fail" => {}
            _ if token.starts_with("edition")
                || token.starts_with('{')
                || token.starts_with('.') => {}
            _ => other = true,
        }
    }
    rust || !other
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIB: &str = "//! Arithmetic.\n//!\n//! ```\n//! assert_eq!(calc::add(1, 1), 2);\n//! ```\n\n/// Subtracts.\n///\n/// ```\n/// assert_eq!(calc::sub(5, 3), 2);\n/// ```\n#[inline]\npub fn sub(a: i32, b: i32) -> i32 {\n    a - b\n}\n\npub mod m {\n    pub struct S;\n\n    impl<T> From<T> for S {\n        fn from(_: T) -> S { S }\n    }\n\n    impl S {\n        /// ```rust,edition2021\n        /// assert!(true);\n        /// ```\n        ///\n        /// ```text\n        /// not code\n        /// ```\n        ///\n        /// ```no_run\n        /// loop {}\n        /// ```\n        pub fn f(&self) {}\n    }\n}\n";

    #[test]
    fn the_examples_rustdoc_runs_as_checks_are_named_as_rustdoc_names_them() {
        let names: Vec<String> = checking_doc_tests("src/lib.rs", LIB)
            .iter()
            .map(|t| t.name("src/lib.rs"))
            .collect();
        assert_eq!(
            names,
            [
                "src/lib.rs - (line 3)",
                "src/lib.rs - sub (line 9)",
                "src/lib.rs - m::S::f (line 25)",
            ]
        );
        assert_eq!(
            checking_doc_tests("src/calc/mod.rs", "/// ```\n/// x();\n/// ```\nfn g() {}\n")[0]
                .item,
            "calc::g"
        );
        assert!(checking_doc_tests("tests/it.rs", LIB).is_empty());
        assert!(checking_doc_tests("src/main.rs", LIB).is_empty());
    }

    /// serde's `Expected` trait gained a multi-line `#[cfg_attr(…)]` between its docs and
    /// `pub trait` (4bddf1b953): its examples stay the trait's, not an item inside it.
    #[test]
    fn a_block_s_own_docs_are_its_item_s_whatever_attributes_come_between() {
        let base = "/// ```\n/// x();\n/// ```\npub trait Expected {\n    fn fmt(&self);\n}\n";
        let head = base.replace(
            "pub trait",
            "#[cfg_attr(\n    not(x),\n    diagnostic::on_unimplemented(message = \"m\")\n)]\npub trait",
        );
        assert_eq!(
            checking_doc_tests("src/de/mod.rs", base)[0].item,
            "de::Expected"
        );
        assert_eq!(gone("src/de/mod.rs", base, Some(&head)), []);
    }

    #[test]
    fn a_moved_example_is_kept_and_a_fenced_off_or_deleted_one_is_gone() {
        let moved = LIB.replace(
            "/// Subtracts.\n",
            "/// Subtracts.\n///\n/// Two numbers.\n",
        );
        assert_eq!(gone("src/lib.rs", LIB, Some(&moved)), []);
        for fence in [
            "ignore",
            "no_run",
            "compile_fail",
            "should_panic",
            "text",
            "ignore-linux",
        ] {
            let head = LIB.replacen(
                "/// ```\n/// assert_eq!(calc::sub",
                &format!("/// ```{fence}\n/// assert_eq!(calc::sub"),
                1,
            );
            assert_eq!(
                gone("src/lib.rs", LIB, Some(&head)),
                [DocTest {
                    item: "sub".to_owned(),
                    line: 9
                }],
                "{fence}"
            );
        }
        let deleted = LIB.replace(
            "/// ```\n/// assert_eq!(calc::sub(5, 3), 2);\n/// ```\n",
            "",
        );
        assert_eq!(gone("src/lib.rs", LIB, Some(&deleted)).len(), 1);
        assert_eq!(gone("src/lib.rs", LIB, None).len(), 3);
    }
}
