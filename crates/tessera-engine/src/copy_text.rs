//! PostgreSQL's COPY formats field by field: reading the text format (a line a row,
//! fields split at a delimiter, `\N` for NULL, backslash escapes) and writing fields of
//! the text and CSV formats for `COPY … TO STDOUT`. CSV is read by Arrow's reader
//! ([`crate::copy`]).
//!
//! The rules are PostgreSQL's (its documentation of COPY, "File Formats"): in the text
//! format a backslash escapes the next character (`\b \f \n \r \t \v`, octal `\ooo`,
//! hex `\xhh`, anything else stands for itself, the delimiter and a line break
//! included); the NULL marker is compared with a field before its escapes are read; a
//! line `\.` ends the data. In CSV a field is quoted when it holds the delimiter, the
//! quote, a line break, or reads as the NULL marker.

use std::io::BufRead;

/// Reads the lines of text-format COPY data, each split into its fields.
pub(crate) struct TextReader<R> {
    input: R,
    delimiter: u8,
    null: Vec<u8>,
    /// The current line's bytes (a line that continues past an escaped line break
    /// included).
    line: Vec<u8>,
    /// The number of the last line read (1-based).
    line_number: u64,
    /// A decoded field, reused.
    field: Vec<u8>,
    done: bool,
}

impl<R: BufRead> TextReader<R> {
    /// A reader of `input` with fields split at `delimiter` and `null` the NULL marker.
    pub(crate) fn new(input: R, delimiter: u8, null: &str) -> Self {
        TextReader {
            input,
            delimiter,
            null: null.as_bytes().to_vec(),
            line: Vec::new(),
            line_number: 0,
            field: Vec::new(),
            done: false,
        }
    }

    /// The number of the last line read (1-based): a row's last line.
    pub(crate) fn line_number(&self) -> u64 {
        self.line_number
    }

    /// Skips one line (a header).
    pub(crate) fn skip_line(&mut self) -> Result<(), String> {
        self.read_line().map(|_| ())
    }

    /// Reads the next row into `fields` (None: NULL); false at the end of the data.
    pub(crate) fn next_row(&mut self, fields: &mut Vec<Option<String>>) -> Result<bool, String> {
        fields.clear();
        let Some(end) = self.read_line()? else {
            return Ok(false);
        };
        let (line, null, field) = (&self.line[..end], self.null.as_slice(), &mut self.field);
        let mut push = |raw: &[u8], fields: &mut Vec<Option<String>>| -> Result<(), String> {
            if raw == null {
                fields.push(None);
            } else {
                unescape(raw, field);
                let text = std::str::from_utf8(field).map_err(|_| format!("field {} is not valid UTF-8", fields.len() + 1))?;
                fields.push(Some(text.to_string()));
            }
            Ok(())
        };
        let (mut start, mut i) = (0, 0);
        while i < end {
            match line[i] {
                b if b == self.delimiter => {
                    push(&line[start..i], fields)?;
                    start = i + 1;
                    i += 1;
                }
                // The escaped byte, a delimiter included, belongs to the field.
                b'\\' => i += 2,
                _ => i += 1,
            }
        }
        push(&line[start..], fields)?;
        Ok(true)
    }

    /// Reads one line into `self.line`; the length of its content (without its line
    /// break), or None at the end of the data (the input's end or a `\.` line).
    fn read_line(&mut self) -> Result<Option<usize>, String> {
        self.line.clear();
        if self.done {
            return Ok(None);
        }
        loop {
            let read = self.input.read_until(b'\n', &mut self.line).map_err(|e| format!("reading the data: {e}"))?;
            if read == 0 {
                break;
            }
            self.line_number += 1;
            // A line break after an odd number of backslashes is data: read on.
            if self.line.last() == Some(&b'\n') && !trailing_backslashes(&self.line[..self.line.len() - 1]).is_multiple_of(2) {
                continue;
            }
            break;
        }
        if self.line.is_empty() {
            self.done = true;
            return Ok(None);
        }
        let mut end = self.line.len();
        if self.line[end - 1] == b'\n' {
            end -= 1;
            if end > 0 && self.line[end - 1] == b'\r' && trailing_backslashes(&self.line[..end - 1]).is_multiple_of(2) {
                end -= 1;
            }
        }
        if &self.line[..end] == b"\\." {
            self.done = true;
            return Ok(None);
        }
        Ok(Some(end))
    }
}

fn trailing_backslashes(bytes: &[u8]) -> usize {
    bytes.iter().rev().take_while(|&&b| b == b'\\').count()
}

/// A text-format field with its backslash escapes read, into `out` (cleared first).
fn unescape(raw: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let mut i = 0;
    while i < raw.len() {
        let b = raw[i];
        i += 1;
        if b != b'\\' {
            out.push(b);
            continue;
        }
        let Some(&c) = raw.get(i) else {
            out.push(b'\\'); // a lone backslash at the very end stands for itself
            break;
        };
        i += 1;
        match c {
            b'b' => out.push(8),
            b'f' => out.push(12),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            b't' => out.push(b'\t'),
            b'v' => out.push(11),
            b'0'..=b'7' => {
                let mut v = u32::from(c - b'0');
                for _ in 0..2 {
                    match raw.get(i) {
                        Some(&d @ b'0'..=b'7') => {
                            v = v * 8 + u32::from(d - b'0');
                            i += 1;
                        }
                        _ => break,
                    }
                }
                out.push((v & 0xff) as u8);
            }
            b'x' if raw.get(i).is_some_and(u8::is_ascii_hexdigit) => {
                let mut v = 0u32;
                for _ in 0..2 {
                    match raw.get(i).and_then(|d| (*d as char).to_digit(16)) {
                        Some(d) => {
                            v = v * 16 + d;
                            i += 1;
                        }
                        None => break,
                    }
                }
                out.push(v as u8);
            }
            other => out.push(other),
        }
    }
}

/// Appends `value` as a text-format field: backslash, the control characters with
/// their own escapes and the delimiter are written with a backslash.
pub(crate) fn write_text_field(value: &[u8], delimiter: u8, out: &mut Vec<u8>) {
    for &b in value {
        match b {
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            8 => out.extend_from_slice(b"\\b"),
            12 => out.extend_from_slice(b"\\f"),
            11 => out.extend_from_slice(b"\\v"),
            _ if b == delimiter => {
                out.push(b'\\');
                out.push(b);
            }
            _ => out.push(b),
        }
    }
}

/// Appends `value` as a CSV field, quoted where it holds the delimiter, the quote, a
/// line break, is the NULL marker or `\.` (which would end the data); inside quotes the
/// quote and the escape characters are preceded by the escape character.
pub(crate) fn write_csv_field(value: &[u8], delimiter: u8, quote: u8, escape: u8, null: &[u8], out: &mut Vec<u8>) {
    let quoted = value == null
        || value == b"\\."
        || value.iter().any(|&b| b == delimiter || b == quote || b == b'\n' || b == b'\r');
    if !quoted {
        out.extend_from_slice(value);
        return;
    }
    out.push(quote);
    for &b in value {
        if b == quote || b == escape {
            out.push(escape);
        }
        out.push(b);
    }
    out.push(quote);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(data: &str) -> Result<Vec<Vec<Option<String>>>, String> {
        let mut reader = TextReader::new(data.as_bytes(), b'\t', "\\N");
        let mut out = Vec::new();
        let mut fields = Vec::new();
        while reader.next_row(&mut fields)? {
            out.push(fields.clone());
        }
        Ok(out)
    }

    fn s(v: &str) -> Option<String> {
        Some(v.to_string())
    }

    #[test]
    fn text_format_fields_nulls_and_escapes() {
        assert_eq!(rows("1\ta\n2\t\\N\n").ok(), Some(vec![vec![s("1"), s("a")], vec![s("2"), None]]));
        // Escapes: tab, newline, backslash, an escaped delimiter, octal and hex.
        assert_eq!(rows("a\\tb\\nc\\\\d\\\te\t\\101\\x42\\x\n").ok(), Some(vec![vec![s("a\tb\nc\\d\te"), s("AB\x78")]]));
        // `\\N` is a backslash and an N, not NULL; an empty field is an empty string.
        assert_eq!(rows("\\\\N\t\n").ok(), Some(vec![vec![s("\\N"), s("")]]));
        // CRLF line ends, a last line without a line break, and the end marker.
        assert_eq!(rows("x\ty\r\nz\tw").ok(), Some(vec![vec![s("x"), s("y")], vec![s("z"), s("w")]]));
        assert_eq!(rows("x\ty\n\\.\nignored\n").ok(), Some(vec![vec![s("x"), s("y")]]));
        // A backslash before a line break continues the value on the next line.
        assert_eq!(rows("a\\\nb\tc\n").ok(), Some(vec![vec![s("a\nb"), s("c")]]));
        assert_eq!(rows("").ok(), Some(vec![]));
        assert!(rows("\\xff\n").is_err(), "not UTF-8");
        // A backslash as the very last byte stands for itself.
        assert_eq!(rows("a\\").ok(), Some(vec![vec![s("a\\")]]));
    }

    #[test]
    fn text_fields_round_trip() {
        for value in ["plain", "tab\there", "new\nline", "back\\slash", "\\N", "cr\r", "", "ünï"] {
            let mut out = Vec::new();
            write_text_field(value.as_bytes(), b'\t', &mut out);
            out.extend_from_slice(b"\tend\n");
            let read = rows(std::str::from_utf8(&out).unwrap_or_default());
            assert_eq!(read.ok(), Some(vec![vec![s(value), s("end")]]), "{value:?}");
        }
    }

    #[test]
    fn csv_fields_quoted_where_needed() {
        let csv = |v: &str| {
            let mut out = Vec::new();
            write_csv_field(v.as_bytes(), b',', b'"', b'"', b"", &mut out);
            String::from_utf8(out).unwrap_or_default()
        };
        assert_eq!(csv("plain"), "plain");
        assert_eq!(csv("a,b"), "\"a,b\"");
        assert_eq!(csv("say \"hi\""), "\"say \"\"hi\"\"\"");
        assert_eq!(csv("two\nlines"), "\"two\nlines\"");
        assert_eq!(csv(""), "\"\"", "an empty string is not the NULL marker");
        assert_eq!(csv("\\."), "\"\\.\"");
    }
}
