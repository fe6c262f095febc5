//! The merge lane's building blocks: the change read from git (`diff`), the rules on its
//! added lines (`rules`, `oracle`), the fixture and cassette locks (`locks`, `cassettes`),
//! human-owned files and the ledger (`human_owned`), freezes over time (`freeze`, with
//! `skips` telling whether a test is still skipped). Each submodule is pure; the functions
//! here are the edge that reads git and hands the pure parts their input. Policy is always
//! the base's (`git show BASE:candor.toml`), never the change's. Which tests the change
//! touched is `touched`; the lane's verdict and `score-report.json` are `lane`. docs/gate.md
//! describes the rules and formats.

pub mod base_skips;
pub mod cassettes;
pub mod data;
pub mod diff;
pub mod equality;
pub mod files;
pub mod freeze;
pub mod go_base;
pub mod go_vanished;
pub mod human_owned;
pub mod infrastructure;
pub mod js_base;
pub mod lane;
pub mod locks;
pub mod oracle;
pub mod pytest_files;
pub mod receipts;
pub mod rules;
pub mod rust_base;
pub mod rust_doctests;
pub mod skips;
pub mod tamper;
pub mod touched;

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use crate::file_hashes::Hashes;
use crate::git::{GitError, Repository, TreeFile};
use crate::policy::config::CONFIG_FILE;
use crate::policy::{Config, ConfigError, LaneConfig};

use self::cassettes::{CassetteError, CassetteLock, Loss};
use self::diff::{Diff, DiffError};
use self::human_owned::{OwnedChange, OwnedPaths};
use self::locks::{Drift, FixtureLock, LockError};
use self::oracle::{Oracle, OracleError};
use self::rules::Finding;

/// What stops a gate step from deciding anything.
#[derive(Debug, thiserror::Error)]
pub enum GateError {
    /// git failed.
    #[error(transparent)]
    Git(#[from] GitError),
    /// git's diff could not be read.
    #[error(transparent)]
    Diff(#[from] DiffError),
    /// The base's candor.toml is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A lock file is invalid.
    #[error(transparent)]
    Lock(#[from] LockError),
    /// The oracle module cannot be read.
    #[error(transparent)]
    Oracle(#[from] OracleError),
    /// The base's policy names an oracle module the base does not have.
    #[error("the oracle module {path} named by candor.toml does not exist at {revision}")]
    OracleMissing {
        /// The configured path.
        path: String,
        /// The base.
        revision: String,
    },
    /// A file that must be text is not UTF-8.
    #[error("{path} at {revision} is not UTF-8 text")]
    NotText {
        /// The file.
        path: String,
        /// Where it was read.
        revision: String,
    },
    /// A configured path leaves the repository.
    #[error("{} is not a path inside the repository", path.display())]
    OutsideRepository {
        /// The path.
        path: PathBuf,
    },
}

impl GateError {
    /// What to do about it.
    pub fn hint(&self) -> Option<String> {
        match self {
            GateError::Git(_) => Some("check that both commits exist in this clone (fetch the base branch, or deepen a shallow clone)".into()),
            GateError::Diff(_) => Some("this is a bug in candor's reading of git's diff; please report it with the diff".into()),
            GateError::Config(error) => Some(format!(
                "{} (the lane reads the policy of the base commit, so fix it there first)",
                error.hint()
            )),
            GateError::Lock(error) => Some(error.hint().to_owned()),
            GateError::Oracle(_) | GateError::OracleMissing { .. } => Some(
                "point [lane] oracle at a Python module of check functions, or set fail_on_missing_oracle = false".into(),
            ),
            GateError::NotText { .. } => None,
            GateError::OutsideRepository { .. } => {
                Some("give [lane] paths relative to the repository root".into())
            }
        }
    }
}

/// A short form of a revision for file names in messages (`abc1234:candor.toml`).
fn short(revision: &str) -> &str {
    revision.get(..12).unwrap_or(revision)
}

fn text(bytes: Vec<u8>, path: &str, revision: &str) -> Result<String, GateError> {
    String::from_utf8(bytes).map_err(|_| GateError::NotText {
        path: path.to_owned(),
        revision: revision.to_owned(),
    })
}

/// The repository-relative spelling of a configured path.
pub fn repo_path(path: &Path) -> Result<String, GateError> {
    files::repository_relative(path).ok_or_else(|| GateError::OutsideRepository {
        path: path.to_owned(),
    })
}

/// The policy at `base`: its `candor.toml` (the defaults when it has none). Errors name
/// the file as `BASE:candor.toml`.
pub fn base_policy(git: &dyn Repository, base: &str) -> Result<Config, GateError> {
    match git.show(base, CONFIG_FILE)? {
        None => Ok(Config::default()),
        Some(bytes) => {
            let shown = format!("{}:{CONFIG_FILE}", short(base));
            let source = text(bytes, CONFIG_FILE, base)?;
            Ok(Config::parse(&source, Path::new(&shown))?)
        }
    }
}

/// Which Python files hold tests at `base`: pytest's defaults and the `python_files` of
/// the base's pytest configuration at the repository's root (one read of git for all of
/// [`pytest_files::CONFIG_FILES`]). A configuration file that is not UTF-8 is passed over,
/// as pytest would fail on it before collecting anything.
pub fn python_test_files(
    git: &dyn Repository,
    base: &str,
) -> Result<pytest_files::PythonTestFiles, GateError> {
    let texts: Vec<Option<String>> = git
        .show_many(base, &pytest_files::CONFIG_FILES)?
        .into_iter()
        .map(|bytes| bytes.and_then(|bytes| String::from_utf8(bytes).ok()))
        .collect();
    Ok(pytest_files::PythonTestFiles::from_configs(&texts))
}

/// The change from `base` to `head`, parsed.
///
/// git calls a file binary, and shows none of its lines, when its bytes hold a NUL or
/// when the repository's `.gitattributes` says so (`-diff`, `binary`, a diff driver): a
/// file the change itself can mark. So a file git called binary is read again as text
/// when it is a source file (a JavaScript file may hold a NUL in a comment, a Python
/// module be Latin-1) or when neither side has a NUL in its first 8,000 bytes, git's
/// own test of content: then only the attributes made it binary.
pub fn read_change(git: &dyn Repository, base: &str, head: &str) -> Result<Diff, GateError> {
    let mut change = diff::parse(&git.diff_unified(base, head)?)?;
    let called_binary: Vec<&str> = change
        .files
        .iter()
        .filter(|file| file.binary)
        .map(|file| file.path.as_str())
        .collect();
    if called_binary.is_empty() {
        return Ok(change);
    }
    let has_nul = |blob: &Option<Vec<u8>>| {
        blob.as_ref()
            .is_some_and(|b| b[..b.len().min(8000)].contains(&0))
    };
    let (at_base, at_head) = (
        git.show_many(base, &called_binary)?,
        git.show_many(head, &called_binary)?,
    );
    let text: Vec<String> = called_binary
        .iter()
        .zip(at_base.iter().zip(&at_head))
        .filter(|(path, (before, after))| {
            files::Language::of(path).is_some() || !(has_nul(before) || has_nul(after))
        })
        .map(|(path, _)| (*path).to_owned())
        .collect();
    if text.is_empty() {
        return Ok(change);
    }
    let paths: Vec<&str> = text.iter().map(String::as_str).collect();
    let again = diff::parse(&git.diff_unified_text(base, head, &paths)?)?;
    for file in again.files {
        if let Some(slot) = change.files.iter_mut().find(|f| f.path == file.path) {
            *slot = diff::ChangedFile {
                binary: false,
                ..file
            };
        }
    }
    Ok(change)
}

/// The oracle module at `base`, when the base's policy names one.
pub fn base_oracle(
    git: &dyn Repository,
    base: &str,
    lane: &LaneConfig,
) -> Result<Option<Oracle>, GateError> {
    let Some(path) = &lane.oracle else {
        return Ok(None);
    };
    let path = repo_path(path)?;
    let bytes = git
        .show(base, &path)?
        .ok_or_else(|| GateError::OracleMissing {
            path: path.clone(),
            revision: base.to_owned(),
        })?;
    let source = text(bytes, &path, base)?;
    Ok(Some(Oracle::parse(&path, &source)?))
}

/// The diff rules (`candor lint diff`): the built-in marks and retry settings, the base's
/// bans and presets, and, with `fail_on_missing_oracle`, the oracle rule; sorted by file
/// and line.
pub fn lint(
    git: &dyn Repository,
    base: &str,
    head: &str,
    diff: &Diff,
    policy: &Config,
    test_files: &pytest_files::PythonTestFiles,
) -> Result<Vec<Finding>, GateError> {
    let mut findings = rules::check(diff, &policy.bans, &policy.lane.presets, test_files);
    findings.extend(comparisons_that_cannot_fail(git, head, diff)?);
    if policy.lane.fail_on_missing_oracle
        && let Some(oracle) = base_oracle(git, base, &policy.lane)?
    {
        findings.extend(oracle::missing_calls(&oracle, diff));
    }
    findings.sort_by(|a, b| (a.file.as_str(), a.line).cmp(&(b.file.as_str(), b.line)));
    Ok(findings)
}

/// `gate::equality` on each file of code under test the change added lines to, read
/// whole at the head: a comparison method's body is judged with its signature, whichever
/// of their lines the change wrote.
fn comparisons_that_cannot_fail(
    git: &dyn Repository,
    head: &str,
    diff: &Diff,
) -> Result<Vec<Finding>, GateError> {
    let files: Vec<&diff::ChangedFile> = diff
        .files
        .iter()
        .filter(|file| {
            !file.binary
                && file.status != diff::FileStatus::Deleted
                && !file.added.is_empty()
                && equality::applies_to(&file.path)
        })
        .collect();
    let paths: Vec<&str> = files.iter().map(|file| file.path.as_str()).collect();
    let texts = git.show_many(head, &paths)?;
    let mut findings = Vec::new();
    for (file, text) in files.iter().zip(texts) {
        let Some(text) = text else {
            continue;
        };
        let added: BTreeSet<usize> = file.added.iter().map(|line| line.number).collect();
        findings.extend(equality::check(
            &file.path,
            &String::from_utf8_lossy(&text),
            &added,
        ));
    }
    Ok(findings)
}

/// What the lane reads of the base and the head besides the diff and the policy: the
/// fixture lock and the fixtures (head), the cassettes (both ends) and their lock (head),
/// and the test files the change added or modified (both ends). Each end is listed in one
/// `ls-tree -r` and every blob is read in one `cat-file --batch` (issue #15: one listing
/// and one read per step before, nine git processes where three do). The files and their
/// absence mean exactly what [`Repository::show`] and [`Repository::tree_files`] say of
/// them one by one: a symlink is its target's path, a folder or a missing path no file.
pub struct LaneFiles {
    head: String,
    lockfile: String,
    fixtures: String,
    cassettes: String,
    cassette_lock: String,
    at_base: Vec<TreeFile>,
    at_head: Vec<TreeFile>,
    /// Blobs by object id: every file the checks parse.
    bytes: HashMap<String, Vec<u8>>,
    /// The fixtures' sha256 by object id: hashed as they are read, never kept whole.
    hashes: HashMap<String, String>,
}

/// Which end of the change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The merge base.
    Base,
    /// The change's head.
    Head,
}

impl LaneFiles {
    /// Lists and reads what the lane's checks need at `base` and `head` under the base's
    /// `lane` paths, with `tests` (each test file, and whether the base may have it).
    pub fn read(
        git: &dyn Repository,
        base: &str,
        head: &str,
        lane: &LaneConfig,
        tests: &[(&str, bool)],
    ) -> Result<LaneFiles, GateError> {
        let lockfile = repo_path(&lane.lockfile)?;
        let fixtures = repo_path(&lane.fixtures)?;
        let cassettes = repo_path(&lane.cassettes)?;
        let cassette_lock = repo_path(&lane.cassette_lock)?;
        let mut head_paths = vec![
            lockfile.as_str(),
            fixtures.as_str(),
            cassettes.as_str(),
            cassette_lock.as_str(),
        ];
        head_paths.extend(tests.iter().map(|(path, _)| *path));
        let mut base_paths = vec![cassettes.as_str()];
        base_paths.extend(tests.iter().filter(|(_, old)| *old).map(|(path, _)| *path));
        let at_head = git.tree_paths(head, &head_paths)?;
        let at_base = git.tree_paths(base, &base_paths)?;
        let mut files = LaneFiles {
            head: head.to_owned(),
            lockfile,
            fixtures,
            cassettes,
            cassette_lock,
            at_base,
            at_head,
            bytes: HashMap::new(),
            hashes: HashMap::new(),
        };
        let is_named = |file: &TreeFile, named: &[&str]| named.contains(&file.path.as_str());
        let head_named = [files.lockfile.as_str(), files.cassette_lock.as_str()];
        let test_paths: Vec<&str> = tests.iter().map(|(path, _)| *path).collect();
        let mut whole: BTreeSet<&str> = BTreeSet::new();
        let mut to_hash: BTreeSet<&str> = BTreeSet::new();
        for file in &files.at_head {
            if is_named(file, &head_named)
                || is_named(file, &test_paths)
                || cassettes::is_cassette_file(&file.path, &files.cassettes)
            {
                whole.insert(&file.oid);
            }
            if files::is_under(&file.path, &files.fixtures) && file.path != files.fixtures {
                to_hash.insert(&file.oid);
            }
        }
        for file in &files.at_base {
            if is_named(file, &test_paths)
                || cassettes::is_cassette_file(&file.path, &files.cassettes)
            {
                whole.insert(&file.oid);
            }
        }
        let oids: Vec<String> = whole.union(&to_hash).map(|oid| (*oid).to_owned()).collect();
        let (mut bytes, mut hashes) = (HashMap::new(), HashMap::new());
        git.read_blobs(&oids, &mut |index, content| {
            let Some(oid) = oids.get(index) else {
                return;
            };
            if to_hash.contains(oid.as_str()) {
                hashes.insert(oid.clone(), locks::sha256_hex(content));
            }
            if whole.contains(oid.as_str()) {
                bytes.insert(oid.clone(), content.to_vec());
            }
        })?;
        files.bytes = bytes;
        files.hashes = hashes;
        Ok(files)
    }

    fn tree(&self, end: End) -> &[TreeFile] {
        match end {
            End::Base => &self.at_base,
            End::Head => &self.at_head,
        }
    }

    /// The content of `path` at `end`, as [`Repository::show`] gives it; `None` when no
    /// file is there or the path was not among those read.
    pub fn show(&self, end: End, path: &str) -> Option<&[u8]> {
        let tree = self.tree(end);
        let at = tree
            .binary_search_by(|file| file.path.as_str().cmp(path))
            .ok()?;
        self.bytes.get(&tree.get(at)?.oid).map(Vec::as_slice)
    }

    /// The head's fixture lock (the base's `lockfile` path); none locks nothing.
    pub fn fixture_lock(&self) -> Result<FixtureLock, GateError> {
        Ok(match self.show(End::Head, &self.lockfile) {
            Some(bytes) => {
                let shown = format!("{}:{}", short(&self.head), self.lockfile);
                FixtureLock::parse(bytes, Path::new(&shown))?
            }
            None => FixtureLock::default(),
        })
    }

    /// Every file under the fixtures folder at the head, hashed.
    fn fixture_hashes(&self) -> Hashes {
        self.at_head
            .iter()
            .filter(|file| {
                files::is_under(&file.path, &self.fixtures) && file.path != self.fixtures
            })
            .filter_map(|file| Some((file.path.clone(), self.hashes.get(&file.oid)?.clone())))
            .collect()
    }

    /// The cassettes under the cassettes folder at `end`, validated and hashed.
    fn cassettes_at(&self, end: End) -> cassettes::Scan {
        let found: Vec<(&str, &[u8])> = self
            .tree(end)
            .iter()
            .filter(|file| cassettes::is_cassette_file(&file.path, &self.cassettes))
            .filter_map(|file| Some((file.path.as_str(), self.bytes.get(&file.oid)?.as_slice())))
            .collect();
        CassetteLock::from_cassettes(found)
    }
}

/// Fixtures under the base's `[lane] fixtures` at the head against the lock at the head
/// (the base's `lockfile` path): drift while the lock is unchanged is fixture drift; a
/// changed lock is a human-owned change the gate reports separately. A missing lock locks
/// nothing.
pub fn fixture_drift(
    git: &dyn Repository,
    head: &str,
    lane: &LaneConfig,
) -> Result<Vec<Drift>, GateError> {
    fixture_drift_in(&LaneFiles::read(git, head, head, lane, &[])?)
}

/// As [`fixture_drift`], with the files the lane read.
pub fn fixture_drift_in(files: &LaneFiles) -> Result<Vec<Drift>, GateError> {
    let locked = files.fixture_lock()?;
    Ok(locks::drift(&locked.files, &files.fixture_hashes()))
}

/// What the cassette step found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CassetteCheck {
    /// Cassettes at the head that are not valid `cassette.v1`.
    pub invalid: Vec<CassetteError>,
    /// Valid cassettes at the head against the cassette lock at the head.
    pub drift: Vec<Drift>,
    /// Cassettes of the base deleted at the head, and pins taken away (an invalid head
    /// cassette is reported as invalid, not as lost).
    pub losses: Vec<Loss>,
}

/// Cassettes under the base's `[lane] cassettes`: validated at `head`, hashed against the
/// head's cassette lock, and compared with `base`'s.
pub fn cassette_check(
    git: &dyn Repository,
    base: &str,
    head: &str,
    lane: &LaneConfig,
) -> Result<CassetteCheck, GateError> {
    cassette_check_in(&LaneFiles::read(git, base, head, lane, &[])?)
}

/// As [`cassette_check`], with the files the lane read.
pub fn cassette_check_in(files: &LaneFiles) -> Result<CassetteCheck, GateError> {
    let at_head = files.cassettes_at(End::Head);
    let at_base = files.cassettes_at(End::Base);
    let locked = match files.show(End::Head, &files.cassette_lock) {
        Some(bytes) => {
            let shown = format!("{}:{}", short(&files.head), files.cassette_lock);
            CassetteLock::parse(bytes, Path::new(&shown))?
        }
        None => CassetteLock::default(),
    };
    let invalid_paths: Vec<&Path> = at_head.invalid.iter().map(|e| e.path.as_path()).collect();
    let losses = cassettes::losses(&at_base.lock, &at_head.lock)
        .into_iter()
        .filter(|loss| !invalid_paths.contains(&Path::new(&loss.path)))
        .collect();
    Ok(CassetteCheck {
        drift: locks::drift(&locked.hashes(), &at_head.lock.hashes()),
        losses,
        invalid: at_head.invalid,
    })
}

/// Human-owned files (named by the base's policy) the change touches, and ledger lines it
/// altered or removed (appending is allowed).
pub fn human_owned_changes(
    git: &dyn Repository,
    base: &str,
    head: &str,
    policy: &Config,
    diff: &Diff,
) -> Result<Vec<OwnedChange>, GateError> {
    let paths = OwnedPaths::from_config(policy);
    let (base_ledger, head_ledger) = match paths.ledger().filter(|ledger| diff.touches(ledger)) {
        Some(ledger) => {
            let read = |revision: &str| -> Result<Option<String>, GateError> {
                git.show(revision, ledger)?
                    .map(|bytes| text(bytes, ledger, revision))
                    .transpose()
            };
            (read(base)?, read(head)?)
        }
        None => (None, None),
    };
    Ok(human_owned::changes(
        &paths,
        diff,
        base_ledger.as_deref(),
        head_ledger.as_deref(),
    ))
}

/// Test-infrastructure changes (the base's `[lane] test_infrastructure` globs, runner
/// sections of pyproject.toml / setup.cfg / tox.ini read at both ends, plugin lists).
pub fn infrastructure_changes(
    git: &dyn Repository,
    base: &str,
    head: &str,
    policy: &Config,
    diff: &Diff,
) -> Result<Vec<infrastructure::InfraChange>, GateError> {
    let mut failure = None;
    let found = infrastructure::changes(&policy.lane.test_infrastructure, diff, |path| {
        let mut read = |revision: &str| match git.show(revision, path) {
            Ok(bytes) => bytes.map(|b| String::from_utf8_lossy(&b).into_owned()),
            Err(error) => {
                failure.get_or_insert(error);
                None
            }
        };
        infrastructure::Texts {
            base: read(base),
            head: read(head),
        }
    });
    if let Some(error) = failure {
        return Err(error.into());
    }
    let mut found = found;
    let candidates = infrastructure::support_candidates(diff, &found);
    if !candidates.is_empty() {
        let base_texts: Vec<Option<String>> = git
            .show_many(base, &candidates)?
            .into_iter()
            .map(|bytes| bytes.map(|b| String::from_utf8_lossy(&b).into_owned()))
            .collect();
        let support = infrastructure::framework_support(diff, &candidates, &base_texts);
        found.extend(support);
        found.sort();
    }
    found.extend(test_data_changes(git, base, policy, diff, &found)?);
    let compiled = infrastructure::compiled_candidates(diff, &found);
    if !compiled.is_empty() {
        let heads = git.show_many(head, &compiled)?;
        found.extend(infrastructure::compiled_code(diff, &compiled, &heads));
    }
    found.sort();
    if infrastructure::adds_python_modules(diff) {
        let listed = git.tree_files(head, "")?;
        let paths: Vec<&str> = listed.iter().map(|file| file.path.as_str()).collect();
        if infrastructure::adds_test_folder_modules(diff) {
            let project = infrastructure::project_modules(&paths);
            let shadowing = infrastructure::project_shadowing(diff, &project, &found);
            found.extend(shadowing);
        }
        let packages: BTreeSet<&str> = paths
            .iter()
            .filter_map(|path| path.strip_suffix("/__init__.py"))
            .collect();
        let candidates = infrastructure::new_top_level_modules(diff, &packages, &found);
        if !candidates.is_empty() {
            // Read only now: every Python file of the base, for what it imports.
            let base_listed = git.tree_files(base, "")?;
            let base_paths: Vec<&str> = base_listed.iter().map(|file| file.path.as_str()).collect();
            let python: Vec<&str> = base_paths
                .iter()
                .copied()
                .filter(|path| files::Language::of(path) == Some(files::Language::Python))
                .collect();
            let texts: Vec<String> = git
                .show_many(base, &python)?
                .into_iter()
                .flatten()
                .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
                .collect();
            let imported = infrastructure::imported_names(texts.iter().map(String::as_str));
            let provided = infrastructure::provided_names(&base_paths);
            found.extend(infrastructure::dependency_shadowing(
                &candidates,
                &imported,
                &provided,
            ));
        }
        found.sort();
    }
    Ok(found)
}

/// Data the base's tests read outside the test folders that the change edits or deletes:
/// the base's test files (and the code under its test folders) are read only when the
/// change touches such a file.
fn test_data_changes(
    git: &dyn Repository,
    base: &str,
    policy: &Config,
    diff: &Diff,
    found: &[infrastructure::InfraChange],
) -> Result<Vec<infrastructure::InfraChange>, GateError> {
    let owned = OwnedPaths::from_config(policy);
    let fixtures = format!("{}/", repo_path(&policy.lane.fixtures)?);
    let cassettes = format!("{}/", repo_path(&policy.lane.cassettes)?);
    let skip = |path: &str| {
        path.starts_with(&fixtures)
            || path.starts_with(&cassettes)
            || owned.files.iter().any(|(owned, _)| owned == path)
    };
    let candidates = infrastructure::data_candidates(diff, found, &skip);
    if candidates.is_empty() {
        return Ok(Vec::new());
    }
    let mut readers: Vec<TreeFile> = git.tree_files(base, "")?;
    readers.retain(|file| file.mode != "120000" && infrastructure::names_test_data(&file.path));
    let oids: Vec<String> = readers.iter().map(|file| file.oid.clone()).collect();
    let mut texts = vec![String::new(); readers.len()];
    git.read_blobs(&oids, &mut |index, bytes| {
        texts[index] = String::from_utf8_lossy(bytes).into_owned();
    })?;
    let named: Vec<(&str, &str)> = readers
        .iter()
        .zip(&texts)
        .map(|(file, text)| (file.path.as_str(), text.as_str()))
        .collect();
    Ok(infrastructure::test_data(diff, &candidates, &named))
}

/// Data files the change added or edited under test folders that the head's fixture lock
/// does not pin (outside the fixtures folder and the cassettes, which have their own
/// checks).
pub fn unlocked_data(
    git: &dyn Repository,
    files: &LaneFiles,
    lane: &LaneConfig,
    diff: &Diff,
) -> Result<Vec<String>, GateError> {
    let head = files.head.as_str();
    let lock_path = repo_path(&lane.lockfile)?;
    let locked = files.fixture_lock()?;
    let fixtures = format!("{}/", repo_path(&lane.fixtures)?);
    let cassettes = format!("{}/", repo_path(&lane.cassettes)?);
    let owned = [lock_path.clone(), repo_path(&lane.cassette_lock)?];
    let skip = |path: &str| {
        path.starts_with(&fixtures)
            || path.starts_with(&cassettes)
            || owned.iter().any(|owned| owned == path)
    };
    let mut failure = None;
    let found = data::unlocked(diff, &skip, &locked.files, |path| {
        match git.show(head, path) {
            Ok(bytes) => bytes.map(|b| locks::sha256_hex(&b)),
            Err(error) => {
                failure.get_or_insert(error);
                None
            }
        }
    });
    match failure {
        Some(error) => Err(error.into()),
        None => Ok(found),
    }
}
