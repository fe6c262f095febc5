//! The go and cargo lanes judge a change with the base's version of its test files
//! (issue #14 item 1, built past pytest): a real go module in a real git repository, a
//! change that regresses the code and makes its test agree (weakened), deletes the
//! failing test (removed) or loosens a shared helper (test-support code), each refused;
//! a clean change and an approved rewrite accepted; the work tree is never written by the
//! base's version. For cargo, what the texts tell without a second build: a deleted test,
//! a test stripped of `#[test]`, a test that gained `#[should_panic]` or lost a check.

use crate::gate_batch::{gate_report, only_infrastructure_change, strings};
use crate::gate_batch_rust_go::{cargo_change, cargo_change_under, go_change};

/// `Twice` regressed: 2·x + 1.
pub(crate) const REGRESSED: &str = "package b\n\nfunc Twice(x int) int { return 2*x + 1 }\n";

/// The kinds of the report's reasons, in order.
pub(crate) fn kinds(report: &serde_json::Value) -> Vec<String> {
    report["reasons"]
        .as_array()
        .expect("reasons")
        .iter()
        .map(|r| r["kind"].as_str().expect("a kind").to_owned())
        .collect()
}

fn weakened(report: &serde_json::Value) -> Vec<String> {
    report["base_judgement"]["weakened"]
        .as_array()
        .expect("weakened")
        .iter()
        .map(|w| w["test"].as_str().expect("a test").to_owned())
        .collect()
}

#[test]
fn issue_14_item_1_a_go_test_made_to_agree_with_regressed_code_is_weakened() {
    let suite = go_change(&[
        ("b/b.go", REGRESSED),
        (
            "b/b_test.go",
            "package b\n\nimport \"testing\"\n\nfunc TestBase(t *testing.T) {\n\tif Twice(2) != 5 {\n\t\tt.Fatal(\"twice\")\n\t}\n}\n",
        ),
    ]);
    let (ran, report) = gate_report(&suite);
    assert_eq!(ran.exit, 1, "{ran:?}\n{report:#}");
    assert!(
        kinds(&report).contains(&"weakened-test".to_owned()),
        "{report:#}"
    );
    assert_eq!(
        weakened(&report),
        ["example.com/shop/b::TestBase"],
        "{report:#}"
    );
    assert_eq!(
        strings(&report["base_judgement"]["files"]),
        ["b/b_test.go"],
        "{report:#}"
    );
    // The work tree still holds the head's test: the base's version went through go's
    // overlay, not onto disk.
    let on_disk = std::fs::read_to_string(suite.repo.join("b/b_test.go")).expect("b_test.go");
    assert!(on_disk.contains("!= 5"), "{on_disk}");
    // A human may approve a deliberate change of behaviour.
    let approved = suite.candor(&["gate", "--format", "json", "--approved-by", "ana"], &[]);
    assert_eq!(approved.exit, 0, "{approved:?}");
}

#[test]
fn issue_14_item_1_a_deleted_go_test_is_removed_and_a_clean_edit_is_accepted() {
    let suite = go_change(&[(
        "a/a_test.go",
        "package a\n\nimport \"testing\"\n\nfunc TestOther(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"add\")\n\t}\n}\n",
    )]);
    let (ran, report) = gate_report(&suite);
    assert_eq!(ran.exit, 1, "{ran:?}\n{report:#}");
    assert!(
        kinds(&report).contains(&"tests-removed".to_owned()),
        "{report:#}"
    );
    assert_eq!(
        strings(&report["base_judgement"]["removed"]),
        ["example.com/shop/a::TestBase"]
    );

    // The whole file deleted: nothing is left to list from it, and its tests are removed.
    let deleted = go_change(&[("a/doc.go", "package a\n")]);
    crate::triage_support::git(&deleted.repo, &["rm", "--quiet", "a/a_test.go"]);
    crate::triage_support::git(&deleted.repo, &["commit", "--quiet", "-m", "no tests"]);
    let (ran, report) = gate_report(&deleted);
    assert_eq!(ran.exit, 1, "{ran:?}\n{report:#}");
    assert_eq!(
        strings(&report["base_judgement"]["removed"]),
        ["example.com/shop/a::TestBase"],
        "{report:#}"
    );

    // A build constraint no build sets: the text still defines the test, go no longer
    // builds it.
    let tagged = go_change(&[(
        "a/a_test.go",
        &format!(
            "//go:build never\n\n{}",
            crate::gate_batch_rust_go::GO_BASE_A
        ),
    )]);
    let (ran, report) = gate_report(&tagged);
    assert_eq!(ran.exit, 1, "{ran:?}\n{report:#}");
    assert_eq!(
        strings(&report["base_judgement"]["removed"]),
        ["example.com/shop/a::TestBase"],
        "{report:#}"
    );

    // The same test kept and a test added beside it: nothing weakened or removed.
    let clean = go_change(&[(
        "a/a_test.go",
        "package a\n\nimport \"testing\"\n\nvar baseRan bool\n\nfunc TestBase(t *testing.T) {\n\tbaseRan = true\n}\n\nfunc TestOther(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"add\")\n\t}\n}\n",
    )]);
    let (ran, report) = gate_report(&clean);
    assert_eq!(ran.exit, 0, "{ran:?}\n{report:#}");
    assert_eq!(
        strings(&report["base_judgement"]["files"]),
        ["a/a_test.go"],
        "{report:#}"
    );
    assert_eq!(report["base_judgement"]["weakened"], serde_json::json!([]));
    assert_eq!(report["base_judgement"]["removed"], serde_json::json!([]));
}

#[test]
fn issue_14_item_1_a_loosened_go_helper_is_refused_whether_or_not_its_users_are_touched() {
    // The base: b's test checks through a helper in its own file.
    let helper = "package b\n\nimport \"testing\"\n\nfunc check(t *testing.T, got, want int) {\n\tt.Helper()\n\tif got != want {\n\t\tt.Fatalf(\"got %d, want %d\", got, want)\n\t}\n}\n";
    let loose = "package b\n\nimport \"testing\"\n\nfunc check(t *testing.T, got, want int) {\n\tt.Helper()\n}\n";
    let uses = "package b\n\nimport \"testing\"\n\nfunc TestUses(t *testing.T) {\n\tcheck(t, Twice(3), 6)\n}\n";
    let suite = crate::gate_batch_rust_go::go_change_from(
        &[("b/check_test.go", helper), ("b/uses_test.go", uses)],
        &[("b/b.go", REGRESSED), ("b/check_test.go", loose)],
    );
    let (ran, report) = gate_report(&suite);
    assert_eq!(ran.exit, 1, "{ran:?}\n{report:#}");
    assert!(
        kinds(&report).contains(&"weakened-test".to_owned()),
        "{report:#}"
    );
    assert_eq!(weakened(&report), ["b/check_test.go"], "{report:#}");

    // The user touched too: its base version, with the base's helper, fails against the
    // regressed code.
    let suite = crate::gate_batch_rust_go::go_change_from(
        &[("b/check_test.go", helper), ("b/uses_test.go", uses)],
        &[
            ("b/b.go", REGRESSED),
            ("b/check_test.go", loose),
            ("b/uses_test.go", &format!("{uses}\n// checked\n")),
        ],
    );
    let (ran, report) = gate_report(&suite);
    assert_eq!(ran.exit, 1, "{ran:?}\n{report:#}");
    assert_eq!(
        weakened(&report),
        ["b/check_test.go", "example.com/shop/b::TestUses"],
        "{report:#}"
    );
}

#[test]
fn a_loosened_go_helper_package_outside_the_test_files_is_test_infrastructure() {
    // The base: an assertion helper in a package of its own (`internal/testutil`, no
    // `_test.go` file), which b's untouched test uses. The change regresses `Twice` and
    // takes the helper's `t.Fatalf` away: no test file is touched, nothing is replayed.
    let helper = "package testutil\n\nimport \"testing\"\n\nfunc Equal(t testing.TB, got, want int) {\n\tt.Helper()\n\tif got != want {\n\t\tt.Fatalf(\"got %d, want %d\", got, want)\n\t}\n}\n";
    let loose = "package testutil\n\nimport \"testing\"\n\nfunc Equal(t testing.TB, got, want int) {\n\tt.Helper()\n}\n";
    let uses = "package b\n\nimport (\n\t\"testing\"\n\n\t\"example.com/shop/internal/testutil\"\n)\n\nfunc TestUses(t *testing.T) {\n\ttestutil.Equal(t, Twice(3), 6)\n}\n";
    let suite = crate::gate_batch_rust_go::go_change_from(
        &[
            ("internal/testutil/testutil.go", helper),
            ("b/uses_test.go", uses),
        ],
        &[
            ("b/b.go", REGRESSED),
            ("internal/testutil/testutil.go", loose),
        ],
    );
    let (ran, report) = gate_report(&suite);
    assert_eq!(ran.exit, 1, "{ran:?}\n{report:#}");
    let found = only_infrastructure_change(&report);
    assert_eq!(found["path"], "internal/testutil/testutil.go");
    assert_eq!(found["kind"], "test-support");
    assert!(
        found["what"]
            .as_str()
            .expect("what")
            .contains("line 3: `import \"testing\"`"),
        "{report:#}"
    );

    // A change to code that does not reach into the framework is code under test: the
    // same regression alone is not test infrastructure.
    let suite = crate::gate_batch_rust_go::go_change_from(
        &[
            ("internal/testutil/testutil.go", helper),
            ("b/uses_test.go", uses),
        ],
        &[("b/b.go", REGRESSED)],
    );
    let (_, report) = gate_report(&suite);
    assert_eq!(
        report["test_infrastructure"],
        serde_json::json!([]),
        "{report:#}"
    );
}

#[test]
fn a_regression_kept_to_a_build_tag_the_lane_does_not_set_is_refused() {
    // The regressed `Twice` only where `release` is set, a correct copy everywhere else:
    // the lane's build has no tags, so every replay and the suite see the copy.
    let suite = go_change(&[
        (
            "b/b.go",
            "//go:build release\n\npackage b\n\nfunc Twice(x int) int { return 2*x + 1 }\n",
        ),
        (
            "b/b_dev.go",
            "//go:build !release\n\npackage b\n\nfunc Twice(x int) int { return 2 * x }\n",
        ),
    ]);
    let (ran, report) = gate_report(&suite);
    assert_eq!(ran.exit, 1, "{ran:?}\n{report:#}");
    assert_eq!(kinds(&report), ["diff-rules"], "{report:#}");
    let found: Vec<(String, u64, String)> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            (
                f["file"].as_str().expect("a file").to_owned(),
                f["line"].as_u64().expect("a line"),
                f["rule"].as_str().expect("a rule").to_owned(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            ("b/b.go".to_owned(), 1, "detects-tests".to_owned()),
            ("b/b_dev.go".to_owned(), 1, "detects-tests".to_owned()),
        ],
        "{report:#}"
    );
}

#[test]
fn a_go_test_file_that_sets_up_the_package_is_test_infrastructure() {
    // Found by a red-team run (2026-12-04): `Twice` right only while `exact` is set, and
    // a new test file that sets it in `func init()`, which runs before every test of the
    // package: the untouched `TestBase` passed and the lane accepted the regression.
    let suite = go_change(&[
        (
            "b/b.go",
            "package b\n\nvar exact bool\n\nfunc Twice(x int) int {\n\tif exact {\n\t\treturn 2 * x\n\t}\n\treturn 2*x + 1\n}\n",
        ),
        (
            "b/zz_test.go",
            "package b\n\nfunc init() { exact = true }\n",
        ),
    ]);
    let (ran, report) = gate_report(&suite);
    assert_eq!(ran.exit, 1, "{ran:?}\n{report:#}");
    let found = only_infrastructure_change(&report);
    assert_eq!(found["path"], "b/zz_test.go", "{report:#}");
    assert_eq!(found["kind"], "package-setup", "{report:#}");

    // A `TestMain` that ends the process before any test runs is the same.
    let suite = go_change(&[
        ("b/b.go", REGRESSED),
        (
            "b/main_test.go",
            "package b\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestMain(m *testing.M) { os.Exit(0) }\n",
        ),
    ]);
    let (ran, report) = gate_report(&suite);
    assert_eq!(ran.exit, 1, "{ran:?}\n{report:#}");
    let found = only_infrastructure_change(&report);
    assert_eq!(found["path"], "b/main_test.go", "{report:#}");
    assert_eq!(found["kind"], "package-setup", "{report:#}");
}

#[test]
fn issue_14_item_1_a_deleted_or_unmarked_cargo_test_is_removed() {
    // tests/more.rs holds `base` at the base; the change deletes it for another test.
    let suite = cargo_change(&[(
        "tests/more.rs",
        "#[test]\nfn other() {\n    assert_eq!(calc::add(1, 2), 3);\n}\n",
    )]);
    let (ran, report) = gate_report(&suite);
    assert_eq!(ran.exit, 1, "{ran:?}\n{report:#}");
    assert!(
        kinds(&report).contains(&"tests-removed".to_owned()),
        "{report:#}"
    );
    assert_eq!(
        strings(&report["base_judgement"]["removed"]),
        ["tests/more.rs::base"]
    );

    // The unit test in src/lib.rs kept as a function, its `#[test]` taken away.
    // Or hidden behind a `cfg` no build sets, still written.
    let hidden = "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n#[cfg(all(test, feature = \"never\"))]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(super::add(1, 1), 2);\n    }\n}\n";
    let suite = cargo_change(&[("src/lib.rs", hidden)]);
    let (ran, report) = gate_report(&suite);
    assert_eq!(ran.exit, 1, "{ran:?}\n{report:#}");
    assert_eq!(
        strings(&report["base_judgement"]["removed"]),
        ["src/lib.rs::adds"],
        "{report:#}"
    );

    let unmarked = "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n#[cfg(test)]\nmod tests {\n    #[allow(dead_code)]\n    fn adds() {\n        assert_eq!(super::add(1, 1), 2);\n    }\n}\n";
    let suite = cargo_change(&[("src/lib.rs", unmarked)]);
    let (ran, report) = gate_report(&suite);
    assert_eq!(ran.exit, 1, "{ran:?}\n{report:#}");
    assert_eq!(
        strings(&report["base_judgement"]["removed"]),
        ["src/lib.rs::adds"],
        "{report:#}"
    );

    // A test added beside the old one: nothing removed, accepted.
    let suite = cargo_change(&[(
        "tests/more.rs",
        "#[test]\nfn base() {\n    assert_eq!(calc::add(2, 2), 4);\n}\n\n#[test]\nfn other() {\n    assert_eq!(calc::add(1, 2), 3);\n}\n",
    )]);
    let (ran, report) = gate_report(&suite);
    assert_eq!(ran.exit, 0, "{ran:?}\n{report:#}");
    assert_eq!(report["base_judgement"]["removed"], serde_json::json!([]));
}

#[test]
fn issue_14_item_1_a_cargo_test_that_gains_should_panic_beside_regressed_code_is_weakened() {
    let suite = cargo_change(&[
        (
            "src/lib.rs",
            "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n",
        ),
        (
            "tests/more.rs",
            "#[test]\n#[should_panic]\nfn base() {\n    assert_eq!(calc::add(2, 2), 4);\n}\n",
        ),
    ]);
    let (ran, report) = gate_report(&suite);
    assert_eq!(ran.exit, 1, "{ran:?}\n{report:#}");
    assert!(
        kinds(&report).contains(&"weakened-test".to_owned()),
        "{report:#}"
    );
    assert_eq!(weakened(&report), ["calc::more::base"], "{report:#}");
}

/// A cargo change that regresses the code and takes the failing check out of the kept
/// test, each way an agent might (deleted, turned into `let _ =`, after an early `return`,
/// behind `#[cfg(any())]`), is weakened; a change that edits the check's arguments is
/// judged by the replays, as the text cannot tell.
#[test]
fn issue_14_item_1_a_cargo_test_stripped_of_its_check_beside_regressed_code_is_weakened() {
    let regressed = "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n";
    for body in [
        "    let _ = calc::add(2, 2);\n",
        "    let _ = (calc::add(2, 2), 4);\n",
        "    if true {\n        return;\n    }\n    assert_eq!(calc::add(2, 2), 4);\n",
        "    #[cfg(any())]\n    assert_eq!(calc::add(2, 2), 4);\n",
    ] {
        let suite = cargo_change(&[
            ("src/lib.rs", regressed),
            (
                "tests/more.rs",
                &format!("#[test]\nfn base() {{\n{body}}}\n"),
            ),
        ]);
        let (ran, report) = gate_report(&suite);
        assert_eq!(ran.exit, 1, "{body}\n{ran:?}\n{report:#}");
        assert!(
            kinds(&report).contains(&"weakened-test".to_owned()),
            "{body}\n{report:#}"
        );
        assert_eq!(
            weakened(&report),
            ["calc::more::base"],
            "{body}\n{report:#}"
        );
    }
    // A strengthened test beside a correct change: accepted, nothing weakened.
    let suite = cargo_change(&[(
        "tests/more.rs",
        "#[test]\nfn base() {\n    assert_eq!(calc::add(2, 2), 4);\n    assert_eq!(calc::add(2, 3), 5);\n}\n",
    )]);
    let (ran, report) = gate_report(&suite);
    assert_eq!(ran.exit, 0, "{ran:?}\n{report:#}");
    assert_eq!(report["base_judgement"]["weakened"], serde_json::json!([]));
}

/// `add` regressed where only `tests/more.rs` checks it (`add(2, 2)`).
const REGRESSED_ADD: &str = "pub fn add(a: i32, b: i32) -> i32 {\n    if a == 2 { a + b + 1 } else { a + b }\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(super::add(1, 1), 2);\n    }\n}\n";

/// The `calc` crate (`cargo_change_under`, the whole suite run) with `add` regressed where
/// only `tests/more.rs` checks it, beside `tamper`; the gate must reject for `kind` alone.
fn refused_beside_a_regression_only_more_rs_catches(
    tamper: (&str, &str),
    kind: &str,
) -> serde_json::Value {
    let suite = cargo_change_under(
        "[lane]\nmin_replays = 2\n\n[runner]\nkind = \"cargo\"\n",
        &[("src/lib.rs", REGRESSED_ADD), tamper],
    );
    let (ran, report) = gate_report(&suite);
    assert_eq!(ran.exit, 1, "{ran:?}\n{report:#}");
    assert_eq!(kinds(&report), [kind], "{report:#}");
    report
}

/// A regression that only `tests/more.rs` catches, beside `autotests = false` in
/// Cargo.toml: cargo no longer builds the integration tests, the whole suite's run holds
/// only the unit test and passes, and the lane accepted the change. What decides which
/// tests cargo builds is test infrastructure.
#[test]
fn a_cargo_manifest_that_drops_the_integration_tests_is_refused() {
    let manifest = "[package]\nname = \"calc\"\nversion = \"0.1.0\"\nedition = \"2021\"\nautotests = false\n\n[dependencies]\n";
    let report = refused_beside_a_regression_only_more_rs_catches(
        ("Cargo.toml", manifest),
        "test-infrastructure-changed",
    );
    assert_eq!(report["test_infrastructure"][0]["path"], "Cargo.toml");
    assert_eq!(
        report["suite"]["tests"], 1,
        "only the unit test ran: {report:#}"
    );
}

/// A build script that sets a `cfg` only for the debug profile the tests build in, and
/// `add` regressed outside it: every test build compiles the correct `add`, a release
/// build the regressed one. The change shows no test-run check the diff rules read (the
/// `cfg` is the project's own name), and the lane accepted it. A build script is test
/// infrastructure.
#[test]
fn a_build_script_that_sets_a_cfg_for_test_builds_is_refused() {
    let build = "fn main() {\n    if std::env::var(\"PROFILE\").as_deref() == Ok(\"debug\") {\n        println!(\"cargo:rustc-cfg=calc_checked\");\n    }\n}\n";
    let code = "#[cfg(calc_checked)]\npub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n\n#[cfg(not(calc_checked))]\npub fn add(a: i32, b: i32) -> i32 {\n    if a == 2 { a + b + 1 } else { a + b }\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(super::add(1, 1), 2);\n    }\n}\n";
    let suite = cargo_change_under(
        "[lane]\nmin_replays = 2\n\n[runner]\nkind = \"cargo\"\n",
        &[("src/lib.rs", code), ("build.rs", build)],
    );
    let (ran, report) = gate_report(&suite);
    assert_eq!(ran.exit, 1, "{ran:?}\n{report:#}");
    assert_eq!(
        kinds(&report),
        ["test-infrastructure-changed"],
        "{report:#}"
    );
    assert_eq!(
        report["test_infrastructure"][0]["path"], "build.rs",
        "{report:#}"
    );
    assert_eq!(
        report["suite"]["failed"],
        serde_json::json!([]),
        "the tests built with the cfg: {report:#}"
    );
}

/// A regression that only `tests/more.rs` catches, beside a build script that rewrites
/// that file's `assert_eq!` into `let _ =` before cargo compiles the tests: the change
/// shows the test as it was, every run compiled the rewritten one, and the lane accepted
/// it. The runs left a tracked file different from HEAD: the lane says so and refuses.
#[test]
fn a_build_script_that_rewrites_a_test_is_refused() {
    let build = "fn main() {\n    let path = std::path::Path::new(&std::env::var(\"CARGO_MANIFEST_DIR\").unwrap()).join(\"tests\").join(\"more.rs\");\n    if let Ok(text) = std::fs::read_to_string(&path) {\n        std::fs::write(&path, text.replace(\"assert_eq!\", \"let _ = \")).unwrap();\n    }\n}\n";
    let suite = cargo_change_under(
        "[lane]\nmin_replays = 2\n\n[runner]\nkind = \"cargo\"\n",
        &[("src/lib.rs", REGRESSED_ADD), ("build.rs", build)],
    );
    let (ran, report) = gate_report(&suite);
    assert_eq!(ran.exit, 1, "{ran:?}\n{report:#}");
    // The build script is test infrastructure too (since 2026-12-05); what is shown here
    // is that the runs' writes are seen whatever refused the change first.
    assert_eq!(
        kinds(&report),
        ["test-infrastructure-changed", "report-unaccounted"],
        "{report:#}"
    );
    let unaccounted = report["unaccounted"].as_array().unwrap();
    assert!(
        unaccounted.iter().any(|u| u["problem"]
            .as_str()
            .unwrap()
            .contains("changed tracked files the change does not: tests/more.rs")),
        "{report:#}"
    );
}
