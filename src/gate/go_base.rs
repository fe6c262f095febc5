//! Judging a change's go test files with the base's version of them: which files go back
//! as the base has them, the tests each base file defines, and what their run against
//! the head's code says. Pure; the merge lane's edge builds and runs the test binaries.
//!
//! go builds a package's test binary from all of its `_test.go` files at once, so the
//! base's version of a touched file cannot run on its own as a pytest module does. The
//! lane puts back, in every package folder the change touched a test file in that the
//! base had, every `_test.go` file the change touched as the base has it (one it added is
//! left out), through `go test -overlay`: the work tree is not written, and go's build
//! cache keeps every package but those test binaries.

use std::collections::{BTreeMap, BTreeSet};

use crate::results::Outcome;

use super::tamper::{BaseJudgement, Weakened};

/// Whether `path` is a go test file (`*_test.go`).
pub fn is_go_test_file(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    name.len() > "_test.go".len() && name.ends_with("_test.go")
}

/// The folder of a repository-relative path (`""` at the root).
pub fn folder_of(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(folder, _)| folder)
}

/// The tests go runs from a file: its top-level `func TestX(` and `func FuzzX(` whose
/// name go accepts (`Test` alone, or followed by anything but a lower-case letter, as
/// `go test` requires), in the order the file writes them.
pub fn test_names(text: &str) -> Vec<String> {
    functions_named(text, &["Test", "Fuzz"])
}

/// Whether a test file is test-support code: it defines no test, benchmark, example or
/// fuzz target (helpers, fixtures, a `TestMain`'s set-up beside none), so the tests that
/// use it live in other files.
pub fn is_support(text: &str) -> bool {
    functions_named(text, &["Test", "Fuzz", "Benchmark", "Example"])
        .iter()
        .all(|name| name == "TestMain")
}

/// Top-level functions named by one of `prefixes` as go's test rule reads them.
fn functions_named(text: &str, prefixes: &[&str]) -> Vec<String> {
    let mut names = Vec::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("func ") else {
            continue;
        };
        let rest = rest.trim_start();
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let after = &rest[name.len()..];
        if !after.trim_start().starts_with('(') {
            continue;
        }
        let accepted = prefixes.iter().any(|prefix| {
            name.strip_prefix(prefix)
                .is_some_and(|tail| !tail.chars().next().is_some_and(char::is_lowercase))
        });
        if accepted && !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// A file's build constraints (`//go:build …`, `// +build …` lines before its `package`
/// clause), trimmed: a change to them can take the file's tests out of the build while
/// its text still defines them.
pub fn build_constraints(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with("package ") {
            break;
        }
        let tight: String = line.split_whitespace().collect::<Vec<_>>().join(" ");
        if tight.starts_with("//go:build") || tight.starts_with("// +build") {
            lines.push(tight);
        }
    }
    lines
}

/// The module path a `go.mod` declares (`module example.com/m`, quoted or not).
pub fn module_path(go_mod: &str) -> Option<String> {
    go_mod.lines().find_map(|line| {
        let rest = line.trim().strip_prefix("module")?;
        if !rest.starts_with(char::is_whitespace) {
            return None;
        }
        let path = rest.split("//").next()?.trim().trim_matches('"');
        (!path.is_empty()).then(|| path.to_owned())
    })
}

/// The import path of the package in `folder`, inside the module declared at
/// `module_folder` (both repository-relative) with `module`'s path.
pub fn package_path(module: &str, module_folder: &str, folder: &str) -> String {
    let inside = if module_folder.is_empty() {
        folder
    } else {
        folder
            .strip_prefix(module_folder)
            .map_or(folder, |rest| rest.trim_start_matches('/'))
    };
    if inside.is_empty() {
        module.to_owned()
    } else {
        format!("{module}/{inside}")
    }
}

/// The import path of the package in `folder` (repository-relative): the nearest
/// `go.mod` at or above it declares the module (`module_at(folder)` is the module path a
/// folder's own `go.mod` declares, if it has one). Without one, the folder itself.
pub fn package_in(folder: &str, module_at: impl Fn(&str) -> Option<String>) -> String {
    let mut at = folder;
    loop {
        if let Some(module) = module_at(at) {
            return package_path(&module, at, folder);
        }
        if at.is_empty() {
            return folder.to_owned();
        }
        at = folder_of(at);
    }
}

/// One touched go test file the base had, and the tests the base's version defines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseGoFile {
    /// The file, repository-relative.
    pub path: String,
    /// Its package's import path.
    pub package: String,
    /// `package::TestX` of every test its base version defines.
    pub tests: Vec<String>,
    /// Whether its base version is test-support code ([`is_support`]).
    pub support: bool,
    /// The test names (`TestX`) its head version defines (none when deleted).
    pub head_defines: Vec<String>,
}

impl BaseGoFile {
    /// The base's tests the head neither collects nor still defines in this file.
    fn removed<'f>(&'f self, head_ids: &'f BTreeSet<String>) -> impl Iterator<Item = &'f String> {
        self.tests.iter().filter(move |test| {
            let name = test
                .rsplit_once("::")
                .map_or(test.as_str(), |(_, name)| name);
            !head_ids.contains(*test) && !self.head_defines.iter().any(|h| h == name)
        })
    }
}

/// How the base's version ran: every test's outcome, or why it could not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BaseGoRun {
    /// The binaries built and ran: each test's outcome.
    Ran(BTreeMap<String, Outcome>),
    /// They did not build or run against the head's code (go's words).
    CouldNotRun(String),
    /// The lane's time ran out first.
    NotRun,
}

/// Judges the base's version of the touched go test files. A test the base defines that
/// the head no longer collects is removed; a test green in every replay at the head that
/// is red, or missing, in the base's version is weakened; base versions that do not build
/// against the head's code weaken every file that had tests. A file the binary never
/// reported a test of (a build tag the lane does not set) is not judged by its tests.
/// Test-support code the change edited or deleted is reported as weakened too, whatever
/// ran: the tests of other files that use it are not touched, so neither replayed nor
/// judged (pytest's helpers are test infrastructure for the same reason).
pub fn judge(
    files: &[BaseGoFile],
    head_ids: &BTreeSet<String>,
    head_green: &BTreeSet<String>,
    run: &BaseGoRun,
) -> BaseJudgement {
    let mut judgement = BaseJudgement {
        files: files.iter().map(|f| f.path.clone()).collect(),
        ..BaseJudgement::default()
    };
    for file in files.iter().filter(|f| f.support) {
        judgement.weakened.push(Weakened {
            test: file.path.clone(),
            base_outcome: "test-support code (it defines no test) edited: the tests of other files that use it are neither replayed nor judged with the base's version".to_owned(),
        });
    }
    match run {
        BaseGoRun::NotRun => {
            judgement.not_run = u32::try_from(files.len()).unwrap_or(u32::MAX);
        }
        BaseGoRun::CouldNotRun(said) => {
            for file in files {
                judgement.removed.extend(file.removed(head_ids).cloned());
            }
            for file in files.iter().filter(|f| !f.tests.is_empty()) {
                judgement.weakened.push(Weakened {
                    test: file.path.clone(),
                    base_outcome: format!(
                        "the base's version did not run against the head's code: {said}"
                    ),
                });
            }
        }
        BaseGoRun::Ran(outcomes) => {
            for file in files {
                let reported = file.tests.iter().any(|t| outcomes.contains_key(t));
                if !reported {
                    continue;
                }
                judgement.removed.extend(file.removed(head_ids).cloned());
                for test in &file.tests {
                    if !head_ids.contains(test) {
                        continue;
                    }
                    if !head_green.contains(test) {
                        continue;
                    }
                    let base_outcome = match outcomes.get(test) {
                        Some(outcome) if outcome.is_red() => outcome.as_str().to_owned(),
                        Some(_) => continue,
                        None => "not run by the base's version".to_owned(),
                    };
                    judgement.weakened.push(Weakened {
                        test: test.clone(),
                        base_outcome,
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

/// go's `-overlay` file: each path (absolute) replaced by a file's content, or removed
/// (`None`).
pub fn overlay_json(replace: &[(String, Option<String>)]) -> String {
    let map: BTreeMap<&str, &str> = replace
        .iter()
        .map(|(path, with)| (path.as_str(), with.as_deref().unwrap_or("")))
        .collect();
    serde_json::json!({ "Replace": map }).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_names_follow_go_s_rule() {
        let text = "package p\n\nfunc TestAdd(t *testing.T) {}\nfunc Testing(t *testing.T) {}\nfunc Test(t *testing.T) {}\nfunc Test_under(t *testing.T) {}\nfunc FuzzParse(f *testing.F) {}\nfunc (s *S) TestMethod(t *testing.T) {}\n// func TestCommented(t *testing.T) {}\nfunc helper() {}\nfunc TestAdd(t *testing.T) {}\nfunc BenchmarkX(b *testing.B) {}\n";
        assert_eq!(
            test_names(text),
            ["TestAdd", "Test", "Test_under", "FuzzParse"]
        );
    }

    #[test]
    fn support_files_define_no_test_benchmark_or_example() {
        assert!(is_support(
            "package p\n\nfunc check(t *testing.T) {}\nfunc TestMain(m *testing.M) {}\n"
        ));
        assert!(!is_support(
            "package p\n\nfunc BenchmarkX(b *testing.B) {}\n"
        ));
        assert!(!is_support("package p\n\nfunc ExampleX() {}\n"));
    }

    #[test]
    fn build_constraints_are_read_before_the_package_clause() {
        let text = "// Copyright\n//go:build  linux && !never\n// +build linux\n\npackage p\n//go:build later\n";
        assert_eq!(
            build_constraints(text),
            ["//go:build linux && !never", "// +build linux"]
        );
        assert!(build_constraints("package p\n").is_empty());
    }

    #[test]
    fn packages_are_the_module_path_and_the_folder_inside_it() {
        assert_eq!(
            module_path("// c\nmodule \"example.com/m\" // x\n\ngo 1.19\n").as_deref(),
            Some("example.com/m")
        );
        assert_eq!(module_path("modules x\n"), None);
        assert_eq!(package_path("example.com/m", "", ""), "example.com/m");
        assert_eq!(
            package_path("example.com/m", "", "a/b"),
            "example.com/m/a/b"
        );
        assert_eq!(
            package_path("example.com/sub", "sub", "sub/c"),
            "example.com/sub/c"
        );
        assert!(is_go_test_file("a/x_test.go") && !is_go_test_file("_test.go"));
        assert!(!is_go_test_file("a/x.go"));
    }

    fn file(path: &str, tests: &[&str]) -> BaseGoFile {
        BaseGoFile {
            path: path.to_owned(),
            package: "m/p".to_owned(),
            tests: tests.iter().map(|t| format!("m/p::{t}")).collect(),
            support: tests.is_empty(),
            head_defines: Vec::new(),
        }
    }

    fn set(ids: &[&str]) -> BTreeSet<String> {
        ids.iter().map(|s| format!("m/p::{s}")).collect()
    }

    #[test]
    fn weakened_removed_and_unbuilt_base_versions_are_found() {
        let files = [
            file("p/a_test.go", &["TestA", "TestB", "TestGone"]),
            file("p/h_test.go", &[]),
        ];
        let outcomes: BTreeMap<String, Outcome> = [
            ("m/p::TestA", Outcome::Fail),
            ("m/p::TestB", Outcome::Pass),
            ("m/p::TestGone", Outcome::Pass),
        ]
        .into_iter()
        .map(|(id, o)| (id.to_owned(), o))
        .collect();
        let head_ids = set(&["TestA", "TestB"]);
        let green = set(&["TestA", "TestB"]);
        let judged = judge(&files, &head_ids, &green, &BaseGoRun::Ran(outcomes.clone()));
        assert_eq!(judged.weakened.len(), 2);
        assert_eq!(judged.weakened[0].test, "m/p::TestA");
        // The helper file: its users in other files are not judged.
        assert_eq!(judged.weakened[1].test, "p/h_test.go");
        let files = &files[..1];
        assert_eq!(judged.removed, ["m/p::TestGone"]);
        // Red at the head too: the replays reject it; nothing weakened.
        let judged = judge(
            files,
            &head_ids,
            &set(&["TestB"]),
            &BaseGoRun::Ran(outcomes),
        );
        assert!(judged.weakened.is_empty());
        // A base version that does not build weakens each file that had tests.
        let judged = judge(
            files,
            &head_ids,
            &green,
            &BaseGoRun::CouldNotRun("undefined: helper".to_owned()),
        );
        assert_eq!(judged.weakened.len(), 1);
        assert_eq!(judged.weakened[0].test, "p/a_test.go");
        // Removed by the texts: not collected and no longer defined at the head.
        assert_eq!(judged.removed, ["m/p::TestGone"]);
        // A file the binary never reported (a build tag): not judged.
        let judged = judge(
            files,
            &set(&[]),
            &set(&[]),
            &BaseGoRun::Ran(BTreeMap::new()),
        );
        assert!(judged.removed.is_empty() && judged.weakened.is_empty());
        assert_eq!(
            judge(files, &head_ids, &green, &BaseGoRun::NotRun).not_run,
            1
        );
    }

    #[test]
    fn the_overlay_replaces_and_removes() {
        let json = overlay_json(&[
            ("/r/p/a_test.go".to_owned(), Some("/s/1".to_owned())),
            ("/r/p/new_test.go".to_owned(), None),
        ]);
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(value["Replace"]["/r/p/a_test.go"], "/s/1");
        assert_eq!(value["Replace"]["/r/p/new_test.go"], "");
    }
}
