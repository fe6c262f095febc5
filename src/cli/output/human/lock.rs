//! `candor lock` for people: one line per file that drifted from its lock, then what was
//! written or found.

use std::io;

use crate::cli::output::{Printer, Render, terminal_safe, text};
use crate::events::Event;
use crate::gate::locks::DriftKind;

/// The renderer: each drift as it comes.
#[derive(Debug, Default, Clone, Copy)]
pub struct Lock;

impl Render for Lock {
    fn render(&mut self, printer: &mut Printer, event: &Event) -> io::Result<()> {
        match event {
            Event::Drift(drift) => {
                let what = match drift.kind {
                    DriftKind::Changed => "changed, and the lock was not",
                    DriftKind::Added => "is new, and not in the lock",
                    DriftKind::Removed => "is gone, and still in the lock",
                };
                printer.line(&format!("{}: {what}", terminal_safe(&drift.path)))
            }
            Event::Text(line) => text(printer, line),
            _ => Ok(()),
        }
    }
}
