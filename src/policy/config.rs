//! `candor.toml`: the embedded default, parsing with unknown keys refused by name, and
//! validation that points at the offending line (and, inside a `[[fingerprint]]`, names
//! the fingerprint).

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use jiff::civil::Date;
use serde::Deserialize;
use serde::de::IgnoredAny;
use toml::Spanned;
use toml::de::{DeTable, DeValue, ValueDeserializer};

mod lane;

pub use crate::ledger::RerunConfig;
pub use lane::{Ban, Freeze, LaneConfig, LinePattern, PathGlob, Preset, ReplayMode};

use super::fingerprint::{Fingerprint, FingerprintConditions, MessagePattern};
use crate::reliability::BranchPattern;
use crate::runner::{RunnerConfig, RunnerKind};
use crate::stats::tiers::{Tier, TierPolicy};
use lane::{RawLane, resolve_bans, resolve_freezes, resolve_lane};

/// The commented starter file `candor init` writes; every key at its default.
pub const DEFAULT_CONFIG: &str = include_str!("default-candor.toml");

/// The policy file's name at the repository root.
pub const CONFIG_FILE: &str = "candor.toml";

/// The resolved policy.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Where it was read from; `None` when the repository has no `candor.toml`.
    pub path: Option<PathBuf>,
    /// `[reliability]`.
    pub reliability: ReliabilityConfig,
    /// `[rerun]`.
    pub rerun: RerunConfig,
    /// `[triage]`.
    pub triage: TriageConfig,
    /// `[runner]`: which runner `candor test` and `candor rerun` drive, and its command.
    pub runner: RunnerConfig,
    /// Every `[[fingerprint]]`, in file order.
    pub fingerprints: Vec<Fingerprint>,
    /// `[compare]`: the sequential design of `candor compare`.
    pub compare: CompareConfig,
    /// `[lane]`: the merge lane's settings.
    pub lane: LaneConfig,
    /// Every `[[freeze]]`, in file order.
    pub freezes: Vec<Freeze>,
    /// Every `[[ban]]`, in file order.
    pub bans: Vec<Ban>,
    /// `[runs]`: how long the run folders under `.candor/runs` are kept.
    pub runs: RunsConfig,
}

/// `[runs]`, resolved: the retention rule for the folders commands leave under
/// `.candor/runs` (reports and logs). A folder goes when it is older than `keep_days` and
/// not among the newest `keep_last`; `candor clean` applies the rule, and so does every
/// command that makes a new folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunsConfig {
    /// The newest folders always kept.
    pub keep_last: u32,
    /// Folders younger than this many days are always kept.
    pub keep_days: u32,
}

impl Default for RunsConfig {
    fn default() -> Self {
        RunsConfig {
            keep_last: 20,
            keep_days: 14,
        }
    }
}

/// `[compare]`, resolved: how `candor compare` measures a test on the branch against the
/// merge base (docs/compare.md).
#[derive(Debug, Clone, PartialEq)]
pub struct CompareConfig {
    /// Most runs per side.
    pub runs: u32,
    /// The largest false branch-worse rate allowed.
    pub alpha: f64,
    /// Runs per side between looks; equal to `runs` turns sequential stopping off.
    pub look_every: u32,
    /// The smallest increase in failure rate the design is meant to catch: futility stops
    /// once an increase this large is ruled out.
    pub min_increase: f64,
    /// Where quarantine tickets go, relative to the repository root.
    pub tickets: PathBuf,
}

impl CompareConfig {
    /// Most runs per side a design may plan: beyond it the exact calibration costs more
    /// than the runs save, and no red needs it.
    pub const MAX_RUNS: u32 = 60;
}

impl Default for CompareConfig {
    fn default() -> Self {
        CompareConfig {
            runs: 30,
            alpha: 0.05,
            look_every: 2,
            min_increase: 0.25,
            tickets: PathBuf::from(".candor/tickets"),
        }
    }
}

/// `[reliability]`, resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct ReliabilityConfig {
    /// The reliability file, relative to the repository root.
    pub file: PathBuf,
    /// The tier machine's policy.
    pub tiers: TierPolicy,
    /// `branches`: the branches whose runs count; `None` means the default branch.
    pub branches: Option<Vec<BranchPattern>>,
}

/// `[triage]`, resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TriageConfig {
    /// Phrases that, in a summary, must sit in a sentence quoting a ledger line verbatim
    /// (matched case-insensitively).
    pub summary_phrases: Vec<String>,
}

impl Default for TriageConfig {
    fn default() -> Self {
        TriageConfig {
            summary_phrases: crate::ledger::summary::DEFAULT_PHRASES
                .iter()
                .map(|&phrase| phrase.to_owned())
                .collect(),
        }
    }
}

impl Default for Config {
    fn default() -> Self {
        Config::parse(DEFAULT_CONFIG, Path::new("<default candor.toml>"))
            .expect("the embedded default candor.toml is valid")
    }
}

/// A `candor.toml` that cannot be used, located in the file.
#[derive(Debug, thiserror::Error)]
#[error("{}:{line}:{column}: {message}", path.display())]
pub struct ConfigError {
    /// The file.
    pub path: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl ConfigError {
    /// What to do about it.
    pub fn hint(&self) -> String {
        format!(
            "fix {} (the reference is docs/configuration.md; `candor init --print` shows every key with its default)",
            self.path.display()
        )
    }

    fn at(
        path: &Path,
        text: &str,
        span: Option<Range<usize>>,
        message: impl Into<String>,
    ) -> ConfigError {
        let (line, column) = span.map_or((1, 1), |span| line_column(text, span.start));
        ConfigError {
            path: path.to_owned(),
            line,
            column,
            message: message.into(),
        }
    }
}

/// 1-based line and column (in characters) of a byte offset.
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    reliability: Option<Spanned<RawReliability>>,
    #[serde(default)]
    rerun: Option<RawRerun>,
    #[serde(default)]
    triage: Option<RawTriage>,
    #[serde(default)]
    runner: Option<Spanned<RawRunner>>,
    #[serde(default)]
    compare: Option<RawCompare>,
    #[serde(default)]
    runs: Option<RawRuns>,
    /// Read table by table in a second pass, so that errors can name the fingerprint.
    #[serde(default)]
    #[expect(
        dead_code,
        reason = "declared so the key is known; parsed from the document"
    )]
    fingerprint: Option<IgnoredAny>,
    #[serde(default)]
    lane: Option<RawLane>,
    /// Read table by table, like `fingerprint`.
    #[serde(default)]
    #[expect(
        dead_code,
        reason = "declared so the key is known; parsed from the document"
    )]
    freeze: Option<IgnoredAny>,
    /// Read table by table, like `fingerprint`.
    #[serde(default)]
    #[expect(
        dead_code,
        reason = "declared so the key is known; parsed from the document"
    )]
    ban: Option<IgnoredAny>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawReliability {
    file: Option<Spanned<String>>,
    window_runs: Option<Spanned<i64>>,
    flake_budget: Option<Spanned<f64>>,
    promote_after_window: Option<bool>,
    default_tier: Option<Spanned<String>>,
    min_runs: Option<Spanned<i64>>,
    branches: Option<Spanned<Vec<String>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRerun {
    ledger: Option<Spanned<String>>,
    max_attempts_per_change: Option<Spanned<i64>>,
    budget_entries: Option<Spanned<i64>>,
    budget_days: Option<Spanned<i64>>,
    fingerprint_expiry_days: Option<Spanned<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTriage {
    summary_phrases: Option<Vec<Spanned<String>>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRunner {
    kind: Option<Spanned<String>>,
    command: Option<Spanned<Vec<String>>>,
    timeout_seconds: Option<Spanned<i64>>,
    grace_seconds: Option<Spanned<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRuns {
    keep_last: Option<Spanned<i64>>,
    keep_days: Option<Spanned<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCompare {
    runs: Option<Spanned<i64>>,
    alpha: Option<Spanned<f64>>,
    look_every: Option<Spanned<i64>>,
    min_increase: Option<Spanned<f64>>,
    tickets: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFingerprint {
    id: Option<Spanned<String>>,
    test: Option<Spanned<String>>,
    exception: Option<Spanned<String>>,
    message_regex: Option<Spanned<String>>,
    frame: Option<Spanned<String>>,
    conditions: Option<Spanned<RawConditions>>,
    // A value rather than a date type, to tell a quoted date from a bare one by name.
    last_seen: Option<Spanned<toml::Value>>,
    owner: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConditions {
    ci: Option<bool>,
    min_workers: Option<Spanned<i64>>,
    max_workers: Option<Spanned<i64>>,
    runner: Option<Spanned<String>>,
    os: Option<Spanned<String>>,
}

/// The text being parsed and where it came from, to locate errors.
#[derive(Clone, Copy)]
struct Source<'a> {
    path: &'a Path,
    text: &'a str,
}

impl Source<'_> {
    fn error(self, span: Option<Range<usize>>, message: impl Into<String>) -> ConfigError {
        ConfigError::at(self.path, self.text, span, message)
    }

    fn toml_error(self, error: &toml::de::Error, context: &str) -> ConfigError {
        self.error(error.span(), format!("{context}{}", error.message().trim()))
    }

    fn line(self, span: &Range<usize>) -> usize {
        line_column(self.text, span.start).0
    }
}

impl Config {
    /// Reads `candor.toml` at `repo_root`; the defaults when there is none.
    pub fn load(repo_root: &Path) -> Result<Config, ConfigError> {
        let path = repo_root.join(CONFIG_FILE);
        match fs_err::read_to_string(&path) {
            Ok(text) => Config::parse(&text, &path),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
            Err(error) => Err(ConfigError {
                path,
                line: 1,
                column: 1,
                message: format!("cannot read the file: {error}"),
            }),
        }
    }

    /// Parses and validates `text`, read from `path`.
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let source = Source { path, text };
        let document = DeTable::parse(text).map_err(|e| source.toml_error(&e, ""))?;
        let fingerprint_tables = document.get_ref().get("fingerprint").cloned();
        let freeze_tables = document.get_ref().get("freeze").cloned();
        let ban_tables = document.get_ref().get("ban").cloned();
        let raw = RawConfig::deserialize(toml::de::Deserializer::from(document))
            .map_err(|e| source.toml_error(&e, ""))?;
        let reliability = resolve_reliability(source, raw.reliability)?;
        let rerun = resolve_rerun(source, raw.rerun)?;
        let triage = resolve_triage(source, raw.triage)?;
        let runner = resolve_runner(source, raw.runner)?;
        let compare = resolve_compare(source, raw.compare)?;
        let runs = resolve_runs(source, raw.runs)?;
        let fingerprints = match fingerprint_tables {
            Some(tables) => resolve_fingerprints(source, tables)?,
            None => Vec::new(),
        };
        let lane = resolve_lane(source, raw.lane)?;
        let freezes = match freeze_tables {
            Some(tables) => resolve_freezes(source, tables)?,
            None => Vec::new(),
        };
        let bans = match ban_tables {
            Some(tables) => resolve_bans(source, tables)?,
            None => Vec::new(),
        };
        Ok(Config {
            path: Some(path.to_owned()),
            reliability,
            rerun,
            triage,
            runner,
            fingerprints,
            compare,
            lane,
            freezes,
            bans,
            runs,
        })
    }
}

fn resolve_runs(source: Source<'_>, raw: Option<RawRuns>) -> Result<RunsConfig, ConfigError> {
    let mut runs = RunsConfig::default();
    let Some(raw) = raw else {
        return Ok(runs);
    };
    if let Some(value) = raw.keep_last {
        runs.keep_last = positive(source, "runs.keep_last", &value)?;
    }
    if let Some(value) = raw.keep_days {
        runs.keep_days = positive(source, "runs.keep_days", &value)?;
    }
    Ok(runs)
}

fn resolve_reliability(
    source: Source<'_>,
    raw: Option<Spanned<RawReliability>>,
) -> Result<ReliabilityConfig, ConfigError> {
    let mut tiers = TierPolicy::default();
    let mut file = PathBuf::from(".ci/test-reliability.yaml");
    let mut branches = None;
    if let Some(reliability) = raw {
        let reliability = reliability.into_inner();
        if let Some(value) = reliability.branches {
            branches = Some(branch_patterns(source, &value)?);
        }
        if let Some(value) = reliability.file {
            file = repository_path(source, "reliability.file", &value)?;
        }
        if let Some(value) = reliability.window_runs {
            tiers.window_runs = positive(source, "reliability.window_runs", &value)?;
        }
        if let Some(value) = reliability.min_runs {
            tiers.min_runs = positive(source, "reliability.min_runs", &value)?;
        }
        if let Some(value) = reliability.flake_budget {
            let budget = *value.get_ref();
            if !(0.0..1.0).contains(&budget) {
                return Err(source.error(
                    Some(value.span()),
                    format!(
                        "`reliability.flake_budget` is {budget}: it is a share of failing runs, at least 0 and below 1 (0.02 means 2%)"
                    ),
                ));
            }
            tiers.flake_budget = budget;
        }
        if let Some(value) = reliability.promote_after_window {
            tiers.promote_after_window = value;
        }
        if let Some(value) = reliability.default_tier {
            tiers.default_tier = Tier::from_str_opt(value.get_ref()).ok_or_else(|| {
                source.error(
                    Some(value.span()),
                    format!(
                        "`reliability.default_tier` is {:?}: expected \"trusted\", \"probation\" or \"quarantined\"",
                        value.get_ref()
                    ),
                )
            })?;
        }
    }
    if tiers.min_runs > tiers.window_runs {
        return Err(source.error(
            None,
            format!(
                "`reliability.min_runs` ({}) is larger than `reliability.window_runs` ({}): no test could ever be judged",
                tiers.min_runs, tiers.window_runs
            ),
        ));
    }
    Ok(ReliabilityConfig {
        file,
        tiers,
        branches,
    })
}

/// `reliability.branches`: at least one name or glob, each one valid.
fn branch_patterns(
    source: Source<'_>,
    value: &Spanned<Vec<String>>,
) -> Result<Vec<BranchPattern>, ConfigError> {
    if value.get_ref().is_empty() {
        return Err(source.error(
            Some(value.span()),
            "`reliability.branches` is empty: no run would count and every tier would go stale; name at least one branch (\"main\") or remove the key to count the default branch".to_owned(),
        ));
    }
    value
        .get_ref()
        .iter()
        .map(|text| {
            if text.trim().is_empty() {
                return Err(source.error(
                    Some(value.span()),
                    "`reliability.branches` holds an empty name".to_owned(),
                ));
            }
            BranchPattern::new(text).map_err(|error| {
                source.error(
                    Some(value.span()),
                    format!("`reliability.branches` entry {text:?} is not a valid glob: {error}"),
                )
            })
        })
        .collect()
}

fn resolve_rerun(source: Source<'_>, raw: Option<RawRerun>) -> Result<RerunConfig, ConfigError> {
    let mut rerun = RerunConfig::default();
    let Some(raw) = raw else {
        return Ok(rerun);
    };
    if let Some(value) = raw.ledger {
        rerun.ledger = repository_path(source, "rerun.ledger", &value)?;
    }
    let numbers = [
        (
            "rerun.max_attempts_per_change",
            raw.max_attempts_per_change,
            &mut rerun.max_attempts_per_change,
        ),
        (
            "rerun.budget_entries",
            raw.budget_entries,
            &mut rerun.budget_entries,
        ),
        ("rerun.budget_days", raw.budget_days, &mut rerun.budget_days),
        (
            "rerun.fingerprint_expiry_days",
            raw.fingerprint_expiry_days,
            &mut rerun.fingerprint_expiry_days,
        ),
    ];
    for (key, value, target) in numbers {
        if let Some(value) = value {
            *target = positive(source, key, &value)?;
        }
    }
    Ok(rerun)
}

fn resolve_compare(
    source: Source<'_>,
    raw: Option<RawCompare>,
) -> Result<CompareConfig, ConfigError> {
    let mut compare = CompareConfig::default();
    let Some(raw) = raw else {
        return Ok(compare);
    };
    if let Some(value) = raw.runs {
        compare.runs = positive(source, "compare.runs", &value)?;
        if compare.runs > CompareConfig::MAX_RUNS {
            return Err(source.error(
                Some(value.span()),
                format!(
                    "`compare.runs` is {}: at most {} runs per side",
                    compare.runs,
                    CompareConfig::MAX_RUNS
                ),
            ));
        }
    }
    if let Some(value) = raw.look_every {
        compare.look_every = positive(source, "compare.look_every", &value)?;
    }
    if compare.look_every > compare.runs {
        return Err(source.error(
            None,
            format!(
                "`compare.look_every` is {} but `compare.runs` is {}: looks come at most every `runs` runs",
                compare.look_every, compare.runs
            ),
        ));
    }
    if let Some(value) = raw.alpha {
        let alpha = *value.get_ref();
        if !(alpha > 0.0 && alpha <= 0.5) {
            return Err(source.error(
                Some(value.span()),
                format!("`compare.alpha` is {alpha}: it must be above 0 and at most 0.5"),
            ));
        }
        compare.alpha = alpha;
    }
    if let Some(value) = raw.min_increase {
        let increase = *value.get_ref();
        if !(increase > 0.0 && increase <= 1.0) {
            return Err(source.error(
                Some(value.span()),
                format!("`compare.min_increase` is {increase}: it must be above 0 and at most 1"),
            ));
        }
        compare.min_increase = increase;
    }
    if let Some(value) = raw.tickets {
        let path = repository_path(source, "compare.tickets", &value)?;
        compare.tickets = path;
    }
    Ok(compare)
}

fn resolve_triage(source: Source<'_>, raw: Option<RawTriage>) -> Result<TriageConfig, ConfigError> {
    let mut triage = TriageConfig::default();
    if let Some(phrases) = raw.and_then(|raw| raw.summary_phrases) {
        triage.summary_phrases = phrases
            .into_iter()
            .map(|phrase| {
                if phrase.get_ref().trim().is_empty() {
                    Err(source.error(
                        Some(phrase.span()),
                        "`triage.summary_phrases` holds an empty phrase, which every sentence would contain",
                    ))
                } else {
                    Ok(phrase.into_inner())
                }
            })
            .collect::<Result<_, _>>()?;
    }
    Ok(triage)
}

fn resolve_runner(
    source: Source<'_>,
    raw: Option<Spanned<RawRunner>>,
) -> Result<RunnerConfig, ConfigError> {
    let Some(raw) = raw else {
        return Ok(RunnerConfig::default());
    };
    let span = raw.span();
    let raw = raw.into_inner();
    let kind = raw
        .kind
        .map(|kind| {
            RunnerKind::from_str_opt(kind.get_ref()).ok_or_else(|| {
                source.error(
                    Some(kind.span()),
                    format!(
                        "`runner.kind` is {:?}: expected one of {} (or leave it out to detect the runner)",
                        kind.get_ref(),
                        RunnerKind::ALL.map(|k| format!("\"{k}\"")).join(", ")
                    ),
                )
            })
        })
        .transpose()?;
    let command = raw
        .command
        .map(|command| {
            let program_missing = command.get_ref().first().is_none_or(|p| p.trim().is_empty());
            if program_missing {
                Err(source.error(
                    Some(command.span()),
                    "`runner.command` must start with the program to run, as in [\"python3\", \"-m\", \"pytest\"]",
                ))
            } else {
                Ok(command.into_inner())
            }
        })
        .transpose()?;
    if kind == Some(RunnerKind::Command) && command.is_none() {
        return Err(source.error(
            Some(span),
            "`runner.kind = \"command\"` needs `command`, an argv template with {test} and {report} placeholders",
        ));
    }
    let mut config = RunnerConfig {
        kind,
        command,
        ..RunnerConfig::default()
    };
    if let Some(value) = raw.timeout_seconds {
        config.timeout = Duration::from_secs(positive(source, "runner.timeout_seconds", &value)?);
    }
    if let Some(value) = raw.grace_seconds {
        config.grace = Duration::from_secs(positive(source, "runner.grace_seconds", &value)?);
    }
    Ok(config)
}

/// Every field a `[[fingerprint]]` must name: a fingerprint is an exact shape, and a
/// missing field would silently widen it.
const FINGERPRINT_FIELDS: &str =
    "id, test, exception, message_regex, frame, conditions, last_seen and owner";

fn resolve_fingerprints(
    source: Source<'_>,
    tables: Spanned<DeValue<'_>>,
) -> Result<Vec<Fingerprint>, ConfigError> {
    let span = tables.span();
    let DeValue::Array(tables) = tables.into_inner() else {
        return Err(source.error(
            Some(span),
            "`fingerprint` must be a list of tables: give each fingerprint its own [[fingerprint]] header",
        ));
    };
    let mut fingerprints: Vec<Fingerprint> = Vec::with_capacity(tables.len());
    let mut first_line_of: HashMap<String, usize> = HashMap::new();
    for (index, table) in tables.into_iter().enumerate() {
        let span = table.span();
        let name = fingerprint_name(&table, index);
        let raw = RawFingerprint::deserialize(ValueDeserializer::from(table))
            .map_err(|e| source.toml_error(&e, &format!("{name}: ")))?;
        let id_span = raw.id.as_ref().map(Spanned::span);
        let fingerprint = resolve_fingerprint(source, &name, span, raw)?;
        if let Some(first) = first_line_of.get(&fingerprint.id) {
            return Err(source.error(
                id_span,
                format!(
                    "fingerprint {} is declared twice (first at line {first}): ids name ledger lines and must be unique",
                    fingerprint.id
                ),
            ));
        }
        first_line_of.insert(fingerprint.id.clone(), fingerprint.line);
        fingerprints.push(fingerprint);
    }
    Ok(fingerprints)
}

/// `fingerprint FP-001`, or `fingerprint #2` when it has no usable id.
fn fingerprint_name(table: &Spanned<DeValue<'_>>, index: usize) -> String {
    match table
        .get_ref()
        .get("id")
        .and_then(|id| id.get_ref().as_str())
    {
        Some(id) if !id.trim().is_empty() => format!("fingerprint {id}"),
        _ => format!("fingerprint #{}", index + 1),
    }
}

fn resolve_fingerprint(
    source: Source<'_>,
    name: &str,
    span: Range<usize>,
    raw: RawFingerprint,
) -> Result<Fingerprint, ConfigError> {
    let required = |field: &str| {
        source.error(
            Some(span.clone()),
            format!(
                "{name} has no `{field}`: every fingerprint names {FINGERPRINT_FIELDS} (`conditions = {{}}` matches any run)"
            ),
        )
    };
    let required_text = |field: &str, value: Option<Spanned<String>>| {
        let value = value.ok_or_else(|| required(field))?;
        exact_text(source, name, field, value)
    };
    let id = required_text("id", raw.id)?;
    if id.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(source.error(
            Some(span.clone()),
            format!("{name}: `id` has a space or control character in it; ids go into ledger lines, so they are one word"),
        ));
    }
    let test = required_text("test", raw.test)?;
    let exception = required_text("exception", raw.exception)?;
    let pattern = raw.message_regex.ok_or_else(|| required("message_regex"))?;
    let message = MessagePattern::new(pattern.get_ref()).map_err(|error| {
        source.error(
            Some(pattern.span()),
            format!(
                "{name}: `message_regex` is not a valid regular expression: {}",
                regex_error_line(&error)
            ),
        )
    })?;
    let frame = required_text("frame", raw.frame)?;
    let conditions = raw.conditions.ok_or_else(|| required("conditions"))?;
    let conditions = resolve_conditions(source, name, conditions)?;
    let last_seen = raw.last_seen.ok_or_else(|| required("last_seen"))?;
    let last_seen = toml_date(source, name, &last_seen)?;
    let owner = required_text("owner", raw.owner)?;
    Ok(Fingerprint {
        id,
        test,
        exception,
        message,
        frame,
        conditions,
        last_seen,
        owner,
        line: source.line(&span),
    })
}

/// A string compared exactly: empty or padded with spaces, it could never match what was
/// meant.
fn exact_text(
    source: Source<'_>,
    name: &str,
    field: &str,
    value: Spanned<String>,
) -> Result<String, ConfigError> {
    let text = value.get_ref();
    if text.trim().is_empty() {
        return Err(source.error(Some(value.span()), format!("{name}: `{field}` is empty")));
    }
    if text.trim() != text {
        return Err(source.error(
            Some(value.span()),
            format!("{name}: `{field}` has spaces at its ends, and it is compared exactly"),
        ));
    }
    Ok(value.into_inner())
}

/// The regex crate's message without its multi-line drawing of the pattern.
fn regex_error_line(error: &regex::Error) -> String {
    let text = error.to_string();
    let last = text.lines().rev().find(|line| !line.trim().is_empty());
    last.map_or(text.clone(), |line| {
        line.trim().trim_start_matches("error: ").to_owned()
    })
}

fn resolve_conditions(
    source: Source<'_>,
    name: &str,
    raw: Spanned<RawConditions>,
) -> Result<FingerprintConditions, ConfigError> {
    let span = raw.span();
    let raw = raw.into_inner();
    let workers = |key: &str, value: Option<Spanned<i64>>| {
        value
            .map(|value| {
                positive::<u32>(source, &format!("conditions.{key}"), &value).map_err(|mut e| {
                    e.message = format!("{name}: {}", e.message);
                    e
                })
            })
            .transpose()
    };
    let min_workers = workers("min_workers", raw.min_workers)?;
    let max_workers = workers("max_workers", raw.max_workers)?;
    if let (Some(min), Some(max)) = (min_workers, max_workers)
        && min > max
    {
        return Err(source.error(
            Some(span),
            format!("{name}: conditions.min_workers ({min}) is above conditions.max_workers ({max}): no run could match"),
        ));
    }
    let word = |key: &str, value: Option<Spanned<String>>| {
        value
            .map(|value| exact_text(source, name, &format!("conditions.{key}"), value))
            .transpose()
    };
    Ok(FingerprintConditions {
        ci: raw.ci,
        min_workers,
        max_workers,
        runner: word("runner", raw.runner)?,
        os: word("os", raw.os)?,
    })
}

/// A bare TOML date (`2026-10-07`): a quoted one or one with a time is refused by name.
fn toml_date(
    source: Source<'_>,
    name: &str,
    value: &Spanned<toml::Value>,
) -> Result<Date, ConfigError> {
    let refuse = |what: &str| {
        source.error(
            Some(value.span()),
            format!("{name}: `last_seen` is {what}: write a bare TOML date, without quotes or a time, like last_seen = 2026-10-07"),
        )
    };
    let toml::Value::Datetime(datetime) = value.get_ref() else {
        return Err(refuse(&format!("a {}", value.get_ref().type_str())));
    };
    let (Some(date), None, None) = (datetime.date, datetime.time, datetime.offset) else {
        return Err(refuse("a date with a time"));
    };
    Date::new(
        i16::try_from(date.year).map_err(|_| refuse("out of range"))?,
        i8::try_from(date.month).map_err(|_| refuse("out of range"))?,
        i8::try_from(date.day).map_err(|_| refuse("out of range"))?,
    )
    .map_err(|_| refuse("not a calendar date"))
}

fn positive<T: TryFrom<i64> + PartialOrd + From<u8>>(
    source: Source<'_>,
    key: &str,
    value: &Spanned<i64>,
) -> Result<T, ConfigError> {
    let number = *value.get_ref();
    T::try_from(number)
        .ok()
        .filter(|n| *n > T::from(0))
        .ok_or_else(|| {
            let why = if number > 0 {
                "it is too large"
            } else {
                "it must be a whole number above 0"
            };
            source.error(Some(value.span()), format!("`{key}` is {number}: {why}"))
        })
}

/// A path inside the repository: relative, without `..`, and not empty. The lane compares
/// such paths with the ones git reports, so `./` and repeated slashes are dropped.
fn repository_path(
    source: Source<'_>,
    key: &str,
    value: &Spanned<String>,
) -> Result<PathBuf, ConfigError> {
    use std::path::Component;
    let text = value.get_ref();
    let path = Path::new(text);
    let mut clean = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => clean.push(part),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(source.error(
                    Some(value.span()),
                    format!(
                        "`{key}` is {text:?}: it must be a path inside the repository, relative to its root, without `..`"
                    ),
                ));
            }
        }
    }
    if clean.as_os_str().is_empty() || text.trim() != text {
        return Err(source.error(
            Some(value.span()),
            format!("`{key}` is {text:?}: give a path relative to the repository root"),
        ));
    }
    Ok(clean)
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(text, Path::new("candor.toml"))
    }

    #[test]
    fn the_default_parses_with_no_unknown_keys_and_matches_the_built_in_policy() {
        // deny_unknown_fields makes any key the code does not read an error here.
        let config = parse(DEFAULT_CONFIG).expect("default parses");
        assert_eq!(config.reliability.tiers, TierPolicy::default());
        assert_eq!(
            config.reliability.file,
            PathBuf::from(".ci/test-reliability.yaml")
        );
        assert_eq!(config.rerun, RerunConfig::default());
        assert_eq!(config.triage, TriageConfig::default());
        assert!(config.fingerprints.is_empty());
        assert_eq!(parse("").unwrap().rerun, RerunConfig::default());
    }

    /// Issue 12 item 5: `[reliability] branches` takes names and globs; an empty list or
    /// a broken glob is refused with its line.
    #[test]
    fn reliability_branches_are_checked() {
        assert!(parse("").unwrap().reliability.branches.is_none());
        let config = parse("[reliability]\nbranches = [\"main\", \"release/*\"]\n").unwrap();
        let branches = config.reliability.branches.expect("branches");
        assert!(branches[1].matches("release/2.0") && !branches[1].matches("main"));
        let empty = parse("[reliability]\nbranches = []\n")
            .unwrap_err()
            .to_string();
        assert!(
            empty.contains("candor.toml:2:") && empty.contains("is empty"),
            "{empty}"
        );
        let broken = parse("[reliability]\nbranches = [\"release/[\"]\n")
            .unwrap_err()
            .to_string();
        assert!(broken.contains("is not a valid glob"), "{broken}");
    }

    /// The default file's commented `[[fingerprint]]` example, uncommented.
    fn example_fingerprint() -> String {
        let start = DEFAULT_CONFIG
            .find("# [[fingerprint]]")
            .expect("the default shows a fingerprint");
        DEFAULT_CONFIG[start..]
            .lines()
            .map(|line| line.strip_prefix("# ").unwrap_or(line))
            .collect::<Vec<_>>()
            .join("\n")
            + "\n"
    }

    #[test]
    fn the_commented_fingerprint_example_is_valid() {
        let config = parse(&example_fingerprint()).expect("the example parses");
        let [fingerprint] = config.fingerprints.as_slice() else {
            panic!("one fingerprint: {:?}", config.fingerprints);
        };
        assert_eq!(fingerprint.id, "FP-001");
        assert_eq!(fingerprint.frame, "tests/payments/conftest.py:88");
        assert_eq!(fingerprint.last_seen, Date::constant(2026, 10, 7));
        assert_eq!(fingerprint.conditions.min_workers, Some(4));
        assert_eq!(fingerprint.conditions.ci, Some(true));
        assert_eq!(fingerprint.line, 1);
        assert!(
            fingerprint
                .message
                .matches_whole("Timed out after 0.0s waiting for webhook stub on port 0")
        );
    }

    fn with_example(from: &str, to: &str) -> String {
        let example = example_fingerprint();
        assert!(example.contains(from), "{from}");
        format!(
            "[rerun]\nbudget_days = 7\n\n{}",
            example.replacen(from, to, 1)
        )
    }

    #[test]
    fn fingerprint_errors_name_the_fingerprint_and_the_line() {
        // The example starts at line 4 here: its `id` is line 5, `frame` line 9.
        let error = parse(&with_example("frame =", "framee =")).unwrap_err();
        assert_eq!(error.line, 9);
        assert!(
            error
                .message
                .starts_with("fingerprint FP-001: unknown field `framee`"),
            "{}",
            error.message
        );
        let error = parse(&with_example(
            "frame = \"tests/payments/conftest.py:88\"\n",
            "",
        ))
        .unwrap_err();
        assert_eq!(error.line, 4, "the fingerprint's header");
        assert!(
            error
                .message
                .starts_with("fingerprint FP-001 has no `frame`"),
            "{}",
            error.message
        );
        let error = parse(&with_example("(\\.\\d+)?", "(\\.\\d+?")).unwrap_err();
        assert_eq!(error.line, 8);
        assert!(
            error
                .message
                .contains("FP-001: `message_regex` is not a valid regular expression"),
            "{}",
            error.message
        );
        assert!(!error.message.contains('\n'), "{}", error.message);
        let error = parse(&with_example("ci = true", "ci = true, gpu = 1")).unwrap_err();
        assert_eq!(error.line, 10);
        assert!(
            error.message.contains("FP-001: unknown field `gpu`"),
            "{}",
            error.message
        );
        let error = parse(&with_example("2026-10-07", "\"2026-10-07\"")).unwrap_err();
        assert_eq!(error.line, 11);
        assert!(
            error.message.contains("bare TOML date"),
            "{}",
            error.message
        );
        let error = parse(&with_example("2026-10-07", "2026-10-07T08:00:00Z")).unwrap_err();
        assert!(error.message.contains("with a time"), "{}", error.message);
        let error = parse(&with_example("max_workers = 16", "max_workers = 2")).unwrap_err();
        assert!(
            error.message.contains("min_workers (4) is above"),
            "{}",
            error.message
        );
        let error = parse(&with_example("min_workers = 4", "min_workers = 0")).unwrap_err();
        assert!(
            error
                .message
                .starts_with("fingerprint FP-001: `conditions.min_workers` is 0"),
            "{}",
            error.message
        );
        let error = parse(&with_example("\"TimeoutError\"", "\" TimeoutError\"")).unwrap_err();
        assert!(
            error.message.contains("spaces at its ends"),
            "{}",
            error.message
        );
        let error = parse(&with_example("id = \"FP-001\"\n", "")).unwrap_err();
        assert!(
            error.message.starts_with("fingerprint #1 has no `id`"),
            "{}",
            error.message
        );
        let error = parse(&with_example("\"FP-001\"", "\"FP 001\"")).unwrap_err();
        assert!(error.message.contains("one word"), "{}", error.message);
    }

    #[test]
    fn fingerprint_ids_are_unique_and_fingerprints_are_tables() {
        let example = example_fingerprint();
        let twice = format!("{example}\n{example}");
        let error = parse(&twice).unwrap_err();
        let second_id_line = example.lines().count() + 3;
        assert_eq!(error.line, second_id_line);
        assert!(
            error
                .message
                .contains("FP-001 is declared twice (first at line 1)"),
            "{}",
            error.message
        );
        let renamed = format!("{example}\n{}", example.replace("FP-001", "FP-002"));
        assert_eq!(parse(&renamed).unwrap().fingerprints.len(), 2);
        let error = parse("[fingerprint]\nid = \"FP-1\"\n").unwrap_err();
        assert!(
            error.message.contains("[[fingerprint]]"),
            "{}",
            error.message
        );
        let error = parse("[[fingerprints]]\nid = \"FP-1\"\n").unwrap_err();
        assert!(error.message.contains("fingerprints"), "{}", error.message);
    }

    #[test]
    fn compare_is_validated_and_keeps_tickets_inside_the_repository() {
        let config = parse("[compare]\nruns = 40\nlook_every = 10\nalpha = 0.01\n").unwrap();
        assert_eq!((config.compare.runs, config.compare.look_every), (40, 10));
        for (text, expected) in [
            (
                "[compare]\nruns = 61\n",
                "candor.toml:2:8: `compare.runs` is 61: at most 60",
            ),
            (
                "[compare]\nalpha = 0.9\n",
                "candor.toml:2:9: `compare.alpha` is 0.9",
            ),
            (
                "[compare]\nruns = 5\nlook_every = 6\n",
                "`compare.look_every` is 6",
            ),
            (
                "[compare]\ntickets = \"../elsewhere\"\n",
                "candor.toml:2:11: `compare.tickets` is \"../elsewhere\": it must be a path inside",
            ),
            (
                "[compare]\ntickets = \"/tmp/t\"\n",
                "`compare.tickets` is \"/tmp/t\": it must be a path inside",
            ),
        ] {
            let error = parse(text).unwrap_err().to_string();
            assert!(error.contains(expected), "{text:?}: {error}");
        }
    }

    /// #14 item 8: every configured path is relative, without `..`; the error names the
    /// key and the file's line.
    #[test]
    fn every_configured_path_stays_inside_the_repository() {
        for (section, key) in [
            ("reliability", "file"),
            ("rerun", "ledger"),
            ("compare", "tickets"),
            ("lane", "fixtures"),
            ("lane", "lockfile"),
            ("lane", "cassettes"),
            ("lane", "cassette_lock"),
            ("lane", "oracle"),
        ] {
            for bad in [
                "../outside.tsv",
                "/tmp/outside.tsv",
                "a/../../outside",
                "",
                "./",
            ] {
                let text = format!("# policy\n[{section}]\n{key} = {bad:?}\n");
                let error = parse(&text).expect_err(&text).to_string();
                assert!(
                    error.starts_with("candor.toml:3:")
                        && error.contains(&format!("`{section}.{key}`")),
                    "{text:?}: {error}"
                );
            }
            let fine = format!("[{section}]\n{key} = \"ci/inside.txt\"\n");
            assert!(parse(&fine).is_ok(), "{fine}");
        }
    }

    #[test]
    fn rerun_and_triage_are_validated() {
        let config = parse("[rerun]\nmax_attempts_per_change = 1\nbudget_entries = 5\nbudget_days = 14\nfingerprint_expiry_days = 30\nledger = \"ci/ledger.tsv\"\n[triage]\nsummary_phrases = [\"green on retry\"]\n").unwrap();
        assert_eq!(
            config.rerun,
            RerunConfig {
                ledger: PathBuf::from("ci/ledger.tsv"),
                max_attempts_per_change: 1,
                budget_entries: 5,
                budget_days: 14,
                fingerprint_expiry_days: 30,
            }
        );
        assert_eq!(config.triage.summary_phrases, ["green on retry"]);
        let error = parse("[rerun]\n\nbudget_days = 0\n").unwrap_err();
        assert_eq!(error.line, 3);
        assert!(
            error.message.contains("`rerun.budget_days` is 0"),
            "{}",
            error.message
        );
        let error = parse("[rerun]\nfingerprint_expiry_days = 99999999999\n").unwrap_err();
        assert!(error.message.contains("too large"), "{}", error.message);
        let error = parse("[rerun]\nbudget_entires = 3\n").unwrap_err();
        assert_eq!(error.line, 2);
        assert!(
            error.message.contains("budget_entires"),
            "{}",
            error.message
        );
        let error = parse("[triage]\nsummary_phrases = [\"ok\", \" \"]\n").unwrap_err();
        assert!(error.message.contains("empty phrase"), "{}", error.message);
    }

    #[test]
    fn runner_kind_and_command_are_validated() {
        let config =
            parse("[runner]\nkind = \"pytest\"\ncommand = [\"uv\", \"run\", \"pytest\"]\n")
                .unwrap();
        assert_eq!(
            config.runner,
            RunnerConfig {
                kind: Some(RunnerKind::Pytest),
                command: Some(vec!["uv".into(), "run".into(), "pytest".into()]),
                ..RunnerConfig::default()
            }
        );
        assert_eq!(parse("").unwrap().runner, RunnerConfig::default());
        let error = parse("[runner]\nkind = \"karma\"\n").unwrap_err();
        assert_eq!(error.line, 2);
        assert!(error.message.contains("\"karma\""), "{}", error.message);
        assert!(error.message.contains("\"jest\""), "{}", error.message);
        let limited = parse("[runner]\ntimeout_seconds = 90\ngrace_seconds = 2\n").unwrap();
        assert_eq!(limited.runner.timeout, Duration::from_secs(90));
        assert_eq!(limited.runner.grace, Duration::from_secs(2));
        let error = parse("[runner]\n\ntimeout_seconds = 0\n").unwrap_err();
        assert_eq!(error.line, 3);
        let error = parse("[runner]\ncommand = []\n").unwrap_err();
        assert!(error.message.contains("program"), "{}", error.message);
        let error = parse("[runner]\nkind = \"command\"\n").unwrap_err();
        assert!(
            error.message.contains("needs `command`"),
            "{}",
            error.message
        );
        let error = parse("[runner]\nkinds = \"go\"\n").unwrap_err();
        assert!(error.message.contains("kinds"), "{}", error.message);
    }

    #[test]
    fn unknown_keys_are_named_with_their_line() {
        let error = parse("[reliability]\nwindow_runs = 100\nflake_budjet = 0.1\n").unwrap_err();
        assert_eq!((error.line, error.column), (3, 1));
        assert!(error.message.contains("flake_budjet"), "{}", error.message);
        let error = parse("[reliabilty]\n").unwrap_err();
        assert!(error.message.contains("reliabilty"), "{}", error.message);
    }

    #[test]
    fn out_of_range_values_point_at_their_line() {
        let error = parse("[reliability]\n\nflake_budget = 1.5\n").unwrap_err();
        assert_eq!(error.line, 3);
        assert!(error.message.contains("flake_budget"));
        let error = parse("[reliability]\nwindow_runs = -4\n").unwrap_err();
        assert_eq!(error.line, 2);
        let error = parse("[reliability]\ndefault_tier = \"gold\"\n").unwrap_err();
        assert_eq!(error.line, 2);
        assert!(error.message.contains("gold"));
        let error = parse("[reliability]\nwindow_runs = 10\nmin_runs = 20\n").unwrap_err();
        assert!(error.message.contains("min_runs"));
    }

    /// The default file's commented example that starts with `header`, uncommented.
    pub(super) fn example_block(header: &str) -> String {
        let start = DEFAULT_CONFIG.find(header).expect("the default shows it");
        DEFAULT_CONFIG[start..]
            .lines()
            .take_while(|line| !line.trim().is_empty())
            .map(|line| line.strip_prefix("# ").unwrap_or(line))
            .collect::<Vec<_>>()
            .join("\n")
            + "\n"
    }

    proptest::proptest! {
        #![proptest_config(crate::test_support::proptest_config(256))]

        /// Any damage to a valid fingerprint is an error with a line inside the file, or
        /// still a valid file; never a panic.
        #[test]
        fn damaged_fingerprints_never_panic(
            cut in 0usize..400,
            insert in r#"(\PC|[\n\[\]{}="']){0,12}"#,
        ) {
            let example = example_fingerprint();
            let mut at = cut.min(example.len());
            while !example.is_char_boundary(at) {
                at -= 1;
            }
            let text = format!("{}{insert}{}", &example[..at], &example[at..]);
            if let Err(error) = parse(&text) {
                proptest::prop_assert!(error.line >= 1 && error.line <= text.lines().count() + 1);
            }
        }
    }

    #[test]
    fn bad_toml_is_located() {
        let error = parse("[reliability\n").unwrap_err();
        assert_eq!(error.line, 1);
        assert!(error.to_string().starts_with("candor.toml:1:"));
    }

    #[test]
    fn line_column_counts_characters() {
        assert_eq!(line_column("ab\ncdé\nf", 7), (2, 4));
        assert_eq!(line_column("ab\ncdé\nf", 8), (3, 1));
        assert_eq!(line_column("", 0), (1, 1));
    }
}
