//! One test, one id, whichever way its results arrive (issue #12 item 1): real pytest and
//! cargo projects built in temp dirs, run through `candor test`, `candor compare` and
//! `candor ingest`, must name each test the way its runner does.

use crate::triage_support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use triage_support::{Suite, TODAY, empty, fingerprint, git};

const BASE: &str = "tests/test_base.py::TestTimestampSigner";
const TIMED: &str = "tests/test_timed.py::TestTimestampSigner";
const SERIALIZER: &str = "tests/test_serializer.py::TestTimestampSigner";

/// A src-layout library installed in editable mode into a virtualenv of its own, and a
/// test class defined in `tests/test_base.py` that pytest collects three times: there,
/// subclassed in `tests/test_timed.py` (with the key that the library gets wrong) and
/// imported as is into `tests/test_serializer.py`. Only the `test_timed.py` copy fails.
///
/// The editable install is the `.pth` file `pip install -e .` writes for a src layout
/// (setuptools' `__editable__.NAME.pth` holding the `src` path): pip cannot build the
/// editable wheel offline here (no `wheel` package), and the `.pth` is what the
/// interpreter reads either way. The venv is outside the repository, as a user's usually
/// is, and sees the host's site-packages for pytest.
fn inherited_class_project() -> Suite {
    let suite = empty();
    let venv = suite.temp.path().join("venv");
    run(Command::new("python3")
        .args(["-m", "venv", "--system-site-packages", "--without-pip"])
        .arg(&venv));
    let python = venv.join("bin/python");
    let purelib = run(Command::new(&python).args([
        "-c",
        "import sysconfig; print(sysconfig.get_paths()['purelib'])",
    ]));
    std::fs::write(
        Path::new(purelib.trim()).join("__editable__.timed-0.1.pth"),
        format!("{}\n", suite.repo.join("src").display()),
    )
    .expect("the editable install's .pth");

    suite.write(
        "pyproject.toml",
        "[build-system]\nrequires = [\"setuptools>=64\"]\nbuild-backend = \"setuptools.build_meta\"\n\n[project]\nname = \"timed\"\nversion = \"0.1\"\n\n[tool.setuptools.packages.find]\nwhere = [\"src\"]\n",
    );
    suite.write(
        "src/timed/__init__.py",
        "def sign(value, key):\n    if key == \"timed\":\n        return value + \".bad\"\n    return value + \".\" + key\n\n\ndef unsign(signed, key):\n    return signed.rsplit(\".\" + key, 1)[0]\n",
    );
    suite.write(
        "tests/test_base.py",
        "from timed import sign, unsign\n\n\nclass TestTimestampSigner:\n    key = \"base\"\n\n    def test_signer(self):\n        assert unsign(sign(\"x\", self.key), self.key) == \"x\"\n\n    def test_ok(self):\n        assert True\n",
    );
    suite.write(
        "tests/test_timed.py",
        "from test_base import TestTimestampSigner as _Base\n\n\nclass TestTimestampSigner(_Base):\n    key = \"timed\"\n",
    );
    suite.write(
        "tests/test_serializer.py",
        "from test_base import TestTimestampSigner  # noqa: F401 (collected here too)\n",
    );
    // A known flake of *another* test with the same shape of failure: before the fix the
    // three copies were one test named after the defining file, and this fingerprint
    // explained the real failure away.
    // Every branch's runs are counted: the runs here are on the change's branch, and
    // what is checked is how they are stored, not which branches tiers count.
    let mut config = format!(
        "[reliability]\nbranches = [\"**\"]\n\n[runner]\nkind = \"pytest\"\ncommand = [\"{}\", \"-m\", \"pytest\"]\n\n",
        python.display()
    );
    config.push_str(&fingerprint(
        "FP-001",
        &format!("{BASE}::test_signer"),
        "AssertionError",
        ".*",
        "tests/test_base.py:8",
        "pytest",
    ));
    suite.write("candor.toml", &config);
    suite.write(".gitignore", ".candor/\n__pycache__/\n*.egg-info/\n");
    git(&suite.repo, &["init", "--quiet", "-b", "main"]);
    git(&suite.repo, &["add", "-A"]);
    git(&suite.repo, &["commit", "--quiet", "-m", "the library"]);
    git(&suite.repo, &["checkout", "--quiet", "-b", "change"]);
    git(
        &suite.repo,
        &["commit", "--quiet", "--allow-empty", "-m", "a change"],
    );
    suite
}

fn run(command: &mut Command) -> String {
    let output = command.output().expect("the command starts");
    assert!(output.status.success(), "{command:?}: {output:?}");
    String::from_utf8(output.stdout).expect("utf-8")
}

/// Every stored test's id and run count, from `candor tests`.
fn stored_tests(suite: &Suite) -> BTreeMap<String, u64> {
    let listed = suite.candor(&["tests", "--format", "json"], &[]);
    assert_eq!(listed.exit, 0, "{listed:?}");
    listed
        .lines_of("test")
        .iter()
        .map(|t| {
            (
                t["id"].as_str().expect("an id").to_owned(),
                t["runs"].as_u64().expect("a run count"),
            )
        })
        .collect()
}

fn six_ids() -> Vec<String> {
    let mut ids: Vec<String> = [BASE, SERIALIZER, TIMED]
        .iter()
        .flat_map(|class| [format!("{class}::test_ok"), format!("{class}::test_signer")])
        .collect();
    ids.sort();
    ids
}

/// Issue #12 item 1: with `file=` naming the defining module, the three collected
/// copies were one test with three attempts, and the failure of one copy was shown as
/// the known flake of another.
#[test]
fn inherited_test_classes_are_distinct_tests_under_their_collected_module() {
    let suite = inherited_class_project();
    let ran = suite.candor(&["test", "--format", "json"], &[("CANDOR_TODAY", TODAY)]);
    assert_ne!(ran.exit, 2, "the suite ran: {ran:?}");
    let run = &ran.lines_of("test-run")[0];
    assert_eq!(
        (&run["tests"], &run["red"]),
        (&6.into(), &1.into()),
        "{ran:?}"
    );
    let verdicts = ran.lines_of("verdict");
    assert_eq!(verdicts.len(), 1, "{ran:?}");
    assert_eq!(
        verdicts[0]["test"],
        format!("{TIMED}::test_signer"),
        "{ran:?}"
    );
    assert!(
        ["regression", "unverified"].contains(&verdicts[0]["verdict"].as_str().unwrap_or("")),
        "not someone else's known flake: {ran:?}"
    );
    let stored = stored_tests(&suite);
    assert_eq!(stored.keys().cloned().collect::<Vec<_>>(), six_ids());

    // The same suite's JUnit as pytest writes it with `file=` (xunit1, the defining
    // file) and without (xunit2, pytest's default), ingested: the same six ids.
    let python = suite.temp.path().join("venv/bin/python");
    for family in ["xunit1", "xunit2"] {
        let report = suite.temp.path().join(format!("{family}.xml"));
        let output = Command::new(&python)
            .args([
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "-p",
                "no:randomly",
                "-o",
            ])
            .arg(format!("junit_family={family}"))
            .arg(format!("--junitxml={}", report.display()))
            .current_dir(&suite.repo)
            .output()
            .expect("pytest runs");
        assert_eq!(output.status.code(), Some(1), "one test fails: {output:?}");
        let xml = std::fs::read_to_string(&report).expect("the report");
        assert_eq!(
            xml.contains("file=\"tests/test_base.py\""),
            family == "xunit1",
            "{xml}"
        );
        let report = report.display().to_string();
        let ingested = suite.candor(&["ingest", &report, "--format", "json"], &[]);
        assert_eq!(ingested.exit, 0, "{ingested:?}");
    }
    let stored = stored_tests(&suite);
    assert_eq!(stored.keys().cloned().collect::<Vec<_>>(), six_ids());
    assert!(stored.values().all(|&runs| runs == 3), "{stored:?}");
    let shown = suite.candor(
        &["show", &format!("{TIMED}::test_signer"), "--format", "json"],
        &[],
    );
    let outcomes: Vec<String> = shown
        .json()
        .iter()
        .filter_map(|e| e["outcome"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(outcomes, ["fail", "fail", "fail"], "{shown:?}");
}

/// `candor compare` selects the test by that id on both sides and finds it there.
#[test]
fn compare_finds_an_inherited_test_by_its_collected_id() {
    let suite = inherited_class_project();
    let test = format!("{TIMED}::test_signer");
    let compared = suite.candor(
        &["compare", &test, "--seed", "7", "--format", "json"],
        &[("CANDOR_TODAY", TODAY)],
    );
    assert_ne!(compared.exit, 2, "{compared:?}");
    let line = &compared.lines_of("compare")[0];
    assert_eq!(line["test"], test.as_str());
    for side in ["base", "branch"] {
        assert!(
            line[side]["runs"].as_u64() > Some(0),
            "{side}: {compared:?}"
        );
        assert_eq!(
            line[side]["runs"], line[side]["failures"],
            "{side}: {compared:?}"
        );
    }
}

/// Issue #12 item 1, Rust: `cargo nextest` names a library's test
/// `triage-fixture::tests::refund`; `cargo test`'s own JSON names it `tests::refund`.
/// Ingested with `--crate`, the JSON's tests are the tests nextest ran, not two more.
#[test]
fn libtest_json_with_its_crate_is_the_same_tests_as_nextest() {
    let suite = triage_support::suite("cargo");
    // Every branch's runs count: the runs are on the change's branch.
    suite.write(
        "candor.toml",
        "[reliability]\nbranches = [\"**\"]\n\n[runner]\nkind = \"nextest\"\n",
    );
    suite.git_with_change();
    let ran = suite.candor(&["test", "--format", "json"], &[]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    let nextest: Vec<String> = stored_tests(&suite).into_keys().collect();
    assert_eq!(
        nextest,
        [
            "triage-fixture::tests::payment_webhook",
            "triage-fixture::tests::refund"
        ]
    );

    let output = Command::new("cargo")
        .args([
            "test",
            "--quiet",
            "--",
            "-Z",
            "unstable-options",
            "--format",
            "json",
        ])
        .env("RUSTC_BOOTSTRAP", "1")
        .current_dir(&suite.repo)
        .output()
        .expect("cargo runs");
    assert!(output.status.success(), "{output:?}");
    let json = suite.temp.path().join("cargo-test.jsonl");
    std::fs::write(&json, &output.stdout).expect("the report");
    let json = json.display().to_string();

    // With its crate: the same two tests nextest ran, now with two runs each.
    let bound = suite.candor(
        &[
            "ingest",
            &json,
            "--crate",
            "triage-fixture",
            "--format",
            "json",
        ],
        &[],
    );
    assert_eq!(bound.exit, 0, "{bound:?}");
    assert_eq!(
        bound.lines_of("ingest")[0]["warnings"],
        serde_json::json!([])
    );
    let stored = stored_tests(&suite);
    assert_eq!(
        stored.keys().cloned().collect::<Vec<_>>(),
        nextest,
        "{stored:?}"
    );
    assert!(stored.values().all(|&runs| runs == 2), "{stored:?}");

    // Without it (into another history: the same bytes are one run in this one), named
    // as libtest names them, and said so.
    let other = suite.temp.path().join("other.db");
    let other = other.display().to_string();
    let bare = suite.candor(
        &["ingest", &json, "--format", "json"],
        &[("CANDOR_DB", other.as_str())],
    );
    assert_eq!(bare.exit, 0, "{bare:?}");
    let warnings = bare.lines_of("ingest")[0]["warnings"].to_string();
    assert!(warnings.contains("--crate NAME"), "{bare:?}");

    // A binary is named only for libtest JSON: nextest's own JUnit is refused with it,
    // and nothing is stored.
    let junit = suite.temp.path().join("nextest.xml");
    std::fs::write(
        &junit,
        "<testsuites><testsuite name=\"triage-fixture\"><testcase classname=\"triage-fixture\" name=\"tests::refund\"/></testsuite></testsuites>",
    )
    .expect("a report");
    let junit = junit.display().to_string();
    let refused = suite.candor(&["ingest", &junit, "--binary", "triage-fixture"], &[]);
    assert_eq!(refused.exit, 2, "{refused:?}");
    assert!(
        refused.stderr.contains("nextest.xml:1:1: this is junit"),
        "{refused:?}"
    );
    assert_eq!(stored_tests(&suite), stored);
}
