//! `candor tests`: the workflow is [`crate::app::tests`].

use super::{Open, open_store, ports};
use crate::cli::error::CliError;
use crate::cli::output::{Printer, human, sink};
use crate::cli::settings::{Settings, TestsSettings};

pub(super) fn run(
    tests: &TestsSettings,
    settings: &Settings,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    let mut sink = sink(printer, human::tests());
    let code = crate::app::tests::run(
        tests,
        || open_store(&settings.db, Open::Existing),
        &mut ports(settings, &mut sink),
    );
    sink.finish()?;
    code
}
