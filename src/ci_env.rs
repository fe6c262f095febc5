//! Which CI service candor runs under, and the commit, branch and job it says it is
//! building. Reads variables through a lookup function so that callers (and tests) decide
//! where the environment comes from; never touches git.

use crate::env_vars::EnvVars;

/// A CI service candor knows by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// GitHub Actions.
    GithubActions,
    /// GitLab CI.
    GitlabCi,
    /// Buildkite.
    Buildkite,
    /// CircleCI.
    Circleci,
    /// Jenkins.
    Jenkins,
}

impl Provider {
    /// The stable name stored with each run.
    pub fn as_str(self) -> &'static str {
        match self {
            Provider::GithubActions => "github-actions",
            Provider::GitlabCi => "gitlab-ci",
            Provider::Buildkite => "buildkite",
            Provider::Circleci => "circleci",
            Provider::Jenkins => "jenkins",
        }
    }
}

/// What the CI environment says about the build, each part `None` when it does not say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CiEnv {
    /// Whether candor runs under CI at all (a named provider or the generic `CI`).
    pub detected: bool,
    /// The provider, when it is one candor knows.
    pub provider: Option<Provider>,
    /// The commit being built, as a lowercase hex sha.
    pub commit: Option<String>,
    /// The branch being built.
    pub branch: Option<String>,
    /// The job's name.
    pub job: Option<String>,
    /// The repository (or project) being built, as the service names it.
    pub repository: Option<String>,
    /// The service's id of the build (workflow run, pipeline, build) this job is part of.
    pub run_id: Option<String>,
    /// Which attempt of that build this is, from 1, when the service numbers re-runs.
    pub attempt: Option<u32>,
    /// The project's default branch, when the service says (GitLab, Buildkite): what
    /// reliability counts unless `[reliability] branches` says otherwise.
    pub default_branch: Option<String>,
}

impl CiEnv {
    /// Reads the CI variables through `lookup` (normally [`std::env::var`]).
    pub fn detect(lookup: impl Fn(&str) -> Option<String>) -> CiEnv {
        let get = |name: &str| {
            lookup(name)
                .map(|value| value.trim().to_owned())
                .filter(|value| !value.is_empty())
        };
        let is_true = |name: &str| get(name).is_some_and(|v| v.eq_ignore_ascii_case("true"));

        let named = if is_true(EnvVars::GITHUB_ACTIONS) {
            let branch = get(EnvVars::GITHUB_HEAD_REF).or_else(|| {
                let is_tag = get(EnvVars::GITHUB_REF_TYPE).as_deref() == Some("tag");
                get(EnvVars::GITHUB_REF_NAME).filter(|_| !is_tag)
            });
            Some(CiEnv {
                detected: true,
                provider: Some(Provider::GithubActions),
                commit: get(EnvVars::GITHUB_SHA),
                branch,
                job: get(EnvVars::GITHUB_JOB),
                repository: get(EnvVars::GITHUB_REPOSITORY),
                run_id: get(EnvVars::GITHUB_RUN_ID),
                attempt: get(EnvVars::GITHUB_RUN_ATTEMPT).and_then(|a| attempt(&a, 0)),
                default_branch: None,
            })
        } else if is_true(EnvVars::GITLAB_CI) {
            Some(CiEnv {
                detected: true,
                provider: Some(Provider::GitlabCi),
                commit: get(EnvVars::CI_COMMIT_SHA),
                branch: get(EnvVars::CI_COMMIT_BRANCH)
                    .or_else(|| get(EnvVars::CI_MERGE_REQUEST_SOURCE_BRANCH_NAME)),
                job: get(EnvVars::CI_JOB_NAME),
                repository: get(EnvVars::CI_PROJECT_PATH),
                run_id: get(EnvVars::CI_PIPELINE_ID),
                attempt: None,
                default_branch: get(EnvVars::CI_DEFAULT_BRANCH),
            })
        } else if is_true(EnvVars::BUILDKITE) {
            Some(CiEnv {
                detected: true,
                provider: Some(Provider::Buildkite),
                commit: get(EnvVars::BUILDKITE_COMMIT),
                branch: get(EnvVars::BUILDKITE_BRANCH),
                job: get(EnvVars::BUILDKITE_LABEL),
                repository: get(EnvVars::BUILDKITE_REPO),
                run_id: get(EnvVars::BUILDKITE_BUILD_ID),
                // Buildkite counts retries from 0; an attempt counts from 1.
                attempt: get(EnvVars::BUILDKITE_RETRY_COUNT).and_then(|r| attempt(&r, 1)),
                default_branch: get(EnvVars::BUILDKITE_PIPELINE_DEFAULT_BRANCH),
            })
        } else if is_true(EnvVars::CIRCLECI) {
            Some(CiEnv {
                detected: true,
                provider: Some(Provider::Circleci),
                commit: get(EnvVars::CIRCLE_SHA1),
                branch: get(EnvVars::CIRCLE_BRANCH),
                job: get(EnvVars::CIRCLE_JOB),
                repository: get(EnvVars::CIRCLE_REPOSITORY_URL),
                run_id: get(EnvVars::CIRCLE_WORKFLOW_ID),
                attempt: None,
                default_branch: None,
            })
        } else if get(EnvVars::JENKINS_URL).is_some() {
            let branch = get(EnvVars::BRANCH_NAME).or_else(|| {
                get(EnvVars::GIT_BRANCH).map(|b| match b.strip_prefix("origin/") {
                    Some(short) if !short.is_empty() => short.to_owned(),
                    _ => b,
                })
            });
            Some(CiEnv {
                detected: true,
                provider: Some(Provider::Jenkins),
                commit: get(EnvVars::GIT_COMMIT),
                branch,
                job: get(EnvVars::JOB_NAME),
                repository: get(EnvVars::GIT_URL),
                run_id: get(EnvVars::BUILD_NUMBER),
                attempt: None,
                default_branch: None,
            })
        } else {
            None
        };

        let mut env = named.unwrap_or_else(|| CiEnv {
            detected: get(EnvVars::CI).is_some_and(|v| !matches!(v.as_str(), "0" | "false")),
            ..CiEnv::default()
        });
        // Providers sometimes write a symbolic name (`HEAD`) or nothing useful; only a sha
        // is a commit, anything else falls back to git.
        env.commit = env
            .commit
            .filter(|c| is_sha(c))
            .map(|c| c.to_ascii_lowercase());
        env
    }

    /// Reads the CI variables of this process.
    pub fn from_process() -> CiEnv {
        CiEnv::detect(|name| std::env::var(name).ok())
    }
}

/// An attempt number from a service's counter that starts at `offset` short of 1; `None`
/// for anything but a number that makes an attempt of at least 1.
fn attempt(text: &str, offset: u32) -> Option<u32> {
    text.parse::<u32>()
        .ok()
        .and_then(|n| n.checked_add(offset))
        .filter(|&n| n >= 1)
}

/// Whether `text` looks like a (possibly abbreviated) git object name: 4 to 64 hex digits.
pub fn is_sha(text: &str) -> bool {
    (4..=64).contains(&text.len()) && text.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    const SHA: &str = "0123456789abcdef0123456789abcdef01234567";

    fn detect(vars: &[(&str, &str)]) -> CiEnv {
        let vars: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        CiEnv::detect(|name| vars.get(name).cloned())
    }

    #[test]
    fn nothing_set_is_not_ci() {
        assert_eq!(detect(&[]), CiEnv::default());
    }

    #[test]
    fn generic_ci_is_detected_without_a_provider() {
        let env = detect(&[("CI", "true")]);
        assert!(env.detected);
        assert_eq!(env.provider, None);
        assert!(!detect(&[("CI", "false")]).detected);
        assert!(!detect(&[("CI", "0")]).detected);
        assert!(!detect(&[("CI", "")]).detected);
        assert!(detect(&[("CI", "1")]).detected);
    }

    #[test]
    fn github_actions_prefers_the_pull_request_head_branch() {
        let push = detect(&[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_SHA", SHA),
            ("GITHUB_REF_NAME", "main"),
            ("GITHUB_REF_TYPE", "branch"),
            ("GITHUB_JOB", "test"),
            ("GITHUB_REPOSITORY", "acme/shop"),
            ("GITHUB_RUN_ID", "9876543210"),
            ("GITHUB_RUN_ATTEMPT", "2"),
        ]);
        assert_eq!(
            push,
            CiEnv {
                detected: true,
                provider: Some(Provider::GithubActions),
                commit: Some(SHA.into()),
                branch: Some("main".into()),
                job: Some("test".into()),
                repository: Some("acme/shop".into()),
                run_id: Some("9876543210".into()),
                attempt: Some(2),
                default_branch: None,
            }
        );
        let pull_request = detect(&[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_HEAD_REF", "feature/x"),
            ("GITHUB_REF_NAME", "12/merge"),
        ]);
        assert_eq!(pull_request.branch.as_deref(), Some("feature/x"));
        let tag = detect(&[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_REF_NAME", "v1.0"),
            ("GITHUB_REF_TYPE", "tag"),
        ]);
        assert_eq!(tag.branch, None);
    }

    #[test]
    fn gitlab_falls_back_to_the_merge_request_source_branch() {
        let env = detect(&[
            ("GITLAB_CI", "true"),
            ("CI", "true"),
            ("CI_COMMIT_SHA", SHA),
            ("CI_MERGE_REQUEST_SOURCE_BRANCH_NAME", "fix"),
            ("CI_JOB_NAME", "rspec 1/2"),
        ]);
        assert_eq!(env.provider, Some(Provider::GitlabCi));
        assert_eq!(env.branch.as_deref(), Some("fix"));
        assert_eq!(env.job.as_deref(), Some("rspec 1/2"));
        assert_eq!(env.default_branch, None);
        let with_default = detect(&[("GITLAB_CI", "true"), ("CI_DEFAULT_BRANCH", "trunk")]);
        assert_eq!(with_default.default_branch.as_deref(), Some("trunk"));
    }

    #[test]
    fn buildkite_symbolic_commit_is_ignored() {
        let env = detect(&[
            ("BUILDKITE", "true"),
            ("BUILDKITE_COMMIT", "HEAD"),
            ("BUILDKITE_BRANCH", "main"),
            ("BUILDKITE_LABEL", ":pytest: unit"),
        ]);
        assert_eq!(env.provider, Some(Provider::Buildkite));
        assert_eq!(env.commit, None);
        assert_eq!(env.branch.as_deref(), Some("main"));
        assert_eq!(env.job.as_deref(), Some(":pytest: unit"));
        let with_default = detect(&[
            ("BUILDKITE", "true"),
            ("BUILDKITE_PIPELINE_DEFAULT_BRANCH", "develop"),
        ]);
        assert_eq!(with_default.default_branch.as_deref(), Some("develop"));
    }

    #[test]
    fn circleci_reads_its_own_names() {
        let env = detect(&[
            ("CIRCLECI", "true"),
            ("CIRCLE_SHA1", &SHA.to_ascii_uppercase()),
            ("CIRCLE_BRANCH", "dev"),
            ("CIRCLE_JOB", "build"),
        ]);
        assert_eq!(env.provider, Some(Provider::Circleci));
        assert_eq!(env.commit.as_deref(), Some(SHA));
        assert_eq!(env.branch.as_deref(), Some("dev"));
    }

    #[test]
    fn jenkins_drops_the_remote_from_git_branch() {
        let env = detect(&[
            ("JENKINS_URL", "https://ci.example/"),
            ("GIT_COMMIT", SHA),
            ("GIT_BRANCH", "origin/release"),
            ("JOB_NAME", "app/main"),
        ]);
        assert_eq!(env.provider, Some(Provider::Jenkins));
        assert_eq!(env.branch.as_deref(), Some("release"));
        let multibranch = detect(&[
            ("JENKINS_URL", "https://ci.example/"),
            ("BRANCH_NAME", "PR-7"),
            ("GIT_BRANCH", "origin/x"),
        ]);
        assert_eq!(multibranch.branch.as_deref(), Some("PR-7"));
    }

    /// Issue #17 item 1: each service's build id and attempt are read, and an attempt that
    /// is not a number of at least 1 is left unknown rather than guessed.
    #[test]
    fn the_ci_identity_of_each_service_is_read() {
        let gitlab = detect(&[
            ("GITLAB_CI", "true"),
            ("CI_PROJECT_PATH", "group/app"),
            ("CI_PIPELINE_ID", "4711"),
        ]);
        assert_eq!(
            (
                gitlab.repository.as_deref(),
                gitlab.run_id.as_deref(),
                gitlab.attempt
            ),
            (Some("group/app"), Some("4711"), None)
        );
        let buildkite = detect(&[
            ("BUILDKITE", "true"),
            ("BUILDKITE_REPO", "git@github.com:acme/shop.git"),
            ("BUILDKITE_BUILD_ID", "0190-aaaa"),
            ("BUILDKITE_RETRY_COUNT", "0"),
        ]);
        assert_eq!(buildkite.attempt, Some(1));
        assert_eq!(buildkite.run_id.as_deref(), Some("0190-aaaa"));
        let circle = detect(&[
            ("CIRCLECI", "true"),
            ("CIRCLE_REPOSITORY_URL", "https://github.com/acme/shop"),
            ("CIRCLE_WORKFLOW_ID", "wf-1"),
        ]);
        assert_eq!(
            circle.repository.as_deref(),
            Some("https://github.com/acme/shop")
        );
        assert_eq!(circle.run_id.as_deref(), Some("wf-1"));
        let jenkins = detect(&[
            ("JENKINS_URL", "https://ci.example/"),
            ("GIT_URL", "https://git.example/app.git"),
            ("BUILD_NUMBER", "88"),
        ]);
        assert_eq!(jenkins.run_id.as_deref(), Some("88"));
        for bad in ["0", "-1", "two", "99999999999"] {
            let env = detect(&[("GITHUB_ACTIONS", "true"), ("GITHUB_RUN_ATTEMPT", bad)]);
            assert_eq!(env.attempt, None, "GITHUB_RUN_ATTEMPT={bad}");
        }
        let generic = detect(&[("CI", "true"), ("GITHUB_RUN_ID", "1")]);
        assert_eq!(
            generic.run_id, None,
            "only a named service's variables are read"
        );
    }

    #[test]
    fn empty_values_count_as_unset() {
        let env = detect(&[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_HEAD_REF", ""),
            ("GITHUB_REF_NAME", "main"),
            ("GITHUB_JOB", "  "),
        ]);
        assert_eq!(env.branch.as_deref(), Some("main"));
        assert_eq!(env.job, None);
    }
}
