//! A small fixed-capacity ASCII string stored inline, used for the short generated text
//! columns (addresses, cities, phone numbers, names) so that generating a row allocates
//! nothing.
//!
//! The capacities are chosen from the dbgen column widths (`C_ADDR_MAX`, `CITY_FIX`,
//! `PHONE_LEN`, `P_NAME_LEN`, ... in ssb-dbgen's `shared.h`), so a generated value always
//! fits. Should a value ever not fit, the excess is dropped instead of panicking (a
//! `debug_assert!` flags it in debug builds).

use std::fmt;

/// An ASCII string of at most `N` bytes, stored inline.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct InlineStr<const N: usize> {
    len: u8,
    bytes: [u8; N],
}

impl<const N: usize> InlineStr<N> {
    /// The empty string.
    pub const fn new() -> Self {
        Self {
            len: 0,
            bytes: [0; N],
        }
    }

    /// The string's text.
    pub fn as_str(&self) -> &str {
        // Only ASCII bytes are ever pushed, so this never fails.
        std::str::from_utf8(self.as_bytes()).unwrap_or_default()
    }

    /// The string's bytes.
    pub fn as_bytes(&self) -> &[u8] {
        self.bytes.get(..usize::from(self.len)).unwrap_or_default()
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    /// Whether the string is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Append one ASCII byte.
    pub(crate) fn push(&mut self, byte: u8) {
        debug_assert!(byte.is_ascii(), "InlineStr holds ASCII only");
        debug_assert!(usize::from(self.len) < N, "InlineStr<{N}> overflow");
        if let Some(slot) = self.bytes.get_mut(usize::from(self.len))
            && byte.is_ascii()
        {
            *slot = byte;
            self.len += 1;
        }
    }

    /// Append an ASCII string.
    pub(crate) fn push_str(&mut self, s: &str) {
        for &b in s.as_bytes() {
            self.push(b);
        }
    }

    /// Append a non-negative integer in decimal, left-padded with zeros to `width` digits
    /// (C's `%0*ld`). Negative values are written with a leading `-`.
    pub(crate) fn push_int(&mut self, value: i64, width: usize) {
        let mut digits = [0u8; 20];
        let mut n = value.unsigned_abs();
        let mut count = 0;
        loop {
            digits[count] = b'0' + (n % 10) as u8;
            count += 1;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        if value < 0 {
            self.push(b'-');
        }
        for _ in count..width {
            self.push(b'0');
        }
        for &d in digits[..count].iter().rev() {
            self.push(d);
        }
    }
}

impl<const N: usize> Default for InlineStr<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> fmt::Display for InlineStr<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl<const N: usize> fmt::Debug for InlineStr<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl<const N: usize> PartialEq<str> for InlineStr<N> {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl<const N: usize> PartialEq<&str> for InlineStr<N> {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl<const N: usize> AsRef<str> for InlineStr<N> {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_and_read_back() {
        let mut s = InlineStr::<24>::new();
        assert!(s.is_empty());
        s.push_str("Customer#");
        s.push_int(42, 9);
        assert_eq!(s.as_str(), "Customer#000000042");
        assert_eq!(s.len(), 18);
        assert_eq!(s.to_string(), "Customer#000000042");
    }

    #[test]
    fn push_int_widths() {
        let mut s = InlineStr::<32>::new();
        s.push_int(0, 0);
        s.push(b'|');
        s.push_int(7, 2);
        s.push(b'|');
        s.push_int(1234567, 3);
        s.push(b'|');
        s.push_int(-5, 3);
        assert_eq!(s.as_str(), "0|07|1234567|-005");
    }

    #[test]
    fn overflow_is_truncated_not_panicking_in_release() {
        // In debug builds the debug_assert fires; only check the release behaviour there.
        if cfg!(debug_assertions) {
            return;
        }
        let mut s = InlineStr::<4>::new();
        s.push_str("abcdef");
        assert_eq!(s.as_str(), "abcd");
    }
}
