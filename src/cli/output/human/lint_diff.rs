//! `candor lint diff` for people: `file:line: rule: reason` and the line for each finding,
//! then what the lane makes of them.

use std::io;

use crate::cli::output::{Printer, Render, Style, terminal_safe, text};
use crate::events::Event;

/// The renderer: each finding as it comes.
#[derive(Debug, Default, Clone, Copy)]
pub struct LintDiff;

impl Render for LintDiff {
    fn render(&mut self, printer: &mut Printer, event: &Event) -> io::Result<()> {
        match event {
            Event::Finding(finding) => {
                let color = printer.color_stdout();
                let mut reason = terminal_safe(&finding.reason);
                if let Some(source) = &finding.source {
                    reason = format!("{reason} (from {})", terminal_safe(source));
                }
                printer.line(&format!(
                    "{}:{}: {}: {reason}",
                    terminal_safe(&finding.file),
                    finding.line,
                    Style::Red.paint(&finding.rule, color),
                ))?;
                if !finding.text.is_empty() {
                    printer.line(&format!(
                        "    {}",
                        Style::Dim.paint(&terminal_safe(&finding.text), color)
                    ))?;
                }
                Ok(())
            }
            Event::Text(line) => text(printer, line),
            _ => Ok(()),
        }
    }
}
