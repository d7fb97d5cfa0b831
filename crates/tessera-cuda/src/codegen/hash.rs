//! Keys of the open-addressing hash tables (`cuda/hash.cuh`): how one or several key
//! columns pack into one 64-bit word, and the table's size.
//!
//! Each key is stored as its offset from the smallest value it can take, in as many bits
//! as its range needs, the keys side by side ([`KeyPack`]). The range comes from the
//! column's statistics when the planner knows it (an `o_orderkey` of TPC-H SF 10 takes 26
//! bits, so `(ps_partkey, ps_suppkey)` packs in 42), else from a dictionary's size, else
//! from the type (a 32-bit key takes 32 bits). One word per key makes a slot one
//! `atomicCAS` to claim and one compare to test, whatever the number of key columns; keys
//! whose ranges need more than 64 bits together stay on the CPU. A build or aggregation
//! row whose key is outside the planned range raises `flags[1]` (the query goes back to
//! the CPU); a probe row outside the build's range has no match. A group key that may be
//! NULL takes one offset more than its range, `span + 1`, for NULL ([`KeyPart::nullable`]):
//! a NULL key is a group like any other, as SQL's GROUP BY has it.

use tessera_ir::{Expr, Field, Type};

use super::builder::{Builder, Lowered};
use super::ir::{CExpr, CType, Load};
use super::layout::{DictRef, bounds};
use super::unsupported::Reason;
use crate::cx;

/// Bits of a packed key.
pub const KEY_BITS: u32 = 64;

/// The marker of an empty slot (`TESSERA_EMPTY_KEY`); no packed key may equal it.
pub const EMPTY_KEY: u64 = u64::MAX;

/// Hash-table slots per row that may be inserted. Linear probing at a load factor of at
/// most one half takes 1.5 probes per hit and 2.5 per miss on average (Knuth), and the
/// first one is issued with the other items' loads (see `probe.rs`): the rest are rare.
pub const SLOTS_PER_ROW: u64 = 2;

/// The smallest table (a few KiB: not worth a smaller allocation).
pub const MIN_SLOTS: u64 = 1 << 10;

/// One key column's place in the packed word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyPart {
    /// The smallest value the key may take (stored as offset 0).
    pub min: i64,
    /// `max − min`: the largest offset.
    pub span: u64,
    /// The offset's lowest bit in the word.
    pub shift: u32,
    /// The dictionary when the key is dictionary codes.
    pub dictionary: Option<DictRef>,
    /// The key's type.
    pub ty: Type,
    /// The key may be NULL: offset `span + 1` stands for NULL (join keys never are: a
    /// NULL key matches nothing and its row is dropped before packing).
    pub nullable: bool,
}

impl KeyPart {
    /// Bits the offset takes (NULL's offset included).
    pub fn bits(&self) -> u32 {
        u64::BITS - (self.span + u64::from(self.nullable)).leading_zeros()
    }

    /// The offset of the key in a packed word.
    fn offset(&self, word: u64) -> u64 {
        let bits = self.bits();
        if bits == 0 { 0 } else { (word >> self.shift) & (u64::MAX >> (64 - bits)) }
    }

    /// The key's value in a packed word (None: NULL).
    pub fn unpack(&self, word: u64) -> Option<i64> {
        let offset = self.offset(word);
        if self.nullable && offset == self.span + 1 {
            return None;
        }
        Some(self.min.wrapping_add(offset as i64))
    }
}

/// How a table's keys pack into one 64-bit word (see the module doc).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyPack {
    /// The key columns, in key order.
    pub parts: Vec<KeyPart>,
}

impl KeyPack {
    /// The packing of keys `keys` over `fields`, with the planner's ranges (`ranges`, per
    /// key), the layout's dictionaries (`dicts`, per column) and which keys may be NULL
    /// (`nullable`, per key; missing: not).
    pub fn plan(keys: &[Expr], ranges: &[Option<(i64, i64)>], fields: &[Field], dicts: &[Option<DictRef>], nullable: &[bool]) -> Lowered<KeyPack> {
        let mut parts = Vec::new();
        let mut shift = 0u32;
        for (i, k) in keys.iter().enumerate() {
            let ty = k.ty(fields);
            let dictionary = match k {
                Expr::Column { index, .. } => dicts.get(*index).copied().flatten(),
                _ => None,
            };
            // Row numbers standing for strings are not comparable: equal strings have
            // different rows.
            let dictionary = match dictionary {
                Some(d) if d.by_row => return Err(Reason::HashKey(format!("{k}: strings without a dictionary"))),
                d => d,
            };
            if ty == Type::Float64 {
                return Err(Reason::HashKey(format!("{k} of type {ty}")));
            }
            let (min, max) = match (ranges.get(i).copied().flatten(), dictionary, ty) {
                (_, Some(d), Type::Utf8) => (0, d.size.saturating_sub(1) as i64),
                (_, None, Type::Utf8) => return Err(Reason::HashKey(format!("{k}: strings without a dictionary"))),
                (Some(r), _, _) => r,
                (None, _, t) => match bounds(t) {
                    Some((lo, hi)) => (lo as i64, hi as i64),
                    None => return Err(Reason::HashKey(format!("{k} of type {t}"))),
                },
            };
            let span = max.wrapping_sub(min) as u64;
            let nullable = nullable.get(i).copied().unwrap_or(false);
            // NULL's offset, `span + 1`, must neither wrap nor be the empty marker.
            if nullable && span >= EMPTY_KEY - 1 {
                return Err(Reason::HashKey(format!("{k}: a 64-bit key that may be NULL leaves no offset for NULL")));
            }
            let part = KeyPart { min, span, shift, dictionary, ty, nullable };
            shift += part.bits();
            if shift > KEY_BITS {
                return Err(Reason::HashKey(format!("{} keys need more than {KEY_BITS} bits together", keys.len())));
            }
            parts.push(part);
        }
        Ok(KeyPack { parts })
    }

    /// Bits the packed keys take.
    pub fn bits(&self) -> u32 {
        self.parts.iter().map(KeyPart::bits).sum()
    }
}

/// The slots of a table that may receive `rows` keys: a power of two (slots are found
/// with a mask), at least [`SLOTS_PER_ROW`] per row.
pub fn table_slots(rows: u64) -> u64 {
    rows.saturating_mul(SLOTS_PER_ROW).max(MIN_SLOTS).checked_next_power_of_two().unwrap_or(1 << 63)
}

/// The packed word of key values `values` (one per part, never NULL) and whether every
/// key is within its part's range (and the word is not [`EMPTY_KEY`]).
pub fn pack_values(b: &mut Builder<'_>, pack: &KeyPack, values: &[CExpr]) -> (CExpr, CExpr) {
    let values: Vec<(CExpr, Option<CExpr>)> = values.iter().map(|v| (v.clone(), None)).collect();
    pack_nullable(b, pack, &values)
}

/// [`pack_values`] of values that may be NULL: each with the condition of not being NULL
/// where it may be (its part is then [`KeyPart::nullable`]); a NULL takes offset `span + 1`.
pub fn pack_nullable(b: &mut Builder<'_>, pack: &KeyPack, values: &[(CExpr, Option<CExpr>)]) -> (CExpr, CExpr) {
    let mut word = CExpr::default();
    let mut in_range = CExpr::default();
    for (part, (v, ok)) in pack.parts.iter().zip(values) {
        // The offset in unsigned arithmetic: below `min` it wraps past `span`.
        let of_value = cx!["(unsigned long long)(long long)(", v.clone(), format!(") - {}ull", part.min as u64)];
        let of_value = match ok.as_ref().filter(|_| part.nullable) {
            Some(ok) => cx!["(", ok.clone(), ") ? ", of_value, format!(" : {}ull", part.span + 1)],
            None => of_value,
        };
        let offset = b.var(CType::ULongLong, "k", of_value);
        if !word.0.is_empty() {
            word = cx![word, " | "];
        }
        word = cx![word, "(", offset.clone(), format!(" << {})", part.shift)];
        // A part whose range is its type's whole range cannot be outside it; NULL's
        // offset is the one past the range.
        if !covers_type(part) {
            if !in_range.0.is_empty() {
                in_range = cx![in_range, " && "];
            }
            let limit = part.span + u64::from(part.nullable);
            in_range = cx![in_range, offset, format!(" <= {limit}ull")];
        }
    }
    let word = b.var(CType::ULongLong, "pk", word);
    if pack.bits() == KEY_BITS {
        if !in_range.0.is_empty() {
            in_range = cx![in_range, " && "];
        }
        in_range = cx![in_range, word.clone(), format!(" != {EMPTY_KEY:#x}ull")];
    }
    if in_range.0.is_empty() {
        in_range = CExpr::text("true");
    }
    (word, in_range)
}

/// The first slot for packed key `word` in a table of `mask + 1` slots, and the key held
/// there, read from `array` (`__ldg` when no thread of the kernel writes it) as a `load`:
/// the stage pass issues the read for all a thread's items before any item uses it.
pub fn first_slot(b: &mut Builder<'_>, word: &CExpr, mask: usize, array: &str, ldg: bool, load: Load) -> (CExpr, CExpr) {
    let first = b.var(CType::ULongLong, "hs", cx!["tessera_hash_slot(", word.clone(), format!(", {mask}ull)")]);
    let name = b.fresh("hk");
    let read = if ldg { cx![format!("__ldg(&{array}["), first.clone(), "])"] } else { cx![format!("{array}["), first.clone(), "]"] };
    let at = b.def(CType::ULongLong, name, read, Some(load));
    (first, at)
}

/// Whether a part's range is the whole range of its type's stored values.
fn covers_type(part: &KeyPart) -> bool {
    part.dictionary.is_none() && bounds(part.ty).is_some_and(|(lo, hi)| lo as i64 == part.min && (hi as i64).wrapping_sub(lo as i64) as u64 == part.span)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(index: usize, ty: Type) -> (Expr, Field) {
        (Expr::Column { index, name: format!("c{index}") }, Field::new(format!("c{index}"), ty, false))
    }

    #[test]
    fn keys_pack_side_by_side_in_the_bits_their_ranges_need() {
        let (a, fa) = col(0, Type::Int64);
        let (b, fb) = col(1, Type::Int32);
        let pack = KeyPack::plan(&[a, b], &[Some((1, 2_000_000)), None], &[fa, fb], &[None, None], &[]).unwrap();
        assert_eq!(pack.parts[0].bits(), 21);
        assert_eq!(pack.parts[1].shift, 21);
        assert_eq!(pack.parts[1].bits(), 32);
        assert_eq!(pack.bits(), 53);
        let word = (1_999_999u64 - 1) | ((u64::from((-5i32) as u32 ^ 0x8000_0000)) << 21);
        assert_eq!(pack.parts[0].unpack(word), Some(1_999_999));
        assert_eq!(pack.parts[1].unpack(word), Some(-5));
    }

    #[test]
    fn keys_wider_than_a_word_together_are_refused() {
        let (a, fa) = col(0, Type::Int64);
        let (b, fb) = col(1, Type::Int64);
        let err = KeyPack::plan(&[a.clone(), b], &[None, Some((0, 10))], &[fa.clone(), fb], &[None, None], &[]).unwrap_err();
        assert!(matches!(err, Reason::HashKey(_)), "{err:?}");
        // One full 64-bit key fits (the empty marker is refused per row).
        let pack = KeyPack::plan(&[a.clone()], &[None], &[fa.clone()], &[None], &[]).unwrap();
        assert_eq!(pack.bits(), 64);
        assert_eq!(pack.parts[0].unpack(0), Some(i64::MIN + 1));
        assert_eq!(pack.parts[0].unpack(u64::MAX - 1), Some(i64::MAX));
        // But not one that may be NULL: no offset is left for NULL.
        let err = KeyPack::plan(&[a], &[None], &[fa], &[None], &[true]).unwrap_err();
        assert!(matches!(err, Reason::HashKey(_)), "{err:?}");
    }

    #[test]
    fn a_key_that_may_be_null_takes_the_offset_past_its_range() {
        let (a, fa) = col(0, Type::Int64);
        let (b, fb) = col(1, Type::Int32);
        // 0..=7 takes 3 bits; with NULL (offset 8), 4.
        let pack = KeyPack::plan(&[a, b], &[Some((10, 17)), None], &[fa, fb], &[None, None], &[true, true]).unwrap();
        assert_eq!((pack.parts[0].bits(), pack.parts[1].shift, pack.parts[1].bits()), (4, 4, 33));
        let word = 8 | (1u64 << 32 << 4);
        assert_eq!((pack.parts[0].unpack(word), pack.parts[1].unpack(word)), (None, None));
        let word = 7 | (5u64 << 4);
        assert_eq!((pack.parts[0].unpack(word), pack.parts[1].unpack(word)), (Some(17), Some(i64::from(i32::MIN) + 5)));
    }

    #[test]
    fn tables_have_two_slots_per_row_in_a_power_of_two() {
        assert_eq!(table_slots(0), MIN_SLOTS);
        assert_eq!(table_slots(1_500_000), 4 << 20);
        assert_eq!(table_slots(1 << 20), 2 << 20);
        assert_eq!(table_slots(u64::MAX), 1 << 63);
    }
}
