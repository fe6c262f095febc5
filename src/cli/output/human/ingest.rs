//! `candor ingest` for people: one line per stored file, a summary when there were
//! several files or a failure (a failed file's error is on stderr already).

use std::io;

use crate::app::ingest::short;
use crate::cli::output::{Printer, Render};
use crate::events::{CommitFrom, Event, IngestStatus};

/// The renderer.
#[derive(Debug, Default)]
pub struct Ingest;

impl Render for Ingest {
    fn render(&mut self, printer: &mut Printer, event: &Event) -> io::Result<()> {
        match event {
            Event::Ingest(line) if line.status != IngestStatus::Failed => {
                // Only an assumed commit is said: a given one is the reader's own.
                let stamped = match (line.commit_from, line.commit.as_deref()) {
                    (Some(CommitFrom::Head), Some(commit)) => {
                        format!(" for HEAD {} (no --commit given)", short(commit))
                    }
                    _ => String::new(),
                };
                let run_id = line.run_id.unwrap_or_default();
                let text = if line.status == IngestStatus::Stored {
                    let format = line.format.as_deref();
                    // A generic JUnit file names no tool but `junit`; say it once.
                    let producer = line.producer.as_deref().filter(|p| Some(*p) != format);
                    let kind = match (format, producer) {
                        (Some(format), Some(producer)) => format!(" [{format}, {producer}]"),
                        (Some(only), None) | (None, Some(only)) => format!(" [{only}]"),
                        (None, None) => String::new(),
                    };
                    format!(
                        "stored {} ({} red) from {}{kind} as run #{run_id}{stamped}",
                        plural(line.tests.unwrap_or_default(), "test", "tests"),
                        line.red.unwrap_or_default(),
                        line.file,
                    )
                } else {
                    format!("already stored: {} (run #{run_id}){stamped}", line.file)
                };
                printer.info(&text)
            }
            Event::IngestSummary(summary) if summary.files > 1 || summary.failed > 0 => {
                let mut parts = vec![format!("{} stored", summary.stored)];
                if summary.already_stored > 0 {
                    parts.push(format!("{} already stored", summary.already_stored));
                }
                if summary.failed > 0 {
                    parts.push(format!(
                        "{} failed ({})",
                        summary.failed,
                        summary.failed_files.join(", ")
                    ));
                }
                printer.info(&format!(
                    "{}: {}",
                    plural(summary.files, "file", "files"),
                    parts.join(", ")
                ))
            }
            _ => Ok(()),
        }
    }
}

/// `1 file`, `3 files`.
pub fn plural(count: u64, one: &str, many: &str) -> String {
    format!("{count} {}", if count == 1 { one } else { many })
}
