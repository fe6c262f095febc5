//! The MCP tools as data: each tool's parameters (a serde type whose JSON Schema is the
//! tool's input schema) and the candor command line they stand for. Pure: the server runs
//! the command line through the CLI's own entry point.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use schemars::JsonSchema;
use serde::Deserialize;
use serde::de::DeserializeOwned;

/// `base` or `worktree`, as `--policy` takes it.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum PolicyParam {
    /// The merge base's committed policy (the default).
    Base,
    /// The work tree's files: an explicit local override.
    Worktree,
}

impl PolicyParam {
    fn as_str(self) -> &'static str {
        match self {
            PolicyParam::Base => "base",
            PolicyParam::Worktree => "worktree",
        }
    }
}

/// `--tier` of `candor tests`.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum TierParam {
    /// Failures are evidence.
    Trusted,
    /// Failures must be measured first.
    Probation,
    /// Failures are not evidence (new failure shapes still are).
    Quarantined,
    /// Not in the reliability file yet (treated as probation).
    Unlisted,
}

impl TierParam {
    fn as_str(self) -> &'static str {
        match self {
            TierParam::Trusted => "trusted",
            TierParam::Probation => "probation",
            TierParam::Quarantined => "quarantined",
            TierParam::Unlisted => "unlisted",
        }
    }
}

/// `triage`: the verdict of every red test.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TriageParams {
    /// Result files to triage, read without being stored; none: the latest run in the
    /// history that is not a rerun.
    #[serde(default)]
    pub files: Vec<String>,
    /// Workers of the run that wrote the files.
    #[schemars(range(min = 1))]
    pub workers: Option<u32>,
    /// The runner that wrote the files (`pytest`, `cargo`, `nextest`, `go`).
    pub runner: Option<String>,
    /// Where the policy is read; `base` unless you mean to override it locally.
    pub policy: Option<PolicyParam>,
}

/// One test, by id.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShowParams {
    /// The test's id, as `tests` lists it.
    pub test: String,
    /// At most this many executions, newest first.
    #[schemars(range(min = 1))]
    pub limit: Option<u32>,
}

/// `tests`: the tests in the history.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TestsParams {
    /// Only tests whose latest run was red.
    #[serde(default)]
    pub failing: bool,
    /// Only tests with this tier.
    pub tier: Option<TierParam>,
    /// Only tests whose id contains this text.
    pub name: Option<String>,
}

/// A test, optionally: `reliability` and `ledger` answer for every test without one.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OptionalTestParams {
    /// The test's id, exactly; none: every test.
    pub test: Option<String>,
}

/// `lint_summary`: a summary's text.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LintSummaryParams {
    /// The text (a pull request's description, a commit message, a chat summary).
    pub text: String,
}

/// `lint_diff`: the change to check.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LintDiffParams {
    /// Compare against the merge base of this ref and HEAD; none: the default branch.
    pub base: Option<String>,
    /// The change's last commit; none: HEAD.
    pub head: Option<String>,
}

/// No parameters.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoParams {}

/// `test`: run the suite.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TestParams {
    /// Arguments appended to the runner's command.
    #[serde(default)]
    pub argv: Vec<String>,
    /// The seed to hand the runner.
    pub seed: Option<u64>,
    /// Where the policy is read.
    pub policy: Option<PolicyParam>,
}

/// `rerun`: one rerun of a known flake, its ledger line first.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RerunParams {
    /// The test's id.
    pub test: String,
    /// The change's base commit (a sha); none: the merge base with the default branch.
    pub change: Option<String>,
    /// The seed to hand the runner.
    pub seed: Option<u64>,
}

/// `compare`: the test's failure rate on the branch against the merge base.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompareParams {
    /// The test's id.
    pub test: String,
    /// Compare against the merge base with this branch or commit.
    pub base: Option<String>,
    /// Most runs per side (1 to 60).
    #[schemars(range(min = 1, max = 60))]
    pub runs: Option<u32>,
    /// Largest false branch-worse rate (above 0, at most 0.5).
    pub alpha: Option<f64>,
    /// Run every planned run.
    #[serde(default)]
    pub no_early_stop: bool,
    /// The seed every run's seed derives from.
    pub seed: Option<u64>,
}

/// `repro`: check a claimed deterministic reproduction.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReproParams {
    /// The test's id.
    pub test: String,
    /// The seed claimed to reproduce the failure.
    pub seed: u64,
    /// The merge base with this branch or commit.
    pub base: Option<String>,
    /// Runs per side (1 to 100).
    #[schemars(range(min = 1, max = 100))]
    pub runs: Option<u32>,
}

/// `order`: does the test's red depend on the tests before it?
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OrderParams {
    /// The test's id.
    pub test: String,
    /// A results file of the run the test went red in.
    pub from: Option<String>,
    /// The base seed.
    pub seed: Option<u64>,
    /// Wall-clock limit in seconds.
    #[schemars(range(min = 1))]
    pub budget_seconds: Option<u64>,
}

/// `gate`: the merge lane's verdict. No human approval can be given through a tool.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GateParams {
    /// Judge HEAD against its merge base with this ref.
    pub base: Option<String>,
}

/// What a tool call becomes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    /// The candor command line after `candor` (output options are the server's).
    pub args: Vec<String>,
    /// Keep only the events of this type whose `key` field passes `filter`.
    pub filter: Option<Filter>,
    /// Text the command reads from a file: written to a temporary file whose path replaces
    /// [`TEXT_FILE`] in `args`.
    pub text_file: Option<String>,
}

/// The placeholder for [`Call::text_file`]'s path.
pub const TEXT_FILE: &str = "\0text-file";

/// Keeps the events of one type whose field matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filter {
    /// The event type filtered; others pass.
    pub kind: &'static str,
    /// The field compared.
    pub key: &'static str,
    /// The text compared with.
    pub value: String,
    /// Containment instead of equality.
    pub contains: bool,
}

impl Filter {
    /// Keeps the `kind` events whose `key` is `value`.
    fn equal(kind: &'static str, key: &'static str, value: String) -> Self {
        Filter {
            kind,
            key,
            value,
            contains: false,
        }
    }

    /// Keeps the `kind` events whose `key` contains `value`.
    fn containing(kind: &'static str, key: &'static str, value: String) -> Self {
        Filter {
            contains: true,
            ..Filter::equal(kind, key, value)
        }
    }

    /// Whether `event` is kept.
    pub fn keeps(&self, event: &serde_json::Value) -> bool {
        if event["type"] != self.kind {
            return true;
        }
        let field = event[self.key].as_str().unwrap_or("");
        if self.contains {
            field.contains(&self.value)
        } else {
            field == self.value
        }
    }
}

/// One tool: its name, what it does, whether it acts, and how its parameters become a
/// command line.
pub struct ToolSpec {
    /// The tool's name.
    pub name: &'static str,
    /// Its description for the agent.
    pub description: &'static str,
    /// Runs tests or writes files: offered only with `--allow-run`.
    pub acting: bool,
    /// Long: sends progress notifications.
    pub long: bool,
    schema: fn() -> JsonObject,
    build: fn(serde_json::Value) -> Result<Call, String>,
}

impl ToolSpec {
    /// The MCP description of the tool.
    pub fn tool(&self) -> Tool {
        let mut tool = Tool::new(self.name, self.description, Arc::new((self.schema)()));
        tool.annotations = Some(
            ToolAnnotations::new()
                .read_only(!self.acting)
                .destructive(false)
                .open_world(false),
        );
        tool
    }

    /// The command line for `arguments`, or why they are not this tool's parameters.
    pub fn call(&self, arguments: serde_json::Value) -> Result<Call, String> {
        (self.build)(arguments)
    }
}

fn schema<T: JsonSchema>() -> JsonObject {
    let value = serde_json::to_value(schemars::schema_for!(T)).unwrap_or_default();
    match value {
        serde_json::Value::Object(object) => object,
        _ => JsonObject::new(),
    }
}

fn parse<T: DeserializeOwned>(arguments: serde_json::Value) -> Result<T, String> {
    serde_json::from_value(arguments).map_err(|error| error.to_string())
}

/// A candor command line being built from a tool's parameters.
struct Line(Vec<String>);

impl Line {
    fn of(words: &[&str]) -> Self {
        Line(words.iter().map(|word| (*word).to_owned()).collect())
    }

    /// `--name value` when the value is there.
    fn option(mut self, name: &str, value: Option<impl ToString>) -> Self {
        if let Some(value) = value {
            self.0.push(name.to_owned());
            self.0.push(value.to_string());
        }
        self
    }

    /// `--name` when `on`.
    fn flag(mut self, name: &str, on: bool) -> Self {
        if on {
            self.0.push(name.to_owned());
        }
        self
    }

    /// Positionals after `--`, so that a test id starting with `-` is never an option.
    fn positionals(mut self, values: impl IntoIterator<Item = String>) -> Self {
        self.0.push("--".to_owned());
        self.0.extend(values);
        self
    }

    fn call(self) -> Call {
        Call {
            args: self.0,
            filter: None,
            text_file: None,
        }
    }

    /// The call, `text` written to the file [`TEXT_FILE`] stands for.
    fn with_text(self, text: String) -> Call {
        Call {
            text_file: Some(text),
            ..self.call()
        }
    }

    /// The call, its events kept by `filter` when there is one.
    fn filtered(self, filter: Option<Filter>) -> Call {
        Call {
            filter,
            ..self.call()
        }
    }
}

/// A [`ToolSpec`] declared once: `read` (offered always) or `act` (only with
/// `--allow-run`, long: progress and cancellation), its name, its parameters' type (their
/// JSON Schema and their parsing both come from it, so they cannot disagree), its
/// description, and the command line the parsed parameters become.
macro_rules! tool {
    (read $name:literal, $params:ty, $description:literal, |$p:pat_param| $line:expr) => {
        tool!(@spec false, $name, $params, $description, |$p| $line)
    };
    (act $name:literal, $params:ty, $description:literal, |$p:pat_param| $line:expr) => {
        tool!(@spec true, $name, $params, $description, |$p| $line)
    };
    (@spec $acting:literal, $name:literal, $params:ty, $description:literal, |$p:pat_param| $line:expr) => {
        ToolSpec {
            name: $name,
            description: $description,
            acting: $acting,
            long: $acting,
            schema: schema::<$params>,
            build: |arguments| parse::<$params>(arguments).map(|$p| $line),
        }
    };
}

/// Every tool, read-only first.
pub const TOOLS: [ToolSpec; 14] = [
    tool!(read "triage", TriageParams,
        "The verdict of every red test of the latest run (or of the result files given): regression, unverified, known-flake, budget-exceeded, not-evidence or expired, with the reason and whether a rerun is allowed. Policy from the merge base.",
        |p| Line::of(&["triage"])
            .option("--workers", p.workers)
            .option("--runner", p.runner)
            .option("--policy", p.policy.map(PolicyParam::as_str))
            .positionals(p.files)
            .call()),
    tool!(read "show", ShowParams,
        "One test's executions, newest first, with its tier.",
        |p| Line::of(&["show"]).option("--limit", p.limit).positionals([p.test]).call()),
    tool!(read "tests", TestsParams,
        "The tests in the history with their tier, runs and failures; filter by tier, failing, or a part of the id.",
        |p| Line::of(&["tests"])
            .flag("--failing", p.failing)
            .option("--tier", p.tier.map(TierParam::as_str))
            .filtered(p.name.map(|value| Filter::containing("test", "id", value)))),
    tool!(read "reliability", OptionalTestParams,
        "Each test's reliability tier from its rolling window and why (runs, failures, Wilson interval, flips); never writes the reliability file.",
        |p| Line::of(&["reliability"])
            .filtered(p.test.map(|value| Filter::equal("reliability", "test", value)))),
    tool!(read "ledger", OptionalTestParams,
        "The rerun ledger per test: reruns, distinct first failures, worker counts, signs of a real race. Whether a rerun is still allowed is in `triage`'s verdict.",
        |p| Line::of(&["ledger", "stats"])
            .filtered(p.test.map(|value| Filter::equal("ledger-stats", "test", value)))),
    tool!(read "lint_summary", LintSummaryParams,
        "Check a summary's text (a pull request's description): rerun claims (\"passed on rerun\", \"known flake\", ...) that quote no ledger line come back as unbacked claims.",
        |p| Line::of(&["lint", "summary"]).positionals([TEXT_FILE.to_owned()]).with_text(p.text)),
    tool!(read "lint_diff", LintDiffParams,
        "The diff rules on the current change: added lines that skip, mark or retry tests, or match the base's bans.",
        |p| Line::of(&["lint", "diff"]).option("--base", p.base).option("--head", p.head).call()),
    tool!(read "explain", NoParams,
        "candor's rules from the merge base's candor.toml (reruns with their numbers, fingerprints, bans, tiers, the summary rule) and what each verdict means, for your own reasoning.",
        |NoParams {}| Line::of(&["agents", "--print"]).call()),
    tool!(act "test", TestParams,
        "Run the suite through its runner, store the results, and give every red test its verdict.",
        |p| Line::of(&["test"])
            .option("--seed", p.seed)
            .option("--policy", p.policy.map(PolicyParam::as_str))
            .positionals(p.argv)
            .call()),
    tool!(act "rerun", RerunParams,
        "Rerun one known flake in isolation after writing its ledger line; refused (isError) for any other verdict. The result holds the ledger receipt.",
        |p| Line::of(&["rerun"])
            .option("--change", p.change)
            .option("--seed", p.seed)
            .positionals([p.test])
            .call()),
    tool!(act "compare", CompareParams,
        "Measure one test's failure rate on the branch against the merge base, interleaved, before anyone writes a fix. Sends progress; honours cancellation.",
        |p| Line::of(&["compare"])
            .option("--base", p.base)
            .option("--runs", p.runs)
            .option("--alpha", p.alpha)
            .flag("--no-early-stop", p.no_early_stop)
            .option("--seed", p.seed)
            .positionals([p.test])
            .call()),
    tool!(act "repro", ReproParams,
        "Check a claimed deterministic reproduction: with the seed the test fails on the merge base every run and passes on the branch every run.",
        |p| Line::of(&["repro"])
            .option("--seed", Some(p.seed))
            .option("--base", p.base)
            .option("--runs", p.runs)
            .positionals([p.test])
            .call()),
    tool!(act "order", OrderParams,
        "Find out whether a test's red depends on the tests before it, on the seed, or on running twice in one process.",
        |p| Line::of(&["order"])
            .option("--from", p.from)
            .option("--seed", p.seed)
            .option("--budget-seconds", p.budget_seconds)
            .positionals([p.test])
            .call()),
    tool!(act "gate", GateParams,
        "The merge lane's verdict for the change (HEAD against its merge base), flake budget zero; writes score-report.json. A human's approval cannot be given through this tool.",
        |p| Line::of(&["gate"]).option("--base", p.base).call()),
];

/// The tools offered: the read-only ones, and the acting ones when `allow_run`.
pub fn offered(allow_run: bool) -> impl Iterator<Item = &'static ToolSpec> {
    TOOLS.iter().filter(move |spec| allow_run || !spec.acting)
}

/// The verdicts and what each one allows, for `explain`.
pub const VERDICTS: [(&str, &str); 6] = [
    (
        "regression",
        "real evidence: investigate and fix; never rerun",
    ),
    (
        "unverified",
        "measure before reasoning: `compare` on the branch and the merge base; never rerun",
    ),
    (
        "known-flake",
        "the exact shape of a fingerprint with budget left: one `rerun`, its ledger line written first",
    ),
    (
        "budget-exceeded",
        "the exact shape of a fingerprint whose reruns are used up: no rerun; fix it or ask its owner",
    ),
    (
        "not-evidence",
        "a quarantined test's known shape: says nothing either way; no rerun needed",
    ),
    (
        "expired",
        "matches only an expired fingerprint: a regression until a human renews it",
    ),
];

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn spec(name: &str) -> &'static ToolSpec {
        TOOLS.iter().find(|spec| spec.name == name).expect("a tool")
    }

    #[test]
    fn the_read_only_set_holds_no_acting_tool_and_allow_run_adds_all_six() {
        let read: Vec<_> = offered(false).map(|s| s.name).collect();
        assert_eq!(read, crate::agents::READ_ONLY_TOOLS);
        let all: Vec<_> = offered(true).map(|s| s.name).collect();
        assert_eq!(all[read.len()..], crate::agents::ACTING_TOOLS);
    }

    #[test]
    fn a_test_id_that_looks_like_an_option_stays_a_positional() {
        let call = spec("rerun")
            .call(json!({ "test": "--policy=worktree" }))
            .unwrap();
        assert_eq!(call.args, ["rerun", "--", "--policy=worktree"]);
    }

    #[test]
    fn unknown_or_mistyped_parameters_are_refused() {
        assert!(spec("rerun").call(json!({ "test": 3 })).is_err());
        assert!(spec("rerun").call(json!({})).is_err());
        assert!(spec("gate").call(json!({ "approved_by": "me" })).is_err());
        assert!(spec("explain").call(json!({ "x": 1 })).is_err());
    }

    #[test]
    fn every_schema_is_an_object_schema() {
        for spec in &TOOLS {
            let tool = spec.tool();
            assert_eq!(tool.input_schema["type"], "object", "{}", spec.name);
        }
    }

    #[test]
    fn a_filter_keeps_other_event_types() {
        let filter = Filter {
            kind: "test",
            key: "id",
            value: "pay".to_owned(),
            contains: true,
        };
        assert!(filter.keeps(&json!({ "type": "counted" })));
        assert!(filter.keeps(&json!({ "type": "test", "id": "t/pay::x" })));
        assert!(!filter.keeps(&json!({ "type": "test", "id": "t/cart::x" })));
    }
}
