//! `candor triage [RESULT_FILE...]`: the workflow is [`crate::app::triage`].

use super::{Open, open_store, ports};
use crate::cli::error::CliError;
use crate::cli::output::{Printer, human, sink};
use crate::cli::settings::{Settings, TriageSettings};

pub(super) fn run(
    triage: &TriageSettings,
    settings: &Settings,
    printer: &mut Printer,
) -> Result<u8, CliError> {
    // Result files can be triaged without a history; with one, it is read for evidence.
    let open = || {
        (triage.files.is_empty() || settings.db.exists())
            .then(|| open_store(&settings.db, Open::Existing))
            .transpose()
    };
    let mut sink = sink(printer, human::Verdicts::with_next_steps());
    let code = crate::app::triage::run(triage, open, &settings.db, &mut ports(settings, &mut sink));
    sink.finish()?;
    code
}
pub(super) use crate::app::triage::{reds_in_files, reds_in_history};
