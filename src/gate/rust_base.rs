//! Judging a change's Rust test files against the base's text of them, without a second
//! build: a test the base's file defines that the head no longer collects (deleted,
//! renamed, its `#[test]` taken away) is removed; a test that gains `#[should_panic]` now
//! passes by failing; a function of the test code that makes fewer checks than the base's
//! version (an `assert…!` or `assert_…(` call deleted, commented out or turned into
//! `let _ =`), or gains an early `return`, an attribute inside its body or a branch that
//! never runs, is weakened.
//! Pure; the merge lane gives it both texts and the head's collection.
//!
//! A base version of a cargo test cannot run against the head's code as pytest's and
//! go's do without building the crate a second time in another folder; what the texts
//! alone tell is judged here.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use regex::Regex;

use super::tamper::{BaseJudgement, FileTexts, FnChecks, fewer_checks};
use super::touched::rust_code_only;

/// A test function a Rust file defines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RustTest {
    /// Its function's name.
    pub name: String,
    /// Whether it carries `#[should_panic]`.
    pub should_panic: bool,
}

/// Attributes, then a function: the attributes in group 1, the name in group 2.
static ATTRIBUTED_FN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"((?:#\s*\[[^\[\]]*(?:\[[^\[\]]*\][^\[\]]*)*\]\s*)+)",
        r#"(?:pub(?:\s*\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?(?:extern\s+"[^"]*"\s+)?"#,
        r"fn\s+([A-Za-z_][A-Za-z0-9_]*)",
    ))
    .expect("a valid pattern")
});

/// One attribute's path (`test`, `tokio::test`, `should_panic`).
static ATTRIBUTE_PATH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"#\s*\[\s*((?:[A-Za-z_][A-Za-z0-9_]*\s*::\s*)*[A-Za-z_][A-Za-z0-9_]*)")
        .expect("a valid pattern")
});

/// The test functions a Rust file defines, outside comments and literals: functions with
/// an attribute whose path is `test` or ends in `::test` (`#[tokio::test]`), in order.
pub fn test_functions(text: &str) -> Vec<RustTest> {
    let code = rust_code_only(text);
    let mut tests = Vec::new();
    for found in ATTRIBUTED_FN.captures_iter(&code) {
        let paths: Vec<String> = ATTRIBUTE_PATH
            .captures_iter(&found[1])
            .map(|p| p[1].split_whitespace().collect())
            .collect();
        let is_test = paths
            .iter()
            .any(|path| path == "test" || path.ends_with("::test"));
        if is_test {
            tests.push(RustTest {
                name: found[2].to_owned(),
                should_panic: paths.iter().any(|path| path == "should_panic"),
            });
        }
    }
    tests
}

/// Every `cfg` attribute of a file (`#[cfg(…)]`, `#![cfg(…)]`, `#[cfg_attr(…)]`),
/// outside comments and literals, without whitespace, sorted: a change to them can take
/// tests out of the build while the text still defines them.
pub fn cfg_attributes(text: &str) -> Vec<String> {
    static CFG: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"#\s*!?\s*\[\s*cfg(?:_attr)?\s*\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)\s*\]")
            .expect("a valid pattern")
    });
    let code = rust_code_only(text);
    let mut found: Vec<String> = CFG
        .find_iter(&code)
        .map(|m| m.as_str().split_whitespace().collect())
        .collect();
    found.sort();
    found
}

/// The kinds of check counted, as the findings name them.
const ASSERTIONS: &str = "assert…";
const PANICS: &str = "panic!/unreachable!";
const UNWRAPS: &str = ".unwrap()/.expect(…)/?";

/// A function's name in group 1.
static FUNCTION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)").expect("a valid pattern"));

/// A check: a macro's name in group 1, a checking method's in group 2, or a call of a
/// function whose name holds `assert` in group 4 (group 3: `fn `, a definition).
static CHECK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"\b([A-Za-z_][A-Za-z0-9_]*)\s*!\s*[(\[{]",
        r"|\.\s*(unwrap|expect|unwrap_err|expect_err)\s*\(",
        r"|\b(fn\s+)?((?:[A-Za-z_][A-Za-z0-9_]*)?assert[A-Za-z0-9_]*)\s*\(",
    ))
    .expect("a valid pattern")
});

/// `#[cfg(test)] mod name {`: the test modules of a library file.
static TEST_MODULE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"#\s*\[\s*cfg\s*\(\s*test\s*\)\s*\]\s*(?:pub(?:\s*\([^)]*\))?\s+)?mod\s+[A-Za-z_][A-Za-z0-9_]*\s*\{")
        .expect("a valid pattern")
});

static RETURN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\breturn\b").expect("a valid pattern"));

static NEVER_BRANCH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(?:if|while)\s+(?:false\b|!\s*true\b)").expect("a valid pattern")
});

/// The index after the bracket group that opens at `open` in `code` (comments and
/// literals blanked), or the end of the text when it never closes.
pub(super) fn group_end(code: &[u8], open: usize) -> usize {
    let mut depth = 0usize;
    for (at, byte) in code.iter().enumerate().skip(open) {
        match byte {
            b'{' => depth += 1,
            b'}' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return at + 1;
                }
            }
            _ => {}
        }
    }
    code.len()
}

/// The checks each function of `path`'s test code makes: every function of a file under a
/// `tests` folder, else the tests and the functions inside `#[cfg(test)]` modules.
pub fn test_code_checks(path: &str, text: &str) -> BTreeMap<String, FnChecks> {
    let code = rust_code_only(text);
    let bytes = code.as_bytes();
    let whole_file = path.split('/').any(|part| part == "tests");
    let tests: BTreeSet<String> = test_functions(text).into_iter().map(|t| t.name).collect();
    let modules: Vec<(usize, usize)> = TEST_MODULE
        .find_iter(&code)
        .map(|m| (m.start(), group_end(bytes, m.end() - 1)))
        .collect();
    let mut functions: BTreeMap<String, FnChecks> = BTreeMap::new();
    for found in FUNCTION.captures_iter(&code) {
        let (Some(whole), Some(name)) = (found.get(0), found.get(1)) else {
            continue;
        };
        let in_test_code = whole_file
            || tests.contains(name.as_str())
            || modules
                .iter()
                .any(|(from, to)| (*from..*to).contains(&whole.start()));
        if !in_test_code {
            continue;
        }
        // The body opens at the first `{` before any `;` (a declaration has none).
        let Some(open) = code[whole.end()..]
            .find(['{', ';'])
            .map(|at| whole.end() + at)
            .filter(|at| bytes[*at] == b'{')
        else {
            continue;
        };
        let body = &code[open..group_end(bytes, open)];
        let entry = functions.entry(name.as_str().to_owned()).or_default();
        for check in CHECK.captures_iter(body) {
            // Kinds, not names: `assert_eq!(a, b)` for `assert!(a == b)`, or `?` for
            // `.unwrap()`, is a rewrite that keeps the check.
            let kind = match (check.get(1), check.get(2)) {
                (Some(name), _) if name.as_str().contains("assert") => ASSERTIONS,
                (Some(name), _) if matches!(name.as_str(), "panic" | "unreachable") => PANICS,
                (None, Some(_)) => UNWRAPS,
                // A helper named for what it asserts (`assert_to_string(…)`,
                // `cmd.assert()`), called, not defined.
                _ if check.get(3).is_none() && check.get(4).is_some() => ASSERTIONS,
                _ => continue,
            };
            *entry.checks.entry(kind.to_owned()).or_default() += 1;
        }
        // `?` fails a test that returns a `Result` as `.unwrap()` does (`?Sized` is a bound).
        let question_marks = body
            .match_indices('?')
            .filter(|(at, _)| !body[at + 1..].trim_start().starts_with("Sized"))
            .count();
        if question_marks > 0 {
            *entry.checks.entry(UNWRAPS.to_owned()).or_default() += question_marks;
        }
        entry.returns += RETURN.find_iter(body).count();
        entry.attributes += body.matches("#[").count() + body.matches("# [").count();
        entry.never_branches += NEVER_BRANCH.find_iter(body).count();
    }
    functions
}

/// Whether `path`'s text defines a test, a doc test rustdoc runs, or its test code makes
/// a check (a helper of `tests/common/mod.rs`): what [`judge`] judges.
pub fn has_test_code(path: &str, text: &str) -> bool {
    !test_functions(text).is_empty()
        || !super::rust_doctests::checking_doc_tests(path, text).is_empty()
        || test_code_checks(path, text)
            .values()
            .any(|f| !f.checks.is_empty())
}

/// Judges the changed files: a base test is removed when the head's file no longer
/// defines it as a test (or changed its `cfg`s) and no id the head collects in its file's unit (`head_ids_of(path)`)
/// has its name as a segment (rstest's `adds::case_1` keeps `adds`; a test moved inside
/// its unit is kept); a base test without `#[should_panic]` that has it at the head is
/// weakened; a doc test of the base the head no longer runs (by its item: its line shifts
/// with edits) is removed.
/// Files whose base defines no test and whose test code makes no check are left out.
pub fn judge<'a>(files: &[FileTexts], head_ids_of: impl Fn(&str) -> Vec<&'a str>) -> BaseJudgement {
    let mut judgement = BaseJudgement::default();
    for file in files {
        if !has_test_code(&file.path, &file.base_text) {
            continue;
        }
        let base = test_functions(&file.base_text);
        let base_checks = test_code_checks(&file.path, &file.base_text);
        judgement.files.push(file.path.clone());
        let head = file
            .head_text
            .as_deref()
            .map(test_functions)
            .unwrap_or_default();
        // With the file's `cfg`s changed, a test still written may no longer be built.
        let cfg_changed = file
            .head_text
            .as_deref()
            .is_some_and(|head| cfg_attributes(head) != cfg_attributes(&file.base_text));
        let ids = head_ids_of(&file.path);
        for test in &base {
            let collected: BTreeSet<&str> = ids
                .iter()
                .copied()
                .filter(|id| id.split("::").any(|segment| segment == test.name))
                .collect();
            let at_head = head.iter().find(|h| h.name == test.name);
            // Removed only where the head's text no longer defines it as a test: one
            // behind a `cfg` the lane does not set is defined and not collected.
            if (at_head.is_none() || cfg_changed) && collected.is_empty() {
                judgement
                    .removed
                    .push(format!("{}::{}", file.path, test.name));
                continue;
            }
            if at_head.is_some_and(|h| h.should_panic) && !test.should_panic {
                let listed: Vec<&str> = collected.into_iter().collect();
                judgement.weaken(
                    &listed,
                    format!("{}::{}", file.path, test.name),
                    "gained #[should_panic]: it now passes by failing",
                );
            }
        }
        // A doc test the head no longer runs, by its item (its line shifts with edits).
        for gone in
            super::rust_doctests::gone(&file.path, &file.base_text, file.head_text.as_deref())
        {
            judgement.removed.push(format!(
                "the doc test `{}` (no example of `{}` the head runs takes its place: deleted, or fenced `ignore`, `no_run`, `compile_fail`, `should_panic` or as text; run it again, or check `{}` in a #[test])",
                gone.name(&file.path),
                if gone.item.is_empty() { "the module" } else { &gone.item },
                if gone.item.is_empty() { "it" } else { &gone.item },
            ));
        }
        let Some(head_text) = file.head_text.as_deref() else {
            continue;
        };
        let head_checks = test_code_checks(&file.path, head_text);
        for (function, checks) in base_checks {
            let said = match head_checks.get(&function) {
                Some(at_head) => fewer_checks(&checks, at_head),
                // A removed test is said above; a helper that made checks, here.
                None if base.iter().any(|t| t.name == function) => None,
                None => fewer_checks(&checks, &FnChecks::default())
                    .map(|_| "a function of the test code that made checks is gone".to_owned()),
            };
            let Some(said) = said else { continue };
            let listed: Vec<&str> = ids
                .iter()
                .copied()
                .filter(|id| id.split("::").any(|segment| segment == function))
                .collect();
            judgement.weaken(&listed, format!("{}::{function}", file.path), &said);
        }
    }
    judgement.weakened.sort();
    judgement.weakened.dedup();
    judgement.removed.sort();
    judgement.removed.dedup();
    judgement
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_functions_are_read_outside_comments_and_literals() {
        let text = concat!(
            "#[test]\nfn plain() {}\n\n",
            "#[tokio::test(flavor = \"multi_thread\")]\nasync fn on_tokio() {}\n\n",
            "#[test]\n#[should_panic(expected = \"]\")]\npub fn panics() {}\n\n",
            "// #[test]\n// fn commented() {}\n",
            "const S: &str = \"#[test] fn in_a_string() {}\";\n",
            "#[cfg(test)]\nfn only_in_tests() {}\n",
            "#[derive(Debug)]\nstruct NotAFn;\n",
            "fn helper() { let _ = '\"'; }\n#[test]\nfn after_a_char_quote() {}\n",
        );
        let names: Vec<(String, bool)> = test_functions(text)
            .into_iter()
            .map(|t| (t.name, t.should_panic))
            .collect();
        assert_eq!(
            names,
            [
                ("plain".to_owned(), false),
                ("on_tokio".to_owned(), false),
                ("panics".to_owned(), true),
                ("after_a_char_quote".to_owned(), false),
            ]
        );
    }

    fn change(base: &str, head: Option<&str>) -> FileTexts {
        FileTexts {
            path: "tests/calc.rs".to_owned(),
            base_text: base.to_owned(),
            head_text: head.map(str::to_owned),
        }
    }

    #[test]
    fn removed_tests_and_a_gained_should_panic_are_found() {
        let base = "#[test]\nfn adds() {}\n#[test]\nfn subtracts() {}\n#[test]\nfn cases() {}\n";
        let head =
            "#[test]\n#[should_panic]\nfn adds() {}\nfn subtracts() {}\n#[rstest]\nfn cases() {}\n";
        let ids = ["calc::calc::adds", "calc::calc::cases::case_1"];
        let judged = judge(&[change(base, Some(head))], |_| ids.to_vec());
        assert_eq!(judged.files, ["tests/calc.rs"]);
        // `subtracts` lost its `#[test]`: no longer collected.
        assert_eq!(judged.removed, ["tests/calc.rs::subtracts"]);
        assert_eq!(judged.weakened.len(), 1);
        assert_eq!(judged.weakened[0].test, "calc::calc::adds");
        // A deleted file's tests are removed unless collected elsewhere in its unit.
        let judged = judge(&[change(base, None)], |_| Vec::new());
        assert_eq!(judged.removed.len(), 3);
        // A base with no test: not judged.
        let judged = judge(&[change("fn f() {}\n", None)], |_| Vec::new());
        assert!(judged.files.is_empty() && judged.removed.is_empty());
        // Defined at the head behind a `cfg` the lane does not set: not collected, kept.
        let judged = judge(&[change(base, Some(base))], |_| Vec::new());
        assert!(judged.removed.is_empty());
        // A `cfg` the change added hides a test it still writes: removed.
        let hidden = base.replacen("#[test]\nfn adds", "#[cfg(any())]\n#[test]\nfn adds", 1);
        let judged = judge(&[change(base, Some(&hidden))], |_| {
            vec!["calc::calc::subtracts", "calc::calc::cases"]
        });
        assert_eq!(judged.removed, ["tests/calc.rs::adds"]);
        let module = "#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {}\n}\n";
        let hidden = module.replace("#[cfg(test)]", "#[cfg(all(test, feature = \"never\"))]");
        let judged = judge(&[change(module, Some(&hidden))], |_| Vec::new());
        assert_eq!(judged.removed, ["tests/calc.rs::adds"]);
        assert_eq!(
            cfg_attributes("#[cfg( test )]\n#![cfg(unix)]\n// #[cfg(x)]\n#[cfg_attr(a, b(c))]"),
            ["#![cfg(unix)]", "#[cfg(test)]", "#[cfg_attr(a,b(c))]"]
        );
        // A test that had should_panic already is not weakened by keeping it.
        let both = "#[test]\n#[should_panic]\nfn adds() {}\n";
        let judged = judge(&[change(both, Some(both))], |_| vec!["calc::calc::adds"]);
        assert!(judged.weakened.is_empty() && judged.removed.is_empty());
    }

    #[test]
    fn a_kept_test_or_helper_that_checks_less_is_weakened_and_a_changed_check_is_not() {
        let base = concat!(
            "#[test]\nfn adds() {\n    let sum = calc::add(2, 2);\n    assert_eq!(sum, 4);\n    check(sum);\n}\n\n",
            "fn check(sum: i32) {\n    assert!(sum > 0, \"positive\");\n    calc::parse(\"4\").unwrap();\n}\n",
        );
        let weakened = |head: &str| -> Vec<(String, String)> {
            judge(&[change(base, Some(head))], |_| vec!["calc::calc::adds"])
                .weakened
                .into_iter()
                .map(|w| (w.test, w.base_outcome))
                .collect()
        };
        // Each way of taking a check away is found, and named.
        let tampered = [
            (
                "    assert_eq!(sum, 4);\n",
                "    let _ = (sum, 4);\n",
                "`assert…` 1 → 0",
            ),
            (
                "    assert_eq!(sum, 4);\n",
                "    // assert_eq!(sum, 4);\n",
                "`assert…` 1 → 0",
            ),
            (
                "    assert_eq!(sum, 4);\n",
                "    let _ = \"assert_eq!(sum, 4)\";\n",
                "`assert…` 1 → 0",
            ),
            ("    let sum", "    return;\n    let sum", "`return` 0 → 1"),
            (
                "    assert_eq!(sum, 4);",
                "    #[cfg(any())]\n    assert_eq!(sum, 4);",
                "attributes in its body 0 → 1",
            ),
            (
                "    assert_eq!(sum, 4);",
                "    if false { assert_eq!(sum, 4); }",
                "branches that never run 0 → 1",
            ),
        ];
        for (from, to, said) in tampered {
            let head = base.replacen(from, to, 1);
            let found = weakened(&head);
            assert_eq!(found.len(), 1, "{to:?}: {found:?}");
            assert_eq!(found[0].0, "calc::calc::adds", "{to:?}");
            assert!(found[0].1.contains(said), "{to:?}: {found:?}");
        }
        // A call of a helper named for what it asserts is an assertion; its definition is not.
        let helper = "fn assert_parses(text: &str) {\n    calc::parse(text).unwrap();\n}\n#[test]\nfn parses() {\n    assert_parses(\"4\");\n}\n";
        let judged = judge(
            &[change(
                helper,
                Some(&helper.replacen("    assert_parses(\"4\");\n", "", 1)),
            )],
            |_| vec!["calc::calc::parses"],
        );
        assert_eq!(judged.weakened.len(), 1, "{judged:?}");
        assert!(
            judged.weakened[0].base_outcome.contains("`assert…` 1 → 0"),
            "{judged:?}"
        );
        assert!(
            !test_code_checks("tests/calc.rs", helper)["assert_parses"]
                .checks
                .contains_key(ASSERTIONS)
        );
        // `?` in a test that returns a `Result` is a check; `?Sized` is not.
        let returns_result = "#[test]\nfn parses() -> Result<(), E> {\n    calc::parse(\"4\")?;\n    Ok(())\n}\nfn size<T: ?Sized>(_: &T) {}\n";
        let judged = judge(
            &[change(
                returns_result,
                Some(&returns_result.replacen(
                    "calc::parse(\"4\")?;",
                    "let _ = calc::parse(\"4\");",
                    1,
                )),
            )],
            |_| vec!["calc::calc::parses"],
        );
        assert_eq!(judged.weakened.len(), 1, "{judged:?}");
        assert!(
            judged.weakened[0]
                .base_outcome
                .contains("`.unwrap()/.expect(…)/?` 1 → 0"),
            "{judged:?}"
        );
        assert!(
            !test_code_checks("tests/calc.rs", returns_result)["size"]
                .checks
                .contains_key("?")
        );
        // A helper of the test code that checks less: named by its file and name.
        let head = base.replacen(
            "    calc::parse(\"4\").unwrap();\n",
            "    let _ = calc::parse(\"4\");\n",
            1,
        );
        assert_eq!(
            weakened(&head),
            [(
                "tests/calc.rs::check".to_owned(),
                "checks less than the base's version: `.unwrap()/.expect(…)/?` 1 → 0".to_owned()
            )]
        );
        let head = base.replacen("fn check(sum: i32) {\n    assert!(sum > 0, \"positive\");\n    calc::parse(\"4\").unwrap();\n}\n", "", 1)
            .replacen("    check(sum);\n", "", 1);
        assert_eq!(weakened(&head)[0].0, "tests/calc.rs::check");
        // Edited, reformatted, added or swapped for another check of the same kind: not
        // weakened by the text (the arguments are the known gap).
        for head in [
            base.replacen(
                "assert_eq!(sum, 4)",
                "assert_eq!(\n        sum,\n        4\n    )",
                1,
            ),
            base.replacen("assert_eq!(sum, 4)", "assert_eq!(calc::add(2, 3), 5)", 1),
            base.replacen(
                "    check(sum);",
                "    check(sum);\n    assert_ne!(sum, 5);",
                1,
            ),
            base.replacen("fn adds()", "fn adds_renamed_and_listed()", 1),
            base.replacen("assert_eq!(sum, 4)", "assert!(sum == 4)", 1),
            base.replacen(
                "calc::parse(\"4\").unwrap();",
                "calc::parse(\"4\").expect(\"parses\");",
                1,
            ),
        ] {
            let judged = judge(&[change(base, Some(&head))], |_| {
                vec!["calc::calc::adds", "calc::calc::adds_renamed_and_listed"]
            });
            assert!(judged.weakened.is_empty(), "{head}\n{:?}", judged.weakened);
        }
    }

    #[test]
    fn in_a_library_file_only_the_test_module_is_test_code() {
        let base = concat!(
            "pub fn add(a: i32, b: i32) -> i32 {\n    assert!(a < 1000);\n    a + b\n}\n\n",
            "#[cfg(test)]\nmod tests {\n    fn check(sum: i32) {\n        assert_eq!(sum, 4);\n    }\n\n",
            "    #[test]\n    fn adds() {\n        check(super::add(2, 2));\n    }\n}\n",
        );
        let checks = test_code_checks("src/lib.rs", base);
        assert_eq!(checks.keys().collect::<Vec<_>>(), ["adds", "check"]);
        assert!(has_test_code("src/lib.rs", base));
        assert!(!has_test_code(
            "src/lib.rs",
            "pub fn f() { assert!(true); }\n"
        ));
        assert!(has_test_code(
            "tests/common/mod.rs",
            "pub fn f() { assert!(true); }\n"
        ));
        // The library's own assertion may go; the test module's helper's may not.
        let lib = change_at(
            "src/lib.rs",
            base,
            &base.replacen("    assert!(a < 1000);\n", "", 1),
        );
        assert!(judge(&[lib], |_| Vec::new()).weakened.is_empty());
        let helper = change_at(
            "src/lib.rs",
            base,
            &base.replacen("        assert_eq!(sum, 4);\n", "", 1),
        );
        let judged = judge(&[helper], |_| vec!["calc::tests::adds"]);
        assert_eq!(judged.weakened.len(), 1);
        assert_eq!(judged.weakened[0].test, "src/lib.rs::check");
    }

    fn change_at(path: &str, base: &str, head: &str) -> FileTexts {
        FileTexts {
            path: path.to_owned(),
            base_text: base.to_owned(),
            head_text: Some(head.to_owned()),
        }
    }
}
