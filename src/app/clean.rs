//! `candor clean` and the retention rule of `.candor/runs`: which run folders (reports and
//! logs commands leave behind) go, decided purely from their names and ages; removing
//! them, only ever inside `.candor/runs`.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::running::RUNS_DIR;
use super::{AppError as CliError, Ports};
use crate::cli::settings::CleanSettings;
use crate::events::{CleanEvent, Event};
use crate::exit_codes;
use crate::policy::{Config, RunsConfig};

/// One folder under `.candor/runs`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunFolder {
    /// Its name (`test-a1B2c3`).
    pub name: String,
    /// When it was last written.
    pub modified: SystemTime,
}

/// The folders the rule removes: older than `keep_days` and not among the newest
/// `keep_last`; with `all`, every folder. In name order.
pub fn expired(folders: &[RunFolder], rule: RunsConfig, now: SystemTime, all: bool) -> Vec<String> {
    let mut newest_first: Vec<&RunFolder> = folders.iter().collect();
    newest_first.sort_by(|a, b| b.modified.cmp(&a.modified).then(a.name.cmp(&b.name)));
    let keep_for = Duration::from_secs(u64::from(rule.keep_days) * 24 * 60 * 60);
    let mut gone: Vec<String> = newest_first
        .iter()
        .enumerate()
        .filter(|(rank, folder)| {
            all || (*rank >= rule.keep_last as usize
                && now
                    .duration_since(folder.modified)
                    .is_ok_and(|age| age > keep_for))
        })
        .map(|(_, folder)| folder.name.clone())
        .collect();
    gone.sort();
    gone
}

/// The run folders under `<repo_root>/.candor/runs`: real directories only (a symlink or a
/// file there is never candor's and never removed). `None` when there is no such folder.
/// `.candor` or `.candor/runs` being a symlink is refused: removing through it could reach
/// outside `.candor/`.
fn run_folders(repo_root: &Path) -> Result<Option<(PathBuf, Vec<RunFolder>)>, CliError> {
    let candor = repo_root.join(".candor");
    let runs = repo_root.join(RUNS_DIR);
    for dir in [&candor, &runs] {
        match fs_err::symlink_metadata(dir) {
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(CliError::Unsafe {
                    path: dir.clone(),
                    why: "is a symlink; candor removes run folders only inside the repository's own .candor/",
                });
            }
            Ok(_) => {}
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => {
                return Err(CliError::Read {
                    path: dir.clone(),
                    source,
                });
            }
        }
    }
    let read_error = |source| CliError::Read {
        path: runs.clone(),
        source,
    };
    let mut folders = Vec::new();
    for entry in fs_err::read_dir(&runs).map_err(read_error)? {
        let entry = entry.map_err(read_error)?;
        let meta = fs_err::symlink_metadata(entry.path()).map_err(read_error)?;
        if !meta.file_type().is_dir() {
            continue;
        }
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        folders.push(RunFolder {
            name,
            modified: meta.modified().map_err(read_error)?,
        });
    }
    Ok(Some((runs, folders)))
}

/// Removes what the rule says, or with `dry_run` only says it. Returns the folders, their
/// bytes, and how many are kept.
fn apply(
    repo_root: &Path,
    rule: RunsConfig,
    all: bool,
    dry_run: bool,
) -> Result<Cleaned, CliError> {
    let Some((runs, folders)) = run_folders(repo_root)? else {
        return Ok(Cleaned::default());
    };
    let gone = expired(&folders, rule, SystemTime::now(), all);
    let mut cleaned = Cleaned {
        kept: folders.len() - gone.len(),
        ..Cleaned::default()
    };
    for name in gone {
        let path = runs.join(&name);
        cleaned.bytes += size(&path);
        if !dry_run {
            // std's remove_dir_all does not follow symlinks inside the folder.
            fs_err::remove_dir_all(&path).map_err(|source| CliError::Write {
                path: path.clone(),
                source,
            })?;
        }
        cleaned.removed.push(Path::new(RUNS_DIR).join(name));
    }
    Ok(cleaned)
}

/// The retention rule applied after a command made a new run folder: best effort, it never
/// fails the command (a broken candor.toml or an unreadable folder leaves everything).
pub fn prune(repo_root: &Path) {
    if let Ok(config) = Config::load(repo_root) {
        let _ = apply(repo_root, config.runs, false, false);
    }
}

#[derive(Debug, Default)]
struct Cleaned {
    removed: Vec<PathBuf>,
    bytes: u64,
    kept: usize,
}

fn size(path: &Path) -> u64 {
    let Ok(meta) = fs_err::symlink_metadata(path) else {
        return 0;
    };
    if !meta.is_dir() {
        return meta.len();
    }
    fs_err::read_dir(path).map_or(0, |entries| {
        entries.flatten().map(|entry| size(&entry.path())).sum()
    })
}

/// Applies the retention rule of the work tree's candor.toml (every folder with
/// `--all`), or with `--dry-run` only says what it would remove: one `clean` event.
pub fn run(settings: CleanSettings, ports: &mut Ports<'_>) -> Result<u8, CliError> {
    let rule = Config::load(ports.root)?.runs;
    let cleaned = apply(ports.root, rule, settings.all, settings.dry_run)?;
    ports.emit(Event::Clean(CleanEvent {
        dry_run: settings.dry_run,
        all: settings.all,
        keep_last: rule.keep_last,
        keep_days: rule.keep_days,
        removed: cleaned.removed,
        bytes: cleaned.bytes,
        kept: cleaned.kept,
    }));
    Ok(exit_codes::OK)
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: u64 = 24 * 60 * 60;

    fn folder(name: &str, days_old: u64, now: SystemTime) -> RunFolder {
        RunFolder {
            name: name.to_owned(),
            modified: now - Duration::from_secs(days_old * DAY),
        }
    }

    #[test]
    fn a_folder_goes_only_when_old_and_not_among_the_newest() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1000 * DAY);
        let folders = [
            folder("test-a", 30, now),
            folder("gate-b", 20, now),
            folder("test-c", 10, now),
            folder("test-d", 1, now),
        ];
        let rule = RunsConfig {
            keep_last: 1,
            keep_days: 14,
        };
        assert_eq!(expired(&folders, rule, now, false), ["gate-b", "test-a"]);
        // Among the newest three, so kept however old.
        let rule = RunsConfig {
            keep_last: 3,
            keep_days: 1,
        };
        assert_eq!(expired(&folders, rule, now, false), ["test-a"]);
        assert_eq!(expired(&folders, rule, now, true).len(), 4);
        assert!(expired(&[], rule, now, false).is_empty());
    }
}
