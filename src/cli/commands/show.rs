//! `candor show TEST`: the workflow is [`crate::app::show`].

use super::{Open, open_store, ports};
use crate::cli::error::CliError;
use crate::cli::output::{Printer, human, sink};
use crate::cli::settings::{Settings, ShowSettings};

pub(super) fn run(
    show: &ShowSettings,
    settings: &Settings,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    let mut sink = sink(printer, human::show());
    let code = crate::app::show::run(
        show,
        || open_store(&settings.db, Open::Existing),
        &mut ports(settings, &mut sink),
    );
    sink.finish()?;
    code
}
