//! Fuzzes the `junit` parser directly on arbitrary bytes: it must never panic, and what
//! it accepts must satisfy the model's promises (non-empty ids, see `contract.rs`).

#![no_main]

#[path = "contract.rs"]
mod contract;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut seen = contract::Seen::default();
    let result = candor::results::junit::parse(data, &contract::options(), &mut |execution| {
        seen.take(&execution);
        Ok(())
    });
    seen.assert_kept(&result);
});
