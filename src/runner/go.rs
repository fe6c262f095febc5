//! The go test adapter: `go test -json` with stdout captured as the report, `-count=1` so
//! no cached result stands in for a run, `-shuffle=N` as the seed, and one test selected
//! by an anchored, escaped `-run` pattern per subtest level.
//!
//! For `candor order`: a package's tests share one process. `go test` runs the tests a
//! `-run` pattern selects in source order (files by name, then declaration order; the
//! order `go test -list` prints), so an ordered run selects its tests with
//! `-run '^(TestA|TestB)$' -shuffle=off` and gets source order, whatever order they were
//! named in; a shuffled run is `-shuffle=N`. A subtest is run through its top-level test
//! (with its siblings). A repeated run is `-count=N`.
//!
//! For the merge lane's batches (issue #15), each `go test` relinks a test binary per
//! package: each package's binary is built once (all packages by one `go test -exec`
//! whose program keeps the binaries, `runner::go_keep`; one package, or the library
//! without the `candor` binary, by `go test -c`) and each batch runs it through `go tool
//! test2json` in the package's folder, as `go test -json` does. A batch run once (the
//! base version's) goes through `go test -json` itself, which links each package once.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};

use super::{
    Adapter, Arrangement, BatchOrdering, Context, GivenOrder, InvocationRecord, ListedTest,
    OrderSupport, RunOptions, RunReport, RunnerError, RunnerKind, Seed, SeedSupport,
    available_parallelism, in_parallel, option_value, strings,
};
use crate::results::{Format, gotest, ids};

const SEED_CONTROLS: &str = "go's -shuffle seed fixes the order in which each package's top-level tests and benchmarks start; it does not fix goroutine scheduling, the interleaving of t.Parallel tests, map iteration order or the order packages run in";

/// Every package of the module.
const ALL_PACKAGES: &str = "./...";

const SOURCE_ORDER: &str = "go runs the chosen tests of a package in source order (files by name, then declaration order), whatever order they are named in; other orders come from -shuffle seeds";

const BATCH_ORDER: &str = "go runs a package's chosen tests in its own order (source order, shuffled by -shuffle), whatever order they are named in; each package in its own process";

/// One `go test` command: which tests, how often, in what order.
struct Plan {
    /// `-run` pattern and package; `None`: every package.
    selection: Option<(String, String)>,
    /// `-count`.
    count: u32,
    /// `-shuffle`: a seed, or `None` for `-shuffle=off`.
    shuffle: Option<u64>,
}

/// `go test` through a command prefix (`go test` unless `[runner] command` says).
#[derive(Debug)]
pub struct GoTest {
    prefix: Vec<String>,
    /// The test binaries this adapter's own `go test -c` wrote, for one tree: the merge
    /// lane's batches run them directly (issue #15).
    built: Mutex<Option<Built>>,
}

/// The test binaries built for one tree, by package.
#[derive(Debug)]
struct Built {
    root: PathBuf,
    binaries: BTreeMap<String, Binary>,
    /// Packages' folders, as `go list` gave them.
    dirs: BTreeMap<String, PathBuf>,
    /// `go tool -n test2json`: the converter every batch process starts, asked once
    /// rather than through a `go tool` process per batch.
    test2json: Option<String>,
}

impl Built {
    fn new(root: &std::path::Path) -> Self {
        Built {
            root: root.to_path_buf(),
            binaries: BTreeMap::new(),
            dirs: BTreeMap::new(),
            test2json: None,
        }
    }
}

/// `go list`'s answer for one package of the listing.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Package {
    import_path: String,
    dir: PathBuf,
    /// Whether it has test files (`_test.go` of the package or of `package x_test`).
    tested: bool,
}

/// `go list -f` of the listing: import path, folder and the numbers of test files.
const LIST_FORMAT: &str = "{{.ImportPath}}\t{{.Dir}}\t{{len .TestGoFiles}}\t{{len .XTestGoFiles}}";

/// Build flags of `go test` that `go list` takes too and that change which files a package
/// has, with whether they take a value.
const LIST_FLAGS: [(&str, bool); 5] = [
    ("tags", true),
    ("mod", true),
    ("modfile", true),
    ("race", false),
    ("overlay", true),
];

/// The prefix's build flags that `go list` must be given to see the packages' test files
/// as `go test` does (`-tags integration`).
fn list_flags(build: &[String]) -> Vec<String> {
    let mut kept = Vec::new();
    let mut rest = build.iter();
    while let Some(argument) = rest.next() {
        let name = argument.trim_start_matches('-');
        let (name, attached) = match name.split_once('=') {
            Some((name, _)) => (name, true),
            None => (name, false),
        };
        let Some((_, valued)) = LIST_FLAGS.iter().find(|(flag, _)| *flag == name) else {
            continue;
        };
        if !argument.starts_with('-') {
            continue;
        }
        kept.push(argument.clone());
        if *valued && !attached {
            kept.extend(rest.next().cloned());
        }
    }
    kept
}

/// `go list -f LIST_FORMAT` lines into packages.
fn parse_packages(output: &str) -> Result<Vec<Package>, RunnerError> {
    output
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            let count = |field: &str| field.trim().parse::<u32>().ok();
            match fields.as_slice() {
                [import_path, dir, tests, external] => {
                    let (Some(tests), Some(external)) = (count(tests), count(external)) else {
                        return Err(unexpected_list_line(line));
                    };
                    Ok(Package {
                        import_path: (*import_path).to_owned(),
                        dir: PathBuf::from(dir),
                        tested: tests + external > 0,
                    })
                }
                _ => Err(unexpected_list_line(line)),
            }
        })
        .collect()
}

fn unexpected_list_line(line: &str) -> RunnerError {
    RunnerError::Output {
        what: "go list".to_owned(),
        message: format!("unexpected line `{line}`"),
    }
}

/// A package's test binary and the folder `go test` runs it in.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Binary {
    path: PathBuf,
    dir: PathBuf,
}

/// `go test`'s flags that it hands to the test binary as `-test.NAME` (`go help
/// testflag`), and which of them take no value.
const TEST_FLAGS: [&str; 27] = [
    "bench",
    "benchmem",
    "benchtime",
    "blockprofile",
    "blockprofilerate",
    "count",
    "coverprofile",
    "cpu",
    "cpuprofile",
    "failfast",
    "fullpath",
    "fuzz",
    "fuzzminimizetime",
    "fuzztime",
    "list",
    "memprofile",
    "memprofilerate",
    "mutexprofile",
    "mutexprofilefraction",
    "outputdir",
    "parallel",
    "run",
    "short",
    "shuffle",
    "skip",
    "timeout",
    "v",
];
const BOOLEAN_TEST_FLAGS: [&str; 5] = ["benchmem", "failfast", "fullpath", "short", "v"];

/// A prefix cut for the lane's builds: `go test` with its build flags (for `go test
/// -c`), and its test flags as the binary spells them.
#[derive(Debug, Clone, PartialEq, Eq)]
struct SplitPrefix {
    build: Vec<String>,
    binary: Vec<String>,
    /// `-exec`: `go test` would start the binary through another program, which the lane
    /// does not do itself.
    exec: bool,
}

fn split_prefix(prefix: &[String]) -> SplitPrefix {
    let at = prefix
        .iter()
        .position(|a| a == "test")
        .map_or(prefix.len(), |at| at + 1);
    let mut build = prefix[..at].to_vec();
    // What `go test` passes every test binary, before the prefix's own flags so that
    // they win.
    let mut binary = strings(&["-test.paniconexit0", "-test.timeout=10m0s"]);
    let mut exec = false;
    let mut rest = prefix[at..].iter();
    while let Some(argument) = rest.next() {
        let name = argument.trim_start_matches('-');
        let (name, value) = match name.split_once('=') {
            Some((name, value)) => (name, Some(value)),
            None => (name, None),
        };
        if !argument.starts_with('-') || !TEST_FLAGS.contains(&name) {
            exec |= argument.starts_with('-') && name == "exec";
            // `-json` is candor's; the build's flags go to `go test -c`.
            if name != "json" || !argument.starts_with('-') {
                build.push(argument.clone());
            }
            continue;
        }
        match value {
            Some(value) => binary.push(format!("-test.{name}={value}")),
            None if BOOLEAN_TEST_FLAGS.contains(&name) => binary.push(format!("-test.{name}")),
            None => {
                binary.push(format!("-test.{name}"));
                binary.extend(rest.next().cloned());
            }
        }
    }
    SplitPrefix {
        build,
        binary,
        exec,
    }
}

impl GoTest {
    /// The adapter for a prefix.
    pub fn new(command: Option<Vec<String>>) -> Self {
        GoTest {
            prefix: command.unwrap_or_else(|| RunnerKind::Go.default_command()),
            built: Mutex::new(None),
        }
    }

    /// The test binaries of `packages` in the context's tree, each package's built by
    /// one `go test -c -o SCRATCH/N.test PKG` with the prefix's build flags (go 1.19
    /// builds one package per `-c`; up to [`GoTest::workers`] at once), the first time
    /// a batch names it; their folders from one `go list`. A failed build is
    /// [`RunnerError::CouldNotRun`] quoting the compiler.
    fn binaries(
        &self,
        context: &Context<'_>,
        packages: &[String],
        split: &SplitPrefix,
    ) -> Result<BTreeMap<String, Binary>, RunnerError> {
        let mut built = self.built.lock().unwrap_or_else(PoisonError::into_inner);
        let built = Self::built_for(&mut built, context);
        let missing: Vec<&String> = packages
            .iter()
            .filter(|p| !built.binaries.contains_key(*p))
            .collect();
        if !missing.is_empty() {
            let made = self.build(context, &missing, split, built)?;
            built.binaries.extend(made);
        }
        Ok(packages
            .iter()
            .filter_map(|p| Some((p.clone(), built.binaries.get(p)?.clone())))
            .collect())
    }

    /// The built binaries of the context's tree, emptied when the tree is another.
    fn built_for<'b>(built: &'b mut Option<Built>, context: &Context<'_>) -> &'b mut Built {
        if built
            .as_ref()
            .is_none_or(|built| built.root != context.repo_root)
        {
            *built = Some(Built::new(&context.repo_root));
        }
        built.get_or_insert_with(|| Built::new(&context.repo_root))
    }

    /// The go program of the prefix (`go`, or `[runner] command`'s first word).
    fn go(split: &SplitPrefix) -> String {
        split
            .build
            .first()
            .cloned()
            .unwrap_or_else(|| "go".to_owned())
    }

    /// Builds `packages`' test binaries into a fresh scratch folder (their folders from
    /// `built`, else from one `go list`).
    fn build(
        &self,
        context: &Context<'_>,
        packages: &[&String],
        split: &SplitPrefix,
        built: &mut Built,
    ) -> Result<BTreeMap<String, Binary>, RunnerError> {
        let folder = context.scratch_path("go-test-binaries");
        fs_err::create_dir_all(&folder)?;
        let unknown: Vec<&String> = packages
            .iter()
            .copied()
            .filter(|p| !built.dirs.contains_key(*p))
            .collect();
        if !unknown.is_empty() {
            let mut list = vec![Self::go(split)];
            list.extend(strings(&["list", "-f", "{{.ImportPath}}\t{{.Dir}}", "--"]));
            list.extend(unknown.iter().map(|p| (*p).clone()));
            let listed = context.probe("go-list-dirs", list, &[])?;
            built.dirs.extend(
                listed
                    .lines()
                    .filter_map(|line| line.split_once('\t'))
                    .map(|(package, dir)| (package.to_owned(), PathBuf::from(dir))),
            );
        }
        if packages.len() >= 2
            && let Some(exec) = super::go_keep::exec_value(&std::path::absolute(&folder)?)
        {
            return Self::build_in_one_go(context, packages, split, built, &folder, exec);
        }
        let numbered_from = built.binaries.len();
        let what = format!("{} -c", split.build.join(" "));
        let jobs: Vec<(String, PathBuf)> = packages
            .iter()
            .enumerate()
            .map(|(index, package)| {
                let path = folder.join(format!("{}.test", numbered_from + index + 1));
                ((*package).clone(), path)
            })
            .collect();
        let results: Vec<Result<(), RunnerError>> =
            in_parallel(&jobs, self.workers(), |(package, path)| {
                let mut argv = split.build.clone();
                argv.extend(strings(&["-c", "-o"]));
                argv.push(path.to_string_lossy().into_owned());
                argv.push(package.clone());
                let record = context.run(context.invocation("go-test-c", argv))?;
                context.check_built(RunnerKind::Go, &what, &record)?;
                Ok(())
            });
        let mut binaries = BTreeMap::new();
        for ((package, path), result) in jobs.into_iter().zip(results) {
            result?;
            let Some(dir) = built.dirs.get(package.as_str()) else {
                return Err(RunnerError::Output {
                    what: "go list".to_owned(),
                    message: format!("no folder for package `{package}`"),
                });
            };
            if !path.is_file() {
                return Err(RunnerError::Output {
                    what,
                    message: format!("`{package}` has no test files: no test binary was written"),
                });
            }
            binaries.insert(
                package,
                Binary {
                    path,
                    dir: dir.clone(),
                },
            );
        }
        Ok(binaries)
    }

    /// Every package's binary from one `go test -count=1 -run '^$' -exec KEEPER PKG…`
    /// (`runner::go_keep`): go vets and links the packages `-p` at a time and runs the
    /// keeper instead of each binary. A failed build is [`RunnerError::CouldNotRun`]
    /// quoting go, as for `go test -c`.
    fn build_in_one_go(
        context: &Context<'_>,
        packages: &[&String],
        split: &SplitPrefix,
        built: &Built,
        folder: &std::path::Path,
        exec: String,
    ) -> Result<BTreeMap<String, Binary>, RunnerError> {
        let what = format!("{} -exec KEEPER", split.build.join(" "));
        let mut argv = split.build.clone();
        argv.extend(strings(&["-count=1", "-run=^$", "-exec"]));
        argv.push(exec);
        argv.extend(packages.iter().map(|p| (*p).clone()));
        let record = context.run(context.invocation("go-test-keep", argv))?;
        context.check_built(RunnerKind::Go, &what, &record)?;
        let mut binaries = BTreeMap::new();
        for package in packages {
            let Some(dir) = built.dirs.get(package.as_str()) else {
                return Err(RunnerError::Output {
                    what: "go list".to_owned(),
                    message: format!("no folder for package `{package}`"),
                });
            };
            let path = folder.join(super::go_keep::kept_name(dir));
            if !path.is_file() {
                return Err(RunnerError::Output {
                    what,
                    message: format!("`{package}` has no test files: no test binary was written"),
                });
            }
            binaries.insert(
                (*package).clone(),
                Binary {
                    path,
                    dir: dir.clone(),
                },
            );
        }
        Ok(binaries)
    }

    /// The path of go's `test2json`, from one `go tool -n test2json` per tree.
    fn test2json(&self, context: &Context<'_>, split: &SplitPrefix) -> Result<String, RunnerError> {
        let mut built = self.built.lock().unwrap_or_else(PoisonError::into_inner);
        let built = Self::built_for(&mut built, context);
        if let Some(path) = &built.test2json {
            return Ok(path.clone());
        }
        let argv = vec![
            Self::go(split),
            "tool".to_owned(),
            "-n".to_owned(),
            "test2json".to_owned(),
        ];
        let answer = context.probe("go-tool-n", argv, &[])?;
        let path = answer.trim();
        if path.is_empty() || path.contains('\n') {
            return Err(RunnerError::Output {
                what: "go tool -n test2json".to_owned(),
                message: format!("not one path: `{path}`"),
            });
        }
        built.test2json = Some(path.to_owned());
        Ok(path.to_owned())
    }

    /// The listing through the test binaries the lane's batches then run (issue #15):
    /// one `go list` for the packages (with the prefix's `-tags`), each package with test
    /// files built once (`go test -c`, as [`GoTest::binaries`]; a failed build, vet's
    /// findings included, is [`RunnerError::CouldNotRun`] quoting go), then each binary's
    /// `-test.list .` in its package's folder, as `go test -list .` runs it: one link per
    /// package instead of one for the listing and one for the build.
    fn list_through_binaries(
        &self,
        context: &Context<'_>,
        split: &SplitPrefix,
        packages: &[String],
    ) -> Result<Vec<ListedTest>, RunnerError> {
        let mut argv = vec![Self::go(split), "list".to_owned()];
        argv.extend(list_flags(&split.build));
        argv.extend(strings(&["-f", LIST_FORMAT, "--"]));
        argv.extend(packages.iter().cloned());
        let packages = parse_packages(&context.probe("go-list-packages", argv, &[])?)?;
        {
            let mut built = self.built.lock().unwrap_or_else(PoisonError::into_inner);
            let built = Self::built_for(&mut built, context);
            for package in &packages {
                built
                    .dirs
                    .insert(package.import_path.clone(), package.dir.clone());
            }
        }
        let tested: Vec<String> = packages
            .iter()
            .filter(|p| p.tested)
            .map(|p| p.import_path.clone())
            .collect();
        let binaries = self.binaries(context, &tested, split)?;
        let listings = in_parallel(&tested, self.workers(), |package| {
            let binary = binaries.get(package).ok_or_else(|| RunnerError::Output {
                what: "go test -c".to_owned(),
                message: format!("no test binary was built for `{package}`"),
            })?;
            let mut argv = vec![binary.path.to_string_lossy().into_owned()];
            argv.extend(split.binary.iter().cloned());
            argv.push("-test.list=.".to_owned());
            let dir = binary.dir.to_string_lossy().into_owned();
            let env = [("PWD".to_owned(), dir)];
            context.probe_in("go-test-list", argv, &binary.dir, &env)
        });
        let mut tests = Vec::new();
        for (package, output) in tested.iter().zip(listings) {
            tests.extend(binary_listing(package, &output?));
        }
        Ok(tests)
    }

    /// The tests of `packages` (import paths or patterns, `./...` for every package), as
    /// [`Adapter::list`] lists them: through the test binaries, or `go test -json -list .`
    /// with `-exec` in the prefix. The merge lane lists the merge base's packages it asks
    /// about this way, so that only their test binaries are built there.
    pub fn list_packages(
        &self,
        context: &Context<'_>,
        packages: &[String],
    ) -> Result<Vec<ListedTest>, RunnerError> {
        let split = split_prefix(&self.prefix);
        if !split.exec {
            return self.list_through_binaries(context, &split, packages);
        }
        let mut argv = self.prefix.clone();
        argv.extend(strings(&["-json", "-list", "."]));
        argv.extend(packages.iter().cloned());
        let output = context.probe("go-list", argv, &[])?;
        parse_listing(&output)
    }

    /// A batch's report: its processes' outputs written one after another to `report`,
    /// run with `seed`.
    fn batch_report(
        &self,
        context: &Context<'_>,
        report: PathBuf,
        seed: u64,
        invocations: Vec<InvocationRecord>,
    ) -> Result<RunReport, RunnerError> {
        let run = RunReport {
            runner: RunnerKind::Go,
            report,
            format: Some(Format::GoTestJson),
            seed: Some(Seed {
                value: seed,
                argument: format!("-shuffle={seed}"),
                controls: SEED_CONTROLS,
            }),
            workers: self.workers(),
            invocations,
            warnings: Vec::new(),
        };
        context.check_frames(&run)?;
        Ok(run)
    }

    /// A batch through the built binaries: per package, its top-level tests in one
    /// process (`-test.run '^(?:A|B)$'`, its own names only, so no untouched test of
    /// another package's name is selected), its subtests one process per parent; each
    /// binary through `go tool test2json -p PKG -t` in the package's folder, as `go test
    /// -json` runs it; up to [`GoTest::workers`] processes at once, the report in the
    /// batch's order.
    fn run_batch_binaries(
        &self,
        context: &Context<'_>,
        test_ids: &[String],
        seed: u64,
        split: &SplitPrefix,
    ) -> Result<RunReport, RunnerError> {
        let runs = direct_runs(test_ids)?;
        let mut packages: Vec<String> = Vec::new();
        for (package, _) in &runs {
            if !packages.contains(package) {
                packages.push(package.clone());
            }
        }
        let binaries = self.binaries(context, &packages, split)?;
        let test2json = self.test2json(context, split)?;
        let results: Vec<Result<(PathBuf, InvocationRecord), RunnerError>> =
            in_parallel(&runs, self.workers(), |(package, pattern)| {
                let binary = binaries.get(package).ok_or_else(|| RunnerError::Output {
                    what: "go test -c".to_owned(),
                    message: format!("no test binary was built for `{package}`"),
                })?;
                let part = context.scratch_path("go-test.jsonl");
                let mut argv = vec![test2json.clone()];
                argv.push("-p".to_owned());
                argv.push(package.clone());
                argv.push("-t".to_owned());
                argv.push(binary.path.to_string_lossy().into_owned());
                argv.extend(split.binary.iter().cloned());
                argv.extend(strings(&["-test.v=true", "-test.count=1"]));
                argv.push(format!("-test.shuffle={seed}"));
                argv.push(format!("-test.run={pattern}"));
                let dir = binary.dir.to_string_lossy().into_owned();
                let mut invocation = context
                    .invocation("go-test", argv)
                    .stdout_to(&part)
                    .env("PWD", &dir);
                invocation.cwd.clone_from(&binary.dir);
                let record = context.run(invocation)?;
                context.check_ran(RunnerKind::Go, &record, &part)?;
                Ok((part, record))
            });
        let report = context.scratch_path("go-test-batch.jsonl");
        let mut out = std::io::BufWriter::new(fs_err::File::create(&report)?);
        let mut invocations = Vec::new();
        for result in results {
            let (part, record) = result?;
            out.write_all(&fs_err::read(&part)?)?;
            invocations.push(record);
        }
        out.flush()?;
        self.batch_report(context, report, seed, invocations)
    }

    /// A batch through `go test` itself rather than kept binaries: every top-level test
    /// in one `go test -json -count=1 -shuffle=N -run '^(?:A|B)$' PKG…` (each name
    /// escaped; go builds and runs the packages `-p` at a time), a package whose process
    /// also ran a test of another package's name run again alone with its own; subtests
    /// one invocation per parent. The report is their outputs, one after another. What a
    /// batch run once wants (the base version's, issue #14): no binary is kept, so each
    /// package is linked once, by one go process, not one `go test -c` each.
    pub fn run_batch_through_go(
        &self,
        context: &Context<'_>,
        test_ids: &[String],
        options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        let seed = options.seed();
        fs_err::create_dir_all(&context.scratch)?;
        let report = context.scratch_path("go-test-batch.jsonl");
        let mut out = std::io::BufWriter::new(fs_err::File::create(&report)?);
        let mut invocations = Vec::new();
        for plan in Self::batch_plans(test_ids, seed)? {
            let (part, record) = self.run_part(context, &plan, &plan.packages)?;
            invocations.push(record);
            let text = String::from_utf8_lossy(&fs_err::read(&part)?).into_owned();
            let again = if plan.own.is_empty() {
                BTreeSet::new()
            } else {
                overselected(&text, &plan.own)
            };
            out.write_all(without_packages(&text, &again).as_bytes())?;
            for package in again {
                let names: Vec<&String> = plan.own.get(&package).into_iter().flatten().collect();
                let escaped: Vec<String> = names.iter().map(|n| regex::escape(n)).collect();
                let alone = BatchPlan {
                    pattern: format!("^(?:{})$", escaped.join("|")),
                    packages: vec![package.clone()],
                    own: BTreeMap::new(),
                    seed,
                };
                let (part, record) = self.run_part(context, &alone, &alone.packages)?;
                invocations.push(record);
                out.write_all(&fs_err::read(&part)?)?;
            }
        }
        out.flush()?;
        self.batch_report(context, report, seed, invocations)
    }

    fn run(&self, context: &Context<'_>, plan: &Plan) -> Result<RunReport, RunnerError> {
        let report = context.scratch_path("go-test.jsonl");
        let argv = self.argv(plan, true);
        let invocation = context.invocation("go-test", argv).stdout_to(&report);
        let record = context.run(invocation)?;
        context.check_ran(RunnerKind::Go, &record, &report)?;
        let run = RunReport {
            runner: RunnerKind::Go,
            report,
            format: Some(Format::GoTestJson),
            seed: plan.shuffle.map(|value| Seed {
                value,
                argument: format!("-shuffle={value}"),
                controls: SEED_CONTROLS,
            }),
            workers: self.workers(),
            invocations: vec![record],
            warnings: Vec::new(),
        };
        context.check_frames(&run)?;
        Ok(run)
    }

    fn argv(&self, plan: &Plan, json: bool) -> Vec<String> {
        let mut argv = self.prefix.clone();
        if json {
            argv.push("-json".to_owned());
        }
        argv.push(format!("-count={}", plan.count));
        argv.push(match plan.shuffle {
            Some(value) => format!("-shuffle={value}"),
            None => "-shuffle=off".to_owned(),
        });
        match &plan.selection {
            Some((pattern, package)) => {
                argv.push("-run".to_owned());
                argv.push(pattern.clone());
                argv.push(package.clone());
            }
            None => argv.push(ALL_PACKAGES.to_owned()),
        }
        argv
    }

    fn repeated_plan(test_id: &str, count: u32, options: RunOptions) -> Result<Plan, RunnerError> {
        let (package, test) = split_id(test_id)?;
        Ok(Plan {
            selection: Some((run_pattern(test), package.to_owned())),
            count: count.max(1),
            shuffle: Some(options.seed()),
        })
    }

    /// The plan of an ordered run: every test in one package, selected by its top-level
    /// name.
    fn ordered_plan(test_ids: &[String], arrangement: Arrangement) -> Result<Plan, RunnerError> {
        let mut package = None;
        let mut names: Vec<&str> = Vec::new();
        for test_id in test_ids {
            let (in_package, test) = split_id(test_id)?;
            if !test_id.contains("::") || package.is_some_and(|p| p != in_package) {
                return Err(RunnerError::NotATestId {
                    id: test_id.clone(),
                    kind: RunnerKind::Go,
                    reason: "the tests of one ordered run must name one package (`pkg::TestName`)"
                        .to_owned(),
                });
            }
            package = Some(in_package);
            let top = test.split('/').next().unwrap_or(test);
            if !names.contains(&top) {
                names.push(top);
            }
        }
        let Some(package) = package else {
            return Err(RunnerError::NotATestId {
                id: String::new(),
                kind: RunnerKind::Go,
                reason: "an ordered run needs at least one test".to_owned(),
            });
        };
        let alternatives: Vec<String> = names.iter().map(|name| regex::escape(name)).collect();
        Ok(Plan {
            selection: Some((
                format!("^({})$", alternatives.join("|")),
                package.to_owned(),
            )),
            count: 1,
            shuffle: match arrangement {
                Arrangement::AsGiven => None,
                Arrangement::Shuffled(seed) => Some(seed),
            },
        })
    }

    /// The `go test` invocations of a batch: one for every top-level test of every
    /// package (`-run '^(?:A|B)$' PKG…`), and one per parent of subtests
    /// (`-run '^P$/^(?:a|b)$' PKG`), as go's `-run` matches each level of a test path
    /// apart: subtests of different parents in one pattern would select their cousins.
    fn batch_plans(test_ids: &[String], seed: u64) -> Result<Vec<BatchPlan>, RunnerError> {
        let BatchGroups { top, nested } = BatchGroups::of(test_ids)?;
        let mut plans = Vec::new();
        if !top.is_empty() {
            let mut names: Vec<&String> = Vec::new();
            for (_, own) in &top {
                for name in own {
                    if !names.contains(&name) {
                        names.push(name);
                    }
                }
            }
            plans.push(BatchPlan {
                pattern: alternation(&names),
                packages: top.iter().map(|(p, _)| p.clone()).collect(),
                own: top.iter().cloned().collect(),
                seed,
            });
        }
        for ((package, parent), names) in nested {
            let names: Vec<&String> = names.iter().collect();
            plans.push(BatchPlan {
                pattern: format!("{}/{}", run_pattern(&parent), alternation(&names)),
                packages: vec![package],
                own: BTreeMap::new(),
                seed,
            });
        }
        Ok(plans)
    }

    /// Runs one batch invocation; its stdout (the report part) and its record.
    fn run_part(
        &self,
        context: &Context<'_>,
        plan: &BatchPlan,
        packages: &[String],
    ) -> Result<(std::path::PathBuf, InvocationRecord), RunnerError> {
        let part = context.scratch_path("go-test.jsonl");
        let mut argv = self.prefix.clone();
        argv.push("-json".to_owned());
        argv.push("-count=1".to_owned());
        argv.push(format!("-shuffle={}", plan.seed));
        argv.push("-run".to_owned());
        argv.push(plan.pattern.clone());
        argv.extend(packages.iter().cloned());
        let invocation = context.invocation("go-test", argv).stdout_to(&part);
        let record = context.run(invocation)?;
        context.check_ran(RunnerKind::Go, &record, &part)?;
        Ok((part, record))
    }

    /// `-p` from the prefix (packages tested at once), else `GOMAXPROCS`, else the
    /// machine's parallelism, which is go's default for `-p`. Tests inside one package
    /// that call t.Parallel are bounded by `-parallel`, which defaults to the same.
    fn workers(&self) -> Option<u32> {
        option_value(&self.prefix, &["-p"], false)
            .map(str::to_owned)
            .or_else(|| std::env::var(crate::env_vars::EnvVars::GOMAXPROCS).ok())
            .and_then(|value| value.parse().ok())
            .or_else(available_parallelism)
    }
}

/// A batch's processes when each package's test binary runs alone: per package its
/// top-level tests in one `-test.run` alternation, then per parent its subtests
/// (`^P$/^(?:a|b)$`), packages in the order first named, each name escaped.
fn direct_runs(test_ids: &[String]) -> Result<Vec<(String, String)>, RunnerError> {
    let BatchGroups { top, nested } = BatchGroups::of(test_ids)?;
    let mut runs: Vec<(String, String)> = top
        .iter()
        .map(|(package, names)| (package.clone(), alternation(names)))
        .collect();
    for ((package, parent), names) in &nested {
        runs.push((
            package.clone(),
            format!("{}/{}", run_pattern(parent), alternation(names)),
        ));
    }
    Ok(runs)
}

/// A batch's ids split as go's `-run` needs them: top-level tests by package, subtests
/// by package and parent (go matches each level of a pattern apart, so subtests of
/// different parents in one pattern would select their cousins); groups and names in
/// the order first named, each name once.
struct BatchGroups {
    top: Vec<(String, Vec<String>)>,
    nested: Vec<((String, String), Vec<String>)>,
}

impl BatchGroups {
    fn of(test_ids: &[String]) -> Result<Self, RunnerError> {
        let mut groups = BatchGroups {
            top: Vec::new(),
            nested: Vec::new(),
        };
        for test_id in test_ids {
            let (package, test) = split_id(test_id)?;
            if !test_id.contains("::") {
                return Err(RunnerError::NotATestId {
                    id: test_id.clone(),
                    kind: RunnerKind::Go,
                    reason: "a batched test must name its package (`pkg::TestName`)".to_owned(),
                });
            }
            match test.rsplit_once('/') {
                Some((parent, name)) => add_to_group(
                    &mut groups.nested,
                    (package.to_owned(), parent.to_owned()),
                    name,
                ),
                None => add_to_group(&mut groups.top, package.to_owned(), test),
            }
        }
        Ok(groups)
    }
}

/// `^(?:A|B)$` of `names`, each escaped: exactly those names at one level of a `-run`
/// pattern.
fn alternation<S: AsRef<str>>(names: &[S]) -> String {
    let escaped: Vec<String> = names.iter().map(|n| regex::escape(n.as_ref())).collect();
    format!("^(?:{})$", escaped.join("|"))
}

/// Adds `name` to the group `key`, once, groups and names in the order first seen.
fn add_to_group<K: PartialEq>(groups: &mut Vec<(K, Vec<String>)>, key: K, name: &str) {
    match groups.iter_mut().find(|(k, _)| *k == key) {
        Some((_, names)) => {
            if !names.iter().any(|n| n == name) {
                names.push(name.to_owned());
            }
        }
        None => groups.push((key, vec![name.to_owned()])),
    }
}

/// One `go test` invocation of a batch.
struct BatchPlan {
    /// `-run`.
    pattern: String,
    /// The packages, in the order first named.
    packages: Vec<String>,
    /// For the top-level invocation, each package's own top-level tests: a package whose
    /// run holds another (an untouched test named like a touched test of another
    /// package) is run again with its own names alone. Empty for a subtest invocation.
    own: BTreeMap<String, Vec<String>>,
    /// `-shuffle`.
    seed: u64,
}

/// The packages of a top-level batch run whose report shows a top-level test that is not
/// one of the package's own: the shared pattern selected it, and it ran in the process
/// of the package's touched tests.
fn overselected(report: &str, own: &BTreeMap<String, Vec<String>>) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in report.lines() {
        let Ok(event) = serde_json::from_str::<gotest::EventName>(line) else {
            continue;
        };
        let Some(test) = event.test else { continue };
        if event.action != "run" || test.contains('/') {
            continue;
        }
        let mine = own
            .get(&event.package)
            .is_some_and(|names| names.contains(&test));
        if !mine {
            found.insert(event.package);
        }
    }
    found
}

/// `report`'s lines, without the JSON events of `packages`.
fn without_packages(report: &str, packages: &BTreeSet<String>) -> String {
    #[derive(serde::Deserialize)]
    struct Event {
        #[serde(rename = "Package", default)]
        package: String,
    }
    let mut kept = String::with_capacity(report.len());
    for line in report.lines() {
        let dropped = serde_json::from_str::<Event>(line)
            .is_ok_and(|event| packages.contains(&event.package));
        if !dropped {
            kept.push_str(line);
            kept.push('\n');
        }
    }
    kept
}

impl Adapter for GoTest {
    fn kind(&self) -> RunnerKind {
        RunnerKind::Go
    }

    fn seed_support(&self) -> SeedSupport {
        SeedSupport::Controls(SEED_CONTROLS)
    }

    fn run_suite(
        &self,
        context: &Context<'_>,
        options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        let plan = Plan {
            selection: None,
            count: 1,
            shuffle: Some(options.seed()),
        };
        self.run(context, &plan)
    }

    fn run_one(
        &self,
        context: &Context<'_>,
        test_id: &str,
        options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        let (package, test) = split_id(test_id)?;
        let plan = Plan {
            selection: Some((run_pattern(test), package.to_owned())),
            count: 1,
            shuffle: Some(options.seed()),
        };
        self.run(context, &plan)
    }

    fn list(&self, context: &Context<'_>) -> Result<Vec<ListedTest>, RunnerError> {
        self.list_packages(context, &[ALL_PACKAGES.to_owned()])
    }

    fn order_support(&self) -> OrderSupport {
        OrderSupport {
            given: GivenOrder::Fixed(SOURCE_ORDER),
            shuffles: true,
            repeats: true,
            seed_reseeds_tests: false,
            // go's seed only orders tests: there is no reseeding to turn off.
            unseeded: false,
        }
    }

    fn process_scope<'t>(&self, test_id: &'t str) -> Option<&'t str> {
        // Each package's tests run in their own test binary.
        test_id.split_once("::").map(|(package, _)| package)
    }

    /// `-run '^(A|B)$'` selects top-level tests, and a subtest runs only inside its
    /// parent: an ordered run naming `TestA/sub` runs the whole of `TestA`.
    fn selection_unit(&self, test_id: &str) -> String {
        match test_id.split_once("::") {
            Some((package, test)) => match test.split_once('/') {
                Some((top, _)) => format!("{package}::{top}"),
                None => test_id.to_owned(),
            },
            None => test_id.to_owned(),
        }
    }

    fn batches(&self) -> bool {
        true
    }

    fn batch_ordering(&self) -> BatchOrdering {
        BatchOrdering::Fixed(BATCH_ORDER)
    }

    /// Through the test binaries, each package's built once for every round
    /// ([`GoTest::run_batch_binaries`]); through `go test` itself when the prefix has
    /// `-exec`, whose program must run them ([`GoTest::run_batch_through_go`]).
    fn run_batch(
        &self,
        context: &Context<'_>,
        test_ids: &[String],
        options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        let split = split_prefix(&self.prefix);
        if split.exec {
            return self.run_batch_through_go(context, test_ids, options);
        }
        fs_err::create_dir_all(&context.scratch)?;
        self.run_batch_binaries(context, test_ids, options.seed(), &split)
    }

    fn run_ordered(
        &self,
        context: &Context<'_>,
        test_ids: &[String],
        arrangement: Arrangement,
        _options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        self.run(context, &Self::ordered_plan(test_ids, arrangement)?)
    }

    fn ordered_command(
        &self,
        test_ids: &[String],
        arrangement: Arrangement,
        _options: RunOptions,
    ) -> Result<Vec<String>, RunnerError> {
        Ok(self.argv(&Self::ordered_plan(test_ids, arrangement)?, false))
    }

    fn run_repeated(
        &self,
        context: &Context<'_>,
        test_id: &str,
        count: u32,
        options: RunOptions,
    ) -> Result<RunReport, RunnerError> {
        self.run(context, &Self::repeated_plan(test_id, count, options)?)
    }

    fn repeated_command(
        &self,
        test_id: &str,
        count: u32,
        options: RunOptions,
    ) -> Result<Vec<String>, RunnerError> {
        Ok(self.argv(&Self::repeated_plan(test_id, count, options)?, false))
    }
}

/// `pkg/path::TestName/sub` into the package and the test path; an id without `::` is a
/// test looked for in every package.
fn split_id(test_id: &str) -> Result<(&str, &str), RunnerError> {
    let not_an_id = |reason: &str| RunnerError::NotATestId {
        id: test_id.to_owned(),
        kind: RunnerKind::Go,
        reason: reason.to_owned(),
    };
    let (package, test) = test_id.split_once("::").unwrap_or((ALL_PACKAGES, test_id));
    if package.is_empty() || package.starts_with('-') {
        // `go test` would read a leading dash as a flag.
        return Err(not_an_id("the package part is empty or starts with `-`"));
    }
    if test.is_empty() {
        return Err(not_an_id("the test name is empty"));
    }
    Ok((package, test))
}

/// The `-run` pattern that matches exactly one test path: `go test` splits the pattern at
/// unbracketed slashes and matches each level separately, so each level is escaped and
/// anchored on its own (`^TestTable$/^large_case$`).
fn run_pattern(test: &str) -> String {
    test.split('/')
        .map(|level| format!("^{}$", regex::escape(level)))
        .collect::<Vec<_>>()
        .join("/")
}

/// Test names from `go test -json -list .`: output lines of each package that are
/// top-level tests, examples or fuzz targets (benchmarks do not run without `-bench`).
fn parse_listing(output: &str) -> Result<Vec<ListedTest>, RunnerError> {
    #[derive(serde::Deserialize)]
    struct Event {
        #[serde(rename = "Action")]
        action: String,
        #[serde(rename = "Package", default)]
        package: String,
        #[serde(rename = "Output", default)]
        output: String,
    }
    let mut tests = Vec::new();
    for line in output.lines().filter(|line| line.starts_with('{')) {
        let event: Event = serde_json::from_str(line).map_err(|error| RunnerError::Output {
            what: "go test -json -list".to_owned(),
            message: error.to_string(),
        })?;
        let name = event.output.trim();
        if event.action == "output" && runnable(name) {
            tests.push(ListedTest {
                id: ids::go(&event.package, name),
                file: None,
            });
        }
    }
    Ok(tests)
}

/// Test names from a test binary's `-test.list .` (what `go test -list .` prints of it):
/// lines that are top-level tests, examples or fuzz targets, as [`parse_listing`] keeps.
fn binary_listing(package: &str, output: &str) -> Vec<ListedTest> {
    output
        .lines()
        .map(str::trim)
        .filter(|name| runnable(name))
        .map(|name| ListedTest {
            id: ids::go(package, name),
            file: None,
        })
        .collect()
}

/// A listed name that `go test -run` runs: a test, an example or a fuzz target (a
/// benchmark needs `-bench`), one word.
fn runnable(name: &str) -> bool {
    ["Test", "Example", "Fuzz"]
        .iter()
        .any(|prefix| name.starts_with(prefix))
        && !name.contains(char::is_whitespace)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_patterns_anchor_and_escape_each_level() {
        assert_eq!(
            run_pattern("TestTable/large_case"),
            "^TestTable$/^large_case$"
        );
        assert_eq!(run_pattern("TestX/a.b(c)"), r"^TestX$/^a\.b\(c\)$");
        assert_eq!(
            run_pattern("Test$(touch pwned)"),
            r"^Test\$\(touch pwned\)$"
        );
    }

    /// #15 item 1: one pattern for every package's top-level tests, each name escaped;
    /// subtests one pattern per parent, so no cousin is selected.
    #[test]
    fn batch_plans_escape_every_name_and_group_subtests_by_parent() {
        let ids: Vec<String> = [
            "m/a::TestOne",
            "m/b::TestTwo",
            "m/a::TestTable/x.y(1)",
            "m/a::TestTable/ünï+",
            "m/a::TestOther/x.y(1)",
            "m/b::TestOne",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        let plans = GoTest::batch_plans(&ids, 7).unwrap_or_default();
        let patterns: Vec<(&str, Vec<&str>)> = plans
            .iter()
            .map(|p| {
                (
                    p.pattern.as_str(),
                    p.packages.iter().map(String::as_str).collect(),
                )
            })
            .collect();
        assert_eq!(
            patterns,
            [
                ("^(?:TestOne|TestTwo)$", vec!["m/a", "m/b"]),
                (r"^TestTable$/^(?:x\.y\(1\)|ünï\+)$", vec!["m/a"]),
                (r"^TestOther$/^(?:x\.y\(1\))$", vec!["m/a"]),
            ]
        );
        assert_eq!(
            plans[0].own.get("m/b").cloned().unwrap_or_default(),
            ["TestTwo", "TestOne"]
        );
        assert!(GoTest::batch_plans(&["TestNoPackage".to_owned()], 1).is_err());
        assert!(GoTest::batch_plans(&["-exec=x::TestA".to_owned()], 1).is_err());
    }

    /// #15 item 1: a package whose process ran another package's touched name (an
    /// untouched test of its own) is found, and its events left out of the report.
    #[test]
    fn a_package_that_ran_an_untouched_test_is_run_again_alone() {
        let report = concat!(
            r#"{"Action":"run","Package":"m/a","Test":"TestOne"}"#,
            "\n",
            r#"{"Action":"run","Package":"m/a","Test":"TestOne/sub"}"#,
            "\n",
            r#"{"Action":"run","Package":"m/b","Test":"TestOne"}"#,
            "\n",
            r#"{"Action":"run","Package":"m/b","Test":"TestTwo"}"#,
            "\n",
            "not json\n",
        );
        let own: BTreeMap<String, Vec<String>> = [
            ("m/a".to_owned(), vec!["TestOne".to_owned()]),
            ("m/b".to_owned(), vec!["TestTwo".to_owned()]),
        ]
        .into_iter()
        .collect();
        let again = overselected(report, &own);
        assert_eq!(again.iter().collect::<Vec<_>>(), ["m/b"]);
        let kept = without_packages(report, &again);
        assert!(!kept.contains("m/b") && kept.contains("TestOne/sub") && kept.contains("not json"));
    }

    #[test]
    fn ids_split_at_the_first_double_colon() {
        assert_eq!(
            split_id("example.com/m/pkg::TestA/x::y").ok(),
            Some(("example.com/m/pkg", "TestA/x::y"))
        );
        assert_eq!(split_id("TestA").ok(), Some(("./...", "TestA")));
        assert!(split_id("-exec=evil::TestA").is_err());
        assert!(split_id("pkg::").is_err());
    }

    /// #15 (lane binaries run directly): the prefix's test flags reach the binary as
    /// `-test.NAME` (with their values), its build flags the build; `-json` is candor's;
    /// `-exec` is noticed, as the lane then leaves starting the binary to `go test`.
    #[test]
    fn a_prefix_splits_into_build_flags_and_the_binary_s_flags() {
        let split = split_prefix(&strings(&[
            "go",
            "test",
            "-tags",
            "integration",
            "-v",
            "-parallel",
            "3",
            "-short",
            "-timeout=30s",
            "-json",
            "-race",
        ]));
        assert_eq!(
            split.build,
            strings(&["go", "test", "-tags", "integration", "-race"])
        );
        assert_eq!(
            split.binary,
            strings(&[
                "-test.paniconexit0",
                "-test.timeout=10m0s",
                "-test.v",
                "-test.parallel",
                "3",
                "-test.short",
                "-test.timeout=30s",
            ])
        );
        assert!(!split.exec);
        assert!(split_prefix(&strings(&["go", "test", "-exec", "sudo"])).exec);
    }

    /// #15 (lane binaries run directly): each package's test binary gets its own names
    /// only, escaped, and subtests one pattern per parent.
    #[test]
    fn direct_runs_give_each_package_its_own_names() {
        let ids: Vec<String> = [
            "m/a::TestOne",
            "m/b::TestTwo",
            "m/a::TestTable/x.y(1)",
            "m/a::TestTable/ünï+",
            "m/b::TestOne",
            "m/a::TestÜ",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        let runs = direct_runs(&ids).unwrap_or_default();
        let runs: Vec<(&str, &str)> = runs.iter().map(|(p, r)| (p.as_str(), r.as_str())).collect();
        assert_eq!(
            runs,
            [
                ("m/a", "^(?:TestOne|TestÜ)$"),
                ("m/b", "^(?:TestTwo|TestOne)$"),
                ("m/a", r"^TestTable$/^(?:x\.y\(1\)|ünï\+)$"),
            ]
        );
        assert!(direct_runs(&["TestNoPackage".to_owned()]).is_err());
    }

    /// #15 item 2 (one link per package): `go list` sees the test files `go test` builds
    /// (`-tags` in every spelling), and nothing it does not take.
    #[test]
    fn go_list_gets_the_prefix_s_tags_and_nothing_else() {
        let split = split_prefix(&strings(&[
            "go",
            "test",
            "-tags",
            "integration",
            "-race",
            "-vet=off",
            "-mod=vendor",
            "-cover",
            "--tags=a,b",
            "tags",
        ]));
        assert_eq!(
            list_flags(&split.build),
            strings(&["-tags", "integration", "-race", "-mod=vendor", "--tags=a,b"])
        );
    }

    /// #15 item 2: the listing's packages, which have test files, and a line that is not
    /// `go list`'s is an error, never a package without tests.
    #[test]
    fn go_list_lines_give_packages_and_whether_they_have_tests() {
        let output = "m/a\t/r/a\t2\t0\nm/b\t/r/b\t0\t0\nm/c\t/r/c d\t0\t1\n\n";
        let packages = parse_packages(output).unwrap_or_default();
        let seen: Vec<(&str, &str, bool)> = packages
            .iter()
            .map(|p| {
                (
                    p.import_path.as_str(),
                    p.dir.to_str().unwrap_or(""),
                    p.tested,
                )
            })
            .collect();
        assert_eq!(
            seen,
            [
                ("m/a", "/r/a", true),
                ("m/b", "/r/b", false),
                ("m/c", "/r/c d", true)
            ]
        );
        assert!(parse_packages("m/a\t/r/a\n").is_err());
        assert!(parse_packages("m/a\t/r/a\tx\t0\n").is_err());
    }

    /// #15 item 2: a binary's `-test.list .` keeps what `go test -list` would: tests,
    /// examples, fuzz targets, not benchmarks nor a `TestMain`'s stray words.
    #[test]
    fn a_binary_s_listing_keeps_runnable_tests_only() {
        let output = "TestA\nBenchmarkB\nExampleC\nFuzzD\nTesting setup done\nTestÜ_x\n";
        let ids: Vec<String> = binary_listing("m/p", output)
            .into_iter()
            .map(|t| t.id)
            .collect();
        assert_eq!(
            ids,
            ["m/p::TestA", "m/p::ExampleC", "m/p::FuzzD", "m/p::TestÜ_x"]
        );
    }

    #[test]
    fn listing_keeps_runnable_tests_only() {
        let output = concat!(
            r#"{"Action":"output","Package":"m/p","Output":"TestA\n"}"#,
            "\n",
            r#"{"Action":"output","Package":"m/p","Output":"BenchmarkB\n"}"#,
            "\n",
            r#"{"Action":"output","Package":"m/p","Output":"ExampleC\n"}"#,
            "\n",
            r#"{"Action":"output","Package":"m/p","Output":"ok  \tm/p\t0.01s\n"}"#,
            "\n",
            r#"{"Action":"pass","Package":"m/p","Elapsed":0.01}"#,
            "\n",
        );
        let ids: Vec<String> = parse_listing(output)
            .unwrap_or_default()
            .into_iter()
            .map(|t| t.id)
            .collect();
        assert_eq!(ids, vec!["m/p::TestA", "m/p::ExampleC"]);
    }
}
