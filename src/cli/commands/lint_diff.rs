//! `candor lint diff [--base REF] [--head REF]`: the workflow is [`crate::app::lint_diff`].

use super::ports;
use crate::cli::error::CliError;
use crate::cli::output::{Printer, human, sink};
use crate::cli::settings::{LintDiffSettings, Settings};
use crate::git::Git;

pub(super) fn run(
    lint: &LintDiffSettings,
    settings: &Settings,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    let git = Git::new(&settings.repo_root);
    let mut sink = sink(printer, human::LintDiff);
    let code = crate::app::lint_diff::run(lint, &git, &mut ports(settings, &mut sink));
    sink.finish()?;
    code
}
