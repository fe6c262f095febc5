//! Which Python files hold pytest's tests in this project: pytest's default module names
//! and the `python_files` patterns of the merge base's pytest configuration (a Django
//! project's `tests.py`). Pure: the configuration files' texts come in.
//!
//! A project that names its test modules its own way has test files the lane would
//! otherwise read as code: an edited expected value in `app/tests.py` would be neither
//! replayed nor judged with the base's version. The patterns are the base's, like every
//! policy of the lane, so a change cannot rename its way out of being a test module.

use std::sync::LazyLock;

use glob::{MatchOptions, Pattern};
use regex::Regex;

use super::files::{Language, file_name};

/// The files pytest reads its settings from at the repository's root, in the order it
/// takes the first that holds them (pytest's "rootdir" rules).
pub const CONFIG_FILES: [&str; 5] = [
    "pytest.ini",
    ".pytest.ini",
    "pyproject.toml",
    "tox.ini",
    "setup.cfg",
];

/// The Python test-module names of a project.
#[derive(Debug, Clone, Default)]
pub struct PythonTestFiles {
    /// The configured `python_files`, beside pytest's defaults (which a module given to
    /// pytest by path is collected without: the lane's replays name their modules).
    configured: Vec<Pattern>,
    /// Where they were read (`pyproject.toml`), for the report and docs.
    source: Option<&'static str>,
}

impl PythonTestFiles {
    /// The patterns of the first of [`CONFIG_FILES`] that holds pytest's settings;
    /// `files[i]` is the text of `CONFIG_FILES[i]` when the base has it. A pattern that
    /// is not a valid glob is left out (pytest's `fnmatch` would match it literally,
    /// which no module name does in practice).
    pub fn from_configs(files: &[Option<String>]) -> PythonTestFiles {
        for (name, text) in CONFIG_FILES.iter().zip(files) {
            let Some(text) = text else {
                continue;
            };
            let Some(patterns) = python_files_in(name, text) else {
                continue;
            };
            return PythonTestFiles {
                configured: patterns
                    .iter()
                    .filter_map(|pattern| Pattern::new(pattern).ok())
                    .collect(),
                source: Some(name),
            };
        }
        PythonTestFiles::default()
    }

    /// The configuration file the patterns came from, when one sets `python_files`.
    pub fn source(&self) -> Option<&'static str> {
        self.source.filter(|_| !self.configured.is_empty())
    }

    /// Whether pytest collects the repository-relative `path` as a test module: by
    /// default (`test_*.py`, `*_test.py`) or by the project's `python_files`. A pattern
    /// without `/` is matched against the file's name, one with `/` against the path or
    /// any tail of it that starts a folder, as pytest's `fnmatch_ex` does with absolute
    /// paths; `*` crosses `/` as in Python's `fnmatch`.
    pub fn is_test_module(&self, path: &str) -> bool {
        let name = file_name(path);
        let default = name
            .strip_suffix(".py")
            .is_some_and(|stem| stem.starts_with("test_") || stem.ends_with("_test"));
        default || self.configured.iter().any(|pattern| matches(pattern, path))
    }

    /// Whether `path` is a test module by the project's `python_files` only (pytest's
    /// default names aside): such a module counts as the lane's test module when one end
    /// of it defines a test ([`defines_tests`]), so that a broad pattern (`*.py` with
    /// `testpaths` narrowing what the suite collects) does not make every code file a
    /// test module that collects nothing.
    pub fn named_by_configuration_only(&self, path: &str) -> bool {
        !PythonTestFiles::default().is_test_module(path) && self.is_test_module(path)
    }

    /// Whether `path` is a test file: by every runner's naming conventions
    /// ([`super::files::is_test_file`]), or a Python module the project's `python_files`
    /// names.
    pub fn is_test_file(&self, path: &str) -> bool {
        super::files::is_test_file(path)
            || (Language::of(path) == Some(Language::Python) && self.is_test_module(path))
    }
}

/// Whether a Python module's text defines a function or method pytest would collect by
/// its default `python_functions` (`test…`), a unittest `TestCase`'s included.
pub fn defines_tests(text: &str) -> bool {
    static TEST_FUNCTION: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?m)^[ \t]*(?:async[ \t]+)?def[ \t]+test").expect("a valid pattern")
    });
    TEST_FUNCTION.is_match(text)
}

fn matches(pattern: &Pattern, path: &str) -> bool {
    let options = MatchOptions {
        case_sensitive: true,
        require_literal_separator: false,
        require_literal_leading_dot: false,
    };
    if !pattern.as_str().contains('/') {
        return pattern.matches_with(file_name(path), options);
    }
    std::iter::once(path)
        .chain(
            path.match_indices('/')
                .map(|(at, _)| path.get(at + 1..).unwrap_or_default()),
        )
        .any(|tail| pattern.matches_with(tail, options))
}

/// `python_files` of the file `name` when it holds pytest's settings: `Some(patterns)`
/// (empty when it holds settings but not this one), `None` when pytest would not take it
/// as its configuration file.
fn python_files_in(name: &str, text: &str) -> Option<Vec<String>> {
    match name {
        "pyproject.toml" => {
            let document = text.parse::<toml::Table>().ok()?;
            let pytest = document.get("tool")?.get("pytest")?;
            // pytest 9's native table, or the `ini_options` table every version reads.
            let value = pytest
                .get("ini_options")
                .and_then(|options| options.get("python_files"))
                .or_else(|| pytest.get("python_files"));
            Some(value.map(toml_patterns).unwrap_or_default())
        }
        "setup.cfg" => ini_value(text, "tool:pytest", "python_files"),
        "tox.ini" => ini_value(text, "pytest", "python_files"),
        // pytest.ini is pytest's even when empty or without a `[pytest]` section.
        _ => Some(ini_value(text, "pytest", "python_files").unwrap_or_default()),
    }
}

fn toml_patterns(value: &toml::Value) -> Vec<String> {
    match value {
        toml::Value::String(text) => split_args(text),
        toml::Value::Array(items) => items
            .iter()
            .filter_map(toml::Value::as_str)
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

/// The value of `key` in the INI `section`, split as pytest splits an `args` setting:
/// `Some` when the section exists (empty when the key does not), `None` without it. A
/// value goes on over the indented lines after it.
fn ini_value(text: &str, section: &str, key: &str) -> Option<Vec<String>> {
    let mut in_section = false;
    let mut found_section = false;
    let mut value: Option<String> = None;
    let mut continuing = false;
    for line in text.lines() {
        let trimmed = line.trim();
        let indented = line.starts_with([' ', '\t']);
        if !indented
            && let Some(header) = trimmed.strip_prefix('[').and_then(|t| t.strip_suffix(']'))
        {
            // The first section of that name counts, as in pytest's reader.
            if found_section && in_section {
                break;
            }
            in_section = header.trim() == section;
            found_section |= in_section;
            continuing = false;
            continue;
        }
        if !in_section || trimmed.starts_with(['#', ';']) {
            continue;
        }
        if indented && continuing {
            if let Some(value) = &mut value {
                value.push(' ');
                value.push_str(trimmed);
            }
            continue;
        }
        continuing = false;
        let Some(split) = trimmed.find(['=', ':']) else {
            continue;
        };
        if trimmed[..split].trim() == key && value.is_none() {
            value = Some(trimmed[split + 1..].trim().to_owned());
            continuing = true;
        }
    }
    found_section.then(|| value.map(|v| split_args(&v)).unwrap_or_default())
}

/// Splits a setting's value as shell words (pytest's `args` type): on blanks, with
/// quotes grouping.
fn split_args(text: &str) -> Vec<String> {
    shlex::split(text).unwrap_or_else(|| text.split_whitespace().map(str::to_owned).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn configs(pairs: &[(&str, &str)]) -> Vec<Option<String>> {
        CONFIG_FILES
            .iter()
            .map(|name| {
                pairs
                    .iter()
                    .find(|(file, _)| file == name)
                    .map(|(_, text)| (*text).to_owned())
            })
            .collect()
    }

    #[test]
    fn pytest_defaults_hold_without_configuration() {
        let files = PythonTestFiles::from_configs(&configs(&[]));
        assert!(files.is_test_module("tests/test_cart.py"));
        assert!(files.is_test_module("cart_test.py"));
        assert!(!files.is_test_module("app/tests.py"));
        assert!(!files.is_test_module("tests/conftest.py"));
        assert_eq!(files.source(), None);
    }

    #[test]
    fn django_style_python_files_are_test_modules_in_every_config_file() {
        let cases = [
            (
                "pytest.ini",
                "[pytest]\nDJANGO_SETTINGS_MODULE = site.settings\npython_files = tests.py test_*.py *_tests.py\n",
            ),
            (
                ".pytest.ini",
                "[pytest]\npython_files =\n    tests.py\n    *_tests.py\n",
            ),
            (
                "pyproject.toml",
                "[tool.pytest.ini_options]\npython_files = \"tests.py test_*.py\"\n",
            ),
            (
                "pyproject.toml",
                "[tool.pytest.ini_options]\npython_files = [\"tests.py\", \"check_*.py\"]\n",
            ),
            (
                "pyproject.toml",
                "[tool.pytest]\npython_files = [\"tests.py\"]\n",
            ),
            (
                "tox.ini",
                "[tox]\nenvlist = py3\n\n[pytest]\npython_files: tests.py\n",
            ),
            (
                "setup.cfg",
                "[metadata]\nname = shop\n\n[tool:pytest]\npython_files = tests.py\n",
            ),
        ];
        for (file, text) in cases {
            let files = PythonTestFiles::from_configs(&configs(&[(file, text)]));
            assert!(
                files.is_test_module("shop/orders/tests.py"),
                "{file}: {text}"
            );
            assert!(files.is_test_file("shop/orders/tests.py"), "{file}");
            assert!(!files.is_test_module("shop/orders/models.py"), "{file}");
            assert_eq!(files.source(), Some(file));
        }
    }

    #[test]
    fn the_first_file_that_holds_pytest_settings_is_the_one_read() {
        // pytest.ini wins even empty; a pyproject.toml without pytest settings is passed.
        let empty_ini = PythonTestFiles::from_configs(&configs(&[
            ("pytest.ini", ""),
            ("setup.cfg", "[tool:pytest]\npython_files = tests.py\n"),
        ]));
        assert!(!empty_ini.is_test_module("app/tests.py"));
        let skipped = PythonTestFiles::from_configs(&configs(&[
            ("pyproject.toml", "[project]\nname = \"shop\"\n"),
            ("tox.ini", "[tox]\nenvlist = py3\n"),
            ("setup.cfg", "[tool:pytest]\npython_files = tests.py\n"),
        ]));
        assert!(skipped.is_test_module("app/tests.py"));
        assert_eq!(skipped.source(), Some("setup.cfg"));
    }

    #[test]
    fn patterns_with_a_folder_match_a_tail_of_the_path() {
        let files = PythonTestFiles::from_configs(&configs(&[(
            "pytest.ini",
            "[pytest]\npython_files = checks/*.py \"quoted tests.py\"\n",
        )]));
        assert!(files.is_test_module("checks/orders.py"));
        assert!(files.is_test_module("shop/checks/orders.py"));
        // `*` crosses folders, as Python's fnmatch does.
        assert!(files.is_test_module("shop/checks/deep/orders.py"));
        assert!(!files.is_test_module("shop/orders.py"));
        assert!(files.is_test_module("shop/quoted tests.py"));
    }

    #[test]
    fn a_module_defines_tests_when_it_has_a_test_function_or_method() {
        assert!(defines_tests("def test_total():\n    pass\n"));
        assert!(defines_tests(
            "class OrderTests(TestCase):\n    async def test_paid(self):\n        pass\n"
        ));
        assert!(!defines_tests(
            "def total(prices):\n    return sum(prices)\n"
        ));
        assert!(!defines_tests("x = 'def test_'\n"));
        let broad = PythonTestFiles::from_configs(&configs(&[(
            "pytest.ini",
            "[pytest]\npython_files = *.py\ntestpaths = tests\n",
        )]));
        assert!(broad.named_by_configuration_only("app/cart.py"));
        assert!(!broad.named_by_configuration_only("tests/test_cart.py"));
    }

    #[test]
    fn the_setting_is_read_from_its_own_section_only() {
        let other_section = PythonTestFiles::from_configs(&configs(&[(
            "setup.cfg",
            "[flake8]\npython_files = tests.py\n\n[tool:pytest]\naddopts = -q\n",
        )]));
        assert!(!other_section.is_test_module("app/tests.py"));
        let commented = PythonTestFiles::from_configs(&configs(&[(
            "pytest.ini",
            "[pytest]\n# python_files = tests.py\n",
        )]));
        assert!(!commented.is_test_module("app/tests.py"));
        assert!(
            !PythonTestFiles::from_configs(&configs(&[("pyproject.toml", "not toml [")]))
                .is_test_module("app/tests.py")
        );
    }
}
