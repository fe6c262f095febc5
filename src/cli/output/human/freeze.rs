//! `candor freeze check` for people: one line per freeze (its state, when it expires, what
//! holds it, its owner and reference), then what to do.

use std::io;

use crate::cli::output::{Printer, Render, Style, terminal_safe, text};
use crate::events::{Event, FreezeEvent};

/// The renderer: each freeze as it comes.
#[derive(Debug, Default, Clone, Copy)]
pub struct Freeze;

impl Render for Freeze {
    fn render(&mut self, printer: &mut Printer, event: &Event) -> io::Result<()> {
        match event {
            Event::Freeze(freeze) => {
                let line = line(freeze, printer.color_stdout());
                printer.line(&line)
            }
            Event::Text(line) => text(printer, line),
            _ => Ok(()),
        }
    }
}

fn line(freeze: &FreezeEvent, color: bool) -> String {
    let (label, style) = match freeze.state.as_str() {
        "expired" => ("expired", Style::Red),
        "expiring" => ("expiring", Style::Yellow),
        "lapsed" => ("lapsed", Style::Dim),
        _ => ("active", Style::Green),
    };
    let when = match freeze.days_left {
        0 => format!("expires today ({})", freeze.expires),
        1 => format!("expires tomorrow ({})", freeze.expires),
        days @ 2.. => format!("expires {} (in {days} days)", freeze.expires),
        -1 => format!("expired {} (yesterday)", freeze.expires),
        days => format!("expired {} ({} days ago)", freeze.expires, -days),
    };
    let mut held = Vec::new();
    if freeze.quarantined {
        held.push("quarantined".to_owned());
    }
    if let Some(mark) = &freeze.skip_mark {
        held.push(format!("`{}` at {}:{}", mark.mark, mark.file, mark.line));
    }
    let held = if held.is_empty() {
        "runs again; the freeze can go".to_owned()
    } else {
        format!("held: {}", held.join(", "))
    };
    let reference = match (&freeze.ticket, &freeze.replay) {
        (Some(ticket), _) => format!("ticket {ticket}"),
        (None, Some(replay)) => format!("replay {replay}"),
        (None, None) => String::new(),
    };
    format!(
        "{} {}  {when}; {held}; owner {}, {}",
        style.paint(&format!("{label:<8}"), color),
        terminal_safe(&freeze.test),
        terminal_safe(&freeze.owner),
        terminal_safe(&reference),
    )
}
