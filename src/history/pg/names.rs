//! The PostgreSQL store's test names (schema 4, deltas since 5): packed per block of
//! test ids in `test_names` and found through the packed hash index `test_name_index`
//! and its delta rows `test_name_delta`, in the SQLite store's encodings
//! (`history::packed`). The reads every question and the ingest share, the writes of new
//! names, and the migration step that packs schema 3's `tests`.

use postgres::GenericClient;

use super::COPY_ROWS;
use crate::history::packed::{
    BLOCK_TESTS, BlockMap, Corrupt, IndexEntry, NamesPacking, block_and_slot, decode_index,
    decode_names, encode_index, encode_names, index_lookup, merged_rows, test_of,
};

/// A failure of a names read: the server's, or packed data this build cannot read.
#[derive(Debug)]
pub(super) enum NamesError {
    Server(postgres::Error),
    Corrupt(Corrupt),
}

impl From<postgres::Error> for NamesError {
    fn from(e: postgres::Error) -> Self {
        NamesError::Server(e)
    }
}

impl From<Corrupt> for NamesError {
    fn from(e: Corrupt) -> Self {
        NamesError::Corrupt(e)
    }
}

/// The names of the blocks `blocks` (each once), in id order per block.
pub(super) fn read_blocks(
    client: &mut impl GenericClient,
    blocks: &[i64],
) -> Result<Vec<(i64, Vec<String>)>, NamesError> {
    if blocks.is_empty() {
        return Ok(Vec::new());
    }
    let rows = client.query(
        "SELECT block, names FROM test_names WHERE block = ANY($1)",
        &[&blocks],
    )?;
    let mut found = Vec::with_capacity(rows.len());
    for row in rows {
        found.push((row.get(0), decode_names(row.get(1))?));
    }
    Ok(found)
}

/// Every test's name and id, unsorted (holes too: empty names no execution is of).
pub(super) fn read_all(client: &mut impl GenericClient) -> Result<Vec<(String, i64)>, NamesError> {
    let rows = client.query("SELECT block, names FROM test_names", &[])?;
    let mut all = Vec::new();
    for row in rows {
        let block: i64 = row.get(0);
        for (slot, name) in decode_names(row.get(1))?.into_iter().enumerate() {
            all.push((name, test_of(block, slot)));
        }
    }
    Ok(all)
}

/// The names of the tests `ids`, with their ids, unsorted.
pub(super) fn names_of_ids(
    client: &mut impl GenericClient,
    ids: &[i64],
) -> Result<Vec<(String, i64)>, NamesError> {
    let mut blocks: Vec<i64> = ids.iter().map(|&id| block_and_slot(id).0).collect();
    blocks.sort_unstable();
    blocks.dedup();
    let read: BlockMap<Vec<String>> = read_blocks(client, &blocks)?.into_iter().collect();
    let mut found = Vec::with_capacity(ids.len());
    for &id in ids {
        let (block, slot) = block_and_slot(id);
        let name = read
            .get(&block)
            .and_then(|names| names.get(slot))
            .ok_or_else(Corrupt::unnamed)?;
        found.push((name.clone(), id));
    }
    Ok(found)
}

/// The id of the test named `name`, if the history holds it: the index row its hash
/// falls in, then the names of the candidates (a hash only narrows).
pub(super) fn id_of(
    client: &mut impl GenericClient,
    name: &str,
    hash: i64,
) -> Result<Option<i64>, NamesError> {
    // One statement, so one snapshot: a compaction (deltas merged into the base and
    // deleted) is seen whole or not at all.
    let rows = client.query(
        "(SELECT entries FROM test_name_index WHERE first_hash <= $1 \
          ORDER BY first_hash DESC LIMIT 1) \
         UNION ALL SELECT entries FROM test_name_delta",
        &[&hash],
    )?;
    let mut candidates: Vec<i64> = Vec::new();
    for row in &rows {
        candidates.extend(index_lookup(row.get(0), hash)?.into_iter().map(i64::from));
    }
    if candidates.is_empty() {
        return Ok(None);
    }
    Ok(names_of_ids(client, &candidates)?
        .into_iter()
        .find(|(known, _)| known == name)
        .map(|(_, id)| id))
}

/// The first hashes of every index row, ascending: which row a hash falls in (the last
/// whose first hash is not above it). 8 bytes a row of a few hundred names.
pub(super) fn index_keys(client: &mut impl GenericClient) -> Result<Vec<i64>, NamesError> {
    Ok(client
        .query(
            "SELECT first_hash FROM test_name_index ORDER BY first_hash",
            &[],
        )?
        .iter()
        .map(|row| row.get(0))
        .collect())
}

/// The key of the index row `hash` falls in, among `keys` (ascending).
pub(super) fn row_of(keys: &[i64], hash: i64) -> Option<i64> {
    let at = keys.partition_point(|&key| key <= hash);
    at.checked_sub(1).map(|at| keys[at])
}

/// The entries of the index rows `keys`.
pub(super) fn read_index_rows(
    client: &mut impl GenericClient,
    keys: &[i64],
) -> Result<Vec<(i64, Vec<IndexEntry>)>, NamesError> {
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let rows = client.query(
        "SELECT first_hash, entries FROM test_name_index WHERE first_hash = ANY($1)",
        &[&keys],
    )?;
    let mut found = Vec::with_capacity(rows.len());
    for row in rows {
        found.push((row.get(0), decode_index(row.get(1))?));
    }
    Ok(found)
}

/// Every delta row of the name index: its first id and its entries (sorted).
pub(super) fn read_deltas(
    client: &mut impl GenericClient,
) -> Result<Vec<(i64, Vec<IndexEntry>)>, NamesError> {
    let rows = client.query(
        "SELECT first_id, entries FROM test_name_delta ORDER BY first_id",
        &[],
    )?;
    let mut found = Vec::with_capacity(rows.len());
    for row in rows {
        found.push((row.get(0), decode_index(row.get(1))?));
    }
    Ok(found)
}

/// Entries in the base rows of the name index (from the rows' sizes: nothing is read).
pub(super) fn base_entries(client: &mut impl GenericClient) -> Result<i64, NamesError> {
    Ok(client
        .query_one(
            "SELECT (coalesce(sum(length(entries)), 0) / 12)::bigint FROM test_name_index",
            &[],
        )?
        .get(0))
}

/// Adds sorted new entries (ids from `first_id` on) to the name index, under the names
/// lock: appended as one delta row, or, when the deltas would then hold more entries
/// than the base (or the base is empty), merged with every delta into the base rows
/// and the deltas deleted. The base's rewrite is paid once the deltas have grown as
/// large as the base: each entry is rewritten a few times in the history's life, not
/// once per job adding names, and a lookup reads at most twice the index.
///
/// `known`: the keys and base rows the caller read under the same lock; `deltas`: the
/// delta rows it read under it (all of them).
pub(super) fn add_to_index(
    client: &mut impl GenericClient,
    first_id: i64,
    new: &[IndexEntry],
    known: Option<(&[i64], &BlockMap<Vec<IndexEntry>>)>,
    deltas: &[(i64, Vec<IndexEntry>)],
) -> Result<(), NamesError> {
    if new.is_empty() {
        return Ok(());
    }
    let in_deltas: usize = deltas.iter().map(|(_, entries)| entries.len()).sum();
    let base = usize::try_from(base_entries(client)?).unwrap_or(usize::MAX);
    if base > 0 && in_deltas + new.len() <= base {
        client.execute(
            "INSERT INTO test_name_delta (first_id, entries) VALUES ($1, $2)",
            &[&first_id, &encode_index(new)],
        )?;
        return Ok(());
    }
    if deltas.is_empty() {
        // No copy: a first ingest's hundreds of thousands of names are merged as they are.
        return merge_into_index(client, new, known);
    }
    let mut all: Vec<IndexEntry> = Vec::with_capacity(in_deltas + new.len());
    for (_, entries) in deltas {
        all.extend_from_slice(entries);
    }
    all.extend_from_slice(new);
    // Equal hashes keep their ids ascending, as the merge expects.
    all.sort_unstable();
    merge_into_index(client, &all, known)?;
    client.execute("DELETE FROM test_name_delta", &[])?;
    Ok(())
}

/// The last block of names and its names: where new ids go on (`None`: no names yet).
pub(super) fn last_block(
    client: &mut impl GenericClient,
) -> Result<Option<(i64, Vec<String>)>, NamesError> {
    let Some(row) = client.query_opt(
        "SELECT block, names FROM test_names ORDER BY block DESC LIMIT 1",
        &[],
    )?
    else {
        return Ok(None);
    };
    Ok(Some((row.get(0), decode_names(row.get(1))?)))
}

/// Writes blocks of names (new, or the last one grown), in one statement.
pub(super) fn write_blocks(
    client: &mut impl GenericClient,
    blocks: &[(i64, Vec<u8>)],
) -> Result<(), postgres::Error> {
    for chunk in blocks.chunks(COPY_ROWS) {
        let keys: Vec<i64> = chunk.iter().map(|(block, _)| *block).collect();
        let names: Vec<&[u8]> = chunk.iter().map(|(_, names)| names.as_slice()).collect();
        client.execute(
            "INSERT INTO test_names (block, names) SELECT * FROM unnest($1::bigint[], $2::bytea[]) \
             ON CONFLICT (block) DO UPDATE SET names = EXCLUDED.names",
            &[&keys, &names],
        )?;
    }
    Ok(())
}

/// Merges sorted new entries into the name index: each row they fall in is read,
/// merged and written back, split when it grows past a row's entries
/// ([`merged_rows`], as the SQLite store does). Under the names lock: nobody else
/// writes the index meanwhile.
///
/// `known`: the index's keys and rows the caller read under the same lock, which need
/// not be read again (an ingest has read the rows its names fall in).
pub(super) fn merge_into_index(
    client: &mut impl GenericClient,
    new: &[IndexEntry],
    known: Option<(&[i64], &BlockMap<Vec<IndexEntry>>)>,
) -> Result<(), NamesError> {
    if new.is_empty() {
        return Ok(());
    }
    let empty = BlockMap::default();
    let (keys, cached) = match known {
        Some((keys, cached)) => (keys.to_vec(), cached),
        None => (index_keys(client)?, &empty),
    };
    let mut rows: Vec<(i64, Vec<u8>)> = Vec::new();
    if keys.is_empty() {
        rows = merged_rows(None, &[], new);
    } else {
        // Every hash is at or above the first key (i64::MIN).
        let mut touched: Vec<i64> = new
            .iter()
            .filter_map(|&(hash, _)| row_of(&keys, hash))
            .collect();
        touched.dedup();
        let missing: Vec<i64> = touched
            .iter()
            .copied()
            .filter(|key| !cached.contains_key(key))
            .collect();
        let read: BlockMap<Vec<IndexEntry>> =
            read_index_rows(client, &missing)?.into_iter().collect();
        for key in touched {
            let Some(entries) = cached.get(&key).or_else(|| read.get(&key)) else {
                return Err(Corrupt::truncated().into());
            };
            let next = keys.get(keys.partition_point(|&k| k <= key)).copied();
            let from = new.partition_point(|&(hash, _)| hash < key);
            let until = new.partition_point(|&(hash, _)| next.is_none_or(|next| hash < next));
            rows.extend(merged_rows(Some(key), entries, &new[from..until]));
        }
    }
    for chunk in rows.chunks(COPY_ROWS) {
        let keys: Vec<i64> = chunk.iter().map(|(key, _)| *key).collect();
        let entries: Vec<&[u8]> = chunk.iter().map(|(_, e)| e.as_slice()).collect();
        client.execute(
            "INSERT INTO test_name_index (first_hash, entries) \
             SELECT * FROM unnest($1::bigint[], $2::bytea[]) \
             ON CONFLICT (first_hash) DO UPDATE SET entries = EXCLUDED.entries",
            &[&keys, &entries],
        )?;
    }
    Ok(())
}

/// Migration 4's data step, in the migration's transaction: the names of schema 3's
/// `tests`, read in id order through a portal, packed into `test_names` with their ids
/// unchanged (a hole, an id schema 3 never handed out, is an empty name no index entry
/// points to: the execution blocks keep their slots, nothing else is rewritten), their
/// hashes into `test_name_index`; then `tests` is dropped.
pub(super) fn pack_names(tx: &mut postgres::Transaction<'_>) -> Result<(), NamesError> {
    let portal = tx.bind("SELECT id, name_hash, name FROM tests ORDER BY id", &[])?;
    let mut entries: Vec<IndexEntry> = Vec::new();
    let mut sealed: Vec<(i64, Vec<u8>)> = Vec::new();
    let mut current: Option<(i64, Vec<String>)> = None;
    loop {
        let rows = tx.query_portal(&portal, super::FETCH_ROWS)?;
        if rows.is_empty() {
            break;
        }
        for row in &rows {
            let id: i64 = row.get(0);
            let hash: i64 = row.get(1);
            let name = String::from_utf8_lossy(row.get::<_, &[u8]>(2)).into_owned();
            let id32 = u32::try_from(id).map_err(|_| Corrupt::unnamed())?;
            let (block, slot) = block_and_slot(id);
            if current.as_ref().is_none_or(|(held, _)| *held != block) {
                if let Some((held, names)) = current.take() {
                    sealed.push((held, encode_names(&names, NamesPacking::Lz4)));
                }
                current = Some((block, Vec::with_capacity(BLOCK_TESTS)));
            }
            if let Some((_, names)) = &mut current {
                names.resize(slot, String::new());
                names.push(name);
            }
            entries.push((hash, id32));
        }
        if sealed.len() >= COPY_ROWS / 8 {
            write_blocks(tx, &std::mem::take(&mut sealed))?;
        }
    }
    drop(portal);
    if let Some((held, names)) = current.take() {
        sealed.push((held, encode_names(&names, NamesPacking::Lz4)));
    }
    write_blocks(tx, &sealed)?;
    entries.sort_unstable();
    merge_into_index(tx, &entries, None)?;
    tx.batch_execute("DROP TABLE tests")?;
    Ok(())
}
