//! The packed forms the SQLite store keeps executions and test names in: test ids grouped
//! in blocks, one run's executions of one block as one blob, their outcomes apart as half
//! a byte each, the 64-bit hash a test name is found by, and the filter that tells an
//! ingest which names are new. Pure: no SQL, no I/O. docs/storage-layout.md says why.

use crate::results::{Execution, Failure, Frame, Outcome};

/// Test ids per block. A run's executions of the tests `block * BLOCK_TESTS ..
/// (block + 1) * BLOCK_TESTS` are one row of `execution_blocks` and one of
/// `outcome_blocks`. Test ids are handed out densely in first-seen order, so a run's tests
/// fill few blocks and fill them well. Part of the schema: changing it needs a migration.
pub const BLOCK_TESTS: usize = 256;

/// The block a test id falls in, and its slot there.
pub fn block_and_slot(test: i64) -> (i64, usize) {
    let size = BLOCK_TESTS as i64;
    (test.div_euclid(size), test.rem_euclid(size) as usize)
}

/// The test id of `slot` in `block`.
pub fn test_of(block: i64, slot: usize) -> i64 {
    block * BLOCK_TESTS as i64 + slot as i64
}

/// The stored code of an outcome: its index in [`Outcome::ALL`], spelled out so that the
/// stored data does not change if that list is reordered.
pub fn outcome_code(outcome: Outcome) -> u8 {
    match outcome {
        Outcome::Pass => 0,
        Outcome::Fail => 1,
        Outcome::Error => 2,
        Outcome::Skip => 3,
        Outcome::FlakyPass => 4,
    }
}

/// The outcome of a stored code.
pub fn outcome_of(code: u8) -> Option<Outcome> {
    match code {
        0 => Some(Outcome::Pass),
        1 => Some(Outcome::Fail),
        2 => Some(Outcome::Error),
        3 => Some(Outcome::Skip),
        4 => Some(Outcome::FlakyPass),
        _ => None,
    }
}

/// Packed data this build cannot read: a damaged database, or one written by a candor
/// that packs differently under the same schema version (which a release must not do).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unreadable packed executions: {0}")]
pub struct Corrupt(&'static str);

impl Corrupt {
    /// An outcome row names an execution that its block's entries do not hold.
    pub fn missing() -> Corrupt {
        Corrupt("an outcome row names an execution its block does not hold")
    }

    /// A test id with no name.
    pub fn unnamed() -> Corrupt {
        Corrupt("a test id with no name")
    }

    /// An outcome code no build of candor writes.
    pub fn unknown_outcome() -> Corrupt {
        Corrupt("unknown outcome code")
    }
}

/// What a block holds of one execution: everything but the texts that only some
/// executions have (those stay one row each in `execution_details`).
#[derive(Debug, Clone, PartialEq)]
pub struct Narrow {
    /// The outcome after the run's own retries.
    pub outcome: Outcome,
    /// Seconds.
    pub duration: Option<f64>,
    /// Attempts inside the run.
    pub attempts: u32,
    /// Source file as the runner reported it.
    pub file: Option<String>,
    /// Source line as the runner reported it.
    pub line: Option<u32>,
}

/// One slot of a [`BlockBuilder`]; `file` is 0 for none, else an index into its file
/// table plus one; `details` is the `execution_details` row that holds this execution's
/// details, if it has any.
#[derive(Debug, Clone, Copy)]
struct Slot {
    code: u8,
    attempts: u32,
    line: Option<u32>,
    duration: Option<f64>,
    file: u32,
    details: Option<i64>,
}

/// First byte of every entries blob; a new packing gets a new one.
const ENTRIES_FORMAT: u8 = 1;
const BITMAP_BYTES: usize = BLOCK_TESTS / 8;
const HAS_DURATION: u8 = 0x08;
const HAS_FILE: u8 = 0x10;
const HAS_LINE: u8 = 0x20;
const HAS_ATTEMPTS: u8 = 0x40;
const HAS_DETAILS: u8 = 0x80;
const CODE_MASK: u8 = 0x07;

/// One run's executions of one block while they are gathered, and the two blobs they are
/// stored as.
///
/// The entries blob (`execution_blocks.entries`):
///
/// ```text
/// format byte (1)
/// presence bitmap: BLOCK_TESTS bits, bit s of byte s / 8 set when slot s holds a test
/// file table: varint count, then each file as varint length + UTF-8 bytes
/// per present slot, ascending:
///   flags: outcome code (bits 0-2), duration 0x08, file 0x10, line 0x20, attempts ≠ 1 0x40,
///          details 0x80
///   [varint attempts] [duration] [varint file index] [varint line]
///   [varint id of the `execution_details` row holding this execution's details]
/// duration: a varint whose two low bits say what it is: 0 — the rest is milliseconds,
///   1 — microseconds, 2 — an f64 follows (8 bytes little-endian); runners print
///   durations with a few decimals, which come back exactly from a count of either unit
/// ```
///
/// Varints are unsigned LEB128. The outcomes blob (`outcome_blocks.outcomes`) is half a
/// byte per slot, slot s in byte s / 2 (low half for even s): 0 when absent, else the
/// outcome code plus one; it ends at the last present slot.
#[derive(Debug, Clone)]
pub struct BlockBuilder {
    slots: Vec<Option<Slot>>,
    files: Vec<String>,
    present: usize,
}

impl Default for BlockBuilder {
    fn default() -> Self {
        BlockBuilder {
            slots: vec![None; BLOCK_TESTS],
            files: Vec::new(),
            present: 0,
        }
    }
}

impl BlockBuilder {
    /// Slots that hold an execution.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.present
    }

    /// No slot holds an execution.
    pub fn is_empty(&self) -> bool {
        self.present == 0
    }

    /// Every slot holds an execution: nothing more can arrive but retries.
    pub fn is_full(&self) -> bool {
        self.present == BLOCK_TESTS
    }

    /// Puts `narrow` in `slot`, replacing what was there.
    pub fn set(&mut self, slot: usize, narrow: Narrow) {
        let file = match narrow.file {
            Some(file) => self.intern(file),
            None => 0,
        };
        let entry = Slot {
            code: outcome_code(narrow.outcome),
            attempts: narrow.attempts,
            line: narrow.line,
            duration: stored_duration(narrow.duration),
            file,
            details: None,
        };
        if let Some(place) = self.slots.get_mut(slot) {
            if place.is_none() {
                self.present += 1;
            }
            *place = Some(entry);
        }
    }

    /// Records that the details of the execution in `slot` are in `execution_details`
    /// row `row` (`None`: it has none, or they are not written yet).
    pub fn set_details(&mut self, slot: usize, row: Option<i64>) {
        if let Some(Some(entry)) = self.slots.get_mut(slot) {
            entry.details = row;
        }
    }

    /// The `execution_details` row holding the details of the execution in `slot`.
    pub fn details_row(&self, slot: usize) -> Option<i64> {
        self.slots.get(slot).copied().flatten()?.details
    }

    /// What `slot` holds.
    pub fn get(&self, slot: usize) -> Option<Narrow> {
        let entry = (*self.slots.get(slot)?)?;
        Some(Narrow {
            outcome: outcome_of(entry.code)?,
            duration: entry.duration,
            attempts: entry.attempts,
            file: self.file(entry.file).map(str::to_owned),
            line: entry.line,
        })
    }

    fn file(&self, index: u32) -> Option<&str> {
        let index = usize::try_from(index).ok()?.checked_sub(1)?;
        self.files.get(index).map(String::as_str)
    }

    /// A block's tests mostly share a handful of files, so they are stored once; the
    /// latest one is the likeliest match.
    fn intern(&mut self, file: String) -> u32 {
        if let Some(at) = self.files.iter().rposition(|known| *known == file) {
            return at as u32 + 1;
        }
        self.files.push(file);
        self.files.len() as u32
    }

    /// The entries blob.
    pub fn entries(&self) -> Vec<u8> {
        let mut blob = Vec::with_capacity(64 + self.present * 12);
        blob.push(ENTRIES_FORMAT);
        let mut bitmap = [0u8; BITMAP_BYTES];
        for (slot, entry) in self.slots.iter().enumerate() {
            if entry.is_some() {
                bitmap[slot / 8] |= 1 << (slot % 8);
            }
        }
        blob.extend_from_slice(&bitmap);
        put_varint(&mut blob, self.files.len() as u64);
        for file in &self.files {
            put_varint(&mut blob, file.len() as u64);
            blob.extend_from_slice(file.as_bytes());
        }
        for entry in self.slots.iter().flatten() {
            let mut flags = entry.code;
            flags |= if entry.duration.is_some() {
                HAS_DURATION
            } else {
                0
            };
            flags |= if entry.file != 0 { HAS_FILE } else { 0 };
            flags |= if entry.line.is_some() { HAS_LINE } else { 0 };
            flags |= if entry.attempts == 1 { 0 } else { HAS_ATTEMPTS };
            flags |= if entry.details.is_some() {
                HAS_DETAILS
            } else {
                0
            };
            blob.push(flags);
            if entry.attempts != 1 {
                put_varint(&mut blob, u64::from(entry.attempts));
            }
            if let Some(duration) = entry.duration {
                put_duration(&mut blob, duration);
            }
            if entry.file != 0 {
                put_varint(&mut blob, u64::from(entry.file - 1));
            }
            if let Some(line) = entry.line {
                put_varint(&mut blob, u64::from(line));
            }
            if let Some(row) = entry.details {
                put_varint(&mut blob, row as u64);
            }
        }
        blob
    }

    /// The outcomes blob.
    pub fn outcomes(&self) -> Vec<u8> {
        let last = self.slots.iter().rposition(Option::is_some).unwrap_or(0);
        let mut blob = vec![0u8; last / 2 + 1];
        for (slot, entry) in self.slots.iter().enumerate() {
            if let Some(entry) = entry {
                blob[slot / 2] |= (entry.code + 1) << ((slot % 2) * 4);
            }
        }
        blob
    }

    /// A builder holding what an entries blob holds, to add to it (a retry, or more of
    /// the run's tests of a block already written).
    pub fn decode(blob: &[u8]) -> Result<BlockBuilder, Corrupt> {
        let mut entries = Entries::new(blob)?;
        let mut builder = BlockBuilder {
            files: entries
                .files
                .iter()
                .map(|file| (*file).to_owned())
                .collect(),
            ..BlockBuilder::default()
        };
        while let Some((slot, raw)) = entries.next_raw()? {
            builder.present += 1;
            builder.slots[slot] = Some(raw);
        }
        Ok(builder)
    }
}

/// Durations as counts of milliseconds or microseconds when that gives the same f64
/// back (it does for what runners print: a few decimals), else the f64 itself.
fn put_duration(out: &mut Vec<u8>, seconds: f64) {
    for (scale, tag) in [(1e3, 0), (1e6, 1)] {
        let count = (seconds * scale).round();
        if (0.0..4.0e15).contains(&count) && (count / scale).to_bits() == seconds.to_bits() {
            put_varint(out, ((count as u64) << 2) | tag);
            return;
        }
    }
    put_varint(out, 2);
    out.extend_from_slice(&seconds.to_le_bytes());
}

fn take_duration(input: &mut &[u8]) -> Result<f64, Corrupt> {
    let value = take_varint(input)?;
    match value & 3 {
        0 => Ok((value >> 2) as f64 / 1e3),
        1 => Ok((value >> 2) as f64 / 1e6),
        2 => {
            if input.len() < 8 {
                return Err(Corrupt("duration past the end"));
            }
            let (bytes, rest) = input.split_at(8);
            let mut raw = [0u8; 8];
            raw.copy_from_slice(bytes);
            *input = rest;
            Ok(f64::from_le_bytes(raw))
        }
        _ => Err(Corrupt("unknown duration form")),
    }
}

/// SQLite kept durations in a REAL column, which turns NaN into NULL and stores -0.0 as
/// the integer 0; the blocks keep what that column gave back.
fn stored_duration(duration: Option<f64>) -> Option<f64> {
    duration
        .filter(|seconds| !seconds.is_nan())
        .map(|seconds| if seconds == 0.0 { 0.0 } else { seconds })
}

/// Reads the entries blob of a block, slot by slot.
pub struct Entries<'a> {
    bitmap: &'a [u8],
    files: Vec<&'a str>,
    rest: &'a [u8],
    next_slot: usize,
}

impl<'a> Entries<'a> {
    /// Starts reading `blob`.
    pub fn new(blob: &'a [u8]) -> Result<Entries<'a>, Corrupt> {
        let (&format, rest) = blob.split_first().ok_or(Corrupt("empty entries"))?;
        if format != ENTRIES_FORMAT {
            return Err(Corrupt("unknown entries format"));
        }
        if rest.len() < BITMAP_BYTES {
            return Err(Corrupt("entries shorter than their bitmap"));
        }
        let (bitmap, mut rest) = rest.split_at(BITMAP_BYTES);
        let count = take_varint(&mut rest)?;
        let mut files = Vec::new();
        for _ in 0..count {
            let length = usize::try_from(take_varint(&mut rest)?)
                .map_err(|_| Corrupt("file name too long"))?;
            if rest.len() < length {
                return Err(Corrupt("file name past the end"));
            }
            let (text, after) = rest.split_at(length);
            files.push(std::str::from_utf8(text).map_err(|_| Corrupt("file name not UTF-8"))?);
            rest = after;
        }
        Ok(Entries {
            bitmap,
            files,
            rest,
            next_slot: 0,
        })
    }

    fn next_present(&mut self) -> Option<usize> {
        while self.next_slot < BLOCK_TESTS {
            let slot = self.next_slot;
            self.next_slot += 1;
            if self.bitmap[slot / 8] & (1 << (slot % 8)) != 0 {
                return Some(slot);
            }
        }
        None
    }

    fn next_raw(&mut self) -> Result<Option<(usize, Slot)>, Corrupt> {
        let Some(slot) = self.next_present() else {
            return Ok(None);
        };
        let (&flags, rest) = self
            .rest
            .split_first()
            .ok_or(Corrupt("entry past the end"))?;
        self.rest = rest;
        let code = flags & CODE_MASK;
        outcome_of(code).ok_or(Corrupt("unknown outcome code"))?;
        let attempts = if flags & HAS_ATTEMPTS == 0 {
            1
        } else {
            u32::try_from(take_varint(&mut self.rest)?).map_err(|_| Corrupt("attempts"))?
        };
        let duration = if flags & HAS_DURATION == 0 {
            None
        } else {
            Some(take_duration(&mut self.rest)?)
        };
        let file = if flags & HAS_FILE == 0 {
            0
        } else {
            let index = take_varint(&mut self.rest)?;
            if index >= self.files.len() as u64 {
                return Err(Corrupt("file index out of range"));
            }
            index as u32 + 1
        };
        let line = if flags & HAS_LINE == 0 {
            None
        } else {
            Some(u32::try_from(take_varint(&mut self.rest)?).map_err(|_| Corrupt("line"))?)
        };
        let details = if flags & HAS_DETAILS == 0 {
            None
        } else {
            Some(i64::try_from(take_varint(&mut self.rest)?).map_err(|_| Corrupt("details row"))?)
        };
        Ok(Some((
            slot,
            Slot {
                code,
                attempts,
                line,
                duration,
                file,
                details,
            },
        )))
    }

    fn narrow(&self, raw: Slot) -> Result<Narrow, Corrupt> {
        let file = usize::try_from(raw.file)
            .ok()
            .and_then(|index| index.checked_sub(1))
            .and_then(|index| self.files.get(index))
            .map(|file| (*file).to_owned());
        Ok(Narrow {
            outcome: outcome_of(raw.code).ok_or(Corrupt("unknown outcome code"))?,
            duration: raw.duration,
            attempts: raw.attempts,
            file,
            line: raw.line,
        })
    }

    /// The next present slot, what it holds, and the `execution_details` row holding its
    /// details.
    pub fn next_entry(&mut self) -> Result<Option<(usize, Narrow, Option<i64>)>, Corrupt> {
        match self.next_raw()? {
            Some((slot, raw)) => Ok(Some((slot, self.narrow(raw)?, raw.details))),
            None => Ok(None),
        }
    }

    /// What `slot` holds and the `execution_details` row holding its details, reading
    /// past the slots before it.
    pub fn find(mut self, slot: usize) -> Result<Option<(Narrow, Option<i64>)>, Corrupt> {
        while let Some((at, raw)) = self.next_raw()? {
            if at == slot {
                return Ok(Some((self.narrow(raw)?, raw.details)));
            }
            if at > slot {
                break;
            }
        }
        Ok(None)
    }
}

/// What only some executions have: kept apart from the blocks' entries, in parts of a
/// block's details (`execution_details.details`), because it is most of the bytes and
/// the questions over every test never read it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Details {
    /// The failure's signature, as worked out at ingest.
    pub signature: Option<String>,
    /// The failure.
    pub failure: Option<Failure>,
    /// Why the test was skipped.
    pub skip_message: Option<String>,
    /// Captured standard output.
    pub stdout: Option<String>,
    /// Captured standard error.
    pub stderr: Option<String>,
}

impl Details {
    /// Takes an execution's details out of it, with its signature; `None` when it has
    /// none (then nothing is stored for it, as the row per execution stored nothing).
    pub fn take(execution: &mut Execution, signature: Option<String>) -> Option<Details> {
        if execution.failure.is_none()
            && execution.skip_message.is_none()
            && execution.stdout.is_none()
            && execution.stderr.is_none()
        {
            return None;
        }
        Some(Details {
            signature,
            failure: execution.failure.take(),
            skip_message: execution.skip_message.take(),
            stdout: execution.stdout.take(),
            stderr: execution.stderr.take(),
        })
    }
}

const DETAILS_SIGNATURE: u8 = 0x01;
const DETAILS_FAILURE: u8 = 0x02;
const DETAILS_SKIP: u8 = 0x04;
const DETAILS_STDOUT: u8 = 0x08;
const DETAILS_STDERR: u8 = 0x10;
const FAILURE_EXCEPTION: u8 = 0x01;
const FAILURE_FAILING_FRAME: u8 = 0x02;
const FRAME_LINE: u8 = 0x01;
const FRAME_FUNCTION: u8 = 0x02;

/// Appends the details of the execution in `slot` to a part of a block's details:
///
/// ```text
/// varint slot, flags: signature 0x01, failure 0x02, skip message 0x04, stdout 0x08,
/// stderr 0x10, then each present one in that order. A text is a varint length and
/// UTF-8 bytes. A failure: flags (exception 0x01, failing frame 0x02), [exception],
/// message, text, varint frame count, the frames, [failing frame]. A frame: file, flags
/// (line 0x01, function 0x02), [varint line], [function].
/// ```
///
/// A slot may appear more than once in a part (a retry's merged details after the first
/// attempt's); the last one counts.
pub fn put_details(part: &mut Vec<u8>, slot: usize, details: &Details) {
    put_varint(part, slot as u64);
    let mut flags = 0;
    flags |= if details.signature.is_some() {
        DETAILS_SIGNATURE
    } else {
        0
    };
    flags |= if details.failure.is_some() {
        DETAILS_FAILURE
    } else {
        0
    };
    flags |= if details.skip_message.is_some() {
        DETAILS_SKIP
    } else {
        0
    };
    flags |= if details.stdout.is_some() {
        DETAILS_STDOUT
    } else {
        0
    };
    flags |= if details.stderr.is_some() {
        DETAILS_STDERR
    } else {
        0
    };
    part.push(flags);
    if let Some(signature) = &details.signature {
        put_text(part, signature);
    }
    if let Some(failure) = &details.failure {
        let mut flags = 0;
        flags |= if failure.exception.is_some() {
            FAILURE_EXCEPTION
        } else {
            0
        };
        flags |= if failure.failing_frame.is_some() {
            FAILURE_FAILING_FRAME
        } else {
            0
        };
        part.push(flags);
        if let Some(exception) = &failure.exception {
            put_text(part, exception);
        }
        put_text(part, &failure.message);
        put_text(part, &failure.text);
        put_varint(part, failure.frames.len() as u64);
        for frame in &failure.frames {
            put_frame(part, frame);
        }
        if let Some(frame) = &failure.failing_frame {
            put_frame(part, frame);
        }
    }
    for text in [&details.skip_message, &details.stdout, &details.stderr]
        .into_iter()
        .flatten()
    {
        put_text(part, text);
    }
}

fn put_text(out: &mut Vec<u8>, text: &str) {
    put_varint(out, text.len() as u64);
    out.extend_from_slice(text.as_bytes());
}

fn put_frame(out: &mut Vec<u8>, frame: &Frame) {
    put_text(out, &frame.file);
    let mut flags = 0;
    flags |= if frame.line.is_some() { FRAME_LINE } else { 0 };
    flags |= if frame.function.is_some() {
        FRAME_FUNCTION
    } else {
        0
    };
    out.push(flags);
    if let Some(line) = frame.line {
        put_varint(out, u64::from(line));
    }
    if let Some(function) = &frame.function {
        put_text(out, function);
    }
}

/// First byte of a stored part of details; a new packing gets a new one.
const DETAILS_FORMAT: u8 = 1;

/// A part of details as stored: a format byte, then the part compressed as one LZ4 block
/// with its length before it (`lz4_flex::compress_prepend_size`). Tracebacks and captured
/// output shrink about four times, and every byte saved is a byte the commit does not
/// write to the WAL, checkpoint into the database and delete with the WAL: most of an
/// ingest's time after the file is read.
pub fn seal_details(part: &[u8]) -> Vec<u8> {
    let compressed = lz4_flex::compress_prepend_size(part);
    let mut sealed = Vec::with_capacity(compressed.len() + 1);
    sealed.push(DETAILS_FORMAT);
    sealed.extend_from_slice(&compressed);
    sealed
}

/// The part [`seal_details`] stored.
pub fn open_details(sealed: &[u8]) -> Result<Vec<u8>, Corrupt> {
    match sealed.split_first() {
        Some((&DETAILS_FORMAT, compressed)) => {
            lz4_flex::decompress_size_prepended(compressed).map_err(|_| Corrupt("details not LZ4"))
        }
        _ => Err(Corrupt("unknown details format")),
    }
}

/// The details of the execution in `slot` from a part of a block's details, if the part
/// holds them (the last record for the slot).
pub fn find_details(part: &[u8], slot: usize) -> Result<Option<Details>, Corrupt> {
    let mut rest = part;
    let mut found = None;
    while !rest.is_empty() {
        let at = take_varint(&mut rest)?;
        let details = take_details(&mut rest)?;
        if at == slot as u64 {
            found = Some(details);
        }
    }
    Ok(found)
}

fn take_byte(input: &mut &[u8]) -> Result<u8, Corrupt> {
    let (&byte, rest) = input.split_first().ok_or(Corrupt("details past the end"))?;
    *input = rest;
    Ok(byte)
}

fn take_text(input: &mut &[u8]) -> Result<String, Corrupt> {
    let length = usize::try_from(take_varint(input)?).map_err(|_| Corrupt("text too long"))?;
    if input.len() < length {
        return Err(Corrupt("text past the end"));
    }
    let (text, rest) = input.split_at(length);
    *input = rest;
    String::from_utf8(text.to_vec()).map_err(|_| Corrupt("text not UTF-8"))
}

fn take_frame(input: &mut &[u8]) -> Result<Frame, Corrupt> {
    let file = take_text(input)?;
    let flags = take_byte(input)?;
    let line = if flags & FRAME_LINE == 0 {
        None
    } else {
        Some(u32::try_from(take_varint(input)?).map_err(|_| Corrupt("frame line"))?)
    };
    let function = if flags & FRAME_FUNCTION == 0 {
        None
    } else {
        Some(take_text(input)?)
    };
    Ok(Frame {
        file,
        line,
        function,
    })
}

fn take_details(input: &mut &[u8]) -> Result<Details, Corrupt> {
    let flags = take_byte(input)?;
    let signature = if flags & DETAILS_SIGNATURE == 0 {
        None
    } else {
        Some(take_text(input)?)
    };
    let failure = if flags & DETAILS_FAILURE == 0 {
        None
    } else {
        let failure_flags = take_byte(input)?;
        let exception = if failure_flags & FAILURE_EXCEPTION == 0 {
            None
        } else {
            Some(take_text(input)?)
        };
        let message = take_text(input)?;
        let text = take_text(input)?;
        let count = take_varint(input)?;
        let mut frames = Vec::new();
        for _ in 0..count {
            frames.push(take_frame(input)?);
        }
        let failing_frame = if failure_flags & FAILURE_FAILING_FRAME == 0 {
            None
        } else {
            Some(take_frame(input)?)
        };
        Some(Failure {
            exception,
            message,
            text,
            frames,
            failing_frame,
        })
    };
    let mut optional = |flag: u8| -> Result<Option<String>, Corrupt> {
        if flags & flag == 0 {
            Ok(None)
        } else {
            take_text(input).map(Some)
        }
    };
    Ok(Details {
        signature,
        failure,
        skip_message: optional(DETAILS_SKIP)?,
        stdout: optional(DETAILS_STDOUT)?,
        stderr: optional(DETAILS_STDERR)?,
    })
}

/// The half byte of `slot` in an outcomes blob: 0 when the slot holds no execution, else
/// the outcome code plus one.
pub fn outcome_nibble(outcomes: &[u8], slot: usize) -> u8 {
    outcomes
        .get(slot / 2)
        .map_or(0, |byte| (byte >> ((slot % 2) * 4)) & 0x0F)
}

/// The outcome a non-zero [`outcome_nibble`] stands for.
pub fn outcome_of_nibble(nibble: u8) -> Result<Outcome, Corrupt> {
    nibble
        .checked_sub(1)
        .and_then(outcome_of)
        .ok_or(Corrupt("unknown outcome code"))
}

fn put_varint(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn take_varint(input: &mut &[u8]) -> Result<u64, Corrupt> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = input.split_first().ok_or(Corrupt("varint past the end"))?;
        *input = rest;
        value |= u64::from(byte & 0x7F) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(Corrupt("varint too long"))
}

/// First byte of a stored block of names; a new packing gets a new one.
const NAMES_FORMAT: u8 = 1;

/// The names of one block of test ids (`test_names.names`), in id order: a format byte,
/// then, compressed as one LZ4 block with its length before it, each name as the length
/// of the prefix it shares with the one before, the length of the rest, and the rest
/// (both lengths varints). Ids follow first sight, so neighbours mostly share their
/// module and class; the two together take a tenth of the bytes of the names.
pub fn encode_names<S: AsRef<str>>(names: &[S]) -> Vec<u8> {
    let coded = front_code(names);
    let compressed = lz4_flex::compress_prepend_size(&coded);
    let mut sealed = Vec::with_capacity(compressed.len() + 1);
    sealed.push(NAMES_FORMAT);
    sealed.extend_from_slice(&compressed);
    sealed
}

fn front_code<S: AsRef<str>>(names: &[S]) -> Vec<u8> {
    let mut blob = Vec::with_capacity(names.len() * 24);
    let mut previous: &[u8] = &[];
    for name in names {
        let name = name.as_ref().as_bytes();
        let shared = shared_prefix(previous, name);
        put_varint(&mut blob, shared as u64);
        put_varint(&mut blob, (name.len() - shared) as u64);
        blob.extend_from_slice(&name[shared..]);
        previous = name;
    }
    blob
}

/// Bytes at the start of `a` and `b` that are the same, eight at a time while they last.
fn shared_prefix(a: &[u8], b: &[u8]) -> usize {
    let mut shared = 0;
    for (x, y) in a.chunks_exact(8).zip(b.chunks_exact(8)) {
        if x != y {
            break;
        }
        shared += 8;
    }
    shared
        + a[shared..]
            .iter()
            .zip(&b[shared..])
            .take_while(|(x, y)| x == y)
            .count()
}

/// The names [`encode_names`] stored, in id order.
pub fn decode_names(sealed: &[u8]) -> Result<Vec<String>, Corrupt> {
    let coded = match sealed.split_first() {
        Some((&NAMES_FORMAT, compressed)) => {
            lz4_flex::decompress_size_prepended(compressed).map_err(|_| Corrupt("names not LZ4"))?
        }
        _ => return Err(Corrupt("unknown names format")),
    };
    let mut names: Vec<String> = Vec::new();
    let mut rest = coded.as_slice();
    let mut previous: Vec<u8> = Vec::new();
    while !rest.is_empty() {
        let shared = usize::try_from(take_varint(&mut rest)?).map_err(|_| Corrupt("name"))?;
        let length = usize::try_from(take_varint(&mut rest)?).map_err(|_| Corrupt("name"))?;
        if shared > previous.len() || length > rest.len() {
            return Err(Corrupt("name past the end"));
        }
        previous.truncate(shared);
        previous.extend_from_slice(&rest[..length]);
        rest = &rest[length..];
        let name = std::str::from_utf8(&previous).map_err(|_| Corrupt("name not UTF-8"))?;
        names.push(name.to_owned());
    }
    Ok(names)
}

/// Entries of a `test_name_index` row at most: 6 KiB, and a row of the index is read
/// whole for each lookup.
pub const INDEX_ROW_ENTRIES: usize = 512;

/// Bytes of one name index entry: the name hash (i64) and the test id (u32), little-endian.
const INDEX_ENTRY_BYTES: usize = 12;

/// One entry of the name index: a name hash and the test it names.
pub type IndexEntry = (i64, u32);

/// A `test_name_index` row's entries, sorted by hash then id.
pub fn encode_index(entries: &[IndexEntry]) -> Vec<u8> {
    let mut blob = Vec::with_capacity(entries.len() * INDEX_ENTRY_BYTES);
    for &(hash, id) in entries {
        blob.extend_from_slice(&hash.to_le_bytes());
        blob.extend_from_slice(&id.to_le_bytes());
    }
    blob
}

/// The entries [`encode_index`] stored.
pub fn decode_index(blob: &[u8]) -> Result<Vec<IndexEntry>, Corrupt> {
    if !blob.len().is_multiple_of(INDEX_ENTRY_BYTES) {
        return Err(Corrupt("name index row of a partial entry"));
    }
    Ok(blob
        .chunks_exact(INDEX_ENTRY_BYTES)
        .map(|entry| {
            let (hash, id) = entry.split_at(8);
            let mut raw_hash = [0u8; 8];
            raw_hash.copy_from_slice(hash);
            let mut raw_id = [0u8; 4];
            raw_id.copy_from_slice(id);
            (i64::from_le_bytes(raw_hash), u32::from_le_bytes(raw_id))
        })
        .collect())
}

/// The test ids a name index row holds for `hash`: a binary search, then the run of
/// equal hashes (names that share one).
pub fn index_lookup(blob: &[u8], hash: i64) -> Result<Vec<u32>, Corrupt> {
    let entries = decode_index(blob)?;
    let start = entries.partition_point(|&(known, _)| known < hash);
    Ok(entries[start..]
        .iter()
        .take_while(|&&(known, _)| known == hash)
        .map(|&(_, id)| id)
        .collect())
}

/// Merges two sorted entry lists into one.
pub fn merge_index(old: &[IndexEntry], new: &[IndexEntry]) -> Vec<IndexEntry> {
    let mut merged = Vec::with_capacity(old.len() + new.len());
    let (mut a, mut b) = (old.iter().peekable(), new.iter().peekable());
    loop {
        let next = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) if x <= y => a.next(),
            (Some(_) | None, Some(_)) => b.next(),
            (Some(_), None) => a.next(),
            (None, None) => break,
        };
        merged.extend(next.copied());
    }
    merged
}

/// Cuts sorted entries into rows of at most [`INDEX_ROW_ENTRIES`], about evenly, never
/// between two entries of the same hash (a lookup reads the one row its hash falls in).
pub fn split_index(entries: &[IndexEntry]) -> Vec<&[IndexEntry]> {
    let rows = entries.len().div_ceil(INDEX_ROW_ENTRIES * 3 / 4).max(1);
    let target = entries.len().div_ceil(rows);
    let mut pieces = Vec::with_capacity(rows);
    let mut rest = entries;
    while rest.len() > INDEX_ROW_ENTRIES {
        let mut cut = target.min(rest.len());
        while cut < rest.len() && rest[cut].0 == rest[cut - 1].0 {
            cut += 1;
        }
        let (piece, after) = rest.split_at(cut);
        pieces.push(piece);
        rest = after;
    }
    if !rest.is_empty() {
        pieces.push(rest);
    }
    pieces
}

/// Sorts index entries by hash, keeping the order of equal hashes (ids ascending, as
/// they were added): four passes of 16 bits each, a tenth of a comparison sort's work
/// for the hundreds of thousands of names a first ingest adds.
fn radix_sort(entries: &mut Vec<IndexEntry>) {
    let key = |entry: &IndexEntry| (entry.0 as u64) ^ (1 << 63);
    let mut other = vec![(0i64, 0u32); entries.len()];
    for pass in 0..4 {
        let shift = pass * 16;
        let mut starts = vec![0usize; 1 << 16];
        for entry in entries.iter() {
            starts[((key(entry) >> shift) & 0xFFFF) as usize] += 1;
        }
        let mut total = 0;
        for start in &mut starts {
            let count = *start;
            *start = total;
            total += count;
        }
        for entry in entries.iter() {
            let digit = ((key(entry) >> shift) & 0xFFFF) as usize;
            other[starts[digit]] = *entry;
            starts[digit] += 1;
        }
        std::mem::swap(entries, &mut other);
    }
}

/// The names an ingest has added and not yet written to the name index: their hashes in
/// id order, found again by an open-addressing table of positions (8 bytes a name beside
/// the hash), so that a second execution of a new test finds its id without SQL.
#[derive(Debug, Clone)]
pub struct NewNames {
    first_id: i64,
    hashes: Vec<i64>,
    /// Position in `hashes` plus one; 0 is free. Never more than half full.
    slots: Vec<u32>,
}

impl NewNames {
    /// None yet; the first one added gets `first_id`.
    pub fn new(first_id: i64) -> NewNames {
        NewNames {
            first_id,
            hashes: Vec::new(),
            slots: vec![0; 1024],
        }
    }

    /// Names held.
    pub fn len(&self) -> usize {
        self.hashes.len()
    }

    /// No name held.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }

    /// The id the next name gets.
    pub fn next_id(&self) -> i64 {
        self.first_id + self.hashes.len() as i64
    }

    fn home(&self, hash: i64) -> usize {
        (((hash as u64 >> 32) * self.slots.len() as u64) >> 32) as usize
    }

    /// Adds a name with this hash; returns its id.
    pub fn push(&mut self, hash: i64) -> i64 {
        if (self.hashes.len() + 1) * 2 > self.slots.len() {
            self.slots = vec![0; self.slots.len() * 2];
            for position in 0..self.hashes.len() {
                self.place(position);
            }
        }
        self.hashes.push(hash);
        self.place(self.hashes.len() - 1);
        self.next_id() - 1
    }

    fn place(&mut self, position: usize) {
        let mut at = self.home(self.hashes[position]);
        while self.slots[at] != 0 {
            at = (at + 1) % self.slots.len();
        }
        self.slots[at] = position as u32 + 1;
    }

    /// The ids of the names held with this hash.
    pub fn find(&self, hash: i64) -> Vec<i64> {
        let mut found = Vec::new();
        let mut at = self.home(hash);
        while let Some(&slot) = self.slots.get(at).filter(|&&slot| slot != 0) {
            let position = slot as usize - 1;
            if self.hashes[position] == hash {
                found.push(self.first_id + position as i64);
            }
            at = (at + 1) % self.slots.len();
        }
        found
    }

    /// The held names as index entries, sorted; and empties the set, whose next name
    /// gets the id after the last one.
    pub fn take_sorted(&mut self) -> Result<Vec<IndexEntry>, Corrupt> {
        let first_id = self.first_id;
        self.first_id = self.next_id();
        // Freed before the sort's two buffers are made: a merge of a million names is the
        // ingest's largest moment in memory.
        self.slots = vec![0; 1024];
        let hashes = std::mem::take(&mut self.hashes);
        let mut entries = Vec::with_capacity(hashes.len());
        for (position, hash) in hashes.into_iter().enumerate() {
            let id = u32::try_from(first_id + position as i64)
                .map_err(|_| Corrupt("test id beyond 4,294,967,295"))?;
            entries.push((hash, id));
        }
        radix_sort(&mut entries);
        Ok(entries)
    }

    /// Every hash held.
    pub fn hashes(&self) -> &[i64] {
        &self.hashes
    }
}

/// Hashes the integer keys of in-memory maps of blocks (a multiply: the keys are dense
/// small integers, and std's SipHash cost more than the map's work).
#[derive(Debug, Default, Clone, Copy)]
pub struct BlockHasher(u64);

impl std::hash::Hasher for BlockHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(byte)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_i64(&mut self, value: i64) {
        self.0 = (self.0 ^ value as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// A map keyed by block.
pub type BlockMap<V> =
    std::collections::HashMap<i64, V, std::hash::BuildHasherDefault<BlockHasher>>;

/// A set of blocks.
pub type BlockSet = std::collections::HashSet<i64, std::hash::BuildHasherDefault<BlockHasher>>;

/// The hash a test name is found by: XXH64 with seed 0 of its UTF-8 bytes (Yann Collet's
/// xxHash, <https://github.com/Cyan4973/xxHash/blob/dev/doc/xxhash_spec.md>), as the
/// signed integer SQLite stores. Fixed forever: every stored name's hash was made by it.
pub fn name_hash(name: &str) -> i64 {
    xxh64(name.as_bytes(), 0) as i64
}

const P1: u64 = 0x9E37_79B1_85EB_CA87;
const P2: u64 = 0xC2B2_AE3D_27D4_EB4F;
const P3: u64 = 0x1656_67B1_9E37_79F9;
const P4: u64 = 0x85EB_CA77_C2B2_AE63;
const P5: u64 = 0x27D4_EB2F_1656_67C5;

fn xxh64_round(accumulator: u64, input: u64) -> u64 {
    accumulator
        .wrapping_add(input.wrapping_mul(P2))
        .rotate_left(31)
        .wrapping_mul(P1)
}

fn xxh64_merge(hash: u64, lane: u64) -> u64 {
    (hash ^ xxh64_round(0, lane))
        .wrapping_mul(P1)
        .wrapping_add(P4)
}

fn read_u64(bytes: &[u8]) -> u64 {
    let mut raw = [0u8; 8];
    raw.copy_from_slice(&bytes[..8]);
    u64::from_le_bytes(raw)
}

fn read_u32(bytes: &[u8]) -> u64 {
    let mut raw = [0u8; 4];
    raw.copy_from_slice(&bytes[..4]);
    u64::from(u32::from_le_bytes(raw))
}

fn xxh64(input: &[u8], seed: u64) -> u64 {
    let mut rest = input;
    let mut hash = if input.len() >= 32 {
        let mut lanes = [
            seed.wrapping_add(P1).wrapping_add(P2),
            seed.wrapping_add(P2),
            seed,
            seed.wrapping_sub(P1),
        ];
        while rest.len() >= 32 {
            for (lane, bytes) in lanes.iter_mut().zip(rest.chunks_exact(8)) {
                *lane = xxh64_round(*lane, read_u64(bytes));
            }
            rest = &rest[32..];
        }
        let [a, b, c, d] = lanes;
        let mut hash = a
            .rotate_left(1)
            .wrapping_add(b.rotate_left(7))
            .wrapping_add(c.rotate_left(12))
            .wrapping_add(d.rotate_left(18));
        for lane in lanes {
            hash = xxh64_merge(hash, lane);
        }
        hash
    } else {
        seed.wrapping_add(P5)
    };
    hash = hash.wrapping_add(input.len() as u64);
    while rest.len() >= 8 {
        hash ^= xxh64_round(0, read_u64(rest));
        hash = hash.rotate_left(27).wrapping_mul(P1).wrapping_add(P4);
        rest = &rest[8..];
    }
    if rest.len() >= 4 {
        hash ^= read_u32(rest).wrapping_mul(P1);
        hash = hash.rotate_left(23).wrapping_mul(P2).wrapping_add(P3);
        rest = &rest[4..];
    }
    for &byte in rest {
        hash ^= u64::from(byte).wrapping_mul(P5);
        hash = hash.rotate_left(11).wrapping_mul(P1);
    }
    hash ^= hash >> 33;
    hash = hash.wrapping_mul(P2);
    hash ^= hash >> 29;
    hash = hash.wrapping_mul(P3);
    hash ^ (hash >> 32)
}

/// Which names a history may hold: no false "absent", about one false "maybe" in 200 at
/// the filter's capacity. An ingest asks it first, so that a test the history has never
/// seen costs no lookup; a "maybe" is settled by the index on the name hash. Each name
/// sets four bits of one 64-bit word (one cache miss per question), 16 bits per name of
/// capacity: memory grows with the history's tests, two bytes each, not with the file.
#[derive(Debug, Clone)]
pub struct NameFilter {
    words: Vec<u64>,
    capacity: usize,
    len: usize,
}

impl NameFilter {
    const BITS_PER_NAME: usize = 16;

    /// A filter for up to `capacity` names.
    pub fn with_capacity(capacity: usize) -> NameFilter {
        let capacity = capacity.max(1024);
        NameFilter {
            words: vec![0; capacity * Self::BITS_PER_NAME / 64],
            capacity,
            len: 0,
        }
    }

    /// Names the filter is sized for.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Names added.
    pub fn len(&self) -> usize {
        self.len
    }

    fn place(&self, hash: i64) -> (usize, u64) {
        let hash = hash as u64;
        // The high half picks the word (a multiply instead of a division), the low bits
        // the four bits in it.
        let word = ((hash >> 32) * self.words.len() as u64) >> 32;
        let mask = (1u64 << (hash & 63))
            | (1u64 << ((hash >> 6) & 63))
            | (1u64 << ((hash >> 12) & 63))
            | (1u64 << ((hash >> 18) & 63));
        (word as usize, mask)
    }

    /// Adds the name with this [`name_hash`].
    pub fn insert(&mut self, hash: i64) {
        let (word, mask) = self.place(hash);
        if let Some(bits) = self.words.get_mut(word) {
            *bits |= mask;
        }
        self.len += 1;
    }

    /// False only when no name with this hash was added.
    pub fn may_contain(&self, hash: i64) -> bool {
        let (word, mask) = self.place(hash);
        self.words.get(word).is_none_or(|bits| bits & mask == mask)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::proptest_config;
    use proptest::prelude::*;

    #[test]
    fn xxh64_matches_the_reference_vectors() {
        // From the reference implementation's `xxhsum -H64` (xxHash 0.8.1).
        assert_eq!(xxh64(b"", 0), 0xEF46_DB37_51D8_E999);
        assert_eq!(xxh64(b"a", 0), 0xD24E_C4F1_A98C_6E5B);
        assert_eq!(xxh64(b"abc", 0), 0x44BC_2CF5_AD77_0999);
        assert_eq!(
            xxh64(b"Nobody inspects the spammish repetition", 0),
            0xFBCE_A83C_8A37_8BF1
        );
        assert_eq!(
            name_hash(
                "tests/pkg3/test_module17.py::TestClass::test_name_with_a_long_suffix[param-1]"
            ),
            0x45F8_9585_357D_BB5F
        );
    }

    #[test]
    fn blocks_and_slots_cover_the_ids() {
        assert_eq!(block_and_slot(0), (0, 0));
        assert_eq!(block_and_slot(255), (0, 255));
        assert_eq!(block_and_slot(256), (1, 0));
        assert_eq!(test_of(3, 7), 3 * 256 + 7);
        assert_eq!(block_and_slot(test_of(1234, 200)), (1234, 200));
    }

    #[test]
    fn the_filter_never_forgets_and_seldom_imagines() {
        let mut filter = NameFilter::with_capacity(20_000);
        for n in 0..20_000 {
            filter.insert(name_hash(&format!("known {n}")));
        }
        assert!((0..20_000).all(|n| filter.may_contain(name_hash(&format!("known {n}")))));
        let imagined = (0..100_000)
            .filter(|n| filter.may_contain(name_hash(&format!("new {n}"))))
            .count();
        assert!(imagined < 1_000, "{imagined} false maybes in 100,000");
    }

    fn narrow() -> impl Strategy<Value = Narrow> {
        (
            proptest::sample::select(Outcome::ALL.to_vec()),
            proptest::option::of(prop_oneof![
                0.0..1.0e6f64,
                (0..100_000_000u64).prop_map(|ms| ms as f64 / 1e3),
                (0..100_000_000u64).prop_map(|us| us as f64 / 1e6),
                (0..100_000u64)
                    .prop_map(|ms| format!("{}.{:03}", ms / 1000, ms % 1000).parse().unwrap()),
                Just(0.0),
                Just(-0.0),
                Just(f64::NAN),
                Just(f64::INFINITY),
                any::<f64>(),
            ]),
            prop_oneof![Just(1u32), any::<u32>()],
            proptest::option::of("(?s).{0,12}|tests/a.py|tests/b.py"),
            any::<Option<u32>>(),
        )
            .prop_map(|(outcome, duration, attempts, file, line)| Narrow {
                outcome,
                duration,
                attempts,
                file,
                line,
            })
    }

    proptest! {
        #![proptest_config(proptest_config(256))]

        #[test]
        fn blocks_give_back_what_was_put_in(
            puts in proptest::collection::vec(
                (0..BLOCK_TESTS, narrow(), proptest::option::of(0..i64::MAX)),
                0..300,
            ),
        ) {
            let mut builder = BlockBuilder::default();
            let mut expected: Vec<Option<(Narrow, Option<i64>)>> = vec![None; BLOCK_TESTS];
            for (slot, narrow, part) in puts {
                let mut kept = narrow.clone();
                kept.duration = stored_duration(kept.duration);
                expected[slot] = Some((kept, part));
                builder.set(slot, narrow);
                builder.set_details(slot, part);
            }
            let present = expected.iter().flatten().count();
            prop_assert_eq!(builder.len(), present);
            prop_assert_eq!(builder.is_full(), present == BLOCK_TESTS);
            let entries = builder.entries();
            let outcomes = builder.outcomes();
            let mut reader = Entries::new(&entries).unwrap();
            let mut read: Vec<Option<(Narrow, Option<i64>)>> = vec![None; BLOCK_TESTS];
            while let Some((slot, narrow, part)) = reader.next_entry().unwrap() {
                read[slot] = Some((narrow, part));
            }
            let decoded = BlockBuilder::decode(&entries).unwrap();
            for slot in 0..BLOCK_TESTS {
                let want = &expected[slot];
                let same = |got: &Option<(Narrow, Option<i64>)>| match (got, want) {
                    (Some((a, pa)), Some((b, pb))) => {
                        a.outcome == b.outcome
                            && a.attempts == b.attempts
                            && a.file == b.file
                            && a.line == b.line
                            && a.duration.map(f64::to_bits) == b.duration.map(f64::to_bits)
                            && pa == pb
                    }
                    (None, None) => true,
                    _ => false,
                };
                prop_assert!(same(&read[slot]), "slot {}: {:?} vs {:?}", slot, read[slot], want);
                let held = |b: &BlockBuilder| b.get(slot).map(|n| (n, b.details_row(slot)));
                prop_assert!(same(&held(&builder)), "builder slot {}", slot);
                prop_assert!(same(&held(&decoded)), "decoded slot {}", slot);
                let found = Entries::new(&entries).unwrap().find(slot).unwrap();
                prop_assert!(same(&found), "find {}", slot);
                let nibble = outcome_nibble(&outcomes, slot);
                match want {
                    None => prop_assert_eq!(nibble, 0),
                    Some((narrow, _)) => prop_assert_eq!(outcome_of_nibble(nibble).unwrap(), narrow.outcome),
                }
            }
            prop_assert_eq!(decoded.entries(), entries);
        }
    }

    fn text() -> impl Strategy<Value = String> {
        "(?s).{0,24}"
    }

    fn frame() -> impl Strategy<Value = Frame> {
        (text(), any::<Option<u32>>(), proptest::option::of(text())).prop_map(
            |(file, line, function)| Frame {
                file,
                line,
                function,
            },
        )
    }

    fn details() -> impl Strategy<Value = Details> {
        let failure = (
            proptest::option::of(text()),
            text(),
            text(),
            proptest::collection::vec(frame(), 0..4),
            proptest::option::of(frame()),
        )
            .prop_map(
                |(exception, message, text, frames, failing_frame)| Failure {
                    exception,
                    message,
                    text,
                    frames,
                    failing_frame,
                },
            );
        (
            proptest::option::of(text()),
            proptest::option::of(failure),
            proptest::option::of(text()),
            proptest::option::of(text()),
            proptest::option::of(text()),
        )
            .prop_map(
                |(signature, failure, skip_message, stdout, stderr)| Details {
                    signature,
                    failure,
                    skip_message,
                    stdout,
                    stderr,
                },
            )
    }

    proptest! {
        #![proptest_config(proptest_config(128))]

        #[test]
        fn details_give_back_what_was_put_in(
            puts in proptest::collection::vec((0..BLOCK_TESTS, details()), 0..40),
        ) {
            let mut part = Vec::new();
            for (slot, details) in &puts {
                put_details(&mut part, *slot, details);
            }
            for slot in 0..BLOCK_TESTS {
                let want = puts.iter().rev().find(|(at, _)| *at == slot).map(|(_, d)| d.clone());
                prop_assert_eq!(find_details(&part, slot).unwrap(), want);
            }
            for cut in 0..part.len() {
                // A part cut short is an error, never a panic (it may read as shorter).
                let _ = find_details(&part[..cut], 0);
            }
            let sealed = seal_details(&part);
            prop_assert_eq!(open_details(&sealed).unwrap(), part.clone());
            for cut in 0..sealed.len() {
                let _ = open_details(&sealed[..cut]);
            }
        }

        #[test]
        fn names_give_back_what_was_put_in(
            names in proptest::collection::vec("(?s).{0,20}|tests/a.py::T::test_[a-c]{1,3}", 0..BLOCK_TESTS),
        ) {
            let sealed = encode_names(&names);
            prop_assert_eq!(decode_names(&sealed).unwrap(), names);
            for cut in 0..sealed.len() {
                let _ = decode_names(&sealed[..cut]);
            }
        }

        #[test]
        fn the_name_index_finds_every_entry(
            old in proptest::collection::vec((-40i64..40, any::<u32>()), 0..1500),
            new in proptest::collection::vec((-40i64..40, any::<u32>()), 0..1500),
        ) {
            let mut old = old;
            old.sort_unstable();
            let mut new = new;
            new.sort_unstable();
            let merged = merge_index(&old, &new);
            let mut all = [old, new].concat();
            all.sort_unstable();
            prop_assert_eq!(&merged, &all);
            let pieces = split_index(&merged);
            prop_assert_eq!(pieces.concat(), merged.clone());
            for piece in &pieces {
                prop_assert!(!piece.is_empty());
                prop_assert!(piece.len() <= INDEX_ROW_ENTRIES || piece.iter().all(|e| e.0 == piece[0].0));
            }
            for pair in pieces.windows(2) {
                prop_assert!(pair[0].last().unwrap().0 < pair[1][0].0, "a hash split across rows");
            }
            for piece in &pieces {
                let blob = encode_index(piece);
                prop_assert_eq!(&decode_index(&blob).unwrap(), piece);
                for &(hash, _) in *piece {
                    let mut want: Vec<u32> = merged.iter().filter(|e| e.0 == hash).map(|e| e.1).collect();
                    want.sort_unstable();
                    prop_assert_eq!(index_lookup(&blob, hash).unwrap(), want);
                }
            }
        }

        #[test]
        fn new_names_are_found_by_hash(
            hashes in proptest::collection::vec(prop_oneof![-300i64..300, any::<i64>()], 0..3000),
        ) {
            let mut names = NewNames::new(17);
            for (position, &hash) in hashes.iter().enumerate() {
                prop_assert_eq!(names.push(hash), 17 + position as i64);
            }
            for hash in (-300i64..300).chain(hashes.iter().copied()) {
                let mut found = names.find(hash);
                found.sort_unstable();
                let want: Vec<i64> = hashes
                    .iter()
                    .enumerate()
                    .filter(|&(_, &h)| h == hash)
                    .map(|(position, _)| 17 + position as i64)
                    .collect();
                prop_assert_eq!(found, want);
            }
            let taken = names.take_sorted().unwrap();
            prop_assert_eq!(taken.len(), hashes.len());
            let mut sorted = taken.clone();
            sorted.sort_unstable();
            prop_assert_eq!(&taken, &sorted);
            prop_assert!(names.is_empty());
            prop_assert_eq!(names.next_id(), 17 + hashes.len() as i64);
        }
    }

    #[test]
    fn damaged_blobs_are_errors_not_panics() {
        let mut builder = BlockBuilder::default();
        for slot in [0, 5, 255] {
            builder.set(
                slot,
                Narrow {
                    outcome: Outcome::Fail,
                    duration: Some(1.5),
                    attempts: 3,
                    file: Some("tests/x.py".into()),
                    line: Some(9),
                },
            );
        }
        let entries = builder.entries();
        for cut in 0..entries.len() {
            let short = &entries[..cut];
            let read = Entries::new(short).and_then(|mut reader| {
                while reader.next_entry()?.is_some() {}
                Ok(())
            });
            assert!(read.is_err(), "cut at {cut}");
        }
        assert!(Entries::new(&[2]).is_err());
    }
}
