//! Ingest orchestration: one result file into the history, read once, hashed as it
//! streams, stored all-or-nothing; and the expansion of command-line inputs into files.
//! Nothing here prints or knows about the command line.

use std::collections::HashSet;
use std::io::BufRead as _;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use sha2::{Digest, Sha256};

use crate::history::{HistoryError, HistoryStore, IngestReport, NewRun, RunContent};
use crate::results::{self, Execution, ParseError, ParseOptions, ParseSummary, Position};

/// The version tag at the head of every content key; a new recipe gets a new tag.
pub const CONTENT_KEY_VERSION: &str = "candor/content-key/1";

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
    /// The thread that reads the file could not be started.
    #[error("could not start a thread to read {}", path.display())]
    Thread {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: io::Error,
    },
}

impl IngestError {
    /// What the reader should do next, when there is something to say.
    pub fn hint(&self) -> Option<&'static str> {
        match self {
            IngestError::Read { .. } => Some("check that the file exists and is readable"),
            IngestError::Parse { error, .. } => Some(error.hint()),
            IngestError::Store(_) | IngestError::Thread { .. } => None,
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

/// Executions handed from the reading thread to the storing one at a time: enough to
/// make the hand-over cost nothing next to storing them.
const BATCH_EXECUTIONS: usize = 64;

/// A batch is handed over early once its texts reach this size, so that what is in flight
/// stays small whatever the test cases carry.
const BATCH_TEXT_BYTES: usize = 256 * 1024;

/// Batches waiting for the store. With the one being filled and the one being stored,
/// at most this many plus two are held at once (batches of executions and chunks of the
/// file's bytes alike).
const BATCHES_IN_FLIGHT: usize = 4;

/// The file's bytes are handed to the storing thread, which hashes them, in chunks of
/// this size.
const HASH_CHUNK_BYTES: usize = 256 * 1024;

/// What the reading thread hands to the storing thread, in file order.
enum Handoff {
    /// Executions to store.
    Executions(Vec<Signed>),
    /// The next bytes of the file, to hash.
    Bytes(Vec<u8>),
}

/// Reads the results file at `path` into `store` as one run described by `run`.
///
/// The file is read once: its bytes are hashed as the parser streams them, and the run is
/// stored under [`content_key`] so that ingesting the same file for the same run again
/// adds nothing. The run's format and producer come from what the parser saw (the
/// caller's values are kept when it saw none). On any error the store is left as it was.
///
/// Reading and storing overlap: a second thread reads and parses the file and hands
/// executions over in small batches through a bounded channel, while this thread stores
/// them, so the wall time is the slower of the two rather than their sum and memory holds
/// a few batches, never the file. The file's bytes go through the same channel, in order,
/// and this thread hashes them: parsing is the longer of the two jobs, so the hash is
/// worked out where there is time to spare.
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
    let mut hasher = Sha256::new();
    let (read, stored) = std::thread::scope(|scope| {
        let (sender, receiver) = mpsc::sync_channel(BATCHES_IN_FLIGHT);
        reader.get_mut().hand_to(sender.clone());
        let reading = std::thread::Builder::new()
            .name("candor-read".into())
            .spawn_scoped(scope, || read_file(reader, options, sender))
            .map_err(|source| IngestError::Thread {
                path: path.to_path_buf(),
                source,
            })?;
        // Stopping at the first refusal drops the receiver, which stops the reader.
        let stored = receiver.into_iter().try_for_each(|handoff| match handoff {
            Handoff::Bytes(bytes) => {
                hasher.update(&bytes);
                Ok(())
            }
            Handoff::Executions(batch) => {
                batch.into_iter().try_for_each(|(execution, signature)| {
                    session.add_with_signature(execution, signature)
                })
            }
        });
        let read = reading
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        Ok::<_, IngestError>((read, stored))
    })?;
    // Dropping the session on an error path rolls the whole file back. The store's own
    // refusal comes first: the reader only stopped because of it.
    stored?;
    let summary = read.map_err(|error| match error {
        ReadFailure::Parse(error) => parse_failure(path, error),
        ReadFailure::Rest(source) => read_error(source),
    })?;
    let file_sha256: [u8; 32] = hasher.finalize().into();
    let content_key = content_key(run, &file_sha256);
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

/// Why the reading thread stopped short.
enum ReadFailure {
    Parse(ParseError),
    /// Reading past the end of the document, for the hash, failed.
    Rest(io::Error),
}

/// An execution with its failure signature, worked out by the reading thread, which has
/// time to spare while the store writes.
type Signed = (Execution, Option<String>);

/// The reading thread: parses `reader`, sending executions in batches, then reads what
/// is left so that every byte reaches the hash.
fn read_file(
    mut reader: io::BufReader<HashingReader<fs_err::File>>,
    options: &ParseOptions,
    sender: mpsc::SyncSender<Handoff>,
) -> Result<ParseSummary, ReadFailure> {
    let mut batch = Vec::with_capacity(BATCH_EXECUTIONS);
    let mut batch_text = 0;
    let send = |batch: &mut Vec<Signed>| {
        let full = std::mem::replace(batch, Vec::with_capacity(BATCH_EXECUTIONS));
        // A closed channel means the store refused an execution and stopped; its error
        // is the one reported.
        sender
            .send(Handoff::Executions(full))
            .map_err(|_| ParseError::Sink(Box::new(StoreStopped)))
    };
    let summary = results::parse(&mut reader, options, &mut |execution| {
        batch_text += text_bytes(&execution);
        let signature = execution.signature();
        batch.push((execution, signature));
        if batch.len() >= BATCH_EXECUTIONS || batch_text >= BATCH_TEXT_BYTES {
            batch_text = 0;
            send(&mut batch)?;
        }
        Ok(())
    })
    .and_then(|summary| {
        if !batch.is_empty() {
            send(&mut batch)?;
        }
        Ok(summary)
    })
    .map_err(ReadFailure::Parse)?;
    drop(sender);
    // A parser may stop at the end of the document; the key still covers every byte.
    io::copy(&mut reader, &mut io::sink()).map_err(ReadFailure::Rest)?;
    reader.into_inner().finish().map_err(ReadFailure::Rest)?;
    Ok(summary)
}

/// The texts an execution holds, which is most of its memory.
fn text_bytes(execution: &Execution) -> usize {
    let failure = execution.failure.as_ref().map_or(0, |failure| {
        failure.text.len() + failure.message.len() + failure.frames.len() * 64
    });
    let optional = |text: &Option<String>| text.as_ref().map_or(0, String::len);
    failure + optional(&execution.stdout) + optional(&execution.stderr)
}

/// The store stopped taking executions; the reason is its own error.
#[derive(Debug, thiserror::Error)]
#[error("the store stopped taking executions")]
struct StoreStopped;

/// The key that makes ingest idempotent: lowercase hex of
///
/// ```text
/// sha256( JSON ["candor/content-key/1", commit, job, source, hex(sha256(file bytes))] )
/// ```
///
/// where the JSON is serde_json's compact form, `commit` and `job` are strings or `null`
/// and `source` is its stable spelling (`ci`, `local`, …). So the same file for the same
/// commit, job and source is one run however often it is ingested, while the same bytes
/// for another commit, job or source are another run. Branch, times, paths and conditions
/// are deliberately left out: moving or re-downloading a file does not make it new.
pub fn content_key(run: &NewRun, file_sha256: &[u8; 32]) -> String {
    let identity = serde_json::json!([
        CONTENT_KEY_VERSION,
        run.commit,
        run.job,
        run.source.as_str(),
        hex::encode(file_sha256),
    ]);
    hex::encode(Sha256::digest(identity.to_string().as_bytes()))
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

/// A reader that hands every byte it reads to the thread that hashes them, in chunks of
/// [`HASH_CHUNK_BYTES`]; the bytes read before [`HashingReader::hand_to`] are held until
/// then.
struct HashingReader<R> {
    inner: R,
    chunk: Vec<u8>,
    to_hasher: Option<mpsc::SyncSender<Handoff>>,
}

impl<R: Read> HashingReader<R> {
    fn new(inner: R) -> Self {
        HashingReader {
            inner,
            chunk: Vec::with_capacity(HASH_CHUNK_BYTES),
            to_hasher: None,
        }
    }

    /// From now on, full chunks go to `to_hasher`.
    fn hand_to(&mut self, to_hasher: mpsc::SyncSender<Handoff>) {
        self.to_hasher = Some(to_hasher);
    }

    fn send_chunk(&mut self) -> io::Result<()> {
        let Some(to_hasher) = &self.to_hasher else {
            return Ok(());
        };
        let chunk = std::mem::replace(&mut self.chunk, Vec::with_capacity(HASH_CHUNK_BYTES));
        to_hasher
            .send(Handoff::Bytes(chunk))
            .map_err(|_| io::Error::other(StoreStopped))
    }

    /// Hands over the last bytes read.
    fn finish(mut self) -> io::Result<()> {
        self.send_chunk()
    }
}

impl<R: Read> Read for HashingReader<R> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        let count = self.inner.read(buffer)?;
        let read = buffer.get(..count).ok_or_else(|| {
            io::Error::other("the reader claimed more bytes than the buffer holds")
        })?;
        self.chunk.extend_from_slice(read);
        if self.chunk.len() >= HASH_CHUNK_BYTES {
            self.send_chunk()?;
        }
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
    fn hashing_reader_hands_over_exactly_what_it_reads() {
        let data = b"hello, candor".repeat(100_000);
        let (sender, receiver) = mpsc::sync_channel(1000);
        let mut reader = HashingReader::new(&data[..]);
        let mut head = [0u8; 100];
        reader.read_exact(&mut head).unwrap();
        reader.hand_to(sender);
        io::copy(&mut reader, &mut io::sink()).unwrap();
        reader.finish().unwrap();
        let mut hasher = Sha256::new();
        let mut handed = 0;
        for handoff in receiver.try_iter() {
            let Handoff::Bytes(bytes) = handoff else {
                panic!("only bytes were handed over");
            };
            handed += bytes.len();
            hasher.update(&bytes);
        }
        assert_eq!(handed, data.len());
        let expected: [u8; 32] = Sha256::digest(&data).into();
        assert_eq!(<[u8; 32]>::from(hasher.finalize()), expected);
    }
}
