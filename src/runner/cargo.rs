//! The `cargo test` (libtest) adapter, and what it shares with nextest: the workspace's
//! test targets from `cargo metadata`, named by nextest's binary ids.
//!
//! libtest's JSON never says which test binary a line comes from, so each test target runs
//! in its own `cargo test -p PKG --lib|--bin N|--test N …` and its test names are
//! rewritten to `binary-id$name`, the spelling nextest's libtest-json uses. The parser
//! reads that as `binary-id::name` (`results::ids::cargo`), the same id nextest's JUnit
//! and `cargo nextest list` give, so a test keeps its id whichever cargo runner ran it.
//!
//! libtest's JSON and `--shuffle-seed` are unstable options. Setting `RUSTC_BOOTSTRAP=1`
//! for cargo would rebuild every crate whose build script watches it (anyhow, thiserror,
//! proc-macro2, … and all their dependents; measured), so it is set only for the test
//! binaries: cargo runs them through a target runner, and the runner is `env
//! RUSTC_BOOTSTRAP=1`, given in `CARGO_TARGET_<HOST>_RUNNER`, which is not part of any
//! build fingerprint.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::Deserialize;

use super::{
    Adapter, BatchOrdering, Context, InvocationRecord, ListedTest, RunOptions, RunReport,
    RunnerError, RunnerKind, Seed, SeedSupport, available_parallelism, option_value, strings,
};
use crate::results::{Format, ids};

const SEED_CONTROLS: &str = "libtest's --shuffle-seed fixes the order in which each test binary starts its tests; with more than one test thread the tests still overlap as the scheduler decides, and nothing the tests themselves randomize is seeded";

/// A cargo command prefix cut around its subcommand: `cargo +nightly test --features x --
/// --test-threads 2` is `cargo +nightly`, `test`, `--features x`, `--test-threads 2`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct CargoPrefix {
    /// Up to the subcommand: the program and toolchain (`cargo +nightly`).
    pub base: Vec<String>,
    /// Between the subcommand and `--`: cargo's options (features, profile).
    pub cargo_options: Vec<String>,
    /// After `--`: options for the test binaries.
    pub binary_options: Vec<String>,
}

impl CargoPrefix {
    pub(super) fn parse(
        command: Option<Vec<String>>,
        subcommand: &[&str],
        kind: RunnerKind,
    ) -> Result<Self, RunnerError> {
        let command = command.unwrap_or_else(|| kind.default_command());
        let at = command
            .windows(subcommand.len())
            .position(|window| window.iter().zip(subcommand).all(|(a, b)| a == b))
            .ok_or_else(|| RunnerError::BadCommand {
                kind,
                problem: format!(
                    "`{}` does not contain `{}`",
                    command.join(" "),
                    subcommand.join(" ")
                ),
            })?;
        let base = command[..at].to_vec();
        let rest = &command[at + subcommand.len()..];
        let (cargo_options, binary_options) = match rest.iter().position(|a| a == "--") {
            Some(dash) => (rest[..dash].to_vec(), rest[dash + 1..].to_vec()),
            None => (rest.to_vec(), Vec::new()),
        };
        Ok(CargoPrefix {
            base,
            cargo_options,
            binary_options,
        })
    }

    /// `base subcommand cargo_options`.
    pub(super) fn command(&self, subcommand: &[&str]) -> Vec<String> {
        let mut argv = self.base.clone();
        argv.extend(strings(subcommand));
        argv.extend(self.cargo_options.iter().cloned());
        argv
    }
}

/// One test target of the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct TestTarget {
    /// nextest's binary id: `pkg` for a library, `pkg::name` for an integration test,
    /// `pkg::bin/name`, `pkg::example/name`, `pkg::bench/name`.
    pub binary_id: String,
    /// The cargo options that select it: `-p pkg --test name`.
    pub selector: Vec<String>,
    /// An integration test's source file, relative to the repository root.
    pub file: Option<String>,
}

/// The test targets of the workspace's default members, from `cargo metadata`.
pub(super) fn test_targets(
    prefix: &CargoPrefix,
    context: &Context<'_>,
) -> Result<Vec<TestTarget>, RunnerError> {
    let mut argv = prefix.base.clone();
    argv.extend(strings(&["metadata", "--no-deps", "--format-version", "1"]));
    let output = context.probe("cargo-metadata", argv, &[])?;
    parse_metadata(&output, &context.repo_root)
}

fn parse_metadata(output: &str, repo_root: &Path) -> Result<Vec<TestTarget>, RunnerError> {
    #[derive(Deserialize)]
    struct Metadata {
        packages: Vec<Package>,
        workspace_members: Vec<String>,
        #[serde(default)]
        workspace_default_members: Option<Vec<String>>,
    }
    #[derive(Deserialize)]
    struct Package {
        id: String,
        name: String,
        version: String,
        targets: Vec<Target>,
    }
    #[derive(Deserialize)]
    struct Target {
        name: String,
        kind: Vec<String>,
        src_path: String,
        #[serde(default = "yes")]
        test: bool,
    }
    fn yes() -> bool {
        true
    }
    let metadata: Metadata = serde_json::from_str(output).map_err(|error| RunnerError::Output {
        what: "cargo metadata".to_owned(),
        message: error.to_string(),
    })?;
    let members = metadata
        .workspace_default_members
        .unwrap_or(metadata.workspace_members);
    let mut targets = Vec::new();
    for package in metadata.packages.iter().filter(|p| members.contains(&p.id)) {
        for target in package.targets.iter().filter(|t| t.test) {
            let kind = |k: &str| target.kind.iter().any(|have| have == k);
            let library = ["lib", "rlib", "dylib", "cdylib", "staticlib", "proc-macro"]
                .iter()
                .any(|k| kind(k));
            let (binary_id, flag) = if library {
                (package.name.clone(), "--lib")
            } else if kind("bin") {
                (format!("{}::bin/{}", package.name, target.name), "--bin")
            } else if kind("test") {
                (format!("{}::{}", package.name, target.name), "--test")
            } else if kind("example") {
                (
                    format!("{}::example/{}", package.name, target.name),
                    "--example",
                )
            } else if kind("bench") {
                (
                    format!("{}::bench/{}", package.name, target.name),
                    "--bench",
                )
            } else {
                continue;
            };
            // `name@version` names one package even when a dependency brings another
            // version of it (a dev-dependency on a published copy of the crate itself),
            // where a bare `-p name` is ambiguous and cargo refuses to run.
            let spec = format!("{}@{}", package.name, package.version);
            let mut selector = vec!["-p".to_owned(), spec, flag.to_owned()];
            if flag != "--lib" {
                selector.push(target.name.clone());
            }
            let file = kind("test").then(|| {
                let path = Path::new(&target.src_path);
                path.strip_prefix(repo_root)
                    .unwrap_or(path)
                    .to_string_lossy()
                    .into_owned()
            });
            targets.push(TestTarget {
                binary_id,
                selector,
                file,
            });
        }
    }
    Ok(targets)
}

/// The target whose binary id starts the test id, and the test's name inside it. The
/// longest binary id wins: in `pkg::api::x`, `pkg::api` (an integration test) is taken
/// before `pkg` (the library's module `api`), as nextest's ids cannot tell them apart.
pub(super) fn locate<'t>(
    targets: &'t [TestTarget],
    test_id: &str,
    kind: RunnerKind,
) -> Result<(&'t TestTarget, String), RunnerError> {
    let not_an_id = |reason: String| RunnerError::NotATestId {
        id: test_id.to_owned(),
        kind,
        reason,
    };
    let (target, name) = targets
        .iter()
        .filter_map(|t| Some((t, test_id.strip_prefix(&t.binary_id)?.strip_prefix("::")?)))
        .max_by_key(|(t, _)| t.binary_id.len())
        .ok_or_else(|| {
            not_an_id(
                "it does not start with a test binary of the workspace (`package::` or `package::target::`)"
                    .to_owned(),
            )
        })?;
    // Rust test names are paths of identifiers; a dash would be read as an option.
    if name.is_empty() || name.starts_with('-') {
        return Err(not_an_id(format!(
            "the test name after `{}::` is empty or starts with `-`",
            target.binary_id
        )));
    }
    Ok((target, name.to_owned()))
}

/// `cargo test` (libtest) through a command prefix (`cargo test` unless `[runner]
/// command` says; it must contain `test`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CargoTest {
    prefix: CargoPrefix,
    /// The first tree's test targets, with the tree: a batch's tests are split by
    /// target without asking `cargo metadata` again, and [`Adapter::process_scope`] can
    /// tell which tests share a test binary.
    targets: OnceLock<(PathBuf, Vec<TestTarget>)>,
}

impl CargoTest {
    /// The adapter for a prefix.
    pub fn new(command: Option<Vec<String>>) -> Result<Self, RunnerError> {
        Ok(CargoTest {
            prefix: CargoPrefix::parse(command, &["test"], RunnerKind::Cargo)?,
            targets: OnceLock::new(),
        })
    }

    /// The context's tree's test targets, remembered for the first tree asked about.
    fn targets(&self, context: &Context<'_>) -> Result<Vec<TestTarget>, RunnerError> {
        if let Some((root, targets)) = self.targets.get()
            && *root == context.repo_root
        {
            return Ok(targets.clone());
        }
        let targets = test_targets(&self.prefix, context)?;
        let _ = self
            .targets
            .set((context.repo_root.clone(), targets.clone()));
        Ok(targets)
    }

    /// `CARGO_TARGET_<HOST>_RUNNER`, the variable that makes cargo start the host's test
    /// binaries through `env RUSTC_BOOTSTRAP=1`.
    fn runner_variable(context: &Context<'_>) -> Result<String, RunnerError> {
        let output = context.probe("rustc-version", strings(&["rustc", "-vV"]), &[])?;
        let host = output
            .lines()
            .find_map(|line| line.strip_prefix("host: "))
            .ok_or_else(|| RunnerError::Output {
                what: "rustc -vV".to_owned(),
                message: "no `host:` line".to_owned(),
            })?;
        Ok(format!(
            "CARGO_TARGET_{}_RUNNER",
            host.trim().to_uppercase().replace(['-', '.'], "_")
        ))
    }

    fn run(
        &self,
        context: &Context<'_>,
        selection: &Selection<'_>,
        options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        let runner_variable = Self::runner_variable(context)?;
        let value = options.seed();
        let report = context.scratch_path("cargo-libtest.jsonl");
        let mut report_file = BufWriter::new(fs_err::File::create(&report)?);
        let mut invocations: Vec<InvocationRecord> = Vec::new();
        for (target, names) in selection.runs() {
            let mut argv = self.prefix.command(&["test"]);
            argv.push("--no-fail-fast".to_owned());
            argv.extend(target.selector.iter().cloned());
            argv.push("--".to_owned());
            argv.extend(self.prefix.binary_options.iter().cloned());
            argv.extend(strings(&[
                "-Z",
                "unstable-options",
                "--format",
                "json",
                "--report-time",
            ]));
            argv.push("--shuffle-seed".to_owned());
            argv.push(value.to_string());
            if !names.is_empty() {
                // After `--`, libtest reads each name as a filter whatever it looks like.
                argv.extend(strings(&["--exact", "--"]));
                argv.extend(names.iter().map(|name| (*name).to_owned()));
            }
            let stdout = context.scratch_path("cargo-test.stdout");
            let mut invocation = context
                .invocation("cargo-test", argv)
                .env(&runner_variable, "env RUSTC_BOOTSTRAP=1")
                .stdout_to(&stdout);
            if let Some(target) = context.cargo_target() {
                invocation = invocation.env("CARGO_TARGET_DIR", &target);
            }
            let record = context.run(invocation)?;
            context.check_ran(RunnerKind::Cargo, &record, &stdout)?;
            append_with_binary_id(&stdout, &mut report_file, &target.binary_id)?;
            let timed_out = record.outcome.timed_out;
            invocations.push(record);
            if timed_out {
                // Something hung; the rest of the suite would likely wait as long.
                break;
            }
        }
        report_file.flush()?;
        let run = RunReport {
            runner: RunnerKind::Cargo,
            report,
            format: Some(Format::LibtestJson),
            seed: Some(Seed {
                value,
                argument: format!("--shuffle-seed {value}"),
                controls: SEED_CONTROLS,
            }),
            workers: self.workers(),
            invocations,
        };
        context.check_frames(&run)?;
        Ok(run)
    }

    /// libtest's `--test-threads` from the prefix, else `RUST_TEST_THREADS`, else the
    /// machine's parallelism, libtest's default. cargo runs the binaries one at a time.
    fn workers(&self) -> Option<u32> {
        option_value(&self.prefix.binary_options, &["--test-threads"], false)
            .map(str::to_owned)
            .or_else(|| std::env::var(crate::env_vars::EnvVars::RUST_TEST_THREADS).ok())
            .and_then(|value| value.parse().ok())
            .or_else(available_parallelism)
    }
}

/// What a cargo run covers: every target, one test in one target, or chosen tests of
/// chosen targets (each target's names in one process).
enum Selection<'t> {
    Suite(Vec<TestTarget>),
    One(&'t TestTarget, String),
    Batch(Vec<(TestTarget, Vec<String>)>),
}

impl Selection<'_> {
    /// Each process: its target and its names (none: all of the target's tests).
    fn runs(&self) -> Vec<(&TestTarget, Vec<&str>)> {
        match self {
            Selection::Suite(targets) => targets.iter().map(|t| (t, Vec::new())).collect(),
            Selection::One(target, name) => vec![(*target, vec![name.as_str()])],
            Selection::Batch(runs) => runs
                .iter()
                .map(|(t, names)| (t, names.iter().map(String::as_str).collect()))
                .collect(),
        }
    }
}

/// The tests of a batch grouped by target, targets and names in the order first named.
fn batch_selection(
    targets: &[TestTarget],
    test_ids: &[String],
) -> Result<Vec<(TestTarget, Vec<String>)>, RunnerError> {
    let mut runs: Vec<(TestTarget, Vec<String>)> = Vec::new();
    for test_id in test_ids {
        let (target, name) = locate(targets, test_id, RunnerKind::Cargo)?;
        match runs
            .iter_mut()
            .find(|(t, _)| t.binary_id == target.binary_id)
        {
            Some((_, names)) => {
                if !names.contains(&name) {
                    names.push(name);
                }
            }
            None => runs.push((target.clone(), vec![name])),
        }
    }
    Ok(runs)
}

const BATCH_ORDER: &str = "libtest runs a test binary's chosen tests in its own order (by name, shuffled by --shuffle-seed), several at once by --test-threads, whatever order they are named in; each test target in its own process";

impl Adapter for CargoTest {
    fn kind(&self) -> RunnerKind {
        RunnerKind::Cargo
    }

    fn seed_support(&self) -> SeedSupport {
        SeedSupport::Controls(SEED_CONTROLS)
    }

    fn run_suite(
        &self,
        context: &Context<'_>,
        options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        let targets = test_targets(&self.prefix, context)?;
        self.run(context, &Selection::Suite(targets), options)
    }

    fn run_one(
        &self,
        context: &Context<'_>,
        test_id: &str,
        options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        let targets = self.targets(context)?;
        let (target, name) = locate(&targets, test_id, RunnerKind::Cargo)?;
        self.run(context, &Selection::One(target, name), options)
    }

    fn process_scope<'t>(&self, test_id: &'t str) -> Option<&'t str> {
        // A test binary is one process; unknown until the targets were read.
        let (_, targets) = self.targets.get()?;
        let (target, _) = locate(targets, test_id, RunnerKind::Cargo).ok()?;
        test_id.get(..target.binary_id.len())
    }

    fn batches(&self) -> bool {
        true
    }

    fn batch_ordering(&self) -> BatchOrdering {
        BatchOrdering::Fixed(BATCH_ORDER)
    }

    /// One `cargo test -p P --lib|--bin N|--test N -- … --exact -- NAME…` per test target
    /// of the batch, each name an exact filter.
    fn run_batch(
        &self,
        context: &Context<'_>,
        test_ids: &[String],
        options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        let targets = self.targets(context)?;
        let runs = batch_selection(&targets, test_ids)?;
        self.run(context, &Selection::Batch(runs), options)
    }

    fn list(&self, context: &Context<'_>) -> Result<Vec<ListedTest>, RunnerError> {
        let mut tests = Vec::new();
        for target in self.targets(context)? {
            let mut argv = self.prefix.command(&["test"]);
            argv.extend(target.selector.iter().cloned());
            argv.push("--".to_owned());
            argv.extend(self.prefix.binary_options.iter().cloned());
            argv.extend(strings(&["--list", "--format", "terse"]));
            let output = context.probe("cargo-test-list", argv, &[])?;
            tests.extend(output.lines().filter_map(|line| {
                let name = line.strip_suffix(": test")?;
                Some(ListedTest {
                    id: ids::cargo(Some(&target.binary_id), name),
                    file: target.file.clone(),
                })
            }));
        }
        Ok(tests)
    }
}

/// Copies one binary's libtest JSON into the report, naming each test `binary-id$name`.
/// Lines that are not libtest test events (a test's stray prints) are copied unchanged.
fn append_with_binary_id(
    part: &Path,
    report: &mut impl Write,
    binary_id: &str,
) -> Result<(), RunnerError> {
    let reader = BufReader::new(fs_err::File::open(part)?);
    for line in reader.split(b'\n') {
        let line = line?;
        match with_binary_id(&line, binary_id) {
            Some(rewritten) => report.write_all(rewritten.as_bytes())?,
            None => report.write_all(&line)?,
        }
        report.write_all(b"\n")?;
    }
    Ok(())
}

fn with_binary_id(line: &[u8], binary_id: &str) -> Option<String> {
    let mut event: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(line).ok()?;
    let is_test = matches!(
        event.get("type").and_then(serde_json::Value::as_str),
        Some("test" | "bench")
    );
    let name = event.get("name").and_then(serde_json::Value::as_str)?;
    if !is_test {
        return None;
    }
    let prefixed = format!("{binary_id}${name}");
    event.insert("name".to_owned(), serde_json::Value::String(prefixed));
    serde_json::to_string(&event).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_split_around_the_subcommand() {
        let prefix = CargoPrefix::parse(
            Some(strings(&[
                "cargo",
                "+nightly",
                "test",
                "--features",
                "x",
                "--",
                "--test-threads=2",
            ])),
            &["test"],
            RunnerKind::Cargo,
        );
        assert_eq!(
            prefix.ok(),
            Some(CargoPrefix {
                base: strings(&["cargo", "+nightly"]),
                cargo_options: strings(&["--features", "x"]),
                binary_options: strings(&["--test-threads=2"]),
            })
        );
        assert!(
            CargoPrefix::parse(
                Some(strings(&["cargo", "build"])),
                &["test"],
                RunnerKind::Cargo
            )
            .is_err()
        );
    }

    #[test]
    fn test_events_get_the_binary_id() {
        let line = br#"{ "type": "test", "event": "ok", "name": "tests::passes" }"#;
        let rewritten = with_binary_id(line, "my-crate").unwrap_or_default();
        assert!(
            rewritten.contains(r#""name":"my-crate$tests::passes""#),
            "{rewritten}"
        );
        assert_eq!(
            with_binary_id(br#"{ "type": "suite", "event": "started" }"#, "x"),
            None
        );
        assert_eq!(with_binary_id(b"stray print", "x"), None);
    }

    #[test]
    fn metadata_gives_nextest_binary_ids() {
        let metadata = r#"{
          "packages": [{"id": "p1", "name": "my-crate", "version": "0.2.0", "targets": [
            {"name": "my_crate", "kind": ["lib"], "src_path": "/r/src/lib.rs", "test": true},
            {"name": "my-crate", "kind": ["bin"], "src_path": "/r/src/main.rs", "test": true},
            {"name": "api", "kind": ["test"], "src_path": "/r/tests/api.rs", "test": true},
            {"name": "bench", "kind": ["bench"], "src_path": "/r/benches/b.rs", "test": false},
            {"name": "build-script-build", "kind": ["custom-build"], "src_path": "/r/build.rs", "test": false}
          ]}],
          "workspace_members": ["p1"],
          "workspace_default_members": ["p1"]
        }"#;
        let targets = parse_metadata(metadata, Path::new("/r")).unwrap_or_default();
        let ids: Vec<&str> = targets.iter().map(|t| t.binary_id.as_str()).collect();
        assert_eq!(
            ids,
            vec!["my-crate", "my-crate::bin/my-crate", "my-crate::api"]
        );
        assert_eq!(
            targets[2].selector,
            strings(&["-p", "my-crate@0.2.0", "--test", "api"])
        );
        assert_eq!(targets[2].file.as_deref(), Some("tests/api.rs"));

        let (target, name) = locate(&targets, "my-crate::api::adds", RunnerKind::Cargo)
            .map(|(t, n)| (t.binary_id.clone(), n))
            .unwrap_or_default();
        assert_eq!((target.as_str(), name.as_str()), ("my-crate::api", "adds"));
        assert!(locate(&targets, "other::x", RunnerKind::Cargo).is_err());
        assert!(locate(&targets, "my-crate::--help", RunnerKind::Cargo).is_err());
    }
}
