//! `candor order`: settings in, `app::order` with the real ports, the finding out.
//!
//! Exit codes, as `compare`'s: 0 when a verified order, seed or repeat dependence explains
//! the red (the test's own defect, not the change's); 1 when nothing explains it (fails in
//! every order, not reproduced, flaky alone, not isolated, budget spent first); 2 when the
//! test did not run at all, or on usage and input errors.

use super::ports;
use crate::cli::error::CliError;
use crate::cli::output::{Printer, human, sink};
use crate::cli::settings::{OrderSettings, Settings};
use crate::exit_codes;

pub(super) fn run(
    order: &OrderSettings,
    settings: &Settings,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    let mut sink = sink(printer, human::Later);
    let found = crate::app::order::order(order, &mut ports(settings, &mut sink));
    sink.finish()?;
    let found = found?;
    if !printer.is_json() {
        human::order(printer, &found)?;
    }
    Ok(
        if found.event.finding.investigation.verdict.explains_red() {
            exit_codes::OK
        } else {
            exit_codes::NEGATIVE
        },
    )
}
