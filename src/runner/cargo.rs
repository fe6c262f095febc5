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
//!
//! The suite's run also runs each library's doc tests, `cargo test --doc -p PKG -- …
//! --format json`, named `PKG::doc$src/lib.rs - f (line 4)`: id `PKG::doc::src/lib.rs -
//! f (line 4)`. Their harness is rustdoc itself, which reads libtest's options, so the
//! target runner does not reach it: cargo's `RUSTDOC` is then the `candor` binary, which
//! runs the real rustdoc ([`be_rustdoc`]) with `RUSTC_BOOTSTRAP` set to a name no crate
//! has, enough for libtest's JSON and nothing else (a doc test's `#![feature]` is refused
//! on a stable toolchain as under `cargo test`), and still nothing cargo fingerprints.
//!
//! For the merge lane (issue #15), a process per batch and target through `cargo test` is
//! mostly cargo's start-up and freshness check: the listing builds every test target once
//! (`cargo test --no-run --message-format json-render-diagnostics`), lists and the batches
//! run the executables cargo named, in the package's folder with the variables `cargo
//! test` gives a test binary (docs/gate.md, "Test binaries built once").

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock, PoisonError};

use serde::Deserialize;

use super::{
    Adapter, BatchOrdering, Context, InvocationRecord, ListedTest, RunOptions, RunReport,
    RunnerError, RunnerKind, Seed, SeedSupport, available_parallelism, in_parallel, option_value,
    strings,
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
    /// The package's `Cargo.toml`, as `cargo metadata` and cargo's build messages spell
    /// it: with the target's name and kind, how a built executable is matched to it.
    pub manifest_path: String,
    /// The target's name (`api` for `tests/api.rs`).
    pub name: String,
    /// The target's kinds, as cargo spells them (`["lib"]`, `["test"]`).
    pub kinds: Vec<String>,
    /// What `cargo test` sets for the package's test binaries at run time
    /// (`CARGO_MANIFEST_DIR`, `CARGO_MANIFEST_PATH`, `CARGO_PKG_*`), from the metadata.
    pub package_env: Vec<(String, String)>,
}

/// The test targets of the workspace's default members, from `cargo metadata`.
pub(super) fn test_targets(
    prefix: &CargoPrefix,
    context: &Context<'_>,
) -> Result<Vec<TestTarget>, RunnerError> {
    let output = metadata(prefix, context)?;
    parse_metadata(&output, &context.repo_root)
}

/// `cargo metadata --no-deps`'s answer.
fn metadata(prefix: &CargoPrefix, context: &Context<'_>) -> Result<String, RunnerError> {
    let mut argv = prefix.base.clone();
    argv.extend(strings(&["metadata", "--no-deps", "--format-version", "1"]));
    context.probe("cargo-metadata", argv, &[])
}

/// A library of the workspace's default members, whose doc tests `cargo test --doc`
/// runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct DocPackage {
    /// `pkg::doc`: the doc tests' ids start with it.
    pub binary_id: String,
    /// `-p pkg@version`.
    pub spec: String,
}

/// The libraries whose doc tests `cargo test` runs (a `lib`, `rlib` or `proc-macro`
/// target with `doctest` on), and a warning for each library cargo runs none of because
/// of its crate type. A package without a library, or whose `[lib]` says `doctest =
/// false`, has none and is no warning.
fn parse_doc_packages(output: &str) -> Result<(Vec<DocPackage>, Vec<String>), RunnerError> {
    let mut packages = Vec::new();
    let mut warnings = Vec::new();
    for package in &default_members(output)? {
        let libraries = ["lib", "rlib", "dylib", "cdylib", "staticlib", "proc-macro"];
        let Some(library) = package
            .targets
            .iter()
            .find(|t| t.kind.iter().any(|k| libraries.contains(&k.as_str())))
        else {
            continue;
        };
        // cargo's `Target::doctestable`; cargo's metadata says `doctest: false` for the
        // others too, as for a `[lib]` with `doctest = false`, which needs no word.
        let doctestable = ["lib", "rlib", "proc-macro"];
        if !library
            .kind
            .iter()
            .any(|k| doctestable.contains(&k.as_str()))
        {
            warnings.push(format!(
                "the doc tests of {} are not run: its library's crate type is `{}`, whose doc tests cargo does not run either (add \"rlib\" to run them)",
                package.name,
                library.kind.join(", ")
            ));
            continue;
        }
        if !library.doctest {
            continue;
        }
        packages.push(DocPackage {
            binary_id: format!("{}::{DOC}", package.name),
            spec: format!("{}@{}", package.name, package.version),
        });
    }
    Ok((packages, warnings))
}

/// What follows a package's name in its doc tests' ids: `pkg::doc::src/lib.rs - f (line
/// 4)`.
const DOC: &str = "doc";

/// The value of `RUSTC_BOOTSTRAP` for rustdoc: set, so libtest accepts `-Z
/// unstable-options --format json`; a name no crate can have (crate names have no `-`),
/// so rustc lets no crate use unstable features it would refuse without it.
const DOC_BOOTSTRAP: &str = "candor-libtest-json";

/// The `candor` binary standing in for rustdoc (`CANDOR_AS_RUSTDOC` names the real one):
/// runs it with `arguments`, `RUSTC_BOOTSTRAP` set to [`DOC_BOOTSTRAP`] and the variable
/// removed, and returns its exit code (128+N for signal N), 1 when it cannot start.
pub fn be_rustdoc(
    rustdoc: &std::ffi::OsStr,
    arguments: impl Iterator<Item = std::ffi::OsString>,
) -> u8 {
    let status = std::process::Command::new(rustdoc)
        .args(arguments)
        .env_remove(crate::env_vars::EnvVars::CANDOR_AS_RUSTDOC)
        .env("RUSTC_BOOTSTRAP", DOC_BOOTSTRAP)
        .status();
    match status {
        Ok(status) => {
            let code = status.code().or_else(|| {
                #[cfg(unix)]
                {
                    std::os::unix::process::ExitStatusExt::signal(&status).map(|n| 128 + n)
                }
                #[cfg(not(unix))]
                {
                    None
                }
            });
            code.and_then(|code| u8::try_from(code).ok()).unwrap_or(1)
        }
        Err(error) => {
            eprintln!(
                "candor could not run rustdoc `{}`: {error}",
                rustdoc.to_string_lossy()
            );
            1
        }
    }
}

/// What candor reads of `cargo metadata`.
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
    #[serde(default)]
    manifest_path: String,
    #[serde(default)]
    authors: Vec<String>,
    description: Option<String>,
    homepage: Option<String>,
    repository: Option<String>,
    license: Option<String>,
    license_file: Option<String>,
    rust_version: Option<String>,
    readme: Option<String>,
}

#[derive(Deserialize)]
struct Target {
    name: String,
    kind: Vec<String>,
    src_path: String,
    #[serde(default = "yes")]
    test: bool,
    #[serde(default = "yes")]
    doctest: bool,
}

fn yes() -> bool {
    true
}

/// The packages of the workspace's default members (else its members), from `cargo
/// metadata`'s answer.
fn default_members(output: &str) -> Result<Vec<Package>, RunnerError> {
    let metadata: Metadata = serde_json::from_str(output).map_err(|error| RunnerError::Output {
        what: "cargo metadata".to_owned(),
        message: error.to_string(),
    })?;
    let members = metadata
        .workspace_default_members
        .unwrap_or(metadata.workspace_members);
    Ok(metadata
        .packages
        .into_iter()
        .filter(|p| members.contains(&p.id))
        .collect())
}

fn parse_metadata(output: &str, repo_root: &Path) -> Result<Vec<TestTarget>, RunnerError> {
    let mut targets = Vec::new();
    for package in &default_members(output)? {
        let package_env = package_env(&PackageFields {
            manifest_path: &package.manifest_path,
            name: &package.name,
            version: &package.version,
            authors: &package.authors,
            description: package.description.as_deref(),
            homepage: package.homepage.as_deref(),
            repository: package.repository.as_deref(),
            license: package.license.as_deref(),
            license_file: package.license_file.as_deref(),
            rust_version: package.rust_version.as_deref(),
            readme: package.readme.as_deref(),
        });
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
                manifest_path: package.manifest_path.clone(),
                name: target.name.clone(),
                kinds: target.kind.clone(),
                package_env: package_env.clone(),
            });
        }
    }
    Ok(targets)
}

/// A package's fields that `cargo test` hands its test binaries.
struct PackageFields<'a> {
    manifest_path: &'a str,
    name: &'a str,
    version: &'a str,
    authors: &'a [String],
    description: Option<&'a str>,
    homepage: Option<&'a str>,
    repository: Option<&'a str>,
    license: Option<&'a str>,
    license_file: Option<&'a str>,
    rust_version: Option<&'a str>,
    readme: Option<&'a str>,
}

/// The variables cargo sets for a package's test binary when it runs it (cargo's
/// `Compilation::fill_env`): the manifest's folder and path and the `CARGO_PKG_*` fields,
/// an absent field as the empty string, the authors joined with `:`, the version split
/// at its dots and its `-`.
fn package_env(package: &PackageFields<'_>) -> Vec<(String, String)> {
    let manifest_dir = Path::new(package.manifest_path)
        .parent()
        .map(|dir| dir.to_string_lossy().into_owned())
        .unwrap_or_default();
    // `1.2.3-beta.1+build`: the build metadata is in no part but the whole version.
    let without_build = package.version.split('+').next().unwrap_or_default();
    let (core, pre) = without_build.split_once('-').unwrap_or((without_build, ""));
    let mut numbers = core.split('.');
    let mut number = || numbers.next().unwrap_or_default().to_owned();
    let text = |value: Option<&str>| value.unwrap_or_default().to_owned();
    let pairs = [
        ("CARGO_MANIFEST_DIR", manifest_dir),
        ("CARGO_MANIFEST_PATH", package.manifest_path.to_owned()),
        ("CARGO_PKG_VERSION_MAJOR", number()),
        ("CARGO_PKG_VERSION_MINOR", number()),
        ("CARGO_PKG_VERSION_PATCH", number()),
        ("CARGO_PKG_VERSION_PRE", pre.to_owned()),
        ("CARGO_PKG_VERSION", package.version.to_owned()),
        ("CARGO_PKG_NAME", package.name.to_owned()),
        ("CARGO_PKG_DESCRIPTION", text(package.description)),
        ("CARGO_PKG_HOMEPAGE", text(package.homepage)),
        ("CARGO_PKG_REPOSITORY", text(package.repository)),
        ("CARGO_PKG_LICENSE", text(package.license)),
        ("CARGO_PKG_LICENSE_FILE", text(package.license_file)),
        ("CARGO_PKG_AUTHORS", package.authors.join(":")),
        ("CARGO_PKG_RUST_VERSION", text(package.rust_version)),
        ("CARGO_PKG_README", text(package.readme)),
    ];
    pairs
        .into_iter()
        .map(|(name, value)| (name.to_owned(), value))
        .collect()
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
#[derive(Debug)]
pub struct CargoTest {
    prefix: CargoPrefix,
    /// The first tree's test targets, with the tree: a batch's tests are split by
    /// target without asking `cargo metadata` again, and [`Adapter::process_scope`] can
    /// tell which tests share a test binary.
    targets: OnceLock<(PathBuf, Vec<TestTarget>)>,
    /// The test executables this adapter's own `cargo test --no-run` built, for one tree:
    /// the merge lane's batches run them directly (issue #15). Never read from disk or
    /// from an earlier candor run: each lane builds, and cargo names what it built.
    built: Mutex<Option<Built>>,
    /// The toolchain of the tree `built` is for: asked beside the listing's `cargo
    /// metadata` and build rather than after them (issue #15).
    toolchain: Mutex<Option<(PathBuf, Toolchain)>>,
}

/// A test target's executable from a build, and how `cargo test` starts it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Executable {
    /// The file cargo's `compiler-artifact` message named.
    path: PathBuf,
    /// The package's folder: cargo runs a test binary there.
    cwd: PathBuf,
    /// What cargo sets for it: its build script's `cargo:rustc-env` pairs, `OUT_DIR`,
    /// `CARGO`, the package's variables, the dynamic library path; and `RUSTC_BOOTSTRAP=1`
    /// for libtest's JSON.
    env: Vec<(String, String)>,
}

/// What one `cargo test --no-run` said.
struct Build {
    /// Its JSON messages.
    messages: String,
    /// The command, for messages.
    what: String,
    /// Its log.
    log: PathBuf,
}

impl Build {
    /// The error for a target this build named no executable for.
    fn missing(&self, target: &TestTarget) -> RunnerError {
        RunnerError::Output {
            what: format!("{} (log: {})", self.what, self.log.display()),
            message: format!("cargo named no test executable for `{}`", target.binary_id),
        }
    }
}

/// The executables built for one tree, by binary id.
#[derive(Debug)]
struct Built {
    root: PathBuf,
    executables: BTreeMap<String, Executable>,
}

/// What a test binary's environment takes from the toolchain.
#[derive(Debug, Clone)]
struct Toolchain {
    /// `CARGO`: the toolchain's own cargo (what a rustup proxy runs), else the prefix's.
    cargo: String,
    /// `rustc --print target-libdir`, on cargo's dynamic library path.
    target_libdir: String,
}

impl CargoTest {
    /// The adapter for a prefix.
    pub fn new(command: Option<Vec<String>>) -> Result<Self, RunnerError> {
        Ok(CargoTest {
            prefix: CargoPrefix::parse(command, &["test"], RunnerKind::Cargo)?,
            targets: OnceLock::new(),
            built: Mutex::new(None),
            toolchain: Mutex::new(None),
        })
    }

    /// Whether a batch may run the test binaries itself rather than through `cargo
    /// test`: not when cargo's configuration can add to what a test binary sees (an
    /// `[env]` table in a `.cargo/config.toml` cargo reads, or `--config` in the prefix),
    /// which candor does not reproduce; cargo runs those batches, one `cargo test` per
    /// target.
    fn runs_binaries(&self, context: &Context<'_>) -> bool {
        let configured = |option: &String| option == "--config" || option.starts_with("--config=");
        if self.prefix.cargo_options.iter().any(configured) {
            return false;
        }
        let home = std::env::var_os(crate::env_vars::EnvVars::CARGO_HOME)
            .map(PathBuf::from)
            .or_else(|| {
                std::env::var_os(crate::env_vars::EnvVars::HOME)
                    .map(|home| PathBuf::from(home).join(".cargo"))
            });
        let folders = context
            .repo_root
            .ancestors()
            .map(|dir| dir.join(".cargo"))
            .chain(home);
        !folders
            .flat_map(|folder| [folder.join("config.toml"), folder.join("config")])
            .any(|file| {
                fs_err::read_to_string(&file)
                    .ok()
                    .and_then(|text| text.parse::<toml::Table>().ok())
                    .is_some_and(|table| table.contains_key("env"))
            })
    }

    /// The executables of `targets` in the context's tree. The first batch builds every
    /// test target of the tree (`all`) in one `cargo test --no-run`: the listing built
    /// them all already, so this is cargo's freshness check, and the lane's rounds, which
    /// run side by side and name different targets, find theirs built (the others wait
    /// for the first). A target missing later is built then.
    fn executables(
        &self,
        context: &Context<'_>,
        targets: &[&TestTarget],
        all: &[TestTarget],
    ) -> Result<BTreeMap<String, Executable>, RunnerError> {
        let mut built = self.built.lock().unwrap_or_else(PoisonError::into_inner);
        if built
            .as_ref()
            .is_none_or(|built| built.root != context.repo_root)
        {
            *built = Some(Built {
                root: context.repo_root.clone(),
                executables: BTreeMap::new(),
            });
        }
        let Some(built) = built.as_mut() else {
            return Ok(BTreeMap::new());
        };
        let missing: Vec<&TestTarget> = if built.executables.is_empty() {
            all.iter().collect()
        } else {
            targets
                .iter()
                .copied()
                .filter(|t| !built.executables.contains_key(&t.binary_id))
                .collect()
        };
        if !missing.is_empty() {
            let made = self.build(context, &missing)?;
            built.executables.extend(made);
        }
        Ok(targets
            .iter()
            .filter_map(|t| {
                let executable = built.executables.get(&t.binary_id)?;
                Some((t.binary_id.clone(), executable.clone()))
            })
            .collect())
    }

    /// `cargo test --no-run --message-format json-render-diagnostics` with the prefix's
    /// options, for `targets`; each target's executable is the one cargo's
    /// `compiler-artifact` message names for it (a test profile, an executable). A
    /// failed build is [`RunnerError::CouldNotRun`] quoting the compiler; a target the
    /// build named no executable for is an error too, never an older file.
    fn build(
        &self,
        context: &Context<'_>,
        targets: &[&TestTarget],
    ) -> Result<BTreeMap<String, Executable>, RunnerError> {
        let selectors: Vec<String> = targets
            .iter()
            .flat_map(|target| target.selector.iter().cloned())
            .collect();
        let build = self.run_build(context, &selectors)?;
        let executables = self.executables_of(context, &build, targets)?;
        match targets
            .iter()
            .find(|t| !executables.contains_key(&t.binary_id))
        {
            Some(target) => Err(build.missing(target)),
            None => Ok(executables),
        }
    }

    /// `cargo test --no-run --message-format json-render-diagnostics` with the prefix's
    /// options and `selectors`: cargo's messages, or the failed build quoting the compiler.
    fn run_build(&self, context: &Context<'_>, selectors: &[String]) -> Result<Build, RunnerError> {
        let mut argv = self.prefix.command(&["test"]);
        argv.extend(strings(&[
            "--no-run",
            "--message-format",
            "json-render-diagnostics",
        ]));
        argv.extend(selectors.iter().cloned());
        let what = format!("{} --no-run", self.prefix.command(&["test"]).join(" "));
        let messages = context.scratch_path("cargo-build.jsonl");
        let mut invocation = context.invocation("cargo-build", argv).stdout_to(&messages);
        if let Some(target) = context.cargo_target() {
            invocation = invocation.env("CARGO_TARGET_DIR", &target);
        }
        let record = context.run(invocation)?;
        context.check_built(RunnerKind::Cargo, &what, &record)?;
        Ok(Build {
            messages: fs_err::read_to_string(&messages)?,
            what,
            log: record.log,
        })
    }

    /// The executables `build`'s messages name for `targets` (those it names).
    fn executables_of(
        &self,
        context: &Context<'_>,
        build: &Build,
        targets: &[&TestTarget],
    ) -> Result<BTreeMap<String, Executable>, RunnerError> {
        let toolchain = self.toolchain_of(context)?;
        Ok(parse_build(
            &build.messages,
            targets,
            &toolchain,
            &inherited_library_path(),
        ))
    }

    /// The listing's build: every test target of the tree (`--tests`: the targets with
    /// `test = true` of the default members, which is what `cargo metadata` gave), built
    /// while `cargo metadata` runs rather than after it (issue #15: the two were a third
    /// of the cargo lane's listing, one after the other). A target the build did not name
    /// (a `-p` in `[runner] command` that narrows it) is built with its own selector then,
    /// as before. The executables are kept for the lane's batches.
    fn build_listed(
        &self,
        context: &Context<'_>,
        build: &Build,
        targets: &[TestTarget],
    ) -> Result<BTreeMap<String, Executable>, RunnerError> {
        let all: Vec<&TestTarget> = targets.iter().collect();
        let mut executables = self.executables_of(context, build, &all)?;
        let missing: Vec<&TestTarget> = all
            .iter()
            .copied()
            .filter(|t| !executables.contains_key(&t.binary_id))
            .collect();
        if !missing.is_empty() {
            executables.extend(self.build(context, &missing)?);
        }
        *self.built.lock().unwrap_or_else(PoisonError::into_inner) = Some(Built {
            root: context.repo_root.clone(),
            executables: executables.clone(),
        });
        Ok(executables)
    }

    /// [`CargoTest::toolchain`] of the context's tree, asked once per tree: the lock is
    /// held while it is asked, so a build that needs it waits for the listing's question
    /// beside it instead of asking again. A failure is not kept: the next caller asks.
    fn toolchain_of(&self, context: &Context<'_>) -> Result<Toolchain, RunnerError> {
        let mut known = self
            .toolchain
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some((root, toolchain)) = known.as_ref()
            && *root == context.repo_root
        {
            return Ok(toolchain.clone());
        }
        let toolchain = self.toolchain(context)?;
        *known = Some((context.repo_root.clone(), toolchain.clone()));
        Ok(toolchain)
    }

    /// The toolchain of the prefix (`cargo +nightly` asks `rustc +nightly`), run in the
    /// repository so that its `rust-toolchain.toml` chooses as it does for cargo.
    fn toolchain(&self, context: &Context<'_>) -> Result<Toolchain, RunnerError> {
        let mut argv = strings(&["rustc"]);
        argv.extend(
            self.prefix
                .base
                .iter()
                .skip(1)
                .filter(|a| a.starts_with('+'))
                .cloned(),
        );
        argv.extend(strings(&["--print", "sysroot", "--print", "target-libdir"]));
        let output = context.probe("rustc-print", argv, &[])?;
        let mut lines = output.lines();
        let (Some(sysroot), Some(target_libdir)) = (lines.next(), lines.next()) else {
            return Err(RunnerError::Output {
                what: "rustc --print sysroot --print target-libdir".to_owned(),
                message: "fewer than two lines".to_owned(),
            });
        };
        let own = Path::new(sysroot.trim())
            .join("bin")
            .join(format!("cargo{}", std::env::consts::EXE_SUFFIX));
        let cargo = if own.is_file() {
            own.to_string_lossy().into_owned()
        } else {
            self.prefix.base.first().cloned().unwrap_or_default()
        };
        Ok(Toolchain {
            cargo,
            target_libdir: target_libdir.trim().to_owned(),
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

    /// Runs the selection, each target through `cargo test`, or with `executables`
    /// (the lane's batches) each target's executable directly, as cargo would start it.
    fn run(
        &self,
        context: &Context<'_>,
        selection: &Selection<'_>,
        options: RunOptions,
        executables: Option<&BTreeMap<String, Executable>>,
    ) -> Result<RunReport, RunnerError> {
        let runner_variable = match executables {
            Some(_) => String::new(),
            None => runner_variable(context)?,
        };
        let value = options.seed();
        fs_err::create_dir_all(&context.scratch)?;
        let report = context.scratch_path("cargo-libtest.jsonl");
        let mut report_file = BufWriter::new(fs_err::File::create(&report)?);
        let mut invocations: Vec<InvocationRecord> = Vec::new();
        for (target, names) in selection.runs() {
            let executable = match executables {
                Some(built) => {
                    Some(
                        built
                            .get(&target.binary_id)
                            .ok_or_else(|| RunnerError::Output {
                                what: "cargo test --no-run".to_owned(),
                                message: format!(
                                    "no test executable was built for `{}`",
                                    target.binary_id
                                ),
                            })?,
                    )
                }
                None => None,
            };
            let mut argv = if let Some(executable) = executable {
                vec![executable.path.to_string_lossy().into_owned()]
            } else {
                let mut argv = self.prefix.command(&["test"]);
                argv.push("--no-fail-fast".to_owned());
                argv.extend(target.selector.iter().cloned());
                argv.push("--".to_owned());
                argv
            };
            libtest_options(&mut argv, &self.prefix.binary_options, Some(value), &names);
            let stdout = context.scratch_path("cargo-test.stdout");
            let mut invocation = context.invocation("cargo-test", argv).stdout_to(&stdout);
            if let Some(executable) = executable {
                invocation.cwd.clone_from(&executable.cwd);
                for (name, value) in &executable.env {
                    invocation = invocation.env(name, value);
                }
            } else {
                invocation = through_cargo(context, invocation, &runner_variable);
            }
            let record = run_into(
                context,
                invocation,
                &stdout,
                &mut report_file,
                (&target.binary_id, &[]),
            )?;
            let stopped = record.outcome.timed_out;
            invocations.push(record);
            if stopped {
                // Something hung; the rest of the suite would likely wait as long.
                break;
            }
        }
        let mut warnings = selection.warnings();
        // After a target the time limit stopped, no doc test starts.
        let command = DocCommand {
            cargo_test: self.prefix.command(&["test"]),
            binary_options: &self.prefix.binary_options,
            seed: Some(value),
            runner_variable: &runner_variable,
        };
        run_doc_tests(
            context,
            &command,
            &selection.doc_runs(),
            &mut report_file,
            &mut invocations,
            &mut warnings,
        )?;
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
            warnings,
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

/// `CARGO_TARGET_<HOST>_RUNNER`, the variable that makes cargo start the host's test
/// binaries through `env RUSTC_BOOTSTRAP=1`.
pub(super) fn runner_variable(context: &Context<'_>) -> Result<String, RunnerError> {
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

/// The test binary's options after `--` (or after the executable): the prefix's
/// `binary_options`, then libtest's JSON with times, the seed when there is one, and
/// `names` as exact filters when there are any.
fn libtest_options(
    argv: &mut Vec<String>,
    binary_options: &[String],
    seed: Option<u64>,
    names: &[&str],
) {
    argv.extend(binary_options.iter().cloned());
    argv.extend(strings(&[
        "-Z",
        "unstable-options",
        "--format",
        "json",
        "--report-time",
    ]));
    if let Some(seed) = seed {
        argv.push("--shuffle-seed".to_owned());
        argv.push(seed.to_string());
    }
    if !names.is_empty() {
        // After `--`, libtest reads each name as a filter whatever it looks like.
        argv.extend(strings(&["--exact", "--"]));
        argv.extend(names.iter().map(|name| (*name).to_owned()));
    }
}

/// How the doc-test step runs `cargo test --doc`: what each cargo adapter gives it.
pub(super) struct DocCommand<'a> {
    /// `cargo [+toolchain] test [cargo's options]`, to which `--doc -p PKG` is added.
    pub cargo_test: Vec<String>,
    /// The prefix's options for the test harness (after `--`).
    pub binary_options: &'a [String],
    /// libtest's `--shuffle-seed`, when the run records one.
    pub seed: Option<u64>,
    /// [`runner_variable`]: doc tests that are programs of their own start through it.
    pub runner_variable: &'a str,
}

/// Why no doc test ran when the process is not the `candor` binary.
const NOT_OWN_PROGRAM: &str = "the doc tests are not run: only the `candor` binary can stand in for rustdoc to have them report libtest JSON, and this process is not it";

/// The doc-test step of a run, shared by the cargo and nextest adapters: for each
/// library of `runs`, one `cargo test --no-fail-fast --doc -p PKG@VERSION -- …` with the
/// `candor` binary as `RUSTDOC` ([`be_rustdoc`]), its libtest JSON appended to `report`
/// under the package's `pkg::doc` binary id (only `names` when a run names any). Stops
/// after a process the time limit stopped, and starts none when the last of
/// `invocations` was; outside the `candor` binary runs none and says so in `warnings`.
pub(super) fn run_doc_tests(
    context: &Context<'_>,
    command: &DocCommand<'_>,
    runs: &[(&DocPackage, Vec<&str>)],
    report: &mut impl Write,
    invocations: &mut Vec<InvocationRecord>,
    warnings: &mut Vec<String>,
) -> Result<(), RunnerError> {
    if runs.is_empty() {
        return Ok(());
    }
    let Some(own) = super::own_program() else {
        warnings.push(NOT_OWN_PROGRAM.to_owned());
        return Ok(());
    };
    let rustdoc =
        std::env::var_os(crate::env_vars::EnvVars::RUSTDOC).unwrap_or_else(|| "rustdoc".into());
    for (package, names) in runs {
        if invocations
            .last()
            .is_some_and(|record| record.outcome.timed_out)
        {
            // Something hung; the rest would likely wait as long.
            break;
        }
        let mut argv = command.cargo_test.clone();
        argv.extend(strings(&[
            "--no-fail-fast",
            "--doc",
            "-p",
            &package.spec,
            "--",
        ]));
        // rustdoc splits its test arguments at white space, so a doc test's name cannot
        // be an exact filter: its item selects, and the report keeps `names`.
        libtest_options(&mut argv, command.binary_options, command.seed, &[]);
        argv.extend(doc_filters(names));
        let stdout = context.scratch_path("cargo-test-doc.stdout");
        let invocation = context
            .invocation("cargo-test-doc", argv)
            .stdout_to(&stdout)
            .env(crate::env_vars::EnvVars::RUSTDOC, &own.to_string_lossy())
            .env(
                crate::env_vars::EnvVars::CANDOR_AS_RUSTDOC,
                &rustdoc.to_string_lossy(),
            );
        // Doc tests that are programs of their own (edition 2024's merged ones
        // included) start through the target runner, as the test binaries do.
        let invocation = through_cargo(context, invocation, command.runner_variable);
        let record = run_into(
            context,
            invocation,
            &stdout,
            report,
            (&package.binary_id, names),
        )?;
        invocations.push(record);
    }
    Ok(())
}

/// The libraries whose doc tests a suite's run runs, and the warnings about those it
/// cannot ([`parse_doc_packages`]), from one `cargo metadata`.
pub(super) fn doc_packages(
    prefix: &CargoPrefix,
    context: &Context<'_>,
) -> Result<Docs, RunnerError> {
    parse_doc_packages(&metadata(prefix, context)?)
}

/// The library and doc-test name of a doc test's id (`pkg::doc::src/lib.rs - f (line
/// 4)`), when it is one of a library of the workspace's default members.
pub(super) fn find_doc_test(
    prefix: &CargoPrefix,
    context: &Context<'_>,
    test_id: &str,
) -> Result<Option<(DocPackage, String)>, RunnerError> {
    if !crate::results::libtest::is_doctest(test_id) {
        return Ok(None);
    }
    let (packages, _) = doc_packages(prefix, context)?;
    Ok(packages.into_iter().find_map(|package| {
        let name = test_id
            .strip_prefix(package.binary_id.as_str())?
            .strip_prefix("::")?
            .to_owned();
        Some((package, name))
    }))
}

/// A `cargo test` invocation with the host's target runner `env RUSTC_BOOTSTRAP=1`
/// (`runner_variable`) and, for an isolated side, its own target folder.
fn through_cargo(
    context: &Context<'_>,
    invocation: super::process::Invocation,
    runner_variable: &str,
) -> super::process::Invocation {
    let invocation = invocation.env(runner_variable, "env RUSTC_BOOTSTRAP=1");
    match context.cargo_target() {
        Some(target) => invocation.env("CARGO_TARGET_DIR", &target),
        None => invocation,
    }
}

/// Runs one libtest process whose stdout goes to `stdout`, checks that it ran, and copies
/// its events into the report under the binary id of `into` (only the tests it names,
/// when it names any).
fn run_into(
    context: &Context<'_>,
    invocation: super::process::Invocation,
    stdout: &Path,
    report: &mut impl Write,
    into: (&str, &[&str]),
) -> Result<InvocationRecord, RunnerError> {
    let record = context.run(invocation)?;
    context.check_ran(RunnerKind::Cargo, &record, stdout)?;
    append_with_binary_id(stdout, report, into)?;
    Ok(record)
}

/// The filters that select the doc tests `names` without white space: each one's item
/// (`sub` in `src/lib.rs - sub (line 10)`); none (every doc test of the package) when an
/// item is empty (the crate's own docs) or not one word.
fn doc_filters(names: &[&str]) -> Vec<String> {
    let items: Option<Vec<String>> = names
        .iter()
        .map(|name| {
            let (_, rest) = name.split_once(" - ")?;
            let item = rest.rsplit_once(" (line ")?.0;
            (!item.is_empty() && !item.contains(char::is_whitespace)).then(|| item.to_owned())
        })
        .collect();
    let mut items = items.unwrap_or_default();
    items.sort();
    items.dedup();
    items
}

/// What a cargo run covers: every target, one test in one target, or chosen tests of
/// chosen targets (each target's names in one process).
enum Selection<'t> {
    /// Every target, then every library's doc tests, with the warnings about libraries
    /// whose doc tests cargo does not run.
    Suite(Vec<TestTarget>, Docs),
    One(&'t TestTarget, String),
    OneDoc(DocPackage, String),
    Batch(Vec<(TestTarget, Vec<String>)>),
}

/// The libraries whose doc tests a suite's run runs, and why others are not.
pub(super) type Docs = (Vec<DocPackage>, Vec<String>);

impl Selection<'_> {
    /// Each process: its target and its names (none: all of the target's tests).
    fn runs(&self) -> Vec<(&TestTarget, Vec<&str>)> {
        match self {
            Selection::Suite(targets, _) => targets.iter().map(|t| (t, Vec::new())).collect(),
            Selection::One(target, name) => vec![(*target, vec![name.as_str()])],
            Selection::OneDoc(..) => Vec::new(),
            Selection::Batch(runs) => runs
                .iter()
                .map(|(t, names)| (t, names.iter().map(String::as_str).collect()))
                .collect(),
        }
    }

    /// Each `cargo test --doc` process: its library and its names (none: all).
    fn doc_runs(&self) -> Vec<(&DocPackage, Vec<&str>)> {
        match self {
            Selection::Suite(_, (packages, _)) => {
                packages.iter().map(|p| (p, Vec::new())).collect()
            }
            Selection::OneDoc(package, name) => vec![(package, vec![name.as_str()])],
            Selection::One(..) | Selection::Batch(_) => Vec::new(),
        }
    }

    fn warnings(&self) -> Vec<String> {
        match self {
            Selection::Suite(_, (_, warnings)) => warnings.clone(),
            _ => Vec::new(),
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
        let output = metadata(&self.prefix, context)?;
        let targets = parse_metadata(&output, &context.repo_root)?;
        let docs = parse_doc_packages(&output)?;
        self.run(context, &Selection::Suite(targets, docs), options, None)
    }

    /// A doc test's id (`pkg::doc::src/lib.rs - f (line 4)`) runs `cargo test --doc -p
    /// pkg -- f`, the report cut to it ([`doc_filters`]); any other, its target.
    fn run_one(
        &self,
        context: &Context<'_>,
        test_id: &str,
        options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        if let Some((package, name)) = find_doc_test(&self.prefix, context, test_id)? {
            return self.run(context, &Selection::OneDoc(package, name), options, None);
        }
        let targets = self.targets(context)?;
        let (target, name) = locate(&targets, test_id, RunnerKind::Cargo)?;
        self.run(context, &Selection::One(target, name), options, None)
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

    /// Each test target of the batch runs its tests in one process, each name an exact
    /// filter: the target's executable from this adapter's one `cargo test --no-run`
    /// (`EXE … --exact -- NAME…`, in the package's folder with cargo's environment),
    /// or, where cargo's configuration adds to that environment, `cargo test -p P
    /// --lib|--bin N|--test N -- … --exact -- NAME…`.
    fn run_batch(
        &self,
        context: &Context<'_>,
        test_ids: &[String],
        options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        let targets = self.targets(context)?;
        let runs = batch_selection(&targets, test_ids)?;
        if !self.runs_binaries(context) {
            return self.run(context, &Selection::Batch(runs), options, None);
        }
        let needed: Vec<&TestTarget> = runs.iter().map(|(target, _)| target).collect();
        let executables = self.executables(context, &needed, &targets)?;
        self.run(
            context,
            &Selection::Batch(runs),
            options,
            Some(&executables),
        )
    }

    /// Each target's `--list --format terse`: through the executables of one `cargo test
    /// --no-run` (the builds the lane's batches then run, [`CargoTest::runs_binaries`]),
    /// else one `cargo test -p P --lib|… -- --list` per target. The toolchain the
    /// executables' environment needs (`rustc --print`, a rustup proxy's start-up) is
    /// asked beside `cargo metadata` and the build, and the executables list up to the
    /// machine's parallelism at once (issue #15: the lane's listing is on its critical
    /// path).
    fn list(&self, context: &Context<'_>) -> Result<Vec<ListedTest>, RunnerError> {
        let binaries = self.runs_binaries(context);
        let (targets, executables) = std::thread::scope(|scope| {
            if !binaries {
                return Ok::<_, RunnerError>((self.targets(context)?, None));
            }
            // Its error, if any, comes again from the build's own question.
            scope.spawn(|| self.toolchain_of(context).ok());
            let listed = scope.spawn(|| self.targets(context));
            let build = self.run_build(context, &strings(&["--tests"]));
            // A manifest cargo cannot read fails both: `cargo metadata` says it first, as
            // when the build came after it.
            let targets = listed
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
            let executables = self.build_listed(context, &build?, &targets)?;
            Ok((targets, Some(executables)))
        })?;
        // `cargo test -- --list` processes would only wait for each other's lock.
        let workers = if binaries {
            available_parallelism()
        } else {
            Some(1)
        };
        let listings = in_parallel(&targets, workers, |target| {
            let executable = executables
                .as_ref()
                .and_then(|built| built.get(&target.binary_id));
            let mut argv = if let Some(executable) = executable {
                vec![executable.path.to_string_lossy().into_owned()]
            } else {
                let mut argv = self.prefix.command(&["test"]);
                argv.extend(target.selector.iter().cloned());
                argv.push("--".to_owned());
                argv
            };
            argv.extend(self.prefix.binary_options.iter().cloned());
            argv.extend(strings(&["--list", "--format", "terse"]));
            match executable {
                Some(executable) => {
                    context.probe_in("cargo-test-list", argv, &executable.cwd, &executable.env)
                }
                None => context.probe("cargo-test-list", argv, &[]),
            }
        });
        let mut tests = Vec::new();
        for (target, output) in targets.iter().zip(listings) {
            tests.extend(output?.lines().filter_map(|line| {
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

/// The variable cargo puts its dynamic library folders in.
const LIBRARY_PATH_VARIABLE: &str = if cfg!(target_os = "macos") {
    crate::env_vars::EnvVars::DYLD_FALLBACK_LIBRARY_PATH
} else {
    crate::env_vars::EnvVars::LD_LIBRARY_PATH
};

/// The dynamic library path candor inherited, which cargo keeps after its own folders.
fn inherited_library_path() -> Vec<PathBuf> {
    std::env::var_os(LIBRARY_PATH_VARIABLE)
        .map(|value| std::env::split_paths(&value).collect())
        .unwrap_or_default()
}

/// Each target's executable and run-time environment from `cargo test --no-run
/// --message-format json` messages: the `compiler-artifact` with a test profile and an
/// executable whose manifest, target name and kinds are the target's; the package's
/// `build-script-executed` message for `OUT_DIR` and `cargo:rustc-env`; the dynamic
/// library path as cargo builds it (build scripts' native folders inside the target
/// folder, the profile's folder, its `deps`, the toolchain's target libraries, then the
/// inherited value). Lines that are not such messages are skipped.
fn parse_build(
    messages: &str,
    targets: &[&TestTarget],
    toolchain: &Toolchain,
    inherited: &[PathBuf],
) -> BTreeMap<String, Executable> {
    #[derive(Deserialize)]
    struct Message {
        reason: String,
        #[serde(default)]
        package_id: String,
        #[serde(default)]
        manifest_path: String,
        target: Option<ArtifactTarget>,
        profile: Option<Profile>,
        executable: Option<PathBuf>,
        #[serde(default)]
        linked_paths: Vec<String>,
        #[serde(default)]
        env: Vec<(String, String)>,
        out_dir: Option<String>,
    }
    #[derive(Deserialize)]
    struct ArtifactTarget {
        name: String,
        kind: Vec<String>,
    }
    #[derive(Deserialize)]
    struct Profile {
        test: bool,
    }
    /// A package's build script's `OUT_DIR` and `cargo:rustc-env` pairs.
    type Script = (Option<String>, Vec<(String, String)>);
    let mut scripts: BTreeMap<String, Script> = BTreeMap::new();
    let mut native: Vec<PathBuf> = Vec::new();
    let mut artifacts: Vec<Message> = Vec::new();
    for line in messages.lines() {
        let Ok(message) = serde_json::from_str::<Message>(line) else {
            continue;
        };
        match message.reason.as_str() {
            "build-script-executed" => {
                for path in &message.linked_paths {
                    let path = path.split_once('=').map_or(path.as_str(), |(_, p)| p);
                    native.push(PathBuf::from(path));
                }
                scripts.insert(
                    message.package_id.clone(),
                    (message.out_dir.clone(), message.env.clone()),
                );
            }
            "compiler-artifact"
                if message.executable.is_some()
                    && message.profile.as_ref().is_some_and(|p| p.test) =>
            {
                artifacts.push(message);
            }
            _ => {}
        }
    }
    let mut executables = BTreeMap::new();
    for target in targets {
        let Some(artifact) = artifacts.iter().find(|a| {
            a.manifest_path == target.manifest_path
                && a.target
                    .as_ref()
                    .is_some_and(|t| t.name == target.name && t.kind == target.kinds)
        }) else {
            continue;
        };
        let Some(path) = artifact.executable.clone() else {
            continue;
        };
        let deps = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let profile = deps.parent().map(Path::to_path_buf).unwrap_or_default();
        let mut search: Vec<PathBuf> = native
            .iter()
            .filter(|dir| dir.starts_with(&profile))
            .cloned()
            .collect();
        search.extend([profile, deps, PathBuf::from(&toolchain.target_libdir)]);
        if inherited.starts_with(&search) {
            search = inherited.to_vec();
        } else {
            search.extend(inherited.iter().cloned());
        }
        let mut env: Vec<(String, String)> = Vec::new();
        if let Some((out_dir, pairs)) = scripts.get(&artifact.package_id) {
            env.extend(pairs.iter().cloned());
            if let Some(out_dir) = out_dir {
                env.push(("OUT_DIR".to_owned(), out_dir.clone()));
            }
        }
        env.push(("CARGO".to_owned(), toolchain.cargo.clone()));
        env.extend(target.package_env.iter().cloned());
        if let Ok(joined) = std::env::join_paths(&search) {
            env.push((
                LIBRARY_PATH_VARIABLE.to_owned(),
                joined.to_string_lossy().into_owned(),
            ));
        }
        env.push(("RUSTC_BOOTSTRAP".to_owned(), "1".to_owned()));
        let cwd = Path::new(&target.manifest_path)
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        executables.insert(target.binary_id.clone(), Executable { path, cwd, env });
    }
    executables
}

/// Copies one binary's libtest JSON into the report, naming each test `binary-id$name`,
/// and leaving out the events of tests `only` does not name when it names any. Lines
/// that are not libtest test events (a test's stray prints) are copied unchanged.
fn append_with_binary_id(
    part: &Path,
    report: &mut impl Write,
    (binary_id, only): (&str, &[&str]),
) -> Result<(), RunnerError> {
    let reader = BufReader::new(fs_err::File::open(part)?);
    for line in reader.split(b'\n') {
        let line = line?;
        match with_binary_id(&line, binary_id) {
            Some((name, _)) if !only.is_empty() && !only.contains(&name.as_str()) => continue,
            Some((_, rewritten)) => report.write_all(rewritten.as_bytes())?,
            None => report.write_all(&line)?,
        }
        report.write_all(b"\n")?;
    }
    Ok(())
}

/// A test event's name, and the event with the name `binary-id$name`.
fn with_binary_id(line: &[u8], binary_id: &str) -> Option<(String, String)> {
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
    let name = name.to_owned();
    let prefixed = format!("{binary_id}${name}");
    event.insert("name".to_owned(), serde_json::Value::String(prefixed));
    Some((name, serde_json::to_string(&event).ok()?))
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
        let (name, rewritten) = with_binary_id(line, "my-crate").unwrap_or_default();
        assert_eq!(name, "tests::passes");
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

    fn target(binary_id: &str, name: &str, kind: &str) -> TestTarget {
        TestTarget {
            binary_id: binary_id.to_owned(),
            selector: Vec::new(),
            file: None,
            manifest_path: "/r/crates/p/Cargo.toml".to_owned(),
            name: name.to_owned(),
            kinds: strings(&[kind]),
            package_env: strings_pairs(&[("CARGO_PKG_NAME", "p")]),
        }
    }

    fn strings_pairs(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(a, b)| ((*a).to_owned(), (*b).to_owned()))
            .collect()
    }

    /// #15 (lane binaries run directly): each target gets the executable of its own
    /// test-profile artifact (not the library's non-test artifact, not another
    /// package's target of the same name), its package's build script's `OUT_DIR` and
    /// `cargo:rustc-env`, `CARGO`, and cargo's library folders before the inherited ones.
    #[test]
    fn build_messages_give_each_target_its_executable_and_environment() {
        let messages = [
            r#"{"reason":"build-script-executed","package_id":"path+file:///r/crates/p#0.1.0","linked_paths":["native=/r/target/debug/build/p-1/out/lib","/usr/lib/elsewhere"],"env":[["FROM_BUILD","yes"]],"out_dir":"/r/target/debug/build/p-1/out"}"#,
            r#"{"reason":"compiler-artifact","package_id":"path+file:///r/crates/p#0.1.0","manifest_path":"/r/crates/p/Cargo.toml","target":{"name":"p","kind":["lib"]},"profile":{"test":false},"executable":null}"#,
            r#"{"reason":"compiler-artifact","package_id":"path+file:///r/crates/p#0.1.0","manifest_path":"/r/crates/p/Cargo.toml","target":{"name":"p","kind":["lib"]},"profile":{"test":true},"executable":"/r/target/debug/deps/p-aaa"}"#,
            r#"{"reason":"compiler-artifact","package_id":"path+file:///r/crates/q#0.1.0","manifest_path":"/r/crates/q/Cargo.toml","target":{"name":"api","kind":["test"]},"profile":{"test":true},"executable":"/r/target/debug/deps/api-qqq"}"#,
            r#"{"reason":"compiler-artifact","package_id":"path+file:///r/crates/p#0.1.0","manifest_path":"/r/crates/p/Cargo.toml","target":{"name":"api","kind":["test"]},"profile":{"test":true},"executable":"/r/target/debug/deps/api-ppp"}"#,
            "not json",
            r#"{"reason":"build-finished","success":true}"#,
        ]
        .join("\n");
        let lib = target("p", "p", "lib");
        let api = target("p::api", "api", "test");
        let missing = target("p::gone", "gone", "test");
        let toolchain = Toolchain {
            cargo: "/tc/bin/cargo".to_owned(),
            target_libdir: "/tc/lib/rustlib/x/lib".to_owned(),
        };
        let inherited = vec![PathBuf::from("/opt/lib")];
        let built = parse_build(&messages, &[&lib, &api, &missing], &toolchain, &inherited);
        assert_eq!(built.keys().collect::<Vec<_>>(), ["p", "p::api"]);
        let api = &built["p::api"];
        assert_eq!(api.path, PathBuf::from("/r/target/debug/deps/api-ppp"));
        assert_eq!(api.cwd, PathBuf::from("/r/crates/p"));
        let value = |name: &str| {
            api.env
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(value("FROM_BUILD"), Some("yes"));
        assert_eq!(value("OUT_DIR"), Some("/r/target/debug/build/p-1/out"));
        assert_eq!(value("CARGO"), Some("/tc/bin/cargo"));
        assert_eq!(value("CARGO_PKG_NAME"), Some("p"));
        assert_eq!(value("RUSTC_BOOTSTRAP"), Some("1"));
        assert_eq!(
            value(LIBRARY_PATH_VARIABLE),
            Some(
                "/r/target/debug/build/p-1/out/lib:/r/target/debug:/r/target/debug/deps:/tc/lib/rustlib/x/lib:/opt/lib"
            ),
            "native folders outside the target folder are not cargo's to add"
        );
        // An inherited path that already starts with cargo's folders is kept as it is.
        let again: Vec<PathBuf> = [
            "/r/target/debug/build/p-1/out/lib",
            "/r/target/debug",
            "/r/target/debug/deps",
            "/tc/lib/rustlib/x/lib",
            "/more",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        let built = parse_build(&messages, &[&lib], &toolchain, &again);
        let env = &built["p"].env;
        assert!(env.iter().any(|(n, v)| n == LIBRARY_PATH_VARIABLE
            && v == "/r/target/debug/build/p-1/out/lib:/r/target/debug:/r/target/debug/deps:/tc/lib/rustlib/x/lib:/more"));
    }

    #[test]
    fn package_variables_split_the_version_as_cargo_does() {
        let authors = strings(&["A <a@x>", "B"]);
        let env = package_env(&PackageFields {
            manifest_path: "/r/p/Cargo.toml",
            name: "p",
            version: "1.20.3-beta.1+build.5",
            authors: &authors,
            description: Some("d"),
            homepage: None,
            repository: None,
            license: Some("MIT"),
            license_file: None,
            rust_version: Some("1.70"),
            readme: None,
        });
        let value = |name: &str| env.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str());
        assert_eq!(value("CARGO_MANIFEST_DIR"), Some("/r/p"));
        assert_eq!(value("CARGO_PKG_VERSION"), Some("1.20.3-beta.1+build.5"));
        assert_eq!(value("CARGO_PKG_VERSION_MAJOR"), Some("1"));
        assert_eq!(value("CARGO_PKG_VERSION_MINOR"), Some("20"));
        assert_eq!(value("CARGO_PKG_VERSION_PATCH"), Some("3"));
        assert_eq!(value("CARGO_PKG_VERSION_PRE"), Some("beta.1"));
        assert_eq!(value("CARGO_PKG_AUTHORS"), Some("A <a@x>:B"));
        assert_eq!(value("CARGO_PKG_HOMEPAGE"), Some(""));
        assert_eq!(value("CARGO_PKG_RUST_VERSION"), Some("1.70"));
    }

    /// #15 (lane binaries run directly): where cargo's configuration adds to a test
    /// binary's environment (`[env]`, `--config`), batches go through cargo.
    #[test]
    fn an_env_table_in_cargo_s_configuration_keeps_batches_in_cargo() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let executor = super::super::fake::FakeExecutor::new([]);
        let context = Context::new(dir.path(), dir.path(), &executor);
        let configured = CargoTest::new(Some(strings(&["cargo", "test", "--config", "env.X='1'"])))
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(!configured.runs_binaries(&context));
        let plain = CargoTest::new(None).unwrap_or_else(|e| panic!("{e}"));
        fs_err::create_dir_all(dir.path().join(".cargo")).unwrap_or_else(|e| panic!("{e}"));
        fs_err::write(
            dir.path().join(".cargo").join("config.toml"),
            "[env]\nX = \"1\"\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(!plain.runs_binaries(&context));
    }

    /// The libraries whose doc tests the suite runs: not a package without one, not
    /// `doctest = false`, a warning for a crate type cargo runs none for; a proc-macro's
    /// run.
    #[test]
    fn metadata_gives_the_libraries_whose_doc_tests_run() {
        let metadata = r#"{
          "packages": [
            {"id": "a", "name": "calc", "version": "0.1.0", "targets": [
              {"name": "calc", "kind": ["lib"], "src_path": "/r/src/lib.rs", "doctest": true},
              {"name": "calc", "kind": ["bin"], "src_path": "/r/src/lib.rs", "doctest": false}]},
            {"id": "b", "name": "tool", "version": "1.0.0", "targets": [
              {"name": "tool", "kind": ["bin"], "src_path": "/r/src/lib.rs", "doctest": false}]},
            {"id": "c", "name": "quiet", "version": "1.0.0", "targets": [
              {"name": "quiet", "kind": ["lib"], "src_path": "/r/src/lib.rs", "doctest": false}]},
            {"id": "d", "name": "wasm", "version": "1.0.0", "targets": [
              {"name": "wasm", "kind": ["cdylib"], "src_path": "/r/src/lib.rs", "doctest": false}]},
            {"id": "e", "name": "macros", "version": "0.2.0", "targets": [
              {"name": "macros", "kind": ["proc-macro"], "src_path": "/r/src/lib.rs", "doctest": true}]},
            {"id": "f", "name": "not-a-member", "version": "1.0.0", "targets": [
              {"name": "x", "kind": ["lib"], "src_path": "/r/src/lib.rs"}]}
          ],
          "workspace_members": ["a", "b", "c", "d", "e", "f"],
          "workspace_default_members": ["a", "b", "c", "d", "e"]
        }"#;
        let (packages, warnings) = parse_doc_packages(metadata).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            packages,
            [
                DocPackage {
                    binary_id: "calc::doc".to_owned(),
                    spec: "calc@0.1.0".to_owned(),
                },
                DocPackage {
                    binary_id: "macros::doc".to_owned(),
                    spec: "macros@0.2.0".to_owned(),
                },
            ]
        );
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        assert!(
            warnings[0].starts_with(
                "the doc tests of wasm are not run: its library's crate type is `cdylib`"
            ),
            "{warnings:?}"
        );
    }

    /// rustdoc splits test arguments at white space: a doc test is selected by its item.
    #[test]
    fn doc_tests_are_selected_by_their_items() {
        assert_eq!(
            doc_filters(&[
                "src/lib.rs - m::S::f (line 27)",
                "src/lib.rs - sub (line 10)"
            ]),
            ["m::S::f", "sub"]
        );
        assert!(doc_filters(&["src/lib.rs - (line 1)"]).is_empty());
        assert!(
            doc_filters(&["src/lib.rs - sub (line 10)", "README.md - x y (line 2)"]).is_empty()
        );
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
