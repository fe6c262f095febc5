//! `candor ingest PATH...`: the workflow is [`crate::app::ingest`].

use super::{Open, open_store, ports};
use crate::cli::error::CliError;
use crate::cli::output::human;
use crate::cli::output::{Printer, sink};
use crate::cli::settings::IngestSettings;
use crate::cli::settings::Settings;

pub(super) fn run(
    ingest: &IngestSettings,
    settings: &Settings,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    let mut store = open_store(&settings.db, Open::CreateIfMissing)?;
    let mut sink = sink(printer, human::Ingest);
    let code = crate::app::ingest::run(ingest, &mut *store, &mut ports(settings, &mut sink));
    sink.finish()?;
    code
}
