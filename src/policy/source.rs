//! Where policy is read from: the work tree, or a commit (the merge base) through
//! `git show`, so that a change cannot pardon its own failure by editing candor.toml, the
//! fingerprints, the reliability file's tiers, the freezes or the ledger's past lines. A
//! [`PolicySource`] yields a [`Policy`] (all four read the same way, the reliability file
//! and the ledger at the paths the source's own candor.toml names); [`differences`] says,
//! key by key, where the work tree's policy departs from it; [`with_appended`] adds the
//! work tree's new ledger lines to the base's, since reruns are appended there.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::git::{Git, GitError};
use crate::ledger::{Ledger, LedgerError};
use crate::reliability::{FileError, ReliabilityFile};
use crate::stats::tiers::Tier;

use super::config::{CONFIG_FILE, DEFAULT_CONFIG};
use super::{Config, ConfigError};

/// Where a policy is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PolicySource {
    /// Files as they are in the work tree at this root.
    WorkTree {
        /// The repository root (the current directory outside a repository).
        root: PathBuf,
    },
    /// Files as committed: `git show COMMIT:path` in the repository at `root`.
    Commit {
        /// The repository root.
        root: PathBuf,
        /// The commit, a full sha.
        commit: String,
    },
}

/// The policy a red test is judged under, read from one source.
#[derive(Debug, Clone)]
pub struct Policy {
    /// `candor.toml` (the defaults when the source has none).
    pub config: Config,
    /// Its text, `None` when the source has no candor.toml.
    pub config_text: Option<String>,
    /// The reliability file at `config.reliability.file` (empty when absent).
    pub reliability: ReliabilityFile,
    /// The ledger at `config.rerun.ledger` (empty when absent).
    pub ledger: Ledger,
}

/// Why a policy could not be read.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// candor.toml is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The reliability file is invalid.
    #[error(transparent)]
    Reliability(#[from] FileError),
    /// The ledger is damaged.
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// git could not show a file.
    #[error(transparent)]
    Git(#[from] GitError),
    /// A configured path is not a path inside the repository.
    #[error("{} is not a path inside the repository", path.display())]
    Outside {
        /// The path.
        path: PathBuf,
    },
    /// A file that must be text is not UTF-8.
    #[error("{} is not UTF-8 text", path.display())]
    NotText {
        /// The file as shown (`abc1234:candor.toml`).
        path: PathBuf,
    },
    /// A policy file is committed as a symlink.
    #[error("{} is a symlink: candor reads committed policy files only as regular files", path.display())]
    Symlink {
        /// The file as shown (`abc1234:.flake-ledger.tsv`).
        path: PathBuf,
    },
    /// A work-tree file could not be read.
    #[error("could not read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

impl PolicyError {
    /// What to do about it.
    pub fn hint(&self) -> String {
        match self {
            PolicyError::Config(error) => error.hint(),
            PolicyError::Reliability(error) => error.hint().to_owned(),
            PolicyError::Ledger(error) => error.hint().to_owned(),
            PolicyError::Git(_) => {
                "check that the merge base exists in this clone (fetch the base branch, or deepen a shallow clone)".to_owned()
            }
            PolicyError::Outside { .. } => {
                "give the path relative to the repository root, without `..`".to_owned()
            }
            PolicyError::Symlink { .. } => {
                "commit the file itself in place of the symlink; a symlink could point candor's reads and writes out of the repository".to_owned()
            }
            PolicyError::NotText { .. } | PolicyError::Read { .. } => {
                "check the file; policy files are UTF-8 text".to_owned()
            }
        }
    }
}

impl PolicySource {
    /// The repository root.
    pub fn root(&self) -> &Path {
        match self {
            PolicySource::WorkTree { root } | PolicySource::Commit { root, .. } => root,
        }
    }

    /// `the merge base abc1234def56`, `the work tree`: for messages.
    pub fn describe(&self) -> String {
        match self {
            PolicySource::WorkTree { .. } => "the work tree".to_owned(),
            PolicySource::Commit { commit, .. } => format!("commit {}", short(commit)),
        }
    }

    /// How a file of this source is named in messages: `abc1234def56:candor.toml` for a
    /// commit, the path in the work tree otherwise.
    pub fn shown(&self, path: &str) -> PathBuf {
        match self {
            PolicySource::WorkTree { root } => root.join(path),
            PolicySource::Commit { commit, .. } => {
                PathBuf::from(format!("{}:{path}", short(commit)))
            }
        }
    }

    /// The text of `path` (repository-relative), `None` when the source has no such file.
    pub fn read(&self, path: &str) -> Result<Option<String>, PolicyError> {
        let bytes = match self {
            PolicySource::WorkTree { root } => match std::fs::read(root.join(path)) {
                Ok(bytes) => bytes,
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                Err(source) => {
                    return Err(PolicyError::Read {
                        path: root.join(path),
                        source,
                    });
                }
            },
            PolicySource::Commit { root, commit } => {
                let git = Git::new(root);
                match git.tree_entry(commit, path)? {
                    None => return Ok(None),
                    // The blob of a symlink is its target's name, not the policy.
                    Some(entry) if entry.mode == "120000" => {
                        return Err(PolicyError::Symlink {
                            path: self.shown(path),
                        });
                    }
                    Some(_) => match git.show(commit, path)? {
                        Some(bytes) => bytes,
                        None => return Ok(None),
                    },
                }
            }
        };
        String::from_utf8(bytes)
            .map(Some)
            .map_err(|_| PolicyError::NotText {
                path: self.shown(path),
            })
    }

    /// candor.toml, the reliability file and the ledger, as this source has them.
    pub fn load(&self) -> Result<Policy, PolicyError> {
        let config_text = self.read(CONFIG_FILE)?;
        let config = match &config_text {
            Some(text) => Config::parse(text, &self.shown(CONFIG_FILE))?,
            None => Config::default(),
        };
        let reliability_path = relative(&config.reliability.file)?;
        let reliability = match self.read(&reliability_path)? {
            Some(text) => ReliabilityFile::parse(&text, &self.shown(&reliability_path))?,
            None => ReliabilityFile::default(),
        };
        let ledger_path = relative(&config.rerun.ledger)?;
        let ledger = match self.read(&ledger_path)? {
            Some(text) => Ledger::parse(&text, &self.shown(&ledger_path))?,
            None => Ledger::default(),
        };
        Ok(Policy {
            config,
            config_text,
            reliability,
            ledger,
        })
    }
}

fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

/// A configured path as git spells it: `/`-separated, repository-relative.
fn relative(path: &Path) -> Result<String, PolicyError> {
    crate::gate::files::repository_relative(path).ok_or_else(|| PolicyError::Outside {
        path: path.to_owned(),
    })
}

/// The base's ledger with the lines the work tree's ledger adds: reruns append to the
/// work tree's file, and every one of them counts; a base line the work tree dropped still
/// counts too (the base's past is not the change's to rewrite). Lines are matched by their
/// exact text, as many times as they occur.
pub fn with_appended(base: &Ledger, work: &Ledger) -> Ledger {
    let mut unmatched: HashMap<&str, usize> = HashMap::new();
    for line in &base.lines {
        *unmatched.entry(line.text.as_str()).or_default() += 1;
    }
    let mut merged = base.clone();
    for line in &work.lines {
        match unmatched.get_mut(line.text.as_str()) {
            Some(count) if *count > 0 => *count -= 1,
            _ => merged.lines.push(line.clone()),
        }
    }
    merged
}

/// How many of the base's ledger lines the work tree's ledger lacks.
pub fn dropped_lines(base: &Ledger, work: &Ledger) -> usize {
    let mut present: HashMap<&str, usize> = HashMap::new();
    for line in &work.lines {
        *present.entry(line.text.as_str()).or_default() += 1;
    }
    base.lines
        .iter()
        .filter(|line| match present.get_mut(line.text.as_str()) {
            Some(count) if *count > 0 => {
                *count -= 1;
                false
            }
            _ => true,
        })
        .count()
}

/// Where `work` departs from `base`, one line per key: `[rerun] budget_entries 3 → 10`,
/// `fingerprint FP-009 added`, `fingerprint FP-001 changed: message_regex`, `tier of
/// tests/x.py::t: probation → trusted`, `ledger: 2 lines of the base are missing`. Keys
/// are compared with every default filled in, so spelling out a default is no difference.
pub fn differences(base: &Policy, work: &Policy) -> Vec<String> {
    let mut found = config_differences(base.config_text.as_deref(), work.config_text.as_deref());
    found.extend(tier_differences(&base.reliability, &work.reliability));
    let dropped = dropped_lines(&base.ledger, &work.ledger);
    if dropped > 0 {
        found.push(format!(
            "ledger: {dropped} {} of the base {} missing from the work tree (they still count)",
            if dropped == 1 { "line" } else { "lines" },
            if dropped == 1 { "is" } else { "are" },
        ));
    }
    found
}

/// Tables of arrays, keyed by the field that names each entry.
const KEYED_ARRAYS: [(&str, &str); 3] = [("fingerprint", "id"), ("freeze", "test"), ("ban", "id")];

fn config_differences(base: Option<&str>, work: Option<&str>) -> Vec<String> {
    let base = effective(base);
    let work = effective(work);
    let mut found = Vec::new();
    let keys: std::collections::BTreeSet<&String> =
        base.scalars.keys().chain(work.scalars.keys()).collect();
    for key in keys {
        let (old, new) = (base.scalars.get(key), work.scalars.get(key));
        if old != new {
            let (section, name) = key.split_once('.').unwrap_or(("", key));
            let show =
                |value: Option<&String>| value.cloned().unwrap_or_else(|| "(unset)".to_owned());
            found.push(format!("[{section}] {name} {} → {}", show(old), show(new)));
        }
    }
    for (array, _) in KEYED_ARRAYS {
        let empty = BTreeMap::new();
        let old = base.arrays.get(array).unwrap_or(&empty);
        let new = work.arrays.get(array).unwrap_or(&empty);
        for (name, fields) in new {
            match old.get(name) {
                None => found.push(format!("{array} {name} added")),
                Some(before) if before != fields => {
                    let mut changed: Vec<&str> = fields
                        .keys()
                        .chain(before.keys())
                        .filter(|field| fields.get(*field) != before.get(*field))
                        .map(String::as_str)
                        .collect();
                    changed.sort_unstable();
                    changed.dedup();
                    found.push(format!("{array} {name} changed: {}", changed.join(", ")));
                }
                Some(_) => {}
            }
        }
        for name in old.keys().filter(|name| !new.contains_key(*name)) {
            found.push(format!("{array} {name} removed"));
        }
    }
    found
}

/// A candor.toml flattened: `section.key` → value for plain tables (the defaults filled
/// in), and keyed arrays of tables as name → field → value.
#[derive(Default)]
struct Flat {
    scalars: BTreeMap<String, String>,
    arrays: BTreeMap<String, BTreeMap<String, BTreeMap<String, String>>>,
}

fn effective(text: Option<&str>) -> Flat {
    let mut flat = Flat::default();
    for (is_default, source) in [(true, Some(DEFAULT_CONFIG)), (false, text)] {
        let Some(source) = source else { continue };
        let Ok(table) = toml::from_str::<toml::Table>(source) else {
            // An invalid file is reported by loading it; here it differs as a whole.
            flat.scalars
                .insert("candor.toml".to_owned(), "(invalid)".to_owned());
            continue;
        };
        for (section, value) in table {
            if let Some((_, id_field)) = KEYED_ARRAYS.iter().find(|(name, _)| *name == section) {
                if is_default {
                    continue;
                }
                let entries = flat.arrays.entry(section.clone()).or_default();
                for (index, entry) in value.as_array().into_iter().flatten().enumerate() {
                    let Some(entry) = entry.as_table() else {
                        continue;
                    };
                    let name = entry
                        .get(*id_field)
                        .and_then(toml::Value::as_str)
                        .map_or_else(|| format!("#{}", index + 1), str::to_owned);
                    let fields = entry
                        .iter()
                        .map(|(k, v)| (k.clone(), v.to_string()))
                        .collect();
                    entries.insert(name, fields);
                }
            } else if let Some(keys) = value.as_table() {
                for (key, value) in keys {
                    flat.scalars
                        .insert(format!("{section}.{key}"), value.to_string());
                }
            } else {
                flat.scalars.insert(section.clone(), value.to_string());
            }
        }
    }
    flat
}

fn tier_differences(base: &ReliabilityFile, work: &ReliabilityFile) -> Vec<String> {
    let tiers = |file: &ReliabilityFile| -> BTreeMap<String, Tier> {
        file.tests.iter().map(|t| (t.id.clone(), t.tier)).collect()
    };
    let (old, new) = (tiers(base), tiers(work));
    let mut found = Vec::new();
    let ids: std::collections::BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    for id in ids {
        let show = |tier: Option<&Tier>| tier.map_or("unlisted", |t| t.as_str());
        let (before, after) = (old.get(id), new.get(id));
        if before != after {
            let mut line = String::new();
            let _ = write!(line, "tier of {id}: {} → {}", show(before), show(after));
            found.push(line);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(toml: &str) -> Policy {
        Policy {
            config: Config::parse(toml, Path::new("candor.toml")).unwrap(),
            config_text: Some(toml.to_owned()),
            reliability: ReliabilityFile::default(),
            ledger: Ledger::default(),
        }
    }

    const FP: &str = "[[fingerprint]]\nid = \"FP-009\"\ntest = \"t\"\nexception = \"E\"\nmessage_regex = \"m\"\nframe = \"a.py:1\"\nconditions = {}\nlast_seen = 2026-10-01\nowner = \"o\"\n";

    #[test]
    fn an_added_fingerprint_and_a_raised_budget_are_named() {
        let base = policy("");
        let work = policy(&format!("[rerun]\nbudget_entries = 10\n{FP}"));
        assert_eq!(
            differences(&base, &work),
            ["[rerun] budget_entries 3 → 10", "fingerprint FP-009 added"]
        );
        assert_eq!(
            differences(&work, &base),
            [
                "[rerun] budget_entries 10 → 3",
                "fingerprint FP-009 removed"
            ]
        );
    }

    #[test]
    fn spelling_out_a_default_is_no_difference() {
        assert!(differences(&policy(""), &policy("[rerun]\nbudget_entries = 3\n")).is_empty());
        assert!(differences(&policy(FP), &policy(FP)).is_empty());
    }

    #[test]
    fn a_changed_fingerprint_names_its_fields() {
        let work = FP.replace("message_regex = \"m\"", "message_regex = \".*\"");
        assert_eq!(
            differences(&policy(FP), &policy(&work)),
            ["fingerprint FP-009 changed: message_regex"]
        );
    }

    #[test]
    fn tiers_and_dropped_ledger_lines_are_named() {
        let mut base = policy("");
        let mut work = policy("");
        base.reliability =
            ReliabilityFile::parse("tests:\n  - id: a\n    tier: probation\n", Path::new("r"))
                .unwrap();
        work.reliability = ReliabilityFile::parse(
            "tests:\n  - id: a\n    tier: trusted\n  - id: b\n    tier: quarantined\n",
            Path::new("r"),
        )
        .unwrap();
        let line = "2026-10-06\ta41f9c2\tt\tFP-001\taaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\t-\t4\t2\tpass\n";
        base.ledger = Ledger::parse(
            &format!("{}\n{line}", crate::ledger::HEADER),
            Path::new("l"),
        )
        .unwrap();
        assert_eq!(
            differences(&base, &work),
            [
                "tier of a: probation → trusted",
                "tier of b: unlisted → quarantined",
                "ledger: 1 line of the base is missing from the work tree (they still count)",
            ]
        );
    }

    #[test]
    fn appended_lines_join_the_base_and_dropped_ones_stay() {
        let header = crate::ledger::HEADER;
        let one = "2026-10-06\ta41f9c2\tt\tFP-001\taaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\t-\t4\t1\tpending\n";
        let two = "2026-10-07\ta41f9c2\tt\tFP-001\taaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\t-\t4\t2\tpending\n";
        let base = Ledger::parse(&format!("{header}\n{one}{one}"), Path::new("b")).unwrap();
        let work = Ledger::parse(&format!("{header}\n{one}{two}"), Path::new("w")).unwrap();
        let merged = with_appended(&base, &work);
        let texts: Vec<&str> = merged.lines.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, [one.trim_end(), one.trim_end(), two.trim_end()]);
        assert_eq!(dropped_lines(&base, &work), 1);
    }
}
