//! Python string literals as `repr()` writes them (`'it''s'` is not one; `"it's"` is):
//! single or double quotes, escapes `\\ \' \" \n \r \t \a \b \f \v \0 \xHH \uHHHH \UHHHHHHHH`.
//! Used for BrowserGym / WebArena accessibility-tree names and AndroidWorld `UIElement(...)`.

/// Reads the literal at the start of `s`. Returns the decoded string and the bytes consumed,
/// or `None` when `s` does not start with a quote. An unterminated literal takes the rest of
/// `s` and is reported with `complete = false`.
pub(crate) fn read_str(s: &str) -> Option<PyStr> {
    let quote = s.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let mut out = String::new();
    let mut chars = s.char_indices().skip(1);
    while let Some((i, c)) = chars.next() {
        if c == quote {
            return Some(PyStr {
                value: out,
                len: i + 1,
                complete: true,
            });
        }
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some((j, e)) = chars.next() else {
            out.push('\\');
            break;
        };
        let hex = |n: usize| -> Option<char> {
            let digits = s.get(j + 1..j + 1 + n)?;
            if !digits.chars().all(|d| d.is_ascii_hexdigit()) {
                return None;
            }
            char::from_u32(u32::from_str_radix(digits, 16).ok()?)
        };
        let (decoded, skip) = match e {
            'n' => (Some('\n'), 0),
            'r' => (Some('\r'), 0),
            't' => (Some('\t'), 0),
            'a' => (Some('\u{7}'), 0),
            'b' => (Some('\u{8}'), 0),
            'f' => (Some('\u{c}'), 0),
            'v' => (Some('\u{b}'), 0),
            '0' => (Some('\0'), 0),
            '\\' | '\'' | '"' => (Some(e), 0),
            'x' => (hex(2), 2),
            'u' => (hex(4), 4),
            'U' => (hex(8), 8),
            _ => (None, 0),
        };
        match decoded {
            Some(c) => {
                out.push(c);
                for _ in 0..skip {
                    chars.next();
                }
            }
            None => {
                out.push('\\');
                out.push(e);
            }
        }
    }
    Some(PyStr {
        value: out,
        len: s.len(),
        complete: false,
    })
}

/// A decoded Python string literal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PyStr {
    /// The decoded value.
    pub(crate) value: String,
    /// Bytes of the input it spanned (quotes included).
    pub(crate) len: usize,
    /// Whether the closing quote was found.
    pub(crate) complete: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn val(s: &str) -> (String, usize, bool) {
        let p = read_str(s).unwrap();
        (p.value, p.len, p.complete)
    }

    #[test]
    fn literals() {
        assert_eq!(val("'abc' rest"), ("abc".into(), 5, true));
        assert_eq!(val("\"it's\""), ("it's".into(), 6, true));
        assert_eq!(
            val(r"'a\'b\n\x41\u00e9\U0001F33F'"),
            ("a'b\nAé🌿".into(), 28, true)
        );
        assert_eq!(val("''"), ("".into(), 2, true));
        assert_eq!(val("'open"), ("open".into(), 5, false));
        assert_eq!(val(r"'bad \q \x4'"), (r"bad \q \x4".into(), 12, true));
        assert_eq!(val("'trail\\"), ("trail\\".into(), 7, false));
        assert!(read_str("abc").is_none() && read_str("").is_none());
    }
}
