//! Annotations at a regression's failing frame: GitHub workflow commands (`::error …::`)
//! within GitHub's limit of 10 error annotations per step, the rest summarized in one,
//! and a GitLab Code Quality report.

use std::fmt::Write as _;

use serde::Serialize;
use sha2::{Digest, Sha256};

/// GitHub shows at most this many error annotations per step.
pub const GITHUB_ERRORS_PER_STEP: usize = 10;

/// A regression to annotate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Annotation {
    /// Canonical test id.
    pub test: String,
    /// File of the failing frame, relative to the repository root.
    pub file: Option<String>,
    /// Line of the failing frame.
    pub line: Option<u32>,
    /// `Exception: message`.
    pub message: String,
    /// The verdict's name.
    pub verdict: String,
}

/// GitHub's escaping for a command's message.
fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// GitHub's escaping for a command's property values.
fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// The workflow commands, one per line: at most [`GITHUB_ERRORS_PER_STEP`], the last one
/// summarizing the rest when there are more.
pub fn github(annotations: &[Annotation]) -> String {
    let shown = if annotations.len() > GITHUB_ERRORS_PER_STEP {
        GITHUB_ERRORS_PER_STEP - 1
    } else {
        annotations.len()
    };
    let mut out = String::new();
    for annotation in &annotations[..shown] {
        let mut properties = Vec::new();
        if let Some(file) = &annotation.file {
            properties.push(format!("file={}", escape_property(file)));
            if let Some(line) = annotation.line {
                properties.push(format!("line={line}"));
            }
        }
        properties.push(format!(
            "title={}",
            escape_property(&format!(
                "candor {}: {}",
                annotation.verdict, annotation.test
            ))
        ));
        let _ = writeln!(
            out,
            "::error {}::{}",
            properties.join(","),
            escape_data(&annotation.message)
        );
    }
    let rest = annotations.len() - shown;
    if rest > 0 {
        let _ = writeln!(
            out,
            "::error title={}::{}",
            escape_property("candor: more regressions"),
            escape_data(&format!(
                "{rest} more regressions are not annotated (GitHub shows {GITHUB_ERRORS_PER_STEP} per step): run `candor triage` for all of them"
            ))
        );
    }
    out
}

/// One GitLab Code Quality issue.
#[derive(Debug, Serialize)]
struct CodeQualityIssue {
    description: String,
    check_name: String,
    fingerprint: String,
    severity: &'static str,
    location: Location,
}

#[derive(Debug, Serialize)]
struct Location {
    path: String,
    lines: Lines,
}

#[derive(Debug, Serialize)]
struct Lines {
    begin: u32,
}

/// The GitLab Code Quality report (a JSON array). Regressions without a file are placed
/// at the test's own file (the part of the id before `::`), line 1.
pub fn gitlab_codequality(annotations: &[Annotation]) -> String {
    let issues: Vec<CodeQualityIssue> = annotations
        .iter()
        .map(|annotation| {
            let path = annotation.file.clone().unwrap_or_else(|| {
                annotation
                    .test
                    .split("::")
                    .next()
                    .unwrap_or(&annotation.test)
                    .to_owned()
            });
            let begin = annotation.line.unwrap_or(1);
            let fingerprint = hex::encode(Sha256::digest(
                format!(
                    "{}\0{}\0{}",
                    annotation.test, annotation.verdict, annotation.message
                )
                .as_bytes(),
            ));
            CodeQualityIssue {
                description: format!(
                    "{} ({}): {}",
                    annotation.test, annotation.verdict, annotation.message
                ),
                check_name: format!("candor-{}", annotation.verdict),
                fingerprint,
                severity: "major",
                location: Location {
                    path,
                    lines: Lines { begin },
                },
            }
        })
        .collect();
    serde_json::to_string_pretty(&issues).expect("plain data serializes")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn regression(i: usize) -> Annotation {
        Annotation {
            test: format!("tests/test_a.py::test_{i}"),
            file: Some("src/a,b.py".to_owned()),
            line: Some(12),
            message: "KeyError: 'x'\n100% sure".to_owned(),
            verdict: "regression".to_owned(),
        }
    }

    #[test]
    fn github_commands_are_escaped() {
        let text = github(&[regression(1)]);
        assert_eq!(
            text,
            "::error file=src/a%2Cb.py,line=12,title=candor regression%3A tests/test_a.py%3A%3Atest_1::KeyError: 'x'%0A100%25 sure\n"
        );
    }

    #[test]
    fn github_stays_within_ten_per_step_and_summarizes_the_rest() {
        let many: Vec<Annotation> = (0..25).map(regression).collect();
        let text = github(&many);
        assert_eq!(text.lines().count(), GITHUB_ERRORS_PER_STEP);
        assert!(text.lines().last().unwrap().contains("16 more regressions"));
        let ten: Vec<Annotation> = (0..10).map(regression).collect();
        assert_eq!(github(&ten).lines().count(), 10);
        assert!(!github(&ten).contains("more regressions"));
    }

    #[test]
    fn gitlab_report_is_a_json_array_with_locations() {
        let text = gitlab_codequality(&[regression(1)]);
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value[0]["location"]["path"], "src/a,b.py");
        assert_eq!(value[0]["location"]["lines"]["begin"], 12);
        assert_eq!(value[0]["severity"], "major");
        assert_eq!(value[0]["fingerprint"].as_str().unwrap().len(), 64);
    }
}
