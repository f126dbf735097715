//! Text from a repository or an agent as a terminal may show it: control
//! characters escaped, so none can move the cursor, recolour the screen or
//! retitle the window.

/// Every control character escaped (`\n` too): for one-line fields such as
/// an audit trail's tool names and queries.
pub fn printable(text: &str) -> String {
    escaped(text, false)
}

/// Control characters escaped but line breaks and tabs kept, and `\r`
/// before `\n` (a CRLF file's lines): for whole answers printed on a
/// terminal. An escape sequence (`ESC [ 2 J`), a lone `\r` that would
/// overwrite the line, a backspace and the C1 controls come out as text.
pub fn terminal_safe(text: &str) -> String {
    escaped(text, true)
}

/// `text` with its control characters escaped, line breaks and tabs kept
/// when `lines`.
fn escaped(text: &str, lines: bool) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let kept =
            lines && (matches!(c, '\n' | '\t') || (c == '\r' && chars.peek() == Some(&'\n')));
        if c.is_control() && !kept {
            out.extend(c.escape_default());
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_become_text_and_lines_stay_lines() {
        assert_eq!(
            terminal_safe("a\u{1b}]0;owned\u{7}b\r\nc\rd\te\u{9b}2J"),
            "a\\u{1b}]0;owned\\u{7}b\r\nc\\rd\te\\u{9b}2J"
        );
        assert_eq!(terminal_safe("plain\ntext"), "plain\ntext");
        assert_eq!(printable("q\nx\u{1b}"), "q\\nx\\u{1b}");
    }
}
