//! `candor lint summary` for people: one line per unbacked claim, named with its file and
//! line, then what to do.

use std::io;

use crate::cli::output::{Printer, Render, terminal_safe, text};
use crate::events::Event;

/// The renderer: each claim as it comes.
#[derive(Debug, Default, Clone, Copy)]
pub struct Lint;

impl Render for Lint {
    fn render(&mut self, printer: &mut Printer, event: &Event) -> io::Result<()> {
        match event {
            Event::UnbackedClaim(claim) => {
                let phrase = claim
                    .phrase
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ");
                printer.line(&format!(
                    "{}:{}: \"{}\" quotes no ledger line: {}",
                    claim.file,
                    claim.line,
                    terminal_safe(&phrase),
                    terminal_safe(&claim.sentence)
                ))
            }
            Event::Text(line) => text(printer, line),
            _ => Ok(()),
        }
    }
}
