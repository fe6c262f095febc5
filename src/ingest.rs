//! Ingest orchestration: one result file into the history, read once, hashed as it
//! streams, stored all-or-nothing; and the expansion of command-line inputs into files.
//! Nothing here prints or knows about the command line.

use std::collections::HashSet;
use std::io::BufRead as _;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::history::{HistoryError, HistoryStore, IngestReport, IngestSession, NewRun, RunContent};
use crate::results::{self, Execution, ParseError, ParseOptions, ParseSummary, Position};

/// The version tag at the head of every content key; a new recipe gets a new tag.
pub const CONTENT_KEY_VERSION: &str = "candor/content-key/2";

/// What ingesting one file did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileIngest {
    /// The file, as given.
    pub path: PathBuf,
    /// What the store did (`added == false`: this content was already stored for this run).
    pub report: IngestReport,
    /// What the parser saw: format, producer, executions read, warnings.
    pub summary: ParseSummary,
    /// The key the run was stored (or found) under; see [`content_key`].
    pub content_key: String,
    /// When the file says it was written: its own timestamp when it states one with its
    /// time zone (a zone-less local time could be off by hours), else its modification
    /// time; `None` when neither is known.
    pub written_at: Option<jiff::Timestamp>,
    /// Whether `written_at` is the file's own timestamp rather than its modification time.
    pub written_at_from_content: bool,
}

/// Why a file could not be ingested. Whatever the variant, nothing from the file was
/// stored.
#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    /// Opening or reading the file failed.
    #[error("could not read {}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
    /// The content is damaged or not results candor reads. Displays as
    /// `FILE:LINE:COLUMN: message`.
    #[error("{}:{error}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's error, its position resolved to a line and column when the file
        /// could be read again.
        error: ParseError,
    },
    /// The history refused the run.
    #[error(transparent)]
    Store(#[from] HistoryError),
}

impl IngestError {
    /// What the reader should do next, when there is something to say.
    pub fn hint(&self) -> Option<&'static str> {
        match self {
            IngestError::Read { .. } => Some("check that the file exists and is readable"),
            IngestError::Parse { error, .. } => Some(error.hint()),
            IngestError::Store(_) => None,
        }
    }

    /// Where in the file the problem is, when it is in the file.
    pub fn position(&self) -> Option<Position> {
        match self {
            IngestError::Parse { error, .. } => error.position(),
            _ => None,
        }
    }
}

/// A batch is stored early once its texts reach this size, so that what is held stays
/// small whatever the test cases carry.
const BATCH_TEXT_BYTES: usize = 256 * 1024;

/// Reads the results file at `path` into `store` as one run described by `run`.
///
/// The file is read once, on the calling thread: its bytes are hashed as the parser
/// streams them, and the run is stored under [`content_key`] so that ingesting the same
/// file for the same run again adds nothing. The run's format and producer come from
/// what the parser saw (the caller's values are kept when it saw none). Executions are
/// stored a few at a time as they are parsed; on any error the store is left as it was.
///
/// One thread, whatever the machine: a second one that read and hashed the file ahead of
/// the parse saved no wall time (the kernel reads ahead, and reading and hashing are a
/// tenth of the work) and cost 5–10% more CPU in hand-overs (docs/benchmarks.md, "Issue
/// #15 item 5").
pub fn ingest_file(
    store: &mut dyn HistoryStore,
    path: &Path,
    run: &NewRun,
    options: &ParseOptions,
) -> Result<FileIngest, IngestError> {
    let read_error = |source| IngestError::Read {
        path: path.to_path_buf(),
        source,
    };
    let file = fs_err::File::open(path).map_err(read_error)?;
    // A run starts when its file says it did (a suite timestamp, the first go event), so
    // that backfilled artifacts land where they belong in every test's window.
    let modified = file
        .metadata()
        .and_then(|metadata| metadata.modified())
        .ok()
        .and_then(|modified| jiff::Timestamp::try_from(modified).ok());
    // The parser's reader asks for a buffer's worth at a time, which this one passes
    // straight through: the file's bytes are copied once, by the kernel.
    let mut reader = io::BufReader::with_capacity(results::SNIFF_BYTES, HashingReader::new(file));
    let head = reader.fill_buf().map_err(read_error)?;
    let mut run = run.clone();
    let stamp = results::started_at_stamp(head);
    if let Some((started_at, _)) = stamp {
        run.started_at = started_at;
    }
    let zoned_stamp = stamp.filter(|(_, zoned)| *zoned).map(|(at, _)| at);
    let written_at_from_content = zoned_stamp.is_some();
    let written_at = zoned_stamp.or(modified);
    let run = &run;
    let mut session = store.begin_ingest(run)?;
    // Dropping the session on an error path rolls the whole file back.
    let summary = read_and_store(&mut reader, options, &mut *session)
        .map_err(|error| parse_failure(path, error))?;
    // Every byte after the document reaches the hash too.
    io::copy(&mut reader, &mut io::sink()).map_err(read_error)?;
    let file_digest = reader.into_inner().finish();
    let content_key = content_key(run, &file_digest);
    let content = RunContent {
        content_key,
        format: summary
            .format
            .map(|format| format.as_str().to_owned())
            .or_else(|| run.format.clone()),
        producer: summary.producer.clone().or_else(|| run.producer.clone()),
    };
    let report = session.commit(&content)?;
    Ok(FileIngest {
        path: path.to_path_buf(),
        report,
        summary,
        content_key: content.content_key,
        written_at,
        written_at_from_content,
    })
}

/// An execution with its failure signature.
type Signed = (Execution, Option<String>);

/// Executions gathered before they are stored: enough for the store to look
/// their tests up together ([`IngestSession::add_batch`]), few enough that their texts
/// are still in the cache when they are stored.
const BATCH: usize = 64;

/// Parses `reader` into `session` a few executions at a time. A refusal of the store
/// stops the parse and comes back as [`ParseError::Sink`], which [`parse_failure`] turns
/// back into the store's error.
fn read_and_store<R: io::BufRead>(
    reader: &mut R,
    options: &ParseOptions,
    session: &mut dyn IngestSession,
) -> Result<ParseSummary, ParseError> {
    let mut batch = Vec::with_capacity(BATCH);
    let mut batch_text = 0;
    let mut store = |batch: &mut Vec<Signed>| {
        let stored = session
            .add_batch(batch)
            .map_err(|error| ParseError::Sink(Box::new(error)));
        batch.clear();
        stored
    };
    results::parse_buffered(reader, options, &mut |execution| {
        batch_text += text_bytes(&execution);
        let signature = execution.signature();
        batch.push((execution, signature));
        if batch.len() >= BATCH || batch_text >= BATCH_TEXT_BYTES {
            batch_text = 0;
            store(&mut batch)?;
        }
        Ok(())
    })
    .and_then(|summary| store(&mut batch).map(|()| summary))
}

/// The texts an execution holds, which is most of its memory.
fn text_bytes(execution: &Execution) -> usize {
    let failure = execution.failure.as_ref().map_or(0, |failure| {
        failure.text.len() + failure.message.len() + failure.frames.len() * 64
    });
    let optional = |text: &Option<String>| text.as_ref().map_or(0, String::len);
    failure + optional(&execution.stdout) + optional(&execution.stderr)
}

/// The key that makes ingest idempotent: lowercase hex of
///
/// ```text
/// blake3( JSON ["candor/content-key/2", commit, job, source, hex(blake3(file bytes))] )
/// ```
///
/// where the JSON is serde_json's compact form, `commit` and `job` are strings or `null`
/// and `source` is its stable spelling (`ci`, `local`, …). So the same file for the same
/// commit, job and source is one run however often it is ingested, while the same bytes
/// for another commit, job or source are another run. Branch, times, paths and conditions
/// are deliberately left out: moving or re-downloading a file does not make it new.
///
/// BLAKE3 rather than SHA-256 (the recipe of `content-key/1`): every byte of every file is
/// hashed, and on one core SHA-256 was a tenth of an ingest's CPU (31 ms for 53 MiB with
/// the SHA extensions, 12 ms for BLAKE3), with the same use of a cryptographic hash: no
/// file can be made to pass for another's run.
pub fn content_key(run: &NewRun, file_digest: &[u8; 32]) -> String {
    let identity = serde_json::json!([
        CONTENT_KEY_VERSION,
        run.commit,
        run.job,
        run.source.as_str(),
        hex::encode(file_digest),
    ]);
    blake3::hash(identity.to_string().as_bytes())
        .to_hex()
        .to_string()
}

/// Turns a parser's failure into the error the caller reports: the store's own error
/// comes back as such, and a byte offset becomes a line and column.
pub fn parse_failure(path: &Path, error: ParseError) -> IngestError {
    match error {
        ParseError::Sink(cause) => match cause.downcast::<HistoryError>() {
            Ok(history) => IngestError::Store(*history),
            Err(other) => IngestError::Parse {
                path: path.to_path_buf(),
                error: ParseError::Sink(other),
            },
        },
        ParseError::Io(source) => IngestError::Read {
            path: path.to_path_buf(),
            source,
        },
        error => IngestError::Parse {
            path: path.to_path_buf(),
            error: resolve_position(path, error),
        },
    }
}

/// Resolves a [`Position::Offset`] by reading the file again, decoded the way parsers
/// decode it (a UTF-16 byte-order mark is honoured). The offset stays when the file
/// cannot be read again: the error is still worth reporting.
fn resolve_position(path: &Path, error: ParseError) -> ParseError {
    let Some(Position::Offset(offset)) = error.position() else {
        return error;
    };
    let Ok(file) = fs_err::File::open(path) else {
        return error;
    };
    let decoded = encoding_rs_io::DecodeReaderBytesBuilder::new()
        .utf8_passthru(true)
        .build(file);
    match results::locate(decoded, offset) {
        Ok(position) => error.with_position(position),
        Err(_) => error,
    }
}

/// A reader that hashes every byte it reads, on the thread that reads them.
struct HashingReader<R> {
    inner: R,
    hasher: blake3::Hasher,
}

impl<R: Read> HashingReader<R> {
    fn new(inner: R) -> Self {
        HashingReader {
            inner,
            hasher: blake3::Hasher::new(),
        }
    }

    /// The BLAKE3 digest of every byte read.
    fn finish(self) -> [u8; 32] {
        self.hasher.finalize().into()
    }
}

impl<R: Read> Read for HashingReader<R> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        let count = self.inner.read(buffer)?;
        let read = buffer.get(..count).ok_or_else(|| {
            io::Error::other("the reader claimed more bytes than the buffer holds")
        })?;
        self.hasher.update(read);
        Ok(count)
    }
}

/// Why the command-line inputs could not be turned into files.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// A path that is neither a file, a folder nor a glob pattern.
    #[error("{path} does not exist")]
    Missing {
        /// As given.
        path: String,
    },
    /// A glob pattern that matched nothing.
    #[error("{pattern} matched no file")]
    NoMatch {
        /// As given.
        pattern: String,
    },
    /// A folder holding no result file (none at all, or only hidden entries), named as a
    /// glob matching nothing is: there is nothing to ingest.
    #[error("{} holds no result files (hidden entries are skipped); name the folder the runner wrote its reports to", path.display())]
    EmptyFolder {
        /// The folder, as given.
        path: PathBuf,
    },
    /// A glob pattern that cannot be read.
    #[error("{pattern} is not a valid glob pattern")]
    BadPattern {
        /// As given.
        pattern: String,
        /// Where and why.
        #[source]
        source: glob::PatternError,
    },
    /// A folder or path that could not be read while expanding.
    #[error("could not read {}", path.display())]
    Read {
        /// What could not be read.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
}

/// Globs skip hidden entries, as a shell's `*` does and as folder walks do. (With this
/// option the glob crate skips them even when the pattern spells the dot: a hidden file
/// is ingested only when named.)
const SHELL_LIKE: glob::MatchOptions = glob::MatchOptions {
    case_sensitive: true,
    require_literal_separator: false,
    require_literal_leading_dot: true,
};

/// Expands command-line inputs into the files to ingest, in a stable order.
///
/// A file is taken as given. A folder is walked recursively, entries in byte order of
/// their names, taking every regular file (the content decides the format later) and
/// skipping hidden entries (names starting with `.`, such as `.DS_Store` or `.git`); a
/// symbolic link to a file is taken, one to a folder is not followed. A path that does not
/// exist but contains `*`, `?` or `[` is a glob pattern; its matches are taken in the
/// glob crate's (sorted) order, hidden entries skipped, folders among them walked as
/// above, and a pattern matching nothing is an error. A file reached twice is listed once, where first reached.
pub fn expand_inputs(inputs: &[String]) -> Result<Vec<PathBuf>, InputError> {
    let mut files = Vec::new();
    for input in inputs {
        let path = Path::new(input);
        if path.exists() {
            let before = files.len();
            take(path, &mut files)?;
            if files.len() == before && path.is_dir() {
                return Err(InputError::EmptyFolder {
                    path: path.to_path_buf(),
                });
            }
        } else if input.contains(['*', '?', '[']) {
            let matches =
                glob::glob_with(input, SHELL_LIKE).map_err(|source| InputError::BadPattern {
                    pattern: input.clone(),
                    source,
                })?;
            let mut found_any = false;
            for entry in matches {
                let path = entry.map_err(|error| InputError::Read {
                    path: error.path().to_path_buf(),
                    source: error.into(),
                })?;
                found_any = true;
                take(&path, &mut files)?;
            }
            if !found_any {
                return Err(InputError::NoMatch {
                    pattern: input.clone(),
                });
            }
        } else {
            return Err(InputError::Missing {
                path: input.clone(),
            });
        }
    }
    let mut seen = HashSet::new();
    files.retain(|file| seen.insert(file.clone()));
    Ok(files)
}

/// Takes a file, or walks a folder.
fn take(path: &Path, files: &mut Vec<PathBuf>) -> Result<(), InputError> {
    let metadata = fs_err::metadata(path).map_err(|source| InputError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    if metadata.is_dir() {
        walk(path, files)
    } else {
        files.push(path.to_path_buf());
        Ok(())
    }
}

fn walk(folder: &Path, files: &mut Vec<PathBuf>) -> Result<(), InputError> {
    let read_error = |path: &Path| {
        let path = path.to_path_buf();
        move |source| InputError::Read { path, source }
    };
    let mut entries = fs_err::read_dir(folder)
        .map_err(read_error(folder))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(read_error(folder))?;
    entries.sort_by_key(fs_err::DirEntry::file_name);
    for entry in entries {
        if entry.file_name().as_encoded_bytes().starts_with(b".") {
            continue;
        }
        let path = entry.path();
        let kind = entry.file_type().map_err(read_error(&path))?;
        if kind.is_dir() {
            walk(&path, files)?;
        } else if kind.is_file() || (kind.is_symlink() && path.is_file()) {
            files.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 16 item 9: an empty folder is an input error, as a glob matching nothing is.
    #[test]
    fn a_folder_without_result_files_is_an_input_error() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("reports");
        fs_err::create_dir_all(empty.join("nested")).unwrap();
        fs_err::write(empty.join(".DS_Store"), "x").unwrap();
        let given = empty.display().to_string();
        let error = expand_inputs(std::slice::from_ref(&given)).unwrap_err();
        assert!(matches!(error, InputError::EmptyFolder { .. }), "{error:?}");
        assert!(
            error.to_string().ends_with("reports holds no result files (hidden entries are skipped); name the folder the runner wrote its reports to"),
            "{error}"
        );
        fs_err::write(empty.join("nested/r.xml"), "<testsuite/>").unwrap();
        assert_eq!(expand_inputs(&[given]).unwrap().len(), 1);
    }

    #[test]
    fn offsets_resolve_to_line_and_column_in_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.xml");
        fs_err::write(&path, "<a>\n  <b>\n    oops").unwrap();
        let error = ParseError::Syntax {
            position: Position::Offset(14),
            message: "unexpected end".into(),
        };
        let resolved = resolve_position(&path, error);
        assert_eq!(
            resolved.position(),
            Some(Position::LineColumn { line: 3, column: 5 })
        );
    }

    #[test]
    fn offsets_into_utf16_files_count_decoded_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.xml");
        let mut bytes = vec![0xFF, 0xFE];
        for unit in "<a>\n<b>".encode_utf16() {
            bytes.extend_from_slice(&unit.to_le_bytes());
        }
        fs_err::write(&path, bytes).unwrap();
        let error = ParseError::Syntax {
            position: Position::Offset(5),
            message: "x".into(),
        };
        assert_eq!(
            resolve_position(&path, error).position(),
            Some(Position::LineColumn { line: 2, column: 2 })
        );
    }

    #[test]
    fn hashing_reader_hashes_exactly_what_it_reads() {
        let data = b"hello, candor".repeat(100_000);
        let mut reader = HashingReader::new(&data[..]);
        let mut head = [0u8; 100];
        reader.read_exact(&mut head).unwrap();
        io::copy(&mut reader, &mut io::sink()).unwrap();
        let expected: [u8; 32] = blake3::hash(&data).into();
        assert_eq!(reader.finish(), expected);
    }

    /// A JUnit file of `cases` test cases in two suites: passes, failures with
    /// tracebacks and volatile numbers, setup errors, skips, captured output, and every
    /// 97th test run again later in the file (a retry, merged with the first).
    fn mixed_junit(cases: usize) -> String {
        use std::fmt::Write as _;
        let mut xml = String::from("<?xml version=\"1.0\"?>\n<testsuites>\n");
        for suite in 0..2 {
            let _ = writeln!(xml, "<testsuite name=\"s{suite}\">");
            for case in (suite..cases).step_by(2) {
                let name = format!("tests/test_m{}.py::T::test_{case}", case % 13);
                let (classname, test) = name.rsplit_once("::").unwrap();
                let classname = classname.replace(".py::", ".").replace('/', ".");
                let open = format!(
                    "<testcase classname=\"{classname}\" name=\"{test}\" file=\"tests/test_m{}.py\" line=\"{case}\" time=\"0.{case:03}\"",
                    case % 13
                );
                let body = match case % 10 {
                    0 => format!(
                        "<failure message=\"assert {case} == 0x{case:x}\">def test():\n&gt;   assert {case} == 1\nE   AssertionError: assert {case} == 1\n\ntests/test_m{}.py:{case}: AssertionError</failure><system-out>out {case}</system-out>",
                        case % 13
                    ),
                    3 => format!(
                        "<error message=\"ConnectionError: port {case}\">tests/conftest.py:{case}: ConnectionError</error>"
                    ),
                    6 => format!("<skipped message=\"needs db {case}\"/>"),
                    7 => format!(
                        "<system-out>printed {case}</system-out><system-err>warned</system-err>"
                    ),
                    _ => String::new(),
                };
                let _ = writeln!(xml, "{open}>{body}</testcase>");
                if case % 97 == 0 {
                    let _ = writeln!(xml, "{open}/>");
                }
            }
            xml.push_str("</testsuite>\n");
        }
        xml.push_str("</testsuites>\n");
        xml
    }

    fn test_run() -> NewRun {
        NewRun {
            commit: Some("0123456789abcdef0123456789abcdef01234567".into()),
            branch: None,
            merge_base: None,
            started_at: jiff::Timestamp::from_second(1_700_000_000).unwrap(),
            source: crate::history::Source::Ci,
            ci_provider: None,
            job: None,
            ci_run: crate::history::CiRun::default(),
            workers: None,
            seed: None,
            conditions: crate::history::Conditions::default(),
            format: None,
            producer: None,
            source_path: None,
        }
    }

    /// What a history answers: its tests, every run's executions, and each run's key,
    /// format and counts.
    type Answers = (
        Vec<crate::history::TestSummary>,
        Vec<crate::history::StoredExecution>,
        Vec<(String, Option<String>, u64, u64)>,
    );

    /// What a history answers about everything it holds.
    fn answers(store: &crate::history::SqliteStore) -> Answers {
        store.check().unwrap();
        let runs = store.runs(10).unwrap();
        let mut executions = Vec::new();
        for run in &runs {
            executions.extend(store.run_executions(run.id).unwrap());
        }
        let runs = runs
            .into_iter()
            .map(|record| {
                (
                    record.content_key,
                    record.run.format,
                    record.executions,
                    record.red,
                )
            })
            .collect();
        (store.tests(false).unwrap(), executions, runs)
    }

    /// The same file for the same run is one run: ingesting it again adds nothing and
    /// finds it under the same content key, the history unchanged.
    #[test]
    fn the_same_file_again_is_the_same_run() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.xml");
        // More executions than several batches and blocks hold, and retries that come
        // back after their block was written.
        fs_err::write(&path, mixed_junit(3_000)).unwrap();
        let (mut store, done) = ingest_into_new_history(dir.path(), &path);
        let done = done.unwrap();
        assert!(done.report.added);
        assert_eq!(done.report.tests, 3_000);
        let first = answers(&store);
        assert!(first.1.iter().any(|stored| stored.execution.attempts == 2));
        assert!(first.1.iter().any(|stored| stored.signature.is_some()));
        let again = ingest_file(&mut store, &path, &test_run(), &ParseOptions::default()).unwrap();
        assert!(!again.report.added, "the same file again is the same run");
        assert_eq!(again.content_key, done.content_key);
        assert_eq!(answers(&store), first);
    }

    /// Issue 15 item 5: executions stored in batches of any size
    /// (`IngestSession::add_batch`, which looks a batch's names up together) make the
    /// history that storing them one at a time makes, retries inside a batch and across
    /// batches included.
    #[test]
    fn batches_store_what_one_at_a_time_stores() {
        let dir = tempfile::tempdir().unwrap();
        let mut executions = Vec::new();
        results::parse(
            mixed_junit(3_000).as_bytes(),
            &ParseOptions::default(),
            &mut |execution| {
                executions.push(execution);
                Ok(())
            },
        )
        .unwrap();
        // A retry is the same test again: some land in the batch of their first
        // execution (the file repeats them at once), these at the end in another.
        let retried: Vec<Execution> = executions.iter().step_by(101).cloned().collect();
        executions.extend(retried);
        let content = RunContent {
            content_key: "k".into(),
            format: None,
            producer: None,
        };
        let mut answered = Vec::new();
        for batch_size in [0, 1, 7, 256, 10_000] {
            let mut store = crate::history::SqliteStore::open(
                dir.path().join(format!("{batch_size}.db")),
                std::time::Duration::from_secs(5),
            )
            .unwrap();
            let mut session = store.begin_ingest(&test_run()).unwrap();
            if batch_size == 0 {
                for execution in executions.clone() {
                    session.add(execution).unwrap();
                }
            } else {
                for chunk in executions.chunks(batch_size) {
                    let mut batch: Vec<_> = chunk
                        .iter()
                        .map(|execution| (execution.clone(), execution.signature()))
                        .collect();
                    session.add_batch(&mut batch).unwrap();
                    // What the store left is only the caller's to drop.
                    drop(batch);
                }
            }
            let report = session.commit(&content).unwrap();
            assert_eq!(report.tests, 3_000, "batches of {batch_size}");
            answered.push((batch_size, answers(&store)));
        }
        let (_, one_at_a_time) = answered.remove(0);
        assert!(
            one_at_a_time
                .1
                .iter()
                .any(|stored| stored.execution.attempts > 1)
        );
        for (batch_size, answers) in answered {
            assert!(answers == one_at_a_time, "batches of {batch_size}");
        }
    }

    /// Every byte of the file reaches the content key, those after the document too and
    /// across many buffers: the key is the one made of the file's own BLAKE3 digest.
    #[test]
    fn every_byte_of_the_file_reaches_the_content_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.xml");
        let mut xml = mixed_junit(3_000);
        // A comment after the root, longer than a buffer, is part of the file's bytes.
        xml.push_str("\n<!-- ");
        xml.push_str(&"trailing ".repeat(results::SNIFF_BYTES));
        xml.push_str(" -->\n");
        fs_err::write(&path, &xml).unwrap();
        let expected = content_key(&test_run(), blake3::hash(xml.as_bytes()).as_bytes());
        let (_, done) = ingest_into_new_history(dir.path(), &path);
        let done = done.unwrap();
        assert_eq!(done.content_key, expected);
        assert_eq!(done.report.tests, 3_000);
    }

    /// The file at `path` ingested into a new history in `dir`, with the history and
    /// what its ingest returned.
    fn ingest_into_new_history(
        dir: &Path,
        path: &Path,
    ) -> (crate::history::SqliteStore, Result<FileIngest, IngestError>) {
        let mut store = crate::history::SqliteStore::open(
            dir.join("history.db"),
            std::time::Duration::from_secs(5),
        )
        .unwrap();
        let outcome = ingest_file(&mut store, path, &test_run(), &ParseOptions::default());
        (store, outcome)
    }

    /// Issue 15 item 5: the store has taken executions before the parse meets damage;
    /// the file still leaves nothing behind.
    #[test]
    fn a_damaged_file_stores_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("report.xml");
        let mut xml = mixed_junit(2_000);
        xml.truncate(xml.len() * 3 / 4);
        xml.push_str("<testcase name=\"x\"></testsuite>");
        fs_err::write(&path, xml).unwrap();
        let (store, outcome) = ingest_into_new_history(dir.path(), &path);
        let error = outcome.unwrap_err();
        assert!(matches!(error, IngestError::Parse { .. }), "{error:?}");
        assert!(store.runs(10).unwrap().is_empty());
        assert!(store.tests(false).unwrap().is_empty());
    }
}
