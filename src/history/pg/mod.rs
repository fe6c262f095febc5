//! The shared PostgreSQL history store: connecting, migrating under an advisory lock,
//! monthly partitions and their retention, and the queries behind [`HistoryStore`]; the
//! ingest is in `ingest`, the packed test names in `names`. No `postgres` type leaves
//! this module.

mod blocks;
mod ingest;
mod names;
pub mod target;

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use jiff::Timestamp;
use postgres::binary_copy::BinaryCopyInWriter;
use postgres::types::{ToSql, Type};
use postgres::{Client, GenericClient, NoTls, Row};
use serde::{Deserialize, Serialize};

use self::blocks::{BlockRow, BlockWriter, read_details};
use super::packed::{
    BLOCK_TESTS, Corrupt, Entries, Narrow, block_and_slot, name_hash, outcome_nibble,
    outcome_of_nibble, test_of,
};
use super::{
    Conditions, HistoryError, HistoryStore, IngestSession, NewRun, RunRecord, Source,
    StoredExecution, TestSummary, TestWindow, WindowEntry,
};
use crate::results::{Execution, Failure, Outcome};
pub use target::Target;

/// Migrations in order; the schema version is how many have run.
const MIGRATIONS: [&str; 5] = [
    include_str!("migrations/0001_init.sql"),
    include_str!("migrations/0002_ci_run.sql"),
    include_str!("migrations/0003_packed_executions.sql"),
    include_str!("migrations/0004_packed_names.sql"),
    include_str!("migrations/0005_name_deltas.sql"),
];

/// The schema version that packs executions in blocks: migrating to it moves the rows of
/// `executions` into `execution_blocks` ([`PgStore::pack_executions`]).
const PACKED_VERSION: usize = 3;

/// The schema version that packs test names in blocks: migrating to it moves the rows of
/// `tests` into `test_names` and `test_name_index` ([`names::pack_names`]).
const PACKED_NAMES_VERSION: usize = 4;

/// The columns of an `execution_blocks` row, in `COPY` order.
const BLOCK_TYPES: [Type; 6] = [
    Type::INT8,
    Type::INT8,
    Type::INT8,
    Type::BYTEA,
    Type::BYTEA,
    Type::BYTEA,
];

/// The schema version this build reads and writes.
pub const PG_SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// First key of candor's advisory locks ("cand"); the second is the schema's hash, so
/// histories in different schemas of one database do not wait for each other.
const LOCK_SPACE: i32 = 0x6361_6e64;

/// Rows sent per `COPY` or per statement of many rows.
const COPY_ROWS: usize = 8192;

/// Rows read back per fetch of a portal when packing executions into blocks.
const FETCH_ROWS: i32 = 8192;

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
    failure: Option<Box<Failure>>,
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
        format!("execution_blocks_bce{:04}_{:02}", -year, first.month())
    } else {
        format!("execution_blocks_{year:04}_{:02}", first.month())
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
        // back. Only settable before the session's first temporary table. The questions
        // are a few short statements each: JIT compiling them (PostgreSQL's cost
        // estimates of a scan of every block pass `jit_above_cost`) costs more than it
        // saves; and a windows pass sorts a few MB of outcomes, in memory.
        client
            .batch_execute("SET temp_buffers = '64MB'; SET jit = off; SET work_mem = '64MB'")
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
        let from = usize::try_from(found).unwrap_or(0);
        for (index, sql) in MIGRATIONS.iter().enumerate().skip(from) {
            tx.batch_execute(sql).map_err(|e| self.error(&e))?;
            if index + 1 == PACKED_VERSION {
                Self::pack_executions(&mut tx, &self.target)?;
            }
            if index + 1 == PACKED_NAMES_VERSION {
                names::pack_names(&mut tx).map_err(|e| self.names_error(e))?;
            }
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
                "CREATE TABLE {name} PARTITION OF execution_blocks FOR VALUES FROM ({lower}) TO ({upper_sql})"
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
}

const RUN_COLUMNS: &str = "id, content_key, commit_sha, branch, merge_base, started_us, source, \
    ci_provider, job, workers, seed, ci, runner, os, format, producer, source_path, executions, red, \
    ci_repository, ci_run_id, ci_attempt";

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

/// An execution's narrow columns from `row`, starting at column `at`: outcome,
/// attempts, duration, file, line. Written by candor from UTF-8 and known codes; anything
/// else (a damaged row) is kept as near as it can be rather than failing the run.
fn narrow_of(row: &Row, at: usize) -> Narrow {
    let code: i16 = row.get(at);
    Narrow {
        outcome: outcome_of_code(code).unwrap_or(Outcome::Error),
        attempts: u32::try_from(row.get::<_, i64>(at + 1)).unwrap_or(u32::MAX),
        duration: row.get(at + 2),
        file: row
            .get::<_, Option<&[u8]>>(at + 3)
            .map(|file| String::from_utf8_lossy(file).into_owned()),
        line: row
            .get::<_, Option<i64>>(at + 4)
            .and_then(|line| u32::try_from(line).ok()),
    }
}

/// Sends block rows of one run with binary `COPY`.
fn copy_blocks(
    tx: &mut impl GenericClient,
    run_id: i64,
    started: i64,
    rows: &[BlockRow],
) -> Result<(), postgres::Error> {
    if rows.is_empty() {
        return Ok(());
    }
    let writer = tx.copy_in(
        "COPY execution_blocks (run_id, block, started_us, outcomes, entries, details) \
         FROM STDIN BINARY",
    )?;
    let mut writer = BinaryCopyInWriter::new(writer, &BLOCK_TYPES);
    for row in rows {
        writer.write(&[
            &run_id,
            &row.block,
            &started,
            &row.outcomes,
            &row.entries,
            &row.details,
        ])?;
    }
    writer.finish()?;
    Ok(())
}

impl PgStore {
    /// Migration 3's data step, in the migration's transaction: every month partition of
    /// `executions` gets its `execution_blocks` partition, every row of `executions` is
    /// packed into its run's blocks (read in run and test order through a portal, so
    /// memory holds a batch, not the history), and `executions` is dropped.
    fn pack_executions(
        tx: &mut postgres::Transaction<'_>,
        target: &Target,
    ) -> Result<(), HistoryError> {
        let fail = |e: postgres::Error| server_error(target, &e, false);
        let months = tx
            .query(
                "SELECT name, lower_us, upper_us FROM candor_partitions",
                &[],
            )
            .map_err(fail)?;
        for month in &months {
            let old: String = month.get(0);
            let lower: i64 = month.get(1);
            let upper = month
                .get::<_, Option<i64>>(2)
                .map_or_else(|| "MAXVALUE".to_owned(), |u| u.to_string());
            let new = format!(
                "execution_blocks{}",
                old.strip_prefix("executions").unwrap_or(&old)
            );
            tx.batch_execute(&format!(
                "CREATE TABLE {new} PARTITION OF execution_blocks FOR VALUES FROM ({lower}) TO ({upper})"
            ))
            .map_err(fail)?;
            tx.execute(
                "UPDATE candor_partitions SET name = $1 WHERE name = $2",
                &[&new, &old],
            )
            .map_err(fail)?;
        }
        tx.batch_execute("SET LOCAL work_mem = '64MB'")
            .map_err(fail)?;
        let portal = tx
            .bind(
                "SELECT run_id, started_us, test_id, outcome, attempts, duration, file, line, \
                 signature, details FROM executions ORDER BY run_id, test_id",
                &[],
            )
            .map_err(fail)?;
        let mut current: Option<(i64, i64, BlockWriter)> = None;
        loop {
            let rows = tx.query_portal(&portal, FETCH_ROWS).map_err(fail)?;
            if rows.is_empty() {
                break;
            }
            for row in &rows {
                let key: (i64, i64) = (row.get(0), row.get(1));
                if current
                    .as_ref()
                    .is_none_or(|(run, started, _)| (*run, *started) != key)
                {
                    if let Some((run, started, writer)) = current.take() {
                        copy_blocks(tx, run, started, &writer.finish().0).map_err(fail)?;
                    }
                    current = Some((key.0, key.1, BlockWriter::default()));
                }
                if let Some((_, _, writer)) = &mut current {
                    writer.add(
                        row.get(2),
                        narrow_of(row, 3),
                        row.get::<_, Option<&[u8]>>(8),
                        row.get::<_, Option<&[u8]>>(9),
                    );
                }
            }
            if let Some((run, started, writer)) = &mut current {
                copy_blocks(tx, *run, *started, &writer.take_done()).map_err(fail)?;
            }
        }
        if let Some((run, started, writer)) = current.take() {
            copy_blocks(tx, run, started, &writer.finish().0).map_err(fail)?;
        }
        // The portal reads `executions` until it is closed.
        drop(portal);
        tx.batch_execute("DROP TABLE executions").map_err(fail)
    }
}

impl HistoryStore for PgStore {
    fn begin_ingest<'a>(
        &'a mut self,
        run: &NewRun,
    ) -> Result<Box<dyn IngestSession + 'a>, HistoryError> {
        self.ensure_partition(run.started_at)?;
        let PgStore { client, target } = self;
        let mut run = run.clone();
        // Kept at the store's precision, as the trait says.
        run.started_at = timestamp(micros(run.started_at)).unwrap_or(run.started_at);
        Ok(Box::new(ingest::PgIngest::new(
            client.get_mut(),
            target,
            run,
        )))
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
        // Every block row's outcomes once (half a byte per test: a few MB for 10M
        // executions), in no order; the latest of each test is found by comparing starts.
        let mut rows = client
            .query_raw(
                &format!(
                    "SELECT b.block, b.run_id, b.started_us, b.outcomes \
                     FROM execution_blocks b WHERE true{filter}"
                ),
                params,
            )
            .map_err(|e| self.error(&e))?;
        let mut stats: Vec<Tally> = Vec::new();
        while let Some(row) = postgres::fallible_iterator::FallibleIterator::next(&mut rows)
            .map_err(|e| self.error(&e))?
        {
            let block: i64 = row.get(0);
            let key = (row.get::<_, i64>(2), row.get::<_, i64>(1));
            let outcomes: &[u8] = row.get(3);
            let first =
                usize::try_from(block).map_err(|_| self.corrupt(BAD_BLOCK.into()))? * BLOCK_TESTS;
            for slot in 0..(outcomes.len() * 2).min(BLOCK_TESTS) {
                let nibble = outcome_nibble(outcomes, slot);
                if nibble == 0 {
                    continue;
                }
                let outcome = outcome_of_nibble(nibble).map_err(|e| self.corrupt(e.to_string()))?;
                let at = first + slot;
                if at >= stats.len() {
                    stats.resize(at + 1, Tally::default());
                }
                stats[at].count(key, outcome);
            }
        }
        drop(rows);
        let wanted: Vec<i64> = stats
            .iter()
            .enumerate()
            .filter(|(_, tally)| {
                tally.last_seen.is_some() && (!failing_only || tally.latest_is_red())
            })
            .map(|(id, _)| i64::try_from(id).unwrap_or(i64::MAX))
            .collect();
        let names = self.names_of(&mut client, Some(&wanted))?;
        drop(client);
        let mut found = Vec::with_capacity(names.len());
        for (name, id) in names {
            let tally = usize::try_from(id)
                .ok()
                .and_then(|id| stats.get(id))
                .ok_or_else(|| self.corrupt(BAD_BLOCK.into()))?;
            let decode = || -> Result<TestSummary, String> {
                Ok(TestSummary {
                    test_id: text(Some(name))?.unwrap_or_default(),
                    runs: tally.runs,
                    failures: tally.failures,
                    skips: tally.skips,
                    last_failure: tally.last_failure.map(timestamp).transpose()?,
                    last_seen: timestamp(tally.last_seen.unwrap_or_default())?,
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
        let mut client = self.client.borrow_mut();
        let Some(id) = names::id_of(&mut *client, test_id, name_hash(test_id))
            .map_err(|e| self.names_error(e))?
        else {
            return Ok(Vec::new());
        };
        let (block, slot) = block_and_slot(id);
        let byte = i32::try_from(slot / 2).unwrap_or(0);
        let shift = i32::try_from((slot % 2) * 4).unwrap_or(0);
        // The block's rows newest first that hold this test (its half byte is not 0).
        let rows = client
            .query(
                "SELECT b.run_id, b.started_us, b.entries, b.details, r.commit_sha, r.branch, \
                 r.source FROM execution_blocks b JOIN runs r ON r.id = b.run_id \
                 WHERE b.block = $1 AND length(b.outcomes) > $2 \
                   AND (get_byte(b.outcomes, $2) >> $3) & 15 <> 0 \
                 ORDER BY b.started_us DESC, b.run_id DESC LIMIT $4",
                &[&block, &byte, &shift, &limit(limit_to)],
            )
            .map_err(|e| self.error(&e))?;
        drop(client);
        let mut found = Vec::with_capacity(rows.len());
        for row in rows {
            let run = RunOf {
                run_id: row.get(0),
                started_us: row.get(1),
                commit: row.get(4),
                branch: row.get(5),
                source: row.get(6),
            };
            let entries: &[u8] = row.get(2);
            let details: Option<&[u8]> = row.get(3);
            let decode = || -> Result<Option<StoredExecution>, String> {
                let Some((narrow, _)) = Entries::new(entries)
                    .and_then(|entries| entries.find(slot))
                    .map_err(|e| e.to_string())?
                else {
                    return Err(Corrupt::missing().to_string());
                };
                let (signature, details) = match details {
                    Some(blob) => read_details(blob)
                        .map_err(|e| e.to_string())?
                        .into_iter()
                        .find(|(at, _)| *at == slot)
                        .map_or((None, None), |(_, found)| found),
                    None => (None, None),
                };
                stored(test_id.to_owned(), narrow, signature, details, &run).map(Some)
            };
            if let Some(execution) = decode().map_err(|m| self.corrupt(m))? {
                found.push(execution);
            }
        }
        Ok(found)
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
        // The run's entries only: no failure details or names cross the wire.
        let mut total = 0.0;
        for row in self.run_blocks(run_id, false)? {
            let entries: &[u8] = row.get(1);
            let mut entries = Entries::new(entries).map_err(|e| self.corrupt(e.to_string()))?;
            while let Some((_, narrow, _)) = entries
                .next_entry()
                .map_err(|e| self.corrupt(e.to_string()))?
            {
                if narrow.outcome.failed_at_least_once() {
                    total += narrow.duration.unwrap_or(0.0);
                }
            }
        }
        Ok(total)
    }

    fn windows_in(
        &self,
        size: usize,
        runs: Option<&HashSet<i64>>,
        visit: &mut dyn FnMut(TestWindow),
    ) -> Result<(), HistoryError> {
        let mut client = self.client.borrow_mut();
        let (filter, ids) = run_filter(runs, 2);
        // No window is longer than the runs it can come from: an unbounded size does not
        // make a pass hold one test.
        let counted = if let Some(ids) = &ids {
            ids.len()
        } else {
            let row = client
                .query_one("SELECT count(*) FROM runs", &[])
                .map_err(|e| self.error(&e))?;
            usize::try_from(row.get::<_, i64>(0)).unwrap_or(usize::MAX)
        };
        let bound = size.min(counted);
        if bound == 0 {
            return Ok(());
        }
        let names = self.names_of(&mut client, None)?;
        let per_pass = (WINDOW_PASS_ENTRIES / bound).max(1);
        for chunk in names.chunks(per_pass) {
            // Which test of the pass each slot of each block is (index + 1; 0: none).
            let mut slots: HashMap<i64, Box<[u32; BLOCK_TESTS]>> = HashMap::new();
            for (index, (_, id)) in chunk.iter().enumerate() {
                let (block, slot) = block_and_slot(*id);
                slots
                    .entry(block)
                    .or_insert_with(|| Box::new([0; BLOCK_TESTS]))[slot] =
                    u32::try_from(index + 1).unwrap_or(u32::MAX);
            }
            let blocks: Vec<i64> = slots.keys().copied().collect();
            let mut params: Vec<&(dyn ToSql + Sync)> = vec![&blocks];
            if let Some(ids) = &ids {
                params.push(ids);
            }
            // Per test of the pass: its entries as (index into `seen_runs`) << 3 | code.
            let mut windows: Vec<Vec<u32>> = vec![Vec::new(); chunk.len()];
            let mut seen_runs: Vec<(i64, i64)> = Vec::new();
            let mut run_index: HashMap<i64, u32> = HashMap::new();
            let mut rows = client
                .query_raw(
                    &format!(
                        "SELECT b.block, b.run_id, b.started_us, b.outcomes \
                         FROM execution_blocks b WHERE b.block = ANY($1){filter} \
                         ORDER BY b.block, b.started_us DESC, b.run_id DESC"
                    ),
                    params,
                )
                .map_err(|e| self.error(&e))?;
            while let Some(row) = postgres::fallible_iterator::FallibleIterator::next(&mut rows)
                .map_err(|e| self.error(&e))?
            {
                let block: i64 = row.get(0);
                let Some(wanted) = slots.get(&block) else {
                    continue;
                };
                let run_id: i64 = row.get(1);
                let outcomes: &[u8] = row.get(3);
                let mut index = None;
                for slot in 0..(outcomes.len() * 2).min(BLOCK_TESTS) {
                    let test = wanted[slot];
                    let nibble = outcome_nibble(outcomes, slot);
                    // 0: absent; skip (code 3) is not a run.
                    if test == 0 || nibble == 0 || nibble == 4 {
                        continue;
                    }
                    let window = &mut windows[(test - 1) as usize];
                    if window.len() >= bound {
                        continue;
                    }
                    outcome_of_nibble(nibble).map_err(|e| self.corrupt(e.to_string()))?;
                    let at = *index.get_or_insert_with(|| {
                        *run_index.entry(run_id).or_insert_with(|| {
                            seen_runs.push((run_id, row.get(2)));
                            u32::try_from(seen_runs.len() - 1).unwrap_or(u32::MAX)
                        })
                    });
                    window.push((at << 3) | u32::from(nibble - 1));
                }
            }
            drop(rows);
            for ((name, _), window) in chunk.iter().zip(windows) {
                if window.is_empty() {
                    continue;
                }
                let test_id = String::from_utf8(name.clone())
                    .map_err(|_| self.corrupt("a stored test name is not UTF-8".into()))?;
                let mut entries = Vec::with_capacity(window.len());
                for packed in window {
                    let (run_id, started_us) = seen_runs[(packed >> 3) as usize];
                    entries.push(WindowEntry {
                        run_id,
                        started_at: timestamp(started_us).map_err(|m| self.corrupt(m))?,
                        outcome: outcome_of_nibble((packed & 7) as u8 + 1)
                            .map_err(|e| self.corrupt(e.to_string()))?,
                    });
                }
                visit(TestWindow { test_id, entries });
            }
        }
        Ok(())
    }
}

/// Entries a pass of `windows_in` holds (4 bytes each): its memory, whatever the history.
const WINDOW_PASS_ENTRIES: usize = 4 << 20;

const BAD_BLOCK: &str = "a block number out of range";

/// What `tests_in` counts of one test.
#[derive(Debug, Clone, Default)]
struct Tally {
    runs: u64,
    failures: u64,
    skips: u64,
    last_failure: Option<i64>,
    last_seen: Option<i64>,
    /// The latest execution that ran: (start, run id) and whether it was red.
    latest: Option<((i64, i64), bool)>,
}

impl Tally {
    fn count(&mut self, key: (i64, i64), outcome: Outcome) {
        let started = key.0;
        self.last_seen = Some(self.last_seen.map_or(started, |seen| seen.max(started)));
        if outcome == Outcome::Skip {
            self.skips += 1;
            return;
        }
        self.runs += 1;
        if outcome.failed_at_least_once() {
            self.failures += 1;
            self.last_failure = Some(self.last_failure.map_or(started, |at| at.max(started)));
        }
        if self.latest.is_none_or(|(at, _)| at < key) {
            self.latest = Some((key, outcome.is_red()));
        }
    }

    fn latest_is_red(&self) -> bool {
        self.latest.is_some_and(|(_, red)| red)
    }
}

/// The run an execution belongs to, as `StoredExecution` shows it (columns as stored).
struct RunOf {
    run_id: i64,
    started_us: i64,
    commit: Option<Vec<u8>>,
    branch: Option<Vec<u8>>,
    source: String,
}

fn stored(
    name: String,
    narrow: Narrow,
    signature: Option<&[u8]>,
    details: Option<&[u8]>,
    run: &RunOf,
) -> Result<StoredExecution, String> {
    let details = decode_details(details)?;
    let execution = narrow.into_execution(
        name,
        details.failure,
        details.skip_message,
        details.stdout,
        details.stderr,
    );
    Ok(StoredExecution {
        run_id: run.run_id,
        started_at: timestamp(run.started_us)?,
        commit: text(run.commit.clone())?,
        branch: text(run.branch.clone())?,
        source: Source::from_str_opt(&run.source)
            .ok_or_else(|| format!("unknown source `{}`", run.source))?,
        execution,
        signature: signature
            .map(|s| String::from_utf8(s.to_vec()).map_err(|_| "stored text is not UTF-8"))
            .transpose()?,
    })
}

/// The SQL that keeps block rows of the runs in `runs` only (`None`: every run), with the
/// ids as parameter `$index`: one array parameter, whatever the number of runs.
fn run_filter(runs: Option<&HashSet<i64>>, index: usize) -> (String, Option<Vec<i64>>) {
    match runs {
        Some(runs) => (
            format!(" AND b.run_id = ANY(${index})"),
            Some(runs.iter().copied().collect()),
        ),
        None => (String::new(), None),
    }
}

impl PgStore {
    /// Test names and ids, sorted by name as bytes (the order every caller wants,
    /// whatever the database's collation): those of `ids`, or every test (`None`).
    fn names_of(
        &self,
        client: &mut Client,
        ids: Option<&[i64]>,
    ) -> Result<Vec<(Vec<u8>, i64)>, HistoryError> {
        let found = match ids {
            None => names::read_all(client),
            Some(ids) => names::names_of_ids(client, ids),
        }
        .map_err(|e| self.names_error(e))?;
        let mut names: Vec<(Vec<u8>, i64)> = found
            .into_iter()
            .map(|(name, id)| (name.into_bytes(), id))
            .collect();
        names.sort_unstable();
        Ok(names)
    }

    fn names_error(&self, e: names::NamesError) -> HistoryError {
        match e {
            names::NamesError::Server(e) => self.error(&e),
            names::NamesError::Corrupt(e) => self.corrupt(e.to_string()),
        }
    }

    /// The block rows of one run (`block`, `entries`, `details`), found through the run's
    /// start so that only its month's partition is read.
    fn run_blocks(&self, run_id: i64, with_details: bool) -> Result<Vec<Row>, HistoryError> {
        let details = if with_details {
            "b.details"
        } else {
            "NULL::bytea"
        };
        self.client
            .borrow_mut()
            .query(
                &format!(
                    "SELECT b.block, b.entries, {details} FROM runs r JOIN execution_blocks b \
                     ON b.run_id = r.id AND b.started_us = r.started_us WHERE r.id = $1"
                ),
                &[&run_id],
            )
            .map_err(|e| self.error(&e))
    }

    fn query_run(
        &self,
        run_id: i64,
        failed_only: bool,
    ) -> Result<Vec<StoredExecution>, HistoryError> {
        let Some(row) = self
            .client
            .borrow_mut()
            .query_opt(
                "SELECT id, started_us, commit_sha, branch, source FROM runs WHERE id = $1",
                &[&run_id],
            )
            .map_err(|e| self.error(&e))?
        else {
            return Ok(Vec::new());
        };
        let run = RunOf {
            run_id: row.get(0),
            started_us: row.get(1),
            commit: row.get(2),
            branch: row.get(3),
            source: row.get(4),
        };
        let blocks = self.run_blocks(run_id, true)?;
        // Decoded per block, then named: (test id, narrow, signature, details).
        let mut found = Vec::new();
        for row in &blocks {
            let block: i64 = row.get(0);
            let entries: &[u8] = row.get(1);
            let details: Option<&[u8]> = row.get(2);
            let mut by_slot = match details {
                Some(blob) => read_details(blob).map_err(|e| self.corrupt(e.to_string()))?,
                None => Vec::new(),
            }
            .into_iter()
            .peekable();
            let mut entries = Entries::new(entries).map_err(|e| self.corrupt(e.to_string()))?;
            while let Some((slot, narrow, _)) = entries
                .next_entry()
                .map_err(|e| self.corrupt(e.to_string()))?
            {
                while by_slot.next_if(|(at, _)| *at < slot).is_some() {}
                let extra = by_slot
                    .next_if(|(at, _)| *at == slot)
                    .map_or((None, None), |(_, extra)| extra);
                if failed_only && !narrow.outcome.failed_at_least_once() {
                    continue;
                }
                found.push((test_of(block, slot), narrow, extra));
            }
        }
        let ids: Vec<i64> = found.iter().map(|(id, _, _)| *id).collect();
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let names: HashMap<i64, Vec<u8>> = self
            .names_of(&mut self.client.borrow_mut(), Some(&ids))?
            .into_iter()
            .map(|(name, id)| (id, name))
            .collect();
        let mut executions = Vec::with_capacity(found.len());
        for (id, narrow, (signature, details)) in found {
            let name = names
                .get(&id)
                .ok_or_else(|| self.corrupt(Corrupt::unnamed().to_string()))?;
            let name = text(Some(name.clone()))
                .map_err(|m| self.corrupt(m))?
                .unwrap_or_default();
            executions
                .push(stored(name, narrow, signature, details, &run).map_err(|m| self.corrupt(m))?);
        }
        // By name as bytes, as every store sorts test ids.
        executions.sort_by(|a, b| a.execution.test_id.cmp(&b.execution.test_id));
        Ok(executions)
    }
}
