//! Freezes over time: which `[[freeze]]`s have expired while their test is still held
//! (skipped or quarantined), which expire within a week, and which a change may lean on.
//! Pure: freezes, today and a "still held" answer in; states out. A freeze holds up to and
//! including its `expires` date.

use jiff::civil::Date;
use serde::Serialize;

use crate::policy::Freeze;

/// A freeze expiring within this many days (today included) is listed as expiring.
pub const EXPIRING_WITHIN_DAYS: i64 = 7;

/// Where a freeze stands today.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum FreezeState {
    /// Past its date while the test is still skipped or quarantined: `freeze check` fails.
    Expired,
    /// Past its date, and the test runs again: the freeze can be deleted.
    Lapsed,
    /// Holds, and ends within [`EXPIRING_WITHIN_DAYS`] days.
    Expiring,
    /// Holds for longer.
    Active,
}

impl FreezeState {
    /// `expired`, `lapsed`, `expiring` or `active`.
    pub fn as_str(self) -> &'static str {
        match self {
            FreezeState::Expired => "expired",
            FreezeState::Lapsed => "lapsed",
            FreezeState::Expiring => "expiring",
            FreezeState::Active => "active",
        }
    }
}

/// One freeze, judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FreezeStatus<'a> {
    /// The freeze.
    pub freeze: &'a Freeze,
    /// Its state.
    pub state: FreezeState,
    /// Days from today to `expires`: 0 on the last day, negative once expired.
    pub days_left: i64,
    /// Whether its test is still skipped or quarantined.
    pub held: bool,
}

/// Days from `today` to `date` (negative when `date` is past).
pub fn days_between(today: Date, date: Date) -> i64 {
    today
        .until(date)
        .map_or(0, |span| i64::from(span.get_days()))
}

/// Every freeze's state today, in file order; `held` says whether a freeze's test is still
/// skipped or quarantined.
pub fn evaluate(
    freezes: &[Freeze],
    today: Date,
    held: impl Fn(&Freeze) -> bool,
) -> Vec<FreezeStatus<'_>> {
    freezes
        .iter()
        .map(|freeze| {
            let days_left = days_between(today, freeze.expires);
            let held = held(freeze);
            let state = match days_left {
                ..0 if held => FreezeState::Expired,
                ..0 => FreezeState::Lapsed,
                0..=EXPIRING_WITHIN_DAYS => FreezeState::Expiring,
                _ => FreezeState::Active,
            };
            FreezeStatus {
                freeze,
                state,
                days_left,
                held,
            }
        })
        .collect()
}

/// The freezes a change may lean on: not expired, and on a test the change did not touch
/// (a test the change edits must pass on its own).
pub fn in_force(freezes: &[Freeze], today: Date, touched: impl Fn(&str) -> bool) -> Vec<&Freeze> {
    freezes
        .iter()
        .filter(|freeze| days_between(today, freeze.expires) >= 0 && !touched(&freeze.test))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn freeze(test: &str, expires: Date) -> Freeze {
        Freeze {
            test: test.to_owned(),
            owner: "platform".to_owned(),
            expires,
            ticket: Some("PLAT-1".to_owned()),
            replay: None,
            line: 1,
        }
    }

    #[test]
    fn states_around_the_dates() {
        let today = Date::constant(2026, 12, 10);
        let freezes = [
            freeze("a", Date::constant(2026, 12, 9)),
            freeze("b", Date::constant(2026, 12, 9)),
            freeze("c", Date::constant(2026, 12, 10)),
            freeze("d", Date::constant(2026, 12, 17)),
            freeze("e", Date::constant(2026, 12, 18)),
        ];
        let states: Vec<_> = evaluate(&freezes, today, |f| f.test != "b")
            .into_iter()
            .map(|s| (s.freeze.test.as_str(), s.state, s.days_left))
            .collect();
        assert_eq!(
            states,
            [
                ("a", FreezeState::Expired, -1),
                ("b", FreezeState::Lapsed, -1),
                ("c", FreezeState::Expiring, 0),
                ("d", FreezeState::Expiring, 7),
                ("e", FreezeState::Active, 8),
            ]
        );
    }

    #[test]
    fn a_change_leans_only_on_live_freezes_of_tests_it_did_not_touch() {
        let today = Date::constant(2026, 12, 10);
        let freezes = [
            freeze("old", Date::constant(2026, 12, 1)),
            freeze("touched", Date::constant(2027, 1, 1)),
            freeze("kept", Date::constant(2026, 12, 10)),
        ];
        let live: Vec<_> = in_force(&freezes, today, |test| test == "touched")
            .into_iter()
            .map(|f| f.test.as_str())
            .collect();
        assert_eq!(live, ["kept"]);
        assert_eq!(
            days_between(Date::constant(2026, 1, 1), Date::constant(2027, 1, 1)),
            365
        );
    }
}
