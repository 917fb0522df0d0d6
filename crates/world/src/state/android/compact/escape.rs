//! Quoted strings of `android-compact`.

/// Writes `s` as a quoted string: `\\`, `\"`, `\n`, `\r`, `\t`, `\u{HEX}` for other control
/// characters and line/paragraph separators; everything else unchanged.
pub(crate) fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() || c == '\u{2028}' || c == '\u{2029}' => {
                out.push_str(&format!("\\u{{{:x}}}", c as u32))
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Why a quoted string could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum QuoteError {
    /// The input does not start with `"`.
    NotQuoted,
    /// The closing quote is missing; carries what was read.
    Unterminated(String),
    /// A bad escape at this byte offset.
    BadEscape(usize),
}

/// Reads a quoted string at the start of `s`; returns the value and the bytes consumed.
pub(crate) fn unquote(s: &str) -> Result<(String, usize), QuoteError> {
    let mut chars = s.char_indices();
    if chars.next().map(|(_, c)| c) != Some('"') {
        return Err(QuoteError::NotQuoted);
    }
    let mut out = String::new();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Ok((out, i + 1)),
            '\\' => match chars.next() {
                Some((_, '\\')) => out.push('\\'),
                Some((_, '"')) => out.push('"'),
                Some((_, 'n')) => out.push('\n'),
                Some((_, 'r')) => out.push('\r'),
                Some((_, 't')) => out.push('\t'),
                Some((_, 'u')) => {
                    let rest = &s[i + 2..];
                    let close = rest
                        .find('}')
                        .filter(|_| rest.starts_with('{'))
                        .ok_or(QuoteError::BadEscape(i))?;
                    let code = u32::from_str_radix(&rest[1..close], 16)
                        .map_err(|_| QuoteError::BadEscape(i))?;
                    out.push(char::from_u32(code).ok_or(QuoteError::BadEscape(i))?);
                    for _ in 0..=close {
                        chars.next();
                    }
                }
                None => return Err(QuoteError::Unterminated(out)),
                Some(_) => return Err(QuoteError::BadEscape(i)),
            },
            c => out.push(c),
        }
    }
    Err(QuoteError::Unterminated(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_round_trip() {
        for s in [
            "",
            "plain",
            "say \"hi\"",
            "back\\slash",
            "a\nb\r\nc\td",
            "🌿 茶 ☕",
            "\u{1}\u{7f}\u{2028}",
            "\\n literal",
            "\\u{41}",
        ] {
            let q = quote(s);
            assert!(!q.contains('\n'), "{q}");
            assert_eq!(unquote(&q), Ok((s.to_string(), q.len())), "{s:?} -> {q}");
        }
        assert_eq!(quote("a\"\n🌿"), "\"a\\\"\\n🌿\"");
        assert_eq!(quote("\u{1}"), "\"\\u{1}\"");
    }

    #[test]
    fn reads_only_the_first_string() {
        assert_eq!(unquote("\"ab\" rest"), Ok(("ab".into(), 4)));
        assert_eq!(unquote("\"\\u{1F33F}\""), Ok(("🌿".into(), 11)));
    }

    #[test]
    fn errors() {
        assert_eq!(unquote("x"), Err(QuoteError::NotQuoted));
        assert_eq!(
            unquote("\"abc"),
            Err(QuoteError::Unterminated("abc".into()))
        );
        assert_eq!(
            unquote("\"ab\\"),
            Err(QuoteError::Unterminated("ab".into()))
        );
        assert_eq!(unquote("\"a\\q\""), Err(QuoteError::BadEscape(2)));
        assert_eq!(unquote("\"\\u{zz}\""), Err(QuoteError::BadEscape(1)));
        assert_eq!(unquote("\"\\u{d800}\""), Err(QuoteError::BadEscape(1)));
        assert_eq!(unquote("\"\\u41\""), Err(QuoteError::BadEscape(1)));
    }
}
