//! Discount codes: `SAVE<percent>`, in any case, takes that percentage off; other codes
//! change nothing.

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
    let code = code.to_uppercase();
    let digits = code.strip_prefix("SAVE");
    digits.unwrap().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::apply;

    #[test]
    fn applies_the_percentage() {
        assert_eq!(apply(1500, "WELCOME"), 1500);
        assert_eq!(apply(2000, "save10"), 1800);
    }
}
