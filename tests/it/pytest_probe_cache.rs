//! `candor test`'s remembered pytest plugin probe (issue #15 item 4, candor's own time
//! around a suite): a remembered answer skips `pytest -VV`, a stale one can neither shuffle
//! a run unrecorded nor make it fail, and contexts that do not opt in (the merge lane's)
//! never read it.

use std::path::Path;

use crate::runner_support;

use candor::runner::probe_cache;
use candor::runner::process::SystemExecutor;
use candor::runner::{self, Adapter, Context, Pytest, RunOptions, RunnerConfig, SeedSupport};
use runner_support::{TIMEOUT, argv_holds, fixture, logs};

fn remembering<'a>(repo: &Path, scratch: &Path, executor: &'a SystemExecutor) -> Context<'a> {
    Context::new(repo, scratch, executor)
        .with_timeout(TIMEOUT, std::time::Duration::from_secs(2))
        .with_remembered_probes()
}

/// Logs of `pytest -VV` a context left in its scratch folder.
fn probes_in(scratch: &Path) -> usize {
    std::fs::read_dir(scratch).map_or(0, |entries| {
        entries
            .flatten()
            .filter(|entry| {
                let path = entry.path();
                path.file_name()
                    .is_some_and(|name| name.to_string_lossy().contains("pytest-version"))
                    && path.extension().is_some_and(|ext| ext == "log")
            })
            .count()
    })
}

fn default_prefix() -> Vec<String> {
    ["python3", "-m", "pytest"].map(str::to_owned).to_vec()
}

#[test]
fn a_remembered_probe_skips_pytest_vv_and_gives_the_same_answer() {
    let fixture = fixture("pytest");
    let executor = SystemExecutor;
    let first_scratch = fixture.temp.path().join("first");
    let first = remembering(&fixture.repo, &first_scratch, &executor);
    let probed = Pytest::probe_remembered(None, &first).expect("pytest answers -VV");
    assert_eq!(probes_in(&first_scratch), 1, "the first run probes");
    assert!(fixture.repo.join(probe_cache::CACHE_FILE).is_file());

    let second_scratch = fixture.temp.path().join("second");
    let second = remembering(&fixture.repo, &second_scratch, &executor);
    let remembered = Pytest::probe_remembered(None, &second).expect("remembered");
    assert_eq!(
        probes_in(&second_scratch),
        0,
        "the second run did not probe"
    );
    assert_eq!(remembered.has_randomly(), probed.has_randomly());
    assert_eq!(remembered.has_repeat(), probed.has_repeat());

    // Editing the pytest configuration is a reason to ask again.
    let config = fixture.repo.join("pyproject.toml");
    let text = std::fs::read_to_string(&config).expect("pyproject.toml");
    std::fs::write(&config, format!("{text}\n# edited\n")).expect("write");
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    std::fs::File::options()
        .write(true)
        .open(&config)
        .and_then(|file| file.set_modified(later))
        .expect("set the time");
    let third_scratch = fixture.temp.path().join("third");
    let third = remembering(&fixture.repo, &third_scratch, &executor);
    Pytest::probe_remembered(None, &third).expect("probed again");
    assert_eq!(
        probes_in(&third_scratch),
        1,
        "a changed pyproject.toml probes"
    );
}

#[test]
fn a_remembered_no_randomly_turns_the_plugin_off_so_no_run_is_shuffled_unrecorded() {
    let fixture = fixture("pytest");
    let executor = SystemExecutor;
    // The answer of a Python without pytest-randomly, remembered for this repository:
    // the plugin "installed since", where the folders candor watches cannot see it.
    probe_cache::store(
        &fixture.repo,
        &default_prefix(),
        "This is pytest version 9.2.0, imported from /nowhere/site-packages/pytest/__init__.py\n",
    );
    let context = remembering(&fixture.repo, &fixture.scratch, &executor);
    let adapter = Pytest::probe_remembered(None, &context).expect("remembered");
    assert!(!adapter.has_randomly());
    let report = adapter
        .run_suite(&context, RunOptions { seed: Some(4242) })
        .expect("the suite runs");
    assert_eq!(report.seed, None, "no seed is recorded");
    assert!(
        report.invocations[0]
            .argv
            .windows(2)
            .any(|pair| pair == ["-p", "no:randomly"]),
        "{:?}",
        report.invocations[0].argv
    );
    assert!(!argv_holds(&report, "--randomly-seed=4242"));
    // With pytest-randomly installed on this machine, it would otherwise say its seed.
    assert!(
        !logs(&report).contains("randomly-seed"),
        "the run was shuffled:\n{}",
        logs(&report)
    );
}

/// A stand-in pytest beside the real one: it answers `-VV` without plugins, refuses
/// pytest-randomly's options as pytest does when the plugin is gone (exit 4), and
/// otherwise writes a one-test report.
const GONE_PLUGIN_PYTEST: &str = r#"import sys
args = sys.argv[1:]
if "-VV" in args:
    print("This is pytest version 9.2.0, imported from /nowhere/site-packages/pytest/__init__.py")
    sys.exit(0)
if any(arg.startswith("--randomly-seed") for arg in args):
    print("ERROR: usage: pytest [options]\npytest: error: unrecognized arguments: " + " ".join(args), file=sys.stderr)
    sys.exit(4)
report = next(arg.split("=", 1)[1] for arg in args if arg.startswith("--junitxml="))
with open(report, "w") as out:
    out.write('<testsuites><testsuite name="pytest" tests="1"><testcase classname="tests.test_one" name="test_one" file="tests/test_one.py" time="0.001"/></testsuite></testsuites>')
"#;

#[test]
fn a_remembered_plugin_that_is_gone_is_probed_again_and_the_run_repeated() {
    let fixture = fixture("pytest");
    std::fs::write(fixture.repo.join("fake_pytest.py"), GONE_PLUGIN_PYTEST).expect("write");
    let prefix: Vec<String> = ["python3", "fake_pytest.py"].map(str::to_owned).to_vec();
    probe_cache::store(
        &fixture.repo,
        &prefix,
        "This is pytest version 9.2.0, imported from /nowhere/site-packages/pytest/__init__.py\nregistered third-party plugins:\n  pytest-randomly-5.1.0 at /nowhere/site-packages/pytest_randomly/__init__.py\n",
    );
    let executor = SystemExecutor;
    let context = remembering(&fixture.repo, &fixture.scratch, &executor);
    let adapter = Pytest::probe_remembered(Some(prefix.clone()), &context).expect("remembered");
    assert!(adapter.has_randomly(), "the remembered answer is used");
    let report = adapter
        .run_suite(&context, RunOptions { seed: Some(7) })
        .expect("the suite runs after a fresh probe");
    assert_eq!(report.exit_code(), 0, "{}", logs(&report));
    assert_eq!(report.seed, None);
    assert!(!argv_holds(&report, "--randomly-seed=7"));
    assert_eq!(probes_in(&fixture.scratch), 1, "probed afresh");
    let remembered = probe_cache::lookup(&fixture.repo, &prefix).expect("remembered again");
    assert!(
        !remembered.contains("pytest-randomly"),
        "the fresh answer replaced the stale one: {remembered}"
    );
}

#[test]
fn a_context_that_does_not_opt_in_never_reads_the_remembered_answer() {
    // The merge lane's contexts: a cache file planted in the work tree must not turn
    // pytest-randomly's seed off.
    let fixture = fixture("pytest");
    let executor = SystemExecutor;
    let fresh = Context::new(&fixture.repo, fixture.temp.path().join("fresh"), &executor);
    let truth = Pytest::probe(None, &fresh).expect("pytest answers -VV");
    let lie = if truth.has_randomly() {
        "This is pytest version 9.2.0, imported from /nowhere/site-packages/pytest/__init__.py\n"
            .to_owned()
    } else {
        "This is pytest version 9.2.0, imported from /nowhere/site-packages/pytest/__init__.py\nregistered third-party plugins:\n  pytest-randomly-5.1.0 at /nowhere/site-packages/pytest_randomly/__init__.py\n".to_owned()
    };
    probe_cache::store(&fixture.repo, &default_prefix(), &lie);
    let context = Context::new(&fixture.repo, &fixture.scratch, &executor);
    let config = RunnerConfig {
        kind: Some(candor::runner::RunnerKind::Pytest),
        ..RunnerConfig::default()
    };
    let adapter = runner::adapter(&config, &context).expect("an adapter");
    assert_eq!(probes_in(&fixture.scratch), 1, "it probed");
    assert_eq!(
        matches!(adapter.seed_support(), SeedSupport::Controls(_)),
        truth.has_randomly()
    );
}
