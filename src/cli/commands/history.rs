//! `candor history copy` and `candor history prune`: the workflows are
//! [`crate::app::history`].

use jiff::Timestamp;

use super::ports;
use crate::cli::error::CliError;
use crate::cli::output::{Printer, TextOnly, sink};
use crate::cli::settings::Settings;
use crate::history::Location;

pub(super) fn copy(
    from: &Location,
    to: &Location,
    settings: &Settings,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    let mut sink = sink(printer, TextOnly);
    let code = crate::app::history::copy(from, to, &mut ports(settings, &mut sink));
    sink.finish()?;
    code
}

pub(super) fn prune(
    older_than: &str,
    now: Timestamp,
    settings: &Settings,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    let mut sink = sink(printer, TextOnly);
    let code = crate::app::history::prune(
        &settings.db,
        older_than,
        now,
        &mut ports(settings, &mut sink),
    );
    sink.finish()?;
    code
}
