//! `.ci/test-reliability.yaml` read line by line in the layout candor renders it in; any
//! other form (hand edits in other YAML styles, comments, broken lines) is left to the YAML
//! reader, which names the line of what is wrong.
//!
//! A nightly file lists every test of the suite (50,000 tests: 12 MB), and every command
//! that reads tiers reads it: the YAML reader takes seconds and hundreds of MiB for that,
//! this one a scan. It accepts only what it can read exactly as the YAML reader would, so
//! the two never disagree: a line it is not sure of makes it give up on the whole file.

use jiff::Timestamp;
use jiff::civil::Date;
use serde_yaml_ng::Value;

use super::file::{MACHINE_FIELDS, TestEntry};
use crate::stats::tiers::Tier;
use crate::stats::wilson::Interval;

/// A file in candor's own layout: the text before `tests:` (comments and the policy block,
/// small enough for the YAML reader) and the entries read from the rest.
#[derive(Debug)]
pub(super) struct OwnLayout<'a> {
    /// Everything before the `tests:` line.
    pub prefix: &'a str,
    /// The entries, in file order.
    pub tests: Vec<TestEntry>,
}

/// Reads `text` when it is in candor's own layout; `None` for anything else.
pub(super) fn read(text: &str) -> Option<OwnLayout<'_>> {
    let body = text.strip_suffix('\n')?;
    let (prefix, rest) = if body.starts_with("tests:") {
        ("", body)
    } else {
        let at = body.find("\ntests:")? + 1;
        (&text[..at], &body[at..])
    };
    // Only comments and the policy block's own lines: no document markers, directives or
    // other keys, whose meaning could reach past the prefix.
    let policy_line = |line: &str| {
        line.starts_with('#')
            || line == "policy:"
            || line
                .strip_prefix("  ")
                .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_lowercase()))
    };
    if !prefix.lines().all(policy_line) || !prefix.chars().all(|c| c == '\n' || printable(c)) {
        return None;
    }
    let mut lines = rest.split('\n');
    match lines.next()? {
        "tests: []" => {
            return lines.next().is_none().then_some(OwnLayout {
                prefix,
                tests: Vec::new(),
            });
        }
        "tests:" => {}
        _ => return None,
    }
    let mut tests = Vec::new();
    let mut current: Option<Fields> = None;
    for line in lines {
        if let Some(id) = line.strip_prefix("  - id: ") {
            if let Some(done) = current.take() {
                tests.push(done.finish()?);
            }
            current = Some(Fields::new(string(id)?));
        } else {
            let (key, value) = line.strip_prefix("    ")?.split_once(": ")?;
            current.as_mut()?.set(key, value)?;
        }
    }
    if let Some(done) = current {
        tests.push(done.finish()?);
    }
    Some(OwnLayout { prefix, tests })
}

/// One entry's fields as they are read; the tier is required, as in the YAML reader.
struct Fields {
    entry: TestEntry,
    tier: Option<Tier>,
    seen: Vec<&'static str>,
}

impl Fields {
    fn new(id: String) -> Fields {
        Fields {
            entry: TestEntry::new(id, Tier::Probation),
            tier: None,
            seen: vec!["id"],
        }
    }

    /// Reads one `key: value` line; `None` when the YAML reader might read it otherwise.
    fn set(&mut self, key: &str, value: &str) -> Option<()> {
        if !plain_key(key) {
            return None;
        }
        let entry = &mut self.entry;
        let Some(&machine) = MACHINE_FIELDS.iter().find(|field| **field == key) else {
            // A key twice is an error to the YAML reader.
            if entry.human.contains_key(key) {
                return None;
            }
            entry
                .human
                .insert(key.to_owned(), Value::String(string(value)?));
            return Some(());
        };
        if self.seen.contains(&machine) {
            return None;
        }
        self.seen.push(machine);
        match machine {
            "tier" => self.tier = Some(Tier::from_str_opt(value)?),
            "runs" => entry.runs = count(value)?,
            "failures" => entry.failures = count(value)?,
            "flips" => entry.flips = count(value)?,
            "pass_rate" => entry.pass_rate = Some(decimal(value)?),
            "wilson_95" => {
                let (low, high) = value
                    .strip_prefix('[')?
                    .strip_suffix(']')?
                    .split_once(", ")?;
                entry.wilson_95 = Some(Interval {
                    low: decimal(low)?,
                    high: decimal(high)?,
                });
            }
            "first_flaky" => entry.first_flaky = Some(date(value)?),
            "last_run" => entry.last_run = Some(date(value)?),
            "tier_since" => entry.tier_since = Some(timestamp(value)?),
            "stale" => {
                entry.stale = match value {
                    "true" => true,
                    "false" => false,
                    _ => return None,
                }
            }
            _ => return None,
        }
        Some(())
    }

    fn finish(self) -> Option<TestEntry> {
        let mut entry = self.entry;
        entry.tier = self.tier?;
        Some(entry)
    }
}

/// A key YAML reads as this very string: lowercase ASCII words that no schema reads as a
/// null or a boolean.
fn plain_key(key: &str) -> bool {
    key.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
        && key
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && !reserved_word(key)
}

/// Words some YAML schema reads as a null or a boolean (YAML 1.1's among them, which the
/// renderer quotes).
fn reserved_word(text: &str) -> bool {
    const WORDS: [&str; 8] = ["null", "true", "false", "yes", "no", "on", "off", "~"];
    text.len() <= 5 && WORDS.iter().any(|word| word.eq_ignore_ascii_case(text))
}

/// A one-line scalar as the string YAML reads: plain, single-quoted or double-quoted with
/// JSON's escapes (what the renderer writes); `None` for any other form.
pub(super) fn string(value: &str) -> Option<String> {
    match value.as_bytes().first()? {
        b'"' => double_quoted(value),
        b'\'' => single_quoted(value),
        _ => plain(value).map(str::to_owned),
    }
}

/// A plain scalar YAML reads as this very string: no indicator first, no comment or
/// mapping inside, nothing a schema reads as a number, null or boolean.
fn plain(value: &str) -> Option<&str> {
    let first = value.chars().next()?;
    let may_be_number = (first.is_ascii_digit() || "+-.".contains(first)) && number_like(value);
    // `-`, `?` and `:` are indicators only before a space.
    let indicator = ",[]{}#&*!|>'\"%@` ".contains(first)
        || (value.starts_with(['-', '?', ':']) && value[1..].starts_with([' ']))
        || value.len() == 1 && "-?:".contains(first);
    let unsafe_inside = value.ends_with([' ', ':']) || value.contains(": ") || value.contains(" #");
    (!indicator
        && !may_be_number
        && !unsafe_inside
        && !reserved_word(value)
        && value.chars().all(printable))
    .then_some(value)
}

/// Whether some YAML schema might read `value` as a number: integers (with YAML 1.1's
/// underscores, base 60, hexadecimal, octal and binary), floats with exponents,
/// infinities and not-a-number. Errs towards yes.
fn number_like(value: &str) -> bool {
    let lowercase = value.to_ascii_lowercase();
    let unsigned = lowercase.trim_start_matches(['+', '-']);
    if ["inf", "nan", "infinity"].contains(&unsigned.trim_start_matches('.')) {
        return true;
    }
    if let Some(digits) = ["0x", "0o", "0b"]
        .iter()
        .find_map(|base| unsigned.strip_prefix(base))
    {
        return digits.bytes().all(|b| b.is_ascii_hexdigit() || b == b'_');
    }
    let (mantissa, exponent) = unsigned.split_once('e').unwrap_or((unsigned, "0"));
    let exponent = exponent.trim_start_matches(['+', '-']);
    mantissa.bytes().any(|b| b.is_ascii_digit())
        && mantissa
            .bytes()
            .all(|b| b.is_ascii_digit() || b"_.:".contains(&b))
        && exponent.bytes().all(|b| b.is_ascii_digit())
}

/// A character YAML keeps as it is inside a one-line scalar: printable (YAML 1.1's set),
/// not a tab and not one of the line breaks beyond ASCII's.
fn printable(c: char) -> bool {
    matches!(c, ' '..='~')
        || (c >= '\u{A0}'
            && !matches!(
                c,
                '\u{2028}' | '\u{2029}' | '\u{FEFF}' | '\u{FFFE}' | '\u{FFFF}'
            ))
}

fn single_quoted(value: &str) -> Option<String> {
    let inner = value.strip_prefix('\'')?.strip_suffix('\'')?;
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\'' {
            // Only a doubled quote stands for one; a lone one would end the scalar.
            if chars.next()? != '\'' {
                return None;
            }
        } else if !printable(c) {
            return None;
        }
        out.push(c);
    }
    Some(out)
}

fn double_quoted(value: &str) -> Option<String> {
    let inner = value.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        let decoded = match c {
            '"' => return None,
            '\\' => match chars.next()? {
                '"' => '"',
                '\\' => '\\',
                'n' => '\n',
                't' => '\t',
                'r' => '\r',
                'b' => '\u{8}',
                'f' => '\u{c}',
                'u' => {
                    let hex: String = chars.by_ref().take(4).collect();
                    if hex.len() != 4 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                        return None;
                    }
                    char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?
                }
                _ => return None,
            },
            c if printable(c) => c,
            _ => return None,
        };
        out.push(decoded);
    }
    Some(out)
}

/// A count as YAML reads it: decimal digits, no sign, no leading zero.
fn count(value: &str) -> Option<u64> {
    let digits = value.bytes().all(|b| b.is_ascii_digit());
    (digits && (value == "0" || !value.starts_with('0')))
        .then(|| value.parse().ok())
        .flatten()
}

/// A number with a fraction, as the renderer writes rates: `0.855`.
fn decimal(value: &str) -> Option<f64> {
    let (whole, fraction) = value.split_once('.')?;
    let digits = |part: &str| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit());
    (digits(whole) && digits(fraction) && (whole == "0" || !whole.starts_with('0')))
        .then(|| value.parse().ok())
        .flatten()
}

fn date(value: &str) -> Option<Date> {
    let shape = value.len() == 10
        && value.bytes().enumerate().all(|(at, b)| match at {
            4 | 7 => b == b'-',
            _ => b.is_ascii_digit(),
        });
    shape.then(|| value.parse().ok()).flatten()
}

fn timestamp(value: &str) -> Option<Timestamp> {
    let shape = value.starts_with(|c: char| c.is_ascii_digit())
        && value
            .bytes()
            .all(|b| b.is_ascii_digit() || b"-:.+TZ".contains(&b));
    shape.then(|| value.parse().ok()).flatten()
}
