//! `candor reliability`: every test's tier from its window, printed, and with `--write`
//! written to the reliability file. The tier itself is decided in `stats::tiers`.

use crate::history::Location;
use std::path::{Path, PathBuf};

use jiff::civil::Date;
use serde::Serialize;

use super::counted::CountedRuns;
use super::{Open, open_store};
use crate::cli::error::CliError;
use crate::cli::output::{Align, Cell, Column, Printer, Style, human_rate, render_table};
use crate::cli::settings::ReliabilitySettings;
use crate::events::Counted as CountedLine;
use crate::exit_codes;
use crate::policy::Config;
use crate::reliability::{ReliabilityFile, Row, evaluate_history_in, utc_date, write_atomic};
use crate::stats::tiers::{Change, Tier};
use crate::stats::wilson::Interval;

const COLUMNS: [Column; 8] = [
    Column {
        header: "TIER",
        align: Align::Left,
    },
    Column {
        header: "CHANGE",
        align: Align::Left,
    },
    Column {
        header: "RUNS",
        align: Align::Right,
    },
    Column {
        header: "FAILS",
        align: Align::Right,
    },
    Column {
        header: "PASS RATE",
        align: Align::Right,
    },
    Column {
        header: "WILSON 95%",
        align: Align::Left,
    },
    Column {
        header: "FLIPS",
        align: Align::Right,
    },
    Column {
        header: "TEST",
        align: Align::Left,
    },
];

/// `{"type":"reliability"}`: see docs/json-output.md.
#[derive(Serialize)]
struct ReliabilityLine<'a> {
    test: &'a str,
    tier: Tier,
    previous_tier: Option<Tier>,
    change: Change,
    runs: u64,
    failures: u64,
    pass_rate: Option<f64>,
    wilson_95: Option<Interval>,
    flips: u64,
    first_flaky: Option<Date>,
    stale: bool,
}

/// `{"type":"reliability-summary"}`.
#[derive(Serialize)]
struct SummaryLine<'a> {
    tests: usize,
    trusted: usize,
    probation: usize,
    quarantined: usize,
    changed: usize,
    stale: usize,
    written: Option<&'a Path>,
    counted: CountedLine,
}

pub(super) fn run(
    settings: &ReliabilitySettings,
    db: &Location,
    repo_root: &Path,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    let config = Config::load(repo_root)?;
    let policy = &config.reliability.tiers;
    let target: PathBuf = match &settings.write {
        Some(Some(path)) => path.clone(),
        _ => repo_root.join(&config.reliability.file),
    };
    if settings.write.is_some() {
        // A path given on the command line outside the repository is the user's choice;
        // anything under it, the configured file included, must stay inside.
        crate::confine::check_write_if_under(repo_root, &target)?;
    }
    let previous = ReliabilityFile::load(&target)?;
    let store = open_store(db, Open::Existing)?;
    let counted = CountedRuns::read(store.as_ref(), &config, settings.default_branch.as_ref())?;
    let evaluation = evaluate_history_in(store.as_ref(), &previous, policy, counted.filter())?;
    let written = if settings.write.is_some() {
        write_atomic(&target, &evaluation.file.render(policy)).map_err(|source| {
            CliError::Write {
                path: target.clone(),
                source,
            }
        })?;
        Some(target.as_path())
    } else {
        None
    };

    let count = |tier: Tier| evaluation.rows.iter().filter(|r| r.tier == tier).count();
    let summary = SummaryLine {
        tests: evaluation.rows.len(),
        trusted: count(Tier::Trusted),
        probation: count(Tier::Probation),
        quarantined: count(Tier::Quarantined),
        changed: evaluation
            .rows
            .iter()
            .filter(|r| !matches!(r.change, Change::Kept))
            .count(),
        stale: evaluation.rows.iter().filter(|r| r.stale).count(),
        written,
        counted: counted.event(),
    };
    if printer.is_json() {
        for row in &evaluation.rows {
            printer.json("reliability", &line(row))?;
            if printer.stdout_closed() {
                return Ok(exit_codes::OK);
            }
        }
        printer.json("reliability-summary", &summary)?;
        return Ok(exit_codes::OK);
    }
    // On a terminal, the rows with something to say first (a changed or untrusted tier,
    // stale evidence), cut to a screenful with a count; whole anywhere else.
    let mut shown: Vec<&Row> = evaluation.rows.iter().collect();
    if printer.settings().summarize {
        shown.sort_by_key(|row| {
            matches!(row.change, Change::Kept) && row.tier == Tier::Trusted && !row.stale
        });
    }
    let rows: Vec<Vec<Cell>> = shown.iter().map(|row| cells(row)).collect();
    let table = render_table(&COLUMNS, &rows, printer.color_stdout());
    let (header, body) = table
        .split_first()
        .map_or((None, &[][..]), |(h, b)| (Some(h), b));
    if let Some(header) = header {
        printer.line(header)?;
    }
    printer.listing(body, "tests (changed and untrusted first)")?;
    if printer.stdout_closed() {
        return Ok(exit_codes::OK);
    }
    printer.info(&counted.human())?;
    printer.info(&format!(
        "{} tests: {} trusted, {} probation, {} quarantined ({} changed, {} stale)",
        summary.tests,
        summary.trusted,
        summary.probation,
        summary.quarantined,
        summary.changed,
        summary.stale
    ))?;
    match written {
        Some(path) => printer.info(&format!("wrote {}", path.display()))?,
        None => printer.info(&format!(
            "nothing written; `--write` writes {}",
            target.display()
        ))?,
    }
    Ok(exit_codes::OK)
}

fn line(row: &Row) -> ReliabilityLine<'_> {
    ReliabilityLine {
        test: &row.test,
        tier: row.tier,
        previous_tier: row.previous_tier,
        change: row.change,
        runs: row.stats.runs,
        failures: row.stats.failures,
        pass_rate: row.stats.pass_rate,
        wilson_95: row.stats.pass_interval,
        flips: row.stats.flips,
        first_flaky: row.stats.first_flaky.map(utc_date),
        stale: row.stale,
    }
}

fn tier_style(tier: Tier) -> Style {
    match tier {
        Tier::Trusted => Style::Plain,
        Tier::Probation => Style::Yellow,
        Tier::Quarantined => Style::Red,
    }
}

fn cells(row: &Row) -> Vec<Cell> {
    let change = match row.change {
        Change::Kept if row.stale => "stale",
        Change::Kept => "-",
        Change::Dropped => "dropped",
        Change::Promoted => "promoted",
        Change::Entered => "new",
    };
    let interval = row.stats.pass_interval.map_or_else(
        || "-".to_owned(),
        |i| format!("{:.1}%–{:.1}%", i.low * 100.0, i.high * 100.0),
    );
    vec![
        Cell::styled(row.tier.as_str(), tier_style(row.tier)),
        Cell::plain(change),
        Cell::plain(row.stats.runs.to_string()),
        Cell::plain(row.stats.failures.to_string()),
        Cell::plain(human_rate(row.stats.pass_rate)),
        Cell::plain(interval),
        Cell::plain(row.stats.flips.to_string()),
        Cell::plain(&row.test),
    ]
}
