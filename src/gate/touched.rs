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
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
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
                        && defines(runner, &file.head_text, function)
                }
            };
            if in_file {
                let new = file
                    .base_text
                    .as_deref()
                    .is_none_or(|base| !defines(runner, base, function));
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
        RunnerKind::Pytest | RunnerKind::Command => false,
    }
}

/// Whether `text` defines the test function `name`, in the runner's language.
fn defines(runner: RunnerKind, text: &str, name: &str) -> bool {
    if name.is_empty() {
        return false;
    }
    let patterns: Vec<String> = match runner {
        RunnerKind::Go => vec![format!("func {name}(")],
        RunnerKind::Cargo | RunnerKind::Nextest => vec![format!("fn {name}(")],
        RunnerKind::Pytest | RunnerKind::Command => {
            vec![format!("def {name}("), format!("async def {name}(")]
        }
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
}
