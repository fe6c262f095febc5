//! `candor classify`: run records in, one bucket per test out, with what to spend on it.
//! The buckets are `crate::classify`'s.

use super::{AppError, Ports};
use crate::cli::settings::ClassifySettings;
use crate::events::Event;
use crate::{classify, records};

/// Reads the records and emits one `classify` event per test; the exit code is the
/// buckets'.
pub fn run(settings: &ClassifySettings, ports: &mut Ports<'_>) -> Result<u8, AppError> {
    let records = records::read_all(&settings.records)?;
    let classified = classify::classify(&records);
    let code = classify::exit_code(&classified);
    for test in classified {
        ports.emit(Event::Classify(test));
    }
    Ok(code)
}
