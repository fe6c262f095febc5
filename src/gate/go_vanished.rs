//! go tests the merge base runs that the change's head never runs. A go package's test
//! binary can end before any test starts, with status 0 and no test event (`os.Exit(0)`
//! in an `init()` of the code under test, a `TestMain` that never calls `m.Run`), or be
//! told to run fewer tests (`flag.Set("test.run", …)` before `m.Run`), or fall out of
//! `go test ./...` (a `go.mod` added in its folder): `go test -json` then reports the
//! package as passing, and every test of it, a test that would catch a regression in the
//! same change included, is silently gone. The whole suite's run runs every test of every
//! package (no `-run`), so a test the base's files define that the run never reported,
//! whose file and function the change kept, and that the merge base itself lists, the
//! change made vanish. Pure; the lane's edge reads git, the report and the listings.

use std::collections::{BTreeMap, BTreeSet};

use super::go_base;
use crate::results::{gotest, ids};

/// A go test file of the merge base that `go test ./...` at the root reaches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseTestFile {
    /// The file, repository-relative.
    pub path: String,
    /// Its package's import path at the base.
    pub package: String,
    /// The tests it defines (`TestX`, `FuzzX`; not `TestMain`).
    pub tests: Vec<String>,
}

/// The base's go test files (`files`: path and text) that `go test ./...` at the root
/// runs, each with its package and the tests it defines; `modules` is the module path
/// each base `go.mod` declares, by folder (`""` the root). A file in a module of its own
/// below the root, or under a folder `./...` leaves out (`testdata`, `vendor`, a name
/// starting with `_` or `.`), is not run at the base either.
pub fn base_test_files(
    files: &[(String, String)],
    modules: &BTreeMap<String, String>,
) -> Vec<BaseTestFile> {
    let mut found = Vec::new();
    for (path, text) in files {
        let folder = go_base::folder_of(path);
        if !reached_by_all_packages(folder) {
            continue;
        }
        let Some((at, module)) = module_of(folder, modules) else {
            continue;
        };
        if !at.is_empty() {
            continue;
        }
        let tests: Vec<String> = go_base::test_names(text)
            .into_iter()
            .filter(|name| name != "TestMain")
            .collect();
        if tests.is_empty() {
            continue;
        }
        found.push(BaseTestFile {
            path: path.clone(),
            package: go_base::package_path(module, at, folder),
            tests,
        });
    }
    found
}

/// The nearest folder at or above `folder` that has a `go.mod`, and its module path.
fn module_of<'m>(
    folder: &'m str,
    modules: &'m BTreeMap<String, String>,
) -> Option<(&'m str, &'m String)> {
    let mut at = folder;
    loop {
        if let Some(module) = modules.get(at) {
            return Some((at, module));
        }
        if at.is_empty() {
            return None;
        }
        at = go_base::folder_of(at);
    }
}

/// Whether `./...` reaches a folder: go leaves out `testdata`, `vendor` and names that
/// start with `_` or `.`.
fn reached_by_all_packages(folder: &str) -> bool {
    folder
        .split('/')
        .filter(|part| !part.is_empty())
        .all(|part| {
            part != "testdata"
                && part != "vendor"
                && !part.starts_with('_')
                && !part.starts_with('.')
        })
}

/// What the head has of a base test file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AtHead {
    /// The change deleted it (or renamed it: a deletion and an addition); its tests are
    /// judged as removed with the base's version of the file (`gate::go_base`).
    Gone,
    /// The test names its head version defines (the base's, when untouched).
    Defines(Vec<String>),
}

/// A base test the head's whole suite never reported.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Unreported {
    /// `package::TestX`.
    pub id: String,
    /// Its package's import path at the base.
    pub package: String,
}

/// The base's tests the whole suite's run at the head never reported (`reported`: its
/// top-level ids, any outcome), kept to those the change did not take away itself: their
/// file is still there (`at_head`) and still defines them, and the base's version of a
/// touched file did not already name them removed (`judged`).
pub fn unreported(
    files: &[BaseTestFile],
    reported: &BTreeSet<String>,
    at_head: impl Fn(&str) -> AtHead,
    judged: &BTreeSet<String>,
) -> Vec<Unreported> {
    let mut found = Vec::new();
    for file in files {
        let AtHead::Defines(defined) = at_head(&file.path) else {
            continue;
        };
        for name in &file.tests {
            let id = ids::go(&file.package, name);
            if reported.contains(&id) || judged.contains(&id) || !defined.contains(name) {
                continue;
            }
            found.push(Unreported {
                id,
                package: file.package.clone(),
            });
        }
    }
    found.sort();
    found.dedup();
    found
}

/// What `go test -json` said of one package: its package-level action (`pass`, `fail`,
/// `skip` for no test files) and the top-level tests it reported.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PackageRun {
    /// The last package-level `pass`, `fail` or `skip`.
    pub action: Option<String>,
    /// Top-level test names with an event (a subtest counts for its parent).
    pub tests: BTreeSet<String>,
}

/// Each package of a `go test -json` stream; lines that are not events (go's build
/// output) are passed over.
pub fn package_runs(stream: &str) -> BTreeMap<String, PackageRun> {
    let mut runs: BTreeMap<String, PackageRun> = BTreeMap::new();
    for line in stream.lines().filter(|line| line.starts_with('{')) {
        let Ok(event) = serde_json::from_str::<gotest::EventName>(line) else {
            continue;
        };
        if event.package.is_empty() {
            continue;
        }
        let run = runs.entry(event.package).or_default();
        match event.test {
            Some(test) => {
                let top = test.split('/').next().unwrap_or(&test);
                run.tests.insert(top.to_owned());
            }
            None if matches!(event.action.as_str(), "pass" | "fail" | "skip") => {
                run.action = Some(event.action);
            }
            None => {}
        }
    }
    runs
}

/// The top-level test ids a stream's packages reported.
pub fn reported_ids(runs: &BTreeMap<String, PackageRun>) -> BTreeSet<String> {
    runs.iter()
        .flat_map(|(package, run)| run.tests.iter().map(|name| ids::go(package, name)))
        .collect()
}

/// Base tests the head never ran, with what most likely took them away.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vanished {
    /// `package::TestX`, in id order.
    pub tests: Vec<String>,
    /// Per package, what the head's run says of it: `PKG: why; PKG: why`.
    pub cause: String,
}

/// The unreported tests the merge base lists (`at_base`: its listing of their packages,
/// or why it could not be made, in which case every one counts: the lane cannot tell them
/// from a vanished test), with a cause per package from the head's run (`runs`) and
/// listing (`listed_at_head`). `None` when none vanished.
pub fn judge(
    unreported: &[Unreported],
    at_base: Result<&BTreeSet<String>, &str>,
    runs: &BTreeMap<String, PackageRun>,
    listed_at_head: &BTreeSet<String>,
) -> Option<Vanished> {
    let gone: Vec<&Unreported> = unreported
        .iter()
        .filter(|test| match at_base {
            Ok(listed) => listed.contains(&test.id),
            Err(_) => true,
        })
        .collect();
    if gone.is_empty() {
        return None;
    }
    // Packages by cause, so that one cause is said once however many packages it took.
    let mut causes: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for test in &gone {
        causes
            .entry(cause(
                runs.get(&test.package),
                listed_at_head.contains(&test.id),
            ))
            .or_default()
            .insert(test.package.as_str());
    }
    let mut cause: Vec<String> = causes
        .into_iter()
        .map(|(why, packages)| {
            let named: Vec<&str> = packages.iter().copied().take(PACKAGES_SHOWN).collect();
            let more = packages.len().saturating_sub(PACKAGES_SHOWN);
            let more = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            format!("{}{more}: {why}", named.join(", "))
        })
        .collect();
    if let Err(said) = at_base {
        cause.push(format!(
            "the merge base could not be listed to tell whether it runs them ({said})"
        ));
    }
    Some(Vanished {
        tests: gone.iter().map(|test| test.id.clone()).collect(),
        cause: cause.join("; "),
    })
}

/// Packages named before "and N more" in a cause.
const PACKAGES_SHOWN: usize = 5;

/// Why a package's test went unreported, from what the head's run said of the package
/// and whether the head's listing had the test.
fn cause(run: Option<&PackageRun>, listed_at_head: bool) -> &'static str {
    let Some(run) = run else {
        return "`go test ./...` at the head built no package of that import path (a `go.mod` added in its folder or above it makes it a module of its own, or the module was renamed)";
    };
    if listed_at_head {
        return "listed at the head but not run: the package's test binary was told to run fewer tests or ended early (an `init()` or `TestMain` that sets `-test.run` or `-test.skip`, or exits when not listing)";
    }
    match (run.tests.is_empty(), run.action.as_deref()) {
        (true, Some("pass")) => {
            "its test binary ended with status 0 before any test ran (go printed `ok` and no test): an `os.Exit` in an `init()` of the package or of a package it imports, or a `TestMain` that never calls `m.Run`"
        }
        (true, Some("skip")) => "go found no test files in the package at the head",
        (true, _) => "its test binary ended before any test ran",
        (false, _) => {
            "no longer built into the package's test binary at the head (a build constraint it no longer meets)"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TESTS: &str = "package b\n\nimport \"testing\"\n\nfunc TestMain(m *testing.M) { m.Run() }\n\nfunc TestTwice(t *testing.T) {}\n\nfunc FuzzTwice(f *testing.F) {}\n\nfunc helper() {}\n";

    fn modules(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(folder, module)| ((*folder).to_owned(), (*module).to_owned()))
            .collect()
    }

    fn files(paths: &[&str]) -> Vec<(String, String)> {
        paths
            .iter()
            .map(|path| ((*path).to_owned(), TESTS.to_owned()))
            .collect()
    }

    #[test]
    fn base_files_are_those_go_test_reaches_from_the_root() {
        let found = base_test_files(
            &files(&[
                "b/b_test.go",
                "b_test.go",
                "nested/x/x_test.go",
                "b/testdata/t_test.go",
                "vendor/v/v_test.go",
                "_old/o_test.go",
            ]),
            &modules(&[("", "example.com/shop"), ("nested", "example.com/nested")]),
        );
        let seen: Vec<(&str, &str, Vec<&str>)> = found
            .iter()
            .map(|f| {
                (
                    f.path.as_str(),
                    f.package.as_str(),
                    f.tests.iter().map(String::as_str).collect(),
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                (
                    "b/b_test.go",
                    "example.com/shop/b",
                    vec!["TestTwice", "FuzzTwice"]
                ),
                (
                    "b_test.go",
                    "example.com/shop",
                    vec!["TestTwice", "FuzzTwice"]
                ),
            ]
        );
        // Without a root module `go test ./...` runs nothing there.
        assert!(base_test_files(&files(&["b/b_test.go"]), &modules(&[])).is_empty());
    }

    #[test]
    fn a_test_is_unreported_only_when_the_change_kept_its_file_and_function() {
        let base = base_test_files(
            &files(&["a/a_test.go", "b/b_test.go", "c/c_test.go", "d/d_test.go"]),
            &modules(&[("", "m")]),
        );
        let reported: BTreeSet<String> =
            ["m/a::TestTwice".to_owned(), "m/a::FuzzTwice".to_owned()].into();
        let judged: BTreeSet<String> = ["m/d::TestTwice".to_owned()].into();
        let at_head = |path: &str| match path {
            "b/b_test.go" => AtHead::Gone,
            "c/c_test.go" => AtHead::Defines(vec!["FuzzTwice".to_owned()]),
            _ => AtHead::Defines(vec!["TestTwice".to_owned(), "FuzzTwice".to_owned()]),
        };
        let ids: Vec<String> = unreported(&base, &reported, at_head, &judged)
            .into_iter()
            .map(|u| u.id)
            .collect();
        assert_eq!(ids, ["m/c::FuzzTwice", "m/d::FuzzTwice"]);
    }

    /// go 1.19's stream for a package whose `init()` called `os.Exit(0)`: `ok` and a
    /// package-level pass, no test event.
    const ENDED_EARLY: &str = "{\"Action\":\"output\",\"Package\":\"m/b\",\"Output\":\"ok  \\tm/b\\t0.002s\\n\"}\n{\"Action\":\"pass\",\"Package\":\"m/b\",\"Elapsed\":0.002}\n";

    const RAN: &str = "{\"Action\":\"run\",\"Package\":\"m/a\",\"Test\":\"TestAdd\"}\n{\"Action\":\"run\",\"Package\":\"m/a\",\"Test\":\"TestAdd/case\"}\n{\"Action\":\"pass\",\"Package\":\"m/a\",\"Test\":\"TestAdd\",\"Elapsed\":0}\n# m/a\nnot json\n{\"Action\":\"pass\",\"Package\":\"m/a\",\"Elapsed\":0.004}\n";

    #[test]
    fn the_stream_tells_packages_that_ran_no_test() {
        let runs = package_runs(&format!("{RAN}{ENDED_EARLY}"));
        assert_eq!(runs["m/a"].action.as_deref(), Some("pass"));
        assert_eq!(runs["m/a"].tests, BTreeSet::from(["TestAdd".to_owned()]));
        assert_eq!(runs["m/b"].action.as_deref(), Some("pass"));
        assert!(runs["m/b"].tests.is_empty());
        assert_eq!(
            reported_ids(&runs),
            BTreeSet::from(["m/a::TestAdd".to_owned()])
        );
    }

    #[test]
    fn only_tests_the_merge_base_lists_vanish_and_each_package_says_why() {
        let runs = package_runs(&format!("{RAN}{ENDED_EARLY}"));
        let unreported = [
            Unreported {
                id: "m/a::TestTagged".to_owned(),
                package: "m/a".to_owned(),
            },
            Unreported {
                id: "m/a::TestNarrowed".to_owned(),
                package: "m/a".to_owned(),
            },
            Unreported {
                id: "m/b::TestTwice".to_owned(),
                package: "m/b".to_owned(),
            },
            Unreported {
                id: "m/sub::TestSplit".to_owned(),
                package: "m/sub".to_owned(),
            },
        ];
        let at_base: BTreeSet<String> = ["m/a::TestNarrowed", "m/b::TestTwice", "m/sub::TestSplit"]
            .map(str::to_owned)
            .into();
        let listed: BTreeSet<String> = ["m/a::TestNarrowed".to_owned()].into();
        let vanished = judge(&unreported, Ok(&at_base), &runs, &listed).expect("vanished");
        assert_eq!(
            vanished.tests,
            ["m/a::TestNarrowed", "m/b::TestTwice", "m/sub::TestSplit"]
        );
        let causes: Vec<&str> = vanished.cause.split("; ").collect();
        assert_eq!(causes.len(), 3, "{}", vanished.cause);
        for said in [
            "m/a: listed at the head but not run",
            "m/b: its test binary ended with status 0 before any test ran",
            "m/sub: `go test ./...` at the head built no package",
        ] {
            assert!(
                causes.iter().any(|cause| cause.starts_with(said)),
                "{said}: {}",
                vanished.cause
            );
        }

        // A test only a build tag the lane does not set builds is not the change's.
        assert_eq!(judge(&unreported[..1], Ok(&at_base), &runs, &listed), None);
        // A merge base that cannot be listed cannot excuse any.
        let unlisted =
            judge(&unreported[..1], Err("go: no Go files"), &runs, &listed).expect("vanished");
        assert_eq!(unlisted.tests, ["m/a::TestTagged"]);
        assert!(
            unlisted.cause.ends_with(
                "the merge base could not be listed to tell whether it runs them (go: no Go files)"
            ),
            "{}",
            unlisted.cause
        );
    }
}
