//! Oracles: with `[lane] fail_on_missing_oracle`, every new test module must call at least
//! one function of the oracle module (checks written by humans), so a new test cannot
//! assert only what the code under test already says. Python only, by reading text:
//!
//! - the oracle's functions are its top-level `def` and `async def` names that do not
//!   start with `_`;
//! - a test module binds them by `from M import f [as g]`, `from M import *`,
//!   `import M [as m]` or `from P import M [as m]`, where `M` is the oracle's module name
//!   (`oracle`) or any dotted path ending in it (`tests.oracle`, `.oracle`);
//! - a call is `g(` for a bound function, or `m.f(` for a bound module, on a line that is
//!   not an import, a comment or a `def`.
//!
//! Limits: a call inside a string or a multi-line string counts; a function reached
//! through a fixture, a variable (`check = oracle.f`) or `getattr` does not; a name bound
//! by an import inside a function counts for the whole file.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use regex::Regex;

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

static DEF: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:async\s+)?def\s+([A-Za-z][A-Za-z0-9_]*)\s*\(").expect("a valid pattern")
});
static FROM_IMPORT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*from\s+([\w.]+)\s+import\s+(.+)$").expect("a valid pattern"));
static IMPORT: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*import\s+(.+)$").expect("a valid pattern"));

impl Oracle {
    /// Reads the oracle module at `path` (repository-relative) from its text.
    pub fn parse(path: &str, source: &str) -> Result<Oracle, OracleError> {
        let Some(module) = file_name(path).strip_suffix(".py") else {
            return Err(OracleError::Unsupported {
                path: path.to_owned(),
            });
        };
        let functions: BTreeSet<String> = source
            .lines()
            .filter_map(|line| DEF.captures(line))
            .filter_map(|captures| captures.get(1))
            .map(|name| name.as_str().to_owned())
            .collect();
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
        let lines = logical_lines(source);
        let mut functions: BTreeMap<String, String> = BTreeMap::new();
        let mut modules: BTreeSet<String> = BTreeSet::new();
        for (_, line) in &lines {
            if let Some(captures) = FROM_IMPORT.captures(line) {
                let (Some(from), Some(names)) = (captures.get(1), captures.get(2)) else {
                    continue;
                };
                for (name, alias) in imported_names(names.as_str()) {
                    if self.names_module(from.as_str()) {
                        if name == "*" {
                            for function in &self.functions {
                                functions.insert(function.clone(), function.clone());
                            }
                        } else if self.functions.contains(&name) {
                            functions.insert(alias, name);
                        }
                    } else if name == self.module {
                        modules.insert(alias);
                    }
                }
            } else if let Some(captures) = IMPORT.captures(line) {
                let Some(names) = captures.get(1) else {
                    continue;
                };
                for (name, alias) in imported_names(names.as_str()) {
                    if self.names_module(&name) {
                        modules.insert(alias);
                    }
                }
            }
        }
        if functions.is_empty() && modules.is_empty() {
            return Err(Missing::NotImported);
        }
        let mut patterns = Vec::new();
        for alias in functions.keys() {
            patterns.push(format!(r"(?:^|[^\w.]){}\s*\(", regex::escape(alias)));
        }
        let names: Vec<String> = self.functions.iter().map(|f| regex::escape(f)).collect();
        for alias in &modules {
            patterns.push(format!(
                r"(?:^|[^\w.]){}\.(?:{})\s*\(",
                regex::escape(alias),
                names.join("|")
            ));
        }
        let call = Regex::new(&patterns.join("|")).map_err(|_| Missing::NotCalled)?;
        lines
            .iter()
            .filter(|(_, line)| {
                let code = line.trim_start();
                !(code.starts_with('#')
                    || code.starts_with("import ")
                    || code.starts_with("from ")
                    || code.starts_with("def ")
                    || code.starts_with("async def "))
            })
            .find(|(_, line)| call.is_match(strip_comment(line)))
            .map(|(number, _)| *number)
            .ok_or(Missing::NotCalled)
    }
}

/// Why a test module has no oracle call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    /// It imports nothing from the oracle.
    NotImported,
    /// It imports from the oracle but calls nothing.
    NotCalled,
}

/// `a, b as c, (d)` → (name, bound name).
fn imported_names(list: &str) -> Vec<(String, String)> {
    list.trim()
        .trim_start_matches('(')
        .trim_end_matches(')')
        .split(',')
        .filter_map(|item| {
            let mut words = item.split_whitespace();
            let name = words.next()?.to_owned();
            let alias = match (words.next(), words.next()) {
                (Some("as"), Some(alias)) => alias.to_owned(),
                // `import a.b` binds `a.b` for calls such as `a.b.f(`.
                _ => name.clone(),
            };
            Some((name, alias))
        })
        .collect()
}

/// Lines with 1-based numbers, an import split over lines in parentheses or after a
/// backslash joined into its first line.
fn logical_lines(source: &str) -> Vec<(usize, String)> {
    let mut lines: Vec<(usize, String)> = Vec::new();
    let mut open: Option<(usize, String)> = None;
    for (index, line) in source.lines().enumerate() {
        if let Some((start, mut joined)) = open.take() {
            joined.push(' ');
            joined.push_str(strip_comment(line).trim().trim_end_matches('\\'));
            if line.contains(')') || !(line.trim_end().ends_with('\\') || joined.contains('(')) {
                lines.push((start, joined));
            } else {
                open = Some((start, joined));
            }
            continue;
        }
        let code = strip_comment(line);
        let is_import = {
            let trimmed = code.trim_start();
            trimmed.starts_with("from ") || trimmed.starts_with("import ")
        };
        let continues =
            code.trim_end().ends_with('\\') || (code.contains('(') && !code.contains(')'));
        if is_import && continues {
            open = Some((index + 1, code.trim_end().trim_end_matches('\\').to_owned()));
        } else {
            lines.push((index + 1, line.to_owned()));
        }
    }
    if let Some(unfinished) = open {
        lines.push(unfinished);
    }
    lines
}

/// The line before a `#` that is not inside a quoted string.
fn strip_comment(line: &str) -> &str {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (at, c) in line.char_indices() {
        match (quote, c) {
            (Some(_), '\\') if !escaped => {
                escaped = true;
                continue;
            }
            (Some(q), c) if c == q && !escaped => quote = None,
            (None, '"' | '\'') => quote = Some(c),
            (None, '#') => return line.get(..at).unwrap_or(line),
            _ => {}
        }
        escaped = false;
    }
    line
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
    fn comments_are_cut_outside_strings_only() {
        assert_eq!(strip_comment("x = 1  # note"), "x = 1  ");
        assert_eq!(strip_comment("x = '#not' # note"), "x = '#not' ");
        assert_eq!(strip_comment("x = \"a\\\"#\" # n"), "x = \"a\\\"#\" ");
    }
}
