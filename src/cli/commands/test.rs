//! `candor test [-- ARGV...]`: the workflow is [`crate::app::test`].

use super::{Open, open_store, ports};
use crate::cli::error::CliError;
use crate::cli::output::{Printer, human, sink};
use crate::cli::settings::{Settings, TestSettings};

pub(super) fn run(
    test: &TestSettings,
    settings: &Settings,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    let mut sink = sink(printer, human::Verdicts::with_next_steps());
    let code = crate::app::test::run(
        test,
        || open_store(&settings.db, Open::CreateIfMissing),
        &settings.db,
        &mut ports(settings, &mut sink),
    );
    sink.finish()?;
    code
}
