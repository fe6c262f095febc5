//! The remembered answer of pytest's plugin probe (`pytest -VV`) for `candor test`: the
//! probe starts a whole pytest (every plugin imported) before every suite run, which on a
//! suite of a few seconds is most of candor's own time. The answer is kept in
//! `.candor/cache/pytest-probe.json` with what it depends on, and used only while all of
//! that is unchanged. The merge lane never reads it (a file in the work tree is the
//! agent's to write).

use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use serde::{Deserialize, Serialize};

use crate::env_vars::EnvVars;

/// The cache file, under the repository root.
pub const CACHE_FILE: &str = ".candor/cache/pytest-probe.json";

/// What the probe's answer depends on, besides the directories its output names: which
/// Python and which plugins the prefix reaches, and what pytest is told to load.
const ENVIRONMENT: &[&str] = &[
    EnvVars::PATH,
    EnvVars::VIRTUAL_ENV,
    EnvVars::CONDA_PREFIX,
    EnvVars::PYENV_VERSION,
    EnvVars::PYTHONHOME,
    EnvVars::PYTHONPATH,
    EnvVars::PYTHONUSERBASE,
    EnvVars::PYTHONNOUSERSITE,
    EnvVars::PYTEST_PLUGINS,
    EnvVars::PYTEST_ADDOPTS,
    EnvVars::PYTEST_DISABLE_PLUGIN_AUTOLOAD,
];

/// Files in the repository root that can change the Python a prefix starts (a pyenv or
/// uv version file, a lock) or the plugins pytest loads (`-p` in `addopts`).
const ROOT_FILES: &[&str] = &[
    ".python-version",
    "pyproject.toml",
    "pytest.ini",
    "setup.cfg",
    "tox.ini",
    "uv.lock",
];

/// The cache file's content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Entry {
    key: Key,
    /// `pytest -VV`'s output.
    versions: String,
}

/// Everything the answer depends on, as observed when it was probed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Key {
    prefix: Vec<String>,
    environment: Vec<(String, Option<String>)>,
    /// Modification times (nanoseconds since the epoch; `None`: missing) of the root files
    /// and of the package folders the output names: installing, upgrading or removing a
    /// distribution adds or removes entries there, which changes the folder's time.
    stamps: Vec<(PathBuf, Option<u128>)>,
}

/// The remembered `pytest -VV` output for `prefix` in `root`, when nothing it depends on
/// changed since; `None` when there is none, it cannot be read, or anything changed.
pub fn lookup(root: &Path, prefix: &[String]) -> Option<String> {
    let text = std::fs::read(root.join(CACHE_FILE)).ok()?;
    let entry: Entry = serde_json::from_slice(&text).ok()?;
    (entry.key == key(root, prefix, &entry.versions)).then_some(entry.versions)
}

/// Remembers `versions` for `prefix` in `root`. A cache that cannot be written costs the
/// probe again next time, nothing else, so failures are ignored; the file is replaced
/// whole (written aside, then renamed), never left half-written.
pub fn store(root: &Path, prefix: &[String], versions: &str) {
    let entry = Entry {
        key: key(root, prefix, versions),
        versions: versions.to_owned(),
    };
    let path = root.join(CACHE_FILE);
    let Some(folder) = path.parent() else {
        return;
    };
    let Ok(json) = serde_json::to_vec(&entry) else {
        return;
    };
    if std::fs::create_dir_all(folder).is_err() {
        return;
    }
    let Ok(mut file) = tempfile::NamedTempFile::new_in(folder) else {
        return;
    };
    if std::io::Write::write_all(&mut file, &json).is_ok() {
        let _ = file.persist(&path);
    }
}

/// Forgets the remembered answer (the run it gave was refused).
pub fn forget(root: &Path) {
    let _ = std::fs::remove_file(root.join(CACHE_FILE));
}

fn key(root: &Path, prefix: &[String], versions: &str) -> Key {
    let environment = ENVIRONMENT
        .iter()
        .map(|name| ((*name).to_owned(), std::env::var(name).ok()))
        .collect();
    let mut paths: Vec<PathBuf> = ROOT_FILES.iter().map(|name| root.join(name)).collect();
    for folder in package_folders(versions) {
        if !paths.contains(&folder) {
            paths.push(folder);
        }
    }
    let stamps = paths
        .into_iter()
        .map(|path| {
            let stamp = std::fs::metadata(&path)
                .and_then(|metadata| metadata.modified())
                .ok()
                .and_then(|time| time.duration_since(UNIX_EPOCH).ok())
                .map(|since| since.as_nanos());
            (path, stamp)
        })
        .collect();
    Key {
        prefix: prefix.to_vec(),
        environment,
        stamps,
    }
}

/// The folders distributions are installed in, from the absolute paths `pytest -VV`
/// prints (`imported from /…/site-packages/pytest/__init__.py`, `plugin-1.0 at /…`): the
/// nearest `site-packages` or `dist-packages` above each, else the file's own folder.
fn package_folders(versions: &str) -> Vec<PathBuf> {
    let mut folders: Vec<PathBuf> = Vec::new();
    for line in versions.lines() {
        let Some(start) = line.find(" from /").or_else(|| line.find(" at /")) else {
            continue;
        };
        let rest = &line[start..];
        let Some(slash) = rest.find('/') else {
            continue;
        };
        let file = Path::new(rest[slash..].trim());
        let folder = file
            .ancestors()
            .find(|ancestor| {
                ancestor
                    .file_name()
                    .is_some_and(|name| name == "site-packages" || name == "dist-packages")
            })
            .or_else(|| file.parent())
            .map(Path::to_path_buf);
        if let Some(folder) = folder
            && !folders.contains(&folder)
        {
            folders.push(folder);
        }
    }
    folders
}

#[cfg(test)]
mod tests {
    use super::*;

    const VERSIONS: &str = "This is pytest version 9.2.0, imported from /py/lib/python3.11/site-packages/pytest/__init__.py\nregistered third-party plugins:\n  pytest-randomly-5.1.0 at /py/lib/python3.11/site-packages/pytest_randomly/__init__.py\n  local-1.0 at /work/plugins/local_plugin.py\n";

    #[test]
    fn the_folders_distributions_live_in_are_read_from_the_probe_output() {
        assert_eq!(
            package_folders(VERSIONS),
            [
                PathBuf::from("/py/lib/python3.11/site-packages"),
                PathBuf::from("/work/plugins"),
            ]
        );
    }

    fn prefix() -> Vec<String> {
        vec!["python3".to_owned(), "-m".to_owned(), "pytest".to_owned()]
    }

    /// A site-packages of the temp dir's own, so that "installing" can be simulated.
    fn versions_in(site: &Path) -> String {
        format!(
            "This is pytest version 9.2.0, imported from {}/pytest/__init__.py\nregistered third-party plugins:\n  pytest-randomly-5.1.0 at {}/pytest_randomly/__init__.py\n",
            site.display(),
            site.display()
        )
    }

    #[test]
    fn a_stored_answer_is_found_while_nothing_changes() {
        let root = tempfile::tempdir().expect("temp dir");
        let site = root.path().join("venv/lib/site-packages");
        std::fs::create_dir_all(&site).expect("mkdir");
        let versions = versions_in(&site);
        assert_eq!(lookup(root.path(), &prefix()), None);
        store(root.path(), &prefix(), &versions);
        assert_eq!(lookup(root.path(), &prefix()), Some(versions.clone()));
        // Another prefix is another Python.
        assert_eq!(
            lookup(root.path(), &["uv".to_owned(), "run".to_owned()]),
            None
        );
        forget(root.path());
        assert_eq!(lookup(root.path(), &prefix()), None);
    }

    #[test]
    fn installing_or_removing_a_distribution_or_editing_the_configuration_forgets_it() {
        let root = tempfile::tempdir().expect("temp dir");
        let site = root.path().join("venv/lib/site-packages");
        std::fs::create_dir_all(&site).expect("mkdir");
        let versions = versions_in(&site);
        let changes: [&dyn Fn(); 3] = [
            &|| std::fs::create_dir(site.join("pytest_repeat-0.9.4.dist-info")).expect("mkdir"),
            &|| std::fs::remove_dir(site.join("pytest_repeat-0.9.4.dist-info")).expect("rmdir"),
            &|| {
                std::fs::write(
                    root.path().join("pytest.ini"),
                    "[pytest]\naddopts = -p no:randomly\n",
                )
                .expect("write");
            },
        ];
        for (number, change) in changes.iter().enumerate() {
            store(root.path(), &prefix(), &versions);
            assert!(lookup(root.path(), &prefix()).is_some(), "change {number}");
            // Folder times are as coarse as the file system's clock; a new time is
            // set explicitly after the change instead of waiting for the clock to move.
            change();
            let later =
                std::time::SystemTime::now() + std::time::Duration::from_secs(number as u64 + 1);
            for path in [site.clone(), root.path().join("pytest.ini")] {
                if let Ok(file) = std::fs::File::open(&path) {
                    file.set_modified(later).expect("set the time");
                }
            }
            assert_eq!(lookup(root.path(), &prefix()), None, "change {number}");
        }
    }

    #[test]
    fn a_damaged_cache_file_is_no_answer() {
        let root = tempfile::tempdir().expect("temp dir");
        let path = root.path().join(CACHE_FILE);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, "{\"key\": ").expect("write");
        assert_eq!(lookup(root.path(), &prefix()), None);
    }
}
