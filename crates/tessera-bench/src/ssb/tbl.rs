//! dbgen's flat-file (`.tbl`) output format.
//!
//! `dbg_print()` in ssb-dbgen's `print.c` writes every field — the last one included —
//! followed by the `|` separator, and ends each row with `\n`. Integers are plain decimal
//! (`%ld`), strings are written as is, and dates are `yyyymmdd` integers in SSB.
//!
//! [`TblRow`] is implemented by every SSB row type; [`write_tbl`] streams rows to any
//! [`io::Write`] through a reusable buffer, formatting integers by hand to keep the per-row
//! cost low.

use std::io;

/// Appends one row's fields to a byte buffer, each followed by `|`.
pub struct TblFields<'a> {
    out: &'a mut Vec<u8>,
}

impl<'a> TblFields<'a> {
    /// Start writing fields at the end of `out`.
    pub fn new(out: &'a mut Vec<u8>) -> Self {
        Self { out }
    }

    /// An integer field.
    #[inline]
    pub fn int(&mut self, value: i64) -> &mut Self {
        push_int(self.out, value);
        self.out.push(b'|');
        self
    }

    /// A string field.
    #[inline]
    pub fn str(&mut self, value: &str) -> &mut Self {
        for &b in value.as_bytes() {
            self.out.push(b);
        }
        self.out.push(b'|');
        self
    }

    /// A flag field, written as `1` or `0`.
    #[inline]
    pub fn flag(&mut self, value: bool) -> &mut Self {
        self.out
            .extend_from_slice(if value { b"1|" } else { b"0|" });
        self
    }
}

/// `"00" "01" .. "99"`: two decimal digits at a time.
const DIGIT_PAIRS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// Append `value` in decimal.
#[inline]
fn push_int(out: &mut Vec<u8>, value: i64) {
    let mut digits = [0u8; 20];
    let mut n = value.unsigned_abs();
    let mut pos = digits.len();
    while n >= 100 {
        let pair = (n % 100) as usize * 2;
        n /= 100;
        pos -= 2;
        digits[pos..pos + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    }
    if n >= 10 {
        let pair = n as usize * 2;
        pos -= 2;
        digits[pos..pos + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    } else {
        pos -= 1;
        digits[pos] = b'0' + n as u8;
    }
    if value < 0 {
        out.push(b'-');
    }
    // Byte-wise pushes: for a handful of bytes this beats a `memmove` call.
    for &d in &digits[pos..] {
        out.push(d);
    }
}

/// A row that can be written as one line of a dbgen `.tbl` file.
pub trait TblRow {
    /// Append this row's fields (each followed by `|`), without the line end.
    fn write_fields(&self, fields: &mut TblFields<'_>);

    /// Append this row as a complete `.tbl` line, `\n` included.
    fn write_tbl(&self, out: &mut Vec<u8>) {
        out.reserve(256);
        self.write_fields(&mut TblFields::new(out));
        out.push(b'\n');
    }

    /// This row's `.tbl` line without the trailing `\n` (what `Display` prints).
    fn to_tbl_string(&self) -> String {
        let mut buf = Vec::with_capacity(160);
        self.write_fields(&mut TblFields::new(&mut buf));
        // Every field is ASCII, so this conversion cannot fail.
        String::from_utf8(buf).unwrap_or_default()
    }
}

/// Implements `Display` for a row type as its `.tbl` line (without `\n`).
macro_rules! display_as_tbl {
    ($ty:ty) => {
        impl ::std::fmt::Display for $ty {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(&$crate::ssb::tbl::TblRow::to_tbl_string(self))
            }
        }
    };
}
pub(crate) use display_as_tbl;

/// Write `rows` to `out` in `.tbl` format, one line per row. Returns the number of rows
/// written. Output is buffered internally; `out` need not be buffered.
pub fn write_tbl<R, I, W>(rows: I, mut out: W) -> io::Result<u64>
where
    R: TblRow,
    I: IntoIterator<Item = R>,
    W: io::Write,
{
    const FLUSH_AT: usize = 1 << 16;
    let mut buf = Vec::with_capacity(FLUSH_AT + 512);
    let mut count = 0u64;
    for row in rows {
        row.write_tbl(&mut buf);
        count += 1;
        if buf.len() >= FLUSH_AT {
            out.write_all(&buf)?;
            buf.clear();
        }
    }
    out.write_all(&buf)?;
    out.flush()?;
    Ok(count)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    struct Row(i64, &'static str, bool);

    impl TblRow for Row {
        fn write_fields(&self, fields: &mut TblFields<'_>) {
            fields.int(self.0).str(self.1).flag(self.2);
        }
    }

    #[test]
    fn fields_end_with_separator() {
        assert_eq!(Row(1, "AIR", true).to_tbl_string(), "1|AIR|1|");
        assert_eq!(Row(-42, "", false).to_tbl_string(), "-42||0|");
        assert_eq!(
            Row(i64::MIN, "x", false).to_tbl_string(),
            "-9223372036854775808|x|0|"
        );
        assert_eq!(
            Row(1234567890, "a b", true).to_tbl_string(),
            "1234567890|a b|1|"
        );
    }

    #[test]
    fn write_tbl_writes_lines() {
        let mut out = Vec::new();
        let n = write_tbl([Row(1, "a", true), Row(2, "b", false)], &mut out).unwrap();
        assert_eq!(n, 2);
        assert_eq!(String::from_utf8(out).unwrap(), "1|a|1|\n2|b|0|\n");
    }
}
