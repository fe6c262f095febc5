//! `candor lint summary`: a pull-request summary may say a test "passed on rerun" only in
//! a sentence that quotes the ledger line recording that rerun, verbatim.
//!
//! Sentences end at `.`, `!` or `?` followed by whitespace or the end of the text, at a
//! blank line, and before a line that starts a Markdown list item, heading, quote or
//! table row. A sentence ending in `:` continues into the indented code block, quote block
//! or fenced code block right after it (blank lines between allowed, as CommonMark needs
//! one before an indented block), through to that block's end: "passed on rerun:" and
//! the receipt quoted below it are one sentence. A quoted ledger line is never split (its
//! test id may hold `. `), so a quote belongs to exactly one sentence. Phrases match case-insensitively, and a space in a
//! phrase matches any run of whitespace, so a phrase wrapped across lines still counts.

use std::ops::Range;

use regex::Regex;
use serde::Serialize;

use super::Ledger;

/// The phrases `[triage] summary_phrases` defaults to: the ways a summary says a red
/// went green on a rerun.
pub const DEFAULT_PHRASES: &[&str] = &[
    "passed on rerun",
    "known intermittent",
    "flaky, retried",
    "known flake",
];

/// A sentence that claims a rerun without quoting its receipt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnbackedClaim {
    /// 1-based line of the phrase in the text.
    pub line: usize,
    /// The phrase as the text spells it.
    pub phrase: String,
    /// The sentence, trimmed, its whitespace runs shown as single spaces.
    pub sentence: String,
}

/// Every sentence of `text` containing one of `phrases` that quotes no line of `ledger`
/// verbatim, in text order. The error is only possible for a phrase list so large that
/// its pattern exceeds the regex size limit.
pub fn lint_summary(
    text: &str,
    ledger: &Ledger,
    phrases: &[String],
) -> Result<Vec<UnbackedClaim>, regex::Error> {
    let Some(claims) = phrase_pattern(phrases)? else {
        return Ok(Vec::new());
    };
    let quotes = quoted_ledger_lines(text, ledger);
    let mut unbacked = Vec::new();
    for sentence in sentences(text, &quotes) {
        let Some(body) = text.get(sentence.clone()) else {
            continue;
        };
        let Some(found) = claims.find(body) else {
            continue;
        };
        let backed = quotes
            .iter()
            .any(|q| q.start < sentence.end && q.end > sentence.start);
        if !backed {
            let at = sentence.start + found.start();
            unbacked.push(UnbackedClaim {
                line: text
                    .get(..at)
                    .map_or(1, |before| before.matches('\n').count() + 1),
                phrase: found.as_str().to_owned(),
                sentence: body.split_whitespace().collect::<Vec<_>>().join(" "),
            });
        }
    }
    Ok(unbacked)
}

/// One case-insensitive alternation of the phrases; `None` when there are none.
fn phrase_pattern(phrases: &[String]) -> Result<Option<Regex>, regex::Error> {
    let alternatives: Vec<String> = phrases
        .iter()
        .map(|phrase| {
            phrase
                .split_whitespace()
                .map(regex::escape)
                .collect::<Vec<_>>()
                .join(r"\s+")
        })
        .filter(|alternative| !alternative.is_empty())
        .collect();
    if alternatives.is_empty() {
        return Ok(None);
    }
    Regex::new(&format!("(?i)(?:{})", alternatives.join("|"))).map(Some)
}

/// Byte ranges of every verbatim occurrence of a ledger line that records how a rerun
/// ended, sorted. A `pending` line is no receipt for a claim: it was written before the
/// rerun ran and says nothing about how it went.
fn quoted_ledger_lines(text: &str, ledger: &Ledger) -> Vec<Range<usize>> {
    let mut found: Vec<Range<usize>> = Vec::new();
    let finished = ledger
        .lines
        .iter()
        .filter(|line| line.entry.outcome != super::LedgerOutcome::Pending);
    for line in finished {
        found.extend(
            text.match_indices(line.text.as_str())
                .map(|(at, quoted)| at..at + quoted.len()),
        );
    }
    found.sort_by_key(|range| (range.start, range.end));
    found
}

/// Sentence ranges (whitespace-only ones left out), never cutting through a quote.
fn sentences(text: &str, quotes: &[Range<usize>]) -> Vec<Range<usize>> {
    let inside_quote = |at: usize| quotes.iter().any(|q| q.contains(&at));
    let mut sentences = Vec::new();
    let mut start = 0;
    // Inside a block a `:` sentence continues into: nothing there ends it, and it ends
    // where the block does.
    let mut block_end: Option<usize> = None;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if let Some(end) = block_end {
            if at < end {
                continue;
            }
            block_end = None;
            if at == end {
                sentences.push(start..end);
                start = end;
                continue;
            }
        }
        if inside_quote(at) {
            continue;
        }
        let next = chars.peek().map(|(_, next)| *next);
        let end = match c {
            '.' | '!' | '?' if next.is_none_or(char::is_whitespace) => Some(at + c.len_utf8()),
            '\n' if text.get(at + 1..).is_some_and(starts_a_new_block) => {
                let introduces = text
                    .get(start..at)
                    .is_some_and(|so_far| so_far.trim_end().ends_with(':'));
                match introduces.then(|| block_after(text, at + 1)).flatten() {
                    Some(end) => {
                        block_end = Some(end);
                        None
                    }
                    None => Some(at),
                }
            }
            _ => None,
        };
        if let Some(end) = end {
            sentences.push(start..end);
            start = end;
        }
    }
    sentences.push(start..text.len());
    sentences.retain(|range| {
        text.get(range.clone())
            .is_some_and(|s| !s.trim().is_empty())
    });
    sentences
}

/// Where the code or quote block that starts at `from` (after blank lines) ends: the
/// index of the newline after its last line, or the text's end. `None` when what follows
/// is not such a block.
fn block_after(text: &str, from: usize) -> Option<usize> {
    // Lines from `from`, each with its start.
    let mut lines = Vec::new();
    let mut at = from;
    for line in text.get(from..)?.split('\n') {
        lines.push((at, line));
        at += line.len() + 1;
    }
    let first = lines.iter().position(|(_, line)| !line.trim().is_empty())?;
    let (_, opening) = lines[first];
    let line_end = |index: usize| {
        let (start, line): (usize, &str) = lines[index];
        (start + line.len()).min(text.len())
    };
    let indented = |line: &str| line.starts_with("    ") || line.starts_with('\t');
    let quoted = |line: &str| {
        let lead = line.len() - line.trim_start_matches(' ').len();
        lead <= 3 && line.trim_start().starts_with('>')
    };
    let fence = opening.trim_start();
    if fence.starts_with("```") || fence.starts_with("~~~") {
        let marker = &fence[..3];
        let close = lines
            .iter()
            .skip(first + 1)
            .position(|(_, line)| line.trim_start().starts_with(marker))?;
        return Some(line_end(first + 1 + close));
    }
    let inside: &dyn Fn(&str) -> bool = if indented(opening) {
        &|line: &str| indented(line) || line.trim().is_empty()
    } else if quoted(opening) {
        &quoted
    } else {
        return None;
    };
    let mut last = first;
    for (index, (_, line)) in lines.iter().enumerate().skip(first + 1) {
        if !inside(line) {
            break;
        }
        if !line.trim().is_empty() {
            last = index;
        }
    }
    Some(line_end(last))
}

/// Whether the line starting `rest` opens a new block: blank, or a list item, heading,
/// quote or table row.
fn starts_a_new_block(rest: &str) -> bool {
    let line = rest.split('\n').next().unwrap_or_default();
    let trimmed = line.trim_start();
    if trimmed.is_empty() {
        return true;
    }
    if trimmed.starts_with(['#', '>', '|']) {
        return true;
    }
    if let Some(after) = trimmed.strip_prefix(['-', '*', '+']) {
        return after.starts_with(' ');
    }
    let digits = trimmed.len()
        - trimmed
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .len();
    digits > 0
        && trimmed
            .get(digits..)
            .is_some_and(|after| after.starts_with(". ") || after.starts_with(") "))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::super::HEADER;
    use super::*;

    fn phrases() -> Vec<String> {
        DEFAULT_PHRASES
            .iter()
            .map(|&phrase| phrase.to_owned())
            .collect()
    }

    fn ledger_with(line: &str) -> Ledger {
        Ledger::parse(&format!("{HEADER}\n{line}\n"), Path::new("l")).unwrap()
    }

    fn receipt() -> String {
        super::super::tests::entry().to_line().unwrap()
    }

    #[test]
    fn a_claim_without_a_receipt_is_reported_with_its_line() {
        let ledger = ledger_with(&receipt());
        let text =
            "Fixed the parser.\n\nThe webhook test is a Known\nflake and was retried. All green.";
        let claims = lint_summary(text, &ledger, &phrases()).unwrap();
        assert_eq!(
            claims,
            [UnbackedClaim {
                line: 3,
                phrase: "Known\nflake".into(),
                sentence: "The webhook test is a Known flake and was retried.".into(),
            }]
        );
    }

    #[test]
    fn a_sentence_quoting_a_ledger_line_verbatim_is_backed() {
        let line = receipt();
        let ledger = ledger_with(&line);
        let text = format!(
            "The webhook test passed on rerun, receipt:\n```\n{line}\n```\nNothing else failed."
        );
        assert_eq!(lint_summary(&text, &ledger, &phrases()).unwrap(), []);
        // The same line with its tabs turned to spaces is not the receipt.
        let retyped = text.replace('\t', " ");
        assert_eq!(
            lint_summary(&retyped, &ledger, &phrases()).unwrap().len(),
            1
        );
        // A receipt in another sentence does not back this one.
        let elsewhere = format!("Passed on rerun. Unrelated: `{line}`.");
        let claims = lint_summary(&elsewhere, &ledger, &phrases()).unwrap();
        assert_eq!(claims.len(), 1);
        assert_eq!(claims[0].sentence, "Passed on rerun.");
    }

    #[test]
    fn a_pending_line_backs_no_claim() {
        let pending = super::super::LedgerEntry {
            outcome: super::super::LedgerOutcome::Pending,
            ..super::super::tests::entry()
        }
        .to_line()
        .unwrap();
        let ledger = ledger_with(&pending);
        let text = format!("Passed on rerun: `{pending}`.");
        assert_eq!(lint_summary(&text, &ledger, &phrases()).unwrap().len(), 1);
    }

    /// Issue 16 item 8: "passed on rerun:", a blank line, then the ledger line as an
    /// indented code block (CommonMark needs the blank line) or a quote block.
    #[test]
    fn a_sentence_ending_in_a_colon_continues_into_the_block_after_it() {
        let line = receipt();
        let ledger = ledger_with(&line);
        for block in [
            format!("    {line}\n"),
            format!("\t{line}\n"),
            format!("> {line}\n"),
            format!("```\n{line}\n```\n"),
        ] {
            let text = format!(
                "The webhook test passed on rerun:\n\n{block}\nEverything else passed first time."
            );
            assert_eq!(
                lint_summary(&text, &ledger, &phrases()).unwrap(),
                [],
                "{text}"
            );
            // Without the colon the claim and the block are apart.
            let apart = text.replacen("rerun:", "rerun.", 1);
            assert_eq!(
                lint_summary(&apart, &ledger, &phrases()).unwrap().len(),
                1,
                "{apart}"
            );
        }
        // The block ends the sentence: a claim after it is a sentence of its own.
        let text = format!(
            "The webhook test passed on rerun:\n\n    {line}\n\nThe mail test is a known flake too."
        );
        let claims = lint_summary(&text, &ledger, &phrases()).unwrap();
        assert_eq!(claims.len(), 1, "{claims:?}");
        assert_eq!(claims[0].sentence, "The mail test is a known flake too.");
        // A colon followed by ordinary prose is no block.
        let text = format!("Passed on rerun:\n\nsee below.\n\n    {line}\n");
        assert_eq!(lint_summary(&text, &ledger, &phrases()).unwrap().len(), 1);
    }

    #[test]
    fn list_items_are_sentences_of_their_own() {
        let line = receipt();
        let ledger = ledger_with(&line);
        let text = format!("- flaky, retried\n- known intermittent: `{line}`\n");
        let claims = lint_summary(&text, &ledger, &phrases()).unwrap();
        assert_eq!(claims.len(), 1);
        assert_eq!(
            (claims[0].line, claims[0].sentence.as_str()),
            (1, "- flaky, retried")
        );
    }

    proptest::proptest! {
        #![proptest_config(crate::test_support::proptest_config(256))]

        /// Any text, any quote placement: no panic, and every claim points into the text.
        #[test]
        fn claims_always_point_into_the_text(
            before in "(\\PC|[\n.!?]){0,80}",
            after in "(\\PC|[\n.!?-]){0,80}",
            quote in proptest::bool::ANY,
        ) {
            let line = receipt();
            let ledger = ledger_with(&line);
            let middle = if quote { line.as_str() } else { " known flake " };
            let text = format!("{before}{middle}{after}");
            let claims = lint_summary(&text, &ledger, &phrases()).unwrap();
            let lines = text.split('\n').count();
            for claim in claims {
                proptest::prop_assert!((1..=lines).contains(&claim.line));
                proptest::prop_assert!(claim.sentence.to_lowercase().contains(&claim.phrase.to_lowercase().split_whitespace().collect::<Vec<_>>().join(" ")));
            }
        }
    }

    #[test]
    fn no_phrases_means_no_claims() {
        let ledger = Ledger::default();
        assert_eq!(lint_summary("known flake", &ledger, &[]).unwrap(), []);
        assert_eq!(
            lint_summary("Nothing to see. All passed.", &ledger, &phrases()).unwrap(),
            []
        );
    }
}
