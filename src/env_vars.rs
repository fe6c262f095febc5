//! Every environment variable candor reads, declared and documented once. Code that reads
//! the environment names the variable through [`EnvVars`], never through a string literal.

/// The environment variables candor reads, grouped by who sets them.
pub struct EnvVars;

impl EnvVars {
    // candor's own.

    /// Path of the history database. `--db` wins over it; without either, candor uses
    /// `<repository root>/.candor/history.db` (the current directory when it is not in a
    /// git repository).
    pub const CANDOR_DB: &'static str = "CANDOR_DB";

    /// For testing and demonstrations: the date candor takes as today (`YYYY-MM-DD`), so
    /// that fingerprint expiry, the rerun budget's window and ledger dates are
    /// reproducible. Unset, today is the current date in UTC.
    pub const CANDOR_TODAY: &'static str = "CANDOR_TODAY";

    /// Set by candor, never by a user: the rustdoc a `candor` process started as cargo's
    /// `RUSTDOC` runs in its place, with libtest's JSON allowed (the cargo adapter's doc
    /// tests, `runner::cargo`).
    pub const CANDOR_AS_RUSTDOC: &'static str = "CANDOR_AS_RUSTDOC";

    // Conventions candor follows.

    /// Set to any non-empty value to turn color off under `--color auto`
    /// (<https://no-color.org>). `--color always` still colors.
    pub const NO_COLOR: &'static str = "NO_COLOR";

    /// Set by most CI services. Any value other than empty, `0` or `false` means candor
    /// runs under CI, so `ingest` defaults to `--source ci` even when the provider is not
    /// one candor knows by name.
    pub const CI: &'static str = "CI";

    // GitHub Actions (<https://docs.github.com/actions/reference/variables-reference>).

    /// `true` under GitHub Actions.
    pub const GITHUB_ACTIONS: &'static str = "GITHUB_ACTIONS";
    /// The commit the workflow runs on. For `pull_request` events this is GitHub's merge
    /// commit, not the pull request's head; pass `--commit` to record the head instead.
    pub const GITHUB_SHA: &'static str = "GITHUB_SHA";
    /// The pull request's source branch; set only for pull request events, where it wins
    /// over [`EnvVars::GITHUB_REF_NAME`] (which is `<number>/merge` there).
    pub const GITHUB_HEAD_REF: &'static str = "GITHUB_HEAD_REF";
    /// The branch or tag the workflow runs on.
    pub const GITHUB_REF_NAME: &'static str = "GITHUB_REF_NAME";
    /// `branch` or `tag`: a tag is not taken as a branch.
    pub const GITHUB_REF_TYPE: &'static str = "GITHUB_REF_TYPE";
    /// The job's id within the workflow, recorded as the run's job.
    pub const GITHUB_JOB: &'static str = "GITHUB_JOB";
    /// `owner/name` of the repository, recorded as the run's CI repository.
    pub const GITHUB_REPOSITORY: &'static str = "GITHUB_REPOSITORY";
    /// The workflow run's id, the same in every job and every attempt of the run.
    pub const GITHUB_RUN_ID: &'static str = "GITHUB_RUN_ID";
    /// Which attempt of the workflow run this is (1, then 2… for each re-run).
    pub const GITHUB_RUN_ATTEMPT: &'static str = "GITHUB_RUN_ATTEMPT";
    /// A file GitHub Actions shows as the step's summary; `candor gate` appends its
    /// Markdown summary there.
    pub const GITHUB_STEP_SUMMARY: &'static str = "GITHUB_STEP_SUMMARY";

    // GitLab CI (<https://docs.gitlab.com/ci/variables/predefined_variables/>).

    /// `true` under GitLab CI.
    pub const GITLAB_CI: &'static str = "GITLAB_CI";
    /// The commit the pipeline runs on.
    pub const CI_COMMIT_SHA: &'static str = "CI_COMMIT_SHA";
    /// The branch, in branch pipelines.
    pub const CI_COMMIT_BRANCH: &'static str = "CI_COMMIT_BRANCH";
    /// The merge request's source branch, in merge request pipelines.
    pub const CI_MERGE_REQUEST_SOURCE_BRANCH_NAME: &'static str =
        "CI_MERGE_REQUEST_SOURCE_BRANCH_NAME";
    /// The job's name.
    pub const CI_JOB_NAME: &'static str = "CI_JOB_NAME";
    /// The project's path (`group/project`), recorded as the run's CI repository.
    pub const CI_PROJECT_PATH: &'static str = "CI_PROJECT_PATH";
    /// The pipeline's id, recorded as the CI run id (GitLab numbers no attempts: a retried
    /// job is a new job in the same pipeline).
    pub const CI_PIPELINE_ID: &'static str = "CI_PIPELINE_ID";
    /// The project's default branch: the branch reliability counts unless
    /// `[reliability] branches` says otherwise.
    pub const CI_DEFAULT_BRANCH: &'static str = "CI_DEFAULT_BRANCH";

    // Buildkite (<https://buildkite.com/docs/pipelines/environment-variables>).

    /// `true` under Buildkite.
    pub const BUILDKITE: &'static str = "BUILDKITE";
    /// The commit; Buildkite writes `HEAD` when a build was started without one, which
    /// candor ignores in favour of git.
    pub const BUILDKITE_COMMIT: &'static str = "BUILDKITE_COMMIT";
    /// The branch.
    pub const BUILDKITE_BRANCH: &'static str = "BUILDKITE_BRANCH";
    /// The step's label, recorded as the run's job.
    pub const BUILDKITE_LABEL: &'static str = "BUILDKITE_LABEL";
    /// The repository's URL, recorded as the run's CI repository.
    pub const BUILDKITE_REPO: &'static str = "BUILDKITE_REPO";
    /// The build's id (a UUID), recorded as the CI run id.
    pub const BUILDKITE_BUILD_ID: &'static str = "BUILDKITE_BUILD_ID";
    /// How often the job was retried (0 the first time): the attempt is one more.
    pub const BUILDKITE_RETRY_COUNT: &'static str = "BUILDKITE_RETRY_COUNT";
    /// The pipeline's default branch, read like GitLab's `CI_DEFAULT_BRANCH`.
    pub const BUILDKITE_PIPELINE_DEFAULT_BRANCH: &'static str = "BUILDKITE_PIPELINE_DEFAULT_BRANCH";

    // CircleCI (<https://circleci.com/docs/variables/>).

    /// `true` under CircleCI.
    pub const CIRCLECI: &'static str = "CIRCLECI";
    /// The commit.
    pub const CIRCLE_SHA1: &'static str = "CIRCLE_SHA1";
    /// The branch.
    pub const CIRCLE_BRANCH: &'static str = "CIRCLE_BRANCH";
    /// The job's name.
    pub const CIRCLE_JOB: &'static str = "CIRCLE_JOB";
    /// The repository's URL, recorded as the run's CI repository.
    pub const CIRCLE_REPOSITORY_URL: &'static str = "CIRCLE_REPOSITORY_URL";
    /// The workflow's id, recorded as the CI run id (a re-run is a new workflow).
    pub const CIRCLE_WORKFLOW_ID: &'static str = "CIRCLE_WORKFLOW_ID";

    // Jenkins (<https://www.jenkins.io/doc/book/pipeline/jenkinsfile/#using-environment-variables>).

    /// Set on every Jenkins build; its presence means Jenkins.
    pub const JENKINS_URL: &'static str = "JENKINS_URL";
    /// The commit, set by the git plugin.
    pub const GIT_COMMIT: &'static str = "GIT_COMMIT";
    /// The branch in multibranch pipelines; wins over [`EnvVars::GIT_BRANCH`].
    pub const BRANCH_NAME: &'static str = "BRANCH_NAME";
    /// The branch as the git plugin names it (`origin/main`); the `origin/` is dropped.
    pub const GIT_BRANCH: &'static str = "GIT_BRANCH";
    /// The job's name.
    pub const JOB_NAME: &'static str = "JOB_NAME";
    /// The repository's URL (git plugin), recorded as the run's CI repository.
    pub const GIT_URL: &'static str = "GIT_URL";
    /// The build's number within the job, recorded as the CI run id.
    pub const BUILD_NUMBER: &'static str = "BUILD_NUMBER";

    // Runners' own worker-count settings, read to record how many workers a run used.

    /// libtest's thread count when `--test-threads` is not given (cargo test).
    pub const RUST_TEST_THREADS: &'static str = "RUST_TEST_THREADS";
    /// nextest's thread count when `-j`/`--test-threads` is not given.
    pub const NEXTEST_TEST_THREADS: &'static str = "NEXTEST_TEST_THREADS";
    /// What nextest does when it finds no test to run (its `--no-tests`):
    /// the nextest adapter sets `pass` for a suite with doc tests to run after it.
    pub const NEXTEST_NO_TESTS: &'static str = "NEXTEST_NO_TESTS";
    /// Go's parallelism, which `go test -p` defaults to.
    pub const GOMAXPROCS: &'static str = "GOMAXPROCS";

    // Read to build a child's environment.

    /// Python's module search path. For one side of `compare` or `repro`, candor puts the
    /// side's source roots (and its isolation probe) before the value it inherited.
    pub const PYTHONPATH: &'static str = "PYTHONPATH";
    /// The dynamic library search path (Linux and most Unixes). The merge lane runs cargo's
    /// test binaries itself and puts cargo's folders before the value it inherited, as
    /// `cargo test` does.
    pub const LD_LIBRARY_PATH: &'static str = "LD_LIBRARY_PATH";
    /// macOS's fallback dynamic library search path, which cargo extends there.
    pub const DYLD_FALLBACK_LIBRARY_PATH: &'static str = "DYLD_FALLBACK_LIBRARY_PATH";
    /// cargo's home, whose `config.toml` may hold an `[env]` table for test binaries.
    pub const CARGO_HOME: &'static str = "CARGO_HOME";
    /// The rustdoc cargo runs; the cargo adapter's doc tests run it through candor.
    pub const RUSTDOC: &'static str = "RUSTDOC";
    /// The user's home, where cargo's home is (`~/.cargo`) when `CARGO_HOME` is not set.
    pub const HOME: &'static str = "HOME";

    // Read, never changed, as part of what `candor test`'s remembered pytest plugin probe
    // depends on (`runner::probe_cache`): a change to any of them probes again.

    /// Where programs such as `python3` are found.
    pub const PATH: &'static str = "PATH";
    /// The active virtualenv.
    pub const VIRTUAL_ENV: &'static str = "VIRTUAL_ENV";
    /// The active conda environment.
    pub const CONDA_PREFIX: &'static str = "CONDA_PREFIX";
    /// pyenv's Python version for this shell.
    pub const PYENV_VERSION: &'static str = "PYENV_VERSION";
    /// Python's installation prefix.
    pub const PYTHONHOME: &'static str = "PYTHONHOME";
    /// Python's per-user installation folder.
    pub const PYTHONUSERBASE: &'static str = "PYTHONUSERBASE";
    /// Turns Python's per-user site-packages off.
    pub const PYTHONNOUSERSITE: &'static str = "PYTHONNOUSERSITE";
    /// Plugins pytest loads by name.
    pub const PYTEST_PLUGINS: &'static str = "PYTEST_PLUGINS";
    /// Options pytest adds to its command line (removed from every run candor starts).
    pub const PYTEST_ADDOPTS: &'static str = "PYTEST_ADDOPTS";
    /// Turns pytest's loading of installed plugins off.
    pub const PYTEST_DISABLE_PLUGIN_AUTOLOAD: &'static str = "PYTEST_DISABLE_PLUGIN_AUTOLOAD";

    // Read by candor's own test suite only, never by the binary.

    /// Where candor's tests find the shared corpus of result files.
    pub const CANDOR_CORPUS: &'static str = "CANDOR_CORPUS";
    /// Overrides the seed of candor's property tests.
    pub const CANDOR_PROPTEST_SEED: &'static str = "CANDOR_PROPTEST_SEED";

    /// Every variable that CI detection reads: a test that must behave the same inside and
    /// outside CI removes these from the environment of the candor it starts.
    pub const CI_DETECTION: &'static [&'static str] = &[
        EnvVars::CI,
        EnvVars::GITHUB_ACTIONS,
        EnvVars::GITHUB_SHA,
        EnvVars::GITHUB_HEAD_REF,
        EnvVars::GITHUB_REF_NAME,
        EnvVars::GITHUB_REF_TYPE,
        EnvVars::GITHUB_JOB,
        EnvVars::GITHUB_REPOSITORY,
        EnvVars::GITHUB_RUN_ID,
        EnvVars::GITHUB_RUN_ATTEMPT,
        EnvVars::GITLAB_CI,
        EnvVars::CI_COMMIT_SHA,
        EnvVars::CI_COMMIT_BRANCH,
        EnvVars::CI_MERGE_REQUEST_SOURCE_BRANCH_NAME,
        EnvVars::CI_JOB_NAME,
        EnvVars::CI_PROJECT_PATH,
        EnvVars::CI_PIPELINE_ID,
        EnvVars::CI_DEFAULT_BRANCH,
        EnvVars::BUILDKITE,
        EnvVars::BUILDKITE_COMMIT,
        EnvVars::BUILDKITE_BRANCH,
        EnvVars::BUILDKITE_LABEL,
        EnvVars::BUILDKITE_REPO,
        EnvVars::BUILDKITE_BUILD_ID,
        EnvVars::BUILDKITE_RETRY_COUNT,
        EnvVars::BUILDKITE_PIPELINE_DEFAULT_BRANCH,
        EnvVars::CIRCLECI,
        EnvVars::CIRCLE_SHA1,
        EnvVars::CIRCLE_BRANCH,
        EnvVars::CIRCLE_JOB,
        EnvVars::CIRCLE_REPOSITORY_URL,
        EnvVars::CIRCLE_WORKFLOW_ID,
        EnvVars::JENKINS_URL,
        EnvVars::GIT_COMMIT,
        EnvVars::BRANCH_NAME,
        EnvVars::GIT_BRANCH,
        EnvVars::JOB_NAME,
        EnvVars::GIT_URL,
        EnvVars::BUILD_NUMBER,
    ];

    /// Variables that would point a `git` child at another repository, index or work tree
    /// than the directory it runs in (a hook or an outer git sets them); candor removes
    /// them from every `git` it starts and does not read them itself.
    pub const GIT_LOCATION_OVERRIDES: &'static [&'static str] =
        &["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"];
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// Every `env::var`/`var_os` call in the sources names its variable through
    /// [`super::EnvVars`] (or a constant that refers to it), never a string literal, so this
    /// file stays the complete list.
    #[test]
    fn no_source_reads_a_variable_by_literal_name() {
        let mut offenders = Vec::new();
        visit(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
            &mut offenders,
        );
        assert!(offenders.is_empty(), "read through EnvVars: {offenders:#?}");
    }

    fn visit(dir: &Path, offenders: &mut Vec<String>) {
        let entries = std::fs::read_dir(dir).expect("src is readable");
        for entry in entries {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                visit(&path, offenders);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let text = std::fs::read_to_string(&path).expect("source is UTF-8");
                for (number, line) in text.lines().enumerate() {
                    let compact: String = line.split_whitespace().collect();
                    if ["env::var(\"", "env::var_os(\""]
                        .iter()
                        .any(|call| compact.contains(call))
                    {
                        offenders.push(format!("{}:{}", path.display(), number + 1));
                    }
                }
            }
        }
    }
}
