//! Which JavaScript test runner a `package.json` says the project uses, for runner
//! detection and `candor init`. Pure: the file's text in, a runner kind out.
//!
//! The rule, first match wins: the runner the `test` script starts (`vitest`, `jest`,
//! `react-scripts test`, `mocha`, `node --test`), which says which one runs when several
//! are installed (a migration); else a runner in `dependencies`, `devDependencies` or
//! `optionalDependencies`: `vitest`, then `jest` or a package that brings it
//! (`ts-jest`, `babel-jest`, `react-scripts`), then `mocha`, then `@playwright/test` (a
//! project with both unit tests and Playwright's end-to-end tests runs the unit tests as
//! `npm test`); else, in the folder, a `playwright.config.*` ([`runner_in`]). node's test
//! runner needs no package: only the `test` script names it. A project whose `test` script
//! is something candor has no adapter for is no JavaScript project to candor (detection
//! goes on, then says it found nothing).

use std::path::Path;

use super::RunnerKind;

/// The line of the starter candor.toml that `candor init` replaces when it detects a
/// JavaScript runner.
const KIND_PLACEHOLDER: &str = "# kind = \"pytest\"\n";

/// The starter candor.toml for the repository at `repo_root`: `default` as it is, except
/// that a `package.json` naming a JavaScript runner sets `[runner] kind` to it, so that
/// the runner is written down rather than guessed on every run.
pub fn starter_config(default: &str, repo_root: &Path) -> String {
    match runner_in(repo_root) {
        Some(kind) if default.contains(KIND_PLACEHOLDER) => default.replacen(
            KIND_PLACEHOLDER,
            &format!("# Detected from package.json by `candor init`.\nkind = \"{kind}\"\n"),
            1,
        ),
        _ => default.to_owned(),
    }
}

/// The names Playwright Test finds its config under.
pub const PLAYWRIGHT_CONFIGS: [&str; 6] = [
    "playwright.config.ts",
    "playwright.config.js",
    "playwright.config.mts",
    "playwright.config.mjs",
    "playwright.config.cts",
    "playwright.config.cjs",
];

/// The JavaScript runner of the project at `root`: its `package.json`'s ([`runner`]),
/// else Playwright when a `playwright.config.*` is there.
pub fn runner_in(root: &Path) -> Option<RunnerKind> {
    fs_err::read_to_string(root.join("package.json"))
        .ok()
        .and_then(|text| runner(&text))
        .or_else(|| {
            PLAYWRIGHT_CONFIGS
                .iter()
                .any(|name| root.join(name).is_file())
                .then_some(RunnerKind::Playwright)
        })
}

/// Packages whose presence means the project's tests run under jest.
const JEST_PACKAGES: [&str; 4] = ["jest", "ts-jest", "babel-jest", "react-scripts"];

/// The runner a `package.json`'s text names, if any; `None` for text that is not a JSON
/// object too (a broken `package.json` is npm's error to report, not a runner choice).
pub fn runner(text: &str) -> Option<RunnerKind> {
    let manifest: serde_json::Value = serde_json::from_str(text).ok()?;
    let depends_on = |package: &str| {
        ["dependencies", "devDependencies", "optionalDependencies"]
            .iter()
            .any(|table| manifest.get(table).and_then(|t| t.get(package)).is_some())
    };
    let test_script = manifest
        .get("scripts")
        .and_then(|s| s.get("test"))
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default();
    let words: Vec<&str> = test_script.split_whitespace().collect();
    let names = |runner: &str| {
        words
            .iter()
            .any(|w| *w == runner || w.ends_with(&format!("/{runner}")))
    };
    if words
        .windows(2)
        .any(|w| (w[0] == "playwright" || w[0].ends_with("/playwright")) && w[1] == "test")
    {
        return Some(RunnerKind::Playwright);
    }
    if names("vitest") {
        return Some(RunnerKind::Vitest);
    }
    if names("jest") || words.windows(2).any(|w| w == ["react-scripts", "test"]) {
        return Some(RunnerKind::Jest);
    }
    if names("mocha") || names("_mocha") {
        return Some(RunnerKind::Mocha);
    }
    // `node --test`, `node --import tsx --test test/`: node with the flag after it.
    if let Some(node) = words
        .iter()
        .position(|w| *w == "node" || w.ends_with("/node"))
        && words[node + 1..]
            .iter()
            .any(|w| *w == "--test" || w.starts_with("--test="))
    {
        return Some(RunnerKind::Node);
    }
    if depends_on("vitest") {
        return Some(RunnerKind::Vitest);
    }
    if JEST_PACKAGES.iter().any(|p| depends_on(p)) {
        return Some(RunnerKind::Jest);
    }
    if depends_on("mocha") {
        return Some(RunnerKind::Mocha);
    }
    if depends_on("@playwright/test") {
        return Some(RunnerKind::Playwright);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jest_from_dependencies_or_the_test_script() {
        assert_eq!(
            runner(r#"{"devDependencies": {"jest": "29.7.0"}}"#),
            Some(RunnerKind::Jest)
        );
        assert_eq!(
            runner(r#"{"dependencies": {"react-scripts": "5"}}"#),
            Some(RunnerKind::Jest)
        );
        assert_eq!(
            runner(r#"{"scripts": {"test": "NODE_ENV=test jest --coverage"}}"#),
            Some(RunnerKind::Jest)
        );
        assert_eq!(
            runner(r#"{"scripts": {"test": "echo \"Error: no test specified\" && exit 1"}}"#),
            None
        );
        // A package named like a runner is not one.
        assert_eq!(runner(r#"{"devDependencies": {"jest-junit": "16"}}"#), None);
        assert_eq!(
            runner(r#"{"devDependencies": {"vitest": "2", "@vitest/ui": "2"}}"#),
            Some(RunnerKind::Vitest)
        );
        // Both installed: the test script says which one runs.
        let both =
            r#"{"scripts": {"test": "jest"}, "devDependencies": {"jest": "29", "vitest": "2"}}"#;
        assert_eq!(runner(both), Some(RunnerKind::Jest));
        let both = r#"{"scripts": {"test": "vitest run"}, "devDependencies": {"jest": "29", "vitest": "2"}}"#;
        assert_eq!(runner(both), Some(RunnerKind::Vitest));
        assert_eq!(runner("not json"), None);
        assert_eq!(runner("[]"), None);
    }

    /// Issue #20 (Playwright) item 5: `@playwright/test`, a `playwright test` script or a
    /// `playwright.config.*` is a Playwright project; unit tests beside it win.
    #[test]
    fn playwright_from_its_package_its_script_or_its_config() {
        assert_eq!(
            runner(r#"{"devDependencies": {"@playwright/test": "1.65.1"}}"#),
            Some(RunnerKind::Playwright)
        );
        assert_eq!(
            runner(r#"{"scripts": {"test": "npx playwright test --project=chromium"}}"#),
            Some(RunnerKind::Playwright)
        );
        // The Python library's package, or Playwright's browsers alone, are no test runner.
        assert_eq!(runner(r#"{"devDependencies": {"playwright": "1"}}"#), None);
        let both = r#"{"devDependencies": {"jest": "29", "@playwright/test": "1"}}"#;
        assert_eq!(runner(both), Some(RunnerKind::Jest));
        let both = r#"{"scripts": {"test": "playwright test"}, "devDependencies": {"jest": "29", "@playwright/test": "1"}}"#;
        assert_eq!(runner(both), Some(RunnerKind::Playwright));

        let dir = tempfile::tempdir().expect("a temp dir");
        assert_eq!(runner_in(dir.path()), None);
        fs_err::write(
            dir.path().join("playwright.config.ts"),
            "export default {};\n",
        )
        .expect("write the config");
        assert_eq!(runner_in(dir.path()), Some(RunnerKind::Playwright));
        let written = starter_config(crate::policy::config::DEFAULT_CONFIG, dir.path());
        let config = crate::policy::config::Config::parse(&written, Path::new("candor.toml"))
            .expect("the starter config parses");
        assert_eq!(config.runner.kind, Some(RunnerKind::Playwright));
    }

    /// Issue #20 item 6: mocha and node's test runner, from the test script or (mocha)
    /// the dependencies.
    #[test]
    fn mocha_and_node_from_the_test_script_or_dependencies() {
        assert_eq!(
            runner(r#"{"scripts": {"test": "mocha --recursive"}}"#),
            Some(RunnerKind::Mocha)
        );
        assert_eq!(
            runner(r#"{"scripts": {"test": "nyc ./node_modules/.bin/mocha"}}"#),
            Some(RunnerKind::Mocha)
        );
        assert_eq!(
            runner(r#"{"devDependencies": {"mocha": "10", "chai": "4"}}"#),
            Some(RunnerKind::Mocha)
        );
        // A reporter package is no runner.
        assert_eq!(
            runner(r#"{"devDependencies": {"mocha-junit-reporter": "2"}}"#),
            None
        );
        assert_eq!(
            runner(r#"{"scripts": {"test": "node --test"}}"#),
            Some(RunnerKind::Node)
        );
        assert_eq!(
            runner(r#"{"scripts": {"test": "node --import tsx --test test/"}}"#),
            Some(RunnerKind::Node)
        );
        // node running a script is not node's test runner, and a flag of another program
        // is not node's.
        assert_eq!(runner(r#"{"scripts": {"test": "node test.js"}}"#), None);
        assert_eq!(runner(r#"{"scripts": {"test": "tap --test"}}"#), None);
        // The test script outranks the dependencies (a migration from mocha).
        let both = r#"{"scripts": {"test": "node --test"}, "devDependencies": {"mocha": "10"}}"#;
        assert_eq!(runner(both), Some(RunnerKind::Node));
        let dir = tempfile::tempdir().expect("a temp dir");
        fs_err::write(dir.path().join("package.json"), both).expect("write package.json");
        let written = starter_config(crate::policy::config::DEFAULT_CONFIG, dir.path());
        assert!(written.contains("\nkind = \"node\"\n"), "{written}");
    }

    /// Issue #20 item 6: `candor init` writes the detected runner.
    #[test]
    fn the_starter_config_names_a_detected_javascript_runner() {
        let dir = tempfile::tempdir().expect("a temp dir");
        let default = crate::policy::config::DEFAULT_CONFIG;
        assert_eq!(starter_config(default, dir.path()), default);
        fs_err::write(
            dir.path().join("package.json"),
            r#"{"scripts": {"test": "jest"}, "devDependencies": {"jest": "^29"}}"#,
        )
        .expect("write package.json");
        let written = starter_config(default, dir.path());
        assert!(written.contains("\nkind = \"jest\"\n"), "{written}");
        let config = crate::policy::config::Config::parse(&written, Path::new("candor.toml"))
            .expect("the starter config parses");
        assert_eq!(config.runner.kind, Some(RunnerKind::Jest));
    }
}
