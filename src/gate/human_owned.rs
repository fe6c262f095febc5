//! Human-owned files: the policy the lane reads (candor.toml, the reliability file, the
//! fixture and cassette locks, the oracle module) may change only with a human's approval,
//! and the rerun ledger only by appending. Pure: the base's paths, the diff and the two
//! ledger texts in; what was changed out. The gate decides what approval means.

use std::path::Path;

use serde::Serialize;

use super::diff::{Diff, FileStatus};
use super::files::repository_relative;
use crate::ledger::{FirstDifference, is_append_only};
use crate::policy::Config;
use crate::policy::config::CONFIG_FILE;

/// Why a file is human-owned.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// `candor.toml`: fingerprints, freezes, bans, lane settings.
    Policy,
    /// The reliability file.
    Reliability,
    /// The fixture lock.
    FixtureLock,
    /// The cassette lock.
    CassetteLock,
    /// The oracle module.
    Oracle,
    /// The rerun ledger (appending is allowed).
    Ledger,
}

impl Role {
    /// A short name for messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Policy => "policy",
            Role::Reliability => "reliability file",
            Role::FixtureLock => "fixture lock",
            Role::CassetteLock => "cassette lock",
            Role::Oracle => "oracle module",
            Role::Ledger => "ledger",
        }
    }
}

/// The human-owned paths, as the base's policy names them (repository-relative).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnedPaths {
    /// Each path with its role; the ledger is among them.
    pub files: Vec<(String, Role)>,
}

impl OwnedPaths {
    /// The paths the base's `candor.toml` names. A configured path that leaves the
    /// repository cannot be changed by a diff and is left out.
    pub fn from_config(base: &Config) -> OwnedPaths {
        let mut files = vec![(CONFIG_FILE.to_owned(), Role::Policy)];
        let mut push = |path: &Path, role| {
            if let Some(path) = repository_relative(path) {
                files.push((path, role));
            }
        };
        push(&base.reliability.file, Role::Reliability);
        push(&base.lane.lockfile, Role::FixtureLock);
        push(&base.lane.cassette_lock, Role::CassetteLock);
        if let Some(oracle) = &base.lane.oracle {
            push(oracle, Role::Oracle);
        }
        push(&base.rerun.ledger, Role::Ledger);
        OwnedPaths { files }
    }

    /// The ledger's path.
    pub fn ledger(&self) -> Option<&str> {
        self.files
            .iter()
            .find(|(_, role)| *role == Role::Ledger)
            .map(|(path, _)| path.as_str())
    }
}

/// A human-owned file the change altered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct OwnedChange {
    /// Repository-relative path.
    pub path: String,
    /// What it is.
    pub role: Role,
    /// Added, modified or deleted.
    pub status: FileStatus,
    /// For the ledger: the first line that was changed or removed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ledger_line: Option<LedgerEdit>,
}

/// Where a ledger stops being the old one with lines appended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct LedgerEdit {
    /// 1-based line of the old ledger.
    pub line: usize,
    /// The old line, without its newline.
    pub old: String,
    /// The new line there, `None` when it was removed.
    pub new: Option<String>,
}

impl From<FirstDifference> for LedgerEdit {
    fn from(difference: FirstDifference) -> LedgerEdit {
        let trim = |text: String| text.trim_end_matches(['\n', '\r']).to_owned();
        LedgerEdit {
            line: difference.line,
            old: difference.old.map(trim).unwrap_or_default(),
            new: difference.new.map(trim),
        }
    }
}

/// Every human-owned file the change touches, in `paths` order, except a ledger to which
/// lines were only appended. `base_ledger` and `head_ledger` are the ledger's text at the
/// base and at the change's head (`None` where it does not exist); they are read only when
/// the diff touches the ledger.
pub fn changes(
    paths: &OwnedPaths,
    diff: &Diff,
    base_ledger: Option<&str>,
    head_ledger: Option<&str>,
) -> Vec<OwnedChange> {
    let mut found = Vec::new();
    for (path, role) in &paths.files {
        let Some(file) = diff.file(path) else {
            continue;
        };
        if found
            .iter()
            .any(|change: &OwnedChange| &change.path == path)
        {
            continue;
        }
        let ledger_line = if *role == Role::Ledger {
            match is_append_only(base_ledger.unwrap_or(""), head_ledger.unwrap_or("")) {
                Ok(()) => continue,
                Err(difference) => Some(LedgerEdit::from(difference)),
            }
        } else {
            None
        };
        found.push(OwnedChange {
            path: path.clone(),
            role: *role,
            status: file.status,
            ledger_line,
        });
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::diff::ChangedFile;

    fn diff(files: &[(&str, FileStatus)]) -> Diff {
        Diff {
            files: files
                .iter()
                .map(|(path, status)| ChangedFile {
                    path: (*path).to_owned(),
                    status: *status,
                    binary: false,
                    added: Vec::new(),
                    removed: Vec::new(),
                })
                .collect(),
        }
    }

    fn paths() -> OwnedPaths {
        let config = Config::parse(
            "[lane]\noracle = \"./tests/oracle.py\"\n",
            Path::new("candor.toml"),
        )
        .unwrap();
        OwnedPaths::from_config(&config)
    }

    #[test]
    fn the_base_policy_names_the_owned_files() {
        let paths = paths();
        let names: Vec<_> = paths.files.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(
            names,
            [
                "candor.toml",
                ".ci/test-reliability.yaml",
                "tests/fixtures.lock.json",
                "tests/cassettes.lock.json",
                "tests/oracle.py",
                ".flake-ledger.tsv"
            ]
        );
        assert_eq!(paths.ledger(), Some(".flake-ledger.tsv"));
    }

    #[test]
    fn policy_files_changed_added_or_deleted_are_reported() {
        let change = diff(&[
            ("candor.toml", FileStatus::Modified),
            ("src/app.py", FileStatus::Modified),
            ("tests/fixtures.lock.json", FileStatus::Added),
            ("tests/oracle.py", FileStatus::Deleted),
        ]);
        let found: Vec<_> = changes(&paths(), &change, None, None)
            .into_iter()
            .map(|c| (c.path, c.role, c.status))
            .collect();
        assert_eq!(
            found,
            [
                ("candor.toml".to_owned(), Role::Policy, FileStatus::Modified),
                (
                    "tests/fixtures.lock.json".to_owned(),
                    Role::FixtureLock,
                    FileStatus::Added
                ),
                (
                    "tests/oracle.py".to_owned(),
                    Role::Oracle,
                    FileStatus::Deleted
                ),
            ]
        );
    }

    #[test]
    fn the_ledger_may_grow_but_not_change() {
        let change = diff(&[(".flake-ledger.tsv", FileStatus::Modified)]);
        let base = "# header\nline one\nline two\n";
        assert!(
            changes(
                &paths(),
                &change,
                Some(base),
                Some(&format!("{base}line three\n"))
            )
            .is_empty()
        );
        let edited = changes(&paths(), &change, Some(base), Some("# header\nline two\n"));
        let [edit] = edited.as_slice() else {
            panic!("{edited:?}");
        };
        assert_eq!(edit.role, Role::Ledger);
        assert_eq!(
            edit.ledger_line,
            Some(LedgerEdit {
                line: 2,
                old: "line one".into(),
                new: Some("line two".into())
            })
        );
        let deleted = diff(&[(".flake-ledger.tsv", FileStatus::Deleted)]);
        let gone = changes(&paths(), &deleted, Some(base), None);
        assert_eq!(gone[0].ledger_line.as_ref().map(|e| e.line), Some(1));
        assert_eq!(
            gone[0].ledger_line.as_ref().and_then(|e| e.new.clone()),
            None
        );
        let created = diff(&[(".flake-ledger.tsv", FileStatus::Added)]);
        assert!(changes(&paths(), &created, None, Some("# header\n")).is_empty());
    }
}
