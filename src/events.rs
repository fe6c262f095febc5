//! The one public, versioned event stream: every line candor can emit, as one
//! [`Event`] enum of owned serde structs, the [`EventSink`] a workflow emits them into, and
//! the JSON Schema generated from them (`docs/events.schema.json`).
//!
//! A line serializes as `{"type": …, "v": EVENTS_VERSION, …fields in declaration order}`,
//! byte for byte what `--format json` printed before this type existed. Data events go to
//! stdout in JSON; [`Event::Warning`], [`Event::Note`], [`Event::Error`] and
//! [`Event::Progress`] are diagnostics, written as text on stderr by the command line and
//! kept in the schema for sinks that carry them otherwise (an MCP server, a report).
//!
//! The schema is made with `schemars` 1.x: its `for_serialize` contract marks a field
//! required exactly when serde always writes it (our "null, never a missing key" rule),
//! it reads our serde attributes (`flatten`, `tag`, `rename_all`), and it has `jiff`
//! support; 0.8 has neither the contract nor jiff 0.2.

use std::borrow::Cow;
use std::path::PathBuf;

use jiff::Timestamp;
use jiff::civil::Date;
use schemars::{JsonSchema, Schema, SchemaGenerator, generate::SchemaSettings, json_schema};
use serde::Serialize;

use crate::classify::Classified;
use crate::compare::{CompareVerdict, Drop, Protection, ReproVerdict, SideSummary, Stop};
use crate::gate::lane::{
    Approval, Reason, ReplayRun, Replayed, ScoreReport, SuiteRun, TouchedReport,
};
use crate::history::Source;
use crate::ledger::stats::{Flag, WorkerCount};
use crate::results::Outcome;
use crate::stats::tiers::{Change, Tier};
use crate::stats::wilson::Interval;
use crate::triage::HistoryEvidence;

/// The version of every line's schema; see `docs/json-output.md` for the policy.
pub const EVENTS_VERSION: u32 = 1;

/// Where a workflow's events go. Sinks are the only place candor prints.
pub trait EventSink {
    /// Takes one event. A sink that cannot write remembers why and says so when it is
    /// finished; the workflow goes on (a closed reader is [`EventSink::closed`]).
    fn emit(&mut self, event: &Event);

    /// Whether the reader has gone away (`candor tests | head -1`): a workflow that only
    /// lists may stop producing lines.
    fn closed(&self) -> bool {
        false
    }
}

/// A sink that keeps every event, for tests and for callers that render afterwards.
#[derive(Debug, Default, Clone)]
pub struct Collected {
    /// The events, in order.
    pub events: Vec<Event>,
}

impl EventSink for Collected {
    fn emit(&mut self, event: &Event) {
        self.events.push(event.clone());
    }
}

impl Collected {
    /// The events of one `type`.
    pub fn of_kind(&self, kind: &str) -> Vec<&Event> {
        self.events.iter().filter(|e| e.kind() == kind).collect()
    }

    /// Each event as its JSON line.
    pub fn lines(&self) -> Vec<String> {
        self.events.iter().map(Event::to_line).collect()
    }
}

/// The `{"type", "v", …body}` envelope, as serde writes it.
#[derive(Serialize)]
struct Envelope<'a, T> {
    #[serde(rename = "type")]
    kind: &'static str,
    v: u32,
    #[serde(flatten)]
    body: &'a T,
}

/// The schema-side twin of [`Envelope`]: `v` and the body's fields (the tag is added by
/// the enum it sits in).
#[derive(JsonSchema)]
#[schemars(inline)]
#[allow(dead_code)] // only its schema is used
struct Versioned<T> {
    v: Version,
    #[serde(flatten)]
    body: T,
}

/// `v`: always [`EVENTS_VERSION`].
struct Version;

impl JsonSchema for Version {
    fn inline_schema() -> bool {
        true
    }

    fn schema_name() -> Cow<'static, str> {
        "Version".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "The schema version of this line's type.",
            "type": "integer",
            "const": EVENTS_VERSION,
        })
    }
}

macro_rules! events {
    ($( $(#[$doc:meta])* $tag:literal => $variant:ident($body:ty), )*) => {
        /// Every line candor can emit. New variants and new fields at the end of a body
        /// are additions within a version; see `docs/json-output.md`.
        #[non_exhaustive]
        #[derive(Debug, Clone)]
        #[expect(
            clippy::large_enum_variant,
            reason = "one event is made per printed line and dropped after it"
        )]
        pub enum Event {
            $( $(#[$doc])* $variant($body), )*
        }

        impl Event {
            /// The line's `type`.
            pub fn kind(&self) -> &'static str {
                match self {
                    $( Event::$variant(_) => $tag, )*
                }
            }

            /// Every `type` there is, in declaration order.
            pub const KINDS: &'static [&'static str] = &[$( $tag, )*];
        }

        impl Serialize for Event {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                match self {
                    $( Event::$variant(body) => Envelope {
                        kind: $tag,
                        v: EVENTS_VERSION,
                        body,
                    }
                    .serialize(serializer), )*
                }
            }
        }

        /// [`Event`] as the schema sees it: internally tagged by `type`.
        #[derive(JsonSchema)]
        #[serde(tag = "type")]
        #[allow(dead_code, clippy::large_enum_variant)] // only its schema is used
        enum EventSchema {
            $( $(#[$doc])* #[serde(rename = $tag)] $variant(Versioned<$body>), )*
        }
    };
}

events! {
    /// `ingest`: one result file and what became of it.
    "ingest" => Ingest(IngestEvent),
    /// `summary`: the files `ingest` processed.
    "summary" => IngestSummary(IngestSummary),
    /// `counted`: which runs reliability counts.
    "counted" => Counted(Counted),
    /// `test`: one test's record (`candor tests`).
    "test" => Test(TestEvent),
    /// `reliability`: one test's tier.
    "reliability" => Reliability(ReliabilityEvent),
    /// `reliability-summary`: the tiers in all.
    "reliability-summary" => ReliabilitySummary(ReliabilitySummary),
    /// `execution`: one stored execution (`candor show`).
    "execution" => Execution(ExecutionEvent),
    /// `policy`: where `triage` read its policy from.
    "policy" => Policy(PolicyEvent),
    /// `verdict`: one red test judged.
    "verdict" => Verdict(VerdictEvent),
    /// `triage-summary`: the verdicts in all.
    "triage-summary" => TriageSummary(TriageSummary),
    /// `rerun`: a rerun refused or made.
    "rerun" => Rerun(RerunEvent),
    /// `test-run`: `candor test`'s run of the suite.
    "test-run" => TestRun(TestRunEvent),
    /// `ledger-stats`: one test's ledger lines.
    "ledger-stats" => LedgerStats(LedgerStatsEvent),
    /// `history-copy`: what `history copy` copied.
    "history-copy" => HistoryCopy(HistoryCopyEvent),
    /// `history-prune`: what `history prune` dropped.
    "history-prune" => HistoryPrune(HistoryPruneEvent),
    /// `clean`: run folders removed.
    "clean" => Clean(CleanEvent),
    /// `init`: candor.toml written.
    "init" => Init(InitEvent),
    /// `agents`: one instruction file's candor block written or checked.
    "agents" => Agents(AgentsEvent),
    /// `agents-block`: the block `candor agents --print` shows.
    "agents-block" => AgentsBlock(AgentsBlock),
    /// `classify`: one test's bucket.
    "classify" => Classify(Classified),
    /// `unbacked-claim`: a claim in a Markdown file no test backs.
    "unbacked-claim" => UnbackedClaim(UnbackedClaim),
    /// `lint-summary`: one file's claims.
    "lint-summary" => LintSummary(LintSummary),
    /// `lint-diff`: the change `lint diff` checked.
    "lint-diff" => LintDiff(LintDiffEvent),
    /// `finding`: one diff-rule finding.
    "finding" => Finding(crate::gate::rules::Finding),
    /// `lock`: a lock written or checked.
    "lock" => Lock(LockEvent),
    /// `drift`: a file that differs from its lock.
    "drift" => Drift(crate::gate::locks::Drift),
    /// `freeze`: one freeze judged.
    "freeze" => Freeze(FreezeEvent),
    /// `freeze-check`: the freezes in all.
    "freeze-check" => FreezeCheck(FreezeCheck),
    /// `compare`: the branch against its merge base.
    "compare" => Compare(CompareEvent),
    /// `repro`: a claimed deterministic reproduction checked.
    "repro" => Repro(ReproEvent),
    /// `order`: an order-dependence investigation.
    "order" => Order(OrderEvent),
    /// `gate`: the merge lane's score report.
    "gate" => Gate(GateEvent),
    /// `demo-step`: a step the demo runs.
    "demo-step" => DemoStep(DemoStep),
    /// `demo-exit`: how a demo step ended.
    "demo-exit" => DemoExit(DemoExit),
    /// `demo-kept`: where the demo's repository was kept.
    "demo-kept" => DemoKept(DemoKept),
    /// `warning`: something the reader should act on; the command goes on.
    "warning" => Warning(Message),
    /// `note`: how a result was reached (where the policy came from).
    "note" => Note(Message),
    /// `error`: what stopped the command.
    "error" => Error(ErrorEvent),
    /// `progress`: long work going on; a step count when it is counted.
    "progress" => Progress(Progress),
    /// `text`: a sentence for people (stdout in the human format), whose facts the data
    /// lines carry or never carried; not printed with `--format json`.
    "text" => Text(Text),
}

impl Event {
    /// The line `--format json` prints for this event.
    pub fn to_line(&self) -> String {
        // Plain data of owned strings and numbers: serde_json cannot fail on it.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Whether this is a diagnostic (stderr text on the command line), not data.
    pub fn is_diagnostic(&self) -> bool {
        matches!(
            self,
            Event::Warning(_) | Event::Note(_) | Event::Error(_) | Event::Progress(_)
        )
    }

    /// Whether `--format json` prints this event as a line on stdout: every event but the
    /// diagnostics and [`Event::Text`].
    pub fn is_json_line(&self) -> bool {
        !self.is_diagnostic() && !matches!(self, Event::Text(_))
    }
}

/// The JSON Schema of every line, as committed in `docs/events.schema.json`.
pub fn schema() -> Schema {
    let generator = SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator();
    let mut schema = generator.into_root_schema_for::<EventSchema>();
    schema.insert("title".into(), "candor event".into());
    schema.insert(
        "description".into(),
        format!(
            "One line of candor's --format json output (schema version {EVENTS_VERSION}); docs/json-output.md explains each type."
        )
        .into(),
    );
    schema
}

/// [`schema`] as the committed file holds it: pretty JSON and a final newline.
pub fn schema_text() -> String {
    let mut text = serde_json::to_string_pretty(&schema()).unwrap_or_default();
    text.push('\n');
    text
}

/// `[lane] replay`'s spellings, for the schema: `policy::config` keeps the type free of
/// the schema's derive (a test holds this list to serde's).
pub(crate) fn replay_mode_schema(_: &mut SchemaGenerator) -> Schema {
    json_schema!({
        "description": "`[lane] replay`: `touched` or `all`.",
        "type": "string",
        "enum": ["touched", "all"],
    })
}

/// A warning's or a note's text.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Message {
    /// The text, as the human output prints it after `warning:` or `note:`.
    pub message: String,
}

/// A sentence for people.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Text {
    /// The sentence, control characters already made visible where it quotes input.
    pub message: String,
    /// A detail left out under `--quiet` (a result line is printed even then).
    pub detail: bool,
}

/// What stopped a command, or failed one item of it.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ErrorEvent {
    /// What is wrong, naming the file (and line) when there is one.
    pub message: String,
    /// The chain of underlying causes, outermost first.
    pub causes: Vec<String>,
    /// What to do next.
    pub hint: Option<String>,
}

/// Long work going on.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Progress {
    /// What is being done.
    pub message: String,
    /// Steps done and in all, when the work is counted; a progress without steps ends
    /// the counted work before it.
    pub step: Option<Step>,
}

/// A count of steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Step {
    /// Done so far.
    pub done: u64,
    /// In all.
    pub total: u64,
}

/// What became of an ingested file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum IngestStatus {
    /// A new run was added.
    Stored,
    /// The same content for the same run is in the history; nothing added.
    AlreadyStored,
    /// Nothing from the file was stored.
    Failed,
}

/// Where an ingested run's commit came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CommitFrom {
    /// `--commit`.
    Option,
    /// The CI service's variables.
    Ci,
    /// The repository's HEAD, assumed.
    Head,
}

/// `ingest`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct IngestEvent {
    /// The file.
    pub file: String,
    /// What became of it.
    pub status: IngestStatus,
    /// The run that holds its executions.
    pub run_id: Option<i64>,
    /// Distinct tests, retries merged.
    pub tests: Option<u64>,
    /// Of those, red.
    pub red: Option<u64>,
    /// `junit`, `libtest-json` or `go-test-json`.
    pub format: Option<String>,
    /// The tool that wrote it.
    pub producer: Option<String>,
    /// The commit the run was stored for.
    pub commit: Option<String>,
    /// Where that commit came from.
    pub commit_from: Option<CommitFrom>,
    /// The CI build the run came from (provider, repository, build id, job, attempt);
    /// null for a run outside CI.
    pub ci: Option<crate::history::CiIdentity>,
    /// What was tolerated or assumed.
    pub warnings: Vec<String>,
    /// Why the file failed.
    pub error: Option<FileError>,
}

/// Why one input file failed.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FileError {
    /// What is wrong, starting with the file.
    pub message: String,
    /// 1-based line.
    pub line: Option<u64>,
    /// 1-based column, in bytes.
    pub column: Option<u64>,
    /// Underlying causes, outermost first.
    pub causes: Vec<String>,
    /// What to do next.
    pub hint: Option<String>,
}

/// `summary` (of `ingest`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct IngestSummary {
    /// Files processed.
    pub files: u64,
    /// Stored as new runs.
    pub stored: u64,
    /// Already in the history.
    pub already_stored: u64,
    /// Nothing stored.
    pub failed: u64,
    /// Those files.
    pub failed_files: Vec<String>,
    /// Tests stored.
    pub tests: u64,
    /// Of those, red.
    pub red: u64,
}

/// `counted`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Counted {
    /// Branch names and globs counted; empty when every branch counts.
    pub branches: Vec<String>,
    /// No default branch was found and none configured: every run counts.
    pub every_branch: bool,
    /// Runs counted.
    pub runs: usize,
    /// Runs on other branches, not counted.
    pub other_branch_runs: usize,
    /// Runs with no recorded branch, not counted.
    pub unknown_branch_runs: usize,
}

/// `test`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TestEvent {
    /// The canonical id.
    pub id: String,
    /// `null` when the reliability file does not list the test.
    pub tier: Option<Tier>,
    /// Runs it ran in.
    pub runs: u64,
    /// Runs it failed in.
    pub failures: u64,
    /// Runs it was skipped in.
    pub skips: u64,
    /// `(runs - failures) / runs`.
    pub pass_rate: Option<f64>,
    /// Start of the latest run it failed in.
    pub last_failure: Option<Timestamp>,
    /// Start of the latest run that holds it.
    pub last_seen: Timestamp,
}

/// `reliability`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ReliabilityEvent {
    /// The test.
    pub test: String,
    /// Its tier after this evaluation.
    pub tier: Tier,
    /// The tier the file had.
    pub previous_tier: Option<Tier>,
    /// How the tier moved.
    pub change: Change,
    /// The window's runs.
    pub runs: u64,
    /// Of those, runs that failed.
    pub failures: u64,
    /// Passing share.
    pub pass_rate: Option<f64>,
    /// Wilson 95% interval of the pass rate.
    pub wilson_95: Option<Interval>,
    /// Outcome changes between consecutive runs.
    pub flips: u64,
    /// First day it was seen flaky.
    pub first_flaky: Option<Date>,
    /// Too few recent runs to judge.
    pub stale: bool,
}

/// `reliability-summary`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ReliabilitySummary {
    /// Tests evaluated.
    pub tests: usize,
    /// Trusted.
    pub trusted: usize,
    /// On probation.
    pub probation: usize,
    /// Quarantined.
    pub quarantined: usize,
    /// Tiers changed.
    pub changed: usize,
    /// Stale.
    pub stale: usize,
    /// The file written, with `--write`.
    pub written: Option<PathBuf>,
    /// Which runs counted.
    pub counted: Counted,
}

/// `execution`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ExecutionEvent {
    /// The test.
    pub test_id: String,
    /// Its run.
    pub run_id: i64,
    /// When the run started.
    pub started_at: Timestamp,
    /// The run's commit.
    pub commit: Option<String>,
    /// The run's branch.
    pub branch: Option<String>,
    /// Whether reliability counts the run.
    pub counted: bool,
    /// Where the run came from.
    pub source: Source,
    /// The CI build the run came from; null for a run outside CI.
    pub ci: Option<crate::history::CiIdentity>,
    /// The outcome.
    pub outcome: Outcome,
    /// Seconds.
    pub duration: Option<f64>,
    /// Attempts, retries included.
    pub attempts: u32,
    /// The failure's signature.
    pub signature: Option<String>,
    /// The exception type.
    pub exception: Option<String>,
    /// The failure message.
    pub message: Option<String>,
    /// The skip's message.
    pub skip_message: Option<String>,
}

/// `policy`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct PolicyEvent {
    /// `merge-base` or `worktree`.
    pub source: String,
    /// The commit it was read from.
    pub commit: Option<String>,
    /// Why this source.
    pub reason: String,
    /// How the work tree's policy differs.
    pub differences: Vec<String>,
}

/// `verdict`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct VerdictEvent {
    /// The test.
    pub test: String,
    /// The verdict.
    pub verdict: String,
    /// Its tier.
    pub tier: Option<Tier>,
    /// The fingerprint matched.
    pub fingerprint: Option<String>,
    /// The failure's signature.
    pub signature: Option<String>,
    /// Why.
    pub reason: String,
    /// The red outcome.
    pub outcome: Outcome,
    /// The result file.
    pub file: Option<String>,
    /// The stored run.
    pub run_id: Option<i64>,
    /// Whether `candor rerun` may rerun it.
    pub rerun_allowed: bool,
    /// The label to put on the change.
    pub label: Option<String>,
    /// The failure.
    pub failure: Option<FailureEvent>,
    /// What the history holds about it.
    pub history: Option<HistoryEvent>,
}

/// A verdict's failure.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FailureEvent {
    /// The exception type.
    pub exception: Option<String>,
    /// The message.
    pub message: String,
    /// The failing frame, `file:line`.
    pub failing_frame: Option<String>,
    /// The whole text.
    pub text: String,
    /// The failing frame as people read it (`file:line:function`); not in the JSON line.
    #[serde(skip)]
    pub failing_frame_shown: Option<String>,
}

/// A verdict's history evidence.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct HistoryEvent {
    /// The counts.
    #[serde(flatten)]
    pub evidence: HistoryEvidence,
    /// Fisher's one-sided p-value for "the change raised the failure rate".
    pub p_value: Option<f64>,
}

/// `triage-summary`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct TriageSummary {
    /// Red tests.
    pub red: usize,
    /// Regressions.
    pub regression: usize,
    /// Unverified.
    pub unverified: usize,
    /// Known flakes.
    pub known_flake: usize,
    /// Over the rerun budget.
    pub budget_exceeded: usize,
    /// Not evidence.
    pub not_evidence: usize,
    /// Expired fingerprints.
    pub expired: usize,
}

/// Whether a rerun was made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum RerunStatus {
    /// Not rerun: the verdict does not allow it. The ledger is unchanged.
    Refused,
    /// Rerun; the ledger holds its pending line and its outcome line.
    Ran,
}

/// `rerun`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct RerunEvent {
    /// The test.
    pub test: String,
    /// Refused or ran.
    pub status: RerunStatus,
    /// The verdict that allowed or refused it.
    pub verdict: String,
    /// The fingerprint.
    pub fingerprint: Option<String>,
    /// The label to put on the change.
    pub label: Option<String>,
    /// Which rerun of the budget.
    pub attempt: Option<u32>,
    /// The seed pinned.
    pub seed: Option<String>,
    /// The rerun's outcome.
    pub outcome: Option<Outcome>,
    /// The stored run.
    pub run_id: Option<i64>,
    /// The ledger lines written.
    pub ledger: Vec<String>,
    /// The runner's logs.
    pub logs: Vec<PathBuf>,
}

/// `test-run`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TestRunEvent {
    /// The runner.
    pub runner: String,
    /// Each invocation's argv.
    pub argv: Vec<Vec<String>>,
    /// The seed.
    pub seed: Option<String>,
    /// Workers.
    pub workers: Option<u32>,
    /// The runner's exit code.
    pub exit_code: i32,
    /// The stored run.
    pub run_id: i64,
    /// Tests.
    pub tests: u64,
    /// Of those, red.
    pub red: u64,
    /// The report file.
    pub report: PathBuf,
    /// The runner's logs.
    pub logs: Vec<PathBuf>,
    /// The seed's number, as people read it; not in the JSON line.
    #[serde(skip)]
    pub seed_value: Option<u64>,
}

/// `ledger-stats`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct LedgerStatsEvent {
    /// The test.
    pub test: String,
    /// Its ledger lines.
    pub entries: usize,
    /// Distinct first failures among them.
    pub distinct_first_failures: usize,
    /// Lines per worker count.
    pub workers: Vec<WorkerCount>,
    /// Signs of a real race.
    pub flags: Vec<FlagEvent>,
}

/// A ledger flag with its sentence.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FlagEvent {
    /// The flag.
    #[serde(flatten)]
    pub flag: Flag,
    /// What it means.
    pub message: String,
}

/// `history-copy`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct HistoryCopyEvent {
    /// Runs copied.
    pub copied_runs: u64,
    /// Executions copied.
    pub copied_executions: u64,
    /// Runs the target held already.
    pub skipped_runs: u64,
    /// Runs in the source.
    pub from_runs: u64,
    /// Executions in the source.
    pub from_executions: u64,
    /// Runs in the target after.
    pub to_runs: u64,
    /// Executions in the target after.
    pub to_executions: u64,
}

/// `history-prune`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct HistoryPruneEvent {
    /// Runs before this were dropped.
    pub cutoff: Timestamp,
    /// The partitions dropped.
    pub dropped_partitions: Vec<String>,
    /// Runs removed.
    pub removed_runs: u64,
}

/// `clean`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct CleanEvent {
    /// Nothing was removed, only listed.
    pub dry_run: bool,
    /// Every run folder, kept ones too.
    pub all: bool,
    /// Newest folders kept.
    pub keep_last: u32,
    /// Folders younger than this many days kept.
    pub keep_days: u32,
    /// Folders removed (or to be).
    pub removed: Vec<PathBuf>,
    /// Their bytes.
    pub bytes: u64,
    /// Folders kept.
    pub kept: usize,
}

/// `init`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct InitEvent {
    /// What became of `.gitignore`.
    pub gitignore: String,
    /// The candor.toml written.
    pub path: PathBuf,
}

/// `agents`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct AgentsEvent {
    /// The instruction file, relative to the repository root when inside it.
    pub file: String,
    /// `created`, `updated`, `current`, or under `--check` `stale`.
    pub status: String,
    /// The unified diff of a stale file.
    pub diff: Option<String>,
}

/// `agents-block`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct AgentsBlock {
    /// The block, markers included.
    pub text: String,
}

/// `unbacked-claim`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct UnbackedClaim {
    /// The Markdown file.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// The claiming phrase.
    pub phrase: String,
    /// The sentence.
    pub sentence: String,
}

/// `lint-summary`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct LintSummary {
    /// The Markdown file.
    pub file: String,
    /// Claims no test backs.
    pub unbacked: usize,
}

/// `lint-diff`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct LintDiffEvent {
    /// The base commit.
    pub base: String,
    /// The head commit.
    pub head: String,
    /// Files changed.
    pub files: usize,
    /// Findings.
    pub findings: usize,
}

/// `lock`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct LockEvent {
    /// `fixtures` or `cassettes`.
    pub kind: String,
    /// The lock file.
    pub path: String,
    /// Files it pins.
    pub files: usize,
    /// Whether it was written.
    pub written: bool,
    /// Files that differ from it.
    pub drift: usize,
}

/// `freeze`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct FreezeEvent {
    /// The test.
    pub test: String,
    /// Who owns the freeze.
    pub owner: String,
    /// When it expires.
    pub expires: String,
    /// Its ticket.
    pub ticket: Option<String>,
    /// The replay command.
    pub replay: Option<String>,
    /// `active`, `expiring`, `expired` or `lapsed`.
    pub state: String,
    /// Days to expiry (negative: past).
    pub days_left: i64,
    /// Quarantined in the reliability file.
    pub quarantined: bool,
    /// The skip mark in the test's code.
    pub skip_mark: Option<SkipMarkEvent>,
}

/// A skip mark's place.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SkipMarkEvent {
    /// The file.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// The mark.
    pub mark: String,
}

/// `freeze-check`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct FreezeCheck {
    /// The day judged.
    pub today: String,
    /// Freezes.
    pub freezes: usize,
    /// Expired while held.
    pub expired: usize,
    /// Expiring within 7 days.
    pub expiring: usize,
    /// Expired, no longer held.
    pub lapsed: usize,
}

/// Suite runs of a test at the branch's commit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SuiteHistory {
    /// Suite runs in which it passed.
    pub green: u32,
    /// Suite runs in which it failed.
    pub red: u32,
}

/// `compare`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CompareEvent {
    /// The test.
    pub test: String,
    /// The verdict.
    pub verdict: CompareVerdict,
    /// The merge base's figures.
    pub base: SideSummary,
    /// The branch's figures.
    pub branch: SideSummary,
    /// The sequential test's p-value.
    pub p_value: f64,
    /// Why it stopped.
    pub stopped: Stop,
    /// Runs per side.
    pub runs: u32,
    /// The significance level.
    pub alpha: f64,
    /// The design's limit.
    pub max_runs_per_side: u32,
    /// The smallest rise the runs made could show.
    pub detectable_increase: Option<f64>,
    /// What the design protects; null where it has no meaning.
    pub protection: Option<Protection>,
    /// The branch failed less: the drop; null otherwise.
    pub drop: Option<Drop>,
    /// Suite runs of the test at the branch's commit.
    pub suite_history: SuiteHistory,
    /// The seed.
    pub seed: u64,
    /// The runner.
    pub runner: String,
    /// What the seed controls.
    pub seed_controls: String,
    /// Each side's bucket.
    pub buckets: Vec<Classified>,
    /// The quarantine ticket written.
    pub ticket: Option<PathBuf>,
    /// The run records.
    pub records: PathBuf,
    /// What to do.
    pub advice: String,
    /// The order investigation, when one ran (docs/order.md).
    pub order: Option<crate::order::Finding>,
}

/// `repro`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ReproEvent {
    /// The test.
    pub test: String,
    /// The verdict.
    pub verdict: ReproVerdict,
    /// The seed.
    pub seed: u64,
    /// Whether the runner took the seed.
    pub seed_applied: bool,
    /// What the seed controls.
    pub seed_controls: String,
    /// The base's figures.
    pub base: SideSummary,
    /// The branch's figures.
    pub branch: SideSummary,
    /// The receipt.
    pub receipt: String,
    /// The run records.
    pub records: PathBuf,
}

/// `order`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct OrderEvent {
    /// The runner.
    pub runner: String,
    /// The investigation.
    #[serde(flatten)]
    pub finding: crate::order::Finding,
    /// The reproduction joined for a POSIX shell.
    pub reproduction_command: Option<String>,
    /// Recorded tests left out.
    pub recorded_dropped: usize,
    /// The classifier's bucket, when the verdict explains the red.
    pub classified: Option<Classified>,
}

/// `gate`: the score report and where it was written.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct GateEvent {
    /// The report, as `score-report.json` holds it.
    #[serde(flatten)]
    pub report: GateReport,
    /// `score-report.json`.
    pub report_path: PathBuf,
}

/// An owned [`ScoreReport`].
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
#[allow(missing_docs)] // each field is ScoreReport's
pub struct GateReport {
    pub schema: String,
    pub lane: String,
    pub flake_budget: u32,
    pub base: String,
    pub head: String,
    pub pass: bool,
    pub deterministic: bool,
    pub reasons: Vec<Reason>,
    pub replayed: Replayed,
    pub suite: Option<SuiteRun>,
    pub min_replays: u32,
    pub seed: Option<u64>,
    pub max_wall_seconds: u32,
    pub wall_seconds: f64,
    pub listing_seconds: Option<f64>,
    pub touched: Vec<TouchedReport>,
    pub skipped_as_at_base: Vec<crate::gate::lane::SkippedAsAtBase>,
    pub runs: Vec<ReplayRun>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batching: Option<crate::gate::lane::Batching>,
    pub findings: Vec<crate::gate::rules::Finding>,
    pub fixture_drift: Vec<crate::gate::locks::Drift>,
    pub human_owned: Vec<crate::gate::human_owned::OwnedChange>,
    pub approvals: Vec<Approval>,
    pub test_infrastructure: Vec<crate::gate::infrastructure::InfraChange>,
    pub unlocked_data: Vec<String>,
    pub unaccounted: Vec<crate::gate::tamper::Unaccounted>,
    pub base_judgement: Option<crate::gate::tamper::BaseJudgement>,
    pub base_version_seconds: Option<f64>,
    pub receipts: Vec<crate::gate::receipts::Receipt>,
    pub freezes_in_force: Vec<String>,
}

impl From<&ScoreReport<'_>> for GateReport {
    fn from(report: &ScoreReport<'_>) -> GateReport {
        GateReport {
            schema: report.schema.to_owned(),
            lane: report.lane.to_owned(),
            flake_budget: report.flake_budget,
            base: report.base.to_owned(),
            head: report.head.to_owned(),
            pass: report.pass,
            deterministic: report.deterministic,
            reasons: report.reasons.to_vec(),
            replayed: report.replayed.clone(),
            suite: report.suite.cloned(),
            min_replays: report.min_replays,
            seed: report.seed,
            max_wall_seconds: report.max_wall_seconds,
            wall_seconds: report.wall_seconds,
            listing_seconds: report.listing_seconds,
            touched: report.touched.to_vec(),
            skipped_as_at_base: report.skipped_as_at_base.to_vec(),
            runs: report.runs.to_vec(),
            batching: report.batching.cloned(),
            findings: report.findings.to_vec(),
            fixture_drift: report.fixture_drift.to_vec(),
            human_owned: report.human_owned.to_vec(),
            approvals: report.approvals.to_vec(),
            test_infrastructure: report.test_infrastructure.to_vec(),
            unlocked_data: report.unlocked_data.to_vec(),
            unaccounted: report.unaccounted.to_vec(),
            base_judgement: report.base_judgement.cloned(),
            base_version_seconds: report.base_version_seconds,
            receipts: report.receipts.to_vec(),
            freezes_in_force: report.freezes_in_force.clone(),
        }
    }
}

/// `demo-step`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct DemoStep {
    /// The step, from 1.
    pub step: usize,
    /// What it shows.
    pub says: String,
    /// The candor arguments it runs.
    pub argv: Vec<String>,
}

/// `demo-exit`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct DemoExit {
    /// The step.
    pub step: usize,
    /// Its exit code.
    pub exit: u8,
    /// The exit code it should have.
    pub expected: u8,
}

/// `demo-kept`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct DemoKept {
    /// The demo's repository, kept.
    pub repository: PathBuf,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue #13 item 2: the envelope is `type`, then `v`, then the body in field order.
    #[test]
    fn a_line_is_type_then_v_then_the_body_in_order() {
        let event = Event::LintSummary(LintSummary {
            file: "README.md".into(),
            unbacked: 2,
        });
        assert_eq!(
            event.to_line(),
            r#"{"type":"lint-summary","v":1,"file":"README.md","unbacked":2}"#
        );
        assert_eq!(event.kind(), "lint-summary");
        assert!(!event.is_diagnostic());
    }

    #[test]
    fn the_replay_mode_schema_lists_what_serde_writes() {
        use crate::policy::ReplayMode;
        let schema = serde_json::to_value(replay_mode_schema(&mut SchemaGenerator::default()))
            .expect("JSON");
        let written: Vec<serde_json::Value> = [ReplayMode::Touched, ReplayMode::All]
            .iter()
            .map(|mode| serde_json::to_value(mode).expect("JSON"))
            .collect();
        assert_eq!(schema["enum"].as_array().expect("an enum"), &written);
    }

    #[test]
    fn every_kind_is_one_branch_of_the_schema() {
        let schema = serde_json::to_value(schema()).expect("a schema is JSON");
        let branches = schema["oneOf"].as_array().expect("one branch per type");
        let tags: Vec<&str> = branches
            .iter()
            .map(|b| b["properties"]["type"]["const"].as_str().expect("a tag"))
            .collect();
        assert_eq!(tags, Event::KINDS);
        for branch in branches {
            let required: Vec<&str> = branch["required"]
                .as_array()
                .expect("required fields")
                .iter()
                .filter_map(|r| r.as_str())
                .collect();
            assert!(
                required.contains(&"type") && required.contains(&"v"),
                "{branch}"
            );
        }
    }
}
