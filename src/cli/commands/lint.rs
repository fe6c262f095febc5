//! `candor lint summary FILE`: the workflow is [`crate::app::lint`].

use super::ports;
use crate::cli::error::CliError;
use crate::cli::output::{Printer, human, sink};
use crate::cli::settings::{LintSummarySettings, Settings};

pub(super) fn run(
    lint: &LintSummarySettings,
    settings: &Settings,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    let mut sink = sink(printer, human::Lint);
    let code = crate::app::lint::run(lint, &mut ports(settings, &mut sink));
    sink.finish()?;
    code
}
