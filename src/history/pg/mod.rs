//! The shared PostgreSQL history store: connecting, migrating under an advisory lock,
//! ingest through binary `COPY` into a staging table merged in one transaction, monthly
//! partitions and their retention, and the queries behind [`HistoryStore`]. No
//! `postgres` type leaves this module.

pub mod target;

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use jiff::Timestamp;
use postgres::binary_copy::BinaryCopyInWriter;
use postgres::types::{ToSql, Type};
use postgres::{Client, NoTls, Row};
use serde::{Deserialize, Serialize};

use super::packed::name_hash;
use super::{
    Conditions, HistoryError, HistoryStore, IngestReport, IngestSession, NewRun, RunContent,
    RunRecord, Source, StoredExecution, TestSummary, TestWindow, WindowEntry,
};
use crate::results::{Execution, Failure, Outcome};
pub use target::Target;

/// Migrations in order; the schema version is how many have run.
const MIGRATIONS: [&str; 2] = [
    include_str!("migrations/0001_init.sql"),
    include_str!("migrations/0002_ci_run.sql"),
];

/// The schema version this build reads and writes.
pub const PG_SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// First key of candor's advisory locks ("cand"); the second is the schema's hash, so
/// histories in different schemas of one database do not wait for each other.
const LOCK_SPACE: i32 = 0x6361_6e64;

/// Rows sent per `COPY`: a batch's memory, not the file's, is what an ingest holds.
const COPY_ROWS: usize = 8192;

/// Bytes of staged texts that end a batch early.
const COPY_BYTES: usize = 4 << 20;

/// The columns a staged execution has, in `COPY` order.
const STAGE_TYPES: [Type; 10] = [
    Type::INT8,
    Type::INT8,
    Type::BYTEA,
    Type::INT2,
    Type::INT8,
    Type::FLOAT8,
    Type::BYTEA,
    Type::INT8,
    Type::BYTEA,
    Type::BYTEA,
];

/// A history in a PostgreSQL database.
pub struct PgStore {
    client: RefCell<Client>,
    target: Target,
}

#[expect(
    clippy::missing_fields_in_debug,
    reason = "the connection parameters hold the password"
)]
impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("target", &self.target)
            .finish()
    }
}

/// The code an outcome is stored as (the schema's comment lists them).
fn outcome_code(outcome: Outcome) -> i16 {
    match outcome {
        Outcome::Pass => 0,
        Outcome::Fail => 1,
        Outcome::Error => 2,
        Outcome::Skip => 3,
        Outcome::FlakyPass => 4,
    }
}

fn outcome_of_code(code: i16) -> Option<Outcome> {
    Some(match code {
        0 => Outcome::Pass,
        1 => Outcome::Fail,
        2 => Outcome::Error,
        3 => Outcome::Skip,
        4 => Outcome::FlakyPass,
        _ => return None,
    })
}

/// What an execution carries beside its narrow columns, compressed when stored.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Details {
    failure: Option<Failure>,
    skip_message: Option<String>,
    stdout: Option<String>,
    stderr: Option<String>,
}

fn encode_details(execution: &mut Execution) -> Option<Vec<u8>> {
    let details = Details {
        failure: execution.failure.take(),
        skip_message: execution.skip_message.take(),
        stdout: execution.stdout.take(),
        stderr: execution.stderr.take(),
    };
    if details.failure.is_none()
        && details.skip_message.is_none()
        && details.stdout.is_none()
        && details.stderr.is_none()
    {
        return None;
    }
    // Serializing plain strings and numbers cannot fail.
    let json = serde_json::to_vec(&details).unwrap_or_default();
    Some(lz4_flex::compress_prepend_size(&json))
}

fn decode_details(bytes: Option<&[u8]>) -> Result<Details, String> {
    let Some(bytes) = bytes else {
        return Ok(Details::default());
    };
    let json = lz4_flex::decompress_size_prepended(bytes)
        .map_err(|e| format!("stored details do not decompress: {e}"))?;
    serde_json::from_slice(&json).map_err(|e| format!("stored details do not parse: {e}"))
}

fn text(bytes: Option<Vec<u8>>) -> Result<Option<String>, String> {
    bytes
        .map(|b| String::from_utf8(b).map_err(|_| "stored text is not UTF-8".to_owned()))
        .transpose()
}

fn bytes(text: Option<&String>) -> Option<&[u8]> {
    text.map(String::as_bytes)
}

fn micros(timestamp: Timestamp) -> i64 {
    // jiff's range is ±9999 years: well inside i64 microseconds.
    timestamp.as_microsecond()
}

fn timestamp(us: i64) -> Result<Timestamp, String> {
    Timestamp::from_microsecond(us).map_err(|e| format!("stored time {us}: {e}"))
}

fn limit(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// The month partition `started_us` falls in: its name and bounds (`None`: unbounded).
fn month_of(started: Timestamp) -> (String, i64, Option<i64>) {
    let date = started.to_zoned(jiff::tz::TimeZone::UTC).date();
    let first = date.first_of_month();
    let lower = first
        .to_zoned(jiff::tz::TimeZone::UTC)
        .map_or(i64::MIN, |z| micros(z.timestamp()));
    let upper = first
        .checked_add(jiff::Span::new().months(1))
        .ok()
        .and_then(|next| next.to_zoned(jiff::tz::TimeZone::UTC).ok())
        .map(|z| micros(z.timestamp()));
    let year = first.year();
    let name = if year < 0 {
        format!("executions_bce{:04}_{:02}", -year, first.month())
    } else {
        format!("executions_{year:04}_{:02}", first.month())
    };
    (name, lower, upper)
}

impl PgStore {
    /// Connects and brings the schema up to date (under an advisory lock, so CI jobs
    /// starting at once upgrade it once).
    pub fn open(target: &Target) -> Result<PgStore, HistoryError> {
        let config = target
            .client_config()
            .map_err(|e| HistoryError::BadTarget {
                target: target.to_string(),
                reason: e.reason,
            })?;
        let mode = target.ssl_mode().map_err(|e| HistoryError::BadTarget {
            target: target.to_string(),
            reason: e.reason,
        })?;
        let client = if mode == target::SslMode::Disable {
            config.connect(NoTls)
        } else {
            let tls = target.tls().map_err(|e| HistoryError::BadTarget {
                target: target.to_string(),
                reason: e.reason,
            })?;
            config.connect(tokio_postgres_rustls::MakeRustlsConnect::new(tls))
        }
        .map_err(|e| {
            let mut error = server_error(target, &e, true);
            // A password file passed over is the likely reason a login failed.
            if let (Some(note), HistoryError::Server { message, .. }) =
                (target.passfile_note(), &mut error)
            {
                let _ = write!(message, "; {note}");
            }
            error
        })?;
        let mut client = client;
        // An ingest stages its run in a temporary table: with the default 8 MB of
        // session buffers, a 200,000-test run is written out to temp files and read
        // back. Only settable before the session's first temporary table.
        client
            .batch_execute("SET temp_buffers = '64MB'")
            .map_err(|e| server_error(target, &e, false))?;
        let store = PgStore {
            client: RefCell::new(client),
            target: target.clone(),
        };
        store.migrate()?;
        Ok(store)
    }

    /// Where the history is (password hidden).
    pub fn target(&self) -> &Target {
        &self.target
    }

    fn error(&self, e: &postgres::Error) -> HistoryError {
        server_error(&self.target, e, false)
    }

    fn corrupt(&self, message: String) -> HistoryError {
        HistoryError::Server {
            target: self.target.to_string(),
            message,
            code: None,
        }
    }

    /// The schema version of the history.
    pub fn schema_version(&self) -> Result<i64, HistoryError> {
        let mut client = self.client.borrow_mut();
        let row = client
            .query_one("SELECT version FROM candor_schema", &[])
            .map_err(|e| self.error(&e))?;
        Ok(row.get(0))
    }

    fn migrate(&self) -> Result<(), HistoryError> {
        // Up to date (every open but the first): answered by a read, so that a read-only
        // role can open the history and nothing waits for the lock.
        if self.stored_version()? == Some(PG_SCHEMA_VERSION) {
            return Ok(());
        }
        let mut client = self.client.borrow_mut();
        let mut tx = client.transaction().map_err(|e| self.error(&e))?;
        tx.execute(
            "SELECT pg_advisory_xact_lock($1, hashtext(current_schema()))",
            &[&LOCK_SPACE],
        )
        .map_err(|e| self.error(&e))?;
        tx.batch_execute("CREATE TABLE IF NOT EXISTS candor_schema (version bigint NOT NULL)")
            .map_err(|e| self.error(&e))?;
        // Read again under the lock: another job may have migrated meanwhile.
        let found: i64 = tx
            .query_opt("SELECT version FROM candor_schema", &[])
            .map_err(|e| self.error(&e))?
            .map_or(0, |row| row.get(0));
        if found > PG_SCHEMA_VERSION {
            return Err(self.too_new(found));
        }
        for sql in &MIGRATIONS[usize::try_from(found).unwrap_or(0)..] {
            tx.batch_execute(sql).map_err(|e| self.error(&e))?;
        }
        tx.execute("DELETE FROM candor_schema", &[])
            .map_err(|e| self.error(&e))?;
        tx.execute(
            "INSERT INTO candor_schema (version) VALUES ($1)",
            &[&PG_SCHEMA_VERSION],
        )
        .map_err(|e| self.error(&e))?;
        tx.commit().map_err(|e| self.error(&e))
    }

    /// The schema version the database holds, `None` for a database candor has not used.
    fn stored_version(&self) -> Result<Option<i64>, HistoryError> {
        let mut client = self.client.borrow_mut();
        let exists: bool = client
            .query_one("SELECT to_regclass('candor_schema') IS NOT NULL", &[])
            .map_err(|e| self.error(&e))?
            .get(0);
        if !exists {
            return Ok(None);
        }
        let found: Option<i64> = client
            .query_opt("SELECT version FROM candor_schema", &[])
            .map_err(|e| self.error(&e))?
            .map(|row| row.get(0));
        if let Some(found) = found
            && found > PG_SCHEMA_VERSION
        {
            return Err(self.too_new(found));
        }
        Ok(found)
    }

    fn too_new(&self, found: i64) -> HistoryError {
        HistoryError::TooNew {
            path: self.target.to_string().into(),
            found,
            supported: PG_SCHEMA_VERSION,
        }
    }

    /// Creates the month partition a run starting at `started` needs, unless it exists.
    /// Its own short transaction under the advisory lock: ingests of the same new month
    /// create it once.
    fn ensure_partition(&self, started: Timestamp) -> Result<(), HistoryError> {
        let (name, lower, upper) = month_of(started);
        let mut client = self.client.borrow_mut();
        let exists = client
            .query_opt("SELECT 1 FROM candor_partitions WHERE name = $1", &[&name])
            .map_err(|e| self.error(&e))?
            .is_some();
        if exists {
            return Ok(());
        }
        let mut tx = client.transaction().map_err(|e| self.error(&e))?;
        tx.execute(
            "SELECT pg_advisory_xact_lock($1, hashtext(current_schema()))",
            &[&LOCK_SPACE],
        )
        .map_err(|e| self.error(&e))?;
        let exists = tx
            .query_opt("SELECT 1 FROM candor_partitions WHERE name = $1", &[&name])
            .map_err(|e| self.error(&e))?
            .is_some();
        if !exists {
            let upper_sql = upper.map_or_else(|| "MAXVALUE".to_owned(), |u| u.to_string());
            tx.batch_execute(&format!(
                "CREATE TABLE {name} PARTITION OF executions FOR VALUES FROM ({lower}) TO ({upper_sql})"
            ))
            .map_err(|e| self.error(&e))?;
            tx.execute(
                "INSERT INTO candor_partitions (name, lower_us, upper_us) VALUES ($1, $2, $3)",
                &[&name, &lower, &upper],
            )
            .map_err(|e| self.error(&e))?;
        }
        tx.commit().map_err(|e| self.error(&e))
    }

    /// Drops every month partition that ends at or before `cutoff`, and the runs that
    /// started before the newest such end, in one transaction: whole partitions, never
    /// a long `DELETE` of executions. Returns the partitions dropped and runs removed.
    pub fn prune(&self, cutoff: Timestamp) -> Result<(Vec<String>, u64), HistoryError> {
        let cutoff = micros(cutoff);
        let mut client = self.client.borrow_mut();
        let mut tx = client.transaction().map_err(|e| self.error(&e))?;
        tx.execute(
            "SELECT pg_advisory_xact_lock($1, hashtext(current_schema()))",
            &[&LOCK_SPACE],
        )
        .map_err(|e| self.error(&e))?;
        let rows = tx
            .query(
                "SELECT name, upper_us FROM candor_partitions \
                 WHERE upper_us IS NOT NULL AND upper_us <= $1 ORDER BY upper_us",
                &[&cutoff],
            )
            .map_err(|e| self.error(&e))?;
        let mut dropped = Vec::new();
        let mut end = None;
        for row in rows {
            let name: String = row.get(0);
            end = Some(row.get::<_, i64>(1));
            tx.batch_execute(&format!("DROP TABLE {name}"))
                .map_err(|e| self.error(&e))?;
            tx.execute("DELETE FROM candor_partitions WHERE name = $1", &[&name])
                .map_err(|e| self.error(&e))?;
            dropped.push(name);
        }
        let removed = match end {
            Some(end) => tx
                .execute("DELETE FROM runs WHERE started_us < $1", &[&end])
                .map_err(|e| self.error(&e))?,
            None => 0,
        };
        tx.commit().map_err(|e| self.error(&e))?;
        Ok((dropped, removed))
    }

    fn run_record(&self, row: &Row) -> Result<RunRecord, HistoryError> {
        let decode = || -> Result<RunRecord, String> {
            let source: String = row.get("source");
            Ok(RunRecord {
                id: row.get("id"),
                run: NewRun {
                    commit: text(row.get("commit_sha"))?,
                    branch: text(row.get("branch"))?,
                    merge_base: text(row.get("merge_base"))?,
                    started_at: timestamp(row.get("started_us"))?,
                    source: Source::from_str_opt(&source)
                        .ok_or_else(|| format!("unknown source `{source}`"))?,
                    ci_provider: text(row.get("ci_provider"))?,
                    job: text(row.get("job"))?,
                    ci_run: super::CiRun {
                        repository: text(row.get("ci_repository"))?,
                        run_id: text(row.get("ci_run_id"))?,
                        attempt: row
                            .get::<_, Option<i64>>("ci_attempt")
                            .map(u32::try_from)
                            .transpose()
                            .map_err(|e| e.to_string())?,
                    },
                    workers: row
                        .get::<_, Option<i64>>("workers")
                        .map(u32::try_from)
                        .transpose()
                        .map_err(|e| e.to_string())?,
                    seed: text(row.get("seed"))?,
                    conditions: Conditions {
                        ci: row.get("ci"),
                        runner: text(row.get("runner"))?,
                        os: text(row.get("os"))?,
                    },
                    format: text(row.get("format"))?,
                    producer: text(row.get("producer"))?,
                    source_path: text(row.get("source_path"))?,
                },
                content_key: row.get("content_key"),
                executions: u64::try_from(row.get::<_, i64>("executions")).unwrap_or(0),
                red: u64::try_from(row.get::<_, i64>("red")).unwrap_or(0),
            })
        };
        decode().map_err(|m| self.corrupt(m))
    }

    /// An execution row (`name`, narrow columns, `details`, `signature`) with its run's
    /// columns (`run_id`, `started_us`, `commit_sha`, `branch`, `source`).
    fn stored_execution(&self, row: &Row) -> Result<StoredExecution, HistoryError> {
        let decode = || -> Result<StoredExecution, String> {
            let details = decode_details(row.get("details"))?;
            let source: String = row.get("source");
            let code: i16 = row.get("outcome");
            let execution = Execution {
                test_id: text(Some(row.get("name")))?.unwrap_or_default(),
                outcome: outcome_of_code(code).ok_or_else(|| format!("unknown outcome {code}"))?,
                duration: row.get("duration"),
                attempts: u32::try_from(row.get::<_, i64>("attempts"))
                    .map_err(|e| e.to_string())?,
                failure: details.failure,
                skip_message: details.skip_message,
                file: text(row.get("file"))?,
                line: row
                    .get::<_, Option<i64>>("line")
                    .map(u32::try_from)
                    .transpose()
                    .map_err(|e| e.to_string())?,
                stdout: details.stdout,
                stderr: details.stderr,
            };
            Ok(StoredExecution {
                run_id: row.get("run_id"),
                started_at: timestamp(row.get("started_us"))?,
                commit: text(row.get("commit_sha"))?,
                branch: text(row.get("branch"))?,
                source: Source::from_str_opt(&source)
                    .ok_or_else(|| format!("unknown source `{source}`"))?,
                execution,
                signature: text(row.get("signature"))?,
            })
        };
        decode().map_err(|m| self.corrupt(m))
    }
}

const RUN_COLUMNS: &str = "id, content_key, commit_sha, branch, merge_base, started_us, source, \
    ci_provider, job, workers, seed, ci, runner, os, format, producer, source_path, executions, red, \
    ci_repository, ci_run_id, ci_attempt";

const EXECUTION_COLUMNS: &str = "t.name, e.outcome, e.duration, e.attempts, e.file, e.line, \
    e.details, e.signature, e.run_id, e.started_us, r.commit_sha, r.branch, r.source";

/// A server failure as the CLI shows it: the server's message, detail and hint, or what
/// happened to the connection.
fn server_error(target: &Target, e: &postgres::Error, connecting: bool) -> HistoryError {
    if let Some(db) = e.as_db_error() {
        let mut message = db.message().to_owned();
        if let Some(detail) = db.detail() {
            let _ = write!(message, " ({detail})");
        }
        return HistoryError::Server {
            target: target.to_string(),
            message,
            code: Some(db.code().code().to_owned()),
        };
    }
    let mut cause = String::new();
    let mut source: Option<&dyn std::error::Error> = std::error::Error::source(e);
    while let Some(s) = source {
        cause = s.to_string();
        source = s.source();
    }
    let message = if connecting {
        if cause.is_empty() {
            format!("could not connect: {e}")
        } else {
            format!("could not connect: {cause}")
        }
    } else if e.is_closed() || !cause.is_empty() {
        format!(
            "the connection to the server was lost{}",
            if cause.is_empty() {
                String::new()
            } else {
                format!(": {cause}")
            }
        )
    } else {
        e.to_string()
    };
    HistoryError::Server {
        target: target.to_string(),
        message,
        code: None,
    }
}

/// One run being stored: executions are copied into a temporary table, merged there and
/// moved into the history at the commit, all in one transaction.
struct PgIngest<'a> {
    tx: postgres::Transaction<'a>,
    target: &'a Target,
    run: NewRun,
    batch: Vec<Staged>,
    batch_bytes: usize,
    next_seq: i64,
    /// Name hashes this run has staged, to find the few that repeat (retries) without
    /// asking the server about every test.
    seen: HashSet<i64>,
    repeated: HashSet<i64>,
}

struct Staged {
    seq: i64,
    hash: i64,
    name: String,
    outcome: i16,
    attempts: i64,
    duration: Option<f64>,
    file: Option<String>,
    line: Option<i64>,
    signature: Option<String>,
    details: Option<Vec<u8>>,
}

impl PgIngest<'_> {
    fn error(&self, e: &postgres::Error) -> HistoryError {
        server_error(self.target, e, false)
    }

    fn flush(&mut self) -> Result<(), HistoryError> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let batch = std::mem::take(&mut self.batch);
        self.batch_bytes = 0;
        let result = (|| -> Result<(), postgres::Error> {
            let writer = self.tx.copy_in(
                "COPY candor_stage (seq, name_hash, name, outcome, attempts, duration, file, line, signature, details) FROM STDIN BINARY",
            )?;
            let mut writer = BinaryCopyInWriter::new(writer, &STAGE_TYPES);
            for row in &batch {
                let values: [&(dyn ToSql + Sync); 10] = [
                    &row.seq,
                    &row.hash,
                    &row.name.as_bytes(),
                    &row.outcome,
                    &row.attempts,
                    &row.duration,
                    &bytes(row.file.as_ref()),
                    &row.line,
                    &bytes(row.signature.as_ref()),
                    &row.details,
                ];
                writer.write(&values)?;
            }
            writer.finish()?;
            Ok(())
        })();
        result.map_err(|e| self.error(&e))
    }

    /// Merges every test the run holds more than once into one row, as
    /// `Execution::absorb_retry` says, keeping the first row's place.
    fn merge_retries(&mut self) -> Result<(), HistoryError> {
        if self.repeated.is_empty() {
            return Ok(());
        }
        self.tx
            .batch_execute("CREATE INDEX ON candor_stage (name_hash)")
            .map_err(|e| server_error(self.target, &e, false))?;
        let hashes: Vec<i64> = self.repeated.iter().copied().collect();
        for hash in hashes {
            let rows = self
                .tx
                .query(
                    "SELECT seq, name, outcome, attempts, duration, file, line, details \
                     FROM candor_stage WHERE name_hash = $1 ORDER BY seq",
                    &[&hash],
                )
                .map_err(|e| server_error(self.target, &e, false))?;
            let mut groups: HashMap<Vec<u8>, Vec<(i64, Execution)>> = HashMap::new();
            for row in rows {
                let name: Vec<u8> = row.get(1);
                let code: i16 = row.get(2);
                let details = decode_details(row.get(7)).map_err(|m| HistoryError::Server {
                    target: self.target.to_string(),
                    message: m,
                    code: None,
                })?;
                let execution = Execution {
                    test_id: String::from_utf8_lossy(&name).into_owned(),
                    outcome: outcome_of_code(code).unwrap_or(Outcome::Error),
                    duration: row.get(4),
                    attempts: u32::try_from(row.get::<_, i64>(3)).unwrap_or(u32::MAX),
                    failure: details.failure,
                    skip_message: details.skip_message,
                    file: text(row.get(5)).ok().flatten(),
                    line: row
                        .get::<_, Option<i64>>(6)
                        .and_then(|l| u32::try_from(l).ok()),
                    stdout: details.stdout,
                    stderr: details.stderr,
                };
                groups
                    .entry(name)
                    .or_default()
                    .push((row.get(0), execution));
            }
            for (name, group) in groups {
                if group.len() < 2 {
                    continue;
                }
                let mut items = group.into_iter();
                let Some((first_seq, mut merged)) = items.next() else {
                    continue;
                };
                for (_, later) in items {
                    merged.absorb_retry(later);
                }
                let signature = merged.signature();
                let outcome = outcome_code(merged.outcome);
                let attempts = i64::from(merged.attempts);
                let duration = merged.duration;
                let file = merged.file.clone();
                let line = merged.line.map(i64::from);
                let details = encode_details(&mut merged);
                self.tx
                    .execute(
                        "DELETE FROM candor_stage WHERE name_hash = $1 AND name = $2 AND seq <> $3",
                        &[&hash, &name, &first_seq],
                    )
                    .map_err(|e| server_error(self.target, &e, false))?;
                self.tx
                    .execute(
                        "UPDATE candor_stage SET outcome = $2, attempts = $3, duration = $4, \
                         file = $5, line = $6, signature = $7, details = $8 WHERE seq = $1",
                        &[
                            &first_seq,
                            &outcome,
                            &attempts,
                            &duration,
                            &bytes(file.as_ref()),
                            &line,
                            &bytes(signature.as_ref()),
                            &details,
                        ],
                    )
                    .map_err(|e| server_error(self.target, &e, false))?;
            }
        }
        Ok(())
    }
}

impl IngestSession for PgIngest<'_> {
    fn add(&mut self, execution: Execution) -> Result<(), HistoryError> {
        let signature = execution.signature();
        self.add_with_signature(execution, signature)
    }

    fn add_with_signature(
        &mut self,
        mut execution: Execution,
        signature: Option<String>,
    ) -> Result<(), HistoryError> {
        let hash = name_hash(&execution.test_id);
        if !self.seen.insert(hash) {
            self.repeated.insert(hash);
        }
        let details = encode_details(&mut execution);
        self.batch_bytes += execution.test_id.len()
            + details.as_ref().map_or(0, Vec::len)
            + execution.file.as_ref().map_or(0, String::len)
            + signature.as_ref().map_or(0, String::len)
            + 64;
        self.batch.push(Staged {
            seq: self.next_seq,
            hash,
            name: execution.test_id,
            outcome: outcome_code(execution.outcome),
            attempts: i64::from(execution.attempts),
            duration: execution.duration,
            file: execution.file,
            line: execution.line.map(i64::from),
            signature,
            details,
        });
        self.next_seq += 1;
        if self.batch.len() >= COPY_ROWS || self.batch_bytes >= COPY_BYTES {
            self.flush()?;
        }
        Ok(())
    }

    fn commit(mut self: Box<Self>, content: &RunContent) -> Result<IngestReport, HistoryError> {
        self.flush()?;
        self.merge_retries()?;
        let target = self.target;
        let fail = |e: postgres::Error| server_error(target, &e, false);
        let counts = self
            .tx
            .query_one(
                "SELECT count(*), count(*) FILTER (WHERE outcome IN (1, 2)) FROM candor_stage",
                &[],
            )
            .map_err(fail)?;
        let (tests, red): (i64, i64) = (counts.get(0), counts.get(1));
        let run = &self.run;
        let started = micros(run.started_at);
        let workers = run.workers.map(i64::from);
        let inserted = self
            .tx
            .query_opt(
                "INSERT INTO runs (content_key, commit_sha, branch, merge_base, started_us, source, \
                 ci_provider, job, workers, seed, ci, runner, os, format, producer, source_path, \
                 executions, red, ci_repository, ci_run_id, ci_attempt) VALUES ($1, $2, $3, $4, $5, \
                 $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21) \
                 ON CONFLICT (content_key) DO NOTHING RETURNING id",
                &[
                    &content.content_key,
                    &bytes(run.commit.as_ref()),
                    &bytes(run.branch.as_ref()),
                    &bytes(run.merge_base.as_ref()),
                    &started,
                    &run.source.as_str(),
                    &bytes(run.ci_provider.as_ref()),
                    &bytes(run.job.as_ref()),
                    &workers,
                    &bytes(run.seed.as_ref()),
                    &run.conditions.ci,
                    &bytes(run.conditions.runner.as_ref()),
                    &bytes(run.conditions.os.as_ref()),
                    &bytes(content.format.as_ref()),
                    &bytes(content.producer.as_ref()),
                    &bytes(run.source_path.as_ref()),
                    &tests,
                    &red,
                    &bytes(run.ci_run.repository.as_ref()),
                    &bytes(run.ci_run.run_id.as_ref()),
                    &run.ci_run.attempt.map(i64::from),
                ],
            )
            .map_err(fail)?;
        let Some(inserted) = inserted else {
            // Stored already (by this or a concurrent job, which the insert waited for).
            let row = self
                .tx
                .query_one(
                    "SELECT id, executions, red FROM runs WHERE content_key = $1",
                    &[&content.content_key],
                )
                .map_err(fail)?;
            let report = IngestReport {
                run_id: row.get(0),
                added: false,
                tests: u64::try_from(row.get::<_, i64>(1)).unwrap_or(0),
                red: u64::try_from(row.get::<_, i64>(2)).unwrap_or(0),
            };
            self.tx.rollback().map_err(fail)?;
            return Ok(report);
        };
        let run_id: i64 = inserted.get(0);
        // Sorts and hashes of a whole run in memory rather than in temp files (the
        // default 4 MB spills a 200,000-test run to disk).
        self.tx
            .batch_execute("SET LOCAL work_mem = '64MB'")
            .map_err(fail)?;
        // New names only (the staged names are distinct: retries were merged), in hash
        // order, so that concurrent ingests adding the same new tests wait for each
        // other instead of deadlocking, and the name index grows at its end.
        self.tx
            .execute(
                "INSERT INTO tests (name_hash, name) \
                 SELECT s.name_hash, s.name FROM candor_stage s WHERE NOT EXISTS \
                   (SELECT 1 FROM tests t WHERE t.name_hash = s.name_hash AND t.name = s.name) \
                 ORDER BY s.name_hash, s.name \
                 ON CONFLICT (name_hash, name) DO NOTHING",
                &[],
            )
            .map_err(fail)?;
        let moved = self
            .tx
            .execute(
                "INSERT INTO executions (run_id, test_id, started_us, outcome, attempts, duration, \
                 file, line, signature, details) \
                 SELECT $1, t.id, $2, s.outcome, s.attempts, s.duration, s.file, s.line, \
                 s.signature, s.details FROM candor_stage s \
                 JOIN tests t ON t.name_hash = s.name_hash AND t.name = s.name \
                 ORDER BY t.id",
                &[&run_id, &started],
            )
            .map_err(fail)?;
        if i64::try_from(moved).ok() != Some(tests) {
            return Err(HistoryError::Server {
                target: target.to_string(),
                message: format!("stored {moved} executions of {tests}; nothing was kept"),
                code: None,
            });
        }
        self.tx.commit().map_err(fail)?;
        Ok(IngestReport {
            run_id,
            added: true,
            tests: u64::try_from(tests).unwrap_or(0),
            red: u64::try_from(red).unwrap_or(0),
        })
    }
}

impl HistoryStore for PgStore {
    fn begin_ingest<'a>(
        &'a mut self,
        run: &NewRun,
    ) -> Result<Box<dyn IngestSession + 'a>, HistoryError> {
        self.ensure_partition(run.started_at)?;
        let PgStore { client, target } = self;
        let mut tx = client
            .get_mut()
            .transaction()
            .map_err(|e| server_error(target, &e, false))?;
        tx.batch_execute(
            "CREATE TEMPORARY TABLE candor_stage (seq bigint NOT NULL, name_hash bigint NOT NULL, \
             name bytea NOT NULL, outcome smallint NOT NULL, attempts bigint NOT NULL, \
             duration double precision, file bytea, line bigint, signature bytea, details bytea) \
             ON COMMIT DROP",
        )
        .map_err(|e| server_error(target, &e, false))?;
        let mut run = run.clone();
        // Kept at the store's precision, as the trait says.
        run.started_at = timestamp(micros(run.started_at)).unwrap_or(run.started_at);
        Ok(Box::new(PgIngest {
            tx,
            target,
            run,
            batch: Vec::with_capacity(COPY_ROWS),
            batch_bytes: 0,
            next_seq: 0,
            seen: HashSet::new(),
            repeated: HashSet::new(),
        }))
    }

    fn tests_in(
        &self,
        failing_only: bool,
        runs: Option<&HashSet<i64>>,
    ) -> Result<Vec<TestSummary>, HistoryError> {
        let (filter, ids) = run_filter(runs, 1);
        let params: Vec<&(dyn ToSql + Sync)> = match &ids {
            Some(ids) => vec![ids],
            None => Vec::new(),
        };
        let mut client = self.client.borrow_mut();
        // Failing tests only: each test's latest ran execution is one index probe, and
        // only the few whose latest is red are counted, instead of aggregating every
        // execution of the history.
        let failing_sql = format!(
            "SELECT t.name, s.runs, s.failures, s.skips, s.last_failure, s.last_seen, \
               l.outcome \
             FROM tests t \
             CROSS JOIN LATERAL (SELECT e.outcome FROM executions e \
                 WHERE e.test_id = t.id AND e.outcome <> 3{filter} \
                 ORDER BY e.started_us DESC, e.run_id DESC LIMIT 1) l \
             CROSS JOIN LATERAL (SELECT \
                     count(*) FILTER (WHERE e.outcome <> 3) AS runs, \
                     count(*) FILTER (WHERE e.outcome IN (1, 2, 4)) AS failures, \
                     count(*) FILTER (WHERE e.outcome = 3) AS skips, \
                     max(e.started_us) FILTER (WHERE e.outcome IN (1, 2, 4)) AS last_failure, \
                     max(e.started_us) AS last_seen \
                   FROM executions e WHERE e.test_id = t.id{filter}) s \
             WHERE l.outcome IN (1, 2) \
             ORDER BY t.name"
        );
        let all_sql = format!(
            "SELECT t.name, s.runs, s.failures, s.skips, s.last_failure, s.last_seen, \
                       l.outcome \
                     FROM (SELECT e.test_id, \
                             count(*) FILTER (WHERE e.outcome <> 3) AS runs, \
                             count(*) FILTER (WHERE e.outcome IN (1, 2, 4)) AS failures, \
                             count(*) FILTER (WHERE e.outcome = 3) AS skips, \
                             max(e.started_us) FILTER (WHERE e.outcome IN (1, 2, 4)) \
                               AS last_failure, \
                             max(e.started_us) AS last_seen \
                           FROM executions e WHERE true{filter} GROUP BY e.test_id) s \
                     JOIN tests t ON t.id = s.test_id \
                     LEFT JOIN LATERAL (SELECT e.outcome FROM executions e \
                         WHERE e.test_id = s.test_id AND e.outcome <> 3{filter} \
                         ORDER BY e.started_us DESC, e.run_id DESC LIMIT 1) l ON true \
                     ORDER BY t.name"
        );
        let rows = client
            .query(if failing_only { &failing_sql } else { &all_sql }, &params)
            .map_err(|e| self.error(&e))?;
        let mut found = Vec::with_capacity(rows.len());
        for row in rows {
            let latest: Option<i16> = row.get(6);
            if failing_only && !matches!(latest, Some(1 | 2)) {
                continue;
            }
            let decode = || -> Result<TestSummary, String> {
                Ok(TestSummary {
                    test_id: text(Some(row.get(0)))?.unwrap_or_default(),
                    runs: u64::try_from(row.get::<_, i64>(1)).unwrap_or(0),
                    failures: u64::try_from(row.get::<_, i64>(2)).unwrap_or(0),
                    skips: u64::try_from(row.get::<_, i64>(3)).unwrap_or(0),
                    last_failure: row.get::<_, Option<i64>>(4).map(timestamp).transpose()?,
                    last_seen: timestamp(row.get(5))?,
                })
            };
            found.push(decode().map_err(|m| self.corrupt(m))?);
        }
        Ok(found)
    }

    fn executions(
        &self,
        test_id: &str,
        limit_to: usize,
    ) -> Result<Vec<StoredExecution>, HistoryError> {
        let rows = self
            .client
            .borrow_mut()
            .query(
                &format!(
                    "SELECT {EXECUTION_COLUMNS} FROM tests t \
                     JOIN executions e ON e.test_id = t.id JOIN runs r ON r.id = e.run_id \
                     WHERE t.name_hash = $1 AND t.name = $2 \
                     ORDER BY e.started_us DESC, e.run_id DESC LIMIT $3"
                ),
                &[&name_hash(test_id), &test_id.as_bytes(), &limit(limit_to)],
            )
            .map_err(|e| self.error(&e))?;
        rows.iter().map(|row| self.stored_execution(row)).collect()
    }

    fn runs(&self, limit_to: usize) -> Result<Vec<RunRecord>, HistoryError> {
        let rows = self
            .client
            .borrow_mut()
            .query(
                &format!(
                    "SELECT {RUN_COLUMNS} FROM runs ORDER BY started_us DESC, id DESC LIMIT $1"
                ),
                &[&limit(limit_to)],
            )
            .map_err(|e| self.error(&e))?;
        rows.iter().map(|row| self.run_record(row)).collect()
    }

    fn run(&self, run_id: i64) -> Result<Option<RunRecord>, HistoryError> {
        let row = self
            .client
            .borrow_mut()
            .query_opt(
                &format!("SELECT {RUN_COLUMNS} FROM runs WHERE id = $1"),
                &[&run_id],
            )
            .map_err(|e| self.error(&e))?;
        row.map(|row| self.run_record(&row)).transpose()
    }

    fn run_failures(&self, run_id: i64) -> Result<Vec<StoredExecution>, HistoryError> {
        self.query_run(run_id, true)
    }

    fn run_executions(&self, run_id: i64) -> Result<Vec<StoredExecution>, HistoryError> {
        self.query_run(run_id, false)
    }

    fn red_seconds(&self, run_id: i64) -> Result<f64, HistoryError> {
        // The sum is the server's: no failure details, names or frames cross the wire.
        let row = self
            .client
            .borrow_mut()
            .query_one(
                "SELECT COALESCE(sum(duration), 0)::float8 FROM executions \
                 WHERE run_id = $1 AND outcome IN (1, 2, 4)",
                &[&run_id],
            )
            .map_err(|e| self.error(&e))?;
        Ok(row.get(0))
    }

    fn windows_in(
        &self,
        size: usize,
        runs: Option<&HashSet<i64>>,
        visit: &mut dyn FnMut(TestWindow),
    ) -> Result<(), HistoryError> {
        let mut client = self.client.borrow_mut();
        let size = limit(size);
        let (filter, ids) = run_filter(runs, 2);
        let mut params: Vec<&(dyn ToSql + Sync)> = vec![&size];
        if let Some(ids) = &ids {
            params.push(ids);
        }
        let rows = client
            .query_raw(
                &format!(
                    "SELECT t.name, w.run_id, w.started_us, w.outcome \
                     FROM tests t CROSS JOIN LATERAL ( \
                         SELECT e.run_id, e.started_us, e.outcome FROM executions e \
                         WHERE e.test_id = t.id AND e.outcome <> 3{filter} \
                         ORDER BY e.started_us DESC, e.run_id DESC LIMIT $1) w \
                     ORDER BY t.name, w.started_us DESC, w.run_id DESC"
                ),
                params,
            )
            .map_err(|e| server_error(&self.target, &e, false))?;
        let mut current: Option<(Vec<u8>, Vec<WindowEntry>)> = None;
        let mut rows = rows;
        loop {
            let row = postgres::fallible_iterator::FallibleIterator::next(&mut rows)
                .map_err(|e| server_error(&self.target, &e, false))?;
            let Some(row) = row else { break };
            let name: Vec<u8> = row.get(0);
            let code: i16 = row.get(3);
            let entry = WindowEntry {
                run_id: row.get(1),
                started_at: timestamp(row.get(2)).map_err(|m| self.corrupt(m))?,
                outcome: outcome_of_code(code)
                    .ok_or_else(|| self.corrupt(format!("unknown outcome {code}")))?,
            };
            match &mut current {
                Some((held, entries)) if *held == name => entries.push(entry),
                _ => {
                    if let Some((held, entries)) = current.take() {
                        visit(self.window(held, entries)?);
                    }
                    current = Some((name, vec![entry]));
                }
            }
        }
        if let Some((held, entries)) = current.take() {
            visit(self.window(held, entries)?);
        }
        Ok(())
    }
}

/// The SQL that keeps executions of the runs in `runs` only (`None`: every run), with the
/// ids as parameter `$index`: one array parameter, whatever the number of runs.
fn run_filter(runs: Option<&HashSet<i64>>, index: usize) -> (String, Option<Vec<i64>>) {
    match runs {
        Some(runs) => (
            format!(" AND e.run_id = ANY(${index})"),
            Some(runs.iter().copied().collect()),
        ),
        None => (String::new(), None),
    }
}

impl PgStore {
    fn window(&self, name: Vec<u8>, entries: Vec<WindowEntry>) -> Result<TestWindow, HistoryError> {
        let test_id = String::from_utf8(name)
            .map_err(|_| self.corrupt("a stored test name is not UTF-8".into()))?;
        Ok(TestWindow { test_id, entries })
    }

    fn query_run(
        &self,
        run_id: i64,
        failed_only: bool,
    ) -> Result<Vec<StoredExecution>, HistoryError> {
        let filter = if failed_only {
            " AND e.outcome IN (1, 2, 4)"
        } else {
            ""
        };
        let rows = self
            .client
            .borrow_mut()
            .query(
                &format!(
                    "SELECT {EXECUTION_COLUMNS} FROM executions e \
                     JOIN tests t ON t.id = e.test_id JOIN runs r ON r.id = e.run_id \
                     WHERE e.run_id = $1{filter} ORDER BY t.name"
                ),
                &[&run_id],
            )
            .map_err(|e| self.error(&e))?;
        rows.iter().map(|row| self.stored_execution(row)).collect()
    }
}
