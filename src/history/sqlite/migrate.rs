//! The numbered migrations of the SQLite history, including the conversion of a
//! schema-1 history (a row per execution) into blocks.

use std::collections::HashMap;

use rusqlite::types::Type;
use rusqlite::{Transaction, params};

use super::{Tuning, corrupt, merge_into_index};
use crate::history::packed::{
    BLOCK_TESTS, BlockBuilder, Corrupt, Details, IndexEntry, NamesPacking, Narrow, block_and_slot,
    encode_names, name_hash, outcome_of, put_details, seal_details,
};
use crate::results::Failure;

/// One migration, run inside the transaction that also sets the new version.
pub(super) type Migration = fn(&Transaction<'_>) -> rusqlite::Result<()>;

/// Entry `n` (0-based) brings `PRAGMA user_version` from `n` to `n + 1`. Append only;
/// never edit one that has shipped.
pub(super) const MIGRATIONS: &[Migration] = &[init, pack_executions, ci_run, front_coded_names];

fn init(transaction: &Transaction<'_>) -> rusqlite::Result<()> {
    transaction.execute_batch(include_str!("../migrations/0001_init.sql"))
}

/// 0003: the CI build a run came from (repository, build id, attempt).
fn ci_run(transaction: &Transaction<'_>) -> rusqlite::Result<()> {
    transaction.execute_batch(include_str!("../migrations/0003_ci_run.sql"))
}

/// 0004: blocks of names may be stored front-coded without LZ4 (the SQL file says why
/// nothing changes but the version).
fn front_coded_names(transaction: &Transaction<'_>) -> rusqlite::Result<()> {
    transaction.execute_batch(include_str!("../migrations/0004_front_coded_names.sql"))
}

/// 0002: tests are renumbered from 0 in id order and their names packed; each run's
/// executions become blocks. One pass over each old table in key order, one block in
/// memory at a time, plus the id map and the name index entries (a few words per test).
fn pack_executions(transaction: &Transaction<'_>) -> rusqlite::Result<()> {
    transaction.execute_batch(
        "ALTER TABLE tests RENAME TO tests_1;
         ALTER TABLE executions RENAME TO executions_1;
         ALTER TABLE execution_details RENAME TO execution_details_1;",
    )?;
    transaction.execute_batch(include_str!("../migrations/0002_packed_executions.sql"))?;
    let ids = pack_names(transaction)?;
    let new_id = |old: i64| {
        ids.get(&old)
            .copied()
            .ok_or_else(|| corrupt(Corrupt::unnamed()))
    };
    let mut blocks = BlockWriter::new(transaction)?;
    let mut read = transaction.prepare(
        "SELECT run_id, test, run_started_at, outcome, duration, attempts, file, line
         FROM executions_1 ORDER BY run_id, test",
    )?;
    // Read beside the executions, in the same order: a merge, not a lookup per row.
    let mut read_details = transaction.prepare(
        "SELECT run_id, test, signature, exception, message, failure_text, frames,
             failing_frame, skip_message, stdout, stderr
         FROM execution_details_1 ORDER BY run_id, test",
    )?;
    let mut details_rows = read_details.query([])?;
    let mut next_details = old_details(details_rows.next()?)?;
    let mut rows = read.query([])?;
    while let Some(row) = rows.next()? {
        let run_id: i64 = row.get(0)?;
        let old_test: i64 = row.get(1)?;
        let (block, slot) = block_and_slot(new_id(old_test)?);
        let code: i64 = row.get(3)?;
        let outcome = u8::try_from(code)
            .ok()
            .and_then(outcome_of)
            .ok_or_else(|| corrupt(Corrupt::unknown_outcome()))?;
        let narrow = Narrow {
            outcome,
            duration: row.get(4)?,
            attempts: row.get(5)?,
            file: row.get(6)?,
            line: row.get(7)?,
        };
        // Details without an execution were never shown: they are dropped.
        while next_details
            .as_ref()
            .is_some_and(|(key, _)| *key < (run_id, old_test))
        {
            next_details = old_details(details_rows.next()?)?;
        }
        let details = match &next_details {
            Some((key, _)) if *key == (run_id, old_test) => {
                let taken = next_details.take().map(|(_, details)| details);
                next_details = old_details(details_rows.next()?)?;
                taken
            }
            _ => None,
        };
        blocks.add((run_id, block, row.get(2)?), slot, narrow, details)?;
    }
    blocks.finish()?;
    drop(rows);
    drop(details_rows);
    drop(read);
    drop(read_details);
    transaction.execute_batch(
        "DROP TABLE execution_details_1;
         DROP TABLE executions_1;
         DROP TABLE tests_1;",
    )
}

/// Writes the names of `tests_1` in blocks, numbered from 0 in the old ids' order, and
/// the name index; returns the old id → new id map.
fn pack_names(transaction: &Transaction<'_>) -> rusqlite::Result<HashMap<i64, i64>> {
    let mut ids = HashMap::new();
    let mut index: Vec<IndexEntry> = Vec::new();
    let mut block: Vec<String> = Vec::with_capacity(BLOCK_TESTS);
    let mut write = transaction.prepare("INSERT INTO test_names (block, names) VALUES (?1, ?2)")?;
    let mut read = transaction.prepare("SELECT id, test_id FROM tests_1 ORDER BY id")?;
    let mut rows = read.query([])?;
    let mut next: i64 = 0;
    while let Some(row) = rows.next()? {
        let name: String = row.get(1)?;
        ids.insert(row.get(0)?, next);
        let id = u32::try_from(next).map_err(|_| corrupt(Corrupt::unnamed()))?;
        index.push((name_hash(&name), id));
        block.push(name);
        next += 1;
        if block.len() == BLOCK_TESTS {
            write.execute(params![
                next / BLOCK_TESTS as i64 - 1,
                encode_names(&block, NamesPacking::Lz4)
            ])?;
            block.clear();
        }
    }
    if !block.is_empty() {
        write.execute(params![
            next / BLOCK_TESTS as i64,
            encode_names(&block, NamesPacking::Lz4)
        ])?;
    }
    index.sort_unstable();
    merge_into_index(transaction, &index)?;
    Ok(ids)
}

/// A schema-1 details row as [`Details`], with its (run, old test id).
fn old_details(row: Option<&rusqlite::Row<'_>>) -> rusqlite::Result<Option<((i64, i64), Details)>> {
    let Some(row) = row else {
        return Ok(None);
    };
    let json = |at: usize| -> rusqlite::Result<Option<serde_json::Value>> {
        row.get_ref(at)?
            .as_str_or_null()?
            .map(|text| {
                serde_json::from_str(text).map_err(|e| {
                    rusqlite::Error::FromSqlConversionFailure(at, Type::Text, Box::new(e))
                })
            })
            .transpose()
    };
    let message: Option<String> = row.get(4)?;
    let failure = match message {
        Some(message) => Some(Box::new(Failure {
            exception: row.get(3)?,
            message,
            text: row.get::<_, Option<String>>(5)?.unwrap_or_default(),
            frames: match json(6)? {
                Some(value) => typed(6, value)?,
                None => Vec::new(),
            },
            failing_frame: json(7)?.map(|value| typed(7, value)).transpose()?,
        })),
        None => None,
    };
    let details = Details {
        signature: row.get(2)?,
        failure,
        skip_message: row.get(8)?,
        stdout: row.get(9)?,
        stderr: row.get(10)?,
    };
    Ok(Some(((row.get(0)?, row.get(1)?), details)))
}

fn typed<T: serde::de::DeserializeOwned>(
    at: usize,
    value: serde_json::Value,
) -> rusqlite::Result<T> {
    serde_json::from_value(value)
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(at, Type::Text, Box::new(e)))
}

/// Gathers one (run, block) at a time, in key order, and writes its entries, outcomes and
/// parts of details.
struct BlockWriter<'t> {
    transaction: &'t Transaction<'t>,
    outcomes: rusqlite::Statement<'t>,
    entries: rusqlite::Statement<'t>,
    details: rusqlite::Statement<'t>,
    /// (run, block, run start) of the block being gathered.
    current: Option<(i64, i64, i64)>,
    builder: BlockBuilder,
    /// Details not yet written, and the slots they are of.
    part: Vec<u8>,
    part_slots: Vec<usize>,
}

impl<'t> BlockWriter<'t> {
    fn new(transaction: &'t Transaction<'t>) -> rusqlite::Result<Self> {
        Ok(BlockWriter {
            transaction,
            outcomes: transaction.prepare(
                "INSERT INTO outcome_blocks (block, run_started_at, run_id, outcomes)
                 VALUES (?1, ?2, ?3, ?4)",
            )?,
            entries: transaction.prepare(
                "INSERT INTO execution_blocks (run_id, block, entries) VALUES (?1, ?2, ?3)",
            )?,
            details: transaction
                .prepare("INSERT INTO execution_details (run_id, details) VALUES (?1, ?2)")?,
            current: None,
            builder: BlockBuilder::default(),
            part: Vec::new(),
            part_slots: Vec::new(),
        })
    }

    fn add(
        &mut self,
        key: (i64, i64, i64),
        slot: usize,
        narrow: Narrow,
        details: Option<Details>,
    ) -> rusqlite::Result<()> {
        if self.current != Some(key) {
            self.finish()?;
            self.current = Some(key);
        }
        self.builder.set(slot, narrow);
        if let Some(details) = details {
            put_details(&mut self.part, slot, &details);
            self.part_slots.push(slot);
            if self.part.len() >= Tuning::default().details_part_bytes {
                self.write_part()?;
            }
        }
        Ok(())
    }

    fn write_part(&mut self) -> rusqlite::Result<()> {
        if let Some((run_id, _, _)) = self.current
            && !self.part.is_empty()
        {
            self.details
                .execute(params![run_id, seal_details(&self.part)])?;
            let row = self.transaction.last_insert_rowid();
            for &slot in &self.part_slots {
                self.builder.set_details(slot, Some(row));
            }
            self.part.clear();
            self.part_slots.clear();
        }
        Ok(())
    }

    fn finish(&mut self) -> rusqlite::Result<()> {
        self.write_part()?;
        if let Some((run_id, block, started_at)) = self.current.take() {
            self.outcomes
                .execute(params![block, started_at, run_id, self.builder.outcomes()])?;
            self.entries
                .execute(params![run_id, block, self.builder.entries()])?;
        }
        self.builder = BlockBuilder::default();
        Ok(())
    }
}
