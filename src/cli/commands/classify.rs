//! `candor classify`: the workflow is [`crate::app::classify`].

use super::ports;
use crate::cli::error::CliError;
use crate::cli::output::{Printer, human, sink};
use crate::cli::settings::{ClassifySettings, Settings};

pub(super) fn run(
    classify: &ClassifySettings,
    settings: &Settings,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    let mut sink = sink(printer, human::Classify);
    let code = crate::app::classify::run(classify, &mut ports(settings, &mut sink));
    sink.finish()?;
    code
}
