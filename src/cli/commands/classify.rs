//! `candor classify`: run records in, one bucket per test out, with what to spend on it.

use super::super::error::CliError;
use super::super::output::{Printer, terminal_safe};
use super::super::settings::ClassifySettings;
use crate::classify::{self, Classified};
use crate::records;

/// Reads the records, buckets every test, prints one line each.
pub(super) fn run(settings: &ClassifySettings, printer: &mut Printer) -> Result<u8, CliError> {
    let records = records::read_all(&settings.records)?;
    let classified = classify::classify(&records);
    for test in &classified {
        if printer.is_json() {
            printer.json("classify", test)?;
        } else {
            print_human(printer, test)?;
        }
    }
    Ok(classify::exit_code(&classified))
}

fn print_human(printer: &mut Printer, test: &Classified) -> Result<(), CliError> {
    // A comparison's two sides are judged apart: each line says which it is.
    let side = match test.side {
        Some(crate::records::Side::Base) => "merge base: ",
        Some(crate::records::Side::Branch) => "branch: ",
        _ => "",
    };
    printer.line(&format!(
        "{}: {} ({side}{} runs, {} failed)",
        test.bucket.as_str(),
        terminal_safe(&test.test),
        test.runs,
        test.failures
    ))?;
    printer.line(&format!("  why: {}", terminal_safe(&test.reason)))?;
    printer.line(&format!("  spend: {}", test.spend))?;
    Ok(())
}
