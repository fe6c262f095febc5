//! `candor rerun TEST`: the workflow is [`crate::app::rerun`].

use super::{Open, open_store, ports};
use crate::cli::error::CliError;
use crate::cli::output::{Printer, human, sink};
use crate::cli::settings::{RerunSettings, Settings};

pub(super) fn run(
    rerun: &RerunSettings,
    settings: &Settings,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    let mut sink = sink(printer, human::Verdicts::alone());
    let code = crate::app::rerun::run(
        rerun,
        || open_store(&settings.db, Open::Existing),
        &mut ports(settings, &mut sink),
    );
    sink.finish()?;
    code
}
