//! The `command` adapter: a user's argv template, filled element by element, proven by a
//! tiny program that writes the argv it received as JSON.

use crate::runner_support;

use candor::runner::process::SystemExecutor;
use candor::runner::{
    Adapter, Context, RunOptions, RunnerConfig, RunnerError, RunnerKind, UserCommand,
};
use runner_support::{HOSTILE, argv_holds, fixture, pwned_files};

/// Writes its arguments, as a JSON array, to the path in its first argument.
const ARGV_DUMP: &str =
    "import json, sys\nwith open(sys.argv[1], 'w') as out:\n    json.dump(sys.argv[1:], out)\n";

fn template(script: &std::path::Path) -> Vec<String> {
    [
        "python3",
        &script.display().to_string(),
        "{report}",
        "--seed={seed}",
        "--filter={test}",
        "{test}",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect()
}

fn received(report: &std::path::Path) -> Vec<String> {
    let text = std::fs::read_to_string(report).expect("the command wrote its argv");
    serde_json::from_str(&text).expect("a JSON array")
}

#[test]
fn hostile_ids_reach_the_command_as_exactly_the_argv_expected() {
    let fixture = fixture("pytest");
    let script = fixture.temp.path().join("argv_dump.py");
    std::fs::write(&script, ARGV_DUMP).expect("script");
    let executor = SystemExecutor;
    let context = Context::new(&fixture.repo, &fixture.scratch, &executor);
    let adapter = UserCommand::new(Some(template(&script))).expect("a template");
    for id in HOSTILE.into_iter().chain(["{report}", "--help", ""]) {
        let report = adapter
            .run_one(&context, id, RunOptions { seed: Some(9) })
            .expect("it runs");
        assert_eq!(report.exit_code(), 0);
        let path = report.report.display().to_string();
        assert_eq!(
            received(&report.report),
            vec![
                path,
                "--seed=9".to_owned(),
                format!("--filter={id}"),
                id.to_owned()
            ],
            "{id:?}"
        );
        assert!(argv_holds(&report, id));
        assert_eq!(report.seed.as_ref().map(|s| s.value), Some(9));
    }
    assert_eq!(
        pwned_files(fixture.temp.path()),
        Vec::<std::path::PathBuf>::new()
    );
}

#[test]
fn the_suite_drops_the_elements_that_name_a_test() {
    let fixture = fixture("pytest");
    let script = fixture.temp.path().join("argv_dump.py");
    std::fs::write(&script, ARGV_DUMP).expect("script");
    let executor = SystemExecutor;
    let context = Context::new(&fixture.repo, &fixture.scratch, &executor);
    let adapter = UserCommand::new(Some(template(&script))).expect("a template");
    let report = adapter
        .run_suite(&context, RunOptions { seed: Some(5) })
        .expect("it runs");
    let path = report.report.display().to_string();
    assert_eq!(received(&report.report), vec![path, "--seed=5".to_owned()]);
    assert_eq!(report.runner, RunnerKind::Command);
    assert_eq!(report.format, None);
}

#[test]
fn without_report_placeholder_stdout_is_the_report() {
    let fixture = fixture("pytest");
    let executor = SystemExecutor;
    let context = Context::new(&fixture.repo, &fixture.scratch, &executor);
    let config = RunnerConfig {
        kind: Some(RunnerKind::Command),
        command: Some(
            [
                "python3",
                "-c",
                "import json, sys\nprint(json.dumps(sys.argv[1:]))",
                "{test}",
            ]
            .iter()
            .map(|s| (*s).to_owned())
            .collect(),
        ),
        ..RunnerConfig::default()
    };
    let adapter = candor::runner::adapter(&config, &context).expect("a command adapter");
    let report = adapter
        .run_one(&context, "$(touch pwned)", RunOptions::default())
        .expect("it runs");
    assert_eq!(received(&report.report), vec!["$(touch pwned)".to_owned()]);
    assert_eq!(report.seed, None, "no {{seed}} in the template");
    assert!(matches!(
        adapter.list(&context),
        Err(RunnerError::Unsupported { .. })
    ));
    assert_eq!(
        pwned_files(fixture.temp.path()),
        Vec::<std::path::PathBuf>::new()
    );
}

#[test]
fn a_template_without_test_cannot_run_one_test() {
    let fixture = fixture("pytest");
    let executor = SystemExecutor;
    let context = Context::new(&fixture.repo, &fixture.scratch, &executor);
    let adapter = UserCommand::new(Some(vec!["true".to_owned()])).expect("a template");
    let refused = adapter.run_one(&context, "x", RunOptions::default());
    assert!(
        matches!(refused, Err(RunnerError::Unsupported { .. })),
        "{refused:?}"
    );
    assert!(UserCommand::new(None).is_err());
    assert!(UserCommand::new(Some(Vec::new())).is_err());
}
