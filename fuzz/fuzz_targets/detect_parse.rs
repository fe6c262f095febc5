//! Fuzzes the public entry points on arbitrary bytes: `detect` and `started_at_hint` on the
//! head, then `parse` (which sniffs again and dispatches), `parse_all` (which merges
//! retries) and `locate` on the error's offset. None may panic; what is accepted must
//! satisfy the model's promises.

#![no_main]

#[path = "contract.rs"]
mod contract;

use candor::results::{Position, detect, locate, parse, parse_all, started_at_hint};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let head = &data[..data.len().min(candor::results::SNIFF_BYTES)];
    let detected = detect(head);
    let _ = started_at_hint(head);

    let mut seen = contract::Seen::default();
    let result = parse(data, &contract::options(), &mut |execution| {
        seen.take(&execution);
        Ok(())
    });
    seen.assert_kept(&result);
    if let (Ok(format), Ok(summary)) = (&detected, &result) {
        assert_eq!(summary.format, Some(*format), "parse must use the detected format");
    }
    if let Err(error) = &result {
        let _ = error.hint();
        if let Some(Position::Offset(offset)) = error.position() {
            let _ = locate(data, offset);
        }
    }

    if let Ok((merged, _)) = parse_all(data, &contract::options()) {
        for execution in &merged {
            if let Some(problem) = contract::broken_promise(execution) {
                panic!("parse_all returned an execution that breaks the model: {problem}");
            }
        }
    }
});
