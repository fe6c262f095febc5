//! Which tests a change touched: the runner's listing at HEAD mapped back to the test files
//! the change added or modified, and which of them the change added (new, so untrusted).
//! Pure: the listing, the changed files and their texts at both ends come in.

use serde::Serialize;

use crate::runner::{ListedTest, RunnerKind};

/// A test file the change added or modified, with its text at HEAD and at the base.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedTestFile {
    /// Path relative to the repository root.
    pub path: String,
    /// Its text at HEAD.
    pub head_text: String,
    /// Its text at the base; `None` when the change added the file.
    pub base_text: Option<String>,
}

/// A test the change touched.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
pub struct TouchedTest {
    /// Its canonical id.
    pub id: String,
    /// The changed file it is in.
    pub file: String,
    /// Whether the change added it (its definition is not in the base's file).
    pub new: bool,
}

/// The listed tests that live in a changed test file, in id order. A test is in a file
/// when the runner names the file (pytest, cargo integration tests), or — where it does
/// not (go, cargo unit tests) — when the file's package or module holds the test and the
/// file defines its function.
pub fn touched_tests(
    runner: RunnerKind,
    listed: &[ListedTest],
    changed: &[ChangedTestFile],
) -> Vec<TouchedTest> {
    let mut touched = Vec::new();
    for test in listed {
        let function = function_name(runner, &test.id);
        for file in changed {
            let in_file = match &test.file {
                Some(listed_file) => listed_file == &file.path,
                None => {
                    same_unit(runner, &test.id, &file.path)
                        && defines(runner, &file.head_text, &test.id, function)
                }
            };
            if in_file {
                let new = file.base_text.as_deref().is_none_or(|base| {
                    !defined_before(runner, &file.head_text, base, &test.id, function)
                });
                touched.push(TouchedTest {
                    id: test.id.clone(),
                    file: file.path.clone(),
                    new,
                });
                break;
            }
        }
    }
    touched.sort();
    touched.dedup();
    touched
}

/// The listed tests that belong to `path`'s unit: those the runner names the file of,
/// else those of the file's package (go) or module (cargo unit tests), whatever the
/// file's text defines now.
pub fn ids_in_unit_of<'l>(
    runner: RunnerKind,
    listed: &'l [ListedTest],
    path: &str,
) -> Vec<&'l str> {
    listed
        .iter()
        .filter(|test| match &test.file {
            Some(file) => file == path,
            None => same_unit(runner, &test.id, path),
        })
        .map(|test| test.id.as_str())
        .collect()
}

/// Whether `text` defines the test: its function, or for Rust also the macro call or
/// `fn` its name comes from (see [`rust_anchor`]).
fn defines(runner: RunnerKind, text: &str, id: &str, function: &str) -> bool {
    match runner {
        RunnerKind::Cargo | RunnerKind::Nextest => {
            rust_anchor(&RustNames::of(text), id, function).is_some()
        }
        _ => defines_function(runner, text, function),
    }
}

/// Whether the base's text already defined the test HEAD's text defines: for Rust, the
/// base names the same anchor the same way (a `fn` or a macro call's argument).
fn defined_before(runner: RunnerKind, head: &str, base: &str, id: &str, function: &str) -> bool {
    match runner {
        RunnerKind::Cargo | RunnerKind::Nextest => {
            let Some(anchor) = rust_anchor(&RustNames::of(head), id, function) else {
                return false;
            };
            RustNames::of(base).names(anchor)
        }
        _ => defines_function(runner, base, function),
    }
}

/// The name a Rust file writes for the test `id` (whose last segment is `function`), when
/// it writes one. Tests are written three ways, tried in this order:
/// - `fn function(` — hand-written, and macros like `proptest!` that keep the `fn`;
///   or `function` as an argument of a macro call (`cases! { adds: (1, 2), … }`);
/// - an earlier segment of the id that the file defines as a `fn` (`adds::case_1`: rstest
///   and test-case generate a module of cases from one function);
/// - a macro call's argument the name is built from (`paste!`'s `[<test_ $name>]`:
///   `test_adds` from `check!(adds, …)`), the longest such argument.
fn rust_anchor<'a>(names: &RustNames<'_>, id: &'a str, function: &'a str) -> Option<&'a str> {
    if names.names(function) {
        return Some(function);
    }
    let segments: Vec<&str> = id.split("::").collect();
    if let Some(segment) = segments
        .iter()
        .rev()
        .skip(1)
        .find(|segment| names.functions.contains(**segment))
    {
        return Some(segment);
    }
    names
        .macro_arguments
        .iter()
        .filter(|argument| {
            function
                .strip_suffix(**argument)
                .is_some_and(|rest| rest.ends_with('_'))
                || function
                    .strip_prefix(**argument)
                    .is_some_and(|rest| rest.starts_with('_'))
        })
        .max_by_key(|argument| argument.len())
        .and_then(|argument| {
            let at = function.find(argument)?;
            function.get(at..at + argument.len())
        })
}

/// What a Rust file names, outside comments and string literals: every `fn NAME`, and
/// every identifier inside a macro call's body (not inside a `macro_rules!` definition,
/// whose `$x` only becomes a name where the macro is called).
#[derive(Debug, Default)]
struct RustNames<'t> {
    functions: std::collections::HashSet<&'t str>,
    macro_arguments: std::collections::HashSet<&'t str>,
}

impl<'t> RustNames<'t> {
    fn names(&self, name: &str) -> bool {
        self.functions.contains(name) || self.macro_arguments.contains(name)
    }

    fn of(text: &'t str) -> RustNames<'t> {
        let mut names = RustNames::default();
        let bytes = text.as_bytes();
        // Open brackets, each with whether it opened a macro call's body (`Some(true)`),
        // a `macro_rules!` body (`Some(false)`) or neither.
        let mut brackets: Vec<Option<bool>> = Vec::new();
        let mut previous_fn = false;
        let mut pending_macro: Option<bool> = None;
        let mut at = 0;
        while at < bytes.len() {
            let byte = bytes[at];
            match byte {
                b'/' if bytes.get(at + 1) == Some(&b'/') => {
                    at = text[at..].find('\n').map_or(bytes.len(), |end| at + end);
                    continue;
                }
                b'/' if bytes.get(at + 1) == Some(&b'*') => {
                    at = skip_block_comment(bytes, at);
                    continue;
                }
                b'"' => {
                    at = skip_string(bytes, at + 1, 0);
                    continue;
                }
                b'r' if raw_string_hashes(bytes, at).is_some() => {
                    let hashes = raw_string_hashes(bytes, at).unwrap_or(0);
                    at = skip_string(bytes, at + 2 + hashes, hashes);
                    continue;
                }
                b'\'' => {
                    // A char literal ('a', '\n', '\''), else a lifetime.
                    if bytes.get(at + 1) == Some(&b'\\') {
                        at = text[at + 2..]
                            .find('\'')
                            .map_or(bytes.len(), |end| at + 2 + end + 1);
                        continue;
                    }
                    let width = text[at + 1..].chars().next().map_or(1, char::len_utf8);
                    if bytes.get(at + 1 + width) == Some(&b'\'') {
                        at += width + 2;
                        continue;
                    }
                    at += 1;
                    continue;
                }
                b'(' | b'[' | b'{' => {
                    brackets.push(pending_macro.take());
                    previous_fn = false;
                    at += 1;
                    continue;
                }
                b')' | b']' | b'}' => {
                    brackets.pop();
                    pending_macro = None;
                    previous_fn = false;
                    at += 1;
                    continue;
                }
                _ => {}
            }
            if byte.is_ascii_alphabetic() || byte == b'_' {
                let start = at;
                while at < bytes.len() && (bytes[at].is_ascii_alphanumeric() || bytes[at] == b'_') {
                    at += 1;
                }
                let mut word = &text[start..at];
                if word == "r" && bytes.get(at) == Some(&b'#') {
                    // A raw identifier: `r#type`.
                    let name_start = at + 1;
                    at = name_start;
                    while at < bytes.len()
                        && (bytes[at].is_ascii_alphanumeric() || bytes[at] == b'_')
                    {
                        at += 1;
                    }
                    word = &text[name_start..at];
                }
                let after = text[at..].trim_start();
                if after.starts_with('!') && !after.starts_with("!=") {
                    pending_macro = Some(word != "macro_rules");
                    previous_fn = false;
                    continue;
                }
                // `macro_rules! name {`: the name sits between the `!` and the body.
                if pending_macro != Some(false) {
                    pending_macro = None;
                }
                let in_definition = brackets.contains(&Some(false));
                if previous_fn && !in_definition {
                    names.functions.insert(word);
                }
                let in_call = !in_definition && brackets.contains(&Some(true));
                if in_call {
                    names.macro_arguments.insert(word);
                }
                previous_fn = word == "fn";
                continue;
            }
            if !byte.is_ascii_whitespace() && byte != b'!' {
                previous_fn = false;
                if pending_macro != Some(false) {
                    pending_macro = None;
                }
            }
            at += 1;
        }
        names
    }
}

/// A span of text to blank and where reading goes on after it.
pub(crate) struct Blank {
    /// The bytes blanked (a literal's contents, a whole comment).
    pub(crate) bytes: std::ops::Range<usize>,
    /// Where reading goes on.
    pub(crate) resume: usize,
}

/// `text` with every span `blank_at` finds blanked to spaces (newlines kept, byte offsets
/// unchanged), so that code can be searched without meeting words in comments or
/// literals. `blank_at(text, at)` names the span that opens at `at`, if any.
pub(crate) fn blanked(text: &str, blank_at: impl Fn(&str, usize) -> Option<Blank>) -> String {
    let bytes = text.as_bytes();
    let mut kept = bytes.to_vec();
    let mut at = 0;
    while at < bytes.len() {
        let Some(found) = blank_at(text, at) else {
            at += 1;
            continue;
        };
        let span = found.bytes.start.min(bytes.len())..found.bytes.end.min(bytes.len());
        for byte in kept.get_mut(span).unwrap_or_default() {
            if *byte != b'\n' {
                *byte = b' ';
            }
        }
        at = found.resume.max(at + 1);
    }
    // Only ASCII bytes were blanked, so what was UTF-8 stays UTF-8 unless a blanked span
    // cut a character; then the lossy form keeps the lengths that matter (newlines).
    String::from_utf8(kept).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// The `//` comment that opens at `at`, to the end of its line: C, Rust and JavaScript.
pub(crate) fn line_comment_at(text: &str, at: usize) -> Option<Blank> {
    let bytes = text.as_bytes();
    (bytes.get(at) == Some(&b'/') && bytes.get(at + 1) == Some(&b'/')).then(|| {
        let end = text[at..].find('\n').map_or(bytes.len(), |end| at + end);
        Blank {
            bytes: at..end,
            resume: end,
        }
    })
}

/// `text` with every comment and every string and char literal's contents blanked
/// (newlines kept), so that code can be searched without meeting words in them.
pub(crate) fn rust_code_only(text: &str) -> String {
    blanked(text, |text, at| {
        let bytes = text.as_bytes();
        if let Some(comment) = line_comment_at(text, at) {
            return Some(comment);
        }
        match bytes[at] {
            b'/' if bytes.get(at + 1) == Some(&b'*') => {
                let end = skip_block_comment(bytes, at);
                Some(Blank {
                    bytes: at..end,
                    resume: end,
                })
            }
            b'"' => {
                let end = skip_string(bytes, at + 1, 0);
                Some(Blank {
                    bytes: at + 1..end.saturating_sub(1),
                    resume: end,
                })
            }
            b'r' => {
                let hashes = raw_string_hashes(bytes, at)?;
                let end = skip_string(bytes, at + 2 + hashes, hashes);
                Some(Blank {
                    bytes: at + 2 + hashes..end.saturating_sub(1 + hashes),
                    resume: end,
                })
            }
            b'\'' => {
                // A char literal ('"', '\'', 'é'), else a lifetime.
                let end = if bytes.get(at + 1) == Some(&b'\\') {
                    text[at + 2..]
                        .find('\'')
                        .map_or(bytes.len(), |end| at + 2 + end + 1)
                } else {
                    let width = text[at + 1..].chars().next().map_or(1, char::len_utf8);
                    if bytes.get(at + 1 + width) == Some(&b'\'') {
                        at + width + 2
                    } else {
                        at + 1
                    }
                };
                Some(Blank {
                    bytes: at + 1..end.saturating_sub(1).max(at + 1),
                    resume: end,
                })
            }
            _ => None,
        }
    })
}

/// The index after a block comment that opens at `at` (they nest in Rust).
fn skip_block_comment(bytes: &[u8], mut at: usize) -> usize {
    let mut depth = 0;
    while at < bytes.len() {
        if bytes[at] == b'/' && bytes.get(at + 1) == Some(&b'*') {
            depth += 1;
            at += 2;
        } else if bytes[at] == b'*' && bytes.get(at + 1) == Some(&b'/') {
            depth -= 1;
            at += 2;
            if depth == 0 {
                return at;
            }
        } else {
            at += 1;
        }
    }
    at
}

/// The number of `#` of a raw string (`r"`, `r#"`, `br"` is read as `b` then this) that
/// opens at `at`, if one does.
fn raw_string_hashes(bytes: &[u8], at: usize) -> Option<usize> {
    if at > 0 && (bytes[at - 1].is_ascii_alphanumeric() || bytes[at - 1] == b'_') {
        return None;
    }
    let hashes = bytes[at + 1..].iter().take_while(|b| **b == b'#').count();
    (bytes.get(at + 1 + hashes) == Some(&b'"')).then_some(hashes)
}

/// The index after a string whose text starts at `at`, closed by `"` and `hashes` `#`s
/// (escapes count only in a normal string).
fn skip_string(bytes: &[u8], mut at: usize, hashes: usize) -> usize {
    let raw =
        hashes > 0 || (at >= 2 && bytes[at - 2] == b'r') || (at >= 1 && bytes[at - 1] == b'#');
    while at < bytes.len() {
        match bytes[at] {
            b'\\' if !raw => at += 2,
            b'"' if bytes[at + 1..]
                .iter()
                .take(hashes)
                .filter(|b| **b == b'#')
                .count()
                == hashes =>
            {
                return at + 1 + hashes;
            }
            _ => at += 1,
        }
    }
    at
}

/// The name of the function that defines the test: pytest's last `::` part without its
/// parameters, go's top-level test name, cargo's last path segment.
fn function_name(runner: RunnerKind, id: &str) -> &str {
    if runner == RunnerKind::Go {
        let name = id.rsplit_once("::").map_or(id, |(_, name)| name);
        name.split('/').next().unwrap_or(name)
    } else {
        let last = id.rsplit("::").next().unwrap_or(id);
        last.split('[').next().unwrap_or(last)
    }
}

/// Whether a test without a file in the listing belongs to the file's package (go) or
/// module (cargo unit tests).
fn same_unit(runner: RunnerKind, id: &str, path: &str) -> bool {
    let directory = path.rsplit_once('/').map_or("", |(dir, _)| dir);
    match runner {
        RunnerKind::Go => {
            let package = id.split_once("::").map_or("", |(package, _)| package);
            if directory.is_empty() {
                // The module root: its package is the module path, with no `/dir` suffix
                // that another file's directory would match.
                return !package.is_empty();
            }
            package == directory || package.ends_with(&format!("/{directory}"))
        }
        RunnerKind::Cargo | RunnerKind::Nextest => {
            let stem = path
                .rsplit('/')
                .next()
                .and_then(|name| name.strip_suffix(".rs"))
                .unwrap_or("");
            let module = if matches!(stem, "mod" | "lib" | "main") {
                directory.rsplit('/').next().unwrap_or("")
            } else {
                stem
            };
            matches!(stem, "lib" | "main")
                || id
                    .split("::")
                    .any(|segment| !module.is_empty() && segment == module)
        }
        RunnerKind::Pytest
        | RunnerKind::Command
        | RunnerKind::Jest
        | RunnerKind::Vitest
        | RunnerKind::Playwright
        | RunnerKind::Mocha
        | RunnerKind::Node => false,
    }
}

/// Whether `text` defines the test function `name`, in the runner's language.
fn defines_function(runner: RunnerKind, text: &str, name: &str) -> bool {
    if name.is_empty() {
        return false;
    }
    let patterns: Vec<String> = match runner {
        RunnerKind::Go => vec![format!("func {name}(")],
        RunnerKind::Cargo | RunnerKind::Nextest => vec![format!("fn {name}(")],
        RunnerKind::Pytest | RunnerKind::Command => {
            vec![format!("def {name}("), format!("async def {name}(")]
        }
        // A JavaScript test is a call (`test('title', …)`), not a named function.
        RunnerKind::Jest
        | RunnerKind::Vitest
        | RunnerKind::Playwright
        | RunnerKind::Mocha
        | RunnerKind::Node => Vec::new(),
    };
    text.lines().any(|line| {
        let line = line.trim_start();
        patterns.iter().any(|p| {
            line.starts_with(p.as_str())
                || line
                    .strip_prefix("pub ")
                    .is_some_and(|l| l.starts_with(p.as_str()))
                || line
                    .strip_prefix("async ")
                    .is_some_and(|l| l.starts_with(p.as_str()))
        })
    })
}

/// Tests `at_base` lists (the merge base's listing) that the head's listing (`collected`)
/// does not, in files `diff` leaves alone, in id order. A touched file's tests are judged
/// with the base's version of the file; these are the ones the code under test stopped
/// generating. A test whose file cannot be told from its id is left out; Playwright's
/// ids start with their project (`[chromium] tests/cart.spec.js::totals`).
pub fn vanished(
    at_base: &[String],
    collected: &std::collections::BTreeSet<String>,
    diff: &super::diff::Diff,
) -> Vec<String> {
    let mut gone: Vec<String> = at_base
        .iter()
        .filter(|id| !collected.contains(*id))
        .filter(|id| {
            id.split_once("::").is_some_and(|(file, _)| {
                let file = file
                    .strip_prefix('[')
                    .and_then(|rest| rest.split_once("] "))
                    .map_or(file, |(_, file)| file);
                !diff.files.iter().any(|changed| changed.path == file)
            })
        })
        .cloned()
        .collect();
    gone.sort();
    gone.dedup();
    gone
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(id: &str, file: Option<&str>) -> ListedTest {
        ListedTest {
            id: id.to_owned(),
            file: file.map(str::to_owned),
        }
    }

    fn changed(path: &str, head: &str, base: Option<&str>) -> ChangedTestFile {
        ChangedTestFile {
            path: path.to_owned(),
            head_text: head.to_owned(),
            base_text: base.map(str::to_owned),
        }
    }

    #[test]
    fn pytest_tests_are_touched_by_their_file_and_new_by_their_definition() {
        let listing = [
            listed("tests/test_a.py::test_old", Some("tests/test_a.py")),
            listed("tests/test_a.py::test_new[1]", Some("tests/test_a.py")),
            listed("tests/test_b.py::test_other", Some("tests/test_b.py")),
        ];
        let files = [changed(
            "tests/test_a.py",
            "def test_old():\n    pass\n\ndef test_new(x):\n    pass\n",
            Some("def test_old():\n    pass\n"),
        )];
        let touched = touched_tests(RunnerKind::Pytest, &listing, &files);
        let summary: Vec<_> = touched.iter().map(|t| (t.id.as_str(), t.new)).collect();
        assert_eq!(
            summary,
            [
                ("tests/test_a.py::test_new[1]", true),
                ("tests/test_a.py::test_old", false)
            ]
        );
    }

    #[test]
    fn go_tests_are_mapped_through_their_package_and_function() {
        let listing = [
            listed("example.com/shop/cart::TestTotal", None),
            listed("example.com/shop/cart::TestEmpty", None),
            listed("example.com/shop/pay::TestTotal", None),
        ];
        let files = [changed(
            "cart/cart_test.go",
            "package cart\n\nfunc TestTotal(t *testing.T) {}\n",
            None,
        )];
        let touched = touched_tests(RunnerKind::Go, &listing, &files);
        assert_eq!(touched.len(), 1, "{touched:?}");
        assert_eq!(touched[0].id, "example.com/shop/cart::TestTotal");
        assert!(touched[0].new);
    }

    #[test]
    fn cargo_unit_tests_are_mapped_through_their_module() {
        let listing = [
            listed("shop::cart::tests::total_adds", None),
            listed("shop::pay::tests::total_adds", None),
            listed("shop::checkout::checkout_flow", Some("tests/checkout.rs")),
        ];
        let files = [
            changed(
                "src/cart.rs",
                "#[test]\nfn total_adds() {}\n",
                Some("#[test]\nfn total_adds() {}\n"),
            ),
            changed("tests/checkout.rs", "fn checkout_flow() {}\n", None),
        ];
        let touched = touched_tests(RunnerKind::Cargo, &listing, &files);
        let ids: Vec<_> = touched.iter().map(|t| (t.id.as_str(), t.new)).collect();
        assert_eq!(
            ids,
            [
                ("shop::cart::tests::total_adds", false),
                ("shop::checkout::checkout_flow", true)
            ]
        );
    }

    /// Issue #12 item 6: tests a macro call generates are new only when their call is.
    #[test]
    fn a_macro_generated_test_whose_call_existed_before_is_not_new() {
        let base = r#"
macro_rules! check {
    ($name:ident, $ok:expr) => {
        #[test]
        fn $name() { assert!($ok) }
    };
}
check!(adds, 1 + 1 == 2);
// check!(subtracts, 2 - 1 == 1);   a comment is no call
const NOTE: &str = "check!(multiplies, 2 * 2 == 4)";
"#;
        let head =
            format!("{base}check!(subtracts, 2 - 1 == 1);\ncheck!(multiplies, 2 * 2 == 4);\n");
        let listing = [
            listed("adds", Some("tests/cases.rs")),
            listed("subtracts", Some("tests/cases.rs")),
            listed("multiplies", Some("tests/cases.rs")),
        ];
        let files = [changed("tests/cases.rs", &head, Some(base))];
        for runner in [RunnerKind::Cargo, RunnerKind::Nextest] {
            let touched = touched_tests(runner, &listing, &files);
            let new: Vec<_> = touched.iter().map(|t| (t.id.as_str(), t.new)).collect();
            assert_eq!(
                new,
                [("adds", false), ("multiplies", true), ("subtracts", true)],
                "{runner}"
            );
        }
    }

    #[test]
    fn table_macros_rstest_cases_and_pasted_names_are_anchored_to_what_the_file_writes() {
        let base = "mod tests {\n    cases! {\n        adds: (1, 2, 3),\n    }\n\n    #[rstest]\n    #[case(1)]\n    fn doubles(#[case] x: u32) {}\n\n    pasted!(halves);\n}\n";
        let head = "mod tests {\n    cases! {\n        adds: (1, 2, 3),\n        negates: (1, -1),\n    }\n\n    #[rstest]\n    #[case(1)]\n    #[case(2)]\n    fn doubles(#[case] x: u32) {}\n\n    #[rstest]\n    fn triples() {}\n\n    pasted!(halves);\n    pasted!(thirds);\n}\n";
        let listing = [
            listed("shop::calc::tests::adds", None),
            listed("shop::calc::tests::negates", None),
            listed("shop::calc::tests::doubles::case_1", None),
            listed("shop::calc::tests::doubles::case_2", None),
            listed("shop::calc::tests::triples::case_1", None),
            listed("shop::calc::tests::test_halves", None),
            listed("shop::calc::tests::test_thirds", None),
            listed("shop::other::tests::test_unrelated", None),
        ];
        let files = [changed("src/calc.rs", head, Some(base))];
        let touched = touched_tests(RunnerKind::Cargo, &listing, &files);
        let new: Vec<_> = touched.iter().map(|t| (t.id.as_str(), t.new)).collect();
        // A case added to an existing rstest function shares its function's age: the
        // function is what the file writes (a known limit, docs/gate.md).
        assert_eq!(
            new,
            [
                ("shop::calc::tests::adds", false),
                ("shop::calc::tests::doubles::case_1", false),
                ("shop::calc::tests::doubles::case_2", false),
                ("shop::calc::tests::negates", true),
                ("shop::calc::tests::test_halves", false),
                ("shop::calc::tests::test_thirds", true),
                ("shop::calc::tests::triples::case_1", true),
            ]
        );
    }

    #[test]
    fn a_name_only_in_a_comment_string_or_macro_definition_of_the_base_is_still_new() {
        let base = "// fn later() was planned\nconst S: &str = \"fn later()\";\nconst R: &str = r#\"later: \"x\"\"#;\nmacro_rules! m { ($later:ident) => { fn later() {} }; }\n/* nested /* fn later() */ still a comment */\n";
        let head = format!("{base}#[test]\nfn later() {{}}\n");
        let listing = [listed("later", Some("tests/t.rs"))];
        let files = [changed("tests/t.rs", &head, Some(base))];
        let touched = touched_tests(RunnerKind::Cargo, &listing, &files);
        assert_eq!(touched.len(), 1);
        assert!(touched[0].new, "{touched:?}");
    }

    proptest::proptest! {
        #![proptest_config(crate::test_support::proptest_config(256))]

        /// Any text, however broken its strings, comments and brackets, is read without a
        /// panic.
        #[test]
        fn any_rust_text_is_read(text in r##"(\PC|[\n'"#r/*!(){}\[\]\\]|fn |macro_rules! ){0,40}"##) {
            let names = RustNames::of(&text);
            let _ = rust_anchor(&names, "a::b", "b");
            let closed = format!("{text}\n\"\n*/\n");
            let _ = RustNames::of(&closed);
        }
    }

    #[test]
    fn tests_the_merge_base_lists_that_the_head_does_not_in_untouched_files_vanished() {
        use crate::gate::diff::{ChangedFile, Diff, FileStatus};
        let at_base: Vec<String> = [
            "tests/test_tax.py::test_with_tax[standard]",
            "tests/test_tax.py::test_with_tax[reduced]",
            "tests/test_cart.py::test_old",
            "tests/test_cart.py::test_total",
            "[chromium] tests/test_cart.py::old in a browser",
        ]
        .map(String::from)
        .to_vec();
        let collected = [
            "tests/test_tax.py::test_with_tax[standard]",
            "tests/test_cart.py::test_total",
        ]
        .map(String::from)
        .into_iter()
        .collect();
        // test_cart.py is touched: its tests are the base version's to judge.
        let diff = Diff {
            files: vec![ChangedFile {
                path: "tests/test_cart.py".to_owned(),
                status: FileStatus::Modified,
                binary: false,
                added: Vec::new(),
                removed: Vec::new(),
            }],
        };
        assert_eq!(
            vanished(&at_base, &collected, &diff),
            ["tests/test_tax.py::test_with_tax[reduced]"]
        );
        assert!(
            vanished(
                &at_base,
                &at_base.iter().cloned().collect(),
                &Diff { files: Vec::new() }
            )
            .is_empty()
        );
    }
}
