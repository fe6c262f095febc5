//! `.ci/test-reliability.yaml`: reading the previous file (strictly, with line numbers) and
//! rendering the next one byte for byte the same from the same input.
//!
//! Computed fields are candor's and are overwritten; `tier` is both (the machine moves it,
//! a human may set it by PR); `owner`, `ticket`, `note` and any field candor does not
//! know are the humans' and are carried over untouched.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use jiff::Timestamp;
use jiff::civil::Date;
use serde::Deserialize;
use serde_yaml_ng::Value;

use super::layout;
use crate::stats::tiers::{Tier, TierPolicy};
use crate::stats::wilson::Interval;

/// The first line of every generated file.
pub const HEADER: &str = "# Generated from CI history by `candor reliability --write`. Edit tier/owner/ticket/note by PR; never hand-edit stats.";

/// Fields candor computes (overwritten on every write) or owns (`id`, `tier`).
pub(super) const MACHINE_FIELDS: [&str; 11] = [
    "id",
    "tier",
    "runs",
    "failures",
    "pass_rate",
    "wilson_95",
    "flips",
    "first_flaky",
    "last_run",
    "tier_since",
    "stale",
];

/// Fields humans own that have a fixed place in the layout.
const HUMAN_FIELDS: [&str; 3] = ["owner", "ticket", "note"];

/// One test's entry.
#[derive(Debug, Clone, PartialEq)]
pub struct TestEntry {
    /// Canonical test id.
    pub id: String,
    /// Its tier.
    pub tier: Tier,
    /// Runs in the window.
    pub runs: u64,
    /// Runs in the window that failed at least once.
    pub failures: u64,
    /// Passing share of the window.
    pub pass_rate: Option<f64>,
    /// Wilson 95% interval of the pass rate.
    pub wilson_95: Option<Interval>,
    /// Pass↔fail changes in run order.
    pub flips: u64,
    /// When flakiness was first confirmed (kept across writes: the earliest wins).
    pub first_flaky: Option<Date>,
    /// Date of the newest run in the window.
    pub last_run: Option<Date>,
    /// The newest run the last tier change was based on.
    pub tier_since: Option<Timestamp>,
    /// No run in the window: listed rather than silently dropped.
    pub stale: bool,
    /// Human fields in layout order (`owner`, `ticket`, `note`), then unknown ones sorted.
    pub human: BTreeMap<String, Value>,
}

impl TestEntry {
    /// A fresh entry with nothing computed yet.
    pub fn new(id: impl Into<String>, tier: Tier) -> TestEntry {
        TestEntry {
            id: id.into(),
            tier,
            runs: 0,
            failures: 0,
            pass_rate: None,
            wilson_95: None,
            flips: 0,
            first_flaky: None,
            last_run: None,
            tier_since: None,
            stale: false,
            human: BTreeMap::new(),
        }
    }
}

/// The file's content.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ReliabilityFile {
    /// Entries sorted by id.
    pub tests: Vec<TestEntry>,
}

/// A reliability file that cannot be used, located in the file.
#[derive(Debug, thiserror::Error)]
#[error("{}:{line}:{column}: {message}", path.display())]
pub struct FileError {
    /// The file.
    pub path: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl FileError {
    /// What to do about it.
    pub fn hint(&self) -> &'static str {
        "fix the line by hand (only tier, owner, ticket and note are meant to be edited) or delete the file to regenerate it from history; it was left untouched"
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    policy: Option<RawPolicy>,
    #[serde(default)]
    tests: Option<Vec<RawEntry>>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
#[expect(
    dead_code,
    reason = "read only to validate: candor.toml is the policy's source"
)]
struct RawPolicy {
    window_runs: Option<u64>,
    flake_budget: Option<f64>,
    promote_after_window: Option<bool>,
    default_tier: Option<Tier>,
    min_runs: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct RawEntry {
    id: String,
    tier: Tier,
    // Computed fields are read so the model is faithful to the file (and a broken one is
    // a broken file); the next evaluation overwrites them.
    #[serde(default)]
    runs: Option<u64>,
    #[serde(default)]
    failures: Option<u64>,
    #[serde(default)]
    pass_rate: Option<f64>,
    #[serde(default)]
    wilson_95: Option<[f64; 2]>,
    #[serde(default)]
    flips: Option<u64>,
    #[serde(default)]
    first_flaky: Option<Date>,
    #[serde(default)]
    last_run: Option<Date>,
    #[serde(default)]
    tier_since: Option<Timestamp>,
    #[serde(default)]
    stale: Option<bool>,
}

impl ReliabilityFile {
    /// Reads the file at `path`; an empty file when it does not exist.
    pub fn load(path: &Path) -> Result<ReliabilityFile, FileError> {
        match fs_err::read_to_string(path) {
            Ok(text) => ReliabilityFile::parse(&text, path),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                Ok(ReliabilityFile::default())
            }
            Err(error) => Err(FileError {
                path: path.to_owned(),
                line: 1,
                column: 1,
                message: format!("cannot read the file: {error}"),
            }),
        }
    }

    /// Parses `text` (read from `path`, for error messages): in candor's own layout line
    /// by line, anything else by the YAML reader (the same content either way).
    pub fn parse(text: &str, path: &Path) -> Result<ReliabilityFile, FileError> {
        if text.trim().is_empty() {
            return Ok(ReliabilityFile::default());
        }
        let (policy, mut tests) = match read_own_layout(text) {
            Some(read) => read,
            None => read_yaml(text, path)?,
        };
        if let Some(budget) = policy.flake_budget
            && !(0.0..1.0).contains(&budget)
        {
            let offset = text.find("flake_budget:").unwrap_or(0);
            let (line, column) = crate::policy::config::line_column(text, offset);
            return Err(FileError {
                path: path.to_owned(),
                line,
                column,
                message: format!("policy.flake_budget {budget} is outside 0..1 (0.02 means 2%)"),
            });
        }
        tests.sort_by(|a, b| a.id.cmp(&b.id));
        if let Some(pair) = tests.windows(2).find(|pair| pair[0].id == pair[1].id) {
            let id = &pair[0].id;
            let offset = text
                .match_indices(id.as_str())
                .nth(1)
                .map_or(0, |(at, _)| at);
            let (line, column) = crate::policy::config::line_column(text, offset);
            return Err(FileError {
                path: path.to_owned(),
                line,
                column,
                message: format!("test {id:?} is listed twice; keep one entry"),
            });
        }
        Ok(ReliabilityFile { tests })
    }

    /// Renders the file: header, policy block, tests sorted by id. The same content gives
    /// the same bytes.
    pub fn render(&self, policy: &TierPolicy) -> String {
        let mut out = String::with_capacity(256 + self.tests.len() * 256);
        out.push_str(HEADER);
        out.push('\n');
        out.push_str("policy:\n");
        let _ = writeln!(out, "  window_runs: {}", policy.window_runs);
        let _ = writeln!(
            out,
            "  flake_budget: {}        # >{}% failures in the window => drop one tier",
            number(policy.flake_budget),
            number(policy.flake_budget * 100.0)
        );
        let _ = writeln!(
            out,
            "  promote_after_window: {} # a full window inside the budget => up one tier",
            policy.promote_after_window
        );
        let _ = writeln!(out, "  default_tier: {}", policy.default_tier);
        let _ = writeln!(out, "  min_runs: {}", policy.min_runs);
        if self.tests.is_empty() {
            out.push_str("tests: []\n");
            return out;
        }
        out.push_str("tests:\n");
        for entry in &self.tests {
            render_entry(&mut out, entry);
        }
        out
    }
}

/// The file read line by line when it is in candor's own layout (the policy block by the
/// YAML reader); `None` leaves it to the YAML reader.
fn read_own_layout(text: &str) -> Option<(RawPolicy, Vec<TestEntry>)> {
    let own = layout::read(text)?;
    Some((read_policy(own.prefix)?, own.tests))
}

/// The policy block of the text before `tests:`, read by the YAML reader; `None` when it is
/// not a plain policy block (the whole file is then the YAML reader's).
fn read_policy(prefix: &str) -> Option<RawPolicy> {
    if prefix.lines().all(|line| line.starts_with('#')) {
        return Some(RawPolicy::default());
    }
    let raw: RawFile = serde_yaml_ng::from_str(prefix).ok()?;
    raw.tests.is_none().then(|| raw.policy.unwrap_or_default())
}

/// The whole file read by the YAML reader: typed first, for errors with a line; then as
/// plain values, to keep the fields candor does not know.
fn read_yaml(text: &str, path: &Path) -> Result<(RawPolicy, Vec<TestEntry>), FileError> {
    let located = |error: serde_yaml_ng::Error| {
        let (line, column) = error.location().map_or((1, 1), |l| (l.line(), l.column()));
        // The location is ours to print, in `path:line:column:` form.
        let message = error.to_string();
        let message = match message.rfind(" at line ") {
            Some(at) if error.location().is_some() => message[..at].to_owned(),
            _ => message,
        };
        FileError {
            path: path.to_owned(),
            line,
            column,
            message,
        }
    };
    // One document tree at a time, moved rather than copied.
    let raw: RawFile = serde_yaml_ng::from_str(text).map_err(located)?;
    let mut tests: Vec<TestEntry> = raw
        .tests
        .unwrap_or_default()
        .into_iter()
        .map(|raw| {
            let mut entry = TestEntry::new(raw.id, raw.tier);
            entry.runs = raw.runs.unwrap_or_default();
            entry.failures = raw.failures.unwrap_or_default();
            entry.pass_rate = raw.pass_rate;
            entry.wilson_95 = raw.wilson_95.map(|[low, high]| Interval { low, high });
            entry.flips = raw.flips.unwrap_or_default();
            entry.first_flaky = raw.first_flaky;
            entry.last_run = raw.last_run;
            entry.tier_since = raw.tier_since;
            entry.stale = raw.stale.unwrap_or_default();
            entry
        })
        .collect();
    let mut values: Value = serde_yaml_ng::from_str(text).map_err(located)?;
    let value_tests = values
        .get_mut("tests")
        .and_then(Value::as_sequence_mut)
        .map(std::mem::take)
        .unwrap_or_default();
    drop(values);
    for (entry, value) in tests.iter_mut().zip(value_tests) {
        if let Value::Mapping(mapping) = value {
            for (key, value) in mapping {
                if let Value::String(key) = key
                    && !MACHINE_FIELDS.contains(&key.as_str())
                {
                    entry.human.insert(key, value);
                }
            }
        }
    }
    Ok((raw.policy.unwrap_or_default(), tests))
}

fn render_entry(out: &mut String, entry: &TestEntry) {
    let _ = writeln!(out, "  - id: {}", scalar(&entry.id));
    let _ = writeln!(out, "    tier: {}", entry.tier);
    let _ = writeln!(out, "    runs: {}", entry.runs);
    let _ = writeln!(out, "    failures: {}", entry.failures);
    if let Some(rate) = entry.pass_rate {
        let _ = writeln!(out, "    pass_rate: {rate:.3}");
    }
    if let Some(interval) = entry.wilson_95 {
        let _ = writeln!(
            out,
            "    wilson_95: [{:.4}, {:.4}]",
            interval.low, interval.high
        );
    }
    let _ = writeln!(out, "    flips: {}", entry.flips);
    if let Some(date) = entry.first_flaky {
        let _ = writeln!(out, "    first_flaky: {date}");
    }
    if let Some(date) = entry.last_run {
        let _ = writeln!(out, "    last_run: {date}");
    }
    if let Some(since) = entry.tier_since {
        let _ = writeln!(out, "    tier_since: {since}");
    }
    if entry.stale {
        out.push_str("    stale: true\n");
    }
    let known = HUMAN_FIELDS
        .iter()
        .filter_map(|k| entry.human.get_key_value(*k));
    let unknown = entry
        .human
        .iter()
        .filter(|(k, _)| !HUMAN_FIELDS.contains(&k.as_str()));
    for (key, value) in known.chain(unknown) {
        render_field(out, key, value);
    }
}

fn render_field(out: &mut String, key: &str, value: &Value) {
    let key = scalar(key);
    match value {
        Value::String(text) => {
            let _ = writeln!(out, "    {key}: {}", scalar(text));
        }
        Value::Mapping(m) if !m.is_empty() => block(out, &key, value),
        Value::Sequence(s) if !s.is_empty() => block(out, &key, value),
        other => {
            let rendered = serde_yaml_ng::to_string(other).unwrap_or_default();
            let _ = writeln!(out, "    {key}: {}", rendered.trim_end());
        }
    }
}

fn block(out: &mut String, key: &str, value: &Value) {
    let _ = writeln!(out, "    {key}:");
    for line in serde_yaml_ng::to_string(value).unwrap_or_default().lines() {
        let _ = writeln!(out, "      {line}");
    }
}

/// A string as a one-line YAML scalar: plain when YAML would read it back unchanged,
/// otherwise double-quoted (JSON's string syntax is valid YAML).
fn scalar(text: &str) -> String {
    let plain = serde_yaml_ng::to_string(text).unwrap_or_default();
    let plain = plain.strip_suffix('\n').unwrap_or(&plain);
    if !plain.contains('\n') && !plain.starts_with(['|', '>']) {
        plain.to_owned()
    } else {
        serde_json::to_string(text).unwrap_or_default()
    }
}

/// A float without trailing zeros, the same on every platform.
fn number(value: f64) -> String {
    let text = format!("{value:.6}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text.is_empty() {
        "0".into()
    } else {
        text.to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const SEED_LAYOUT: &str = "# Generated from CI history by `candor reliability --write`. Edit tier/owner/ticket/note by PR; never hand-edit stats.
policy:
  window_runs: 200
  flake_budget: 0.02        # >2% failures in the window => drop one tier
  promote_after_window: true # a full window inside the budget => up one tier
  default_tier: probation
tests:
  - id: services/pool/integration::TestPoolCheckoutUnderLoad
    tier: quarantined
    runs: 200
    failures: 29
    pass_rate: 0.855
    first_flaky: 2026-05-14
    owner: platform
    ticket: PLAT-1182
    note: Checkout deadline too tight for shared runners. Not a known pool defect.
    escalation: {channel: '#platform', after_days: 3}
";

    fn parse(text: &str) -> Result<ReliabilityFile, FileError> {
        ReliabilityFile::parse(text, Path::new(".ci/test-reliability.yaml"))
    }

    fn arbitrary_entry() -> impl Strategy<Value = TestEntry> {
        let tier = prop_oneof![
            Just(Tier::Quarantined),
            Just(Tier::Probation),
            Just(Tier::Trusted)
        ];
        let human = prop::collection::btree_map(
            "[a-z_]{1,8}".prop_filter("not a machine field", |k| {
                !MACHINE_FIELDS.contains(&k.as_str())
            }),
            prop_oneof![
                "\\PC{0,30}".prop_map(Value::String),
                any::<i32>().prop_map(|n| Value::Number(n.into())),
                any::<bool>().prop_map(Value::Bool),
                prop::collection::vec("[a-z#: ]{0,6}".prop_map(Value::String), 1..3)
                    .prop_map(Value::Sequence),
            ],
            0..4,
        );
        (
            "\\PC{1,40}",
            tier,
            0u64..500,
            0u64..500,
            any::<bool>(),
            human,
        )
            .prop_map(|(id, tier, runs, failures, stale, human)| {
                let mut entry = TestEntry::new(id, tier);
                entry.runs = runs;
                entry.pass_rate = (runs > 0).then(|| {
                    ((runs - failures.min(runs)) as f64 / runs as f64 * 1000.0).round() / 1000.0
                });
                entry.wilson_95 = crate::stats::wilson::wilson(
                    runs - failures.min(runs),
                    runs,
                    crate::stats::wilson::Z_95,
                )
                .map(|i| Interval {
                    low: (i.low * 1e4).round() / 1e4,
                    high: (i.high * 1e4).round() / 1e4,
                });
                entry.failures = failures.min(runs);
                entry.flips = failures.min(runs) / 2;
                entry.stale = stale;
                entry.first_flaky = Some(Date::constant(2026, 5, 14));
                entry.tier_since =
                    Some(Timestamp::from_second(1_780_000_000 + runs as i64).unwrap());
                entry.human = human;
                entry
            })
    }

    proptest! {
        #![proptest_config(crate::test_support::proptest_config(128))]

        /// Render, read back, render again: the same bytes, every human field kept.
        #[test]
        fn rendering_is_byte_stable(entries in prop::collection::vec(arbitrary_entry(), 0..6)) {
            let mut file = ReliabilityFile::default();
            for entry in entries {
                if !file.tests.iter().any(|t| t.id == entry.id) {
                    file.tests.push(entry);
                }
            }
            file.tests.sort_by(|a, b| a.id.cmp(&b.id));
            let policy = TierPolicy::default();
            let once = file.render(&policy);
            let back = parse(&once).map_err(|e| TestCaseError::fail(format!("{e}\n{once}")))?;
            prop_assert_eq!(back.render(&policy), once.clone());
            for (before, after) in file.tests.iter().zip(&back.tests) {
                prop_assert_eq!(&before.id, &after.id);
                prop_assert_eq!(&before.human, &after.human, "{}", once);
                prop_assert_eq!(before.tier_since, after.tier_since);
            }
        }
    }

    /// The entries the YAML reader reads from `text`, sorted as `parse` sorts them.
    fn yaml_entries(text: &str) -> Result<Vec<TestEntry>, FileError> {
        let (_, mut tests) = read_yaml(text, Path::new("r"))?;
        tests.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(tests)
    }

    /// The entries read line by line, when the text is in candor's own layout.
    fn own_entries(text: &str) -> Option<Vec<TestEntry>> {
        let (_, mut tests) = read_own_layout(text)?;
        tests.sort_by(|a, b| a.id.cmp(&b.id));
        Some(tests)
    }

    fn rendered(entries: Vec<TestEntry>) -> String {
        let mut file = ReliabilityFile::default();
        for entry in entries {
            if !file.tests.iter().any(|t| t.id == entry.id) {
                file.tests.push(entry);
            }
        }
        file.tests.sort_by(|a, b| a.id.cmp(&b.id));
        file.render(&TierPolicy::default())
    }

    /// Characters that change how YAML reads a line, for ids, values and edits.
    fn tricky(repeat: &str) -> impl Strategy<Value = String> {
        let class = "[-a-z0-9 :#'\"\\\\\\[\\]{}!&*|>%@`,?~.+=<\\t\\n\\x00-\\x08\\x7f\\u{85}\\u{a0}\\u{2028}\\u{feff}\\u{fffe}é]";
        proptest::string::string_regex(&format!("{class}{repeat}")).expect("a valid class")
    }

    proptest! {
        #![proptest_config(crate::test_support::proptest_config(256))]

        /// What candor renders is read line by line, and as the YAML reader reads it.
        #[test]
        fn candor_s_own_layout_is_read_line_by_line_as_the_yaml_reader_reads_it(
            entries in prop::collection::vec(arbitrary_entry(), 0..8)
        ) {
            let entries: Vec<TestEntry> = entries
                .into_iter()
                // YAML reads these as line breaks; the renderer escapes them in a form only
                // the YAML reader reads.
                .filter(|e| !e.id.contains(['\u{2028}', '\u{2029}']))
                .map(|mut e| {
                    // Human keys YAML 1.1 reads as booleans or null are quoted by the
                    // renderer and left to the YAML reader.
                    e.human.retain(|key, value| {
                        !["null", "true", "false", "yes", "no", "on", "off"].contains(&key.as_str())
                            && value.as_str().is_some_and(|s| !s.contains(['\u{2028}', '\u{2029}']))
                    });
                    e
                })
                .collect();
            let text = rendered(entries);
            let own = own_entries(&text);
            prop_assert!(own.is_some(), "not read line by line:\n{}", text);
            prop_assert_eq!(own.unwrap(), yaml_entries(&text).unwrap(), "{}", text);
        }

        /// An edited file (characters, lines) is read line by line only when the YAML
        /// reader reads the same entries from it; anything else is left to the YAML reader.
        #[test]
        fn an_edited_file_is_read_line_by_line_only_as_the_yaml_reader_reads_it(
            entries in prop::collection::vec(arbitrary_entry(), 1..5),
            odd_id in tricky("{1,12}"),
            edits in prop::collection::vec((any::<prop::sample::Index>(), 0usize..3, tricky("{0,3}"), 0u8..4), 1..4),
        ) {
            let mut entries = entries;
            entries.push(TestEntry::new(odd_id, Tier::Trusted));
            let mut text = rendered(entries);
            for (at, remove, insert, kind) in edits {
                let bounds: Vec<usize> = text.char_indices().map(|(i, _)| i).chain([text.len()]).collect();
                let start = bounds[at.index(bounds.len())];
                match kind {
                    // A line copied after itself, or dropped.
                    0 | 1 => {
                        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
                        let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i + 1);
                        let line = text[line_start..line_end].to_owned();
                        if kind == 0 {
                            text.insert_str(line_end, &line);
                        } else {
                            text.replace_range(line_start..line_end, "");
                        }
                    }
                    _ => {
                        let end = bounds[(bounds.binary_search(&start).unwrap() + remove).min(bounds.len() - 1)];
                        text.replace_range(start..end, &insert);
                    }
                }
            }
            if let Some(own) = own_entries(&text) {
                let yaml = yaml_entries(&text);
                prop_assert!(yaml.is_ok(), "read line by line, but the YAML reader says {:?}:\n{}", yaml.err(), text);
                prop_assert_eq!(own, yaml.unwrap(), "{}", text);
            }
        }

        /// A one-line scalar read line by line is the string YAML reads.
        #[test]
        fn a_scalar_read_line_by_line_is_the_string_yaml_reads(value in tricky("{1,10}")) {
            for value in [value.clone(), format!("'{value}'"), format!("\"{value}\"")] {
                if let Some(own) = super::layout::string(&value) {
                    let yaml: Result<Value, _> = serde_yaml_ng::from_str(&format!("k: {value}\n"));
                    prop_assert!(yaml.is_ok(), "{:?}: {:?}", value, yaml.err());
                    let yaml = yaml.unwrap();
                    prop_assert_eq!(yaml.get("k"), Some(&Value::String(own)), "{:?}", value);
                }
            }
        }
    }

    #[test]
    fn hand_edits_in_other_yaml_forms_are_read_by_the_yaml_reader() {
        // A flow mapping in a human field, and a comment in the policy block.
        assert!(super::layout::read(SEED_LAYOUT).is_none());
        let file = parse(SEED_LAYOUT).unwrap();
        assert!(file.tests[0].human.contains_key("escalation"));
        let commented = SEED_LAYOUT.replace("tier: quarantined", "tier: quarantined # PLAT-1182");
        assert!(super::layout::read(&commented).is_none());
        assert_eq!(parse(&commented).unwrap().tests[0].tier, Tier::Quarantined);
        // Without the flow mapping, the same file is candor's own layout.
        let own = SEED_LAYOUT.replace(
            "    escalation: {channel: '#platform', after_days: 3}\n",
            "",
        );
        let read = super::layout::read(&own).expect("candor's own layout");
        assert_eq!(read.tests, parse(&own).unwrap().tests);
        assert_eq!(
            read.tests[0].human["note"],
            Value::String(
                "Checkout deadline too tight for shared runners. Not a known pool defect.".into()
            )
        );
    }

    #[test]
    fn a_file_read_line_by_line_still_fails_on_an_id_listed_twice_and_on_a_bad_budget() {
        let own = "policy:\n  flake_budget: 0.02\ntests:\n  - id: t/a.py::t\n    tier: trusted\n  - id: t/a.py::t\n    tier: probation\n";
        assert!(super::layout::read(own).is_some());
        let error = parse(own).unwrap_err();
        assert!(error.message.contains("listed twice"), "{error}");
        assert_eq!(error.line, 6);
        let budget = own
            .replace("0.02", "1.5")
            .replace("  - id: t/a.py::t\n    tier: probation\n", "");
        assert!(super::layout::read(&budget).is_some());
        assert_eq!(parse(&budget).unwrap_err().line, 2);
        let unknown = own.replace("flake_budget", "flake_bugdet");
        assert!(
            parse(&unknown)
                .unwrap_err()
                .message
                .contains("flake_bugdet")
        );
    }

    #[test]
    fn reads_the_design_layout_keeping_human_and_unknown_fields() {
        let file = parse(SEED_LAYOUT).unwrap();
        let entry = &file.tests[0];
        assert_eq!(entry.tier, Tier::Quarantined);
        assert_eq!(entry.first_flaky, Some(Date::constant(2026, 5, 14)));
        assert_eq!(entry.human["ticket"], Value::String("PLAT-1182".into()));
        assert!(entry.human.contains_key("escalation"));
        assert!(!entry.human.contains_key("runs"));
    }

    #[test]
    fn render_then_parse_keeps_every_human_field_and_is_stable() {
        let file = parse(SEED_LAYOUT).unwrap();
        let policy = TierPolicy::default();
        let once = file.render(&policy);
        let twice = parse(&once).unwrap().render(&policy);
        assert_eq!(once, twice);
        assert!(once.contains(
            "    note: Checkout deadline too tight for shared runners. Not a known pool defect.\n"
        ));
        assert!(
            once.contains("    escalation:\n      channel: '#platform'\n      after_days: 3\n"),
            "{once}"
        );
    }

    #[test]
    fn odd_ids_round_trip() {
        let mut file = ReliabilityFile::default();
        for id in [
            "tests/a.py::test[a: b]",
            "- dash",
            "pkg::Test/with \"quotes\"",
            "multi\nline",
            "#hash",
            "yes",
        ] {
            file.tests.push(TestEntry::new(id, Tier::Probation));
        }
        file.tests.sort_by(|a, b| a.id.cmp(&b.id));
        let text = file.render(&TierPolicy::default());
        let back = parse(&text).unwrap();
        let ids: Vec<_> = back.tests.iter().map(|t| t.id.clone()).collect();
        let expected: Vec<_> = file.tests.iter().map(|t| t.id.clone()).collect();
        assert_eq!(ids, expected, "{text}");
    }

    #[test]
    fn broken_files_name_the_line() {
        let unknown_tier = SEED_LAYOUT.replace("tier: quarantined", "tier: gold");
        let error = parse(&unknown_tier).unwrap_err();
        assert_eq!(error.line, 9, "{error}");
        assert!(error.message.contains("gold"), "{error}");

        let negative = SEED_LAYOUT.replace("runs: 200\n    failures", "runs: -3\n    failures");
        assert_eq!(parse(&negative).unwrap_err().line, 10);

        let budget = SEED_LAYOUT.replace("flake_budget: 0.02", "flake_budget: 1.5");
        let error = parse(&budget).unwrap_err();
        assert_eq!(error.line, 4, "{error}");

        let bad_yaml = "policy:\n  window_runs: [1,\n";
        assert!(parse(bad_yaml).is_err());

        let twice = format!(
            "{SEED_LAYOUT}  - id: services/pool/integration::TestPoolCheckoutUnderLoad\n    tier: trusted\n"
        );
        let error = parse(&twice).unwrap_err();
        assert!(error.message.contains("listed twice"), "{error}");
        assert_eq!(error.line, 18);
    }
}
