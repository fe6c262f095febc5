//! `.flake-ledger.tsv`, the committed receipt of every rerun: its line format, parsing with
//! `file:line` errors, appends under an exclusive lock, the rerun-budget queries, and the
//! append-only check. Statistics and the summary lint over it live in the submodules.
//!
//! The format, after a fixed header, nine tab-separated fields per line:
//!
//! | field | form |
//! | --- | --- |
//! | `date` | `YYYY-MM-DD`, the day of the rerun |
//! | `sha` | the commit rerun, 7 to 64 lowercase hex digits |
//! | `test_id` | the canonical test id |
//! | `fp` | the fingerprint claimed, one word |
//! | `first_fail_sha256` | sha256 (64 lowercase hex) of the first failing attempt's full failure text, as printed (not normalized) |
//! | `seed` | the seed the rerun used (`candor rerun` writes the number it passed to the runner), `-` when none |
//! | `workers` | the worker count of the run whose failure is claimed, `-` when not recorded |
//! | `attempts` | which run of the test, for this change, the rerun was: the red being judged is 1, so a first rerun writes 2 |
//! | `outcome` | `pending` on the line written before the rerun starts; the rerun's outcome (`pass`, `fail`, `error`, `skip` or `flaky-pass`) on the line written after it ends |
//!
//! One rerun, two lines. `candor rerun` appends the claim (outcome `pending`) before the
//! runner starts, and a second line, the same in every other field, with the outcome once
//! it ends. Nothing is ever edited in place, and a rerun whose candor was stopped halfway
//! still left its receipt. Budgets and statistics count reruns, not lines
//! ([`Ledger::reruns`]): a pending line and the outcome line that resolves it are one
//! rerun; an outcome line with no pending line before it (written by hand, or by an older
//! candor) is one rerun, and so is a pending line never resolved.
//!
//! Escaping: none. A field that would contain a tab, a newline or a carriage return is
//! refused (the append fails and writes nothing). Ledger lines are quoted verbatim in
//! summaries and searched with grep; an escape would make the quoted text differ from the
//! test id people search for, and no runner's canonical test id contains those characters.
//! Every field is written in one canonical spelling and parsing accepts only that, so a
//! line read and written back is byte for byte the same.

pub mod stats;
pub mod summary;

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};

use jiff::civil::Date;

use crate::results::Outcome;

/// The ledger's name at the repository root.
pub const LEDGER_FILE: &str = ".flake-ledger.tsv";

/// The first line of every ledger.
pub const HEADER: &str =
    "# date\tsha\ttest_id\tfp\tfirst_fail_sha256\tseed\tworkers\tattempts\toutcome";

/// How an absent seed or worker count is written.
pub const ABSENT: &str = "-";

/// Field names in order, as the header spells them.
const FIELDS: [&str; 9] = [
    "date",
    "sha",
    "test_id",
    "fp",
    "first_fail_sha256",
    "seed",
    "workers",
    "attempts",
    "outcome",
];

/// One rerun.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerEntry {
    /// Day of the rerun.
    pub date: Date,
    /// The commit rerun.
    pub sha: String,
    /// Canonical test id.
    pub test_id: String,
    /// The fingerprint claimed.
    pub fingerprint: String,
    /// sha256 of the first failing attempt's failure text.
    pub first_fail_sha256: String,
    /// The seed the rerun used.
    pub seed: Option<String>,
    /// Worker count.
    pub workers: Option<u32>,
    /// Which run of the test for this change the rerun was (the red is 1).
    pub attempts: u32,
    /// `pending` before the rerun ran, its outcome after.
    pub outcome: LedgerOutcome,
}

/// A ledger line's last field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LedgerOutcome {
    /// Written before the rerun starts: the claim, recorded before anyone knows the result.
    Pending,
    /// Written after the rerun ended: how it ended.
    Finished(Outcome),
}

impl LedgerOutcome {
    /// The spelling in the file.
    pub fn as_str(self) -> &'static str {
        match self {
            LedgerOutcome::Pending => "pending",
            LedgerOutcome::Finished(outcome) => outcome.as_str(),
        }
    }

    /// Parses the spelling back.
    pub fn from_str_opt(text: &str) -> Option<LedgerOutcome> {
        if text == "pending" {
            return Some(LedgerOutcome::Pending);
        }
        Outcome::from_str_opt(text).map(LedgerOutcome::Finished)
    }

    /// The rerun's outcome, once it ended.
    pub fn finished(self) -> Option<Outcome> {
        match self {
            LedgerOutcome::Pending => None,
            LedgerOutcome::Finished(outcome) => Some(outcome),
        }
    }
}

impl From<Outcome> for LedgerOutcome {
    fn from(outcome: Outcome) -> Self {
        LedgerOutcome::Finished(outcome)
    }
}

impl fmt::Display for LedgerOutcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A field that the ledger cannot hold or that is not in its canonical form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FieldError {
    /// The line does not have nine fields.
    #[error(
        "the line has {found} tab-separated fields, a ledger line has {} ({})",
        FIELDS.len(),
        FIELDS.join(", ")
    )]
    FieldCount {
        /// Fields found.
        found: usize,
    },
    /// A field's value is wrong.
    #[error("field `{field}` is {value:?}: {expected}")]
    Invalid {
        /// Which field.
        field: &'static str,
        /// Its value.
        value: String,
        /// What it must be.
        expected: &'static str,
    },
}

fn invalid(field: &'static str, value: &str, expected: &'static str) -> FieldError {
    FieldError::Invalid {
        field,
        value: value.to_owned(),
        expected,
    }
}

/// A ledger that cannot be read or appended to.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    /// A line that does not parse.
    #[error("{}:{line}: {message}", path.display())]
    Line {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// An entry to append that the ledger cannot hold; nothing was written.
    #[error("{}: cannot append: {source}", path.display())]
    Entry {
        /// The file.
        path: PathBuf,
        /// What is wrong with the entry.
        #[source]
        source: FieldError,
    },
    /// Reading, locking, writing or syncing failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

impl LedgerError {
    /// What to do about it.
    pub fn hint(&self) -> &'static str {
        match self {
            LedgerError::Line { .. } => {
                "candor only appends whole lines: restore the ledger from the merge base (`git checkout <base> -- .flake-ledger.tsv`) and keep its LF line endings"
            }
            LedgerError::Entry { .. } => {
                "the ledger holds no tabs, newlines or carriage returns, and each field has one spelling (see docs)"
            }
            LedgerError::Io { .. } => "check the file's permissions and the disk",
        }
    }
}

/// Whether `text` is `min..=max` lowercase hex digits.
fn is_lower_hex(text: &str, min: usize, max: usize) -> bool {
    (min..=max).contains(&text.len())
        && text
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// A decimal number of at least 1 in its only spelling (no sign, no leading zero).
fn canonical_count(field: &'static str, text: &str) -> Result<u32, FieldError> {
    let expected = "a whole number of at least 1, written without sign or leading zeros";
    if text.is_empty() || text.starts_with('0') || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(invalid(field, text, expected));
    }
    text.parse().map_err(|_| invalid(field, text, expected))
}

/// Free text: non-empty, no separator characters.
fn free_text<'a>(field: &'static str, text: &'a str) -> Result<&'a str, FieldError> {
    if text.is_empty() {
        return Err(invalid(field, text, "it is empty"));
    }
    if text.contains(['\t', '\n', '\r']) {
        return Err(invalid(
            field,
            text,
            "it contains a tab, newline or carriage return, which a ledger line cannot hold",
        ));
    }
    Ok(text)
}

fn optional<'a>(field: &'static str, value: Option<&'a str>) -> Result<&'a str, FieldError> {
    match value {
        None => Ok(ABSENT),
        Some(ABSENT) => Err(invalid(
            field,
            ABSENT,
            "`-` is how an absent value is written, so it cannot be a value",
        )),
        Some(text) => free_text(field, text),
    }
}

fn check_date(text: &str) -> Result<Date, FieldError> {
    let expected = "a date written YYYY-MM-DD";
    let date: Date = text.parse().map_err(|_| invalid("date", text, expected))?;
    if date.to_string() == text {
        Ok(date)
    } else {
        Err(invalid("date", text, expected))
    }
}

fn check_sha(text: &str) -> Result<&str, FieldError> {
    if is_lower_hex(text, 7, 64) {
        Ok(text)
    } else {
        Err(invalid(
            "sha",
            text,
            "a commit: 7 to 64 lowercase hex digits",
        ))
    }
}

fn check_fingerprint(text: &str) -> Result<&str, FieldError> {
    if text.is_empty() || text.chars().any(|c| c.is_whitespace() || c.is_control()) {
        Err(invalid(
            "fp",
            text,
            "a fingerprint id: one word, no spaces or control characters",
        ))
    } else {
        Ok(text)
    }
}

fn check_first_fail(text: &str) -> Result<&str, FieldError> {
    if is_lower_hex(text, 64, 64) {
        Ok(text)
    } else {
        Err(invalid(
            "first_fail_sha256",
            text,
            "a sha256: 64 lowercase hex digits",
        ))
    }
}

impl LedgerEntry {
    /// The line (without its newline), after checking every field is one the ledger can
    /// hold in its canonical form.
    pub fn to_line(&self) -> Result<String, FieldError> {
        let workers = match self.workers {
            None => ABSENT.to_owned(),
            Some(0) => return Err(invalid("workers", "0", "at least 1 worker, or absent")),
            Some(n) => n.to_string(),
        };
        if self.attempts == 0 {
            return Err(invalid(
                "attempts",
                "0",
                "at least 1 (the red being judged is run 1)",
            ));
        }
        // A date outside the years the parser reads would print in a spelling it refuses.
        let date = self.date.to_string();
        check_date(&date)?;
        let fields = [
            date,
            check_sha(&self.sha)?.to_owned(),
            free_text("test_id", &self.test_id)?.to_owned(),
            check_fingerprint(&self.fingerprint)?.to_owned(),
            check_first_fail(&self.first_fail_sha256)?.to_owned(),
            optional("seed", self.seed.as_deref())?.to_owned(),
            workers,
            self.attempts.to_string(),
            self.outcome.as_str().to_owned(),
        ];
        Ok(fields.join("\t"))
    }

    /// Parses one line (without its newline).
    pub fn parse_line(line: &str) -> Result<LedgerEntry, FieldError> {
        let fields: Vec<&str> = line.split('\t').collect();
        let [
            date,
            sha,
            test_id,
            fp,
            first_fail,
            seed,
            workers,
            attempts,
            outcome,
        ] = fields.as_slice()
        else {
            return Err(FieldError::FieldCount {
                found: fields.len(),
            });
        };
        Ok(LedgerEntry {
            date: check_date(date)?,
            sha: check_sha(sha)?.to_owned(),
            test_id: free_text("test_id", test_id)?.to_owned(),
            fingerprint: check_fingerprint(fp)?.to_owned(),
            first_fail_sha256: check_first_fail(first_fail)?.to_owned(),
            seed: match *seed {
                ABSENT => None,
                seed => Some(free_text("seed", seed)?.to_owned()),
            },
            workers: match *workers {
                ABSENT => None,
                workers => Some(canonical_count("workers", workers)?),
            },
            attempts: canonical_count("attempts", attempts)?,
            outcome: LedgerOutcome::from_str_opt(outcome).ok_or_else(|| {
                invalid(
                    "outcome",
                    outcome,
                    "one of pending, pass, fail, error, skip, flaky-pass",
                )
            })?,
        })
    }
}

/// One parsed line with its place and its exact text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerLine {
    /// 1-based line number in the file (the header is line 1).
    pub number: usize,
    /// The line as written, without its newline.
    pub text: String,
    /// Its fields.
    pub entry: LedgerEntry,
}

/// A parsed ledger.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Ledger {
    /// Every line after the header, in file order.
    pub lines: Vec<LedgerLine>,
}

/// How much of its rerun budget a test has used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetState {
    /// The test's reruns in the ledger within `budget_days` of today (a pending line and
    /// its outcome line are one rerun).
    pub entries_in_window: usize,
    /// Runs of the test so far in this change, the red being judged included (at least 1).
    pub attempts_in_change: u32,
}

impl BudgetState {
    /// No ledger line yet: only the red being judged.
    pub const FRESH: BudgetState = BudgetState {
        entries_in_window: 0,
        attempts_in_change: 1,
    };
}

/// Two spellings of one commit: equal, or one an abbreviation (7+ digits) of the other.
fn same_commit(a: &str, b: &str) -> bool {
    a.len().min(b.len()) >= 7 && (a.starts_with(b) || b.starts_with(a))
}

impl Ledger {
    /// Reads the ledger at `path`; empty when the file does not exist.
    pub fn load(path: &Path) -> Result<Ledger, LedgerError> {
        match std::fs::read_to_string(path) {
            Ok(text) => Ledger::parse(&text, path),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(Ledger::default()),
            Err(source) => Err(LedgerError::Io {
                path: path.to_owned(),
                source,
            }),
        }
    }

    /// Parses `text` (read from `path`, for messages). An empty text is an empty ledger;
    /// otherwise line 1 is the header and every line, the last included, ends in `\n`.
    pub fn parse(text: &str, path: &Path) -> Result<Ledger, LedgerError> {
        let mut ledger = Ledger::default();
        for (index, raw) in text.split_inclusive('\n').enumerate() {
            let number = index + 1;
            let error = |message: String| LedgerError::Line {
                path: path.to_owned(),
                line: number,
                message,
            };
            let Some(line) = raw.strip_suffix('\n') else {
                return Err(error(
                    "the last line has no newline at its end: it was cut short or edited by hand"
                        .to_owned(),
                ));
            };
            if line.ends_with('\r') {
                return Err(error(
                    "the line ends with a carriage return: the ledger's line endings are LF (add `.flake-ledger.tsv text eol=lf` to .gitattributes)".to_owned(),
                ));
            }
            if number == 1 {
                if line != HEADER {
                    return Err(error(format!(
                        "the first line is not the ledger's header {HEADER:?}"
                    )));
                }
                continue;
            }
            let entry = LedgerEntry::parse_line(line).map_err(|e| error(e.to_string()))?;
            ledger.lines.push(LedgerLine {
                number,
                text: line.to_owned(),
                entry,
            });
        }
        Ok(ledger)
    }

    /// Every entry, in file order.
    pub fn entries(&self) -> impl Iterator<Item = &LedgerEntry> {
        self.lines.iter().map(|line| &line.entry)
    }

    /// Whether `text` is one of the ledger's lines, exactly.
    pub fn contains_line(&self, text: &str) -> bool {
        self.lines.iter().any(|line| line.text == text)
    }

    /// Every rerun the ledger records, in the order their first line appears: a pending
    /// line and the first later outcome line identical to it in every other field are one
    /// rerun. An outcome line that resolves no pending line is a rerun of its own (written
    /// by hand or by an older candor), and so is a pending line never resolved (candor was
    /// stopped while the test ran: the rerun happened, or may have).
    pub fn reruns(&self) -> Vec<Rerun<'_>> {
        let mut reruns: Vec<Rerun<'_>> = Vec::with_capacity(self.lines.len());
        // Unresolved pending lines by their text without the outcome, oldest first.
        let mut waiting: HashMap<&str, VecDeque<usize>> = HashMap::new();
        for line in &self.lines {
            let claim = line.text.rsplit_once('\t').map_or("", |(claim, _)| claim);
            match line.entry.outcome {
                LedgerOutcome::Pending => {
                    waiting.entry(claim).or_default().push_back(reruns.len());
                    reruns.push(Rerun {
                        pending: Some(line),
                        latest: line,
                    });
                }
                LedgerOutcome::Finished(_) => {
                    let resolved = waiting.get_mut(claim).and_then(VecDeque::pop_front);
                    match resolved.and_then(|index| reruns.get_mut(index)) {
                        Some(rerun) => rerun.latest = line,
                        None => reruns.push(Rerun {
                            pending: None,
                            latest: line,
                        }),
                    }
                }
            }
        }
        reruns
    }

    /// The test's reruns dated within the last `days` days, today included (a rerun
    /// dated after today, from a clock ahead of ours, counts too).
    pub fn entries_within(&self, test_id: &str, today: Date, days: u32) -> usize {
        self.reruns()
            .iter()
            .map(Rerun::entry)
            .filter(|entry| entry.test_id == test_id)
            .filter(|entry| {
                let age = today
                    .since(entry.date)
                    .map_or(0, |span| i64::from(span.get_days()));
                age < i64::from(days)
            })
            .count()
    }

    /// Runs of the test so far in the change made of `change` (its commits, full or
    /// abbreviated): the highest `attempts` on the test's lines for those commits, and 1
    /// (the red being judged) when there is none.
    pub fn attempts_in_change<S: AsRef<str>>(&self, test_id: &str, change: &[S]) -> u32 {
        self.entries()
            .filter(|entry| entry.test_id == test_id)
            .filter(|entry| {
                change
                    .iter()
                    .any(|commit| same_commit(&entry.sha, commit.as_ref()))
            })
            .map(|entry| entry.attempts)
            .fold(1, u32::max)
    }

    /// The test's budget state under `rerun`'s window, for the change made of `change`.
    pub fn budget<S: AsRef<str>>(
        &self,
        test_id: &str,
        today: Date,
        change: &[S],
        rerun: &RerunConfig,
    ) -> BudgetState {
        BudgetState {
            entries_in_window: self.entries_within(test_id, today, rerun.budget_days),
            attempts_in_change: self.attempts_in_change(test_id, change),
        }
    }
}

/// One rerun: the line written before it ran and the one written after it ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rerun<'a> {
    /// The claim, written before the rerun started; `None` for an outcome line that no
    /// pending line announced.
    pub pending: Option<&'a LedgerLine>,
    /// Its latest line: the outcome line once it ended, else the pending line itself.
    pub latest: &'a LedgerLine,
}

impl<'a> Rerun<'a> {
    /// The rerun's fields, from its latest line (so `outcome` is `pending` until it ended).
    pub fn entry(&self) -> &'a LedgerEntry {
        &self.latest.entry
    }
}

/// Appends `entries` to the ledger at `path`, creating it with its header when missing.
///
/// Every line is checked before the file is touched. Then, holding an exclusive lock on
/// the file, the existing ledger is parsed (nothing is appended to a damaged one), all the
/// new lines go out in one write to the end of the file (opened for append), and the file
/// is synced to disk. Concurrent appenders, in this process or others, wait for the lock,
/// so no line is torn or lost.
pub fn append(path: &Path, entries: &[LedgerEntry]) -> Result<(), LedgerError> {
    append_after(path, |_| Ok::<_, LedgerError>(entries.to_vec())).map(drop)
}

/// [`append`] with a decision taken under the lock: `decide` sees the ledger as it is
/// while no other candor can append, and returns the entries to append, or an error that
/// leaves the file as it was. This is how a rerun's budget is checked and its claim
/// written in one step, so two reruns started at once cannot both spend the last one.
/// Returns what was appended.
pub fn append_after<E: From<LedgerError>>(
    path: &Path,
    decide: impl FnOnce(&Ledger) -> Result<Vec<LedgerEntry>, E>,
) -> Result<Vec<LedgerEntry>, E> {
    let io = |source| LedgerError::Io {
        path: path.to_owned(),
        source,
    };
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(path)
        .map_err(io)?;
    file.lock().map_err(io)?;
    let mut existing = String::new();
    file.read_to_string(&mut existing).map_err(io)?;
    let ledger = Ledger::parse(&existing, path)?;
    let entries = decide(&ledger)?;
    let mut block = String::new();
    for entry in &entries {
        let line = entry.to_line().map_err(|source| LedgerError::Entry {
            path: path.to_owned(),
            source,
        })?;
        block.push_str(&line);
        block.push('\n');
    }
    if block.is_empty() {
        return Ok(entries);
    }
    let created = existing.is_empty();
    if created {
        block.insert(0, '\n');
        block.insert_str(0, HEADER);
    }
    file.write_all(block.as_bytes()).map_err(io)?;
    file.sync_all().map_err(io)?;
    file.unlock().map_err(io)?;
    if created {
        sync_parent(path).map_err(io)?;
    }
    Ok(entries)
}

/// Makes a newly created file's directory entry durable too.
#[cfg(unix)]
fn sync_parent(path: &Path) -> std::io::Result<()> {
    let parent = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    std::fs::File::open(parent)?.sync_all()
}

#[cfg(not(unix))]
fn sync_parent(_path: &Path) -> std::io::Result<()> {
    // Directories cannot be opened for syncing on this platform; the file itself is.
    Ok(())
}

/// Where a new ledger first departs from an old one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.describe())]
pub struct FirstDifference {
    /// 1-based line.
    pub line: usize,
    /// The old line there, with its newline if it had one.
    pub old: Option<String>,
    /// The new line there, with its newline if it has one; `None` when the new text ends
    /// before it.
    pub new: Option<String>,
}

impl FirstDifference {
    fn describe(&self) -> String {
        match (&self.old, &self.new) {
            (Some(old), Some(new)) => format!(
                "line {} was changed: it was {old:?} and is now {new:?}",
                self.line
            ),
            (Some(old), None) => format!("line {} ({old:?}) was removed", self.line),
            (None, _) => format!("line {} differs", self.line),
        }
    }
}

/// Whether `new` is `old` with whole lines added at the end and nothing else changed.
/// An old last line without a newline may not be completed either: the line it would
/// become was never the old one.
pub fn is_append_only(old: &str, new: &str) -> Result<(), FirstDifference> {
    let mut new_lines = new.split_inclusive('\n');
    for (index, old_line) in old.split_inclusive('\n').enumerate() {
        let new_line = new_lines.next();
        if new_line != Some(old_line) {
            return Err(FirstDifference {
                line: index + 1,
                old: Some(old_line.to_owned()),
                new: new_line.map(str::to_owned),
            });
        }
    }
    Ok(())
}

impl fmt::Display for LedgerEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // For messages; `to_line` is the checked spelling that goes into the file.
        write!(
            f,
            "{} {} {} {} attempt {} {}",
            self.date, self.sha, self.test_id, self.fingerprint, self.attempts, self.outcome
        )
    }
}

/// `[rerun]` of `candor.toml`, resolved: where the ledger is, how often a known flake may
/// be rerun, and how long a fingerprint holds. Here rather than in `policy` (which reads
/// it and re-exports it) because the budget is the ledger's own arithmetic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RerunConfig {
    /// The ledger of reruns, relative to the repository root.
    pub ledger: PathBuf,
    /// Most runs of one test a change may make: the red that is judged counts as the
    /// first, so 2 allows one rerun.
    pub max_attempts_per_change: u32,
    /// A test with this many reruns in the ledger within `budget_days` gets no rerun at
    /// all.
    pub budget_entries: u32,
    /// The window, in days up to and including today, that `budget_entries` counts in.
    pub budget_days: u32,
    /// A fingerprint whose `last_seen` is more than this many days ago has expired.
    pub fingerprint_expiry_days: u32,
}

impl Default for RerunConfig {
    fn default() -> Self {
        RerunConfig {
            ledger: PathBuf::from(LEDGER_FILE),
            max_attempts_per_change: 2,
            budget_entries: 3,
            budget_days: 7,
            fingerprint_expiry_days: 60,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    pub(crate) fn entry() -> LedgerEntry {
        LedgerEntry {
            date: Date::constant(2026, 10, 6),
            sha: "a41f9c2".into(),
            test_id: "tests/payments/test_webhook.py::test_payment_webhook".into(),
            fingerprint: "FP-001".into(),
            first_fail_sha256: "9e1c".repeat(16),
            seed: Some("rs=118204".into()),
            workers: Some(4),
            attempts: 2,
            outcome: Outcome::Pass.into(),
        }
    }

    fn ledger(lines: &[String]) -> String {
        let mut text = format!("{HEADER}\n");
        for line in lines {
            text.push_str(line);
            text.push('\n');
        }
        text
    }

    #[test]
    fn the_design_example_line_round_trips() {
        let line = entry().to_line().unwrap();
        assert_eq!(
            line,
            format!(
                "2026-10-06\ta41f9c2\ttests/payments/test_webhook.py::test_payment_webhook\tFP-001\t{}\trs=118204\t4\t2\tpass",
                "9e1c".repeat(16)
            )
        );
        assert_eq!(LedgerEntry::parse_line(&line).unwrap(), entry());
    }

    #[test]
    fn separators_in_a_field_are_refused_not_escaped() {
        for bad in ["a\tb", "a\nb", "a\rb"] {
            let mut with_separator = entry();
            with_separator.test_id = bad.into();
            assert!(
                matches!(
                    with_separator.to_line(),
                    Err(FieldError::Invalid {
                        field: "test_id",
                        ..
                    })
                ),
                "{bad:?}"
            );
            let mut seed = entry();
            seed.seed = Some(bad.into());
            assert!(seed.to_line().is_err());
        }
        let mut dash = entry();
        dash.seed = Some("-".into());
        assert!(dash.to_line().is_err(), "`-` would read back as no seed");
    }

    #[test]
    fn only_canonical_spellings_parse() {
        let good = entry().to_line().unwrap();
        for (field, value) in [
            (0, "2026-10-6"),
            (0, "20261006"),
            (1, "A41F9C2"),
            (1, "a41f9"),
            (3, "FP 001"),
            (4, "9e1c"),
            (6, "04"),
            (6, "+4"),
            (6, "0"),
            (7, "0"),
            (8, "passed"),
        ] {
            let line = replace_field(&good, field, value);
            assert!(
                LedgerEntry::parse_line(&line).is_err(),
                "{} = {value:?} parsed",
                FIELDS[field]
            );
        }
        let absent = replace_field(&good, 5, "-");
        let absent = replace_field(&absent, 6, "-");
        let parsed = LedgerEntry::parse_line(&absent).unwrap();
        assert_eq!((parsed.seed, parsed.workers), (None, None));
        assert!(matches!(
            LedgerEntry::parse_line("2026-10-06\ta41f9c2"),
            Err(FieldError::FieldCount { found: 2 })
        ));
    }

    fn replace_field(line: &str, field: usize, value: &str) -> String {
        let mut fields: Vec<&str> = line.split('\t').collect();
        fields[field] = value;
        fields.join("\t")
    }

    #[test]
    fn parse_errors_carry_file_and_line() {
        let path = Path::new(".flake-ledger.tsv");
        let good = entry().to_line().unwrap();
        let text = ledger(&[good.clone(), "2026-10-06\tnot-a-sha".into()]);
        let error = Ledger::parse(&text, path).unwrap_err();
        assert!(
            error.to_string().starts_with(".flake-ledger.tsv:3: "),
            "{error}"
        );
        let error = Ledger::parse("# date\n", path).unwrap_err();
        assert!(error.to_string().contains(":1: the first line"), "{error}");
        let torn = format!("{HEADER}\n{}", &good[..20]);
        let error = Ledger::parse(&torn, path).unwrap_err();
        assert!(
            error
                .to_string()
                .contains(":2: the last line has no newline")
        );
        let crlf = format!("{HEADER}\r\n");
        let error = Ledger::parse(&crlf, path).unwrap_err();
        assert!(error.to_string().contains("carriage return"), "{error}");
        assert_eq!(Ledger::parse("", path).unwrap(), Ledger::default());
        let parsed = Ledger::parse(&ledger(std::slice::from_ref(&good)), path).unwrap();
        assert_eq!(parsed.lines[0].number, 2);
        assert!(parsed.contains_line(&good));
        assert!(!parsed.contains_line(&good[1..]));
    }

    #[test]
    fn budget_counts_recent_lines_and_attempts_of_this_change_only() {
        let today = Date::constant(2026, 10, 10);
        let at = |date: Date, sha: &str, attempts: u32| LedgerEntry {
            date,
            sha: sha.into(),
            attempts,
            ..entry()
        };
        let lines = [
            at(Date::constant(2026, 10, 3), "1111111aaaa", 2), // 7 days ago: outside 7 days
            at(Date::constant(2026, 10, 4), "2222222", 2),     // 6 days ago: inside
            at(Date::constant(2026, 10, 10), "3333333bbbb", 2),
            at(Date::constant(2026, 10, 11), "3333333bbbb", 3), // tomorrow: counts
            LedgerEntry {
                test_id: "other".into(),
                ..at(today, "3333333", 5)
            },
        ]
        .map(|e| e.to_line().unwrap());
        let parsed = Ledger::parse(&ledger(&lines), Path::new("l")).unwrap();
        let test = entry().test_id;
        assert_eq!(parsed.entries_within(&test, today, 7), 3);
        assert_eq!(parsed.entries_within(&test, today, 1), 2);
        assert_eq!(parsed.attempts_in_change(&test, &["3333333bbbbcccc"]), 3);
        assert_eq!(parsed.attempts_in_change(&test, &["4444444"]), 1);
        assert_eq!(parsed.attempts_in_change(&test, &["333"]), 1, "too short");
        let budget = parsed.budget(&test, today, &["2222222ffff"], &RerunConfig::default());
        assert_eq!(
            budget,
            BudgetState {
                entries_in_window: 3,
                attempts_in_change: 2
            }
        );
    }

    #[test]
    fn a_pending_line_and_its_outcome_line_are_one_rerun() {
        let pending = LedgerEntry {
            outcome: LedgerOutcome::Pending,
            ..entry()
        };
        let other_claim = LedgerEntry {
            attempts: 3,
            ..pending.clone()
        };
        let lines = [
            pending.clone(), // rerun 1, resolved by the pass below
            other_claim,     // rerun 2, never resolved: candor was stopped
            entry(),         // resolves rerun 1
            entry(),         // an outcome line with no claim left: rerun 3
            pending,         // rerun 4, unresolved
        ]
        .map(|e| e.to_line().unwrap());
        let parsed = Ledger::parse(&ledger(&lines), Path::new("l")).unwrap();
        let reruns = parsed.reruns();
        let shape: Vec<(Option<usize>, usize)> = reruns
            .iter()
            .map(|r| (r.pending.map(|l| l.number), r.latest.number))
            .collect();
        assert_eq!(shape, [(Some(2), 4), (Some(3), 3), (None, 5), (Some(6), 6)]);
        assert_eq!(reruns[0].entry().outcome, Outcome::Pass.into());
        assert_eq!(reruns[1].entry().outcome, LedgerOutcome::Pending);
        let test = entry().test_id;
        assert_eq!(
            parsed.entries_within(&test, Date::constant(2026, 10, 6), 7),
            4,
            "five lines, four reruns"
        );
    }

    #[test]
    fn a_refused_append_leaves_the_file_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LEDGER_FILE);
        append(&path, &[entry()]).unwrap();
        let before = std::fs::read(&path).unwrap();
        let refused = append_after(&path, |ledger| {
            if ledger.lines.is_empty() {
                Ok(vec![entry()])
            } else {
                Err(LedgerError::Io {
                    path: path.clone(),
                    source: std::io::Error::other("budget spent"),
                })
            }
        });
        assert!(refused.is_err());
        assert_eq!(std::fs::read(&path).unwrap(), before);
        let appended = append_after(&path, |ledger| {
            Ok::<_, LedgerError>(vec![LedgerEntry {
                attempts: u32::try_from(ledger.lines.len()).unwrap() + 2,
                ..entry()
            }])
        })
        .unwrap();
        assert_eq!(appended[0].attempts, 3);
        assert_eq!(Ledger::load(&path).unwrap().lines.len(), 2);
    }

    #[test]
    fn append_only_names_the_first_changed_line() {
        let old = "h\na\nb\n";
        assert_eq!(is_append_only(old, "h\na\nb\nc\n"), Ok(()));
        assert_eq!(is_append_only(old, old), Ok(()));
        assert_eq!(is_append_only("", "h\n"), Ok(()));
        let changed = is_append_only(old, "h\nA\nb\nc\n").unwrap_err();
        assert_eq!(changed.line, 2);
        assert_eq!(changed.old.as_deref(), Some("a\n"));
        assert!(
            changed.to_string().contains("line 2 was changed"),
            "{changed}"
        );
        let removed = is_append_only(old, "h\na\n").unwrap_err();
        assert_eq!((removed.line, removed.new), (3, None));
        let completed = is_append_only("h\na", "h\nab\n").unwrap_err();
        assert_eq!(completed.line, 2);
    }

    #[test]
    fn append_creates_the_header_then_adds_whole_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LEDGER_FILE);
        append(&path, &[entry()]).unwrap();
        let mut second = entry();
        second.attempts = 3;
        second.outcome = Outcome::Fail.into();
        append(&path, &[second.clone()]).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            ledger(&[entry().to_line().unwrap(), second.to_line().unwrap()])
        );
        let mut bad = entry();
        bad.test_id = "a\tb".into();
        assert!(matches!(
            append(&path, &[second, bad]),
            Err(LedgerError::Entry { .. })
        ));
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            text,
            "nothing written"
        );
    }

    #[test]
    fn append_refuses_a_damaged_ledger() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(LEDGER_FILE);
        let torn = format!("{HEADER}\n2026-10-06\ta41");
        std::fs::write(&path, &torn).unwrap();
        let error = append(&path, &[entry()]).unwrap_err();
        assert!(
            matches!(error, LedgerError::Line { line: 2, .. }),
            "{error}"
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), torn);
    }

    fn arbitrary_free_text() -> impl Strategy<Value = String> {
        // Any characters but the three separators; `-` alone is the absent marker.
        "[^\t\n\r]{1,40}".prop_filter("not the absent marker", |s| s != ABSENT)
    }

    fn arbitrary_entry() -> impl Strategy<Value = LedgerEntry> {
        (
            (0i16..=9999, 1i8..=12, 1i8..=28),
            "[0-9a-f]{7,64}",
            arbitrary_free_text(),
            "[A-Za-z0-9_.:/-]{1,20}",
            "[0-9a-f]{64}",
            prop::option::of(arbitrary_free_text()),
            prop::option::of(1u32..),
            1u32..,
            prop::option::of(prop::sample::select(Outcome::ALL.to_vec())),
        )
            .prop_map(
                |(
                    (y, m, d),
                    sha,
                    test_id,
                    fingerprint,
                    first,
                    seed,
                    workers,
                    attempts,
                    outcome,
                )| {
                    LedgerEntry {
                        date: Date::new(y, m, d).unwrap(),
                        sha,
                        test_id,
                        fingerprint,
                        first_fail_sha256: first,
                        seed,
                        workers,
                        attempts,
                        outcome: outcome.map_or(LedgerOutcome::Pending, LedgerOutcome::Finished),
                    }
                },
            )
    }

    proptest! {
        #![proptest_config(crate::test_support::proptest_config(512))]

        #[test]
        fn a_line_round_trips_byte_for_byte(entry in arbitrary_entry()) {
            let line = entry.to_line().unwrap();
            let parsed = LedgerEntry::parse_line(&line).unwrap();
            prop_assert_eq!(&parsed, &entry);
            prop_assert_eq!(parsed.to_line().unwrap(), line);
        }

        /// Whatever the order of claims and outcomes, every line belongs to exactly one
        /// rerun, and an outcome line only resolves an earlier claim of the same fields.
        #[test]
        fn every_line_belongs_to_exactly_one_rerun(
            events in prop::collection::vec((1u32..4, proptest::bool::ANY), 0..24),
        ) {
            let lines: Vec<String> = events
                .iter()
                .map(|(attempts, finished)| {
                    LedgerEntry {
                        attempts: *attempts,
                        outcome: if *finished { Outcome::Pass.into() } else { LedgerOutcome::Pending },
                        ..entry()
                    }
                    .to_line()
                    .unwrap()
                })
                .collect();
            let parsed = Ledger::parse(&ledger(&lines), Path::new("l")).unwrap();
            let mut covered = Vec::new();
            for rerun in parsed.reruns() {
                covered.push(rerun.latest.number);
                if let Some(pending) = rerun.pending {
                    prop_assert_eq!(pending.entry.outcome, LedgerOutcome::Pending);
                    if pending.number != rerun.latest.number {
                        covered.push(pending.number);
                        prop_assert!(pending.number < rerun.latest.number);
                        prop_assert_eq!(
                            &LedgerEntry { outcome: LedgerOutcome::Pending, ..rerun.entry().clone() },
                            &pending.entry
                        );
                    }
                }
            }
            covered.sort_unstable();
            let every: Vec<usize> = (2..lines.len() + 2).collect();
            prop_assert_eq!(covered, every);
        }

        #[test]
        fn parsing_arbitrary_text_never_panics(text in "\\PC{0,200}") {
            let _ = Ledger::parse(&text, Path::new("l"));
            let _ = LedgerEntry::parse_line(&text);
        }

        #[test]
        fn appending_lines_is_always_append_only(
            old in prop::collection::vec("[^\n]{0,10}", 0..6),
            added in prop::collection::vec("[^\n]{0,10}", 0..4),
        ) {
            let old_text: String = old.iter().flat_map(|l| [l.as_str(), "\n"]).collect();
            let new_text: String = std::iter::once(old_text.as_str())
                .chain(added.iter().flat_map(|l| [l.as_str(), "\n"]))
                .collect();
            prop_assert_eq!(is_append_only(&old_text, &new_text), Ok(()));
        }
    }
}
