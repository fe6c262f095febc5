//! `candor classify` for people: per test its bucket, why, and what to spend on it.

use std::io;

use crate::cli::output::{Printer, Render, terminal_safe, text};
use crate::events::Event;
use crate::records::Side;

/// The renderer: each test as it comes.
#[derive(Debug, Default, Clone, Copy)]
pub struct Classify;

impl Render for Classify {
    fn render(&mut self, printer: &mut Printer, event: &Event) -> io::Result<()> {
        match event {
            Event::Classify(test) => {
                // A comparison's two sides are judged apart: each line says which it is.
                let side = match test.side {
                    Some(Side::Base) => "merge base: ",
                    Some(Side::Branch) => "branch: ",
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
                printer.line(&format!("  spend: {}", test.spend))
            }
            Event::Text(line) => text(printer, line),
            _ => Ok(()),
        }
    }
}
