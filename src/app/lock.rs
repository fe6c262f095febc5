//! `candor lock fixtures|cassettes [--check]`: hash the files under `[lane] fixtures` (or
//! validate and hash the cassettes under `[lane] cassettes`) in the work tree and write the
//! lock atomically, or, with `--check`, compare them with the lock and exit 1 on drift. The
//! files are those a commit would hold: tracked and untracked, not ignored (every file
//! under the folder outside a git repository).

use std::path::Path;

use super::{AppError, Ports};
use crate::cli::settings::{LockKind, LockSettings};
use crate::events::{ErrorEvent, Event, LockEvent};
use crate::exit_codes;
use crate::gate::cassettes::{self, CassetteLock};
use crate::gate::locks::{self, FixtureLock, Hashes};
use crate::gate::repo_path;
use crate::git::{Git, repo_root_or_none};
use crate::policy::Config;

/// With `--check`, one `drift` event per file that differs from the lock; then `lock`.
/// Invalid cassettes are `error` events and stop it before anything is written.
pub fn run(settings: LockSettings, ports: &mut Ports<'_>) -> Result<u8, AppError> {
    let repo_root = ports.root;
    let config = Config::load(repo_root)?;
    let (kind, folder, lock_path) = match settings.kind {
        LockKind::Fixtures => ("fixtures", &config.lane.fixtures, &config.lane.lockfile),
        LockKind::Cassettes => (
            "cassettes",
            &config.lane.cassettes,
            &config.lane.cassette_lock,
        ),
    };
    let folder = repo_path(folder)?;
    let lock_name = repo_path(lock_path)?;
    let lock_file = repo_root.join(&lock_name);
    let listed = listed_files(repo_root, &folder)?;
    let existing = match fs_err::read(&lock_file) {
        Ok(bytes) => Some(bytes),
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => None,
        Err(source) => {
            return Err(AppError::Read {
                path: lock_file,
                source,
            });
        }
    };
    let shown = Path::new(&lock_name);
    let (hashes, locked, text): (Hashes, Hashes, String) = match settings.kind {
        LockKind::Fixtures => {
            let hashes = locks::hash_listed(repo_root, &listed)?;
            let locked = match &existing {
                Some(bytes) if settings.check => {
                    FixtureLock::parse(bytes, shown)
                        .map_err(crate::gate::GateError::from)?
                        .files
                }
                _ => Hashes::new(),
            };
            let text = FixtureLock {
                files: hashes.clone(),
            }
            .render();
            (hashes, locked, text)
        }
        LockKind::Cassettes => {
            let scan = cassettes::from_work_tree(repo_root, &folder, &listed)?;
            if !scan.invalid.is_empty() {
                for error in &scan.invalid {
                    ports.emit(Event::Error(ErrorEvent {
                        message: error.to_string(),
                        causes: Vec::new(),
                        hint: None,
                    }));
                }
                return Err(AppError::InvalidCassettes {
                    count: scan.invalid.len(),
                });
            }
            let locked = match &existing {
                Some(bytes) if settings.check => CassetteLock::parse(bytes, shown)
                    .map_err(crate::gate::GateError::from)?
                    .hashes(),
                _ => Hashes::new(),
            };
            (scan.lock.hashes(), locked, scan.lock.render())
        }
    };
    if settings.check {
        let drifts = locks::drift(&locked, &hashes);
        for drift in drifts.iter().cloned() {
            ports.emit(Event::Drift(drift));
        }
        if drifts.is_empty() {
            ports.tell(format!(
                "{lock_name}: {} {} under {folder} {} the lock",
                hashes.len(),
                if hashes.len() == 1 { "file" } else { "files" },
                if hashes.len() == 1 {
                    "matches"
                } else {
                    "match"
                }
            ));
        } else {
            ports.tell(format!(
                "{lock_name}: {} {} from the lock: if the change is meant, run `candor lock {kind}` and have a human approve the new lock",
                drifts.len(),
                if drifts.len() == 1 { "file differs" } else { "files differ" }
            ));
        }
        ports.emit(Event::Lock(LockEvent {
            kind: kind.to_owned(),
            path: lock_name.clone(),
            files: hashes.len(),
            written: false,
            drift: drifts.len(),
        }));
        return Ok(if drifts.is_empty() {
            exit_codes::OK
        } else {
            exit_codes::NEGATIVE
        });
    }
    let unchanged = existing.as_deref() == Some(text.as_bytes());
    if !unchanged {
        crate::confine::check_write(repo_root, Path::new(&lock_name))?;
        crate::reliability::write_atomic(&lock_file, &text).map_err(|source| AppError::Write {
            path: lock_file.clone(),
            source,
        })?;
    }
    ports.tell(format!(
        "{} {lock_name}: {} {} under {folder}",
        if unchanged { "unchanged" } else { "wrote" },
        hashes.len(),
        if hashes.len() == 1 { "file" } else { "files" }
    ));
    ports.emit(Event::Lock(LockEvent {
        kind: kind.to_owned(),
        path: lock_name,
        files: hashes.len(),
        written: !unchanged,
        drift: 0,
    }));
    Ok(exit_codes::OK)
}

/// The files under `folder`: git's view in a repository, a walk outside one.
fn listed_files(repo_root: &Path, folder: &str) -> Result<Vec<String>, AppError> {
    let in_git = repo_root_or_none(repo_root)
        .map_err(crate::gate::GateError::from)?
        .is_some();
    if in_git {
        Ok(Git::new(repo_root)
            .work_tree_files(folder)
            .map_err(crate::gate::GateError::from)?)
    } else {
        Ok(locks::list_folder(repo_root, folder)?)
    }
}
