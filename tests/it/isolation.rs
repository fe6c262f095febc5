//! Issue #12, items 2 and 3, on real projects in temp dirs: each side of a comparison runs
//! its own code (a src-layout project installed editable into a venv the test makes), and
//! a runner that could not run (a collection error, a missing module, no report) is exit 2
//! with the runner's own lines quoted, never a red test, in every command.
//!
//! The editable install: `pip install -e . --no-build-isolation --no-deps` needs the
//! `wheel` package for a pyproject build, which the machine's Python lacks and a test must
//! not download, so the venv is made editable with `python setup.py develop`: the same
//! editable install pip made for years (`easy-install.pth` in site-packages naming the
//! checkout's `src/`), and exactly the mechanism that made the merge base import the
//! branch's code.

use crate::triage_support;

use std::path::{Path, PathBuf};
use std::process::Command;

use triage_support::{Suite, empty, git};

const TEST: &str = "tests/test_calc.py::test_add";

fn commit_all(repo: &Path, message: &str) {
    git(repo, &["add", "-A"]);
    git(repo, &["commit", "--quiet", "-m", message]);
}

fn run_ok(program: &Path, args: &[&str], dir: &Path) {
    let output = Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("{} runs: {e}", program.display()));
    assert!(
        output.status.success(),
        "{} {args:?}: {}\n{}",
        program.display(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A src-layout project `calc` on `main`, installed editable into `<temp>/venv` from the
/// main checkout, and a branch `change` that breaks `calc.add`. Returns the suite and
/// the venv's python.
fn editable_project() -> (Suite, PathBuf) {
    let suite = empty();
    suite.write(
        "pyproject.toml",
        "[build-system]\nrequires = [\"setuptools>=61\"]\nbuild-backend = \"setuptools.build_meta\"\n\n[project]\nname = \"calc\"\nversion = \"0.1.0\"\n\n[tool.setuptools.packages.find]\nwhere = [\"src\"]\n",
    );
    suite.write("setup.py", "from setuptools import setup\n\nsetup()\n");
    suite.write("src/calc/__init__.py", "def add(a, b):\n    return a + b\n");
    suite.write(
        "tests/test_calc.py",
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n",
    );
    suite.write(
        ".gitignore",
        ".candor/\n__pycache__/\n*.egg-info/\nbuild/\n",
    );
    let venv = suite.temp.path().join("venv");
    run_ok(
        Path::new("python3"),
        &[
            "-m",
            "venv",
            "--system-site-packages",
            &venv.display().to_string(),
        ],
        &suite.repo,
    );
    let python = venv.join("bin/python");
    run_ok(&python, &["setup.py", "--quiet", "develop"], &suite.repo);
    suite.write(
        "candor.toml",
        &format!(
            "[runner]\nkind = \"pytest\"\ncommand = [{}, \"-m\", \"pytest\"]\n",
            toml::Value::String(python.display().to_string())
        ),
    );
    git(&suite.repo, &["init", "--quiet", "-b", "main"]);
    commit_all(&suite.repo, "calc");
    git(&suite.repo, &["checkout", "--quiet", "-b", "change"]);
    // The branch's own bug: a test that fails only because of this change.
    suite.write("src/calc/__init__.py", "def add(a, b):\n    return a - b\n");
    commit_all(&suite.repo, "break add");
    (suite, python)
}

/// Issue #12 item 2: with the editable install pointing at the main checkout, the merge
/// base's worktree imported the branch's broken `calc`, and compare said `fails-both` and
/// stored fake failures against the base. Each side now runs its own code.
#[test]
fn compare_runs_the_merge_base_s_own_code_under_an_editable_install() {
    let (suite, _) = editable_project();
    let base = git(&suite.repo, &["rev-parse", "main"]);
    let ran = suite.candor(
        &[
            "compare", TEST, "--seed", "3", "--runs", "6", "--format", "json",
        ],
        &[],
    );
    let lines = ran.lines_of("compare");
    assert_eq!(lines.len(), 1, "{ran:?}");
    let line = &lines[0];
    assert!(
        matches!(
            line["verdict"].as_str(),
            Some("deterministic-regression" | "branch-worse")
        ),
        "{line:#}"
    );
    assert_eq!(ran.exit, 1, "{ran:?}");
    assert_eq!(line["base"]["failures"], 0, "{line:#}");
    assert!(line["base"]["runs"].as_u64() > Some(0), "{line:#}");
    assert_eq!(
        line["branch"]["failures"], line["branch"]["runs"],
        "{line:#}"
    );

    // The base's runs are stored as passes against the base commit.
    let shown = suite.candor(&["show", TEST, "--format", "json"], &[]);
    let executions = shown.json();
    let on_base: Vec<&serde_json::Value> = executions
        .iter()
        .filter(|e| e["commit"] == base.as_str())
        .collect();
    assert!(!on_base.is_empty(), "{shown:?}");
    assert!(on_base.iter().all(|e| e["outcome"] == "pass"), "{shown:?}");
}

/// Issue #12 item 2: a run that imported the other side's code is refused, naming the
/// file, even when the failure's frames do not show it (the assertion is in the test)
/// and even when something in the project puts the other tree before PYTHONPATH.
#[test]
fn a_side_that_imported_the_other_side_s_code_is_refused_not_judged() {
    let (suite, _) = editable_project();
    // A conftest that puts a fixed checkout first on sys.path, after PYTHONPATH was read:
    // in the merge base's worktree it names the main checkout.
    git(&suite.repo, &["checkout", "--quiet", "main"]);
    suite.write(
        "tests/conftest.py",
        "import os\nimport sys\n\nsys.path.insert(0, os.environ[\"CALC_SRC\"])\n",
    );
    commit_all(&suite.repo, "a conftest that pins the source");
    git(&suite.repo, &["checkout", "--quiet", "change"]);
    git(&suite.repo, &["merge", "--quiet", "--no-edit", "main"]);
    let main_src = suite.repo.join("src");
    let ran = suite.candor(
        &["compare", TEST, "--seed", "3", "--runs", "4"],
        &[("CALC_SRC", &main_src.display().to_string())],
    );
    assert_eq!(ran.exit, 2, "{ran:?}");
    assert!(
        ran.stderr.contains("the base (")
            && ran
                .stderr
                .contains("could not be measured: the comparison has no verdict"),
        "{ran:?}"
    );
    assert!(
        ran.stderr.contains("the imported module `calc`")
            && ran
                .stderr
                .contains(&main_src.join("calc/__init__.py").display().to_string()),
        "{ran:?}"
    );
    assert!(
        ran.stderr.contains("hint: each side must run its own code"),
        "{ran:?}"
    );
    assert!(!ran.stdout.contains("fails-both"), "{ran:?}");
    // Nothing was stored against either commit.
    let shown = suite.candor(&["show", TEST, "--format", "json"], &[]);
    assert_ne!(shown.exit, 0, "no run of the test is stored: {shown:?}");
}

/// A plain pytest project (root-level package) on `main`, with a branch `change`.
fn plain_project() -> Suite {
    let suite = empty();
    suite.write(
        "pyproject.toml",
        "[tool.pytest.ini_options]\npythonpath = [\".\"]\n",
    );
    suite.write("app/__init__.py", "def one():\n    return 1\n");
    suite.write(
        "tests/test_app.py",
        "from app import one\n\n\ndef test_one():\n    assert one() == 1\n",
    );
    suite.write(".gitignore", ".candor/\n__pycache__/\n");
    git(&suite.repo, &["init", "--quiet", "-b", "main"]);
    commit_all(&suite.repo, "app");
    git(&suite.repo, &["checkout", "--quiet", "-b", "change"]);
    suite
}

/// Issue #12 item 3: a collection error (an ImportError in a test module) is not a red
/// test in any command: exit 2, pytest's own lines quoted, nothing stored.
#[test]
fn a_collection_error_is_exit_2_quoting_pytest_in_every_command() {
    let suite = plain_project();
    suite.write(
        "tests/test_app.py",
        "import no_such_module\nfrom app import one\n\n\ndef test_one():\n    assert one() == 1\n",
    );
    commit_all(&suite.repo, "a broken import");
    let said = "ModuleNotFoundError: No module named 'no_such_module'";

    let ran = suite.candor(&["test"], &[]);
    assert_eq!(ran.exit, 2, "{ran:?}");
    assert!(
        ran.stderr
            .contains("pytest could not run: pytest exited with code 2"),
        "{ran:?}"
    );
    assert!(ran.stderr.contains(said), "{ran:?}");
    assert!(ran.stderr.contains("this is not a red test"), "{ran:?}");
    let stored = suite.candor(&["tests", "--format", "json"], &[]);
    assert!(
        stored.exit != 0 || stored.json().is_empty(),
        "nothing stored: {stored:?}"
    );

    let id = "tests/test_app.py::test_one";
    let ran = suite.candor(&["compare", id, "--seed", "1", "--runs", "4"], &[]);
    assert_eq!(ran.exit, 2, "{ran:?}");
    assert!(ran.stderr.contains("the branch ("), "{ran:?}");
    assert!(ran.stderr.contains(said), "{ran:?}");
    assert!(!ran.stdout.contains("fails-both"), "{ran:?}");

    let ran = suite.candor(&["repro", id, "--seed", "1", "--runs", "2"], &[]);
    assert_eq!(ran.exit, 2, "{ran:?}");
    assert!(ran.stderr.contains(said), "{ran:?}");
    assert!(!ran.stdout.contains("repro not confirmed"), "{ran:?}");

    let ran = suite.candor(&["order", id, "--seed", "1"], &[]);
    assert_eq!(ran.exit, 2, "{ran:?}");
    assert!(ran.stderr.contains(said), "{ran:?}");

    let ran = suite.candor(&["gate"], &[]);
    assert_eq!(ran.exit, 2, "{ran:?}");
    assert!(ran.stderr.contains(said), "{ran:?}");
    assert!(!ran.stdout.contains("replays failed"), "{ran:?}");
}

/// Issue #12 item 3: a runner that writes no report (a conftest that cannot import, a
/// command that stops before its report) is exit 2 with its own lines, not "the runner
/// wrote no results" alone.
#[test]
fn a_missing_report_is_exit_2_quoting_the_runner() {
    let suite = plain_project();
    suite.write("conftest.py", "import missing_plugin_module\n");
    let ran = suite.candor(&["test"], &[]);
    assert_eq!(ran.exit, 2, "{ran:?}");
    assert!(
        ran.stderr
            .contains("ModuleNotFoundError: No module named 'missing_plugin_module'"),
        "{ran:?}"
    );

    let suite = plain_project();
    suite.write(
        "candor.toml",
        "[runner]\nkind = \"command\"\ncommand = [\"python3\", \"-c\", \"import sys; sys.stderr.write('runner: the database is not reachable\\\\n'); sys.exit(1)\", \"{report}\"]\n",
    );
    // The runner set up in the work tree, not committed: the explicit local override.
    let ran = suite.candor(&["test", "--policy", "worktree"], &[]);
    assert_eq!(ran.exit, 2, "{ran:?}");
    assert!(
        ran.stderr
            .contains("| runner: the database is not reachable"),
        "{ran:?}"
    );
}

/// Issue #12 item 3: an unknown test id on the merge base is the missing test it is, with
/// pytest's own line.
#[test]
fn an_unknown_test_on_the_base_quotes_pytest() {
    let suite = plain_project();
    suite.write("tests/test_new.py", "def test_new():\n    assert True\n");
    commit_all(&suite.repo, "a new test");
    let ran = suite.candor(
        &["compare", "tests/test_new.py::test_new", "--seed", "1"],
        &[],
    );
    assert_eq!(ran.exit, 2, "{ran:?}");
    assert!(
        ran.stderr
            .contains("the runner ran no test `tests/test_new.py::test_new` on the base"),
        "{ran:?}"
    );
    assert!(
        ran.stderr
            .contains("| ERROR: file or directory not found: tests/test_new.py::test_new")
            || ran.stderr.contains("| ERROR: not found:"),
        "{ran:?}"
    );
}

/// A cargo package `foo` 0.2 whose dev-dependency `helper` (a path dependency) depends
/// on a copy of `foo` 0.1 in another folder: two packages named `foo` in the graph, so
/// `cargo test -p foo` is ambiguous. On `main`, committed; HEAD is a branch `change`.
fn two_foos(kind: &str) -> Suite {
    let suite = empty();
    suite.write(
        "Cargo.toml",
        "[package]\nname = \"foo\"\nversion = \"0.2.0\"\nedition = \"2021\"\n\n[dev-dependencies]\nhelper = { path = \"deps/helper\" }\n\n[workspace]\nexclude = [\"deps\"]\n",
    );
    suite.write(
        "src/lib.rs",
        "pub fn double(x: i32) -> i32 {\n    x * 2\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn doubles() {\n        assert_eq!(super::double(2), 4);\n    }\n}\n",
    );
    suite.write(
        "tests/api.rs",
        "#[test]\nfn doubles_from_outside() {\n    assert_eq!(foo::double(3), 6);\n    assert_eq!(helper::one(), 1);\n}\n",
    );
    suite.write(
        "deps/helper/Cargo.toml",
        "[package]\nname = \"helper\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nfoo = { path = \"../foo-0.1\" }\n",
    );
    suite.write(
        "deps/helper/src/lib.rs",
        "pub fn one() -> i32 {\n    foo::one()\n}\n",
    );
    suite.write(
        "deps/foo-0.1/Cargo.toml",
        "[package]\nname = \"foo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    suite.write(
        "deps/foo-0.1/src/lib.rs",
        "pub fn one() -> i32 {\n    1\n}\n",
    );
    // One build folder for both sides, outside the repository.
    let target = toml::Value::String(suite.temp.path().join("target").display().to_string());
    suite.write(
        ".cargo/config.toml",
        &format!("[build]\ntarget-dir = {target}\n"),
    );
    suite.write("candor.toml", &format!("[runner]\nkind = \"{kind}\"\n"));
    suite.write(".gitignore", ".candor/\nCargo.lock\n");
    git(&suite.repo, &["init", "--quiet", "-b", "main"]);
    commit_all(&suite.repo, "foo");
    git(&suite.repo, &["checkout", "--quiet", "-b", "change"]);
    suite
}

const BUILD_ERROR: &str = "pub fn double(x: i32) -> i32 {\n    x * undefined_factor\n}\n";

/// Issue #12 item 3: with two versions of the crate in the graph, `cargo test -p foo`
/// is ambiguous; candor names the package `foo@0.2.0`, so `test` and `compare` run the
/// right one, and a build error is exit 2 quoting rustc.
#[test]
fn cargo_runs_the_right_package_and_a_build_error_quotes_rustc() {
    let suite = two_foos("cargo");
    let ran = suite.candor(&["test", "--format", "json"], &[]);
    assert_eq!(ran.exit, 0, "{ran:?}");
    let run = &ran.lines_of("test-run")[0];
    assert_eq!(
        (&run["tests"], &run["red"]),
        (&2.into(), &0.into()),
        "{ran:?}"
    );

    // The branch's own bug, in the library: the base passes, the branch fails.
    suite.write(
        "src/lib.rs",
        "pub fn double(x: i32) -> i32 {\n    x * 3\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn doubles() {\n        assert_eq!(super::double(2), 4);\n    }\n}\n",
    );
    commit_all(&suite.repo, "triple instead");
    let ran = suite.candor(
        &[
            "compare",
            "foo::tests::doubles",
            "--seed",
            "1",
            "--runs",
            "3",
            "--format",
            "json",
        ],
        &[],
    );
    let lines = ran.lines_of("compare");
    assert_eq!(lines.len(), 1, "{ran:?}");
    assert_eq!(lines[0]["base"]["failures"], 0, "{ran:?}");
    assert_eq!(
        lines[0]["branch"]["failures"], lines[0]["branch"]["runs"],
        "{ran:?}"
    );
    assert_eq!(ran.exit, 1, "{ran:?}");

    suite.write("src/lib.rs", BUILD_ERROR);
    commit_all(&suite.repo, "a build error");
    let rustc_said = "error[E0425]: cannot find value `undefined_factor` in this scope";
    let ran = suite.candor(&["test"], &[]);
    assert_eq!(ran.exit, 2, "{ran:?}");
    assert!(ran.stderr.contains("cargo could not run"), "{ran:?}");
    assert!(ran.stderr.contains(rustc_said), "{ran:?}");
    assert!(ran.stderr.contains("src/lib.rs:2"), "{ran:?}");
    let ran = suite.candor(
        &[
            "compare",
            "foo::tests::doubles",
            "--seed",
            "1",
            "--runs",
            "3",
        ],
        &[],
    );
    assert_eq!(ran.exit, 2, "{ran:?}");
    assert!(ran.stderr.contains("the branch ("), "{ran:?}");
    assert!(ran.stderr.contains(rustc_said), "{ran:?}");
    assert!(!ran.stdout.contains("fails-both"), "{ran:?}");
}

/// Issue #12 item 3: the gate's replays (nextest) run the right package when the graph
/// holds two versions of it, and a build error in a touched test is exit 2 quoting rustc,
/// never "3 of 3 replays failed".
#[test]
fn the_gate_replays_the_right_package_and_a_build_error_quotes_rustc() {
    let suite = two_foos("nextest");
    suite.write(
        "tests/api.rs",
        "#[test]\nfn doubles_from_outside() {\n    assert_eq!(foo::double(3), 6);\n    assert_eq!(helper::one(), 1);\n}\n\n#[test]\nfn doubles_zero() {\n    assert_eq!(foo::double(0), 0);\n}\n",
    );
    commit_all(&suite.repo, "one more test");
    let ran = suite.candor(&["gate", "--format", "json"], &[]);
    let report: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(suite.repo.join("score-report.json"))
            .unwrap_or_else(|e| panic!("a score report ({e}): {ran:?}")),
    )
    .unwrap_or_else(|e| panic!("JSON: {e}"));
    let runs = report["runs"].as_array().cloned().unwrap_or_default();
    assert!(!runs.is_empty(), "{report:#}");
    assert!(runs.iter().all(|r| r["outcome"] == "pass"), "{report:#}");

    suite.write(
        "tests/api.rs",
        "#[test]\nfn doubles_zero() {\n    assert_eq!(foo::double(0), not_defined);\n}\n",
    );
    commit_all(&suite.repo, "a build error in a test");
    let ran = suite.candor(&["gate"], &[]);
    assert_eq!(ran.exit, 2, "{ran:?}");
    assert!(
        ran.stderr
            .contains("error[E0425]: cannot find value `not_defined` in this scope"),
        "{ran:?}"
    );
    assert!(!ran.stdout.contains("replays failed"), "{ran:?}");
}

/// Issue #12 item 3: `candor rerun` of a known flake selects `foo@0.2.0` too, where
/// `-p foo` was ambiguous and the rerun could not run.
#[test]
fn cargo_rerun_runs_the_right_package() {
    let suite = two_foos("cargo");
    let test = "foo::tests::flaky";
    suite.write(
        "src/lib.rs",
        "pub fn double(x: i32) -> i32 {\n    x * 2\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn doubles() {\n        assert_eq!(super::double(2), 4);\n    }\n\n    #[test]\n    fn flaky() {\n        if std::env::var(\"FOO_MODE\").as_deref() == Ok(\"flake\") {\n            panic!(\"flaked on port 4242\");\n        }\n    }\n}\n",
    );
    suite.write(
        "candor.toml",
        &(String::from("[runner]\nkind = \"cargo\"\n\n")
            + &triage_support::fingerprint(
                "FP-001",
                test,
                "panic",
                r"flaked on port \d+",
                "src/lib.rs:15",
                "cargo",
            )),
    );
    suite.tier(test, "trusted");
    // The policy is the merge base's (#14 item 7): the fingerprint and tier land on main.
    git(&suite.repo, &["checkout", "--quiet", "main"]);
    commit_all(&suite.repo, "a known flake");
    git(&suite.repo, &["checkout", "--quiet", "-B", "change"]);
    let today = [("CANDOR_TODAY", triage_support::TODAY)];
    let ran = suite.candor(
        &["test", "--format", "json"],
        &[today[0], ("FOO_MODE", "flake")],
    );
    assert_eq!(ran.exit, 0, "{ran:?}");
    assert_eq!(
        ran.lines_of("verdict")[0]["verdict"],
        "known-flake",
        "{ran:?}"
    );
    let rerun = suite.candor(&["rerun", test, "--format", "json"], &today);
    assert_eq!(rerun.exit, 0, "{rerun:?}");
    let line = &rerun.lines_of("rerun")[0];
    assert_eq!(line["outcome"], "pass", "{rerun:?}");
    let argv = std::fs::read_to_string(
        line["logs"][0]
            .as_str()
            .unwrap_or_else(|| panic!("a log: {rerun:?}")),
    )
    .unwrap_or_else(|e| panic!("the rerun's log: {e}"));
    assert!(argv.contains(r#""-p","foo@0.2.0","--lib""#), "{argv}");
}

/// Issue #12 item 3: a go package that does not build is not a red test named after the
/// package (it was `unverified example.com/gob`, exit 0): exit 2 quoting the compiler.
#[test]
fn a_go_build_failure_is_exit_2_quoting_the_compiler() {
    let suite = empty();
    suite.write("go.mod", "module example.com/gob\n\ngo 1.19\n");
    suite.write("gob.go", "package gob\n\nfunc One() int { return y }\n");
    suite.write(
        "gob_test.go",
        "package gob\n\nimport \"testing\"\n\nfunc TestOne(t *testing.T) {\n\tif One() != 1 {\n\t\tt.Fatal(\"not one\")\n\t}\n}\n",
    );
    suite.write(".gitignore", ".candor/\n");
    git(&suite.repo, &["init", "--quiet", "-b", "main"]);
    commit_all(&suite.repo, "gob");
    let ran = suite.candor(&["test"], &[]);
    assert_eq!(ran.exit, 2, "{ran:?}");
    assert!(ran.stderr.contains("go could not run"), "{ran:?}");
    assert!(
        ran.stderr.contains("| ./gob.go:3:25: undefined: y"),
        "{ran:?}"
    );
    assert!(ran.stderr.contains("[build failed]"), "{ran:?}");
    assert!(!ran.stdout.contains("unverified"), "{ran:?}");
}
