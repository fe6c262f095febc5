//! The cargo-nextest adapter: JUnit XML through a generated tool configuration (a
//! `candor` profile with retries off and its store in the scratch directory), one test
//! selected by its target's cargo options and `--exact`.
//!
//! Why JUnit rather than nextest's libtest-json: libtest-json names a library's tests
//! `package::crate_name$test` and a binary's `package::name$test`, while nextest's own
//! binary ids (in JUnit, `cargo nextest list` and filtersets) are `package` and
//! `package::bin/name`; JUnit gives the ids `cargo nextest list` gives. It is also stable,
//! where libtest-json needs `NEXTEST_EXPERIMENTAL_LIBTEST_JSON=1`.

use std::collections::BTreeMap;

use serde::Deserialize;

use super::cargo::{CargoPrefix, locate, test_targets};
use super::{
    Adapter, BatchOrdering, Context, ListedTest, RunOptions, RunReport, RunnerError, RunnerKind,
    SeedSupport, available_parallelism, option_value, strings,
};
use crate::results::{Format, ids};

const NO_SEED: &str = "nextest has no shuffle: each test runs in its own process, started in a fixed order, so there is no seed to record";

const ISOLATED: &str = "nextest starts each test in a process of its own, in its own order, several at once (its `-j`)";

/// The profile candor defines in its tool configuration.
const PROFILE: &str = "candor";

/// cargo-nextest through a command prefix (`cargo nextest run` unless `[runner] command`
/// says; it must contain `nextest run`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nextest {
    prefix: CargoPrefix,
}

impl Nextest {
    /// The adapter for a prefix.
    pub fn new(command: Option<Vec<String>>) -> Result<Self, RunnerError> {
        Ok(Nextest {
            prefix: CargoPrefix::parse(command, &["nextest", "run"], RunnerKind::Nextest)?,
        })
    }

    fn run(
        &self,
        context: &Context<'_>,
        selection: Option<&Selection<'_>>,
    ) -> Result<RunReport, RunnerError> {
        let store = context.scratch_path("nextest-store");
        let report = store.join(PROFILE).join("junit.xml");
        let config = context.scratch_path("nextest-tool.toml");
        fs_err::create_dir_all(&context.scratch)?;
        fs_err::write(&config, tool_config(&store.to_string_lossy()))?;

        let mut argv = self.prefix.command(&["nextest", "run"]);
        argv.extend(strings(&[
            "--no-fail-fast",
            "--retries",
            "0",
            "--tool-config-file",
        ]));
        argv.push(format!("{PROFILE}:{}", config.display()));
        argv.extend(strings(&["--profile", PROFILE]));
        match selection {
            Some(Selection::One(selector, _)) => argv.extend(selector.iter().cloned()),
            // One expression for the whole batch: nextest still starts each test in a
            // process of its own.
            Some(Selection::Batch(expression)) => {
                argv.push("-E".to_owned());
                argv.push(expression.clone());
            }
            None => {}
        }
        let one = matches!(selection, Some(Selection::One(..)));
        if one || !self.prefix.binary_options.is_empty() {
            argv.push("--".to_owned());
            argv.extend(self.prefix.binary_options.iter().cloned());
        }
        if let Some(Selection::One(_, name)) = selection {
            argv.extend(strings(&["--exact", name]));
        }
        let mut invocation = context.invocation("nextest-run", argv).report_at(&report);
        if let Some(target) = context.cargo_target() {
            invocation = invocation.env("CARGO_TARGET_DIR", &target);
        }
        let record = context.run(invocation)?;
        context.check_ran(RunnerKind::Nextest, &record, &report)?;
        let run = RunReport {
            runner: RunnerKind::Nextest,
            report,
            format: Some(Format::Junit),
            seed: None,
            workers: self.workers(),
            invocations: vec![record],
            warnings: Vec::new(),
        };
        context.check_frames(&run)?;
        Ok(run)
    }

    /// `-j`/`--test-threads` from the prefix, else `NEXTEST_TEST_THREADS`, else the
    /// machine's parallelism, nextest's default (a profile's `test-threads` is not read).
    /// `num-cpus` and negative counts are left to nextest and reported as unknown.
    fn workers(&self) -> Option<u32> {
        let spelled = option_value(&self.prefix.cargo_options, &["-j", "--test-threads"], true)
            .map(str::to_owned)
            .or_else(|| std::env::var(crate::env_vars::EnvVars::NEXTEST_TEST_THREADS).ok());
        match spelled {
            Some(value) => value.parse().ok(),
            None => available_parallelism(),
        }
    }
}

/// What a nextest run covers besides the whole suite.
enum Selection<'a> {
    /// One test: its target's cargo options and its name.
    One(&'a [String], &'a str),
    /// Several tests: a filterset naming each exactly.
    Batch(String),
}

/// A filterset that selects exactly the tests named, each as `binary-id::name`:
/// `(binary_id(=B) & test(=N)) | …`. Each string is escaped for the filterset grammar,
/// whose strings end at an unescaped `)` or `,`.
fn batch_filterset(located: &[(String, String)]) -> String {
    let escape = |text: &str| {
        let mut out = String::with_capacity(text.len());
        for c in text.chars() {
            if matches!(c, '\\' | ')' | ',' | '(') {
                out.push('\\');
            }
            out.push(c);
        }
        out
    };
    located
        .iter()
        .map(|(binary, name)| format!("(binary_id(={}) & test(={}))", escape(binary), escape(name)))
        .collect::<Vec<_>>()
        .join(" | ")
}

/// The tool configuration: a profile without retries that keeps going after a failure
/// and writes JUnit, its store in candor's scratch directory so nothing lands in the
/// user's `target/`.
fn tool_config(store: &str) -> String {
    let mut junit = toml::Table::new();
    junit.insert("path".into(), "junit.xml".into());
    let mut profile = toml::Table::new();
    profile.insert("retries".into(), 0.into());
    profile.insert("fail-fast".into(), false.into());
    profile.insert("junit".into(), junit.into());
    let mut profiles = toml::Table::new();
    profiles.insert(PROFILE.into(), profile.into());
    let mut store_table = toml::Table::new();
    store_table.insert("dir".into(), store.into());
    let mut config = toml::Table::new();
    config.insert("store".into(), store_table.into());
    config.insert("profile".into(), profiles.into());
    config.to_string()
}

impl Adapter for Nextest {
    fn kind(&self) -> RunnerKind {
        RunnerKind::Nextest
    }

    fn seed_support(&self) -> SeedSupport {
        SeedSupport::None(NO_SEED)
    }

    fn run_suite(
        &self,
        context: &Context<'_>,
        _options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        self.run(context, None)
    }

    fn run_one(
        &self,
        context: &Context<'_>,
        test_id: &str,
        _options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        let targets = test_targets(&self.prefix, context)?;
        let (target, name) = locate(&targets, test_id, RunnerKind::Nextest)?;
        self.run(context, Some(&Selection::One(&target.selector, &name)))
    }

    fn batches(&self) -> bool {
        true
    }

    fn batch_ordering(&self) -> BatchOrdering {
        BatchOrdering::Isolated(ISOLATED)
    }

    /// One `cargo nextest run -E '(binary_id(=B) & test(=N)) | …'`, retries off, its
    /// own parallelism (`workers`).
    fn run_batch(
        &self,
        context: &Context<'_>,
        test_ids: &[String],
        _options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        let targets = test_targets(&self.prefix, context)?;
        let located = test_ids
            .iter()
            .map(|id| {
                locate(&targets, id, RunnerKind::Nextest)
                    .map(|(target, name)| (target.binary_id.clone(), name))
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.run(context, Some(&Selection::Batch(batch_filterset(&located))))
    }

    fn list(&self, context: &Context<'_>) -> Result<Vec<ListedTest>, RunnerError> {
        #[derive(Deserialize)]
        struct Listing {
            #[serde(rename = "rust-suites")]
            suites: BTreeMap<String, Suite>,
        }
        #[derive(Deserialize)]
        struct Suite {
            #[serde(default)]
            testcases: BTreeMap<String, serde_json::Value>,
        }
        let targets = test_targets(&self.prefix, context)?;
        let mut argv = self.prefix.base.clone();
        argv.extend(strings(&["nextest", "list", "--message-format", "json"]));
        let output = context.probe("nextest-list", argv, &[])?;
        let listing: Listing =
            serde_json::from_str(&output).map_err(|error| RunnerError::Output {
                what: "cargo nextest list --message-format json".to_owned(),
                message: error.to_string(),
            })?;
        let mut tests = Vec::new();
        for (binary_id, suite) in listing.suites {
            let file = targets
                .iter()
                .find(|t| t.binary_id == binary_id)
                .and_then(|t| t.file.clone());
            tests.extend(suite.testcases.into_keys().map(|name| ListedTest {
                id: ids::cargo(Some(&binary_id), &name),
                file: file.clone(),
            }));
        }
        Ok(tests)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_filterset_names_each_test_exactly_and_escapes_its_strings() {
        let located = vec![
            ("my-crate".to_owned(), "api::adds".to_owned()),
            ("my-crate::it".to_owned(), "odd),name\\".to_owned()),
        ];
        assert_eq!(
            batch_filterset(&located),
            r"(binary_id(=my-crate) & test(=api::adds)) | (binary_id(=my-crate::it) & test(=odd\)\,name\\))"
        );
    }

    #[test]
    fn tool_config_turns_retries_off_and_keeps_the_store_in_scratch() {
        let config: toml::Table =
            toml::from_str(&tool_config("/tmp/x \"y\"/store")).unwrap_or_default();
        assert_eq!(config["store"]["dir"].as_str(), Some("/tmp/x \"y\"/store"));
        assert_eq!(config["profile"]["candor"]["retries"].as_integer(), Some(0));
        assert_eq!(
            config["profile"]["candor"]["fail-fast"].as_bool(),
            Some(false)
        );
        assert_eq!(
            config["profile"]["candor"]["junit"]["path"].as_str(),
            Some("junit.xml")
        );
    }
}
