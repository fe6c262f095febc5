//! Oracles: with `[lane] fail_on_missing_oracle`, every new test module must call at least
//! one function of the oracle module (checks written by humans), so a new test cannot
//! assert only what the code under test already says. Python only, read with a real
//! parser (tree-sitter's Python grammar), so text that merely looks like a call — in a
//! string, a docstring or a comment — does not count:
//!
//! - the oracle's functions are its top-level `def` and `async def` names (decorated or
//!   not) that do not start with `_`;
//! - a test module binds them by `from M import f [as g]`, `from M import *`,
//!   `import M [as m]` or `from P import M [as m]`, where `M` is the oracle's module name
//!   (`oracle`) or any dotted path ending in it (`tests.oracle`, `.oracle`), anywhere in
//!   the module;
//! - a call is a call expression `g(…)` of a bound function, or `m.f(…)` of a bound
//!   module.
//!
//! Limits: a function reached through a fixture, a variable (`check = oracle.f`) or
//! `getattr` does not count; a name bound by an import inside a function counts for the
//! whole file, and a later rebinding of the name is not tracked.

use std::collections::{BTreeMap, BTreeSet};

use tree_sitter::{Node, Parser, Tree};

use super::diff::{Diff, FileStatus};
use super::files::file_name;
use super::rules::{Finding, RuleKind};

/// The rule name of oracle findings.
pub const MISSING_ORACLE: &str = "missing-oracle";

/// The oracle module, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Oracle {
    /// Repository-relative path.
    pub path: String,
    /// The module's own name (`oracle` for `tests/oracle.py`).
    pub module: String,
    /// Its public top-level functions.
    pub functions: BTreeSet<String>,
}

/// An oracle module candor cannot read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OracleError {
    /// Not a Python file.
    #[error(
        "the oracle module {path} is not a Python file: candor reads oracles written in Python"
    )]
    Unsupported {
        /// The configured path.
        path: String,
    },
    /// No public function in it.
    #[error("the oracle module {path} defines no public top-level function")]
    NoFunctions {
        /// The configured path.
        path: String,
    },
}

/// A Python syntax tree of `source`. tree-sitter recovers from syntax errors, so a module
/// that is not valid Python still gives a tree (with error nodes, which hold no calls).
fn parse_python(source: &str) -> Option<Tree> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .ok()?;
    parser.parse(source, None)
}

fn text<'s>(node: Node<'_>, source: &'s str) -> &'s str {
    node.utf8_text(source.as_bytes()).unwrap_or("")
}

/// Every node of the tree, in source order.
fn nodes(root: Node<'_>) -> Vec<Node<'_>> {
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        out.push(node);
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
    }
    out
}

/// A dotted name without spaces or comments (`a . b` is `a.b` to Python).
fn dotted(node: Node<'_>, source: &str) -> String {
    text(node, source)
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect()
}

impl Oracle {
    /// Reads the oracle module at `path` (repository-relative) from its text.
    pub fn parse(path: &str, source: &str) -> Result<Oracle, OracleError> {
        let Some(module) = file_name(path).strip_suffix(".py") else {
            return Err(OracleError::Unsupported {
                path: path.to_owned(),
            });
        };
        let mut functions = BTreeSet::new();
        if let Some(tree) = parse_python(source) {
            let root = tree.root_node();
            let mut cursor = root.walk();
            for child in root.named_children(&mut cursor) {
                let definition = if child.kind() == "decorated_definition" {
                    child.child_by_field_name("definition")
                } else {
                    Some(child)
                };
                let Some(definition) = definition.filter(|d| d.kind() == "function_definition")
                else {
                    continue;
                };
                if let Some(name) = definition.child_by_field_name("name") {
                    let name = text(name, source);
                    if !name.starts_with('_') {
                        functions.insert(name.to_owned());
                    }
                }
            }
        }
        if functions.is_empty() {
            return Err(OracleError::NoFunctions {
                path: path.to_owned(),
            });
        }
        Ok(Oracle {
            path: path.to_owned(),
            module: module.to_owned(),
            functions,
        })
    }

    /// Whether a dotted module path (`tests.oracle`, `.oracle`, `oracle`) names the oracle.
    fn names_module(&self, dotted: &str) -> bool {
        dotted.rsplit('.').next() == Some(self.module.as_str())
    }

    /// The 1-based line of the first call of an oracle function in the Python `source`,
    /// or why there is none.
    pub fn first_call(&self, source: &str) -> Result<usize, Missing> {
        let tree = parse_python(source).ok_or(Missing::NotImported)?;
        let all = nodes(tree.root_node());
        // Bound name -> oracle function, and names bound to the oracle module.
        let mut functions: BTreeMap<String, String> = BTreeMap::new();
        let mut modules: BTreeSet<String> = BTreeSet::new();
        for node in &all {
            match node.kind() {
                "import_from_statement" => {
                    let Some(from) = node.child_by_field_name("module_name") else {
                        continue;
                    };
                    let from = dotted(from, source);
                    let mut cursor = node.walk();
                    for child in node.named_children(&mut cursor) {
                        if child.kind() == "wildcard_import" && self.names_module(&from) {
                            for function in &self.functions {
                                functions.insert(function.clone(), function.clone());
                            }
                        }
                    }
                    let mut cursor = node.walk();
                    for name in node.children_by_field_name("name", &mut cursor) {
                        let (name, alias) = bound(name, source);
                        if self.names_module(&from) {
                            if self.functions.contains(&name) {
                                functions.insert(alias, name);
                            }
                        } else if name == self.module {
                            modules.insert(alias);
                        }
                    }
                }
                "import_statement" => {
                    let mut cursor = node.walk();
                    for name in node.children_by_field_name("name", &mut cursor) {
                        let (name, alias) = bound(name, source);
                        if self.names_module(&name) {
                            modules.insert(alias);
                        }
                    }
                }
                _ => {}
            }
        }
        if functions.is_empty() && modules.is_empty() {
            return Err(Missing::NotImported);
        }
        all.iter()
            .filter(|node| node.kind() == "call")
            .filter_map(|call| call.child_by_field_name("function"))
            .find(|callee| match callee.kind() {
                "identifier" => functions.contains_key(text(*callee, source)),
                "attribute" => {
                    let object = callee.child_by_field_name("object");
                    let attribute = callee.child_by_field_name("attribute");
                    match (object, attribute) {
                        (Some(object), Some(attribute)) => {
                            modules.contains(&dotted(object, source))
                                && self.functions.contains(text(attribute, source))
                        }
                        _ => false,
                    }
                }
                _ => false,
            })
            .map(|callee| callee.start_position().row + 1)
            .ok_or(Missing::NotCalled)
    }
}

/// The imported name and the name it is bound to: `a as b` → (a, b); `a.b` → (a.b, a.b),
/// which calls reach as `a.b.f(…)`.
fn bound(node: Node<'_>, source: &str) -> (String, String) {
    if node.kind() == "aliased_import" {
        let name = node
            .child_by_field_name("name")
            .map(|n| dotted(n, source))
            .unwrap_or_default();
        let alias = node
            .child_by_field_name("alias")
            .map(|n| dotted(n, source))
            .unwrap_or_default();
        return (name, alias);
    }
    let name = dotted(node, source);
    (name.clone(), name)
}

/// Why a test module has no oracle call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    /// It imports nothing from the oracle.
    NotImported,
    /// It imports from the oracle but calls nothing.
    NotCalled,
}

/// Whether `path` is a test module the oracle rule applies to: pytest's default
/// `test_*.py` and `*_test.py`.
pub fn is_test_module(path: &str) -> bool {
    let name = file_name(path);
    name.strip_suffix(".py")
        .is_some_and(|stem| stem.starts_with("test_") || stem.ends_with("_test"))
}

/// A finding for every test module the change adds that calls no oracle function; the
/// added lines of a new file are the whole file.
pub fn missing_calls(oracle: &Oracle, diff: &Diff) -> Vec<Finding> {
    let mut findings = Vec::new();
    for file in &diff.files {
        if file.status != FileStatus::Added || file.binary || !is_test_module(&file.path) {
            continue;
        }
        if file.path == oracle.path {
            continue;
        }
        let source = file.added.iter().fold(String::new(), |mut text, line| {
            text.push_str(&line.text);
            text.push('\n');
            text
        });
        let Err(missing) = oracle.first_call(&source) else {
            continue;
        };
        let some: Vec<&str> = oracle
            .functions
            .iter()
            .take(3)
            .map(String::as_str)
            .collect();
        let why = match missing {
            Missing::NotImported => "imports nothing from it",
            Missing::NotCalled => "imports from it but calls none of its functions",
        };
        findings.push(Finding {
            file: file.path.clone(),
            line: 1,
            rule: MISSING_ORACLE.to_owned(),
            kind: RuleKind::Oracle,
            reason: format!(
                "a new test module must call at least one function of the oracle {} ({}{}); this one {why}",
                oracle.path,
                some.join(", "),
                if oracle.functions.len() > some.len() { ", …" } else { "" }
            ),
            text: String::new(),
            source: None,
        });
    }
    findings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::diff::{ChangedFile, Line};

    const ORACLE: &str = "import math\n\ndef expected_total(items):\n    return sum(items)\n\nasync def expected_user(id):\n    pass\n\ndef _helper():\n    pass\n\nclass Model:\n    def method(self):\n        pass\n";

    fn oracle() -> Oracle {
        Oracle::parse("tests/oracle.py", ORACLE).unwrap()
    }

    #[test]
    fn public_top_level_functions_only() {
        let oracle = oracle();
        assert_eq!(oracle.module, "oracle");
        assert_eq!(
            oracle
                .functions
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
            ["expected_total", "expected_user"]
        );
        assert!(matches!(
            Oracle::parse("tests/oracle.ts", ORACLE),
            Err(OracleError::Unsupported { .. })
        ));
        assert!(matches!(
            Oracle::parse("tests/oracle.py", "x = 1\n"),
            Err(OracleError::NoFunctions { .. })
        ));
    }

    #[test]
    fn calls_through_every_kind_of_import() {
        let oracle = oracle();
        let calling = [
            "from tests.oracle import expected_total\n\ndef test_a():\n    assert f() == expected_total([1])\n",
            "from .oracle import expected_total as total\n\ndef test_a():\n    assert total([1]) == 1\n",
            "from tests.oracle import *\nx = expected_user(1)\n",
            "import tests.oracle as o\ny = o.expected_total([])\n",
            "import tests.oracle\ny = tests.oracle.expected_total([])\n",
            "from tests import oracle\ny = oracle.expected_total([])\n",
            "from tests.oracle import (\n    expected_user,\n    expected_total,\n)\n\nassert expected_total([]) == 0\n",
        ];
        for source in calling {
            assert!(oracle.first_call(source).is_ok(), "{source}");
        }
        let line = oracle.first_call(calling[0]).unwrap();
        assert_eq!(line, 4);
        assert_eq!(oracle.first_call(calling[6]).unwrap(), 6);
        let not_calling = [
            (
                "def test_a():\n    assert expected_total([1]) == 1\n",
                Missing::NotImported,
            ),
            (
                "from tests.oracle import expected_total\n\ndef test_a():\n    assert True\n",
                Missing::NotCalled,
            ),
            (
                "from tests.oracle import expected_total\n# expected_total([1])\n",
                Missing::NotCalled,
            ),
            (
                "from tests.oracle import expected_total\nx = my.expected_total([1])\n",
                Missing::NotCalled,
            ),
            (
                "from tests.oracle import expected_total\ndef expected_total(x):\n    pass\n",
                Missing::NotCalled,
            ),
            (
                "import tests.oracle as o\ny = o.unknown()\n",
                Missing::NotCalled,
            ),
            (
                "from tests.other import expected_total\nexpected_total([])\n",
                Missing::NotImported,
            ),
        ];
        for (source, why) in not_calling {
            assert_eq!(oracle.first_call(source), Err(why), "{source}");
        }
    }

    #[test]
    fn only_new_test_modules_are_checked() {
        let file = |path: &str, status, text: &str| ChangedFile {
            path: path.to_owned(),
            status,
            binary: false,
            added: text
                .lines()
                .enumerate()
                .map(|(i, t)| Line {
                    number: i + 1,
                    text: t.to_owned(),
                })
                .collect(),
            removed: Vec::new(),
        };
        let diff = Diff {
            files: vec![
                file(
                    "tests/test_new.py",
                    FileStatus::Added,
                    "def test_a():\n    assert 1\n",
                ),
                file(
                    "tests/test_good.py",
                    FileStatus::Added,
                    "from tests.oracle import expected_total\nexpected_total([])\n",
                ),
                file(
                    "tests/test_old.py",
                    FileStatus::Modified,
                    "def test_b():\n    assert 1\n",
                ),
                file(
                    "tests/helpers.py",
                    FileStatus::Added,
                    "def helper():\n    pass\n",
                ),
            ],
        };
        let findings = missing_calls(&oracle(), &diff);
        assert_eq!(findings.len(), 1);
        assert_eq!(findings[0].file, "tests/test_new.py");
        assert_eq!(findings[0].rule, MISSING_ORACLE);
        assert!(
            findings[0].reason.contains("imports nothing"),
            "{}",
            findings[0].reason
        );
        assert!(
            findings[0].reason.contains("expected_total"),
            "{}",
            findings[0].reason
        );
    }

    #[test]
    fn a_call_inside_a_string_or_a_comment_does_not_count() {
        let oracle = oracle();
        let pretending = [
            "from tests.oracle import expected_total\nNOTE = \"expected_total([1])\"\n",
            "from tests.oracle import expected_total\n\"\"\"\nexpected_total([1])\n\"\"\"\n",
            "from tests.oracle import expected_total\nx = 1  # expected_total([1])\n",
            "from tests.oracle import expected_total\nf\"{'expected_total'}([1])\"\n",
            "import tests.oracle as o\ns = 'o.expected_total([])'\n",
            "\"from tests.oracle import expected_total\"\nexpected_total([1])\n",
        ];
        for source in pretending {
            assert!(oracle.first_call(source).is_err(), "{source}");
        }
        // A real call inside an f-string's expression is a call.
        assert!(
            oracle
                .first_call(
                    "from tests.oracle import expected_total\nx = f\"{expected_total([1])}\"\n"
                )
                .is_ok()
        );
    }
}
