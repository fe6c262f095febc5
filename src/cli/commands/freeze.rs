//! `candor freeze check`: every `[[freeze]]` of the work tree's candor.toml judged today.
//! Exit 1 when a freeze has expired while its test is still held, that is quarantined in
//! the reliability file or carrying a skip mark in its own code (`gate::skips` says how it
//! is found); freezes that expire within 7 days are listed. The states are
//! `gate::freeze`'s.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use jiff::civil::Date;
use serde::Serialize;

use crate::cli::error::CliError;
use crate::cli::output::{Printer, Style, terminal_safe};
use crate::exit_codes;
use crate::gate::freeze::{FreezeState, FreezeStatus, evaluate};
use crate::gate::skips::{SkipMark, TestSource, is_go_test_file, locate, skip_mark};
use crate::policy::{Config, Freeze};
use crate::reliability::ReliabilityFile;
use crate::stats::tiers::Tier;

/// `{"type":"freeze"}`: see docs/json-output.md.
#[derive(Serialize)]
struct FreezeLine<'a> {
    test: &'a str,
    owner: &'a str,
    expires: String,
    ticket: Option<&'a str>,
    replay: Option<String>,
    state: &'static str,
    days_left: i64,
    quarantined: bool,
    skip_mark: Option<MarkLine<'a>>,
}

#[derive(Serialize)]
struct MarkLine<'a> {
    file: &'a str,
    line: usize,
    mark: &'a str,
}

/// `{"type":"freeze-check"}`.
#[derive(Serialize)]
struct SummaryLine {
    today: String,
    freezes: usize,
    expired: usize,
    expiring: usize,
    lapsed: usize,
}

pub(super) fn run(repo_root: &Path, today: Date, printer: &mut Printer) -> Result<u8, CliError> {
    let config = Config::load(repo_root)?;
    let reliability = ReliabilityFile::load(&repo_root.join(&config.reliability.file))?;
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
                find_skip_mark(repo_root, &freeze.test)?,
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
        print_status(printer, status, quarantined.contains(test), marks.get(test))?;
    }
    let expired = count(FreezeState::Expired);
    if printer.is_json() {
        printer.json(
            "freeze-check",
            &SummaryLine {
                today: today.to_string(),
                freezes: statuses.len(),
                expired,
                expiring: count(FreezeState::Expiring),
                lapsed: count(FreezeState::Lapsed),
            },
        )?;
    } else if expired > 0 {
        printer.info(&format!(
            "{expired} expired {} while the test is still skipped or quarantined: fix the test and remove the skip, or have its owner renew `expires` in candor.toml",
            if expired == 1 { "freeze" } else { "freezes" }
        ))?;
    } else {
        printer.info(&format!(
            "{} {} checked on {today}: none expired",
            statuses.len(),
            if statuses.len() == 1 {
                "freeze"
            } else {
                "freezes"
            }
        ))?;
    }
    Ok(if expired > 0 {
        exit_codes::NEGATIVE
    } else {
        exit_codes::OK
    })
}

fn print_status(
    printer: &mut Printer,
    status: &FreezeStatus<'_>,
    quarantined: bool,
    mark: Option<&SkipMark>,
) -> Result<(), CliError> {
    let freeze = status.freeze;
    if printer.is_json() {
        printer.json(
            "freeze",
            &FreezeLine {
                test: &freeze.test,
                owner: &freeze.owner,
                expires: freeze.expires.to_string(),
                ticket: freeze.ticket.as_deref(),
                replay: freeze.replay.as_ref().map(|p| p.display().to_string()),
                state: status.state.as_str(),
                days_left: status.days_left,
                quarantined,
                skip_mark: mark.map(|mark| MarkLine {
                    file: &mark.file,
                    line: mark.line,
                    mark: &mark.mark,
                }),
            },
        )?;
        return Ok(());
    }
    let color = printer.color_stdout();
    let (label, style) = match status.state {
        FreezeState::Expired => ("expired", Style::Red),
        FreezeState::Expiring => ("expiring", Style::Yellow),
        FreezeState::Lapsed => ("lapsed", Style::Dim),
        FreezeState::Active => ("active", Style::Green),
    };
    let when = match status.days_left {
        0 => format!("expires today ({})", freeze.expires),
        1 => format!("expires tomorrow ({})", freeze.expires),
        days @ 2.. => format!("expires {} (in {days} days)", freeze.expires),
        -1 => format!("expired {} (yesterday)", freeze.expires),
        days => format!("expired {} ({} days ago)", freeze.expires, -days),
    };
    let mut held = Vec::new();
    if quarantined {
        held.push("quarantined".to_owned());
    }
    if let Some(mark) = mark {
        held.push(format!("`{}` at {}:{}", mark.mark, mark.file, mark.line));
    }
    let held = if held.is_empty() {
        "runs again; the freeze can go".to_owned()
    } else {
        format!("held: {}", held.join(", "))
    };
    let reference = match (&freeze.ticket, &freeze.replay) {
        (Some(ticket), _) => format!("ticket {ticket}"),
        (None, Some(replay)) => format!("replay {}", replay.display()),
        (None, None) => String::new(),
    };
    printer.line(&format!(
        "{} {}  {when}; {held}; owner {}, {}",
        style.paint(&format!("{label:<8}"), color),
        terminal_safe(&freeze.test),
        terminal_safe(&freeze.owner),
        terminal_safe(&reference),
    ))?;
    Ok(())
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
