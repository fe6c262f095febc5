//! Failure signatures: message normalization and the sha256 that names a failure shape.
//!
//! The recipe is documented in `docs/formats.md#signatures`; changing it changes every
//! stored signature, so it is versioned by [`SIGNATURE_VERSION`].

use std::sync::LazyLock;

use regex::Regex;
use sha2::{Digest, Sha256};

use super::model::Frame;

/// Bumped whenever [`normalize`] or [`signature`] change what they produce.
pub const SIGNATURE_VERSION: u32 = 1;

/// What a UUID becomes: itself a UUID, so normalization is idempotent, and made of digit
/// runs, so a fingerprint's `\d+` still matches each part.
pub const UUID_TOKEN: &str = "00000000-0000-0000-0000-000000000000";
/// What a hex address (`0x7f3a…`) becomes.
pub const HEX_TOKEN: &str = "0x0";
/// What every other run of ASCII digits becomes.
pub const DIGITS_TOKEN: &str = "0";

/// One pass, leftmost match first: a UUID, else a `0x` hex number, else a digit run. A
/// single alternation (rather than three passes) keeps the rules from rewriting each
/// other's output, which is what makes the function idempotent.
static VOLATILE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?x)
        (?P<uuid>[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})
        | (?P<hex>0[xX][0-9a-fA-F]+)
        | (?P<digits>[0-9]+)",
    )
    .expect("the normalization pattern is valid")
});

/// Replaces UUIDs, hex addresses and every run of ASCII digits with fixed tokens, and
/// changes nothing else. Idempotent: `normalize(normalize(s)) == normalize(s)`.
///
/// One pass is not always a fixed point: the digit token can meet the text after it and
/// form a new match (`1xa` becomes `0xa`, a hex number). Passes repeat until nothing
/// changes; each changing pass shortens the text or turns characters into `0`, so this
/// ends, and in practice after the second pass.
pub fn normalize(text: &str) -> String {
    let mut current = one_pass(text);
    loop {
        let next = one_pass(&current);
        if next == current {
            return current;
        }
        current = next;
    }
}

fn one_pass(text: &str) -> String {
    VOLATILE
        .replace_all(text, |caps: &regex::Captures<'_>| {
            if caps.name("uuid").is_some() {
                UUID_TOKEN
            } else if caps.name("hex").is_some() {
                HEX_TOKEN
            } else {
                DIGITS_TOKEN
            }
        })
        .into_owned()
}

/// sha256 (lowercase hex) of `exception \n normalized message \n failing frame`.
///
/// The exception type is used as printed (types carry no volatile parts) and the failing
/// frame as its exact `file:line`: a failure at another line is another shape, exactly
/// as a fingerprint's `frame` demands. A missing part contributes an empty line.
pub fn signature(exception: Option<&str>, message: &str, failing_frame: Option<&Frame>) -> String {
    let mut hasher = Sha256::new();
    hasher.update(exception.unwrap_or_default().as_bytes());
    hasher.update(b"\n");
    hasher.update(normalize(message).as_bytes());
    hasher.update(b"\n");
    if let Some(frame) = failing_frame {
        hasher.update(frame.location().as_bytes());
    }
    hex::encode(hasher.finalize())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn replaces_each_volatile_kind() {
        assert_eq!(
            normalize("Timed out after 30.5s on port 50123"),
            "Timed out after 0.0s on port 0"
        );
        assert_eq!(
            normalize("object at 0x7f3aB2 id 123e4567-e89b-12d3-a456-426614174000"),
            format!("object at 0x0 id {UUID_TOKEN}")
        );
        assert_eq!(normalize("no digits here"), "no digits here");
    }

    #[test]
    fn a_digit_token_meeting_hex_text_is_normalized_to_a_fixed_point() {
        // Found by the idempotence property: one pass turned `1xa` into the hex `0xa`.
        assert_eq!(normalize("1xa"), "0x0");
        assert_eq!(
            normalize("a123456789bcdef0-dead-beef-dead-beefdeadbeef"),
            normalize(&normalize("a123456789bcdef0-dead-beef-dead-beefdeadbeef"))
        );
    }

    #[test]
    fn tokens_still_match_digit_patterns() {
        let re = Regex::new(r"^Timed out after \d+(\.\d+)?s waiting for webhook stub on port \d+$")
            .unwrap();
        assert!(re.is_match(&normalize(
            "Timed out after 12.25s waiting for webhook stub on port 41234"
        )));
    }

    #[test]
    fn signature_depends_on_frame_line_but_not_on_message_digits() {
        let frame = |line| Frame {
            file: "tests/conftest.py".into(),
            line: Some(line),
            function: None,
        };
        let a = signature(Some("TimeoutError"), "after 3s", Some(&frame(88)));
        let b = signature(Some("TimeoutError"), "after 47s", Some(&frame(88)));
        let c = signature(Some("TimeoutError"), "after 3s", Some(&frame(89)));
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.len(), 64);
    }

    proptest! {
        #![proptest_config(crate::test_support::proptest_config(512))]

        #[test]
        fn normalize_is_idempotent(text in "\\PC{0,80}|[0-9a-fxX. -]{0,60}") {
            let once = normalize(&text);
            prop_assert_eq!(normalize(&once), once.clone(), "input {:?}", text);
        }

        #[test]
        fn digits_stay_digits_and_nothing_else_changes(text in "[a-z :./_-]{0,20}[0-9]{1,12}[a-z :./_-]{0,20}") {
            let normalized = normalize(&text);
            // Every non-digit character outside a replaced token survives in order.
            let strip = |s: &str| s.chars().filter(|c| !c.is_ascii_hexdigit() && *c != 'x' && *c != 'X').collect::<String>();
            prop_assert_eq!(strip(&normalized), strip(&text));
            prop_assert!(normalized.chars().any(|c| c.is_ascii_digit()));
        }
    }
}
