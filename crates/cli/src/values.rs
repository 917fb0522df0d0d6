//! Value parsers for command-line numbers whose range matters: each error names the range
//! and gives an example, as the server's 400s do (`agentworld_serve::request`). The
//! arguments that use them accept a leading `-` (`allow_negative_numbers`), so that
//! `--temperature -1` reaches the range check instead of clap's "unexpected argument".

/// A copy prior: a finite logit bonus in nats, 0 (off) or more.
pub fn copy_bias(text: &str) -> Result<f32, String> {
    match text.parse::<f32>() {
        Ok(b) if b.is_finite() && b >= 0.0 => Ok(b),
        _ => Err(format!(
            "expected a logit bonus in nats, 0 (off) or more, e.g. 10; got `{text}`"
        )),
    }
}

/// A sampling temperature in `[0, 2]` (0 is greedy), the range the server accepts.
pub fn temperature(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(t) if (0.0..=2.0).contains(&t) => Ok(t),
        _ => Err(format!(
            "expected a temperature between 0 (greedy) and 2, e.g. 0.6; got `{text}`"
        )),
    }
}

/// A nucleus-sampling mass in `(0, 1]` (1 keeps every token).
pub fn top_p(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(p) if p > 0.0 && p <= 1.0 => Ok(p),
        _ => Err(format!(
            "expected a probability mass above 0 and at most 1 (1: off), e.g. 0.95; got `{text}`"
        )),
    }
}

/// A count of 1 or more (tokens to generate, rows, a batch).
pub fn at_least_one(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("expected a whole number, 1 or more; got `{text}`")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_range_values_are_refused_with_the_range() {
        assert_eq!(temperature("0.6"), Ok(0.6));
        assert_eq!(temperature("0"), Ok(0.0));
        for bad in ["-1", "inf", "NaN", "1000", "hot"] {
            assert!(temperature(bad).unwrap_err().contains("between 0"), "{bad}");
        }
        assert_eq!(top_p("1"), Ok(1.0));
        for bad in ["0", "5", "-0.5"] {
            assert!(top_p(bad).unwrap_err().contains("at most 1"), "{bad}");
        }
        assert_eq!(at_least_one("3"), Ok(3));
        for bad in ["0", "-1", "2.5"] {
            assert!(
                at_least_one(bad).unwrap_err().contains("1 or more"),
                "{bad}"
            );
        }
        assert_eq!(copy_bias("4"), Ok(4.0));
        assert!(copy_bias("-5").unwrap_err().contains("0 (off)"));
    }

    /// `--temperature -1` reaches the range check rather than clap's "unexpected argument".
    #[test]
    fn negative_numbers_reach_the_range_check() {
        use clap::Parser;
        #[derive(Parser, Debug)]
        struct Cli {
            #[arg(long, allow_negative_numbers = true, value_parser = temperature)]
            temperature: Option<f64>,
        }
        let err = Cli::try_parse_from(["x", "--temperature", "-1"]).unwrap_err();
        assert!(err.to_string().contains("between 0"), "{err}");
    }
}
