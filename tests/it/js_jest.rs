//! The jest adapter end to end on a real jest install (tests/fixtures/js/jest, its
//! package-lock.json committed, `npm ci` by `.ci/run`): the suite with its seed, one test
//! by id (hostile titles included), the report's ids, and `candor test`, `triage`,
//! `rerun`, `compare` and `gate` on a git repository of the fixture. Issue #20. The flows
//! every JavaScript runner goes through are `js_support::Js`'s; this file holds jest's own.
//!
//! The fixture's flaky test fails on its n-th run when a seeded draw says so
//! (`js_support::flaky_fails`), and its order-dependent pair passes only when the writer
//! runs first, so every outcome below is known before the run.

use candor::results::Outcome;
use candor::runner::process::SystemExecutor;
use candor::runner::{RunOptions, RunnerKind};

use crate::js_support::{
    ADDS, FLAKY, FLAKY_SEED, Js, READER, SKIPPED, SUBTRACTS, WRITER, flaky_fails, outcome_of,
};
use crate::runner_support::{self, HOSTILE, argv_holds, logs, not_run, outcomes, ran_argvs};

const JEST: Js = Js {
    kind: RunnerKind::Jest,
    command: &["node_modules/.bin/jest"],
    tests: "__tests__",
    prelude: "",
    flaky_failure: (
        "Error",
        r"expect\(received\)\.toBeGreaterThanOrEqual\(expected\)",
        18,
    ),
};

/// The report's ids in the order they ran.
fn ran_order(report: &candor::runner::RunReport) -> Vec<String> {
    let file = std::fs::File::open(&report.report).expect("the report");
    let (executions, _) = candor::results::parse_all(
        file,
        &candor::results::ParseOptions {
            repo_root: None,
            ..candor::results::ParseOptions::default()
        },
    )
    .expect("the report parses");
    executions.into_iter().map(|e| e.test_id).collect()
}

#[test]
fn the_suite_runs_shuffled_by_its_seed_into_file_and_describe_ids() {
    let suite = JEST.project();
    let executor = SystemExecutor;
    let context = Js::context(&suite, &executor);
    let jest = JEST.adapter(&suite, &context);
    let (writer, reader) = (JEST.basic(WRITER), JEST.basic(READER));
    for (run, seed) in [(0, 1_u64), (1, 3), (2, 5)] {
        let report = jest
            .run_suite(&context, RunOptions { seed: Some(seed) })
            .expect("the suite runs");
        assert_eq!(report.runner, RunnerKind::Jest);
        assert_eq!(report.exit_code(), 1, "a test fails:\n{}", logs(&report));
        assert!(argv_holds(&report, "--randomize"));
        assert!(argv_holds(&report, &format!("--seed={seed}")));
        assert_eq!(report.seed.as_ref().map(|s| s.value), Some(seed));
        let pairs = outcomes(&report);
        assert_eq!(pairs.len(), 7, "{pairs:?}");
        assert_eq!(outcome_of(&pairs, &JEST.basic(ADDS)), Some(Outcome::Pass));
        assert_eq!(
            outcome_of(&pairs, &JEST.basic(SUBTRACTS)),
            Some(Outcome::Fail)
        );
        assert_eq!(
            outcome_of(&pairs, &JEST.basic(SKIPPED)),
            Some(Outcome::Skip)
        );
        assert_eq!(outcome_of(&pairs, &writer), Some(Outcome::Pass));
        assert_eq!(outcome_of(&pairs, &JEST.hostile()), Some(Outcome::Pass));
        let flaky = if flaky_fails(FLAKY_SEED, run) {
            Outcome::Fail
        } else {
            Outcome::Pass
        };
        assert_eq!(
            outcome_of(&pairs, &JEST.basic(FLAKY)),
            Some(flaky),
            "run {run}"
        );
        // The seed decides the order, and the order decides the reader.
        let order = ran_order(&report);
        let writer_first =
            order.iter().position(|id| *id == writer) < order.iter().position(|id| *id == reader);
        let expected = if writer_first {
            Outcome::Pass
        } else {
            Outcome::Fail
        };
        assert_eq!(
            outcome_of(&pairs, &reader),
            Some(expected),
            "seed {seed}: {order:?}"
        );
    }
    // The same seed, the same order.
    let again = jest
        .run_suite(&context, RunOptions { seed: Some(3) })
        .expect("the suite runs");
    let before = jest
        .run_suite(&context, RunOptions { seed: Some(3) })
        .expect("the suite runs");
    assert_eq!(ran_order(&again), ran_order(&before));
}

#[test]
fn one_test_runs_alone_by_its_id_and_the_report_holds_it_only() {
    JEST.one_test_runs_alone_by_its_id();
}

#[test]
fn ids_that_name_no_test_are_a_runner_that_could_not_run_and_never_reach_a_shell() {
    JEST.unknown_and_hostile_ids_could_not_run_and_never_reach_a_shell();
}

/// jest's own: a missing file is jest's `ENOENT`, a hostile title is one escaped,
/// anchored `--testNamePattern` argument, and the file is the one path after `--`.
#[test]
fn a_hostile_title_is_one_anchored_pattern_and_a_missing_file_is_enoent() {
    let suite = JEST.project();
    let executor = SystemExecutor;
    let context = Js::context(&suite, &executor);
    let jest = JEST.adapter(&suite, &context);
    let missing = jest.run_one(&context, "__tests__/nope.test.js::x", RunOptions::default());
    let error = not_run(&missing);
    assert!(error.unknown_test, "{error}");
    assert!(error.to_string().contains("ENOENT"), "{error}");
    let plain = ran_argvs(&jest.run_one(&context, &JEST.basic(ADDS), RunOptions::default()));
    assert!(
        plain[0].iter().any(|a| a == "--runTestsByPath"),
        "{plain:?}"
    );
    for hostile in HOSTILE {
        let ran = jest.run_one(&context, &JEST.basic(hostile), RunOptions::default());
        let argvs = ran_argvs(&ran);
        assert_eq!(argvs.len(), 1);
        assert_eq!(
            argvs[0].len(),
            plain[0].len(),
            "one argument: {:?}",
            argvs[0]
        );
        assert!(
            argvs[0]
                .iter()
                .any(|a| a.starts_with("--testNamePattern=^") && a.ends_with('$')),
            "{:?}",
            argvs[0]
        );
    }
}

#[test]
fn a_test_file_that_does_not_parse_is_a_runner_that_could_not_run() {
    let suite = JEST.project();
    suite.write("__tests__/broken.test.js", "test('x', () => {\n");
    let executor = SystemExecutor;
    let context = Js::context(&suite, &executor);
    let jest = JEST.adapter(&suite, &context);
    let ran = jest.run_suite(&context, RunOptions { seed: Some(1) });
    let error = not_run(&ran);
    assert!(
        error.why.starts_with("jest could not run 1 test file(s)"),
        "{error}"
    );
    assert!(
        error.quoted.iter().any(|l| l.contains("broken.test.js")),
        "{error}"
    );
}

#[test]
fn the_listing_names_every_test_under_the_ids_run_one_takes() {
    JEST.the_listing_names_every_test_and_runs_none();
}

#[test]
fn an_ordered_run_is_definition_order_or_the_seed_s_shuffle() {
    let suite = JEST.project();
    let executor = SystemExecutor;
    let context = Js::context(&suite, &executor);
    let jest = JEST.adapter(&suite, &context);
    let (writer, reader) = (JEST.basic(WRITER), JEST.basic(READER));
    let ids = [reader.clone(), writer.clone()];
    let report = jest
        .run_ordered(
            &context,
            &ids,
            candor::runner::Arrangement::AsGiven,
            RunOptions::default(),
        )
        .expect("it runs");
    assert_eq!(ran_order(&report), [writer.clone(), reader.clone()]);
    assert_eq!(
        outcomes(&report),
        runner_support::expected(&[(&writer, Outcome::Pass), (&reader, Outcome::Pass)])
    );
    // Seed 5 runs the reader first (as the suite run with seed 5 shows).
    let report = jest
        .run_ordered(
            &context,
            &ids,
            candor::runner::Arrangement::Shuffled(5),
            RunOptions::default(),
        )
        .expect("it runs");
    assert_eq!(ran_order(&report), [reader.clone(), writer]);
    assert_eq!(
        jest.ordered_command(
            &ids,
            candor::runner::Arrangement::Shuffled(5),
            RunOptions::default()
        )
        .expect("a command")
        .iter()
        .filter(|a| a.starts_with("--seed="))
        .collect::<Vec<_>>(),
        ["--seed=5"]
    );
    let other_file = [reader, JEST.hostile()];
    assert!(
        jest.run_ordered(
            &context,
            &other_file,
            candor::runner::Arrangement::AsGiven,
            RunOptions::default()
        )
        .is_err()
    );
}

#[test]
fn candor_test_triage_and_rerun_on_a_jest_project() {
    JEST.candor_test_triage_and_rerun();
}

#[test]
fn compare_measures_the_flaky_test_on_both_sides() {
    JEST.compare_measures_the_flaky_test_on_both_sides(0);
}

#[test]
fn gate_replays_a_new_jest_test_and_accepts_a_clean_change() {
    JEST.gate_replays_a_new_test_and_accepts_a_clean_change();
}

/// #14 item 1: a jest test deleted or hidden by the change is refused as removed.
#[test]
fn gate_refuses_a_deleted_jest_test() {
    JEST.gate_refuses_a_deleted_test();
}

/// #15 item 1: one process selects exactly the batch's tests, hostile titles included; a
/// pair the title pattern cannot tell apart refuses the batch.
#[test]
fn a_batch_selects_exactly_its_tests_in_one_jest_process() {
    JEST.a_batch_selects_exactly_its_tests_in_one_process("a b > c");
}

/// #15 items 1–2: the gate's rounds are a few jest processes, and what a batch made red
/// is judged alone.
#[test]
fn gate_batches_the_jest_rounds_and_judges_alone_what_a_batch_made_red() {
    JEST.gate_batches_the_rounds_and_judges_alone_what_a_batch_made_red();
}

/// #15 item 1, a batch jest cannot select exactly: two tests of a touched file share one
/// id (dayjs has such a pair), which no title pattern selects apart. The batch holding
/// that id is refused, the id goes to be replayed alone, and the rest of the batch runs
/// again without it in one jest process: the other touched tests are judged by batched
/// replays, not one jest each.
#[test]
fn two_tests_under_one_id_are_replayed_alone_and_the_rest_of_their_batch_stays_batched() {
    let suite = JEST.project();
    for file in ["basic.test.js", "hostile.test.js"] {
        std::fs::remove_file(suite.repo.join("__tests__").join(file))
            .expect("remove a fixture test");
    }
    let dates = "__tests__/dates.test.js";
    suite.write(dates, "it('parses', () => {});\n");
    suite.write(
        "candor.toml",
        "[lane]\nreplay = \"touched\"\nmin_replays = 3\nmax_wall_seconds = 300\n",
    );
    crate::triage_support::git(&suite.repo, &["checkout", "--quiet", "main"]);
    crate::js_support::commit(&suite, "a clean suite");
    crate::triage_support::git(&suite.repo, &["checkout", "--quiet", "-B", "change"]);
    suite.write(
        dates,
        "it('parses', () => {});\nit('formats', () => {});\nit('adds days', () => {});\n\
         describe('utc', () => {\n  it('keeps the zone', () => {});\n  it('keeps the zone', () => {});\n});\n",
    );
    crate::js_support::commit(&suite, "more date tests");
    let ran = suite.candor(&["gate", "--format", "json"], &[]);
    let text = std::fs::read_to_string(suite.repo.join("score-report.json"))
        .unwrap_or_else(|e| panic!("no report ({e}): {ran:?}"));
    let report: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let twice = format!("{dates}::utc > keeps the zone");
    let alone: Vec<&str> = report["batching"]["replayed_alone"]
        .as_array()
        .map(|a| a.iter().filter_map(|t| t.as_str()).collect())
        .unwrap_or_default();
    assert_eq!(alone, [twice.as_str()], "{report:#}");
    let rounds = report["batching"]["rounds"]
        .as_array()
        .unwrap_or_else(|| panic!("batched: {report:#}"));
    // Round 1: the refused batch (no exit code), then its rest in one process.
    let first = rounds[0]["batches"].as_array().expect("batches");
    assert!(first[0]["exit_code"].is_null(), "{report:#}");
    assert!(
        first.iter().any(|b| b["exit_code"] == 0
            && b["tests"].as_array().is_some_and(|t| t.len() == 3)
            && !b["tests"]
                .as_array()
                .is_some_and(|t| t.iter().any(|t| *t == twice.as_str()))),
        "the rest of the batch, without the shared id: {report:#}"
    );
    for title in ["parses", "formats", "adds days"] {
        let id = format!("{dates}::{title}");
        let runs: Vec<&serde_json::Value> = report["runs"]
            .as_array()
            .map(|r| r.iter().filter(|r| r["test"] == id.as_str()).collect())
            .unwrap_or_default();
        assert_eq!(runs.len(), 3, "{id}: {report:#}");
        assert!(
            runs.iter()
                .all(|r| r["outcome"] == "pass" && r["batch"].is_u64()),
            "{id} judged by batched replays: {report:#}"
        );
    }
}

/// A `cart.js` its test checks, committed on `main` with the fixture's other tests taken
/// away, then a `hidden` branch where the cart regresses beside `tamper`; the gate's
/// report line.
fn gate_on_a_regressed_cart(
    tamper: impl FnOnce(&crate::triage_support::Suite),
) -> serde_json::Value {
    gate_on_a_regressed_cart_checked_by("toBe", tamper)
}

/// [`gate_on_a_regressed_cart`] with the cart's test checking by `matcher`.
fn gate_on_a_regressed_cart_checked_by(
    matcher: &str,
    tamper: impl FnOnce(&crate::triage_support::Suite),
) -> serde_json::Value {
    gate_on_a_regressed_cart_from(|_| {}, matcher, tamper)
}

/// [`gate_on_a_regressed_cart_checked_by`] with `base` writing more of `main` after the
/// cart and its tests.
fn gate_on_a_regressed_cart_from(
    base: impl FnOnce(&crate::triage_support::Suite),
    matcher: &str,
    tamper: impl FnOnce(&crate::triage_support::Suite),
) -> serde_json::Value {
    let suite = JEST.project();
    let tests = suite.repo.join("__tests__");
    for entry in std::fs::read_dir(&tests).expect("the fixture's tests") {
        std::fs::remove_file(entry.expect("a test file").path()).expect("remove a fixture test");
    }
    let cart = |start: u32| {
        format!(
            "function total(prices) {{\n  return prices.reduce((a, b) => a + b, {start});\n}}\nmodule.exports = {{ total }};\n"
        )
    };
    suite.write("cart.js", &cart(0));
    suite.write(
        "__tests__/cart.test.js",
        &format!(
            "const {{ total }} = require('../cart');\n\ntest('totals', () => {{\n  expect(total([3, 5])).{matcher}(8);\n}});\n"
        ),
    );
    suite.write(
        "__tests__/other.test.js",
        "test('adds', () => {\n  expect(1 + 1).toBe(2);\n});\n",
    );
    suite.write(
        "candor.toml",
        "[lane]\nmin_replays = 2\nmax_wall_seconds = 300\n",
    );
    base(&suite);
    crate::triage_support::git(&suite.repo, &["checkout", "--quiet", "main"]);
    crate::js_support::commit(&suite, "a cart");
    crate::triage_support::git(&suite.repo, &["checkout", "--quiet", "-b", "hidden"]);
    suite.write("cart.js", &cart(1));
    tamper(&suite);
    crate::js_support::commit(&suite, "a regression, its tests hidden");
    let ran = suite.candor(&["gate", "--format", "json"], &[]);
    assert_eq!(ran.exit, 1, "{ran:?}");
    ran.lines_of("gate")[0].clone()
}

/// A regression that returns a value jest takes for a matcher: `toEqual` asks the value's
/// own `asymmetricMatch`, which says yes to 8 and everything else (tried with real jest:
/// `expect({ asymmetricMatch: () => true }).toEqual(108)` passes). Refused as a
/// comparison that cannot fail.
#[test]
fn gate_refuses_a_result_that_matches_anything() {
    let line = gate_on_a_regressed_cart_checked_by("toEqual", |suite| {
        suite.write(
            "cart.js",
            "function total(prices) {\n  const sum = prices.reduce((a, b) => a + b, 1);\n  return { valueOf: () => sum, asymmetricMatch: () => true };\n}\nmodule.exports = { total };\n",
        );
    });
    assert_eq!(line["reasons"][0]["kind"], "diff-rules", "{line:#}");
    let findings = line["findings"].as_array().expect("a list");
    assert!(
        findings
            .iter()
            .any(|f| f["rule"] == "equal-to-anything" && f["file"] == "cart.js" && f["line"] == 3),
        "{line:#}"
    );
    assert_eq!(
        line["suite"]["failed"],
        serde_json::json!([]),
        "jest itself passed the regression: {line:#}"
    );
}

/// A regression beside a kept test file that makes its tests run against something else
/// while every check stays: a module mock of the cart at the top, a spy answering for it
/// in the kept test's body, an `expect.extend` whose `toBe` always passes, a docblock's
/// test environment (in a test folder jest does not collect) that changes
/// `Array.prototype.reduce`, the cart's `total` assigned over, `Array.prototype.reduce`
/// assigned over in the file itself. jest passed each; the base's text was read, its checks all
/// there, and the lane accepted the regression (red-team, 2026-12-04). Each is a weakened
/// test of the kept tests now.
#[test]
fn gate_refuses_a_kept_test_file_that_replaces_what_its_tests_run() {
    let kept = "const { total } = require('../cart');\n\ntest('totals', () => {\n  expect(total([3, 5])).toBe(8);\n});\n";
    let environment = "const NodeEnvironment = require('jest-environment-node').TestEnvironment;\n\nclass Shop extends NodeEnvironment {\n  async setup() {\n    await super.setup();\n    const reduce = this.global.Array.prototype.reduce;\n    this.global.Array.prototype.reduce = function (f) { return reduce.call(this, f, 0); };\n  }\n}\n\nmodule.exports = Shop;\n";
    let tampered: [(&str, String); 6] = [
        (
            "a module mock",
            format!(
                "jest.mock('../cart', () => ({{ total: (p) => p.reduce((a, b) => a + b, 0) }}));\n{kept}"
            ),
        ),
        (
            "a spy",
            kept.replace(
                "const { total } = require('../cart');",
                "const cart = require('../cart');\nconst total = (p) => cart.total(p);",
            )
            .replace(
                "  expect(total",
                "  jest.spyOn(cart, 'total').mockReturnValue(8);\n  expect(total",
            ),
        ),
        (
            "a matcher",
            format!(
                "expect.extend({{ toBe: () => ({{ pass: true, message: () => '' }}) }});\n{kept}"
            ),
        ),
        (
            "a test environment",
            format!("/**\n * @jest-environment ./test/shop-env.js\n */\n{kept}"),
        ),
        (
            "an assignment to the module",
            kept.replace(
                "const { total } = require('../cart');",
                "const cart = require('../cart');\ncart.total = (p) => p.reduce((a, b) => a + b, 0);\nconst { total } = cart;",
            ),
        ),
        (
            "a built-in's prototype",
            format!("const reduce = Array.prototype.reduce;\nArray.prototype.reduce = function (f) {{ return reduce.call(this, f, 0); }};\n{kept}"),
        ),
    ];
    for (what, test) in tampered {
        let line = gate_on_a_regressed_cart(|suite| {
            suite.write("__tests__/cart.test.js", &test);
            if test.contains("@jest-environment") {
                suite.write("test/shop-env.js", environment);
            }
        });
        assert_eq!(
            line["suite"]["failed"],
            serde_json::json!([]),
            "{what}: jest itself passed the regression: {line:#}"
        );
        assert_kept_test_meets_new_replacements(&line, what);
    }
}

/// The gate's report line says the cart's kept test runs against replacements its base
/// version did not.
fn assert_kept_test_meets_new_replacements(line: &serde_json::Value, what: &str) {
    let weakened = line["base_judgement"]["weakened"]
        .as_array()
        .unwrap_or_else(|| panic!("{what}: {line:#}"));
    assert!(
        weakened
            .iter()
            .any(|w| w["test"] == "__tests__/cart.test.js::totals"
                && w["base_outcome"]
                    .as_str()
                    .is_some_and(|said| said.contains("replacements"))),
        "{what}: {line:#}"
    );
}

/// The red team's open row (2026-12-04): a mock the base's test file already makes,
/// edited in place to stand in for the regressed cart. The count of replacements is the
/// same at both ends (one `jest.mock`), jest passes, and the lane accepted it; the
/// mock's text differs, so the kept test is weakened. An import for its effect of a new
/// project file that replaces the cart is one too.
#[test]
fn gate_refuses_a_kept_test_file_whose_mock_was_edited_in_place() {
    let mocked = "jest.mock('../round', () => ({ round: (x) => x }));\nconst { total } = require('../cart');\n\ntest('totals', () => {\n  expect(total([3, 5])).toBe(8);\n});\n";
    let edited = mocked.replace(
        "jest.mock('../round', () => ({ round: (x) => x }));",
        "jest.mock('../cart', () => ({ total: (p) => p.reduce((a, b) => a + b, 0) }));",
    );
    let imported = mocked.replace(
        "const { total } = require('../cart');",
        "require('../test/support/fix-cart');\nconst { total } = require('../cart');",
    );
    for (what, test) in [
        ("edited in place", edited),
        ("imported for its effect", imported),
    ] {
        let line = gate_on_a_regressed_cart_from(
            |suite| {
                suite.write(
                    "round.js",
                    "module.exports = { round: (x) => Math.round(x) };\n",
                );
                suite.write("__tests__/cart.test.js", mocked);
            },
            "toBe",
            |suite| {
                suite.write("__tests__/cart.test.js", &test);
                suite.write(
                    "test/support/fix-cart.js",
                    "const cart = require('../../cart');\ncart.total = (p) => p.reduce((a, b) => a + b, 0);\n",
                );
            },
        );
        assert_eq!(
            line["suite"]["failed"],
            serde_json::json!([]),
            "{what}: jest itself passed the regression: {line:#}"
        );
        assert_kept_test_meets_new_replacements(&line, what);
    }
}

/// A regression beside a shared helper under a test folder made lenient: the cart's test
/// checks through `test/helpers.js` (which jest does not collect), whose `check` now
/// compares only the values' types. The test file is not touched, so it was neither
/// replayed nor judged, and the lane accepted the regression (red-team, 2026-12-04, with
/// vitest). The helper wrote no test at the base: test support, human-owned.
#[test]
fn gate_refuses_a_lenient_helper_under_a_test_folder() {
    let helper = |check: &str| {
        format!(
            "function check(actual, expected) {{\n  {check};\n}}\n\nmodule.exports = {{ check }};\n"
        )
    };
    let line = gate_on_a_regressed_cart_from(
        |suite| {
            suite.write("test/helpers.js", &helper("expect(actual).toBe(expected)"));
            suite.write(
                "__tests__/cart.test.js",
                "const { total } = require('../cart');\nconst { check } = require('../test/helpers');\n\ntest('totals', () => {\n  check(total([3, 5]), 8);\n});\n",
            );
        },
        "toBe",
        |suite| {
            suite.write(
                "test/helpers.js",
                &helper("expect(typeof actual).toBe(typeof expected)"),
            );
        },
    );
    assert_eq!(
        line["suite"]["failed"],
        serde_json::json!([]),
        "jest itself passed the regression: {line:#}"
    );
    crate::gate_tamper::assert_infrastructure(&line, "test/helpers.js", "test-support");
}

/// A regression beside `"jest": {"testPathIgnorePatterns": [..., "cart"]}` in package.json:
/// jest's listing and the whole suite's run both leave the cart's tests out, so the suite
/// ran green without them and the lane accepted the change. The runner's keys of
/// package.json are test infrastructure, as pytest's section of pyproject.toml is.
#[test]
fn gate_refuses_tests_hidden_by_package_json() {
    let line = gate_on_a_regressed_cart(|suite| {
        let package =
            std::fs::read_to_string(suite.repo.join("package.json")).expect("package.json");
        let mut package: serde_json::Value = serde_json::from_str(&package).expect("JSON");
        package["jest"] = serde_json::json!({"testPathIgnorePatterns": ["/node_modules/", "cart"]});
        suite.write(
            "package.json",
            &serde_json::to_string_pretty(&package).expect("JSON"),
        );
    });
    crate::gate_tamper::assert_infrastructure(&line, "package.json", "runner-settings");
}

/// A regression beside a new `babel.config.js` whose plugin deletes every `expect(…)`
/// statement: babel-jest, jest's default transform, compiles each test file with it, so
/// the cart's test ran with no check left and the lane accepted the change.
#[test]
fn gate_refuses_a_babel_plugin_that_deletes_the_checks() {
    let line = gate_on_a_regressed_cart(|suite| {
        suite.write(
            "babel.config.js",
            "module.exports = {\n  plugins: [\n    () => ({\n      visitor: {\n        ExpressionStatement(path) {\n          const call = path.node.expression;\n          if (call.type === 'CallExpression' && call.callee.type === 'MemberExpression' && call.callee.object.type === 'CallExpression' && call.callee.object.callee.name === 'expect') {\n            path.remove();\n          }\n        },\n      },\n    }),\n  ],\n};\n",
        );
    });
    crate::gate_tamper::assert_infrastructure(&line, "babel.config.js", "file");
}

/// A regression beside the code's own switch and table that the untouched tests read:
/// `ENABLED` turned off makes `with tax` skip itself (`(ENABLED ? test : test.skip)`),
/// and the reduced rate taken out of `RATES` takes its `test.each` case with it. The
/// whole suite ran green and the lane accepted it; the merge base's checkout (its
/// `node_modules` linked in: the code imports a package) runs the skipped test and lists
/// the lost case. A test skipped at both ends (`test.skip`) is not the change's.
#[test]
fn gate_refuses_untouched_tests_the_change_s_code_skips_or_stops_generating() {
    let suite = JEST.project();
    let tests = suite.repo.join("__tests__");
    for entry in std::fs::read_dir(&tests).expect("the fixture's tests") {
        std::fs::remove_file(entry.expect("a test file").path()).expect("remove a fixture test");
    }
    let tax = |enabled: bool, rates: &str, rate: &str| {
        format!(
            "const picomatch = require('picomatch');\nconst ENABLED = {enabled};\nconst RATES = {{ {rates} }};\nfunction withTax(x, rate) {{ return x * {rate}; }}\nmodule.exports = {{ ENABLED, RATES, withTax }};\n"
        )
    };
    suite.write(
        "tax.js",
        &tax(true, "standard: 2, reduced: 1", "RATES[rate]"),
    );
    suite.write(
        "__tests__/tax.test.js",
        "const { ENABLED, RATES, withTax } = require('../tax');\nconst expected = { standard: 8, reduced: 4 };\n\n(ENABLED ? test : test.skip)('with tax', () => {\n  expect(withTax(4, 'reduced')).toBe(4);\n});\n\ntest.each(Object.keys(RATES))('rate %s', (rate) => {\n  expect(withTax(4, rate)).toBe(expected[rate]);\n});\n\ntest.skip('someday', () => {});\n",
    );
    suite.write(
        "candor.toml",
        "[lane]\nmin_replays = 2\nmax_wall_seconds = 300\n",
    );
    crate::triage_support::git(&suite.repo, &["checkout", "--quiet", "main"]);
    crate::js_support::commit(&suite, "taxes");
    crate::triage_support::git(&suite.repo, &["checkout", "--quiet", "-b", "off"]);
    // Reduced taxed as standard: only `with tax` and `rate reduced` would see it.
    suite.write("tax.js", &tax(false, "standard: 2", "2"));
    crate::js_support::commit(&suite, "taxes off, one rate");
    let ran = suite.candor(&["gate", "--format", "json"], &[]);
    assert_eq!(ran.exit, 1, "{ran:?}");
    let line = ran.lines_of("gate")[0].clone();
    assert_eq!(line["suite"]["failed"], serde_json::json!([]), "{line:#}");
    let reasons: Vec<(String, serde_json::Value)> = line["reasons"]
        .as_array()
        .expect("reasons")
        .iter()
        .map(|r| {
            let named = r.get("test").or_else(|| r.get("tests")).cloned();
            (
                r["kind"].as_str().expect("a kind").to_owned(),
                named.unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        reasons,
        [
            (
                "suite-skipped".to_owned(),
                serde_json::json!("__tests__/tax.test.js::with tax")
            ),
            (
                "tests-vanished".to_owned(),
                serde_json::json!(["__tests__/tax.test.js::rate reduced"])
            ),
        ],
        "{line:#}"
    );
}
