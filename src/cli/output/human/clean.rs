//! `candor clean` for people: the folders removed (cut short on a terminal) and one line
//! saying why.

use std::io;

use crate::app::running::RUNS_DIR;
use crate::cli::output::{Printer, Render};
use crate::events::Event;

/// The renderer.
#[derive(Debug, Default)]
pub struct Clean;

impl Render for Clean {
    fn render(&mut self, printer: &mut Printer, event: &Event) -> io::Result<()> {
        let Event::Clean(cleaned) = event else {
            return Ok(());
        };
        let verb = if cleaned.dry_run {
            "would remove"
        } else {
            "removed"
        };
        let lines: Vec<String> = cleaned
            .removed
            .iter()
            .map(|path| format!("  {verb} {}", path.display()))
            .collect();
        printer.listing(&lines, "run folders")?;
        let why = if cleaned.all {
            "--all".to_owned()
        } else {
            format!(
                "[runs] keeps the newest {} and any younger than {} days",
                cleaned.keep_last, cleaned.keep_days
            )
        };
        printer.info(&format!(
            "{verb} {} run folder(s) ({:.1} MB) from {RUNS_DIR}, kept {} ({why}); the history in .candor/history.db is untouched",
            cleaned.removed.len(),
            bytes_to_mb(cleaned.bytes),
            cleaned.kept,
        ))
    }
}

#[expect(clippy::cast_precision_loss, reason = "a size shown to one decimal")]
fn bytes_to_mb(bytes: u64) -> f64 {
    bytes as f64 / 1_000_000.0
}
