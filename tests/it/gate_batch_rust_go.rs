//! Batched replays in the merge lane for go and cargo (issue #15 item 1), end to end on
//! real git repositories holding a real go module and a real cargo crate: each round is
//! one `go test` (one `cargo test` per test target), the first round in the runner's own
//! order and recorded as run, the later rounds separated so that every two touched tests
//! of one process run apart once; a test that passes only after another touched test (or
//! an untouched one the shared `-run` pattern selected) is not accepted; a test red only
//! after another is order-dependent and judged alone; a test missing from the batch's
//! report is unaccounted. Every test builds its own repository.

use std::path::Path;

use crate::gate_batch::{
    assert_every_run, assert_red_alone_and_rejected, assert_rejected_for, gate_report, strings,
};
use crate::triage_support;

use triage_support::{Suite, empty, git};

/// Two runner processes at once whatever the machine has, so the rounds side by side are
/// the same everywhere.
const POLICY_TOUCHED: &str = "[lane]\nreplay = \"touched\"\njobs = 2\n";

pub(crate) const GO_BASE_A: &str = "package a\n\nimport \"testing\"\n\nvar baseRan bool\n\nfunc TestBase(t *testing.T) {\n\tbaseRan = true\n}\n";

/// A go module on `main` (packages `a` and `b`, one test each, both named `TestBase`),
/// then a `change` branch writing `files`.
pub(crate) fn go_change(files: &[(&str, &str)]) -> Suite {
    go_change_from(&[], files)
}

/// As [`go_change`], with `more` files on `main` too.
pub(crate) fn go_change_from(more: &[(&str, &str)], files: &[(&str, &str)]) -> Suite {
    go_change_under(POLICY_TOUCHED, more, files)
}

/// As [`go_change_from`], with `policy` as the base's candor.toml.
pub(crate) fn go_change_under(
    policy: &str,
    more: &[(&str, &str)],
    files: &[(&str, &str)],
) -> Suite {
    let suite = empty();
    for (path, text) in more {
        suite.write(path, text);
    }
    suite.write("go.mod", "module example.com/shop\n\ngo 1.19\n");
    suite.write("candor.toml", policy);
    suite.write(
        "a/a.go",
        "package a\n\nfunc Add(x, y int) int { return x + y }\n",
    );
    suite.write("a/a_test.go", GO_BASE_A);
    suite.write(
        "b/b.go",
        "package b\n\nfunc Twice(x int) int { return 2 * x }\n",
    );
    suite.write(
        "b/b_test.go",
        "package b\n\nimport \"testing\"\n\nfunc TestBase(t *testing.T) {\n\tif Twice(2) != 4 {\n\t\tt.Fatal(\"twice\")\n\t}\n}\n",
    );
    commit_change(&suite, files);
    suite
}

fn commit_change(suite: &Suite, files: &[(&str, &str)]) {
    suite.write(".gitignore", "target/\n.candor/\nscore-report.json\n");
    git(&suite.repo, &["init", "--quiet", "-b", "main"]);
    git(&suite.repo, &["add", "-A"]);
    git(&suite.repo, &["commit", "--quiet", "-m", "base"]);
    git(&suite.repo, &["checkout", "--quiet", "-b", "change"]);
    for (path, text) in files {
        suite.write(path, text);
    }
    git(&suite.repo, &["add", "-A"]);
    git(&suite.repo, &["commit", "--quiet", "-m", "the change"]);
}

fn touched(report: &serde_json::Value) -> Vec<String> {
    report["touched"]
        .as_array()
        .expect("touched")
        .iter()
        .map(|t| t["id"].as_str().expect("an id").to_owned())
        .collect()
}

/// The runner processes of each round, as the report counts them.
fn processes_per_round(report: &serde_json::Value) -> Vec<u64> {
    report["batching"]["rounds"]
        .as_array()
        .expect("rounds")
        .iter()
        .map(|round| {
            round["batches"]
                .as_array()
                .expect("batches")
                .iter()
                .map(|batch| batch["processes"].as_u64().expect("processes"))
                .sum()
        })
        .collect()
}

/// The runner logs (`…-NAME.log`) in each round's batch folders, round by round: the
/// processes counted apart from the report.
fn logs_per_round(report: &serde_json::Value, name: &str) -> Vec<u64> {
    report["batching"]["rounds"]
        .as_array()
        .expect("rounds")
        .iter()
        .map(|round| {
            round["batches"]
                .as_array()
                .expect("batches")
                .iter()
                .map(|batch| {
                    let log = Path::new(batch["log"].as_str().expect("a log"));
                    let folder = log.parent().expect("a folder");
                    std::fs::read_dir(folder)
                        .expect("the batch's folder")
                        .filter(|entry| {
                            entry.as_ref().is_ok_and(|e| {
                                e.file_name()
                                    .to_string_lossy()
                                    .ends_with(&format!("-{name}.log"))
                            })
                        })
                        .count() as u64
                })
                .sum()
        })
        .collect()
}

/// The runner logs (`…-NAME.log`) anywhere under the lane runs' folders of the suite.
fn logs_named(suite: &Suite, name: &str) -> usize {
    fn walk(dir: &Path, name: &str) -> usize {
        std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .map(|entry| {
                let path = entry.path();
                if path.is_dir() {
                    walk(&path, name)
                } else {
                    usize::from(
                        entry
                            .file_name()
                            .to_string_lossy()
                            .ends_with(&format!("-{name}.log")),
                    )
                }
            })
            .sum()
    }
    walk(&suite.repo.join(".candor").join("runs"), name)
}

fn orders(report: &serde_json::Value) -> Vec<String> {
    report["batching"]["rounds"]
        .as_array()
        .expect("rounds")
        .iter()
        .map(|r| r["order"].as_str().expect("an order").to_owned())
        .collect()
}

/// #15 item 1: six touched go tests in two packages (a unicode name, a table test whose
/// subtests' names hold regex metacharacters): round 1 runs each package's test binary
/// once for all of its touched tests in go's own order, recorded as run; rounds 2 and 3
/// separate each package's tests (base 2: two parts, each with both packages), never
/// claiming a reversal. Every test replayed three times from the batches' reports, and
/// 10 test-binary processes where alone took 18 `go test`s; both packages' binaries
/// built once, by one `go test -exec KEEPER` (#15, binaries run directly).
#[test]
fn touched_go_tests_replay_in_one_go_test_then_separated_rounds() {
    let a = concat!(
        "package a\n\nimport \"testing\"\n\n",
        "func TestPlain(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"add\")\n\t}\n}\n\n",
        "func TestÜnïcode(t *testing.T) {\n\tif Add(-1, 1) != 0 {\n\t\tt.Fatal(\"zero\")\n\t}\n}\n\n",
        "func TestTable(t *testing.T) {\n",
        "\tfor _, name := range []string{\"x.y(1)\", \"a|b\", \"ünï+\", \"[z]$\"} {\n",
        "\t\tt.Run(name, func(t *testing.T) {\n\t\t\tif Add(len(name), 0) != len(name) {\n\t\t\t\tt.Fatal(name)\n\t\t\t}\n\t\t})\n\t}\n}\n",
    );
    let b = concat!(
        "package b\n\nimport \"testing\"\n\n",
        "func TestPlainB(t *testing.T) {\n\tif Twice(1) != 2 {\n\t\tt.Fatal(\"twice\")\n\t}\n}\n\n",
        "func TestOnlyB(t *testing.T) {\n\tif Twice(0) != 0 {\n\t\tt.Fatal(\"zero\")\n\t}\n}\n\n",
        "func TestAlsoB(t *testing.T) {\n\tif Twice(-1) != -2 {\n\t\tt.Fatal(\"neg\")\n\t}\n}\n",
    );
    let suite = go_change(&[("a/more_test.go", a), ("b/more_test.go", b)]);
    let (ran, report) = gate_report(&suite);
    assert_eq!(ran.exit, 0, "{ran:?}\n{report:#}");
    let touched = touched(&report);
    assert_eq!(touched.len(), 6, "{touched:?}");
    assert!(
        touched
            .iter()
            .any(|t| t == "example.com/shop/a::TestÜnïcode")
    );
    assert_eq!(orders(&report), ["own", "separated", "separated"]);
    assert_eq!(processes_per_round(&report), [2, 4, 4], "{report:#}");
    assert_eq!(logs_per_round(&report, "go-test"), [2, 4, 4], "{report:#}");
    // Built once per package for the whole lane, never per batch, by one go process.
    assert_eq!(logs_named(&suite, "go-test-keep"), 1, "{report:#}");
    assert_eq!(logs_named(&suite, "go-test-c"), 0, "{report:#}");
    let rounds = report["batching"]["rounds"].as_array().expect("rounds");
    // #15: round 1, one process per package, is the round with nothing beside it; the
    // separated rounds' smaller processes run side by side.
    assert_eq!(report["batching"]["solo_round"], 1, "{report:#}");
    let beside: Vec<Vec<bool>> = rounds
        .iter()
        .map(|r| {
            r["batches"]
                .as_array()
                .expect("batches")
                .iter()
                .map(|b| b["beside_others"] == true)
                .collect()
        })
        .collect();
    assert_eq!(
        beside,
        [vec![false], vec![true, true], vec![true, true]],
        "{report:#}"
    );
    let mut first = strings(&rounds[0]["batches"][0]["tests"]);
    first.sort();
    let mut want = touched.clone();
    want.sort();
    assert_eq!(first, want, "round 1 holds every touched test");
    // Each round runs each test once.
    for round in rounds {
        let mut all: Vec<String> = round["batches"]
            .as_array()
            .expect("batches")
            .iter()
            .flat_map(|b| strings(&b["tests"]))
            .collect();
        all.sort();
        assert_eq!(all, want, "{report:#}");
    }
    // The subtests with metacharacters ran, through their top-level test, once each.
    let log = Path::new(rounds[0]["batches"][0]["log"].as_str().expect("a log"));
    let folder = log.parent().expect("a folder");
    let jsonl: String = std::fs::read_dir(folder)
        .expect("folder")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with("go-test.jsonl"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect();
    for sub in [
        "TestTable/x.y(1)",
        "TestTable/a|b",
        "TestTable/ünï+",
        "TestTable/[z]$",
    ] {
        let runs = jsonl
            .matches(&format!(
                "\"Action\":\"run\",\"Package\":\"example.com/shop/a\",\"Test\":\"{sub}\""
            ))
            .count();
        assert_eq!(runs, 1, "{sub}: {jsonl}");
    }
    let runs = report["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 18, "{report:#}");
    for id in &touched {
        let mine: Vec<&serde_json::Value> = runs.iter().filter(|r| r["test"] == *id).collect();
        assert_eq!(mine.len(), 3, "{id}: {report:#}");
        assert!(
            mine.iter()
                .all(|r| r["outcome"] == "pass" && !r["batch"].is_null()),
            "{report:#}"
        );
    }
    assert!(report["unaccounted"].as_array().is_some_and(Vec::is_empty));
    let human = suite.candor(&["gate"], &[]);
    assert!(
        human
            .stdout
            .contains("  batched: 3 round(s) in 10 runner process(es)"),
        "{human:?}"
    );
    assert!(
        human.stdout.contains("order own, separated, separated"),
        "{human:?}"
    );
}

/// #15 item 1, the adversary's diff: `TestReads` passes only after `TestSets` ran in its
/// process. Go runs them in its own order, so no round can reverse them; a separated
/// round runs `TestReads` without `TestSets`, it is red, and red alone: rejected.
#[test]
fn a_go_test_that_passes_only_after_another_touched_test_is_not_accepted() {
    let a = concat!(
        "package a\n\nimport \"testing\"\n\nvar ready bool\n\n",
        "func TestSets(t *testing.T) {\n\tready = true\n}\n\n",
        "func TestReads(t *testing.T) {\n\tif !ready {\n\t\tt.Fatal(\"not ready\")\n\t}\n}\n",
    );
    let suite = go_change(&[("a/more_test.go", a)]);
    let (ran, report) = gate_report(&suite);
    assert_eq!(ran.exit, 1, "{ran:?}\n{report:#}");
    let reads = "example.com/shop/a::TestReads";
    assert_red_alone_and_rejected(&report, reads);
}

/// #15 item 1, the adversary's other diff: the touched `a::TestReads` passes only after
/// the untouched `a::TestBase` ran, and a touched `b::TestBase` puts `TestBase` in the
/// shared `-run` pattern. Package `a`'s process ran a test that is not its own: `a` is
/// run again with its own names alone, `TestReads` is red there, and rejected.
#[test]
fn a_go_test_that_passes_only_after_an_untouched_test_the_pattern_selected_is_not_accepted() {
    let a = "package a\n\nimport \"testing\"\n\nfunc TestReads(t *testing.T) {\n\tif !baseRan {\n\t\tt.Fatal(\"base did not run\")\n\t}\n}\n";
    let b = "package b\n\nimport \"testing\"\n\nfunc TestBase(t *testing.T) {\n\tif Twice(3) != 6 {\n\t\tt.Fatal(\"twice\")\n\t}\n}\n";
    let suite = go_change(&[("a/reads_test.go", a), ("b/b_test.go", b)]);
    let (ran, report) = gate_report(&suite);
    let mut touched = touched(&report);
    touched.sort();
    assert_eq!(
        touched,
        [
            "example.com/shop/a::TestReads",
            "example.com/shop/b::TestBase"
        ],
        "{report:#}"
    );
    assert_eq!(ran.exit, 1, "{ran:?}\n{report:#}");
    let reads = "example.com/shop/a::TestReads";
    assert_every_run(&report, reads, "fail");
    // Round 1: the shared pattern's process, and `a` again alone.
    assert_eq!(processes_per_round(&report)[0], 2, "{report:#}");
    assert_eq!(logs_per_round(&report, "go-test")[0], 2, "{report:#}");
}

/// #15 item 2 for go: `TestFirst` and `TestSecond` each fail after the other ran in
/// their process and pass alone. Whichever go runs second in round 1 is red there:
/// exactly one is order-dependent in its batch, judged by its replays alone, accepted.
#[test]
fn a_go_test_red_only_after_another_in_its_batch_is_order_dependent_and_judged_alone() {
    let a = concat!(
        "package a\n\nimport \"testing\"\n\nvar firstRan, secondRan bool\n\n",
        "func TestFirst(t *testing.T) {\n\tif secondRan {\n\t\tt.Fatal(\"second ran\")\n\t}\n\tfirstRan = true\n}\n\n",
        "func TestSecond(t *testing.T) {\n\tif firstRan {\n\t\tt.Fatal(\"first ran\")\n\t}\n\tsecondRan = true\n}\n",
    );
    let suite = go_change(&[("a/more_test.go", a)]);
    let (ran, report) = gate_report(&suite);
    assert_eq!(ran.exit, 0, "{ran:?}\n{report:#}");
    let dependent = report["batching"]["order_dependent"]
        .as_array()
        .expect("order_dependent");
    assert_eq!(dependent.len(), 1, "{report:#}");
    assert_eq!(dependent[0]["round"], 1, "{report:#}");
    assert_eq!(strings(&dependent[0]["alone"]), ["pass", "pass", "pass"]);
    // The evidence is the order go ran them in: the red one second.
    let order = strings(&dependent[0]["batch_order"]);
    assert_eq!(order.len(), 2, "{order:?}");
    assert_eq!(order[1], dependent[0]["test"].as_str().unwrap_or_default());
}

/// #15 item 1: a test the batch's report lacks while `go test` exits 0 (its `TestMain`
/// runs only one of the package's tests) is unaccounted, in the batch and alone.
#[test]
fn a_go_test_missing_from_the_batch_report_is_unaccounted() {
    let main = concat!(
        "package b\n\nimport (\n\t\"flag\"\n\t\"os\"\n\t\"testing\"\n)\n\n",
        "func TestMain(m *testing.M) {\n\tflag.Parse()\n\t_ = flag.Set(\"test.run\", \"^TestShown$\")\n\tos.Exit(m.Run())\n}\n\n",
        "func TestShown(t *testing.T) {}\n\n",
        "func TestHidden(t *testing.T) {\n\tt.Fatal(\"never runs\")\n}\n",
    );
    let suite = go_change(&[("b/main_test.go", main)]);
    let (ran, report) = gate_report(&suite);
    assert_ne!(ran.exit, 0, "{ran:?}\n{report:#}");
    let hidden = "example.com/shop/b::TestHidden";
    let unaccounted = report["unaccounted"].as_array().expect("unaccounted");
    assert!(
        unaccounted.iter().any(|u| u["test"] == hidden),
        "{report:#}"
    );
    assert!(
        strings(&report["batching"]["replayed_alone"]).contains(&hidden.to_owned()),
        "{report:#}"
    );
}

const CRATE_LIB: &str = "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(super::add(1, 1), 2);\n    }\n}\n";

/// A crate `calc` on `main` (a unit test, an integration test file), then a `change`
/// branch writing `files`.
pub(crate) fn cargo_change(files: &[(&str, &str)]) -> Suite {
    cargo_change_with("cargo", files)
}

/// As [`cargo_change`], with the runner `kind` (cargo or nextest).
fn cargo_change_with(kind: &str, files: &[(&str, &str)]) -> Suite {
    cargo_change_under(
        &format!("[lane]\nreplay = \"touched\"\n\n[runner]\nkind = \"{kind}\"\n"),
        files,
    )
}

/// As [`cargo_change`], with `policy` as the base's candor.toml.
pub(crate) fn cargo_change_under(policy: &str, files: &[(&str, &str)]) -> Suite {
    cargo_change_from(
        policy,
        &[(
            "tests/more.rs",
            "#[test]\nfn base() {\n    assert_eq!(calc::add(2, 2), 4);\n}\n",
        )],
        files,
    )
}

/// The `calc` crate with `policy` as candor.toml and `base` written over it on `main`,
/// then a `change` branch writing `files`.
pub(crate) fn cargo_change_from(
    policy: &str,
    base: &[(&str, &str)],
    files: &[(&str, &str)],
) -> Suite {
    let suite = calc_crate(policy);
    for (path, text) in base {
        suite.write(path, text);
    }
    commit_change(&suite, files);
    suite
}

/// The `calc` crate's manifest, library and `policy` as candor.toml, nothing committed.
fn calc_crate(policy: &str) -> Suite {
    let suite = empty();
    suite.write(
        "Cargo.toml",
        "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\n",
    );
    suite.write("candor.toml", policy);
    suite.write("src/lib.rs", CRATE_LIB);
    suite
}

/// #15 item 1 for cargo: touched tests in two integration test files, one of them in a
/// module (`::` paths): round 1 is one `cargo test` per test target with the names as
/// exact filters, in libtest's own order; rounds 2 and 3 separated within each target;
/// 3 replays each, all from the batches.
#[test]
fn touched_cargo_tests_replay_one_cargo_test_per_target_per_round() {
    let more = concat!(
        "#[test]\nfn base() {\n    assert_eq!(calc::add(2, 2), 4);\n}\n\n",
        "#[test]\nfn more_one() {\n    assert_eq!(calc::add(1, 0), 1);\n}\n\n",
        "mod deeper {\n    #[test]\n    fn adds_negatives() {\n        assert_eq!(calc::add(-1, -1), -2);\n    }\n}\n",
    );
    let other = "#[test]\nfn other_one() {\n    assert_eq!(calc::add(0, 2), 2);\n}\n\n#[test]\nfn other_two() {\n    assert_eq!(calc::add(3, 0), 3);\n}\n";
    let suite = cargo_change(&[("tests/more.rs", more), ("tests/other.rs", other)]);
    let (ran, report) = gate_report(&suite);
    assert_eq!(ran.exit, 0, "{ran:?}\n{report:#}");
    let touched = touched(&report);
    assert_eq!(
        touched,
        [
            "calc::more::base",
            "calc::more::deeper::adds_negatives",
            "calc::more::more_one",
            "calc::other::other_one",
            "calc::other::other_two",
        ],
        "{report:#}"
    );
    assert_eq!(orders(&report), ["own", "separated", "separated"]);
    // Round 1: one process per target. Separated, base 2 in each target: round 2 puts
    // {more 1st, 3rd; other 1st} and {more 2nd; other 2nd} together (2 + 2 processes),
    // round 3 {more 1st, 2nd; other both} and {more 3rd} (2 + 1).
    assert_eq!(processes_per_round(&report), [2, 4, 3], "{report:#}");
    assert_eq!(
        logs_per_round(&report, "cargo-test"),
        [2, 4, 3],
        "{report:#}"
    );
    // #15, binaries run directly: one `cargo test --no-run` for the lane, and every
    // batch process is a test executable cargo named, not cargo.
    assert_eq!(logs_named(&suite, "cargo-build"), 1, "{report:#}");
    for round in report["batching"]["rounds"].as_array().expect("rounds") {
        for batch in round["batches"].as_array().expect("batches") {
            let log = std::fs::read_to_string(batch["log"].as_str().expect("a log"))
                .expect("the batch's log");
            let argv = log
                .lines()
                .find_map(|line| line.strip_prefix("# argv: "))
                .unwrap_or_default();
            assert!(argv.contains("/target/debug/deps/"), "{argv}");
            assert!(!argv.starts_with("[\"cargo\""), "{argv}");
        }
    }
    let runs = report["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 15, "{report:#}");
    assert!(
        runs.iter()
            .all(|r| r["outcome"] == "pass" && !r["batch"].is_null()),
        "{report:#}"
    );
    // Every test ran in round 1's processes, listed in the order they ran.
    let rounds = report["batching"]["rounds"].as_array().expect("rounds");
    let mut first: Vec<String> = rounds[0]["batches"]
        .as_array()
        .expect("batches")
        .iter()
        .flat_map(|b| strings(&b["tests"]))
        .collect();
    first.sort();
    assert_eq!(first, touched);
}

/// #15 item 1, the adversary's diff for cargo: `reads` passes only after `sets` ran in
/// the same test binary. A separated round runs it without `sets`: rejected.
#[test]
fn a_cargo_test_that_passes_only_after_another_touched_test_is_not_accepted() {
    let more = concat!(
        "use std::sync::atomic::{AtomicBool, Ordering};\n\nstatic READY: AtomicBool = AtomicBool::new(false);\n\n",
        "#[test]\nfn base() {\n    assert_eq!(calc::add(2, 2), 4);\n}\n\n",
        "#[test]\nfn a_sets() {\n    READY.store(true, Ordering::SeqCst);\n}\n\n",
        "#[test]\nfn b_reads() {\n    std::thread::yield_now();\n    assert!(READY.load(Ordering::SeqCst));\n}\n",
    );
    let suite = cargo_change(&[("tests/more.rs", more)]);
    let (ran, report) = gate_report(&suite);
    assert_eq!(ran.exit, 1, "{ran:?}\n{report:#}");
    let reads = "calc::more::b_reads";
    assert_rejected_for(&report, reads);
    assert!(
        report["runs"]
            .as_array()
            .expect("runs")
            .iter()
            .filter(|r| r["test"] == reads)
            .all(|r| r["outcome"] == "fail" && r["batch"].is_null()),
        "judged alone, red alone: {report:#}"
    );
}

/// #15 item 1 for nextest: every round is one `cargo nextest run -E …` naming each
/// touched test exactly (a module path among them); nextest starts each in its own
/// process, so the rounds are `isolated`, none claimed reversed.
#[test]
fn touched_nextest_tests_replay_in_one_nextest_run_per_round() {
    let more = concat!(
        "#[test]\nfn base() {\n    assert_eq!(calc::add(2, 2), 4);\n}\n\n",
        "mod deeper {\n    #[test]\n    fn adds_negatives() {\n        assert_eq!(calc::add(-1, -1), -2);\n    }\n}\n",
    );
    let suite = cargo_change_with("nextest", &[("tests/more.rs", more)]);
    let (ran, report) = gate_report(&suite);
    assert_eq!(ran.exit, 0, "{ran:?}\n{report:#}");
    assert_eq!(
        touched(&report),
        ["calc::more::base", "calc::more::deeper::adds_negatives"],
        "{report:#}"
    );
    assert_eq!(orders(&report), ["isolated", "isolated", "isolated"]);
    assert_eq!(processes_per_round(&report), [1, 1, 1], "{report:#}");
    let runs = report["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 6, "{report:#}");
    assert!(
        runs.iter()
            .all(|r| r["outcome"] == "pass" && !r["batch"].is_null()),
        "{report:#}"
    );
}

/// A crate `envy` in a workspace folder (`crates/envy`, so its folder is not the
/// repository's), with a build script that sets `cargo:rustc-env`, authors, a
/// description and a pre-release version; its integration tests check at run time every
/// variable cargo sets for a test binary against the value cargo gave the compiler, and
/// the working folder. `cargo test` passes them; so must the lane's own run.
fn cargo_env_change() -> Suite {
    let suite = empty();
    suite.write(
        "Cargo.toml",
        "[workspace]\nmembers = [\"crates/envy\"]\nresolver = \"2\"\n",
    );
    suite.write(
        "candor.toml",
        "[lane]\nreplay = \"touched\"\n\n[runner]\nkind = \"cargo\"\n",
    );
    suite.write(
        "crates/envy/Cargo.toml",
        concat!(
            "[package]\nname = \"envy\"\nversion = \"1.2.3-beta.1\"\nedition = \"2021\"\n",
            "authors = [\"A <a@example.com>\", \"B\"]\ndescription = \"reads its env\"\n",
            "license = \"MIT\"\nbuild = \"build.rs\"\n",
        ),
    );
    suite.write(
        "crates/envy/build.rs",
        "fn main() {\n    println!(\"cargo:rustc-env=FROM_BUILD=yes\");\n}\n",
    );
    suite.write(
        "crates/envy/src/lib.rs",
        "pub fn one() -> i32 {\n    1\n}\n",
    );
    suite.write(
        "crates/envy/tests/env.rs",
        "#[test]\nfn base() {\n    assert_eq!(envy::one(), 1);\n}\n",
    );
    let checks = concat!(
        "fn same(name: &str, compiled: &str) {\n",
        "    assert_eq!(std::env::var(name).as_deref(), Ok(compiled), \"{name}\");\n}\n\n",
        "#[test]\nfn package_variables() {\n",
        "    same(\"CARGO_MANIFEST_DIR\", env!(\"CARGO_MANIFEST_DIR\"));\n",
        "    same(\"CARGO_MANIFEST_PATH\", env!(\"CARGO_MANIFEST_PATH\"));\n",
        "    same(\"CARGO_PKG_NAME\", env!(\"CARGO_PKG_NAME\"));\n",
        "    same(\"CARGO_PKG_VERSION\", env!(\"CARGO_PKG_VERSION\"));\n",
        "    same(\"CARGO_PKG_VERSION_MAJOR\", env!(\"CARGO_PKG_VERSION_MAJOR\"));\n",
        "    same(\"CARGO_PKG_VERSION_MINOR\", env!(\"CARGO_PKG_VERSION_MINOR\"));\n",
        "    same(\"CARGO_PKG_VERSION_PATCH\", env!(\"CARGO_PKG_VERSION_PATCH\"));\n",
        "    same(\"CARGO_PKG_VERSION_PRE\", env!(\"CARGO_PKG_VERSION_PRE\"));\n",
        "    same(\"CARGO_PKG_AUTHORS\", env!(\"CARGO_PKG_AUTHORS\"));\n",
        "    same(\"CARGO_PKG_DESCRIPTION\", env!(\"CARGO_PKG_DESCRIPTION\"));\n",
        "    same(\"CARGO_PKG_LICENSE\", env!(\"CARGO_PKG_LICENSE\"));\n",
        "    same(\"CARGO_PKG_HOMEPAGE\", env!(\"CARGO_PKG_HOMEPAGE\"));\n",
        "    same(\"CARGO_PKG_REPOSITORY\", env!(\"CARGO_PKG_REPOSITORY\"));\n",
        "    same(\"CARGO_PKG_RUST_VERSION\", env!(\"CARGO_PKG_RUST_VERSION\"));\n}\n\n",
        "#[test]\nfn build_variables_folder_and_libraries() {\n",
        "    same(\"CARGO\", env!(\"CARGO\"));\n",
        "    same(\"OUT_DIR\", env!(\"OUT_DIR\"));\n",
        "    same(\"FROM_BUILD\", env!(\"FROM_BUILD\"));\n",
        "    assert_eq!(std::env::current_dir().ok(), Some(std::path::PathBuf::from(env!(\"CARGO_MANIFEST_DIR\"))));\n",
        "    let exe = std::env::current_exe().expect(\"exe\");\n",
        "    let deps = exe.parent().expect(\"deps\").to_path_buf();\n",
        "    let path = std::env::var_os(\"LD_LIBRARY_PATH\").expect(\"a library path\");\n",
        "    let folders: Vec<_> = std::env::split_paths(&path).collect();\n",
        "    assert!(folders.contains(&deps), \"{folders:?}\");\n",
        "    assert!(folders.contains(&deps.parent().expect(\"profile\").to_path_buf()), \"{folders:?}\");\n}\n",
    );
    suite.write(".gitignore", "target/\n.candor/\nscore-report.json\n");
    git(&suite.repo, &["init", "--quiet", "-b", "main"]);
    git(&suite.repo, &["add", "-A"]);
    git(&suite.repo, &["commit", "--quiet", "-m", "base"]);
    git(&suite.repo, &["checkout", "--quiet", "-b", "change"]);
    suite.write("crates/envy/tests/checks.rs", checks);
    git(&suite.repo, &["add", "-A"]);
    git(&suite.repo, &["commit", "--quiet", "-m", "the change"]);
    suite
}

/// #15 (lane binaries run directly): a test that reads a variable cargo sets for a test
/// binary sees in the lane the value it sees under `cargo test`, in the package's folder
/// (a workspace member's, not the repository's), with the build script's `OUT_DIR` and
/// `cargo:rustc-env`, `CARGO`, and cargo's library folders on the dynamic library path.
#[test]
fn a_cargo_test_binary_run_by_the_lane_sees_what_cargo_test_gives_it() {
    let suite = cargo_env_change();
    // The checks hold under cargo itself: they compare what cargo gave the compiler.
    let plain = std::process::Command::new("cargo")
        .args(["test", "-q", "--test", "checks"])
        .current_dir(&suite.repo)
        .output()
        .expect("cargo test");
    assert!(
        plain.status.success(),
        "{}",
        String::from_utf8_lossy(&plain.stderr)
    );
    let (ran, report) = gate_report(&suite);
    assert_eq!(ran.exit, 0, "{ran:?}\n{report:#}");
    assert_eq!(
        touched(&report),
        [
            "envy::checks::build_variables_folder_and_libraries",
            "envy::checks::package_variables",
        ],
        "{report:#}"
    );
    let runs = report["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 6, "{report:#}");
    assert!(
        runs.iter()
            .all(|r| r["outcome"] == "pass" && !r["batch"].is_null()),
        "{report:#}"
    );
    assert_eq!(logs_named(&suite, "cargo-build"), 1, "{report:#}");
    // Round 1 one process; separated in base 2: one part, then two.
    assert_eq!(logs_named(&suite, "cargo-test"), 4, "{report:#}");
}

/// #15 (lane binaries run directly), the adversary's setting: the developer's target
/// folder holds a green test binary of the same name, built from the base, and the
/// change makes that test fail. The lane builds the change's code itself and runs what
/// cargo names: the very file the old binary was is rebuilt, and the test is red.
#[test]
fn a_failing_cargo_test_fails_in_the_lane_though_an_old_green_binary_of_its_name_exists() {
    let suite = calc_crate("[lane]\nreplay = \"touched\"\n\n[runner]\nkind = \"cargo\"\n");
    let green = "#[test]\nfn flips() {\n    assert_eq!(calc::add(1, 1), 2);\n}\n\n#[test]\nfn stays() {\n    assert_eq!(calc::add(0, 0), 0);\n}\n";
    suite.write("tests/flip.rs", green);
    suite.write(".gitignore", "target/\n.candor/\nscore-report.json\n");
    git(&suite.repo, &["init", "--quiet", "-b", "main"]);
    git(&suite.repo, &["add", "-A"]);
    git(&suite.repo, &["commit", "--quiet", "-m", "base"]);
    // In the environment candor gets (`Suite::candor`), so that cargo names the same
    // file: a profile variable of this test's own environment would change its hash.
    let mut no_run = std::process::Command::new("cargo");
    no_run
        .args([
            "test",
            "--no-run",
            "--message-format",
            "json",
            "--test",
            "flip",
        ])
        .current_dir(&suite.repo)
        .env_clear();
    for name in [
        "PATH",
        "HOME",
        "CARGO_HOME",
        "RUSTUP_HOME",
        "RUSTUP_TOOLCHAIN",
    ] {
        if let Some(value) = std::env::var_os(name) {
            no_run.env(name, value);
        }
    }
    let built = no_run.output().expect("cargo test --no-run");
    assert!(built.status.success(), "{built:?}");
    let old = String::from_utf8_lossy(&built.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .find(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "flip")
        .and_then(|m| m["executable"].as_str().map(str::to_owned))
        .expect("the old binary");
    let old_ran = std::process::Command::new(&old)
        .output()
        .expect("old binary");
    assert!(
        old_ran.status.success(),
        "the old binary is green: {old_ran:?}"
    );
    git(&suite.repo, &["checkout", "--quiet", "-b", "change"]);
    let red = green.replace("add(1, 1), 2", "add(1, 1), 3");
    suite.write("tests/flip.rs", &red);
    git(&suite.repo, &["add", "-A"]);
    git(&suite.repo, &["commit", "--quiet", "-m", "the change"]);
    let (ran, report) = gate_report(&suite);
    assert_eq!(ran.exit, 1, "{ran:?}\n{report:#}");
    let flips = "calc::flip::flips";
    let runs = report["runs"].as_array().expect("runs");
    // Red in its batch (the lane's own binary), so replayed alone, red there too.
    assert_red_alone_and_rejected(&report, flips);
    assert!(
        runs.iter()
            .filter(|r| r["test"] == flips)
            .all(|r| r["outcome"] == "fail"),
        "{report:#}"
    );
    // The lane ran the file of the old binary's name, rebuilt.
    let first = report["batching"]["rounds"][0]["batches"][0]["log"]
        .as_str()
        .expect("a log");
    let log = std::fs::read_to_string(first).expect("the log");
    assert!(log.contains(&old), "{old}\n{log}");
}

/// #15 (lane binaries run directly) for go: each lane builds its own test binaries into
/// its own folder, so a second lane on an amended change whose test now fails runs the
/// new code, not the first lane's green binary; and the binary runs in its package's
/// folder with `PWD` set to it, as `go test` runs it.
#[test]
fn a_go_lane_builds_its_own_binaries_and_runs_them_in_the_package_folder() {
    let a = concat!(
        "package a\n\nimport (\n\t\"os\"\n\t\"path/filepath\"\n\t\"testing\"\n)\n\n",
        "func TestInItsFolder(t *testing.T) {\n\twd, _ := os.Getwd()\n",
        "\tif filepath.Base(wd) != \"a\" || os.Getenv(\"PWD\") != wd {\n\t\tt.Fatal(wd, os.Getenv(\"PWD\"))\n\t}\n}\n\n",
        "func TestAdds(t *testing.T) {\n\tif Add(1, 1) != 2 {\n\t\tt.Fatal(\"add\")\n\t}\n}\n",
    );
    let suite = go_change(&[("a/more_test.go", a)]);
    let (ran, report) = gate_report(&suite);
    assert_eq!(ran.exit, 0, "{ran:?}\n{report:#}");
    assert!(
        report["runs"]
            .as_array()
            .expect("runs")
            .iter()
            .all(|r| r["outcome"] == "pass" && !r["batch"].is_null()),
        "{report:#}"
    );
    suite.write(
        "a/more_test.go",
        &a.replace("Add(1, 1) != 2", "Add(1, 1) != 3"),
    );
    git(&suite.repo, &["commit", "--quiet", "-am", "amended"]);
    let (ran, report) = gate_report(&suite);
    assert_eq!(ran.exit, 1, "{ran:?}\n{report:#}");
    let adds = "example.com/shop/a::TestAdds";
    assert_every_run(&report, adds, "fail");
    // #15 item 2: each lane links each package's test binary once, in its listing
    // (packages `a` and `b`, by one `go test -exec KEEPER`), lists with it, and its
    // batches run it: no `go test -list`.
    assert_eq!(
        logs_named(&suite, "go-test-keep"),
        2,
        "one build of both packages per lane"
    );
    assert_eq!(logs_named(&suite, "go-test-c"), 0);
    assert_eq!(
        logs_named(&suite, "go-test-list"),
        4,
        "one listing per binary"
    );
    assert_eq!(logs_named(&suite, "go-list"), 0, "no `go test -list`");
}

/// #15 item 2 (one link per package): the listing builds each package's test binary and
/// lists with it, so what does not build stops the lane there: exit 2 quoting the
/// compiler (`file:line:`), never a red test; `go vet`'s findings, which fail `go test`,
/// stop it too. A package without test files is no error.
#[test]
fn a_go_build_or_vet_failure_is_exit_2_with_go_s_words() {
    let broken = "package a\n\nimport \"testing\"\n\nfunc TestBroken(t *testing.T) {\n\tvar x int = \"s\"\n\t_ = x\n}\n";
    let suite = go_change(&[
        ("a/broken_test.go", broken),
        ("c/c.go", "package c\n\nconst C = 1\n"),
    ]);
    let ran = suite.candor(&["gate"], &[]);
    assert_eq!(ran.exit, 2, "{ran:?}");
    assert!(
        ran.stderr.contains("the test binaries were not built"),
        "{ran:?}"
    );
    assert!(ran.stderr.contains("broken_test.go:6"), "{ran:?}");
    assert!(
        !ran.stderr.contains("a::TestBroken"),
        "no red test: {ran:?}"
    );

    let vet = "package a\n\nimport (\n\t\"fmt\"\n\t\"testing\"\n)\n\nfunc TestVet(t *testing.T) {\n\t_ = fmt.Sprintf(\"%d\", \"s\")\n}\n";
    let suite = go_change(&[("a/vet_test.go", vet)]);
    let ran = suite.candor(&["gate"], &[]);
    assert_eq!(ran.exit, 2, "{ran:?}");
    assert!(ran.stderr.contains("vet_test.go:9"), "{ran:?}");
    assert!(ran.stderr.contains("Sprintf format %d"), "{ran:?}");

    let fine = "package a\n\nimport \"testing\"\n\nfunc TestFine(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"add\")\n\t}\n}\n";
    let suite = go_change(&[
        ("a/fine_test.go", fine),
        ("c/c.go", "package c\n\nconst C = 1\n"),
    ]);
    let (ran, report) = gate_report(&suite);
    assert_eq!(ran.exit, 0, "{ran:?}\n{report:#}");
    assert_eq!(
        touched(&report),
        ["example.com/shop/a::TestFine"],
        "{report:#}"
    );
    assert_eq!(
        logs_named(&suite, "go-test-keep"),
        1,
        "one build of `a` and `b`, none for `c`: {report:#}"
    );
}

/// #15 item 2 with one package of tests: its binary comes from one `go test -c` (one
/// link either way), and what does not build there stops the lane as in the one-process
/// build of many packages: exit 2 quoting go.
#[test]
fn a_module_with_one_tested_package_builds_it_with_go_test_c() {
    let single = |test: &str| {
        let suite = empty();
        suite.write(
            "go.mod",
            "module example.com/one

go 1.19
",
        );
        suite.write("candor.toml", POLICY_TOUCHED);
        suite.write(
            "a/a.go",
            "package a

func Add(x, y int) int { return x + y }
",
        );
        suite.write(
            "a/a_test.go",
            "package a

import \"testing\"

func TestBase(t *testing.T) {
	if Add(1, 1) != 2 {
		t.Fatal(\"add\")
	}
}
",
        );
        commit_change(&suite, &[("a/more_test.go", test)]);
        suite
    };
    let fine = "package a

import \"testing\"

func TestFine(t *testing.T) {
	if Add(1, 2) != 3 {
		t.Fatal(\"add\")
	}
}
";
    let suite = single(fine);
    let (ran, report) = gate_report(&suite);
    assert_eq!(
        ran.exit, 0,
        "{ran:?}
{report:#}"
    );
    assert_eq!(
        touched(&report),
        ["example.com/one/a::TestFine"],
        "{report:#}"
    );
    assert_eq!(logs_named(&suite, "go-test-c"), 1, "{report:#}");
    assert_eq!(logs_named(&suite, "go-test-keep"), 0, "{report:#}");

    let broken = "package a

import \"testing\"

func TestBroken(t *testing.T) {
	var x int = \"s\"
	_ = x
}
";
    let ran = single(broken).candor(&["gate"], &[]);
    assert_eq!(ran.exit, 2, "{ran:?}");
    assert!(ran.stderr.contains("-c"), "{ran:?}");
    assert!(ran.stderr.contains("more_test.go:6"), "{ran:?}");
}

/// #15 (lane binaries run directly): cargo's `[env]` configuration sets variables for
/// test binaries that candor does not reproduce, so there the batches go through `cargo
/// test` and a test reading such a variable passes in the lane as under `cargo test`.
#[test]
fn with_an_env_table_in_cargo_s_configuration_cargo_runs_the_batches() {
    let more = concat!(
        "#[test]\nfn base() {\n    assert_eq!(calc::add(2, 2), 4);\n}\n\n",
        "#[test]\nfn greets() {\n    assert_eq!(std::env::var(\"GREETING\").as_deref(), Ok(\"hi\"));\n}\n",
    );
    // On the base: a change adding it would be a test-infrastructure edit.
    let suite = calc_crate("[lane]\nreplay = \"touched\"\n\n[runner]\nkind = \"cargo\"\n");
    suite.write(
        "tests/more.rs",
        "#[test]\nfn base() {\n    assert_eq!(calc::add(2, 2), 4);\n}\n",
    );
    suite.write(".cargo/config.toml", "[env]\nGREETING = \"hi\"\n");
    commit_change(&suite, &[("tests/more.rs", more)]);
    let (ran, report) = gate_report(&suite);
    assert_eq!(ran.exit, 0, "{ran:?}\n{report:#}");
    assert!(
        report["runs"]
            .as_array()
            .expect("runs")
            .iter()
            .all(|r| r["outcome"] == "pass" && !r["batch"].is_null()),
        "{report:#}"
    );
    assert_eq!(logs_named(&suite, "cargo-build"), 0, "{report:#}");
    let first = report["batching"]["rounds"][0]["batches"][0]["log"]
        .as_str()
        .expect("a log");
    let log = std::fs::read_to_string(first).expect("the log");
    assert!(log.contains("# argv: [\"cargo\",\"test\""), "{log}");
}

/// #15 (lane binaries run directly): a change whose test code does not compile stops
/// the lane's one build: exit 2 with the compiler's words, never a red test.
#[test]
fn a_cargo_build_failure_is_exit_2_with_the_compiler_s_message() {
    let more = "#[test]\nfn base() {\n    assert_eq!(calc::add(2, 2), 4);\n}\n\n#[test]\nfn broken() {\n    let x: i32 = \"not a number\";\n}\n";
    let suite = cargo_change(&[("tests/more.rs", more)]);
    let ran = suite.candor(&["gate"], &[]);
    assert_eq!(ran.exit, 2, "{ran:?}");
    assert!(ran.stderr.contains("--no-run"), "{ran:?}");
    assert!(ran.stderr.contains("error[E0308]"), "{ran:?}");
    assert!(ran.stderr.contains("tests/more.rs"), "{ran:?}");
}

/// #15 item 3: the runner's own parallelism inside each replay process (libtest's
/// `--test-threads 3` here) is recorded in the report's batches, in every replay's run
/// record, and in the `gate` runs the lane stores in the history (which said 1 whatever
/// the runner did, before).
#[test]
fn the_runner_s_workers_are_in_the_report_the_run_records_and_the_stored_runs() {
    let suite = cargo_change_under(
        "[lane]\nreplay = \"touched\"\n\n[runner]\nkind = \"cargo\"\ncommand = [\"cargo\", \"test\", \"--\", \"--test-threads\", \"3\"]\n",
        &[(
            "tests/more.rs",
            "#[test]\nfn base() {\n    assert_eq!(calc::add(2, 2), 4);\n}\n\n#[test]\nfn more_one() {\n    assert_eq!(calc::add(1, 0), 1);\n}\n",
        )],
    );
    let (ran, report) = gate_report(&suite);
    assert_eq!(ran.exit, 0, "{ran:?}\n{report:#}");
    let rounds = report["batching"]["rounds"].as_array().expect("rounds");
    assert!(
        rounds
            .iter()
            .flat_map(|r| r["batches"].as_array().expect("batches"))
            .all(|b| b["workers"] == 3),
        "{report:#}"
    );
    // Each replay's record file, beside its runner's log.
    let mut records = Vec::new();
    let mut dirs = vec![suite.repo.join(".candor")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.parent().is_some_and(|p| p.ends_with("records")) {
                let text = std::fs::read_to_string(&path).expect("a record");
                records.push(serde_json::from_str::<serde_json::Value>(&text).expect("JSON"));
            }
        }
    }
    assert_eq!(records.len(), 6, "two tests, three rounds: {records:#?}");
    assert!(records.iter().all(|r| r["workers"] == 3), "{records:#?}");
    let history = rusqlite::Connection::open(suite.temp.path().join("history.db"))
        .expect("the lane's history");
    let workers: Vec<Option<i64>> = history
        .prepare("SELECT workers FROM runs WHERE source = 'gate'")
        .and_then(|mut statement| {
            statement
                .query_map([], |row| row.get(0))
                .and_then(Iterator::collect)
        })
        .expect("the gate runs");
    assert!(!workers.is_empty());
    assert!(workers.iter().all(|w| *w == Some(3)), "{workers:?}");
}
