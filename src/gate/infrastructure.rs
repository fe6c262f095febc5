//! Test infrastructure is human-owned: the files that decide what a test run counts —
//! conftest files, test packages' `__init__.py`, runner settings, plugin lists, what
//! Python imports before any test (`sitecustomize`, `.pth` files), test-support code and
//! the data the tests read outside their folders — may change only with a human's
//! approval, because a change that edits them can turn its own red into green without
//! touching a test. Pure: the base's globs, the diff and the texts of the files whose
//! runner settings are one section among others (or the base's texts that may say what
//! tests use) come in; what changed comes out.

use std::collections::BTreeSet;
use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;

use super::data::{in_test_folder, is_test_data};
use super::diff::{ChangedFile, Diff, FileStatus};
use super::files::{Language, config_kind, file_name, is_runner_setup, is_test_file};
use crate::policy::PathGlob;

/// The globs `[lane] test_infrastructure` has when the base's candor.toml does not set it.
/// `pyproject.toml`, `setup.cfg` and `tox.ini` are owned only in their runner sections
/// (and their pytest plugin names), not as whole files.
pub const DEFAULT_GLOBS: &[&str] = &[
    // pytest: hooks, fixtures and collection rules that apply to every test below them.
    "conftest.py",
    "tests/**/__init__.py",
    "test/**/__init__.py",
    "**/tests/**/__init__.py",
    "**/test/**/__init__.py",
    "pytest.ini",
    ".pytest.ini",
    "pytest.toml",
    ".pytest.toml",
    "pyproject.toml",
    "setup.cfg",
    "tox.ini",
    // jest, mocha and AVA read their settings from package.json's key of their name.
    "package.json",
    // cargo's test targets, features and profiles; go's module replacements.
    "Cargo.toml",
    "go.mod",
    // Python runs these at start-up, before pytest, in every process.
    "sitecustomize.py",
    "usercustomize.py",
    "*.pth",
    // cargo and nextest. A build script compiles with every test build: a `cfg` or an
    // `env!` value it sets only for the debug profile the tests build in keeps them
    // green beside a regression a release build runs.
    "build.rs",
    ".cargo/config.toml",
    ".cargo/config",
    "**/.cargo/config.toml",
    "**/.cargo/config",
    "nextest.toml",
    ".config/nextest.toml",
    // go: the workspace file can swap the module under test for another folder.
    "go.work",
    // git: which repository a submodule's path is checked out from.
    ".gitmodules",
    // JavaScript runners and their setup files (their conftest).
    "jest.config.*",
    "jest.setup.*",
    "vitest.config.*",
    "vitest.workspace.*",
    "vitest.setup.*",
    "vite.config.*",
    "setupTests.*",
    // babel-jest, jest's default transform, compiles every test file with the project's
    // Babel settings: a plugin there can delete each `expect(…)` before it runs.
    "babel.config.*",
    ".babelrc",
    ".babelrc.*",
    ".swcrc",
    ".mocharc*",
    // The variables vite, vitest, Next.js and create-react-app load in test mode only:
    // a value there that the code under test reads (`import.meta.env.VITE_EXACT`) keeps
    // the tests green while a production build runs the other branch (found by a
    // red-team run, 2026-12-04).
    ".env.test",
    ".env.test.*",
    "karma.conf.*",
    "playwright.config.*",
    "cypress.config.*",
];

/// Top-level module names a new module must not take: Python's standard library (as
/// `sys.stdlib_module_names` lists it). pytest puts test folders and `pythonpath` entries
/// first on `sys.path`, so `tests/json.py` or a root `random.py` replaces the real module
/// for every test.
const SHADOWED: &[&str] = &[
    "abc",
    "aifc",
    "antigravity",
    "argparse",
    "array",
    "ast",
    "asynchat",
    "asyncio",
    "asyncore",
    "atexit",
    "audioop",
    "base64",
    "bdb",
    "binascii",
    "bisect",
    "builtins",
    "bz2",
    "cProfile",
    "calendar",
    "cgi",
    "cgitb",
    "chunk",
    "cmath",
    "cmd",
    "code",
    "codecs",
    "codeop",
    "collections",
    "colorsys",
    "compileall",
    "concurrent",
    "configparser",
    "contextlib",
    "contextvars",
    "copy",
    "copyreg",
    "crypt",
    "csv",
    "ctypes",
    "curses",
    "dataclasses",
    "datetime",
    "dbm",
    "decimal",
    "difflib",
    "dis",
    "distutils",
    "doctest",
    "email",
    "encodings",
    "ensurepip",
    "enum",
    "errno",
    "faulthandler",
    "fcntl",
    "filecmp",
    "fileinput",
    "fnmatch",
    "fractions",
    "ftplib",
    "functools",
    "gc",
    "genericpath",
    "getopt",
    "getpass",
    "gettext",
    "glob",
    "graphlib",
    "grp",
    "gzip",
    "hashlib",
    "heapq",
    "hmac",
    "html",
    "http",
    "idlelib",
    "imaplib",
    "imghdr",
    "imp",
    "importlib",
    "inspect",
    "io",
    "ipaddress",
    "itertools",
    "json",
    "keyword",
    "lib2to3",
    "linecache",
    "locale",
    "logging",
    "lzma",
    "mailbox",
    "mailcap",
    "marshal",
    "math",
    "mimetypes",
    "mmap",
    "modulefinder",
    "msilib",
    "msvcrt",
    "multiprocessing",
    "netrc",
    "nis",
    "nntplib",
    "nt",
    "ntpath",
    "nturl2path",
    "numbers",
    "opcode",
    "operator",
    "optparse",
    "os",
    "ossaudiodev",
    "pathlib",
    "pdb",
    "pickle",
    "pickletools",
    "pipes",
    "pkgutil",
    "platform",
    "plistlib",
    "poplib",
    "posix",
    "posixpath",
    "pprint",
    "profile",
    "pstats",
    "pty",
    "pwd",
    "py_compile",
    "pyclbr",
    "pydoc",
    "pydoc_data",
    "pyexpat",
    "queue",
    "quopri",
    "random",
    "re",
    "readline",
    "reprlib",
    "resource",
    "rlcompleter",
    "runpy",
    "sched",
    "secrets",
    "select",
    "selectors",
    "shelve",
    "shlex",
    "shutil",
    "signal",
    "site",
    "sitecustomize",
    "smtpd",
    "smtplib",
    "sndhdr",
    "socket",
    "socketserver",
    "spwd",
    "sqlite3",
    "sre_compile",
    "sre_constants",
    "sre_parse",
    "ssl",
    "stat",
    "statistics",
    "string",
    "stringprep",
    "struct",
    "subprocess",
    "sunau",
    "symtable",
    "sys",
    "sysconfig",
    "syslog",
    "tabnanny",
    "tarfile",
    "telnetlib",
    "tempfile",
    "termios",
    "textwrap",
    "this",
    "threading",
    "time",
    "timeit",
    "tkinter",
    "token",
    "tokenize",
    "tomllib",
    "trace",
    "traceback",
    "tracemalloc",
    "tty",
    "turtle",
    "turtledemo",
    "types",
    "typing",
    "unicodedata",
    "unittest",
    "urllib",
    "usercustomize",
    "uu",
    "uuid",
    "venv",
    "warnings",
    "wave",
    "weakref",
    "webbrowser",
    "winreg",
    "winsound",
    "wsgiref",
    "xdrlib",
    "xml",
    "xmlrpc",
    "zipapp",
    "zipfile",
    "zipimport",
    "zlib",
    "zoneinfo",
];

/// pytest and what it imports before it reads its arguments (its own requirements, on
/// every platform and Python it supports), and the plugins the lane loads and what they
/// try to import when they load (pytest-randomly tries `factory`, `faker`,
/// `model_bakery` and `numpy`, so that it can reseed them). `python -m pytest` puts the
/// working folder first on `sys.path`, so a new root `iniconfig/__init__.py` runs before
/// pytest copies `sys.argv` and can append `--deselect` to it: no rule reads that line,
/// and the suite ran green without the failing test. A root `faker.py` that patched the
/// code under test walked through the same way where faker is not installed.
const PYTEST_START_UP: &[&str] = &[
    "_pytest",
    "colorama",
    "coverage",
    "exceptiongroup",
    "execnet",
    "factory",
    "faker",
    "iniconfig",
    "model_bakery",
    "numpy",
    "packaging",
    "pluggy",
    "py",
    "pygments",
    "pytest",
    "pytest_cov",
    "pytest_randomly",
    "pytest_repeat",
    "tomli",
    "xdist",
];

/// Folders that hold installed packages, the test runners among them: a change under
/// one edits the code that runs the tests (`node_modules/jest-circus/…`), not the
/// project's.
const INSTALLED_PACKAGES: &[&str] = &[
    "node_modules",
    "site-packages",
    "dist-packages",
    "__pypackages__",
];

/// Test frameworks and assertion libraries as vendored copies name them (go's
/// `vendor/github.com/stretchr/testify/…`, a Rust `vendor/pretty_assertions/…`): editing
/// one makes every check that uses it say what the change wants. Other vendored code is
/// a dependency like any other.
const VENDORED_TEST_LIBRARIES: &[&str] = &[
    "github.com/stretchr/testify",
    "github.com/onsi/gomega",
    "github.com/onsi/ginkgo",
    "github.com/google/go-cmp",
    "github.com/frankban/quicktest",
    "github.com/matryer/is",
    "github.com/golang/mock",
    "go.uber.org/mock",
    "github.com/smartystreets/goconvey",
    "github.com/smarty/assertions",
    "gotest.tools",
    "gopkg.in/check.v1",
    "pretty_assertions",
    "assert_cmd",
    "assert_fs",
    "predicates",
    "insta",
    "proptest",
    "quickcheck",
    "rstest",
    "test-case",
    "mockall",
    "similar-asserts",
];

/// Files whose runner settings are a section: owned by their section, not as a whole.
const SECTIONED: &[&str] = &[
    "pyproject.toml",
    "setup.cfg",
    "tox.ini",
    "package.json",
    "Cargo.toml",
    "go.mod",
];

/// The keys of package.json that hold a runner's settings: `"jest": {"testPathIgnorePatterns":
/// ["cart"]}` hides a test from the suite and its listing alike, `"setupFiles"` runs code
/// before every test file; `"babel"` is the Babel settings jest compiles the tests with.
const PACKAGE_JSON_RUNNER_KEYS: &[&str] = &["jest", "mocha", "ava", "babel"];

/// Files that list Python requirements, where adding a pytest plugin is a plugin-list
/// change.
fn is_requirements(path: &str) -> bool {
    let name = file_name(path);
    let txt = std::path::Path::new(name)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("txt"));
    (txt && (name.starts_with("requirements")
        || name.starts_with("constraints")
        || path.contains("requirements/")))
        || matches!(
            name,
            "Pipfile" | "setup.py" | "environment.yml" | "environment.yaml"
        )
}

/// A pytest plugin named in text: `pytest-xdist`, `pytest_mock`, the `pytest11` entry
/// point group; lowercase.
static PLUGIN_NAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\bpytest(?:[-_.][A-Za-z0-9][A-Za-z0-9_.-]*|11)\b").expect("a valid pattern")
});

/// `pytest_plugins` in Python code: a test module or any imported module can load a
/// plugin (a conftest under another name) with it.
static PYTEST_PLUGINS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\bpytest_plugins\b").expect("a valid pattern"));

/// What made a changed file count as test infrastructure.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum InfraKind {
    /// A file the globs own (conftest, runner config, start-up hooks).
    File,
    /// The runner's section of a shared settings file.
    RunnerSettings,
    /// A pytest plugin list: `pytest_plugins`, or a pytest plugin requirement.
    PluginList,
    /// A new module named like a standard-library module, or like pytest or a module it
    /// imports at start-up, which it would replace on `sys.path`.
    Shadowing,
    /// The runner's own code or a test library inside the repository: a file under
    /// `node_modules`, `site-packages` (and kin), or a vendored test framework.
    RunnerCode,
    /// Test-support code: an existing Python module under a test folder that is not a
    /// test module (assertion helpers, factories) edited or deleted, or a source file
    /// outside the test files that reaches into the test framework or a test-only library
    /// at the base (a go `testutil` package importing `"testing"`, a module importing
    /// pytest, a helper built on testify). The tests that use it are not touched, so
    /// neither replayed nor judged with the base's version.
    TestSupport,
    /// Data the base's tests read, outside the test folders: an existing file that is
    /// not source code (`golden/totals.json`), edited or deleted, that a test file at the
    /// base names. A test's expected values live there as much as in its code, and the
    /// tests that read it are not touched, so neither replayed nor judged.
    TestData,
    /// A CI pipeline's definition (`.github/workflows/*.yml`, `.gitlab-ci.yml`, a
    /// `Jenkinsfile`, …): where CI reads the pipeline from the change itself, it says how
    /// the lane runs — its `--base`, its `--approved-by`, whether it runs at all.
    CiPipeline,
    /// A go test file that adds a `func init()` or a `func TestMain(`: it runs before every
    /// test of its package, the untouched ones too, which then run against whatever it
    /// set (`exact = true` beside a regression only `exact` hides), or not at all
    /// (`os.Exit(0)`, a `test.run` flag set).
    PackageSetup,
    /// A git submodule added, moved to another commit or removed: its files are in
    /// another repository, so no rule reads what the new commit changes (code under test
    /// and tests alike), and the replays run whatever CI checked out there.
    Submodule,
    /// Compiled code the change adds or edits: a shared library or executable (ELF,
    /// Mach-O, PE), WebAssembly, a Java class or archive, a Python extension module or
    /// wheel. No rule can read what it does, and the tests run it: a committed
    /// `app/_speed.cpython-311-x86_64-linux-gnu.so` whose `bump()` answered differently
    /// when `PYTEST_CURRENT_TEST` was set walked through the lane.
    CompiledCode,
}

/// One test-infrastructure change.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
pub struct InfraChange {
    /// Repository-relative path.
    pub path: String,
    /// Added, modified or deleted.
    pub status: FileStatus,
    /// Why it counts.
    pub kind: InfraKind,
    /// What changed, for people (`[tool.pytest.ini_options]`, `pytest_plugins at line 3`).
    pub what: String,
}

/// The text of a changed file at the base and at the head (`None`: absent there).
pub struct Texts {
    /// At the base.
    pub base: Option<String>,
    /// At the head.
    pub head: Option<String>,
}

/// Every test-infrastructure change in `diff`, by path. `texts` reads a sectioned file at
/// both ends; it is asked only for files the change touches.
pub fn changes(
    globs: &[PathGlob],
    diff: &Diff,
    mut texts: impl FnMut(&str) -> Texts,
) -> Vec<InfraChange> {
    let mut found = Vec::new();
    for file in &diff.files {
        let name = file_name(&file.path);
        let owned = globs.iter().any(|glob| glob.matches(&file.path));
        if owned && SECTIONED.contains(&name) {
            let Texts { base, head } = texts(&file.path);
            if let Some(what) = section_change(name, base.as_deref(), head.as_deref()) {
                found.push(change(file, InfraKind::RunnerSettings, what));
            }
            continue;
        }
        if owned {
            found.push(change(file, InfraKind::File, name.to_owned()));
            continue;
        }
        if let Some(what) = ci_pipeline(&file.path) {
            found.push(change(file, InfraKind::CiPipeline, what));
            continue;
        }
        if let Some(what) = runner_code(&file.path) {
            found.push(change(file, InfraKind::RunnerCode, what));
            continue;
        }
        if let Some(what) = submodule_change(file) {
            found.push(change(file, InfraKind::Submodule, what));
            continue;
        }
        if let Some(line) = plugin_line(file) {
            found.push(change(file, InfraKind::PluginList, line));
        } else if let Some(what) = go_package_setup(file) {
            found.push(change(file, InfraKind::PackageSetup, what));
        } else if is_test_support(file) {
            found.push(change(
                file,
                InfraKind::TestSupport,
                "test-support code the unchanged tests import".to_owned(),
            ));
        } else if is_js_support_candidate(file)
            && texts(&file.path)
                .base
                .is_some_and(|base| super::js_base::test_titles(&base).is_empty())
        {
            found.push(change(
                file,
                InfraKind::TestSupport,
                "test-support code the unchanged tests import (at the base it writes no test)"
                    .to_owned(),
            ));
        } else if let Some((what, folder)) = shadowed(file) {
            // Inside a package (`src/flask/json/__init__.py`, `mypkg/logging.py`) the module
            // imports as `flask.json`: it replaces nothing. A folder without
            // `__init__.py` at the head is one pytest or `python -m` can put on `sys.path`.
            let package =
                !folder.is_empty() && texts(&format!("{folder}/__init__.py")).head.is_some();
            if !package {
                found.push(change(file, InfraKind::Shadowing, what));
            }
        }
    }
    found.sort();
    found
}

/// Files the change edits or deletes that may be test support outside the test files:
/// source files that are neither test files nor runner setup, not found already. Their
/// base texts go to [`framework_support`].
pub fn support_candidates<'d>(diff: &'d Diff, found: &[InfraChange]) -> Vec<&'d str> {
    diff.files
        .iter()
        .filter(|file| file.status != FileStatus::Added)
        .filter(|file| Language::of(&file.path).is_some())
        .filter(|file| !is_test_file(&file.path) && !is_runner_setup(&file.path))
        .filter(|file| !found.iter().any(|change| change.path == file.path))
        .map(|file| file.path.as_str())
        .collect()
}

/// Test support outside the test files: each of `candidates` whose text at the base
/// (`base_texts`, in the same order) reaches into the test framework or a library only
/// tests use. A go helper
/// package (`internal/testutil`, importing `"testing"`) or a Python module importing
/// pytest is where the unchanged tests check: its `t.Fatalf` removed beside a regression,
/// nothing is touched, nothing replayed, and every rule reads the edit as code.
pub fn framework_support(
    diff: &Diff,
    candidates: &[&str],
    base_texts: &[Option<String>],
) -> Vec<InfraChange> {
    candidates
        .iter()
        .zip(base_texts)
        .filter_map(|(path, text)| {
            let (line, reach) = super::rules::first_test_support_reach(path, text.as_deref()?)?;
            let file = diff.files.iter().find(|file| file.path == *path)?;
            Some(change(
                file,
                InfraKind::TestSupport,
                format!(
                    "test-support code outside the test files: at the base it uses the test framework or a test-only library (line {line}: `{reach}`)"
                ),
            ))
        })
        .collect()
}

/// Manifests and lockfiles: tests read them for a version or a dependency list, and
/// every release edits them. What in them decides the tests has rules of its own.
const MANIFESTS: &[&str] = &[
    "package.json",
    "package-lock.json",
    "npm-shrinkwrap.json",
    "yarn.lock",
    "pnpm-lock.yaml",
    "bun.lockb",
    "Cargo.toml",
    "Cargo.lock",
    "go.mod",
    "go.sum",
    "go.work",
    "poetry.lock",
    "uv.lock",
    "Pipfile.lock",
];

/// The project's own papers (`CHANGES.rst`, `LICENSE`, `AUTHORS`), by name without the
/// extension: tests read them to check their encoding or find a version, and half the
/// changes edit them (flask's `test_meta.py` opened `CHANGES.rst`; packaging's metadata
/// tests name `LICENSE` as a value).
const PROJECT_PAPERS: &[&str] = &[
    "changelog",
    "changes",
    "history",
    "news",
    "authors",
    "contributors",
    "license",
    "licence",
    "copying",
    "notice",
    "contributing",
    "code_of_conduct",
    "security",
];

fn is_project_paper(name: &str) -> bool {
    let stem = name.split_once('.').map_or(name, |(stem, _)| stem);
    PROJECT_PAPERS
        .iter()
        .any(|paper| stem.eq_ignore_ascii_case(paper))
}

/// Files the change edits or deletes that may be data the tests read outside the test
/// folders (data under them is the fixture lock's): not source code, not git's own files,
/// not runner settings, manifests or the project's papers, with an extension, not
/// `skip`ped (the human-owned files, the fixtures
/// and cassettes folders), not found already. A new file is left out: no test at the
/// base can name it, and a touched test that does is judged.
pub fn data_candidates<'d>(
    diff: &'d Diff,
    found: &[InfraChange],
    skip: &dyn Fn(&str) -> bool,
) -> Vec<&'d str> {
    diff.files
        .iter()
        .filter(|file| file.status != FileStatus::Added)
        .map(|file| file.path.as_str())
        .filter(|path| {
            let name = file_name(path);
            Language::of(path).is_none()
                && !name.starts_with(".git")
                && !MANIFESTS.contains(&name)
                && !is_project_paper(name)
                // A name without an extension is a word too (`examples/description`,
                // named by commander's tests as an option's name), or a script.
                && name.trim_start_matches('.').contains('.')
                && config_kind(path).is_none()
                && !is_test_data(path)
                && !skip(path)
                && !found.iter().any(|change| change.path == *path)
        })
        .collect()
}

/// Whether the base's file at `path` is one whose text may name the data its tests read:
/// a test file, or source code under a test folder (a conftest, a helper).
pub fn names_test_data(path: &str) -> bool {
    Language::of(path).is_some() && (is_test_file(path) || in_test_folder(path))
}

/// How a test names a data file: its file name inside a string, alone or as a path's
/// last part (`"totals.json"`, `"../golden/totals.json"`, `/ "totals.json"`). A bare word
/// (`VERSION` the constant) is not a name; nor is the folder's name alone (`"docs"`,
/// `'en'`: measured, a test naming a folder reads it far less often than it names it for
/// another reason).
fn data_names(path: &str) -> Vec<String> {
    const BEFORE: [char; 5] = ['"', '\'', '`', '/', '\\'];
    const AFTER: [char; 3] = ['"', '\'', '`'];
    let name = file_name(path);
    BEFORE
        .iter()
        .flat_map(|before| {
            AFTER
                .iter()
                .map(move |after| format!("{before}{name}{after}"))
        })
        .collect()
}

/// Whether `line` holds `name` (from [`data_names`]) as a file's name: not inside a URL
/// (`"github.com/some/repo/blob/master/CHANGELOG.rst"` names a web page).
fn names_a_file(line: &str, name: &str) -> bool {
    line.match_indices(name).any(|(at, _)| {
        let string_start = line[..=at]
            .rfind(['"', '\'', '`'])
            .map_or(0, |quote| quote + 1);
        let string = &line[string_start..at + name.len()];
        !(string.contains("://") || URL_HOST.is_match(string))
    })
}

/// A string that starts with a host name (`github.com/…`, `www.example.org/…`).
static URL_HOST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:www\.)?[\w-]+(?:\.[\w-]+)*\.(?:com|org|net|io|dev|edu|gov|co|app)/")
        .expect("the pattern compiles (tested)")
});

/// Data the base's tests read, outside the test folders: each of `candidates` that a
/// line of `tests` (the base's files that may name test data, with their texts, in path
/// order) names. The first naming line is reported.
pub fn test_data(diff: &Diff, candidates: &[&str], tests: &[(&str, &str)]) -> Vec<InfraChange> {
    let mut named: Vec<Option<(String, usize, String)>> = vec![None; candidates.len()];
    let needles: Vec<(usize, String)> = candidates
        .iter()
        .enumerate()
        .flat_map(|(index, path)| data_names(path).into_iter().map(move |name| (index, name)))
        .collect();
    let pattern = needles
        .iter()
        .map(|(_, name)| regex::escape(name))
        .collect::<Vec<_>>()
        .join("|");
    // A first look for any name at once; past the regex's size limit (thousands of
    // candidates) every line is searched name by name.
    let any_name = Regex::new(&pattern).ok();
    for (test, text) in tests {
        if named.iter().all(Option::is_some) {
            break;
        }
        for (number, line) in text.lines().enumerate() {
            if any_name.as_ref().is_some_and(|any| !any.is_match(line)) {
                continue;
            }
            for (index, name) in &needles {
                if named[*index].is_none() && names_a_file(line, name) {
                    named[*index] = Some(((*test).to_owned(), number + 1, name.clone()));
                }
            }
        }
    }
    candidates
        .iter()
        .zip(named)
        .filter_map(|(path, named)| {
            let (test, line, name) = named?;
            let file = diff.files.iter().find(|file| file.path == *path)?;
            Some(change(
                file,
                InfraKind::TestData,
                format!(
                    "data the base's tests read, outside the test folders: {test} line {line} names it (`{name}`)"
                ),
            ))
        })
        .collect()
}

/// A gitlink's change, as git prints it: its only lines are `Subproject commit SHA`
/// (one removed, one added, or one of them when the submodule is added or removed).
fn submodule_change(file: &ChangedFile) -> Option<String> {
    let commit = |line: &crate::gate::diff::Line| {
        line.text
            .strip_prefix("Subproject commit ")
            .filter(|sha| sha.len() >= 40 && sha.bytes().all(|b| b.is_ascii_hexdigit()))
            .map(|sha| sha[..12].to_owned())
    };
    let (before, after) = match (file.removed.as_slice(), file.added.as_slice()) {
        ([], [after]) => (None, Some(commit(after)?)),
        ([before], []) => (Some(commit(before)?), None),
        ([before], [after]) => (Some(commit(before)?), Some(commit(after)?)),
        _ => return None,
    };
    Some(match (before, after) {
        (None, Some(after)) => format!("a submodule added at {after}"),
        (Some(before), None) => format!("a submodule removed (was at {before})"),
        (Some(before), Some(after)) => format!("a submodule moved from {before} to {after}"),
        (None, None) => return None,
    })
}

fn change(file: &ChangedFile, kind: InfraKind, what: String) -> InfraChange {
    InfraChange {
        path: file.path.clone(),
        status: file.status,
        kind,
        what,
    }
}

/// The first added line that loads a pytest plugin: `pytest_plugins` in Python code, or a
/// pytest plugin in a requirements file.
fn plugin_line(file: &ChangedFile) -> Option<String> {
    // pytest loads the `pytest11` entry points of every distribution on `sys.path`, the
    // working folder's included: a committed `shop_extras-1.0.dist-info/entry_points.txt`
    // is a plugin list, and the plugin patched the code under test.
    if file.status != FileStatus::Deleted && is_entry_points(&file.path) {
        return Some("entry points, which pytest loads plugins from".to_owned());
    }
    let python = Language::of(&file.path) == Some(Language::Python);
    let requirements = is_requirements(&file.path);
    for line in &file.added {
        if python && !Language::Python.is_comment(&line.text) && PYTEST_PLUGINS.is_match(&line.text)
        {
            return Some(format!("pytest_plugins at line {}", line.number));
        }
        if requirements && PLUGIN_NAME.is_match(&line.text) {
            return Some(format!("a pytest plugin at line {}", line.number));
        }
    }
    None
}

/// A distribution's entry points as installed metadata: `entry_points.txt` in a
/// `*.dist-info` or `*.egg-info` folder.
fn is_entry_points(path: &str) -> bool {
    let mut parts = path.rsplit('/');
    parts.next() == Some("entry_points.txt")
        && parts
            .next()
            .is_some_and(|folder| folder.ends_with(".dist-info") || folder.ends_with(".egg-info"))
}

/// The first `func init()` or `func TestMain(` a change adds, at the top level, to a go
/// test file.
fn go_package_setup(file: &ChangedFile) -> Option<String> {
    if !file.path.ends_with("_test.go") {
        return None;
    }
    file.added.iter().find_map(|line| {
        let text = line.text.trim_end();
        let setup = if text.starts_with("func init()") {
            "func init()"
        } else if text.starts_with("func TestMain(") {
            "func TestMain"
        } else {
            return None;
        };
        Some(format!(
            "`{setup}` at line {}, which runs before every test of the package",
            line.number
        ))
    })
}

/// An existing Python module under a `tests`/`test` folder that pytest does not collect
/// from, edited or deleted.
fn is_test_support(file: &ChangedFile) -> bool {
    if file.status == FileStatus::Added || Language::of(&file.path) != Some(Language::Python) {
        return false;
    }
    let mut folders: Vec<&str> = file.path.split('/').collect();
    let name = folders.pop().unwrap_or("");
    let in_tests = folders.iter().any(|f| matches!(*f, "tests" | "test"));
    let stem = name.strip_suffix(".py").unwrap_or(name);
    in_tests && !stem.starts_with("test_") && !stem.ends_with("_test")
}

/// An existing JavaScript or TypeScript file under a test folder (`test`, `tests`,
/// `__tests__`, `spec`) that is not a test file by its name (`*.test.*`, `*.spec.*`),
/// edited or deleted: a shared helper (`check(actual, expected)`), a setup file. Whether
/// it writes a test at the base decides (a `__tests__/cart.js` jest collects does). A
/// vitest `test/helpers.js` whose `check` compared only the values' types beside a
/// regressed cart walked through the lane before (red-team, 2026-12-04): the tests that
/// call it were not touched, so neither replayed nor judged with the base's text.
fn is_js_support_candidate(file: &ChangedFile) -> bool {
    if file.status == FileStatus::Added || Language::of(&file.path) != Some(Language::JavaScript) {
        return false;
    }
    let mut folders: Vec<&str> = file.path.split('/').collect();
    let name = folders.pop().unwrap_or("");
    let in_tests = folders
        .iter()
        .any(|f| matches!(*f, "tests" | "test" | "__tests__" | "spec"));
    in_tests && !name.contains(".test.") && !name.contains(".spec.") && !name.ends_with(".d.ts")
}

/// What a new Python file would shadow (`json.py`, `json/__init__.py`,
/// `iniconfig/__init__.py`), said for people, and the folder its module sits in.
fn shadowed(file: &ChangedFile) -> Option<(String, String)> {
    if file.status != FileStatus::Added {
        return None;
    }
    let (mut folder, file_name) = file.path.rsplit_once('/').unwrap_or(("", &file.path));
    let mut name = python_module_name(file_name)?;
    if name == "__init__" {
        let (parent, package) = folder.rsplit_once('/').unwrap_or(("", folder));
        (folder, name) = (parent, package);
    }
    let what = if SHADOWED.contains(&name) {
        format!("a new module named like Python's `{name}`, which it would replace")
    } else if PYTEST_START_UP.contains(&name) {
        format!(
            "a new module named like `{name}`, which pytest imports before it reads its arguments"
        )
    } else {
        return None;
    };
    Some((what, folder.to_owned()))
}

/// New modules under test folders that import under the name of a module of the code under
/// test (`project`, from [`project_modules`]): pytest puts a test file's folder first on
/// `sys.path`, so `tests/app/cart.py` beside a namespace package `app`, or `tests/app.py`,
/// is what the tests import as `app.cart` or `app`, and a correct copy there keeps every
/// test green beside a regressed original. Each is `Shadowing`; paths `already` found are
/// left out.
pub fn project_shadowing(
    diff: &Diff,
    project: &BTreeSet<String>,
    already: &[InfraChange],
) -> Vec<InfraChange> {
    let mut found = Vec::new();
    for file in &diff.files {
        if file.status != FileStatus::Added
            || !is_test_file(&file.path)
            || already.iter().any(|c| c.path == file.path)
        {
            continue;
        }
        let Some(names) = import_names_anywhere(&file.path) else {
            continue;
        };
        if let Some(name) = names.iter().find(|name| project.contains(*name)) {
            found.push(change(
                file,
                InfraKind::Shadowing,
                format!(
                    "a new module under a test folder that imports as the code under test's `{name}`: the tests would import it instead"
                ),
            ));
        }
    }
    found
}

/// New Python modules that import under a top-level name because their folder is not a
/// package at the head (`head_packages`: the folders holding an `__init__.py`): `yaml.py`
/// at the root, `tests/yaml.py`, `yaml/__init__.py`; each with that name. Paths `already`
/// found are left out.
pub fn new_top_level_modules<'d>(
    diff: &'d Diff,
    head_packages: &BTreeSet<&str>,
    already: &[InfraChange],
) -> Vec<(&'d ChangedFile, String)> {
    diff.files
        .iter()
        .filter(|file| file.status == FileStatus::Added)
        .filter(|file| !already.iter().any(|c| c.path == file.path))
        .filter_map(|file| {
            let (mut folder, file_name) = file.path.rsplit_once('/').unwrap_or(("", &file.path));
            let mut name = python_module_name(file_name)?;
            if name == "__init__" {
                let (parent, package) = folder.rsplit_once('/').unwrap_or(("", folder));
                (folder, name) = (parent, package);
            }
            let top_level = folder.is_empty() || !head_packages.contains(folder);
            (top_level && !name.is_empty()).then(|| (file, name.to_owned()))
        })
        .collect()
}

/// `import a.b, c as d` and `from a.b import x` at the start of a line (relative imports
/// aside): the top-level name in group 1, the rest of an `import` list in group 2.
static IMPORT_LINE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?m)^[ \t]*(?:from[ \t]+([A-Za-z_]\w*)[\w.]*[ \t]+import\b|import[ \t]+([^#;\n]+))",
    )
    .expect("a valid pattern")
});

/// The top-level module names the Python `texts` import.
pub fn imported_names<'t>(texts: impl IntoIterator<Item = &'t str>) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for text in texts {
        for found in IMPORT_LINE.captures_iter(text) {
            if let Some(from) = found.get(1) {
                names.insert(from.as_str().to_owned());
            } else if let Some(list) = found.get(2) {
                for item in list.as_str().trim_matches(['(', ')', ' ', '\t']).split(',') {
                    let top = item.trim().split(['.', ' ', '\t']).next().unwrap_or("");
                    if !top.is_empty() && top.chars().all(|c| c == '_' || c.is_alphanumeric()) {
                        names.insert(top.to_owned());
                    }
                }
            }
        }
    }
    names
}

/// Every top-level name a module of the repository's `paths` could import as, from any
/// folder above it put on `sys.path` (`tests/helpers.py` gives `helpers` and `tests`).
pub fn provided_names(paths: &[&str]) -> BTreeSet<String> {
    paths
        .iter()
        .filter_map(|path| module_segments(path))
        .flatten()
        .collect()
}

/// New top-level modules (`candidates`, from [`new_top_level_modules`]) named like a
/// module the base's Python files import (`imported`) that no file of the base provides
/// (`provided`): a dependency from outside the repository, which the new module replaces
/// on `sys.path` (the root and the test folders come before `site-packages`). A root
/// `yaml.py` that loaded the real PyYAML under its own name and set `app.cart.total = sum`
/// kept the tests that read their prices with `import yaml` green beside a regression,
/// and the lane accepted it (red-team, 2026-12-04).
pub fn dependency_shadowing(
    candidates: &[(&ChangedFile, String)],
    imported: &BTreeSet<String>,
    provided: &BTreeSet<String>,
) -> Vec<InfraChange> {
    candidates
        .iter()
        .filter(|(_, name)| imported.contains(name) && !provided.contains(name))
        .map(|(file, name)| {
            change(
                file,
                InfraKind::Shadowing,
                format!(
                    "a new module named like `{name}`, which the base's code or tests import from outside the repository: it would replace it"
                ),
            )
        })
        .collect()
}

/// Files the change adds or edits that may be compiled code: git called them binary, or
/// their names say so, or their first line starts like an object file. Their head bytes
/// go to [`compiled_code`].
pub fn compiled_candidates<'d>(diff: &'d Diff, found: &[InfraChange]) -> Vec<&'d str> {
    diff.files
        .iter()
        .filter(|file| file.status != FileStatus::Deleted)
        .filter(|file| !found.iter().any(|change| change.path == file.path))
        .filter(|file| {
            // A `.gitattributes` `diff` attribute shows an object file's bytes as lines.
            file.binary
                || compiled_suffix(file_name(&file.path)).is_some()
                || file.added.first().is_some_and(|line| {
                    line.number == 1
                        && (line.text.starts_with("\u{7f}ELF") || line.text.starts_with("\0asm"))
                })
        })
        .map(|file| file.path.as_str())
        .collect()
}

/// The compiled-code changes among `candidates`, whose head bytes are `heads` (`None`:
/// absent at the head).
pub fn compiled_code(
    diff: &Diff,
    candidates: &[&str],
    heads: &[Option<Vec<u8>>],
) -> Vec<InfraChange> {
    candidates
        .iter()
        .zip(heads)
        .filter_map(|(path, head)| {
            let file = diff.file(path)?;
            let bytes = head.as_deref().unwrap_or_default();
            let what = object_format(bytes)
                .map(str::to_owned)
                .or_else(|| compiled_suffix(file_name(path)).map(str::to_owned))?;
            Some(change(
                file,
                InfraKind::CompiledCode,
                format!("{what}: no rule reads what compiled code does, and the tests run it"),
            ))
        })
        .collect()
}

/// What a file's bytes are when they start like compiled code. A PE's `MZ` counts only
/// with a NUL in its first bytes, as git's test of binary content: a text may start
/// with those two letters.
fn object_format(bytes: &[u8]) -> Option<&'static str> {
    const MACH_O: [[u8; 4]; 4] = [
        [0xfe, 0xed, 0xfa, 0xce],
        [0xfe, 0xed, 0xfa, 0xcf],
        [0xce, 0xfa, 0xed, 0xfe],
        [0xcf, 0xfa, 0xed, 0xfe],
    ];
    let binary = bytes[..bytes.len().min(8000)].contains(&0);
    if bytes.starts_with(b"\x7fELF") {
        Some("an ELF object (shared library or executable)")
    } else if MACH_O.iter().any(|magic| bytes.starts_with(magic)) {
        Some("a Mach-O object")
    } else if bytes.starts_with(&[0xca, 0xfe, 0xba, 0xbe]) {
        Some("a Java class or universal Mach-O binary")
    } else if bytes.starts_with(b"\0asm") {
        Some("a WebAssembly module")
    } else if binary && bytes.starts_with(b"MZ") {
        Some("a Windows PE executable or DLL")
    } else {
        None
    }
}

/// What a file name says it is when it names compiled code: a shared library, object
/// or archive, an extension module, a Java class or archive, WebAssembly, a wheel, egg
/// or zip application Python imports from.
fn compiled_suffix(name: &str) -> Option<&'static str> {
    let lower = name.to_ascii_lowercase();
    // `libfoo.so.1.2`: the version after `.so`.
    let versioned_so = lower
        .split('.')
        .skip(1)
        .collect::<Vec<_>>()
        .windows(2)
        .any(|pair| pair[0] == "so" && pair[1].bytes().all(|b| b.is_ascii_digit()));
    let (_, extension) = lower.rsplit_once('.')?;
    Some(match extension {
        "so" | "dylib" | "dll" | "pyd" | "node" | "bundle" => "a shared library",
        "o" | "obj" | "a" | "lib" => "an object file or static library",
        "exe" => "a Windows executable",
        "class" | "jar" | "war" => "a Java class or archive",
        "wasm" => "a WebAssembly module",
        "whl" | "egg" | "pyz" => "a Python archive that imports as code",
        _ if versioned_so => "a shared library",
        _ => return None,
    })
}

/// Whether `diff` adds a Python module at all: only then is the base read for
/// [`dependency_shadowing`].
pub fn adds_python_modules(diff: &Diff) -> bool {
    diff.files.iter().any(|file| {
        file.status == FileStatus::Added && python_module_name(file_name(&file.path)).is_some()
    })
}

/// Whether `diff` adds a Python module under a test folder: only then are the project's
/// modules worth listing for [`project_shadowing`].
pub fn adds_test_folder_modules(diff: &Diff) -> bool {
    diff.files.iter().any(|file| {
        file.status == FileStatus::Added
            && is_test_file(&file.path)
            && python_module_name(file_name(&file.path)).is_some()
    })
}

/// The dotted names the code under test's Python modules and their packages import as,
/// from the head's `paths`: from the repository's root, from `src/`, and from the folder
/// above each package (the first folder up without an `__init__.py`).
pub fn project_modules(paths: &[&str]) -> BTreeSet<String> {
    let packages: BTreeSet<&str> = paths
        .iter()
        .filter_map(|path| path.strip_suffix("/__init__.py"))
        .collect();
    let mut names = BTreeSet::new();
    for path in paths {
        if is_test_file(path) {
            continue;
        }
        let Some(segments) = module_segments(path) else {
            continue;
        };
        let folders = segments.len().saturating_sub(1);
        // The package's root: up while the folder is a package.
        let mut root = folders;
        while root > 0 && packages.contains(segments[..root].join("/").as_str()) {
            root -= 1;
        }
        // A module in a plain folder imports from the root (`app/cart.py` as `app.cart`),
        // not from its own folder.
        let mut starts = vec![0];
        if root < folders {
            starts.push(root);
        }
        if segments.first().is_some_and(|first| first == "src") {
            starts.push(1);
        }
        // The module and each package (or namespace folder) above it: a new `tests/app.py`
        // is found before the folder `app` on `sys.path`.
        for start in starts {
            for end in start + 1..=segments.len() {
                names.insert(segments[start..end].join("."));
            }
        }
    }
    names
}

/// A module's path as its name's parts (`app/cart.py` → `app`, `cart`; a package's
/// `__init__.py` → its folders); `None` for a file Python does not import.
fn module_segments(path: &str) -> Option<Vec<String>> {
    let (folder, name) = path.rsplit_once('/').unwrap_or(("", path));
    let module = python_module_name(name)?;
    let mut segments: Vec<String> = folder
        .split('/')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    if module != "__init__" {
        segments.push(module.to_owned());
    }
    (!segments.is_empty()).then_some(segments)
}

/// Every name a module could import as, from any folder above it put on `sys.path`.
fn import_names_anywhere(path: &str) -> Option<Vec<String>> {
    let segments = module_segments(path)?;
    Some(
        (0..segments.len())
            .map(|start| segments[start..].join("."))
            .collect(),
    )
}

/// The module a file name imports as: `json.py`, and the compiled forms Python imports
/// from a folder on `sys.path` without a source beside them (`json.pyc`, an extension
/// module `json.cpython-311-x86_64-linux-gnu.so` or `json.pyd`).
fn python_module_name(file_name: &str) -> Option<&str> {
    let (stem, extension) = file_name.rsplit_once('.')?;
    match extension.to_ascii_lowercase().as_str() {
        "py" | "pyc" | "pyo" => Some(stem),
        "so" | "pyd" => stem.split('.').next(),
        _ => None,
    }
}

/// Which CI service reads `path` as a pipeline's definition, if one does. Only the
/// services' own places: a file a pipeline includes from elsewhere is not known here.
fn ci_pipeline(path: &str) -> Option<String> {
    let name = file_name(path);
    let yaml = std::path::Path::new(name)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("yml") || e.eq_ignore_ascii_case("yaml"));
    let under = |folder: &str| path.starts_with(folder);
    let service = if under(".github/workflows/") && yaml {
        "GitHub Actions workflow"
    } else if under(".github/actions/") {
        "GitHub Actions local action"
    } else if path == ".gitlab-ci.yml" || (under(".gitlab/") && yaml) {
        "GitLab CI pipeline"
    } else if under(".circleci/") {
        "CircleCI configuration"
    } else if under(".buildkite/") {
        "Buildkite pipeline"
    } else if path == "azure-pipelines.yml" || under(".azure-pipelines/") {
        "Azure Pipelines definition"
    } else if path == "bitbucket-pipelines.yml" {
        "Bitbucket Pipelines definition"
    } else if name == "Jenkinsfile" {
        "Jenkinsfile"
    } else if matches!(
        path,
        ".drone.yml"
            | ".woodpecker.yml"
            | ".travis.yml"
            | "appveyor.yml"
            | ".appveyor.yml"
            | ".cirrus.yml"
    ) || under(".woodpecker/")
        || under(".semaphore/")
        || under(".tekton/")
    {
        "CI pipeline definition"
    } else {
        return None;
    };
    Some(service.to_owned())
}

/// Why a changed path is the runner's own code, if it is: under a folder of installed
/// packages, in a vendored test library, or compiled Python.
fn runner_code(path: &str) -> Option<String> {
    let segments: Vec<&str> = path.split('/').collect();
    let folders = &segments[..segments.len().saturating_sub(1)];
    let name = segments.last().copied().unwrap_or_default();
    // A `.pyc` compiled with `--invalidation-mode unchecked-hash` in `__pycache__` runs
    // instead of its source, never compared with it: the regressed `cart.py` reviewed, the
    // old `cart.cpython-311.pyc` tested. A sourceless `json.pyc` imports as `json`.
    let bytecode = name.rsplit_once('.').is_some_and(|(_, extension)| {
        extension.eq_ignore_ascii_case("pyc") || extension.eq_ignore_ascii_case("pyo")
    });
    if bytecode || folders.contains(&"__pycache__") {
        return Some(
            "compiled Python: it runs instead of its source, which is what the change shows"
                .to_owned(),
        );
    }
    if let Some(folder) = folders
        .iter()
        .find(|folder| INSTALLED_PACKAGES.contains(folder))
    {
        return Some(format!(
            "installed packages (`{folder}/`): the code that runs the tests"
        ));
    }
    let vendor = folders.iter().position(|folder| *folder == "vendor")?;
    let vendored = segments[vendor + 1..].join("/");
    VENDORED_TEST_LIBRARIES
        .iter()
        .find(|library| {
            vendored
                .strip_prefix(**library)
                .is_some_and(|rest| rest.starts_with(['/', '-']))
        })
        .map(|library| format!("a vendored test library (`{library}`)"))
}

/// What differs in the runner's part of a sectioned file, if anything.
fn section_change(name: &str, base: Option<&str>, head: Option<&str>) -> Option<String> {
    let (section, base_section, head_section) = match name {
        "pyproject.toml" => (
            "[tool.pytest] or a pytest plugin entry point",
            base.map(pyproject_runner),
            head.map(pyproject_runner),
        ),
        "package.json" => (
            "the \"jest\", \"mocha\", \"ava\" or \"babel\" key",
            base.map(package_json_runner),
            head.map(package_json_runner),
        ),
        "Cargo.toml" => {
            let known = base.map(CargoBase::of);
            (
                "its test targets, features, profiles, patches, path or git dev-dependencies or workspace members",
                base.map(|text| cargo_runner(text, known.as_ref())),
                head.map(|text| cargo_runner(text, known.as_ref())),
            )
        }
        "go.mod" => {
            // Only a replacement the base does not make can swap code in.
            let known = base.map(go_mod_replacements).unwrap_or_default();
            let new = |text: &str| {
                let mut added = go_mod_replacements(text);
                added.retain(|line| !known.contains(line));
                added.join("\n")
            };
            ("its replace directives", base.map(new), head.map(new))
        }
        "setup.cfg" => (
            "[tool:pytest]",
            base.map(|t| ini_section(t, "tool:pytest")),
            head.map(|t| ini_section(t, "tool:pytest")),
        ),
        _ => (
            "[pytest]",
            base.map(|t| ini_section(t, "pytest")),
            head.map(|t| ini_section(t, "pytest")),
        ),
    };
    let empty = Some(String::new());
    let base_section = base_section.or_else(|| empty.clone());
    let head_section = head_section.or(empty);
    if base_section != head_section {
        return Some(format!("{section} in {name}"));
    }
    let plugins = |text: Option<&str>| -> BTreeSet<String> {
        text.map(|t| {
            PLUGIN_NAME
                .find_iter(t)
                .map(|m| m.as_str().to_ascii_lowercase().replace('_', "-"))
                .collect()
        })
        .unwrap_or_default()
    };
    (plugins(base) != plugins(head)).then(|| format!("pytest plugins named in {name}"))
}

/// package.json's runner settings, normalized: the runners' keys as JSON values (so
/// formatting, key order and the other keys do not count). A file that is not JSON is its
/// whole text: a change to it is a change.
fn package_json_runner(text: &str) -> String {
    let Ok(serde_json::Value::Object(document)) = serde_json::from_str(text) else {
        return text.to_owned();
    };
    let runners: serde_json::Map<String, serde_json::Value> = PACKAGE_JSON_RUNNER_KEYS
        .iter()
        .filter_map(|key| Some(((*key).to_owned(), document.get(*key)?.clone())))
        .collect();
    if runners.is_empty() {
        return String::new();
    }
    serde_json::Value::Object(runners).to_string()
}

/// What the base's Cargo.toml says that the head's is compared with entry by entry, so that
/// additions no base test can depend on, and removals that swap nothing in, do not count.
#[derive(Debug, Default)]
struct CargoBase {
    members: Vec<toml::Value>,
    /// `patch.REGISTRY.CRATE` and `replace.SPEC`, with their values.
    overrides: Vec<(String, toml::Value)>,
    /// Each dev-dependency (`SECTION.NAME`) with where it comes from.
    dev_sources: Vec<(String, String)>,
}

impl CargoBase {
    fn of(text: &str) -> CargoBase {
        let document = text.parse::<toml::Table>().unwrap_or_default();
        let members = document
            .get("workspace")
            .and_then(|workspace| workspace.get("members"))
            .and_then(toml::Value::as_array)
            .cloned()
            .unwrap_or_default();
        CargoBase {
            members,
            overrides: cargo_overrides(&document),
            dev_sources: cargo_dev_sources(&document),
        }
    }
}

/// `[patch.REGISTRY]` and `[replace]` entries, flattened.
fn cargo_overrides(document: &toml::Table) -> Vec<(String, toml::Value)> {
    let mut overrides = Vec::new();
    if let Some(registries) = document.get("patch").and_then(toml::Value::as_table) {
        for (registry, crates) in registries {
            for (name, value) in crates.as_table().into_iter().flatten() {
                overrides.push((format!("patch.{registry}.{name}"), value.clone()));
            }
        }
    }
    for (spec, value) in document
        .get("replace")
        .and_then(toml::Value::as_table)
        .into_iter()
        .flatten()
    {
        overrides.push((format!("replace.{spec}"), value.clone()));
    }
    overrides
}

/// Each dev-dependency (`[dev-dependencies]` and `[target.…dev-dependencies]`) with where
/// it comes from: its path, git repository, revision, registry and package name, never its
/// version (a release bump changes nothing a test relies on).
fn cargo_dev_sources(document: &toml::Table) -> Vec<(String, String)> {
    let mut sections = vec![(
        "dev-dependencies".to_owned(),
        document.get("dev-dependencies"),
    )];
    for (target, table) in document
        .get("target")
        .and_then(toml::Value::as_table)
        .into_iter()
        .flatten()
    {
        sections.push((
            format!("target.{target}.dev-dependencies"),
            table.get("dev-dependencies"),
        ));
    }
    let mut sources = Vec::new();
    for (section, table) in sections {
        for (name, dependency) in table.and_then(toml::Value::as_table).into_iter().flatten() {
            let source: Vec<String> =
                ["path", "git", "branch", "tag", "rev", "registry", "package"]
                    .iter()
                    .filter_map(|key| Some(format!("{key}={}", dependency.get(key)?)))
                    .collect();
            sources.push((format!("{section}.{name}"), source.join(",")));
        }
    }
    sources
}

/// The crate's own features a plain `cargo test` turns on: `default` and what it reaches
/// through other features of the crate (`dep/feature` and `dep:name` are not its own).
fn cargo_default_features(document: &toml::Table) -> BTreeSet<String> {
    let Some(features) = document.get("features").and_then(toml::Value::as_table) else {
        return BTreeSet::new();
    };
    let mut enabled = BTreeSet::new();
    let mut pending = vec!["default".to_owned()];
    while let Some(feature) = pending.pop() {
        let Some(implied) = features.get(&feature).and_then(toml::Value::as_array) else {
            continue;
        };
        // `default` itself gates nothing a test would name.
        if feature != "default" && !enabled.insert(feature) {
            continue;
        }
        for name in implied.iter().filter_map(toml::Value::as_str) {
            if !name.contains(['/', ':']) && !enabled.contains(name) {
                pending.push(name.to_owned());
            }
        }
    }
    enabled
}

/// Cargo.toml's settings that decide which tests `cargo test` builds and how they check,
/// normalized (formatting, versions and unrelated keys do not count): `autotests = false`
/// or a `[[test]]` with `test = false` drops a target's tests, `[lib] test = false` the
/// unit tests, `[lib] doctest = false` the doc tests (the whole `[lib]` table counts); a change to the features `default` turns on compiles out the tests behind
/// them; `debug-assertions`, `overflow-checks` or `panic` changed in the `dev` or `test`
/// profile silences checks or `should_panic`; a new or changed `[patch]` or `[replace]`
/// entry, or a dev-dependency taken from somewhere else, swaps an assertion library for
/// other code; a workspace member removed or excluded takes its tests along. A file that
/// is not TOML is its whole text.
///
/// A new Cargo.toml (`base` is `None`) is a new crate, whose tests no base test can be:
/// only what a manifest can do to the others' counts (profiles, patches, a workspace).
fn cargo_runner(text: &str, base: Option<&CargoBase>) -> String {
    let Ok(document) = text.parse::<toml::Table>() else {
        return format!("unparsed:{text}");
    };
    let Some(base) = base else {
        let mut document = document;
        document.retain(|key, _| matches!(key, "profile" | "patch" | "replace" | "workspace"));
        return cargo_runner(&document.to_string(), Some(&CargoBase::default()));
    };
    let mut kept = toml::Table::new();
    let mut keep = |key: String, value: Option<&toml::Value>| {
        if let Some(value) = value {
            kept.insert(key, value.clone());
        }
    };
    let package = document.get("package");
    for key in [
        "autotests",
        "autolib",
        "autobins",
        "autoexamples",
        "autobenches",
        "build",
    ] {
        keep(format!("package.{key}"), package.and_then(|p| p.get(key)));
    }
    for key in ["lib", "test", "bin", "example", "bench"] {
        keep(key.to_owned(), document.get(key));
    }
    for profile in ["dev", "test"] {
        let Some(settings) = document
            .get("profile")
            .and_then(|profiles| profiles.get(profile))
        else {
            continue;
        };
        let mut scopes = vec![(format!("profile.{profile}"), settings)];
        for (name, overrides) in settings
            .get("package")
            .and_then(toml::Value::as_table)
            .into_iter()
            .flatten()
        {
            scopes.push((format!("profile.{profile}.package.{name}"), overrides));
        }
        for (scope, table) in scopes {
            for key in ["debug-assertions", "overflow-checks", "panic", "inherits"] {
                keep(format!("{scope}.{key}"), table.get(key));
            }
        }
    }
    let workspace = document.get("workspace");
    for key in ["exclude", "default-members"] {
        keep(
            format!("workspace.{key}"),
            workspace.and_then(|w| w.get(key)),
        );
    }
    // A member the base lists and the head does not takes its tests along; a new one
    // takes none.
    if let Some(members) = workspace
        .and_then(|w| w.get("members"))
        .and_then(toml::Value::as_array)
        && !base.members.is_empty()
    {
        let kept_members: Vec<toml::Value> = members
            .iter()
            .filter(|member| base.members.contains(*member))
            .cloned()
            .collect();
        keep(
            "workspace.members".to_owned(),
            Some(&toml::Value::Array(kept_members)),
        );
    }
    let defaults: Vec<toml::Value> = cargo_default_features(&document)
        .into_iter()
        .map(toml::Value::String)
        .collect();
    if !defaults.is_empty() {
        keep(
            "features.turned-on-by-default".to_owned(),
            Some(&toml::Value::Array(defaults)),
        );
    }
    // Overrides and sources as the base has them say nothing; only what differs is kept.
    for (key, value) in cargo_overrides(&document) {
        if !base.overrides.contains(&(key.clone(), value.clone())) {
            keep(key, Some(&value));
        }
    }
    for (key, source) in cargo_dev_sources(&document) {
        let before = base.dev_sources.iter().find(|(name, _)| *name == key);
        if before.is_some_and(|(_, was)| *was != source) {
            keep(key, Some(&toml::Value::String(source)));
        }
    }
    kept.to_string()
}

/// go.mod's `replace` directives, spaces normalized and sorted: a replacement swaps a
/// module (an assertion library among them) for other code.
fn go_mod_replacements(text: &str) -> Vec<String> {
    let mut replacements = Vec::new();
    let mut in_block = false;
    for line in text.lines() {
        let line = line.split("//").next().unwrap_or_default().trim();
        let spaced = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
        if in_block {
            if line == ")" {
                in_block = false;
            } else if !line.is_empty() {
                replacements.push(spaced(line));
            }
        } else if let Some(rest) = line.strip_prefix("replace") {
            let rest = rest.trim();
            if rest == "(" {
                in_block = true;
            } else if !rest.is_empty() {
                replacements.push(spaced(rest));
            }
        }
    }
    replacements.sort();
    replacements
}

/// pyproject.toml's runner settings, normalized: the `[tool.pytest]` table and the
/// `pytest11` entry points, as TOML values (so formatting and other tables do not count).
/// A file that is not TOML is its whole text: a change to it is a change.
fn pyproject_runner(text: &str) -> String {
    let Ok(document) = text.parse::<toml::Table>() else {
        return format!("unparsed:{text}");
    };
    let tool = document
        .get("tool")
        .and_then(|tool| tool.get("pytest"))
        .map(ToString::to_string)
        .unwrap_or_default();
    let entry_points = document
        .get("project")
        .and_then(|project| project.get("entry-points"))
        .and_then(|points| points.get("pytest11"))
        .map(ToString::to_string)
        .unwrap_or_default();
    format!("{tool}\n{entry_points}")
}

/// An INI section's settings, normalized: its lines without comments, blank lines and
/// surrounding spaces. Several sections of the same name are joined, as configparser
/// would refuse them and pytest read the first.
fn ini_section(text: &str, wanted: &str) -> String {
    let mut inside = false;
    let mut lines = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if let Some(header) = trimmed.strip_prefix('[').and_then(|t| t.strip_suffix(']'))
            && !line.starts_with([' ', '\t'])
        {
            inside = header.trim() == wanted;
            continue;
        }
        if inside && !trimmed.is_empty() && !trimmed.starts_with('#') && !trimmed.starts_with(';') {
            lines.push(trimmed.to_owned());
        }
    }
    lines.join("\n")
}

/// The default globs, compiled.
pub fn default_globs() -> Vec<PathGlob> {
    DEFAULT_GLOBS
        .iter()
        .map(|glob| PathGlob::new(glob).expect("the default globs are valid"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::diff::Line;

    fn file(path: &str, status: FileStatus, added: &[&str]) -> ChangedFile {
        ChangedFile {
            path: path.to_owned(),
            status,
            binary: false,
            added: added
                .iter()
                .enumerate()
                .map(|(index, text)| Line {
                    number: index + 1,
                    text: (*text).to_owned(),
                })
                .collect(),
            removed: Vec::new(),
        }
    }

    fn found(diff: &Diff, texts: &[(&str, Option<&str>, Option<&str>)]) -> Vec<(String, String)> {
        changes(&default_globs(), diff, |path| {
            let (_, base, head) = texts
                .iter()
                .find(|(p, _, _)| *p == path)
                .copied()
                .unwrap_or((path, None, None));
            Texts {
                base: base.map(str::to_owned),
                head: head.map(str::to_owned),
            }
        })
        .into_iter()
        .map(|c| (c.path, c.what))
        .collect()
    }

    /// A new module in a folder that is not a package, named like a module the base
    /// imports from outside the repository, shadows that dependency; one named like the
    /// repository's own module, one inside a package, and one nobody imported do not.
    #[test]
    fn a_new_module_named_like_a_dependency_from_outside_the_repository_shadows_it() {
        let added = |path: &str| file(path, FileStatus::Added, &["import app.cart"]);
        let diff = Diff {
            files: vec![
                added("yaml.py"),
                added("tests/requests/__init__.py"),
                added("app/yaml.py"),
                added("helpers.py"),
                added("scripts/release.py"),
                file("attr.py", FileStatus::Modified, &["x = 1"]),
            ],
        };
        let packages: BTreeSet<&str> = ["app"].into_iter().collect();
        let candidates = new_top_level_modules(&diff, &packages, &[]);
        let names: Vec<&str> = candidates.iter().map(|(_, name)| name.as_str()).collect();
        assert_eq!(names, ["yaml", "requests", "helpers", "release"]);
        let base_texts = [
            "import json\nimport yaml\n\nfrom app.cart import total\n",
            "import os, requests as r  # the client\nfrom . import sibling\nfrom helpers import check\n",
            "def f():\n    import attr.exceptions\n",
        ];
        let imported = imported_names(base_texts);
        assert_eq!(
            imported.iter().map(String::as_str).collect::<Vec<_>>(),
            ["app", "attr", "helpers", "json", "os", "requests", "yaml"]
        );
        let provided = provided_names(&["app/__init__.py", "app/cart.py", "tests/helpers.py"]);
        let shadowing: Vec<(String, String)> =
            dependency_shadowing(&candidates, &imported, &provided)
                .into_iter()
                .map(|c| (c.path, c.what))
                .collect();
        let what = |name: &str| {
            format!(
                "a new module named like `{name}`, which the base's code or tests import from outside the repository: it would replace it"
            )
        };
        assert_eq!(
            shadowing,
            [
                ("yaml.py".to_owned(), what("yaml")),
                ("tests/requests/__init__.py".to_owned(), what("requests")),
            ]
        );
    }

    /// A JavaScript helper under a test folder that writes no test at the base is test
    /// support when the change edits or deletes it; a test module there (it writes a
    /// test), a `*.test.*` file, a new helper and a helper outside the test folders are
    /// not (the last is `framework_support`'s).
    #[test]
    fn an_edited_javascript_helper_under_a_test_folder_is_test_support() {
        let helper = "import { expect } from 'vitest';\nexport function check(a, b) {\n  expect(a).toBe(b);\n}\n";
        let module = "const { total } = require('../cart');\ntest('totals', () => {\n  expect(total([3, 5])).toBe(8);\n});\n";
        let diff = Diff {
            files: vec![
                file(
                    "test/helpers.js",
                    FileStatus::Modified,
                    &["  expect(typeof a).toBe(typeof b);"],
                ),
                file("__tests__/support/setup.ts", FileStatus::Deleted, &[]),
                file(
                    "spec/factories.mjs",
                    FileStatus::Modified,
                    &["export const cart = [];"],
                ),
                file(
                    "__tests__/cart.js",
                    FileStatus::Modified,
                    &["  expect(total([])).toBe(0);"],
                ),
                file("test/cart.test.js", FileStatus::Modified, &["// more"]),
                file(
                    "test/new-helper.js",
                    FileStatus::Added,
                    &["export const x = 1;"],
                ),
                file(
                    "src/format.js",
                    FileStatus::Modified,
                    &["export const x = 1;"],
                ),
                file(
                    "test/types.d.ts",
                    FileStatus::Modified,
                    &["declare const x: number;"],
                ),
            ],
        };
        let texts = [
            ("test/helpers.js", Some(helper), Some(helper)),
            (
                "__tests__/support/setup.ts",
                Some("globalThis.rate = 0.1;\n"),
                None,
            ),
            (
                "spec/factories.mjs",
                Some("export const cart = [3, 5];\n"),
                Some(""),
            ),
            ("__tests__/cart.js", Some(module), Some(module)),
            ("test/cart.test.js", Some(module), Some(module)),
            ("src/format.js", Some("export const x = 0;\n"), Some("")),
        ];
        let paths: Vec<String> = found(&diff, &texts)
            .into_iter()
            .map(|(path, _)| path)
            .collect();
        assert_eq!(
            paths,
            [
                "__tests__/support/setup.ts",
                "spec/factories.mjs",
                "test/helpers.js"
            ]
        );
    }

    #[test]
    fn conftest_at_any_depth_test_packages_and_start_up_hooks_are_owned() {
        let diff = Diff {
            files: vec![
                file("conftest.py", FileStatus::Added, &[]),
                file("a/b/tests/conftest.py", FileStatus::Modified, &[]),
                file("tests/__init__.py", FileStatus::Added, &[]),
                file("tests/unit/__init__.py", FileStatus::Added, &[]),
                file("app/__init__.py", FileStatus::Modified, &[]),
                file("sitecustomize.py", FileStatus::Added, &[]),
                file("lib/evil.pth", FileStatus::Added, &[]),
                file("pytest.ini", FileStatus::Modified, &[]),
                file(".config/nextest.toml", FileStatus::Modified, &[]),
                file("web/vitest.config.ts", FileStatus::Modified, &[]),
                file("app/cart.py", FileStatus::Modified, &["x = 1"]),
                file(".env.test", FileStatus::Added, &["VITE_EXACT=1"]),
                file(
                    "web/.env.test.local",
                    FileStatus::Modified,
                    &["VITE_EXACT=1"],
                ),
                file(".env.production", FileStatus::Modified, &["VITE_EXACT=1"]),
                file(".env.testing.example", FileStatus::Added, &["A=1"]),
            ],
        };
        let paths: Vec<String> = found(&diff, &[]).into_iter().map(|(p, _)| p).collect();
        assert_eq!(
            paths,
            [
                ".config/nextest.toml",
                ".env.test",
                "a/b/tests/conftest.py",
                "conftest.py",
                "lib/evil.pth",
                "pytest.ini",
                "sitecustomize.py",
                "tests/__init__.py",
                "tests/unit/__init__.py",
                "web/.env.test.local",
                "web/vitest.config.ts",
            ]
        );
    }

    #[test]
    fn only_the_runner_section_of_pyproject_setup_cfg_and_tox_counts() {
        let diff = Diff {
            files: vec![
                file("pyproject.toml", FileStatus::Modified, &[]),
                file("setup.cfg", FileStatus::Modified, &[]),
                file("tox.ini", FileStatus::Modified, &[]),
            ],
        };
        let base_py =
            "[project]\nname = \"shop\"\n\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\n";
        let other_table =
            "[project]\nname = \"shop2\"\n\n[tool.pytest.ini_options]\ntestpaths = [ \"tests\" ]\n";
        let addopts = "[project]\nname = \"shop\"\n\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\naddopts = \"-k 'not total'\"\n";
        let cfg = "[metadata]\nname = shop\n\n[tool:pytest]\ntestpaths = tests\n";
        let cfg_other = "[metadata]\nname = shop2\n\n[tool:pytest]\ntestpaths = tests\n";
        let tox = "[tox]\nenvlist = py3\n\n[pytest]\naddopts = -q\n";
        let tox_deselect = "[tox]\nenvlist = py3\n\n[pytest]\naddopts = -q --deselect tests/test_cart.py::test_total\n";
        assert!(
            found(
                &diff,
                &[
                    ("pyproject.toml", Some(base_py), Some(other_table)),
                    ("setup.cfg", Some(cfg), Some(cfg_other)),
                    ("tox.ini", Some(tox), Some(tox)),
                ]
            )
            .is_empty()
        );
        let changed = found(
            &diff,
            &[
                ("pyproject.toml", Some(base_py), Some(addopts)),
                (
                    "setup.cfg",
                    Some(cfg),
                    Some(&cfg.replace("tests\n", "tests\npython_functions = check_*\n")),
                ),
                ("tox.ini", Some(tox), Some(tox_deselect)),
            ],
        );
        assert_eq!(
            changed,
            [
                (
                    "pyproject.toml".to_owned(),
                    "[tool.pytest] or a pytest plugin entry point in pyproject.toml".to_owned()
                ),
                (
                    "setup.cfg".to_owned(),
                    "[tool:pytest] in setup.cfg".to_owned()
                ),
                ("tox.ini".to_owned(), "[pytest] in tox.ini".to_owned()),
            ]
        );
        // A plugin added to the project's dependencies is a plugin-list change too.
        let with_plugin = base_py.replace(
            "name = \"shop\"",
            "name = \"shop\"\ndependencies = [\"pytest-pass-always\"]",
        );
        assert_eq!(
            found(
                &Diff {
                    files: vec![file("pyproject.toml", FileStatus::Modified, &[])]
                },
                &[("pyproject.toml", Some(base_py), Some(&with_plugin))]
            )[0]
            .1,
            "pytest plugins named in pyproject.toml"
        );
    }

    #[test]
    fn plugin_lists_in_code_and_requirements_are_owned() {
        let diff = Diff {
            files: vec![
                file(
                    "tests/test_cart.py",
                    FileStatus::Modified,
                    &[
                        "# pytest_plugins is not used here",
                        "pytest_plugins = [\"tests.helper\"]",
                    ],
                ),
                file(
                    "requirements-dev.txt",
                    FileStatus::Modified,
                    &["pytest-sugar==1.0"],
                ),
                file("requirements.txt", FileStatus::Modified, &["requests==2.0"]),
                file("tests/json.py", FileStatus::Added, &[]),
                file("random/__init__.py", FileStatus::Added, &[]),
                file("app/jsonish.py", FileStatus::Added, &[]),
                file("tests/helpers.py", FileStatus::Modified, &["x = 1"]),
                file("tests/new_helpers.py", FileStatus::Added, &["x = 1"]),
            ],
        };
        assert_eq!(
            found(&diff, &[]),
            [
                (
                    "random/__init__.py".to_owned(),
                    "a new module named like Python's `random`, which it would replace".to_owned()
                ),
                (
                    "requirements-dev.txt".to_owned(),
                    "a pytest plugin at line 1".to_owned()
                ),
                (
                    "tests/helpers.py".to_owned(),
                    "test-support code the unchanged tests import".to_owned()
                ),
                (
                    "tests/json.py".to_owned(),
                    "a new module named like Python's `json`, which it would replace".to_owned()
                ),
                (
                    "tests/test_cart.py".to_owned(),
                    "pytest_plugins at line 2".to_owned()
                ),
            ]
        );
    }

    /// Found by a red-team run (2026-12-04): a committed distribution's entry points
    /// (pytest loads `pytest11` plugins from them), a root module named like one the
    /// lane's plugins import at start-up (`faker`), and a go test file's package setup
    /// (`func init()`, `func TestMain(`) each let a regression through. Near misses are
    /// not refused: an `entry_points.txt` elsewhere, a nested `init` or a method named
    /// `TestMain`, a setup already there (a modified file that does not add it), `faker`
    /// inside a package.
    #[test]
    fn entry_points_plugin_imports_and_go_package_setup_are_test_infrastructure() {
        let diff = Diff {
            files: vec![
                file(
                    "shop_extras-1.0.dist-info/entry_points.txt",
                    FileStatus::Added,
                    &["[pytest11]", "extras = shop_extras"],
                ),
                file(
                    "vendor/x.egg-info/entry_points.txt",
                    FileStatus::Modified,
                    &["[console_scripts]"],
                ),
                file("docs/entry_points.txt", FileStatus::Added, &["[pytest11]"]),
                file("faker.py", FileStatus::Added, &["import app.cart"]),
                file("app/faker.py", FileStatus::Added, &[]),
                file("app/__init__.py", FileStatus::Added, &[]),
                file(
                    "b/zz_test.go",
                    FileStatus::Added,
                    &["package b", "", "func init() { exact = true }"],
                ),
                file(
                    "b/main_test.go",
                    FileStatus::Modified,
                    &["func TestMain(m *testing.M) {", "\tos.Exit(0)", "}"],
                ),
                file(
                    "c/c_test.go",
                    FileStatus::Modified,
                    &[
                        "\tfunc init() {}",
                        "func (s *suite) TestMain(t *testing.T) {}",
                        "func TestInit(t *testing.T) {}",
                    ],
                ),
                file("c/c.go", FileStatus::Modified, &["func init() { setup() }"]),
            ],
        };
        assert_eq!(
            found(&diff, &[("app/__init__.py", None, Some(""))]),
            [
                (
                    "b/main_test.go".to_owned(),
                    "`func TestMain` at line 1, which runs before every test of the package"
                        .to_owned()
                ),
                (
                    "b/zz_test.go".to_owned(),
                    "`func init()` at line 3, which runs before every test of the package"
                        .to_owned()
                ),
                (
                    "faker.py".to_owned(),
                    "a new module named like `faker`, which pytest imports before it reads its arguments".to_owned()
                ),
                (
                    "shop_extras-1.0.dist-info/entry_points.txt".to_owned(),
                    "entry points, which pytest loads plugins from".to_owned()
                ),
                (
                    "vendor/x.egg-info/entry_points.txt".to_owned(),
                    "entry points, which pytest loads plugins from".to_owned()
                ),
            ]
        );
    }

    /// Modules pytest imports before it copies `sys.argv` are refused by name; a module of
    /// the project's own that only shares a stem is not.
    #[test]
    fn modules_pytest_imports_at_start_up_are_not_to_be_shadowed() {
        let diff = Diff {
            files: vec![
                file("iniconfig/__init__.py", FileStatus::Added, &[]),
                file("packaging.py", FileStatus::Added, &[]),
                file("src/pygments.py", FileStatus::Added, &[]),
                file("iniconfig/helpers.py", FileStatus::Added, &[]),
                file("app/iniconfigs.py", FileStatus::Added, &[]),
                file(
                    "lib/json.cpython-311-x86_64-linux-gnu.so",
                    FileStatus::Added,
                    &[],
                ),
                file("lib/jsonlib.so", FileStatus::Added, &[]),
                file("pluggy.py", FileStatus::Modified, &["x = 1"]),
            ],
        };
        let what = |name: &str| {
            format!(
                "a new module named like `{name}`, which pytest imports before it reads its arguments"
            )
        };
        assert_eq!(
            found(&diff, &[]),
            [
                ("iniconfig/__init__.py".to_owned(), what("iniconfig")),
                (
                    "lib/json.cpython-311-x86_64-linux-gnu.so".to_owned(),
                    "a new module named like Python's `json`, which it would replace".to_owned()
                ),
                ("packaging.py".to_owned(), what("packaging")),
                ("src/pygments.py".to_owned(), what("pygments")),
            ]
        );
    }

    /// Installed packages inside the repository and vendored test libraries are the code
    /// that runs and checks the tests: any change to them counts; other vendored code and
    /// folders that only look alike do not.
    #[test]
    fn the_runner_s_own_code_inside_the_repository_is_owned() {
        let diff = Diff {
            files: vec![
                file(
                    "node_modules/jest-circus/build/run.js",
                    FileStatus::Modified,
                    &["x"],
                ),
                file(
                    "web/node_modules/vitest/dist/index.js",
                    FileStatus::Added,
                    &["x"],
                ),
                file(
                    ".venv/lib/python3.11/site-packages/_pytest/runner.py",
                    FileStatus::Modified,
                    &["x"],
                ),
                file(
                    "vendor/github.com/stretchr/testify/assert/assertions.go",
                    FileStatus::Modified,
                    &["x"],
                ),
                file(
                    "third_party/vendor/pretty_assertions-1.4.0/src/lib.rs",
                    FileStatus::Deleted,
                    &[],
                ),
                file(
                    "vendor/github.com/onsi/gomega/v2/matchers.go",
                    FileStatus::Modified,
                    &["x"],
                ),
                file(
                    "vendor/golang.org/x/net/http2/frame.go",
                    FileStatus::Modified,
                    &["x"],
                ),
                file(
                    "vendor/github.com/stretchr/testifyish/a.go",
                    FileStatus::Modified,
                    &["x"],
                ),
                file("docs/node_modules.md", FileStatus::Added, &["x"]),
                file("src/vendor.rs", FileStatus::Modified, &["x"]),
                file(
                    "app/__pycache__/cart.cpython-311.pyc",
                    FileStatus::Added,
                    &[],
                ),
                file("iniconfig.pyc", FileStatus::Added, &[]),
            ],
        };
        let compiled =
            "compiled Python: it runs instead of its source, which is what the change shows";
        let installed = |folder: &str| {
            format!("installed packages (`{folder}/`): the code that runs the tests")
        };
        let library = |name: &str| format!("a vendored test library (`{name}`)");
        assert_eq!(
            found(&diff, &[]),
            [
                (
                    ".venv/lib/python3.11/site-packages/_pytest/runner.py".to_owned(),
                    installed("site-packages")
                ),
                (
                    "app/__pycache__/cart.cpython-311.pyc".to_owned(),
                    compiled.to_owned()
                ),
                ("iniconfig.pyc".to_owned(), compiled.to_owned()),
                (
                    "node_modules/jest-circus/build/run.js".to_owned(),
                    installed("node_modules")
                ),
                (
                    "third_party/vendor/pretty_assertions-1.4.0/src/lib.rs".to_owned(),
                    library("pretty_assertions")
                ),
                (
                    "vendor/github.com/onsi/gomega/v2/matchers.go".to_owned(),
                    library("github.com/onsi/gomega")
                ),
                (
                    "vendor/github.com/stretchr/testify/assert/assertions.go".to_owned(),
                    library("github.com/stretchr/testify")
                ),
                (
                    "web/node_modules/vitest/dist/index.js".to_owned(),
                    installed("node_modules")
                ),
            ]
        );
    }

    /// package.json counts by its runners' keys only: a version bump, a new dependency,
    /// reformatting or reordered keys do not; a jest ignore pattern, a mocha `spec`, a new
    /// AVA key, or a file that is no longer JSON do.
    #[test]
    fn only_the_runners_keys_of_package_json_count() {
        let diff = Diff {
            files: vec![file("package.json", FileStatus::Modified, &[])],
        };
        let base = r#"{"name": "shop", "version": "1.0.0", "jest": {"testEnvironment": "node", "roots": ["<rootDir>"]}}"#;
        let unchanged = [
            r#"{"name": "shop", "version": "1.1.0", "dependencies": {"left-pad": "1"}, "jest": {"testEnvironment": "node", "roots": ["<rootDir>"]}}"#,
            "{\n  \"jest\": {\n    \"roots\": [\"<rootDir>\"],\n    \"testEnvironment\": \"node\"\n  },\n  \"version\": \"1.0.0\",\n  \"name\": \"shop\"\n}\n",
        ];
        for head in unchanged {
            assert!(
                found(&diff, &[("package.json", Some(base), Some(head))]).is_empty(),
                "{head}"
            );
        }
        let hidden = [
            r#"{"name": "shop", "version": "1.0.0", "jest": {"testEnvironment": "node", "roots": ["<rootDir>"], "testPathIgnorePatterns": ["cart"]}}"#,
            r#"{"name": "shop", "version": "1.0.0", "jest": {"testEnvironment": "node", "roots": ["<rootDir>"]}, "mocha": {"spec": "none/*.js"}}"#,
            r#"{"name": "shop", "version": "1.0.0", "jest": {"testEnvironment": "node", "roots": ["<rootDir>"]}, "ava": {"files": []}}"#,
            r#"{"name": "shop", "jest": "#,
        ];
        for head in hidden {
            assert_eq!(
                found(&diff, &[("package.json", Some(base), Some(head))]),
                [(
                    "package.json".to_owned(),
                    "the \"jest\", \"mocha\", \"ava\" or \"babel\" key in package.json".to_owned()
                )],
                "{head}"
            );
        }
        // A new package.json with runner settings counts; one without does not.
        let added = Diff {
            files: vec![file("web/package.json", FileStatus::Added, &[])],
        };
        assert!(
            found(
                &added,
                &[("web/package.json", None, Some(r#"{"name": "web"}"#))]
            )
            .is_empty()
        );
        assert_eq!(
            found(
                &added,
                &[(
                    "web/package.json",
                    None,
                    Some(r#"{"jest": {"setupFiles": ["./x.js"]}}"#)
                )]
            )
            .len(),
            1
        );
    }

    /// Cargo.toml counts by what decides which tests build and how they check; a version
    /// bump, a new dependency, a new feature or reformatting do not.
    #[test]
    fn only_what_decides_cargo_s_tests_counts_in_cargo_toml() {
        let diff = Diff {
            files: vec![file("Cargo.toml", FileStatus::Modified, &[])],
        };
        let base = "[package]\nname = \"shop\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[features]\ndefault = [\"fast\"]\nfast = []\n\n[dependencies]\nserde = \"1\"\n\n[dev-dependencies]\npretty_assertions = \"1\"\n";
        let unchanged = [
            base.replace("0.1.0", "0.2.0"),
            base.replace("serde = \"1\"", "serde = \"1\"\nregex = \"1\""),
            base.replace("fast = []", "fast = []\nslow = []"),
            base.replace("pretty_assertions = \"1\"", "pretty_assertions = \"1.4\""),
            base.replace("edition = \"2021\"\n", "edition   =   \"2021\"\n"),
            format!(
                "{base}\n[profile.release-lto]\ninherits = \"release\"\noverflow-checks = false\n"
            ),
            format!("{base}\n[profile.dev]\ndebug = 1\n"),
            base.replace(
                "pretty_assertions = \"1\"",
                "pretty_assertions = \"1\"\nhelpers = { path = \"helpers\" }",
            ),
        ];
        for head in &unchanged {
            assert!(
                found(&diff, &[("Cargo.toml", Some(base), Some(head))]).is_empty(),
                "{head}"
            );
        }
        // A patch the base had, taken away: the crate comes from its registry again.
        let patched =
            format!("{base}\n[patch.crates-io]\nregex = {{ path = \"/home/a/regex\" }}\n");
        assert!(found(&diff, &[("Cargo.toml", Some(&patched), Some(base))]).is_empty());
        let hiding = [
            base.replace(
                "edition = \"2021\"",
                "edition = \"2021\"\nautotests = false",
            ),
            format!("{base}\n[lib]\ntest = false\n"),
            format!("{base}\n[[test]]\nname = \"cart\"\ntest = false\n"),
            base.replace("default = [\"fast\"]", "default = []"),
            base.replace("default = [\"fast\"]", "default = [\"slow\"]\nslow = []"),
            format!("{base}\n[profile.dev]\ndebug-assertions = false\n"),
            format!("{base}\n[profile.test.package.shop]\noverflow-checks = false\n"),
            format!("{base}\n[profile.dev]\npanic = \"abort\"\n"),
            format!("{base}\n[patch.crates-io]\npretty_assertions = {{ path = \"fake\" }}\n"),
            base.replace(
                "pretty_assertions = \"1\"",
                "pretty_assertions = { path = \"vendor/fake\" }",
            ),
            format!("{base}\n[workspace]\nexclude = [\"cart\"]\n"),
            "[package\nname = ".to_owned(),
        ];
        for head in &hiding {
            assert_eq!(
                found(&diff, &[("Cargo.toml", Some(base), Some(head))]).len(),
                1,
                "{head}"
            );
        }
    }

    /// A new crate's manifest counts only for what a manifest does to the other crates;
    /// a go.mod deleted with its replacements swaps nothing in.
    #[test]
    fn a_new_manifest_counts_by_what_reaches_other_crates() {
        let added = Diff {
            files: vec![file("crates/index/Cargo.toml", FileStatus::Added, &[])],
        };
        let plain = "[package]\nname = \"index\"\n\n[features]\ndefault = [\"fast\"]\nfast = []\n\n[dev-dependencies]\nhelpers = { path = \"../helpers\" }\n";
        assert!(found(&added, &[("crates/index/Cargo.toml", None, Some(plain))]).is_empty());
        let patching =
            format!("{plain}\n[patch.crates-io]\npretty_assertions = {{ path = \"fake\" }}\n");
        assert_eq!(
            found(
                &added,
                &[("crates/index/Cargo.toml", None, Some(&patching))]
            )
            .len(),
            1
        );
        let deleted = Diff {
            files: vec![file("cobra/go.mod", FileStatus::Deleted, &[])],
        };
        let module = "module example.com/cli\n\nreplace example.com/lib => ../\n";
        assert!(found(&deleted, &[("cobra/go.mod", Some(module), None)]).is_empty());
    }

    /// A module inside a package imports under the package's name and replaces nothing:
    /// flask's own `src/flask/json/__init__.py` and `src/flask/logging.py` are not
    /// shadowing; the same names in a folder without `__init__.py` at the head are.
    #[test]
    fn a_module_inside_a_package_shadows_nothing() {
        let diff = Diff {
            files: vec![
                file("src/flask/json/__init__.py", FileStatus::Added, &[]),
                file("src/flask/logging.py", FileStatus::Added, &[]),
                file("tools/logging.py", FileStatus::Added, &[]),
                file("iniconfig/__init__.py", FileStatus::Added, &[]),
            ],
        };
        let package = "";
        assert_eq!(
            found(&diff, &[("src/flask/__init__.py", Some(package), Some(package))]),
            [
                (
                    "iniconfig/__init__.py".to_owned(),
                    "a new module named like `iniconfig`, which pytest imports before it reads its arguments"
                        .to_owned()
                ),
                (
                    "tools/logging.py".to_owned(),
                    "a new module named like Python's `logging`, which it would replace".to_owned()
                ),
            ]
        );
    }

    /// A workspace member added takes no base test along; one removed does.
    #[test]
    fn only_workspace_members_the_base_lists_count() {
        let diff = Diff {
            files: vec![file("Cargo.toml", FileStatus::Modified, &[])],
        };
        let base = "[workspace]\nmembers = [\"a\", \"b\"]\n";
        let added = "[workspace]\nmembers = [\"a\", \"b\", \"c\"]\n";
        let removed = "[workspace]\nmembers = [\"a\"]\n";
        assert!(found(&diff, &[("Cargo.toml", Some(base), Some(added))]).is_empty());
        let package = "[package]\nname = \"a\"\n";
        let into_workspace = "[package]\nname = \"a\"\n\n[workspace]\nmembers = [\"b\"]\n";
        assert!(
            found(
                &diff,
                &[("Cargo.toml", Some(package), Some(into_workspace))]
            )
            .is_empty()
        );
        assert_eq!(
            found(&diff, &[("Cargo.toml", Some(base), Some(removed))]).len(),
            1
        );
    }

    /// Compiled code is found by its bytes whatever its name, and by its name when git
    /// shows no bytes; a deleted one, a text that starts with `MZ` and a binary that is
    /// not code (a PNG) are not.
    #[test]
    fn compiled_code_is_found_by_its_bytes_or_its_name() {
        let binary = |path: &str, status: FileStatus| ChangedFile {
            binary: true,
            ..file(path, status, &[])
        };
        let diff = Diff {
            files: vec![
                binary(
                    "app/_speed.cpython-311-x86_64-linux-gnu.so",
                    FileStatus::Added,
                ),
                binary("app/data.bin", FileStatus::Modified),
                binary("app/logo.png", FileStatus::Added),
                binary("lib/libfast.so.1.2", FileStatus::Added),
                binary("old.so", FileStatus::Deleted),
                file("README.md", FileStatus::Modified, &["MZ is a postcode"]),
                file("pkg/plugin.wasm", FileStatus::Added, &["\0asm\u{1}"]),
                binary("tests/test_cart.py", FileStatus::Modified),
            ],
        };
        let already = [change(
            &diff.files[7],
            InfraKind::File,
            "test_cart.py".to_owned(),
        )];
        let candidates = compiled_candidates(&diff, &already);
        assert_eq!(
            candidates,
            [
                "app/_speed.cpython-311-x86_64-linux-gnu.so",
                "app/data.bin",
                "app/logo.png",
                "lib/libfast.so.1.2",
                "pkg/plugin.wasm",
            ]
        );
        let heads = [
            Some(b"\x7fELF\x02\x01\x01\0".to_vec()),
            Some(b"MZ\x90\0\x03\0".to_vec()),
            Some(b"\x89PNG\r\n\x1a\n\0".to_vec()),
            Some(b"not an object after all\0".to_vec()),
            Some(b"\0asm\x01\0\0\0".to_vec()),
        ];
        let found: Vec<(String, InfraKind, String)> = compiled_code(&diff, &candidates, &heads)
            .into_iter()
            .map(|change| (change.path, change.kind, change.what))
            .collect();
        let what = |format: &str| {
            format!("{format}: no rule reads what compiled code does, and the tests run it")
        };
        assert_eq!(
            found,
            [
                (
                    "app/_speed.cpython-311-x86_64-linux-gnu.so".to_owned(),
                    InfraKind::CompiledCode,
                    what("an ELF object (shared library or executable)")
                ),
                (
                    "app/data.bin".to_owned(),
                    InfraKind::CompiledCode,
                    what("a Windows PE executable or DLL")
                ),
                (
                    "lib/libfast.so.1.2".to_owned(),
                    InfraKind::CompiledCode,
                    what("a shared library")
                ),
                (
                    "pkg/plugin.wasm".to_owned(),
                    InfraKind::CompiledCode,
                    what("a WebAssembly module")
                ),
            ]
        );
        assert_eq!(object_format(b"MZ, a text"), None);
        assert_eq!(compiled_suffix("notes.so.txt"), None);
        assert_eq!(compiled_suffix("Speed.PYD"), Some("a shared library"));
    }

    /// go.mod counts by its replace directives, in either spelling; a new requirement
    /// does not.
    #[test]
    fn only_replace_directives_count_in_go_mod() {
        let diff = Diff {
            files: vec![file("go.mod", FileStatus::Modified, &[])],
        };
        let base =
            "module example.com/shop\n\ngo 1.21\n\nrequire github.com/stretchr/testify v1.9.0\n";
        let required = format!("{base}require golang.org/x/net v0.1.0\n");
        assert!(found(&diff, &[("go.mod", Some(base), Some(&required))]).is_empty());
        for head in [
            format!("{base}\nreplace github.com/stretchr/testify => ./fake\n"),
            format!(
                "{base}\nreplace (\n\tgithub.com/stretchr/testify v1.9.0 => ../fake // local\n)\n"
            ),
        ] {
            assert_eq!(
                found(&diff, &[("go.mod", Some(base), Some(&head))]),
                [(
                    "go.mod".to_owned(),
                    "its replace directives in go.mod".to_owned()
                )],
                "{head}"
            );
        }
        let spaced = "module example.com/shop\n\nreplace   github.com/a/b  =>  ./b\n";
        let block = "module example.com/shop\n\nreplace (\n  github.com/a/b => ./b\n)\n";
        assert!(found(&diff, &[("go.mod", Some(spaced), Some(block))]).is_empty());
    }

    #[test]
    fn a_new_module_under_a_test_folder_named_like_the_code_under_test_shadows_it() {
        let project = project_modules(&[
            "app/cart.py",
            "src/pkg/__init__.py",
            "src/pkg/utils.py",
            "tool.py",
            "tests/test_cart.py",
            "tests/helpers.py",
        ]);
        for name in [
            "app",
            "app.cart",
            "pkg",
            "pkg.utils",
            "src.pkg.utils",
            "tool",
        ] {
            assert!(project.contains(name), "{name}: {project:?}");
        }
        for name in ["cart", "utils", "helpers", "tests.helpers", "test_cart"] {
            assert!(!project.contains(name), "{name}: {project:?}");
        }
        let added = |paths: &[&str]| Diff {
            files: paths
                .iter()
                .map(|path| file(path, FileStatus::Added, &["x = 1"]))
                .collect(),
        };
        let shadowing = |paths: &[&str]| -> Vec<String> {
            project_shadowing(&added(paths), &project, &[])
                .into_iter()
                .map(|c| c.path)
                .collect()
        };
        assert_eq!(
            shadowing(&[
                "tests/app/cart.py",
                "tests/app.py",
                "tests/unit/pkg/utils.py",
                "tests/tool.py"
            ]),
            [
                "tests/app/cart.py",
                "tests/app.py",
                "tests/unit/pkg/utils.py",
                "tests/tool.py"
            ]
        );
        assert_eq!(
            shadowing(&[
                "tests/cart.py",
                "tests/utils.py",
                "tests/test_app.py",
                "app/fast.py",
                "tests/data/app.json"
            ]),
            Vec::<String>::new()
        );
        // Found already (an `__init__.py` under tests is a glob's): said once.
        let init = added(&["tests/app/__init__.py"]);
        let globbed = changes(&default_globs(), &init, |_| Texts {
            base: None,
            head: None,
        });
        assert_eq!(globbed.len(), 1);
        assert!(project_shadowing(&init, &project, &globbed).is_empty());
    }

    #[test]
    fn a_gitlink_s_change_is_a_submodule_change_and_a_file_saying_so_among_other_lines_is_not() {
        let sha = |c: char| format!("Subproject commit {}", c.to_string().repeat(40));
        let with = |removed: &[String], added: &[String]| {
            let lines = |texts: &[String]| {
                texts
                    .iter()
                    .map(|text| Line {
                        number: 1,
                        text: text.clone(),
                    })
                    .collect()
            };
            ChangedFile {
                path: "vendor/lib".to_owned(),
                status: FileStatus::Modified,
                binary: false,
                added: lines(added),
                removed: lines(removed),
            }
        };
        assert_eq!(
            submodule_change(&with(&[sha('a')], &[sha('b')])).as_deref(),
            Some("a submodule moved from aaaaaaaaaaaa to bbbbbbbbbbbb")
        );
        assert_eq!(
            submodule_change(&with(&[], &[sha('c')])).as_deref(),
            Some("a submodule added at cccccccccccc")
        );
        assert_eq!(
            submodule_change(&with(&[sha('d')], &[])).as_deref(),
            Some("a submodule removed (was at dddddddddddd)")
        );
        assert_eq!(
            submodule_change(&with(&[], &[sha('a'), "x = 1".to_owned()])),
            None
        );
        assert_eq!(
            submodule_change(&with(&[], &["Subproject commit main".to_owned()])),
            None
        );
    }

    #[test]
    fn code_outside_the_test_files_that_reaches_into_the_test_framework_at_the_base_is_test_support()
     {
        let go_helper = "package testutil\n\nimport (\n\t\"fmt\"\n\t\"testing\"\n)\n\nfunc Equal(t testing.TB, got, want int) {}\n";
        let py_helper = "import pytest\n\n\ndef check(got, want):\n    pass\n";
        let commented = "# import pytest\n\ndef total(prices):\n    return sum(prices)\n";
        let js_helper = "// shared matchers\nimport { expect } from \"vitest\";\n\nexport function same(a, b) {}\n";
        let diff = Diff {
            files: vec![
                file("internal/testutil/testutil.go", FileStatus::Modified, &[]),
                file("shop/testing.py", FileStatus::Deleted, &[]),
                file("shop/cart.py", FileStatus::Modified, &[]),
                file("b/b.go", FileStatus::Modified, &[]),
                file("src/matchers.js", FileStatus::Modified, &[]),
                file("b/check_test.go", FileStatus::Modified, &[]),
                file("tests/helpers.py", FileStatus::Modified, &[]),
                file("shop/new_testing.py", FileStatus::Added, &[]),
                file("jest.setup.js", FileStatus::Modified, &[]),
                file("README.md", FileStatus::Modified, &[]),
            ],
        };
        let already = changes(&default_globs(), &diff, |_| Texts {
            base: None,
            head: None,
        });
        let candidates = support_candidates(&diff, &already);
        // Test files, runner setup, new files, non-source files and what is found
        // already (`tests/helpers.py`) are not read again.
        assert_eq!(
            candidates,
            [
                "internal/testutil/testutil.go",
                "shop/testing.py",
                "shop/cart.py",
                "b/b.go",
                "src/matchers.js"
            ]
        );
        let texts = [
            Some(go_helper.to_owned()),
            Some(py_helper.to_owned()),
            Some(commented.to_owned()),
            Some("package b\n\nfunc Twice(x int) int { return 2 * x }\n".to_owned()),
            Some(js_helper.to_owned()),
        ];
        let support: Vec<(String, String)> = framework_support(&diff, &candidates, &texts)
            .into_iter()
            .map(|c| {
                assert_eq!(c.kind, InfraKind::TestSupport);
                (c.path, c.what)
            })
            .collect();
        assert_eq!(
            support,
            [
                (
                    "internal/testutil/testutil.go".to_owned(),
                    "test-support code outside the test files: at the base it uses the test framework or a test-only library (line 5: `\"testing\"`)".to_owned()
                ),
                (
                    "shop/testing.py".to_owned(),
                    "test-support code outside the test files: at the base it uses the test framework or a test-only library (line 1: `import pytest`)".to_owned()
                ),
                (
                    "src/matchers.js".to_owned(),
                    "test-support code outside the test files: at the base it uses the test framework or a test-only library (line 2: `from \"vitest\"`)".to_owned()
                ),
            ]
        );
    }

    #[test]
    fn test_only_libraries_and_injected_checks_at_the_base_are_test_support_too() {
        let support_of = |path: &str, text: &str| {
            let diff = Diff {
                files: vec![file(path, FileStatus::Modified, &[])],
            };
            framework_support(&diff, &[path], &[Some(text.to_owned())])
                .into_iter()
                .map(|c| c.what)
                .next()
        };
        let named = [
            (
                "internal/check/check.go",
                "package check\n\nimport \"github.com/stretchr/testify/require\"\n\nfunc Equal(t require.TestingT, got, want int) { require.Equal(t, want, got) }\n",
                "line 3: `import \"github.com/stretchr/testify/require\"`",
            ),
            (
                "shop/strategies.py",
                "\"\"\"Carts for property tests.\"\"\"\nfrom hypothesis import strategies as st\n",
                "line 2: `from hypothesis`",
            ),
            (
                "src/checks.js",
                "export function same(a, b) {\n  expect(a).toEqual(b);\n}\n",
                "line 2: `expect(a).toEqual`",
            ),
            (
                "src/render.tsx",
                "import { render } from \"@testing-library/react\";\n",
                "line 1: `from \"@testing-library/react\"`",
            ),
        ];
        for (path, text, line) in named {
            let what = support_of(path, text).unwrap_or_else(|| panic!("{path} not named"));
            assert!(what.ends_with(&format!("({line})")), "{path}: {what}");
        }
        // What production code uses too is not test support.
        let code = [
            (
                "src/invariants.js",
                "import assert from \"node:assert\";\nassert(x > 0);\n",
            ),
            (
                "server/record.go",
                "package server\n\nimport \"net/http/httptest\"\n",
            ),
            ("shop/cart.py", "from unittest.mock import sentinel\n"),
            (
                "src/expectations.js",
                "const expect = (x) => x;\nexpect(total);\n",
            ),
        ];
        for (path, text) in code {
            assert_eq!(support_of(path, text), None, "{path}");
        }
    }

    #[test]
    fn data_outside_the_test_folders_that_the_base_s_tests_name_is_test_data() {
        let diff = Diff {
            files: vec![
                file("golden/totals.json", FileStatus::Modified, &[]),
                file("golden/rates.csv", FileStatus::Deleted, &[]),
                file("golden/new.json", FileStatus::Added, &[]),
                file("docs/guide.md", FileStatus::Modified, &[]),
                file("assets/logo.svg", FileStatus::Modified, &[]),
                file("tests/data/input.txt", FileStatus::Modified, &[]),
                file("CHANGES.rst", FileStatus::Modified, &[]),
                file("package.json", FileStatus::Modified, &[]),
                file("examples/description", FileStatus::Modified, &[]),
                file("candor.toml", FileStatus::Modified, &[]),
                file("app/cart.py", FileStatus::Modified, &[]),
            ],
        };
        let skip = |path: &str| path == "candor.toml";
        let candidates = data_candidates(&diff, &[], &skip);
        // New files, source code, data under test folders (the fixture lock's), the
        // project's papers, manifests, names without an extension and skipped files are
        // not candidates.
        assert_eq!(
            candidates,
            [
                "golden/totals.json",
                "golden/rates.csv",
                "docs/guide.md",
                "assets/logo.svg"
            ]
        );
        let tests = [
            (
                "tests/conftest.py",
                "RATES = ROOT / \"golden\" / \"rates.csv\"\n",
            ),
            (
                "tests/test_cart.py",
                "# the docs: see guide.md\nurl = \"https://example.com/docs/guide.md\"\nlink = \"github.com/shop/blob/main/assets/logo.svg\"\n\n\ndef test_total():\n    golden = load(\"../golden/totals.json\")\n",
            ),
        ];
        let named: Vec<(String, String)> = test_data(&diff, &candidates, &tests)
            .into_iter()
            .map(|c| {
                assert_eq!(c.kind, InfraKind::TestData);
                (c.path, c.what)
            })
            .collect();
        // A bare word in a comment and names inside URLs are not a test reading the file.
        assert_eq!(
            named,
            [
                (
                    "golden/totals.json".to_owned(),
                    "data the base's tests read, outside the test folders: tests/test_cart.py line 7 names it (`/totals.json\"`)".to_owned()
                ),
                (
                    "golden/rates.csv".to_owned(),
                    "data the base's tests read, outside the test folders: tests/conftest.py line 1 names it (`\"rates.csv\"`)".to_owned()
                ),
            ]
        );
        assert!(names_test_data("tests/conftest.py"));
        assert!(names_test_data("pkg/cart_test.go"));
        assert!(!names_test_data("app/cart.py"));
        assert!(!names_test_data("tests/data/input.txt"));
    }

    #[test]
    fn ci_pipeline_definitions_are_infrastructure_whatever_the_list() {
        let diff = Diff {
            files: vec![
                file(
                    ".github/workflows/merge-lane.yml",
                    FileStatus::Modified,
                    &[],
                ),
                file(".github/actions/setup/action.yml", FileStatus::Added, &[]),
                file(".gitlab-ci.yml", FileStatus::Modified, &[]),
                file("ci/Jenkinsfile", FileStatus::Deleted, &[]),
                file(".circleci/config.yml", FileStatus::Modified, &[]),
                file("docs/workflows.yml", FileStatus::Modified, &[]),
                file(".github/CODEOWNERS", FileStatus::Modified, &[]),
            ],
        };
        let found: Vec<(String, InfraKind)> = changes(&[], &diff, |_| Texts {
            base: None,
            head: None,
        })
        .into_iter()
        .map(|c| (c.path, c.kind))
        .collect();
        assert_eq!(
            found,
            [
                (".circleci/config.yml".to_owned(), InfraKind::CiPipeline),
                (
                    ".github/actions/setup/action.yml".to_owned(),
                    InfraKind::CiPipeline
                ),
                (
                    ".github/workflows/merge-lane.yml".to_owned(),
                    InfraKind::CiPipeline
                ),
                (".gitlab-ci.yml".to_owned(), InfraKind::CiPipeline),
                ("ci/Jenkinsfile".to_owned(), InfraKind::CiPipeline),
            ]
        );
    }
}
