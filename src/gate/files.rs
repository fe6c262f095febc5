//! What a path is, for the lane's rules: the language of a source file (by extension),
//! whether it is a test file (by the naming conventions of each language's runners), and
//! which configuration file it is (pytest, nextest, jest and friends, CI and build files).
//! Pure: decided from the repository-relative path alone.

/// A language candor knows the test marks of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Language {
    /// `.py`
    Python,
    /// `.rs`
    Rust,
    /// `.go`
    Go,
    /// `.js`, `.jsx`, `.mjs`, `.cjs`, `.ts`, `.tsx`, `.mts`, `.cts`
    JavaScript,
    /// `.java`, `.kt`, `.kts`
    Jvm,
    /// `.cs`
    CSharp,
    /// `.rb`
    Ruby,
    /// `.php`
    Php,
}

impl Language {
    /// The language of the file at `path`, by its extension.
    pub fn of(path: &str) -> Option<Language> {
        let extension = file_name(path).rsplit_once('.')?.1;
        Some(match extension {
            "py" => Language::Python,
            "rs" => Language::Rust,
            "go" => Language::Go,
            "js" | "jsx" | "mjs" | "cjs" | "ts" | "tsx" | "mts" | "cts" => Language::JavaScript,
            "java" | "kt" | "kts" => Language::Jvm,
            "cs" => Language::CSharp,
            "rb" => Language::Ruby,
            "php" => Language::Php,
            _ => return None,
        })
    }

    /// Whether `line` is a whole-line comment in this language (leading spaces aside).
    pub fn is_comment(self, line: &str) -> bool {
        let line = line.trim_start();
        match self {
            Language::Python | Language::Ruby => line.starts_with('#'),
            Language::Php => {
                line.starts_with("//")
                    || line.starts_with("/*")
                    || line.starts_with('*')
                    || (line.starts_with('#') && !line.starts_with("#["))
            }
            Language::Rust
            | Language::Go
            | Language::JavaScript
            | Language::Jvm
            | Language::CSharp => {
                line.starts_with("//") || line.starts_with("/*") || line.starts_with('*')
            }
        }
    }
}

/// The last component of a `/`-separated path.
pub fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// The folders a `/`-separated path lies in, outermost first.
fn folders(path: &str) -> impl Iterator<Item = &str> {
    let mut parts: Vec<&str> = path.split('/').collect();
    parts.pop();
    parts.into_iter()
}

/// Whether the file at `path` holds tests, by its runners' conventions: pytest
/// (`test_*.py`, `*_test.py`, `conftest.py`, or any `.py` under a `tests`/`test` folder),
/// go (`*_test.go`), cargo (`.rs` under a `tests` folder), jest/vitest/mocha (`*.test.*`,
/// `*.spec.*`, `__tests__/`, `test`/`tests` folders), JUnit (`src/test/`, `*Test`,
/// `*Tests`, `*IT`), xUnit/NUnit (`*Test.cs`, `*Tests.cs`, a `*Tests` folder), RSpec and
/// minitest (`*_spec.rb`, `*_test.rb`, `spec`/`test` folders), PHPUnit (`*Test.php`, a
/// `tests` folder). Rust unit tests inside `src/` cannot be told from their path and are
/// not test files here.
pub fn is_test_file(path: &str) -> bool {
    let Some(language) = Language::of(path) else {
        return false;
    };
    let name = file_name(path);
    let stem = name.split('.').next().unwrap_or(name);
    let in_folder = |names: &[&str]| folders(path).any(|folder| names.contains(&folder));
    match language {
        Language::Python => {
            stem.starts_with("test_")
                || stem.ends_with("_test")
                || name == "conftest.py"
                || in_folder(&["tests", "test"])
        }
        Language::Go => name.ends_with("_test.go"),
        Language::Rust => in_folder(&["tests"]),
        Language::JavaScript => {
            name.contains(".test.")
                || name.contains(".spec.")
                || in_folder(&["__tests__", "tests", "test"])
        }
        Language::Jvm => {
            path.starts_with("src/test/")
                || path.contains("/src/test/")
                || ["Test", "Tests", "IT"]
                    .iter()
                    .any(|end| stem.ends_with(end))
        }
        Language::CSharp => {
            stem.ends_with("Test")
                || stem.ends_with("Tests")
                || folders(path).any(|folder| folder.ends_with("Tests"))
        }
        Language::Ruby => {
            stem.ends_with("_spec") || stem.ends_with("_test") || in_folder(&["spec", "test"])
        }
        Language::Php => stem.ends_with("Test") || in_folder(&["tests"]),
    }
}

/// Whether the file at `path` runs inside the runner on purpose without being a test file
/// the lane replays: a runner's setup file (`jest.setup.*`, `vitest.setup.*`,
/// `setupTests.*`, `test-setup.*` and their kin, Python's `sitecustomize.py` and
/// `usercustomize.py`), or a TypeScript declaration file, which runs nothing. Not code
/// under test.
pub fn is_runner_setup(path: &str) -> bool {
    let name = file_name(path);
    let lower = name.to_ascii_lowercase();
    [
        "jest.setup.",
        "jest-setup.",
        "vitest.setup.",
        "vitest-setup.",
        "setuptests.",
        "setup-tests.",
        "test-setup.",
        "testsetup.",
    ]
    .iter()
    .any(|start| lower.starts_with(start))
        || matches!(name, "sitecustomize.py" | "usercustomize.py")
        || [".d.ts", ".d.mts", ".d.cts"]
            .iter()
            .any(|end| lower.ends_with(end))
}

/// unittest's and Django's test modules (`tests.py`, `test.py`, `*_tests.py`), which
/// pytest does not collect by default, so the lane does not replay them as tests. They
/// import `unittest` by design; every other rule on code under test reads them.
pub fn is_unittest_module(path: &str) -> bool {
    file_name(path)
        .strip_suffix(".py")
        .is_some_and(|stem| stem == "tests" || stem == "test" || stem.ends_with("_tests"))
}

/// A file whose added lines may turn retries on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ConfigKind {
    /// Python dependencies: `requirements*.txt`, `constraints*.txt`, `Pipfile`,
    /// `environment.yml`, `setup.py`.
    PythonDependencies,
    /// Files that hold pytest settings and dependencies: `pyproject.toml`, `setup.cfg`,
    /// `tox.ini`.
    PythonProject,
    /// `pytest.ini`, where every key is pytest's.
    PytestIni,
    /// `.config/nextest.toml` (any `nextest.toml`).
    Nextest,
    /// jest, vitest, vite, playwright, cypress, mocha, karma, WebdriverIO, AVA, Protractor,
    /// Nightwatch and Web Test Runner configuration files.
    JsTestConfig,
    /// `package.json`.
    PackageJson,
    /// Files that run commands: Makefiles, justfiles, shell scripts, Dockerfiles, CI
    /// pipelines (GitHub Actions, GitLab, CircleCI, Azure, Buildkite, Jenkins), `noxfile.py`.
    Commands,
}

/// What kind of configuration the file at `path` is, if any.
pub fn config_kind(path: &str) -> Option<ConfigKind> {
    let name = file_name(path);
    let lower = name.to_ascii_lowercase();
    let extension = lower
        .rsplit_once('.')
        .map_or("", |(_, extension)| extension);
    let yaml = matches!(extension, "yml" | "yaml");
    let in_folder = |folder: &str| path.starts_with(folder) || path.contains(&format!("/{folder}"));
    let requirements = extension == "txt"
        && (lower.starts_with("requirements")
            || lower.starts_with("constraints")
            || path.contains("requirements/"));
    let kind = if requirements
        || matches!(
            lower.as_str(),
            "pipfile" | "setup.py" | "environment.yml" | "environment.yaml"
        ) {
        ConfigKind::PythonDependencies
    } else if matches!(lower.as_str(), "pyproject.toml" | "setup.cfg" | "tox.ini") {
        ConfigKind::PythonProject
    } else if lower == "pytest.ini" || lower == ".pytest.ini" {
        ConfigKind::PytestIni
    } else if lower == "nextest.toml" {
        ConfigKind::Nextest
    } else if [
        "jest.config.",
        "vitest.config.",
        "vitest.workspace.",
        "vite.config.",
        "playwright.config.",
        "cypress.config.",
        ".mocharc",
        "karma.",
        "wdio.",
        "ava.config.",
        "protractor.",
        "nightwatch.",
        "web-test-runner.config.",
    ]
    .iter()
    .any(|start| lower.starts_with(start))
    {
        ConfigKind::JsTestConfig
    } else if lower == "package.json" {
        ConfigKind::PackageJson
    } else if matches!(
        lower.as_str(),
        "makefile"
            | "gnumakefile"
            | "justfile"
            | ".justfile"
            | "dockerfile"
            | "jenkinsfile"
            | "noxfile.py"
            | ".gitlab-ci.yml"
            | "azure-pipelines.yml"
            | "bitbucket-pipelines.yml"
            | "taskfile.yml"
    ) || matches!(extension, "mk" | "sh" | "bash")
        || yaml
            && (in_folder(".github/workflows/")
                || in_folder(".circleci/")
                || in_folder(".buildkite/")
                || in_folder(".gitlab/"))
    {
        ConfigKind::Commands
    } else {
        return None;
    };
    Some(kind)
}

/// `path` relative to the repository root, `/`-separated, without `./`, as git prints it;
/// `None` for a path that leaves the repository.
pub fn repository_relative(path: &std::path::Path) -> Option<String> {
    use std::path::Component;
    let mut parts = Vec::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => parts.push(part.to_string_lossy().into_owned()),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    (!parts.is_empty()).then(|| parts.join("/"))
}

/// Whether `path` is `folder` itself or lies under it (both repository-relative).
pub fn is_under(path: &str, folder: &str) -> bool {
    path.strip_prefix(folder)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_by_extension() {
        assert_eq!(Language::of("a/b/test_x.py"), Some(Language::Python));
        assert_eq!(Language::of("web/x.test.tsx"), Some(Language::JavaScript));
        assert_eq!(Language::of("Makefile"), None);
        assert_eq!(Language::of(".py"), Some(Language::Python));
        assert_eq!(Language::of("x.pyc"), None);
    }

    #[test]
    fn test_files_by_convention() {
        for path in [
            "tests/test_a.py",
            "pkg/a_test.py",
            "deep/conftest.py",
            "tests/helpers/util.py",
            "pkg/x_test.go",
            "tests/cli.rs",
            "crates/c/tests/a.rs",
            "web/a.test.ts",
            "web/__tests__/a.js",
            "src/test/java/a/FooTest.java",
            "app/FooTests.kt",
            "Proj.Tests/Foo.cs",
            "spec/models/user_spec.rb",
            "tests/Unit/FooTest.php",
        ] {
            assert!(is_test_file(path), "{path}");
        }
        for path in [
            "src/app.py",
            "pkg/x.go",
            "src/lib.rs",
            "web/a.ts",
            "src/main/java/Foo.java",
            "README.md",
            "tests/data.json",
            "contest.py",
        ] {
            assert!(!is_test_file(path), "{path}");
        }
    }

    #[test]
    fn config_kinds() {
        assert_eq!(
            config_kind("requirements-dev.txt"),
            Some(ConfigKind::PythonDependencies)
        );
        assert_eq!(
            config_kind("requirements/ci.txt"),
            Some(ConfigKind::PythonDependencies)
        );
        assert_eq!(
            config_kind("pyproject.toml"),
            Some(ConfigKind::PythonProject)
        );
        assert_eq!(config_kind("pytest.ini"), Some(ConfigKind::PytestIni));
        assert_eq!(
            config_kind(".config/nextest.toml"),
            Some(ConfigKind::Nextest)
        );
        assert_eq!(
            config_kind("web/jest.config.ts"),
            Some(ConfigKind::JsTestConfig)
        );
        assert_eq!(config_kind(".mocharc.yml"), Some(ConfigKind::JsTestConfig));
        for runner in [
            "karma.conf.js",
            "karma.sauce.conf.js",
            "wdio.conf.ts",
            "ava.config.mjs",
            "protractor.conf.js",
            "nightwatch.conf.cjs",
            "web-test-runner.config.mjs",
        ] {
            assert_eq!(
                config_kind(runner),
                Some(ConfigKind::JsTestConfig),
                "{runner}"
            );
        }
        assert_eq!(
            config_kind("web/package.json"),
            Some(ConfigKind::PackageJson)
        );
        assert_eq!(
            config_kind(".github/workflows/ci.yml"),
            Some(ConfigKind::Commands)
        );
        assert_eq!(config_kind("Makefile"), Some(ConfigKind::Commands));
        assert_eq!(config_kind("scripts/ci.sh"), Some(ConfigKind::Commands));
        assert_eq!(config_kind("docs/ci.yml"), None);
        assert_eq!(config_kind("src/app.py"), None);
    }

    #[test]
    fn repository_paths() {
        use std::path::Path;
        assert_eq!(
            repository_relative(Path::new("./a//b/c")).as_deref(),
            Some("a/b/c")
        );
        assert_eq!(repository_relative(Path::new("../a")), None);
        assert_eq!(repository_relative(Path::new("/a")), None);
        assert_eq!(repository_relative(Path::new(".")), None);
        assert!(is_under("tests/fixtures/a.json", "tests/fixtures"));
        assert!(is_under("tests/fixtures", "tests/fixtures"));
        assert!(!is_under("tests/fixtures2/a", "tests/fixtures"));
    }
}
