//! Data files under test folders: a test's expectations live in its data as much as in its
//! code, so any data file the change adds or edits under a test folder — not only under
//! `[lane] fixtures` — must be pinned, with its new hash, in the head's fixture lock (whose
//! own change needs a human's approval). Otherwise a change could point the code or a test
//! at a new data file next to the locked ones. Pure: the diff, the owned paths and the
//! hashes come in.

use super::diff::{Diff, FileStatus};
use super::files::{Language, file_name};
use super::locks::Hashes;

/// Folder names that hold tests and what they read.
const TEST_FOLDERS: &[&str] = &[
    "tests",
    "test",
    "testdata",
    "test_data",
    "testing",
    "__tests__",
    "spec",
    "fixtures",
    "__snapshots__",
    "snapshots",
];

/// Whether `path` is a data file in a test folder: not source code, not git's own files.
pub fn is_test_data(path: &str) -> bool {
    let name = file_name(path);
    let stub = std::path::Path::new(name)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("pyi"));
    if Language::of(path).is_some() || name.starts_with(".git") || stub {
        return false;
    }
    in_test_folder(path)
}

/// Whether a folder of `path` (at any depth) is a test folder.
pub fn in_test_folder(path: &str) -> bool {
    let mut folders: Vec<&str> = path.split('/').collect();
    folders.pop();
    folders.iter().any(|folder| TEST_FOLDERS.contains(folder))
}

/// Data files the change added or modified under test folders that the head's fixture
/// lock does not pin with their head hash. `skip` holds what other rules own (the locks,
/// the cassettes folder, the fixtures folder the drift check covers); `head_hash` hashes a
/// file as committed at the head.
pub fn unlocked(
    diff: &Diff,
    skip: &dyn Fn(&str) -> bool,
    locked: &Hashes,
    mut head_hash: impl FnMut(&str) -> Option<String>,
) -> Vec<String> {
    diff.files
        .iter()
        .filter(|file| file.status != FileStatus::Deleted)
        .filter(|file| is_test_data(&file.path) && !skip(&file.path))
        .filter(|file| {
            let hash = head_hash(&file.path);
            hash.is_none() || locked.get(&file.path) != hash.as_ref()
        })
        .map(|file| file.path.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::diff::ChangedFile;

    #[test]
    fn data_in_any_test_folder_must_be_locked_with_its_new_hash() {
        let file = |path: &str, status| ChangedFile {
            path: path.to_owned(),
            status,
            binary: false,
            added: Vec::new(),
            removed: Vec::new(),
        };
        let diff = Diff {
            files: vec![
                file("tests/data/prices_v2.json", FileStatus::Added),
                file("tests/data/locked.csv", FileStatus::Modified),
                file("tests/data/stale.csv", FileStatus::Modified),
                file("tests/test_cart.py", FileStatus::Modified),
                file("tests/cassettes/a.json", FileStatus::Modified),
                file("tests/old.json", FileStatus::Deleted),
                file("app/prices.json", FileStatus::Added),
            ],
        };
        let locked: Hashes = [
            ("tests/data/locked.csv".to_owned(), "new".to_owned()),
            ("tests/data/stale.csv".to_owned(), "old".to_owned()),
        ]
        .into_iter()
        .collect();
        let found = unlocked(
            &diff,
            &|path| path.starts_with("tests/cassettes/"),
            &locked,
            |_| Some("new".to_owned()),
        );
        assert_eq!(found, ["tests/data/prices_v2.json", "tests/data/stale.csv"]);
        assert!(is_test_data("pkg/__snapshots__/view.snap"));
        assert!(!is_test_data("tests/.gitkeep"));
    }
}
