//! Each side runs its own code (`compare`, `repro`): a Python project's source roots, put
//! first on `PYTHONPATH` for a side's runs so that an editable install of another checkout
//! cannot stand in for them; the pytest plugin that lists what a run imported; and the
//! check that no failure's frame and no imported module of a run lies in another side's
//! tree (docs/compare.md, "Each side runs its own code").
//!
//! Source roots, in this order, each kept only when it is a folder inside the tree: `src`,
//! pyproject's `[tool.setuptools] package-dir` (`""` key, or a package mapped to a folder
//! of its own name), `[tool.setuptools.packages.find] where`, `[tool.poetry] packages`'
//! `from`, `[tool.hatch.build.targets.wheel] packages`' parents, `[tool.pdm.build]
//! package-dir`, setup.cfg's `[options] package_dir` and `[options.packages.find] where`,
//! pytest's `pythonpath` ini option (pyproject, pytest.ini, tox.ini, setup.cfg), then the
//! tree's root.

use std::path::{Component, Path, PathBuf};

use crate::results::Execution;

/// The pytest plugin's module name; the plugin is written into the run's scratch folder.
pub const PROBE_MODULE: &str = "candor_isolation_probe";

/// The variable naming the folder the probe writes its lists into.
pub const PROBE_DIR_VARIABLE: &str = "CANDOR_ISOLATION_PROBE_DIR";

/// The probe: when the session ends (in every xdist worker too), the file of every
/// imported module, one per line, into a file of its own process.
pub const PROBE_SOURCE: &str = r#""""candor's isolation probe: lists the files of the modules this pytest process imported."""
import os
import sys


def pytest_sessionfinish(session, exitstatus):
    folder = os.environ.get("CANDOR_ISOLATION_PROBE_DIR")
    if not folder:
        return
    lines = []
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if isinstance(path, str):
            lines.append(name + "\t" + os.path.abspath(path))
    with open(os.path.join(folder, "imports-%d.tsv" % os.getpid()), "w", encoding="utf-8", errors="surrogateescape") as out:
        out.write("\n".join(lines) + "\n")
"#;

/// Which tree is this run's own, and which trees it must not use code from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Isolation {
    /// The side's tree (absolute).
    pub own: PathBuf,
    /// The other sides' trees (absolute). One may hold another (the merge base's worktree
    /// lives under the repository): a path belongs to the deepest tree that holds it.
    pub foreign: Vec<PathBuf>,
    /// cargo's target folder for this side (`CARGO_TARGET_DIR`), when it must not share
    /// the configured one: cargo names a workspace member's artifacts without its path
    /// and trusts their age, so two checkouts sharing one target folder run each other's
    /// test binaries.
    pub cargo_target: Option<PathBuf>,
}

/// Code of another side that a run used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Crossing {
    /// The run's own tree.
    pub own: PathBuf,
    /// The file, absolute.
    pub file: PathBuf,
    /// Where candor saw it: "a frame of the failure of `t`" or "the imported module `m`".
    pub seen_as: String,
}

impl Isolation {
    /// An isolation with the trees made absolute and canonical where they exist, so that
    /// symbolic links in temporary folders do not hide a crossing.
    pub fn new(own: &Path, foreign: &[PathBuf]) -> Self {
        Isolation {
            own: canonical(own),
            foreign: foreign.iter().map(|f| canonical(f)).collect(),
            cargo_target: None,
        }
    }

    /// Whether `path` (absolute, or relative to the own tree) lies in a foreign tree, and
    /// not in a deeper own tree inside it. Installed code (a `site-packages`,
    /// `dist-packages` or `node_modules` folder, a virtualenv inside a tree) belongs to no
    /// side: Python and Node look for it in the repository's folders from either side.
    pub fn is_foreign(&self, path: &Path) -> bool {
        let absolute = normalize(&self.own.join(path));
        if absolute.components().any(|c| {
            matches!(
                c.as_os_str().to_str(),
                Some("site-packages" | "dist-packages" | "node_modules")
            )
        }) {
            return false;
        }
        let depth = |root: &Path| {
            absolute
                .starts_with(root)
                .then(|| root.components().count())
        };
        let own = depth(&self.own);
        let foreign = self.foreign.iter().filter_map(|root| depth(root)).max();
        match (own, foreign) {
            (_, None) => false,
            (None, Some(_)) => true,
            (Some(own), Some(foreign)) => foreign > own,
        }
    }

    /// The first frame of a failure that lies in a foreign tree.
    pub fn check_frames(&self, executions: &[Execution]) -> Result<(), Crossing> {
        for execution in executions {
            let Some(failure) = &execution.failure else {
                continue;
            };
            let frames = failure.frames.iter().chain(&failure.failing_frame);
            for frame in frames {
                if self.is_foreign(Path::new(&frame.file)) {
                    return Err(Crossing {
                        own: self.own.clone(),
                        file: normalize(&self.own.join(&frame.file)),
                        seen_as: format!(
                            "a frame ({}) of the failure of `{}`",
                            frame.location(),
                            execution.test_id
                        ),
                    });
                }
            }
        }
        Ok(())
    }

    /// The first imported module that lies in a foreign tree, or one of the side's own
    /// packages (`own_packages`) imported from anywhere but the side's tree (a stale
    /// install). `listing` is the probe's `name\tpath` lines.
    pub fn check_imports(&self, listing: &str, own_packages: &[String]) -> Result<(), Crossing> {
        for line in listing.lines() {
            let Some((name, file)) = line.split_once('\t') else {
                continue;
            };
            // The probe itself lives in candor's scratch folder, wherever that is.
            if name == PROBE_MODULE {
                continue;
            }
            let path = Path::new(file);
            let top = name.split('.').next().unwrap_or(name);
            let stray =
                own_packages.iter().any(|p| p == top) && !normalize(path).starts_with(&self.own);
            if self.is_foreign(path) || stray {
                return Err(Crossing {
                    own: self.own.clone(),
                    file: normalize(path),
                    seen_as: format!("the imported module `{name}`"),
                });
            }
        }
        Ok(())
    }
}

fn canonical(path: &Path) -> PathBuf {
    fs_err::canonicalize(path).unwrap_or_else(|_| normalize(path))
}

/// `a/./b/../c` → `a/c`, without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The folders a Python project's own code is imported from, absolute, first match first
/// (see the module documentation). `read` returns a file's text relative to the root, or
/// `None` when there is none.
pub fn python_source_roots(root: &Path, read: &dyn Fn(&str) -> Option<String>) -> Vec<PathBuf> {
    let mut relative: Vec<String> = vec!["src".to_owned()];
    if let Some(text) = read("pyproject.toml")
        && let Ok(pyproject) = text.parse::<toml::Table>()
    {
        relative.extend(pyproject_roots(&pyproject));
    }
    if let Some(text) = read("setup.cfg") {
        let section = ini_section(&text, "options");
        if let Some(value) = ini_value(&section, "package_dir") {
            for entry in value.split(['\n', ',']) {
                if let Some((name, dir)) = entry.split_once('=')
                    && name.trim().is_empty()
                {
                    relative.push(dir.trim().to_owned());
                }
            }
        }
        let find = ini_section(&text, "options.packages.find");
        if let Some(value) = ini_value(&find, "where") {
            relative.extend(value.split_whitespace().map(str::to_owned));
        }
        let pytest = ini_section(&text, "tool:pytest");
        if let Some(value) = ini_value(&pytest, "pythonpath") {
            relative.extend(value.split_whitespace().map(str::to_owned));
        }
    }
    for file in ["pytest.ini", "tox.ini"] {
        if let Some(text) = read(file) {
            let pytest = ini_section(&text, "pytest");
            if let Some(value) = ini_value(&pytest, "pythonpath") {
                relative.extend(value.split_whitespace().map(str::to_owned));
            }
        }
    }
    relative.push(".".to_owned());
    let mut roots: Vec<PathBuf> = Vec::new();
    for dir in relative {
        let path = Path::new(dir.trim());
        // Only folders of this tree: a root outside it is not this side's code.
        if path.is_absolute() || path.components().any(|c| matches!(c, Component::ParentDir)) {
            continue;
        }
        let absolute = normalize(&root.join(path));
        if absolute.is_dir() && !roots.contains(&absolute) {
            roots.push(absolute);
        }
    }
    roots
}

fn pyproject_roots(pyproject: &toml::Table) -> Vec<String> {
    let get = |path: &[&str]| {
        let mut value: Option<&toml::Value> = None;
        for (i, key) in path.iter().enumerate() {
            value = if i == 0 {
                pyproject.get(*key)
            } else {
                value?.get(*key)
            };
        }
        value
    };
    let strings = |value: Option<&toml::Value>| -> Vec<String> {
        match value {
            Some(toml::Value::String(s)) => vec![s.clone()],
            Some(toml::Value::Array(items)) => items
                .iter()
                .filter_map(|i| i.as_str().map(str::to_owned))
                .collect(),
            _ => Vec::new(),
        }
    };
    let mut roots = Vec::new();
    if let Some(dirs) = get(&["tool", "setuptools", "package-dir"]).and_then(|v| v.as_table()) {
        for (name, dir) in dirs {
            let Some(dir) = dir.as_str() else { continue };
            if name.is_empty() {
                roots.push(dir.to_owned());
            } else if let Some((parent, last)) = dir.rsplit_once('/')
                && last == name
            {
                roots.push(parent.to_owned());
            }
        }
    }
    roots.extend(strings(get(&[
        "tool",
        "setuptools",
        "packages",
        "find",
        "where",
    ])));
    if let Some(packages) = get(&["tool", "poetry", "packages"]).and_then(|v| v.as_array()) {
        roots.extend(
            packages
                .iter()
                .filter_map(|p| p.get("from")?.as_str().map(str::to_owned)),
        );
    }
    for package in strings(get(&[
        "tool", "hatch", "build", "targets", "wheel", "packages",
    ])) {
        if let Some((parent, _)) = package.trim_end_matches('/').rsplit_once('/') {
            roots.push(parent.to_owned());
        }
    }
    roots.extend(strings(get(&["tool", "pdm", "build", "package-dir"])));
    roots.extend(strings(get(&[
        "tool",
        "pytest",
        "ini_options",
        "pythonpath",
    ])));
    roots
}

/// The lines of one `[name]` section of an ini file (pytest's and setuptools' flavour:
/// `key = value`, indented continuation lines, `#` and `;` comments).
fn ini_section(text: &str, name: &str) -> Vec<String> {
    let mut inside = false;
    let mut lines = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') && trimmed.ends_with(']') {
            inside = trimmed[1..trimmed.len() - 1].trim() == name;
            continue;
        }
        if inside && !trimmed.starts_with('#') && !trimmed.starts_with(';') {
            lines.push(line.to_owned());
        }
    }
    lines
}

/// A key's value in a section, continuation lines joined by newlines.
fn ini_value(section: &[String], key: &str) -> Option<String> {
    let mut value: Option<String> = None;
    for line in section {
        let continued = line.starts_with([' ', '\t']);
        match &mut value {
            Some(v) if continued => {
                v.push('\n');
                v.push_str(line.trim());
            }
            Some(_) => break,
            None if !continued => {
                if let Some((k, v)) = line.split_once(['=', ':'])
                    && k.trim() == key
                {
                    value = Some(v.trim().to_owned());
                }
            }
            None => {}
        }
    }
    value
}

/// The top-level packages (folders with `__init__.py`) and, outside the tree's root,
/// modules (`x.py`) under the source roots: the names a run must import from its own tree.
pub fn python_packages(root: &Path, source_roots: &[PathBuf]) -> Vec<String> {
    let mut names = Vec::new();
    for source in source_roots {
        let Ok(entries) = fs_err::read_dir(source) else {
            continue;
        };
        let at_root = normalize(source) == normalize(root);
        for entry in entries.flatten() {
            let path = entry.path();
            let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
                continue;
            };
            let package = path.join("__init__.py").is_file();
            // Python imports `x.py` only under that exact spelling.
            let module = !at_root && path.is_file() && path.extension() == Some("py".as_ref());
            let name = name.strip_suffix(".py").unwrap_or(name);
            let identifier = !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit());
            // Test folders and conftest are imported from wherever pytest collects them,
            // which is always the side's own tree.
            let tests = matches!(name, "tests" | "test" | "testing" | "conftest");
            if (package || module) && identifier && !tests && !names.iter().any(|n| n == name) {
                names.push(name.to_owned());
            }
        }
    }
    names.sort();
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::{Failure, Frame, Outcome};

    fn isolation() -> Isolation {
        Isolation {
            own: PathBuf::from("/r/.candor/worktrees/base"),
            foreign: vec![PathBuf::from("/r")],
            cargo_target: None,
        }
    }

    #[test]
    fn a_path_belongs_to_the_deepest_tree_that_holds_it() {
        let base = isolation();
        assert!(base.is_foreign(Path::new("/r/src/pkg/mod.py")));
        assert!(base.is_foreign(Path::new("../../../src/pkg/mod.py")));
        assert!(!base.is_foreign(Path::new("src/pkg/mod.py")));
        assert!(!base.is_foreign(Path::new("/r/.candor/worktrees/base/src/pkg/mod.py")));
        assert!(!base.is_foreign(Path::new("/usr/lib/python3/json/__init__.py")));
        assert!(!base.is_foreign(Path::new(
            "/r/.venv/lib/python3.11/site-packages/_pytest/main.py"
        )));
        assert!(!base.is_foreign(Path::new("/r/node_modules/jest/build/index.js")));
        let branch = Isolation {
            own: PathBuf::from("/r"),
            foreign: vec![PathBuf::from("/r/.candor/worktrees/base")],
            cargo_target: None,
        };
        assert!(branch.is_foreign(Path::new(".candor/worktrees/base/src/m.py")));
        assert!(!branch.is_foreign(Path::new("src/m.py")));
    }

    #[test]
    fn frames_and_imports_from_the_other_tree_are_crossings() {
        let mut red = Execution::new("tests/test_a.py::test_a", Outcome::Fail);
        red.failure = Some(Box::new(Failure {
            exception: None,
            message: String::new(),
            text: String::new(),
            frames: vec![
                Frame {
                    file: "tests/test_a.py".into(),
                    line: Some(3),
                    function: None,
                },
                Frame {
                    file: "/r/src/pkg/__init__.py".into(),
                    line: Some(2),
                    function: None,
                },
            ],
            failing_frame: None,
        }));
        let crossing = isolation().check_frames(&[red]).err();
        assert_eq!(
            crossing.map(|c| c.file),
            Some(PathBuf::from("/r/src/pkg/__init__.py"))
        );
        let listing = "json\t/usr/lib/python3.11/json/__init__.py\npkg\t/r/src/pkg/__init__.py\n";
        assert!(isolation().check_imports(listing, &[]).is_err());
        let own = "pkg\t/r/.candor/worktrees/base/src/pkg/__init__.py\n";
        assert!(isolation().check_imports(own, &["pkg".into()]).is_ok());
        let stale = "pkg\t/venv/lib/python3.11/site-packages/pkg/__init__.py\n";
        assert!(isolation().check_imports(stale, &["pkg".into()]).is_err());
        assert!(isolation().check_imports(stale, &[]).is_ok());
    }

    #[test]
    fn source_roots_from_the_usual_configurations() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path();
        for folder in ["src", "lib", "python", "extra"] {
            fs_err::create_dir_all(root.join(folder)).unwrap_or_else(|e| panic!("{e}"));
        }
        let files = |name: &str| -> Option<String> {
            match name {
                "pyproject.toml" => Some(
                    "[tool.setuptools]\npackage-dir = {\"\" = \"lib\"}\n[tool.pytest.ini_options]\npythonpath = [\"extra\", \"../outside\"]\n".into(),
                ),
                "setup.cfg" => Some("[options.packages.find]\nwhere =\n    python\n".into()),
                _ => None,
            }
        };
        let roots = python_source_roots(root, &files);
        let names: Vec<String> = roots
            .iter()
            .map(|r| {
                r.strip_prefix(root)
                    .map(|p| p.display().to_string())
                    .unwrap_or_default()
            })
            .collect();
        assert_eq!(names, vec!["src", "lib", "extra", "python", ""]);
    }

    #[test]
    fn ini_values_with_continuation_lines() {
        let text =
            "[tool:pytest]\naddopts = -q\n[options]\npackage_dir =\n    =src\nzip_safe = false\n";
        let section = ini_section(text, "options");
        assert_eq!(
            ini_value(&section, "package_dir").as_deref(),
            Some("\n=src")
        );
        assert_eq!(ini_value(&section, "zip_safe").as_deref(), Some("false"));
        assert_eq!(ini_value(&section, "addopts"), None);
    }
}
