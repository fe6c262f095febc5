//! `[lane]`, `[[freeze]]` and `[[ban]]` of `candor.toml`: the merge lane's policy
//! (docs/gate.md), its types and their validation. Read from the merge base by the gate,
//! so a change cannot loosen the rules it is judged by.

use std::collections::HashMap;
use std::ops::Range;
use std::path::PathBuf;

use jiff::civil::Date;
use regex::Regex;
use serde::Deserialize;
use toml::Spanned;
use toml::de::{DeValue, ValueDeserializer};

use super::{ConfigError, Source, exact_text, positive, regex_error_line, repository_path};

/// `[lane]`, resolved: how the merge lane replays tests and which files it checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaneConfig {
    /// Fewest replays of each touched test in the lane.
    pub min_replays: u32,
    /// Wall-clock budget of the lane's replays, in seconds.
    pub max_wall_seconds: u32,
    /// The fixtures folder whose every file the fixture lock pins, relative to the
    /// repository root.
    pub fixtures: PathBuf,
    /// The fixture lock (`candor lock fixtures` writes it).
    pub lockfile: PathBuf,
    /// The folder of `cassette.v1` files.
    pub cassettes: PathBuf,
    /// The cassette lock (`candor lock cassettes` writes it).
    pub cassette_lock: PathBuf,
    /// The oracle module new tests must call into, when there is one.
    pub oracle: Option<PathBuf>,
    /// Whether a new test file that calls no oracle function is refused.
    pub fail_on_missing_oracle: bool,
    /// The built-in diff rules turned on, in file order, each once.
    pub presets: Vec<Preset>,
    /// Globs of the test infrastructure a change may not edit without approval
    /// (`gate::infrastructure::DEFAULT_GLOBS` unless set).
    pub test_infrastructure: Vec<PathGlob>,
    /// What the lane replays besides the touched tests.
    pub replay: ReplayMode,
    /// Runner processes the lane runs at once (its replay rounds, the base's version);
    /// `None`: the CPUs available to candor. 1 runs everything one after another.
    pub jobs: Option<u32>,
}

/// `[lane] replay`: what the merge lane runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReplayMode {
    /// `"touched"`: only the tests in the test files the change touched, `min_replays`
    /// times each; a change that touches no test file replays nothing.
    Touched,
    /// `"all"` (the default): the whole suite once, then the touched tests `min_replays`
    /// times each, so a source-only change is judged by the tests it can break.
    #[default]
    All,
}

impl ReplayMode {
    /// The name written in `candor.toml` and the report.
    pub fn name(self) -> &'static str {
        match self {
            ReplayMode::Touched => "touched",
            ReplayMode::All => "all",
        }
    }
}

impl Default for LaneConfig {
    fn default() -> Self {
        LaneConfig {
            min_replays: 3,
            max_wall_seconds: 180,
            fixtures: PathBuf::from("tests/fixtures"),
            lockfile: PathBuf::from("tests/fixtures.lock.json"),
            cassettes: PathBuf::from("tests/cassettes"),
            cassette_lock: PathBuf::from("tests/cassettes.lock.json"),
            oracle: None,
            fail_on_missing_oracle: false,
            presets: Vec::new(),
            replay: ReplayMode::default(),
            jobs: None,
            test_infrastructure: crate::gate::infrastructure::default_globs(),
        }
    }
}

/// A built-in diff rule a repository turns on by name in `[lane] presets`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Preset {
    /// `no-sleep-wait`: no sleeping in tests to wait for something to happen.
    NoSleepWait,
    /// `no-naive-datetime`: no clock reads or datetimes without a time zone in tests.
    NoNaiveDatetime,
}

impl Preset {
    /// Every preset.
    pub const ALL: [Preset; 2] = [Preset::NoSleepWait, Preset::NoNaiveDatetime];

    /// The name written in `presets`, and the rule's name in findings.
    pub fn name(self) -> &'static str {
        match self {
            Preset::NoSleepWait => "no-sleep-wait",
            Preset::NoNaiveDatetime => "no-naive-datetime",
        }
    }

    /// The preset called `name`.
    pub fn from_name(name: &str) -> Option<Preset> {
        Preset::ALL.into_iter().find(|preset| preset.name() == name)
    }
}

/// `[[freeze]]`: a dated, owned exception that lets a test stay skipped or quarantined
/// until it expires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Freeze {
    /// The test's id, as the reliability file writes it.
    pub test: String,
    /// Who answers for it.
    pub owner: String,
    /// The last day the freeze holds.
    pub expires: Date,
    /// The ticket that tracks the fix.
    pub ticket: Option<String>,
    /// A replay file that shows the failure, relative to the repository root.
    pub replay: Option<PathBuf>,
    /// 1-based line of its `[[freeze]]` header, for messages.
    pub line: usize,
}

/// `[[ban]]`: a pattern that added lines of some files may not match, with the incident
/// that taught it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ban {
    /// Its name in findings.
    pub id: String,
    /// Which files it applies to.
    pub paths: Vec<PathGlob>,
    /// What an added line may not match.
    pub pattern: LinePattern,
    /// What to do instead.
    pub message: String,
    /// The incident it came from.
    pub source: String,
    /// 1-based line of its `[[ban]]` header, for messages.
    pub line: usize,
}

impl Ban {
    /// Whether the ban applies to the file at `path` (relative, `/`-separated).
    pub fn applies_to(&self, path: &str) -> bool {
        self.paths.iter().any(|glob| glob.matches(path))
    }
}

/// A path glob from `candor.toml`: matched against the repository-relative path, `*` and
/// `?` stopping at `/`, `**` crossing folders; a glob without a `/` matches the file name
/// in any folder, as in `.gitignore`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathGlob {
    pattern: glob::Pattern,
    file_name_only: bool,
}

impl PathGlob {
    /// Compiles `text`.
    pub fn new(text: &str) -> Result<PathGlob, glob::PatternError> {
        Ok(PathGlob {
            pattern: glob::Pattern::new(text)?,
            file_name_only: !text.contains('/'),
        })
    }

    /// The glob as written.
    pub fn as_str(&self) -> &str {
        self.pattern.as_str()
    }

    /// Whether `path` (relative, `/`-separated) matches.
    pub fn matches(&self, path: &str) -> bool {
        let options = glob::MatchOptions {
            case_sensitive: true,
            require_literal_separator: true,
            require_literal_leading_dot: false,
        };
        let subject = if self.file_name_only {
            path.rsplit('/').next().unwrap_or(path)
        } else {
            path
        };
        self.pattern.matches_with(subject, options)
    }
}

/// A `[[ban]]` pattern: a regular expression searched for anywhere in a line.
#[derive(Debug, Clone)]
pub struct LinePattern {
    source: String,
    regex: Regex,
}

impl LinePattern {
    /// Compiles `source`.
    pub fn new(source: &str) -> Result<LinePattern, regex::Error> {
        Ok(LinePattern {
            source: source.to_owned(),
            regex: Regex::new(source)?,
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Whether the pattern occurs in `line`.
    pub fn is_match(&self, line: &str) -> bool {
        self.regex.is_match(line)
    }
}

impl PartialEq for LinePattern {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

impl Eq for LinePattern {}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLane {
    min_replays: Option<Spanned<i64>>,
    max_wall_seconds: Option<Spanned<i64>>,
    fixtures: Option<Spanned<String>>,
    lockfile: Option<Spanned<String>>,
    cassettes: Option<Spanned<String>>,
    cassette_lock: Option<Spanned<String>>,
    oracle: Option<Spanned<String>>,
    fail_on_missing_oracle: Option<Spanned<bool>>,
    presets: Option<Vec<Spanned<String>>>,
    replay: Option<Spanned<String>>,
    test_infrastructure: Option<Vec<Spanned<String>>>,
    jobs: Option<Spanned<i64>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFreeze {
    test: Option<Spanned<String>>,
    owner: Option<Spanned<String>>,
    expires: Option<Spanned<toml::Value>>,
    ticket: Option<Spanned<String>>,
    replay: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBan {
    id: Option<Spanned<String>>,
    paths: Option<Spanned<Vec<Spanned<String>>>>,
    pattern: Option<Spanned<String>>,
    message: Option<Spanned<String>>,
    source: Option<Spanned<String>>,
}

pub(super) fn resolve_lane(
    source: Source<'_>,
    raw: Option<RawLane>,
) -> Result<LaneConfig, ConfigError> {
    let mut lane = LaneConfig::default();
    let Some(raw) = raw else {
        return Ok(lane);
    };
    if let Some(value) = raw.min_replays {
        lane.min_replays = positive(source, "lane.min_replays", &value)?;
    }
    if let Some(value) = raw.max_wall_seconds {
        lane.max_wall_seconds = positive(source, "lane.max_wall_seconds", &value)?;
    }
    let lock_spans = [
        raw.lockfile.as_ref().map(Spanned::span),
        raw.cassette_lock.as_ref().map(Spanned::span),
    ];
    let paths = [
        ("lane.fixtures", raw.fixtures, &mut lane.fixtures),
        ("lane.lockfile", raw.lockfile, &mut lane.lockfile),
        ("lane.cassettes", raw.cassettes, &mut lane.cassettes),
        (
            "lane.cassette_lock",
            raw.cassette_lock,
            &mut lane.cassette_lock,
        ),
    ];
    for (key, value, target) in paths {
        if let Some(value) = value {
            *target = repository_path(source, key, &value)?;
        }
    }
    if let Some(value) = raw.oracle {
        lane.oracle = Some(repository_path(source, "lane.oracle", &value)?);
    }
    if let Some(value) = raw.fail_on_missing_oracle {
        if *value.get_ref() && lane.oracle.is_none() {
            return Err(source.error(
                Some(value.span()),
                "`lane.fail_on_missing_oracle = true` needs `lane.oracle`, the module new tests must call into",
            ));
        }
        lane.fail_on_missing_oracle = value.into_inner();
    }
    if let Some(value) = raw.jobs {
        lane.jobs = Some(positive(source, "lane.jobs", &value)?);
    }
    if let Some(value) = raw.replay {
        lane.replay = match value.get_ref().as_str() {
            "touched" => ReplayMode::Touched,
            "all" => ReplayMode::All,
            other => {
                return Err(source.error(
                    Some(value.span()),
                    format!(
                        "`lane.replay` is {other:?}: expected \"all\" (the whole suite once, then the touched tests) or \"touched\" (the touched tests only)"
                    ),
                ));
            }
        };
    }
    for name in raw.presets.unwrap_or_default() {
        let preset = Preset::from_name(name.get_ref()).ok_or_else(|| {
            let known: Vec<String> = Preset::ALL
                .iter()
                .map(|preset| format!("{:?}", preset.name()))
                .collect();
            source.error(
                Some(name.span()),
                format!(
                    "`lane.presets` names {:?}, which candor does not have: expected {}",
                    name.get_ref(),
                    known.join(" or ")
                ),
            )
        })?;
        if !lane.presets.contains(&preset) {
            lane.presets.push(preset);
        }
    }
    if let Some(globs) = raw.test_infrastructure {
        lane.test_infrastructure = globs
            .into_iter()
            .map(|glob| {
                PathGlob::new(glob.get_ref()).map_err(|error| {
                    source.error(
                        Some(glob.span()),
                        format!(
                            "`lane.test_infrastructure` holds {:?}, not a valid glob: {error}",
                            glob.get_ref()
                        ),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
    }
    let locks = [
        ("lane.lockfile", &lane.lockfile),
        ("lane.cassette_lock", &lane.cassette_lock),
    ];
    for ((key, path), span) in locks.into_iter().zip(lock_spans) {
        let inside = [&lane.fixtures, &lane.cassettes]
            .into_iter()
            .find(|folder| path.starts_with(folder));
        if let Some(folder) = inside {
            return Err(source.error(
                span,
                format!(
                    "`{key}` ({}) is inside {}, so it would pin itself: put the lock next to the folder",
                    path.display(),
                    folder.display()
                ),
            ));
        }
    }
    Ok(lane)
}

/// Reads every table of a `[[name]]` array, naming each in errors (`freeze #2`, `ban
/// no-sleep`) and rejecting two with the same key.
fn resolve_tables<T>(
    source: Source<'_>,
    section: &str,
    tables: Spanned<DeValue<'_>>,
    naming_key: &str,
    mut resolve: impl FnMut(&str, Spanned<DeValue<'_>>) -> Result<(T, String), ConfigError>,
) -> Result<Vec<T>, ConfigError> {
    let span = tables.span();
    let DeValue::Array(tables) = tables.into_inner() else {
        return Err(source.error(
            Some(span),
            format!("`{section}` must be a list of tables: give each its own [[{section}]] header"),
        ));
    };
    let mut resolved = Vec::with_capacity(tables.len());
    let mut first_line_of: HashMap<String, usize> = HashMap::new();
    for (index, table) in tables.into_iter().enumerate() {
        let line = source.line(&table.span());
        let key_span = table
            .get_ref()
            .get(naming_key)
            .map(Spanned::span)
            .or_else(|| Some(table.span()));
        let name = match table
            .get_ref()
            .get(naming_key)
            .and_then(|value| value.get_ref().as_str())
        {
            Some(key) if !key.trim().is_empty() => format!("{section} {key}"),
            _ => format!("{section} #{}", index + 1),
        };
        let (item, key) = resolve(&name, table)?;
        if let Some(first) = first_line_of.get(&key) {
            return Err(source.error(
                key_span,
                format!(
                    "{section} {key} is declared twice (first at line {first}): keep one [[{section}]] per {naming_key}"
                ),
            ));
        }
        first_line_of.insert(key, line);
        resolved.push(item);
    }
    Ok(resolved)
}

pub(super) fn resolve_freezes(
    source: Source<'_>,
    tables: Spanned<DeValue<'_>>,
) -> Result<Vec<Freeze>, ConfigError> {
    resolve_tables(source, "freeze", tables, "test", |name, table| {
        let span = table.span();
        let raw = RawFreeze::deserialize(ValueDeserializer::from(table))
            .map_err(|e| source.toml_error(&e, &format!("{name}: ")))?;
        let freeze = resolve_freeze(source, name, span, raw)?;
        let key = freeze.test.clone();
        Ok((freeze, key))
    })
}

fn resolve_freeze(
    source: Source<'_>,
    name: &str,
    span: Range<usize>,
    raw: RawFreeze,
) -> Result<Freeze, ConfigError> {
    let required = |field: &str| {
        source.error(
            Some(span.clone()),
            format!(
                "{name} has no `{field}`: every freeze names its test, owner and expires (a bare TOML date), and a ticket or a replay file"
            ),
        )
    };
    let test = exact_text(
        source,
        name,
        "test",
        raw.test.ok_or_else(|| required("test"))?,
    )?;
    let owner = exact_text(
        source,
        name,
        "owner",
        raw.owner.ok_or_else(|| required("owner"))?,
    )?;
    let expires = raw.expires.ok_or_else(|| required("expires"))?;
    let expires = bare_date(source, name, "expires", &expires)?;
    let ticket = raw
        .ticket
        .map(|ticket| exact_text(source, name, "ticket", ticket))
        .transpose()?;
    let replay = raw
        .replay
        .map(|replay| {
            repository_path(source, "replay", &replay).map_err(|mut error| {
                error.message = format!("{name}: {}", error.message);
                error
            })
        })
        .transpose()?;
    if ticket.is_none() && replay.is_none() {
        return Err(source.error(
            Some(span.clone()),
            format!(
                "{name} has neither `ticket` nor `replay`: a freeze points at the ticket that tracks the fix or at a replay file that shows the failure"
            ),
        ));
    }
    Ok(Freeze {
        test,
        owner,
        expires,
        ticket,
        replay,
        line: source.line(&span),
    })
}

pub(super) fn resolve_bans(
    source: Source<'_>,
    tables: Spanned<DeValue<'_>>,
) -> Result<Vec<Ban>, ConfigError> {
    resolve_tables(source, "ban", tables, "id", |name, table| {
        let span = table.span();
        let raw = RawBan::deserialize(ValueDeserializer::from(table))
            .map_err(|e| source.toml_error(&e, &format!("{name}: ")))?;
        let ban = resolve_ban(source, name, span, raw)?;
        let key = ban.id.clone();
        Ok((ban, key))
    })
}

fn resolve_ban(
    source: Source<'_>,
    name: &str,
    span: Range<usize>,
    raw: RawBan,
) -> Result<Ban, ConfigError> {
    let required = |field: &str| {
        source.error(
            Some(span.clone()),
            format!(
                "{name} has no `{field}`: every ban names id, paths, pattern, message and source (the incident it came from)"
            ),
        )
    };
    let id = exact_text(source, name, "id", raw.id.ok_or_else(|| required("id"))?)?;
    if id.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(source.error(
            Some(span.clone()),
            format!("{name}: `id` has a space or control character in it; it names findings, so it is one word"),
        ));
    }
    let paths = raw.paths.ok_or_else(|| required("paths"))?;
    let paths_span = paths.span();
    let paths = paths
        .into_inner()
        .into_iter()
        .map(|glob| {
            PathGlob::new(glob.get_ref()).map_err(|error| {
                source.error(
                    Some(glob.span()),
                    format!(
                        "{name}: `paths` holds {:?}, not a valid glob: {error}",
                        glob.get_ref()
                    ),
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    if paths.is_empty() {
        return Err(source.error(
            Some(paths_span),
            format!(
                "{name}: `paths` is empty, so the ban applies nowhere; `[\"**\"]` is every file"
            ),
        ));
    }
    let pattern = raw.pattern.ok_or_else(|| required("pattern"))?;
    if pattern.get_ref().is_empty() {
        return Err(source.error(
            Some(pattern.span()),
            format!("{name}: `pattern` is empty, and it would match every line"),
        ));
    }
    let compiled = LinePattern::new(pattern.get_ref()).map_err(|error| {
        source.error(
            Some(pattern.span()),
            format!(
                "{name}: `pattern` is not a valid regular expression: {}",
                regex_error_line(&error)
            ),
        )
    })?;
    if compiled.is_match("") {
        return Err(source.error(
            Some(pattern.span()),
            format!("{name}: `pattern` matches an empty line, so it would match every line"),
        ));
    }
    let message = exact_text(
        source,
        name,
        "message",
        raw.message.ok_or_else(|| required("message"))?,
    )?;
    let origin = exact_text(
        source,
        name,
        "source",
        raw.source.ok_or_else(|| required("source"))?,
    )?;
    Ok(Ban {
        id,
        paths,
        pattern: compiled,
        message,
        source: origin,
        line: source.line(&span),
    })
}

/// A bare TOML date under `key`: a quoted one, or one with a time, is refused by name.
fn bare_date(
    source: Source<'_>,
    name: &str,
    key: &str,
    value: &Spanned<toml::Value>,
) -> Result<Date, ConfigError> {
    let refuse = |what: &str| {
        source.error(
            Some(value.span()),
            format!("{name}: `{key}` is {what}: write a bare TOML date, without quotes or a time, like {key} = 2026-12-15"),
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

#[cfg(test)]
mod tests {
    use super::super::DEFAULT_CONFIG;
    use super::super::tests::{example_block, parse};
    use super::*;

    #[test]
    fn the_lane_replays_the_whole_suite_unless_told_touched_only() {
        // Issue #12 item 6: a source-only change must not pass a lane that ran nothing.
        assert_eq!(LaneConfig::default().replay, ReplayMode::All);
        let touched = parse("[lane]\nreplay = \"touched\"\n").expect("parses");
        assert_eq!(touched.lane.replay, ReplayMode::Touched);
        let error = parse("[lane]\nreplay = \"some\"\n").unwrap_err();
        assert_eq!(error.line, 2);
        assert!(
            error.message.contains("`lane.replay` is \"some\""),
            "{}",
            error.message
        );
    }

    /// #15 item 3: `[lane] jobs`, unset by default (the CPUs available), a whole number
    /// of at least 1 where set.
    #[test]
    fn the_lane_jobs_are_a_positive_whole_number() {
        assert_eq!(LaneConfig::default().jobs, None);
        let one = parse("[lane]\njobs = 1\n").expect("parses");
        assert_eq!(one.lane.jobs, Some(1));
        let error = parse("[lane]\n\njobs = 0\n").unwrap_err();
        assert_eq!(error.line, 3);
        assert!(error.message.contains("lane.jobs"), "{}", error.message);
    }

    #[test]
    fn the_lane_defaults_and_the_commented_freeze_and_ban_are_valid() {
        let config = parse(DEFAULT_CONFIG).expect("default parses");
        assert_eq!(config.lane, LaneConfig::default());
        assert!(config.freezes.is_empty() && config.bans.is_empty());
        let examples = format!(
            "{}\n{}",
            example_block("# [[freeze]]"),
            example_block("# [[ban]]")
        );
        let config = parse(&examples).expect("the examples parse");
        let [freeze] = config.freezes.as_slice() else {
            panic!("one freeze: {:?}", config.freezes);
        };
        assert_eq!(freeze.test, "tests/email/test_digest.py::test_schedule");
        assert_eq!(freeze.expires, Date::constant(2026, 12, 15));
        assert_eq!(freeze.ticket.as_deref(), Some("PLAT-1201"));
        assert_eq!(freeze.line, 1);
        let [ban] = config.bans.as_slice() else {
            panic!("one ban: {:?}", config.bans);
        };
        assert_eq!(ban.id, "no-wall-clock-wait");
        assert_eq!(ban.line, 7);
        assert!(ban.pattern.is_match("    time.sleep(0.5)"));
        assert!(!ban.pattern.is_match("    wait_until(ready)"));
        assert!(ban.applies_to("tests/a/b/test_x.py"));
        assert!(
            ban.applies_to("tests/test_x.py"),
            "** matches no folder too"
        );
        assert!(!ban.applies_to("src/x.py"));
    }

    #[test]
    fn lane_keys_are_validated() {
        let config = parse(
            "[lane]\nmin_replays = 5\nfixtures = \"./data//fx\"\nlockfile = \"data/fx.lock.json\"\noracle = \"tests/oracle.py\"\nfail_on_missing_oracle = true\npresets = [\"no-sleep-wait\", \"no-naive-datetime\", \"no-sleep-wait\"]\n",
        )
        .unwrap();
        assert_eq!(config.lane.min_replays, 5);
        assert_eq!(config.lane.fixtures, PathBuf::from("data/fx"));
        assert_eq!(config.lane.oracle, Some(PathBuf::from("tests/oracle.py")));
        assert!(config.lane.fail_on_missing_oracle);
        assert_eq!(
            config.lane.presets,
            [Preset::NoSleepWait, Preset::NoNaiveDatetime]
        );
        let error = parse("[lane]\npresets = [\"no-sleep\"]\n").unwrap_err();
        assert_eq!(error.line, 2);
        assert!(
            error.message.contains("\"no-sleep\"") && error.message.contains("no-sleep-wait"),
            "{}",
            error.message
        );
        let error = parse("[lane]\n\nfail_on_missing_oracle = true\n").unwrap_err();
        assert_eq!(error.line, 3);
        assert!(
            error.message.contains("needs `lane.oracle`"),
            "{}",
            error.message
        );
        let error = parse("[lane]\nfixtures = \"../elsewhere\"\n").unwrap_err();
        assert!(
            error.message.contains("inside the repository"),
            "{}",
            error.message
        );
        let error = parse("[lane]\nfixtures = \"/abs\"\n").unwrap_err();
        assert!(
            error.message.contains("inside the repository"),
            "{}",
            error.message
        );
        let error = parse("[lane]\nlockfile = \"tests/fixtures/lock.json\"\n").unwrap_err();
        assert_eq!(error.line, 2);
        assert!(error.message.contains("pin itself"), "{}", error.message);
        let error = parse("[lane]\nmax_wall_seconds = 0\n").unwrap_err();
        assert!(
            error.message.contains("`lane.max_wall_seconds` is 0"),
            "{}",
            error.message
        );
        let error = parse("[lane]\nreplays = 3\n").unwrap_err();
        assert!(error.message.contains("replays"), "{}", error.message);
    }

    #[test]
    fn freeze_errors_name_the_freeze_and_the_line() {
        let freeze = example_block("# [[freeze]]");
        let with = |from: &str, to: &str| {
            assert!(freeze.contains(from), "{from}");
            format!(
                "[rerun]\nbudget_days = 7\n\n{}",
                freeze.replacen(from, to, 1)
            )
        };
        let error = parse(&with("expires = 2026-12-15\n", "")).unwrap_err();
        assert_eq!(error.line, 4, "the freeze's header");
        assert!(
            error
                .message
                .starts_with("freeze tests/email/test_digest.py::test_schedule has no `expires`"),
            "{}",
            error.message
        );
        let error = parse(&with("2026-12-15", "\"2026-12-15\"")).unwrap_err();
        assert_eq!(error.line, 7);
        assert!(
            error.message.contains("bare TOML date"),
            "{}",
            error.message
        );
        assert!(
            error.message.contains("expires = 2026-12-15"),
            "{}",
            error.message
        );
        let error = parse(&with("2026-12-15", "2026-02-30")).unwrap_err();
        assert!(!error.message.is_empty());
        let error = parse(&with("ticket = \"PLAT-1201\"\n", "")).unwrap_err();
        assert!(
            error.message.contains("neither `ticket` nor `replay`"),
            "{}",
            error.message
        );
        let replay = parse(&with(
            "ticket = \"PLAT-1201\"",
            "replay = \"tests/replays/digest.json\"",
        ))
        .unwrap();
        assert_eq!(
            replay.freezes[0].replay,
            Some(PathBuf::from("tests/replays/digest.json"))
        );
        let error = parse(&with("owner =", "owners =")).unwrap_err();
        assert_eq!(error.line, 6);
        assert!(
            error.message.contains("unknown field `owners`"),
            "{}",
            error.message
        );
        let error = parse(&with("test = ", "tst = ")).unwrap_err();
        assert!(error.message.starts_with("freeze #1"), "{}", error.message);
        let twice = format!("{freeze}\n{freeze}");
        let error = parse(&twice).unwrap_err();
        assert!(
            error.message.contains("declared twice (first at line 1)"),
            "{}",
            error.message
        );
        let error = parse("[freeze]\ntest = \"x\"\n").unwrap_err();
        assert!(error.message.contains("[[freeze]]"), "{}", error.message);
    }

    #[test]
    fn ban_errors_name_the_ban_and_the_line() {
        let ban = example_block("# [[ban]]");
        let with = |from: &str, to: &str| {
            assert!(ban.contains(from), "{from}");
            ban.replacen(from, to, 1)
        };
        let error = parse(&with("time\\.sleep\\(", "time\\.sleep(")).unwrap_err();
        assert_eq!(error.line, 4);
        assert!(
            error
                .message
                .starts_with("ban no-wall-clock-wait: `pattern` is not a valid regular expression"),
            "{}",
            error.message
        );
        let error = parse(&with("time\\.sleep\\(", "x*")).unwrap_err();
        assert!(
            error.message.contains("matches an empty line"),
            "{}",
            error.message
        );
        let error = parse(&with("[\"tests/**/*.py\"]", "[]")).unwrap_err();
        assert!(
            error.message.contains("`paths` is empty"),
            "{}",
            error.message
        );
        let error = parse(&with("[\"tests/**/*.py\"]", "[\"tests/[\"]")).unwrap_err();
        assert!(
            error.message.contains("not a valid glob"),
            "{}",
            error.message
        );
        let error = parse(&with("source = \"FP-001 root cause, 2026-10\"\n", "")).unwrap_err();
        assert!(
            error.message.contains("has no `source`"),
            "{}",
            error.message
        );
        let error = parse(&with("\"no-wall-clock-wait\"", "\"no wait\"")).unwrap_err();
        assert!(error.message.contains("one word"), "{}", error.message);
        let twice = format!("{ban}\n{ban}");
        let error = parse(&twice).unwrap_err();
        assert_eq!(error.line, ban.lines().count() + 3);
        assert!(
            error
                .message
                .contains("ban no-wall-clock-wait is declared twice"),
            "{}",
            error.message
        );
    }

    #[test]
    fn path_globs_without_a_slash_match_the_file_name_anywhere() {
        let glob = PathGlob::new("*.py").unwrap();
        assert!(glob.matches("a.py") && glob.matches("tests/deep/a.py"));
        let rooted = PathGlob::new("tests/*.py").unwrap();
        assert!(rooted.matches("tests/a.py"));
        assert!(!rooted.matches("tests/deep/a.py"), "* stops at /");
        let everything = PathGlob::new("**").unwrap();
        assert!(everything.matches("a/b/c.rs"));
    }
}
