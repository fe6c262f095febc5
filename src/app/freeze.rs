//! `candor freeze check`: every `[[freeze]]` of the work tree's candor.toml judged on the
//! clock's day. Exit 1 when a freeze has expired while its test is still held, that is
//! quarantined in the reliability file or carrying a skip mark in its own code
//! (`gate::skips` says how it is found); freezes that expire within 7 days are listed. The
//! states are `gate::freeze`'s.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use super::{AppError, Ports};
use crate::events::{Event, FreezeCheck, FreezeEvent, SkipMarkEvent};
use crate::exit_codes;
use crate::gate::freeze::{FreezeState, FreezeStatus, evaluate};
use crate::gate::skips::{SkipMark, TestSource, is_go_test_file, locate, skip_mark};
use crate::policy::{Config, Freeze};
use crate::reliability::ReliabilityFile;
use crate::stats::tiers::Tier;

/// One `freeze` event per freeze, for people what to do, then `freeze-check`.
pub fn run(ports: &mut Ports<'_>) -> Result<u8, AppError> {
    let today = ports.clock.today();
    let config = Config::load(ports.root)?;
    let reliability = ReliabilityFile::load(&ports.root.join(&config.reliability.file))?;
    let quarantined: HashSet<&str> = reliability
        .tests
        .iter()
        .filter(|entry| entry.tier == Tier::Quarantined)
        .map(|entry| entry.id.as_str())
        .collect();
    // A test has at most one freeze (candor.toml refuses two), so its id is its key.
    let marks: HashMap<&str, SkipMark> = config
        .freezes
        .iter()
        .filter_map(|freeze| {
            Some((
                freeze.test.as_str(),
                find_skip_mark(ports.root, &freeze.test)?,
            ))
        })
        .collect();
    let held = |freeze: &Freeze| {
        quarantined.contains(freeze.test.as_str()) || marks.contains_key(freeze.test.as_str())
    };
    let statuses = evaluate(&config.freezes, today, held);
    let count = |state| statuses.iter().filter(|s| s.state == state).count();
    for status in &statuses {
        let test = status.freeze.test.as_str();
        ports.emit(Event::Freeze(event(
            status,
            quarantined.contains(test),
            marks.get(test),
        )));
    }
    let expired = count(FreezeState::Expired);
    if expired > 0 {
        ports.tell(format!(
            "{expired} expired {} while the test is still skipped or quarantined: fix the test and remove the skip, or have its owner renew `expires` in candor.toml",
            if expired == 1 { "freeze" } else { "freezes" }
        ));
    } else {
        ports.tell(format!(
            "{} {} checked on {today}: none expired",
            statuses.len(),
            if statuses.len() == 1 {
                "freeze"
            } else {
                "freezes"
            }
        ));
    }
    ports.emit(Event::FreezeCheck(FreezeCheck {
        today: today.to_string(),
        freezes: statuses.len(),
        expired,
        expiring: count(FreezeState::Expiring),
        lapsed: count(FreezeState::Lapsed),
    }));
    Ok(if expired > 0 {
        exit_codes::NEGATIVE
    } else {
        exit_codes::OK
    })
}

fn event(status: &FreezeStatus<'_>, quarantined: bool, mark: Option<&SkipMark>) -> FreezeEvent {
    let freeze = status.freeze;
    FreezeEvent {
        test: freeze.test.clone(),
        owner: freeze.owner.clone(),
        expires: freeze.expires.to_string(),
        ticket: freeze.ticket.clone(),
        replay: freeze.replay.as_ref().map(|p| p.display().to_string()),
        state: status.state.as_str().to_owned(),
        days_left: status.days_left,
        quarantined,
        skip_mark: mark.map(|mark| SkipMarkEvent {
            file: mark.file.clone(),
            line: mark.line,
            mark: mark.mark.clone(),
        }),
    }
}

/// The skip mark in `test`'s own code, read from the work tree; `None` when the id names
/// no readable file or the code carries no skip mark.
fn find_skip_mark(repo_root: &Path, test: &str) -> Option<SkipMark> {
    match locate(test) {
        TestSource::File(path) => {
            let source = std::fs::read_to_string(repo_root.join(&path)).ok()?;
            skip_mark(test, &path, &source)
        }
        TestSource::GoPackage { import_path, .. } => {
            let folder = go_package_folder(repo_root, &import_path)?;
            let mut files: Vec<_> = std::fs::read_dir(repo_root.join(&folder))
                .ok()?
                .filter_map(Result::ok)
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .filter(|name| is_go_test_file(name))
                .collect();
            files.sort();
            files.into_iter().find_map(|name| {
                let path = if folder.is_empty() {
                    name
                } else {
                    format!("{folder}/{name}")
                };
                let source = std::fs::read_to_string(repo_root.join(&path)).ok()?;
                skip_mark(test, &path, &source)
            })
        }
        TestSource::Unknown => None,
    }
}

/// The folder of a go package, by the module path in the root's go.mod.
fn go_package_folder(repo_root: &Path, import_path: &str) -> Option<String> {
    let go_mod = std::fs::read_to_string(repo_root.join("go.mod")).ok()?;
    let module = go_mod
        .lines()
        .find_map(|line| line.trim().strip_prefix("module "))?
        .trim()
        .trim_matches('"');
    if import_path == module {
        return Some(String::new());
    }
    import_path
        .strip_prefix(module)?
        .strip_prefix('/')
        .map(str::to_owned)
}
