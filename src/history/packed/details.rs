//! What only some executions have (failure, skip message, captured output): the parts of
//! a block's details and their LZ4 seal.

use super::{Corrupt, put_varint, take_varint};
use crate::results::{Execution, Failure, Frame};

/// What only some executions have: kept apart from the blocks' entries, in parts of a
/// block's details (`execution_details.details`), because it is most of the bytes and
/// the questions over every test never read it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Details {
    /// The failure's signature, as worked out at ingest.
    pub signature: Option<String>,
    /// The failure.
    pub failure: Option<Box<Failure>>,
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
    let mut scratch = Vec::new();
    seal_details_in(part, &mut scratch).to_vec()
}

/// [`seal_details`] written in `scratch`, which is kept for the next part: the same
/// bytes without the three allocations and two copies of the compressed part a call
/// of `lz4_flex::compress_prepend_size` and a sealed `Vec` cost (a first ingest seals
/// about 800 parts of up to 256 KiB). `scratch` only grows, so it is zeroed once.
pub fn seal_details_in<'a>(part: &[u8], scratch: &'a mut Vec<u8>) -> &'a [u8] {
    // The length before the LZ4 block, as `compress_prepend_size` writes it; a part is
    // never near 4 GiB (`details_part_bytes`, texts cut at `MAX_TEXT_BYTES`).
    let Ok(length) = u32::try_from(part.len()) else {
        let compressed = lz4_flex::compress_prepend_size(part);
        scratch.clear();
        scratch.push(DETAILS_FORMAT);
        scratch.extend_from_slice(&compressed);
        return scratch;
    };
    let head = 1 + 4;
    let needed = head + lz4_flex::block::get_maximum_output_size(part.len());
    if scratch.len() < needed {
        scratch.resize(needed, 0);
    }
    scratch[0] = DETAILS_FORMAT;
    scratch[1..head].copy_from_slice(&length.to_le_bytes());
    let written = lz4_flex::block::compress_into(part, &mut scratch[head..needed])
        .unwrap_or_else(|_| unreachable!("the output is sized by get_maximum_output_size"));
    &scratch[..head + written]
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
        Some(Box::new(Failure {
            exception,
            message,
            text,
            frames,
            failing_frame,
        }))
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
