//! `candor reliability`: the workflow is [`crate::app::reliability`].

use super::{Open, open_store, ports};
use crate::cli::error::CliError;
use crate::cli::output::{Printer, human, sink};
use crate::cli::settings::{ReliabilitySettings, Settings};

pub(super) fn run(
    reliability: &ReliabilitySettings,
    settings: &Settings,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    let mut sink = sink(printer, human::Reliability::default());
    let code = crate::app::reliability::run(
        reliability,
        || open_store(&settings.db, Open::Existing),
        &mut ports(settings, &mut sink),
    );
    sink.finish()?;
    code
}
