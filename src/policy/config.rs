//! `candor.toml`: the embedded default, parsing with unknown keys refused by name, and
//! validation that points at the offending line.

use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::stats::tiers::{Tier, TierPolicy};

/// The commented starter file `candor init` writes; every key at its default.
pub const DEFAULT_CONFIG: &str = include_str!("default-candor.toml");

/// The policy file's name at the repository root.
pub const CONFIG_FILE: &str = "candor.toml";

/// The resolved policy.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Where it was read from; `None` when the repository has no `candor.toml`.
    pub path: Option<PathBuf>,
    /// `[reliability]`.
    pub reliability: ReliabilityConfig,
}

/// `[reliability]`, resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct ReliabilityConfig {
    /// The reliability file, relative to the repository root.
    pub file: PathBuf,
    /// The tier machine's policy.
    pub tiers: TierPolicy,
}

impl Default for Config {
    fn default() -> Self {
        Config::parse(DEFAULT_CONFIG, Path::new("<default candor.toml>"))
            .expect("the embedded default candor.toml is valid")
    }
}

/// A `candor.toml` that cannot be used, located in the file.
#[derive(Debug, thiserror::Error)]
#[error("{}:{line}:{column}: {message}", path.display())]
pub struct ConfigError {
    /// The file.
    pub path: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

impl ConfigError {
    /// What to do about it.
    pub fn hint(&self) -> String {
        format!(
            "fix {} (the reference is docs/configuration.md; `candor init --print` shows every key with its default)",
            self.path.display()
        )
    }

    fn at(
        path: &Path,
        text: &str,
        span: Option<Range<usize>>,
        message: impl Into<String>,
    ) -> ConfigError {
        let (line, column) = span.map_or((1, 1), |span| line_column(text, span.start));
        ConfigError {
            path: path.to_owned(),
            line,
            column,
            message: message.into(),
        }
    }
}

/// 1-based line and column (in characters) of a byte offset.
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    reliability: Option<Spanned<RawReliability>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawReliability {
    file: Option<Spanned<String>>,
    window_runs: Option<Spanned<i64>>,
    flake_budget: Option<Spanned<f64>>,
    promote_after_window: Option<bool>,
    default_tier: Option<Spanned<String>>,
    min_runs: Option<Spanned<i64>>,
}

impl Config {
    /// Reads `candor.toml` at `repo_root`; the defaults when there is none.
    pub fn load(repo_root: &Path) -> Result<Config, ConfigError> {
        let path = repo_root.join(CONFIG_FILE);
        match fs_err::read_to_string(&path) {
            Ok(text) => Config::parse(&text, &path),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
            Err(error) => Err(ConfigError {
                path,
                line: 1,
                column: 1,
                message: format!("cannot read the file: {error}"),
            }),
        }
    }

    /// Parses and validates `text`, read from `path`.
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let raw: RawConfig = toml::from_str(text).map_err(|error| {
            ConfigError::at(path, text, error.span(), error.message().trim().to_owned())
        })?;
        let defaults = TierPolicy::default();
        let mut tiers = defaults.clone();
        let mut file = PathBuf::from(".ci/test-reliability.yaml");
        if let Some(reliability) = raw.reliability {
            let reliability = reliability.into_inner();
            if let Some(value) = reliability.file {
                let span = value.span();
                let value = value.into_inner();
                if value.trim().is_empty() {
                    return Err(ConfigError::at(
                        path,
                        text,
                        Some(span),
                        "`reliability.file` is empty",
                    ));
                }
                file = PathBuf::from(value);
            }
            if let Some(value) = reliability.window_runs {
                tiers.window_runs = positive(path, text, "reliability.window_runs", &value)?;
            }
            if let Some(value) = reliability.min_runs {
                tiers.min_runs = positive(path, text, "reliability.min_runs", &value)?;
            }
            if let Some(value) = reliability.flake_budget {
                let budget = *value.get_ref();
                if !(0.0..1.0).contains(&budget) {
                    return Err(ConfigError::at(
                        path,
                        text,
                        Some(value.span()),
                        format!(
                            "`reliability.flake_budget` is {budget}: it is a share of failing runs, at least 0 and below 1 (0.02 means 2%)"
                        ),
                    ));
                }
                tiers.flake_budget = budget;
            }
            if let Some(value) = reliability.promote_after_window {
                tiers.promote_after_window = value;
            }
            if let Some(value) = reliability.default_tier {
                tiers.default_tier = Tier::from_str_opt(value.get_ref()).ok_or_else(|| {
                    ConfigError::at(
                        path,
                        text,
                        Some(value.span()),
                        format!(
                            "`reliability.default_tier` is {:?}: expected \"trusted\", \"probation\" or \"quarantined\"",
                            value.get_ref()
                        ),
                    )
                })?;
            }
        }
        if tiers.min_runs > tiers.window_runs {
            return Err(ConfigError::at(
                path,
                text,
                None,
                format!(
                    "`reliability.min_runs` ({}) is larger than `reliability.window_runs` ({}): no test could ever be judged",
                    tiers.min_runs, tiers.window_runs
                ),
            ));
        }
        Ok(Config {
            path: Some(path.to_owned()),
            reliability: ReliabilityConfig { file, tiers },
        })
    }
}

fn positive(
    path: &Path,
    text: &str,
    key: &str,
    value: &Spanned<i64>,
) -> Result<usize, ConfigError> {
    let number = *value.get_ref();
    usize::try_from(number)
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| {
            ConfigError::at(
                path,
                text,
                Some(value.span()),
                format!("`{key}` is {number}: it must be a whole number above 0"),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(text, Path::new("candor.toml"))
    }

    #[test]
    fn the_default_parses_with_no_unknown_keys_and_matches_the_built_in_policy() {
        // deny_unknown_fields makes any key the code does not read an error here.
        let config = parse(DEFAULT_CONFIG).expect("default parses");
        assert_eq!(config.reliability.tiers, TierPolicy::default());
        assert_eq!(
            config.reliability.file,
            PathBuf::from(".ci/test-reliability.yaml")
        );
    }

    #[test]
    fn unknown_keys_are_named_with_their_line() {
        let error = parse("[reliability]\nwindow_runs = 100\nflake_budjet = 0.1\n").unwrap_err();
        assert_eq!((error.line, error.column), (3, 1));
        assert!(error.message.contains("flake_budjet"), "{}", error.message);
        let error = parse("[reliabilty]\n").unwrap_err();
        assert!(error.message.contains("reliabilty"), "{}", error.message);
    }

    #[test]
    fn out_of_range_values_point_at_their_line() {
        let error = parse("[reliability]\n\nflake_budget = 1.5\n").unwrap_err();
        assert_eq!(error.line, 3);
        assert!(error.message.contains("flake_budget"));
        let error = parse("[reliability]\nwindow_runs = -4\n").unwrap_err();
        assert_eq!(error.line, 2);
        let error = parse("[reliability]\ndefault_tier = \"gold\"\n").unwrap_err();
        assert_eq!(error.line, 2);
        assert!(error.message.contains("gold"));
        let error = parse("[reliability]\nwindow_runs = 10\nmin_runs = 20\n").unwrap_err();
        assert!(error.message.contains("min_runs"));
    }

    #[test]
    fn bad_toml_is_located() {
        let error = parse("[reliability\n").unwrap_err();
        assert_eq!(error.line, 1);
        assert!(error.to_string().starts_with("candor.toml:1:"));
    }

    #[test]
    fn line_column_counts_characters() {
        assert_eq!(line_column("ab\ncdé\nf", 7), (2, 4));
        assert_eq!(line_column("ab\ncdé\nf", 8), (3, 1));
        assert_eq!(line_column("", 0), (1, 1));
    }
}
