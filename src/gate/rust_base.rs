//! Judging a change's Rust test files against the base's text of them, without a second
//! build: a test the base's file defines that the head no longer collects (deleted,
//! renamed, its `#[test]` taken away) is removed, and a test that gains `#[should_panic]`
//! now passes by failing. Pure; the merge lane gives it both texts and the head's
//! collection.
//!
//! A base version of a cargo test cannot run against the head's code as pytest's and
//! go's do without building the crate a second time in another folder; what the texts
//! alone tell is judged here.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;

use super::tamper::{BaseJudgement, FileTexts, Weakened};
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

/// Judges the changed files: a base test is removed when the head's file no longer
/// defines it as a test (or changed its `cfg`s) and no id the head collects in its file's unit (`head_ids_of(path)`)
/// has its name as a segment (rstest's `adds::case_1` keeps `adds`; a test moved inside
/// its unit is kept); a base test without `#[should_panic]` that has it at the head is
/// weakened.
/// Files whose base defines no test are left out.
pub fn judge<'a>(files: &[FileTexts], head_ids_of: impl Fn(&str) -> Vec<&'a str>) -> BaseJudgement {
    let mut judgement = BaseJudgement::default();
    for file in files {
        let base = test_functions(&file.base_text);
        if base.is_empty() {
            continue;
        }
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
                let named = format!("{}::{}", file.path, test.name);
                let tests: Vec<&str> = if collected.is_empty() {
                    vec![named.as_str()]
                } else {
                    collected.into_iter().collect()
                };
                for id in tests {
                    judgement.weakened.push(Weakened {
                        test: id.to_owned(),
                        base_outcome: "gained #[should_panic]: it now passes by failing".to_owned(),
                    });
                }
            }
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
}
