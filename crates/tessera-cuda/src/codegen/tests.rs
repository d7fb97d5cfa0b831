//! Tests of the generator as a whole: generated kernels for each operator family
//! (checked against golden files in `tests/golden/`), tile shapes, stages, probes and
//! sinks.
#![allow(clippy::unwrap_used)]

use super::*;
use super::scan::{EAGER_MIN_SECTORS, sector_share};
use tessera_ir::{AggFunc, ArithOp, BuildStrategy, CmpOp, Expr, GroupStrategy, JoinKind, KeyDomain, Operator, Pipeline, Scalar, Sink, Type};
use tessera_ir::{AggExpr, Aggregate, Device, Field, Scan, Source};

fn int_col() -> GpuColumn {
    GpuColumn::plain(Width::I32, None)
}

/// `SELECT k, sum(v) FROM t WHERE v < 10 GROUP BY k` with `k` in `[0, max]`.
fn grouped(max: i64, func: AggFunc) -> Pipeline {
    let fields = vec![Field::new("k", Type::Int32, false), Field::new("v", Type::Int64, false)];
    let ty = Type::Int64;
    Pipeline {
        id: 1,
        source: Source::Scan(Scan {
            table: "t".into(),
            version: 1,
            columns: vec![0, 1],
            fields: fields.clone(),
            dictionary: vec![false, false],
            rows: 1000,
            kept_permille: 1000,
        }),
        operators: vec![Operator::Filter(Expr::Cmp {
            op: CmpOp::Lt,
            left: Box::new(Expr::col(1, "v")),
            right: Box::new(Expr::lit(Scalar::Int(10), Type::Int64)),
        })],
        sink: Sink::Aggregate(Aggregate {
            result: 0,
            group_by: vec![Expr::col(0, "k")],
            aggregates: vec![AggExpr { func, arg: Some(Expr::col(1, "v")), distinct: false, ty, name: "a".into() }],
            strategy: GroupStrategy::Perfect { domains: vec![KeyDomain::Range { min: 0, max }] },
            fields: vec![Field::new("k", Type::Int32, false), Field::new("a", ty, true)],
            reduced: None,
            value_ranges: Vec::new(),
        }),
        device: Device::Gpu,
        device_reason: None,
    }
}

fn cols() -> Vec<GpuColumn> {
    vec![int_col(), GpuColumn::plain(Width::I64, None)]
}

#[test]
fn group_table_choice_follows_the_shared_budget() {
    let table = |groups, acc: &[Accumulator]| group_table(groups, acc, SHARED_AGG_BYTES, DIRECT_DOMAIN_MAX_BYTES);
    let sum = [Accumulator::Sum(SumRepr::I128)];
    // 20 bytes a slot: 409 slots fit in the 8 KiB a large domain's direct table may take.
    assert_eq!(table(400, &sum), GroupTable::Direct { slots: 400, copies: 1 });
    assert_eq!(table(410, &sum), GroupTable::Global);
    // A 64-bit sum: 12 bytes a slot. 625 slots (SSB's nation pairs) direct, 1,001 (its
    // brands) global.
    assert_eq!(table(625, &[Accumulator::Sum(SumRepr::I64)]), GroupTable::Direct { slots: 625, copies: 1 });
    assert_eq!(table(1001, &[Accumulator::Sum(SumRepr::I64)]), GroupTable::Global);
    // With the whole shared budget for large domains too (the rule before 2026-11-28i).
    assert_eq!(group_table(1300, &[Accumulator::Sum(SumRepr::I64)], SHARED_AGG_BYTES, SHARED_AGG_BYTES), GroupTable::Direct { slots: 1300, copies: 1 });
    // Fewer slots than a warp has lanes: a copy per lane where the budget allows (6
    // slots x 32 copies x 20 bytes = 3 840), fewer for wider slots (TPC-H q1's shape: 6
    // slots of 8 aggregates, 124 bytes, 16 copies), one from 32 slots on. The large
    // domains' limit does not apply.
    assert_eq!(table(6, &sum), GroupTable::Direct { slots: 6, copies: 32 });
    let q1 = [
        [Accumulator::Sum(SumRepr::Split); 4].as_slice(),
        &[Accumulator::SumCount(SumRepr::I64); 3],
        &[Accumulator::Count],
    ]
    .concat();
    assert_eq!(table(6, &q1), GroupTable::Direct { slots: 6, copies: 16 });
    assert_eq!(table(31, &q1), GroupTable::Direct { slots: 31, copies: 4 });
    assert_eq!(table(32, &sum), GroupTable::Direct { slots: 32, copies: 1 });
    assert_eq!(table_copies(1, 16 << 10, SHARED_AGG_BYTES), 1);
    // SSB q2.1's 8 008-slot domain: global atomics (measured faster than a shared
    // hash table).
    assert_eq!(table(8008, &sum), GroupTable::Global);
    // Many wide accumulators leave too few slots to be worth it.
    let wide = [Accumulator::SumCount(SumRepr::Split); 8];
    assert_eq!(table(100_000, &wide), GroupTable::Global);
}

#[test]
fn sums_are_as_narrow_as_rows_and_values_allow() {
    // 120 M rows of a 32-bit value (SSB at SF 20): 64 bits hold any total.
    assert_eq!(SumRepr::for_rows(120_000_000, 1 << 31), SumRepr::I64);
    // Decimals of 18 digits: not in 64 bits, but in split halves below 2^32 rows.
    assert_eq!(SumRepr::for_rows(120_000_000, 10u128.pow(18) - 1), SumRepr::Split);
    assert_eq!(SumRepr::for_rows(1 << 32, 10u128.pow(18) - 1), SumRepr::I128);
    // Totals back from the words, negative ones included.
    assert_eq!(SumRepr::I64.total(&[(-5i64) as u64]), -5);
    assert_eq!(SumRepr::I128.total(&[u64::MAX, u64::MAX]), -1);
    // Split: lo sums the low halves unsigned, hi the high halves signed. Adding -1 and
    // 2^40 + 7: lo = 0xffff_ffff + 7, hi = -1 + 256.
    let (a, b) = (-1i64, (1i64 << 40) + 7);
    let lo = u64::from(a as u32) + u64::from(b as u32);
    let hi = ((a >> 32) + (b >> 32)) as u64;
    assert_eq!(SumRepr::Split.total(&[lo, hi]), i128::from(a) + i128::from(b));
}

#[test]
fn magnitudes_follow_types_literals_and_arithmetic() {
    let fields = vec![Field::new("a", Type::Int32, false), Field::new("d", Type::Decimal { precision: 15, scale: 2 }, false)];
    let a = Expr::col(0, "a");
    assert_eq!(magnitude(&a, &fields), 1 << 31);
    let diff = Expr::Arith { op: ArithOp::Sub, left: Box::new(a.clone()), right: Box::new(a.clone()), ty: Type::Int64 };
    assert_eq!(magnitude(&diff, &fields), 1 << 32);
    let lit = Expr::lit(Scalar::Int(-3), Type::Int64);
    let prod = Expr::Arith { op: ArithOp::Mul, left: Box::new(a.clone()), right: Box::new(lit), ty: Type::Int64 };
    assert_eq!(magnitude(&prod, &fields), 3 << 31);
    // A result never exceeds its type's range: a 32-bit product stays within 2^31.
    let narrow = Expr::Arith { op: ArithOp::Mul, left: Box::new(a.clone()), right: Box::new(a), ty: Type::Int32 };
    assert_eq!(magnitude(&narrow, &fields), 1 << 31);
    assert_eq!(magnitude(&Expr::col(1, "d"), &fields), 10u128.pow(15) - 1);
}

#[test]
fn grouped_sums_add_with_fire_and_forget_atomics() {
    // 1000 rows of an int32 value: 64 bits hold any total, one reduction per row
    // into the shared table, merged the same way; exact up to 2^63 / 2^31 rows.
    let mut p = grouped(9, AggFunc::Sum);
    let Source::Scan(scan) = &mut p.source else { unreachable!() };
    scan.fields[1].ty = Type::Int32;
    let k = wide_rows(&p, &[int_col(), int_col()], &[]);
    assert!(k.source.contains("__shared__ long long sh_a0[352]"), "{}", k.source);
    assert!(k.source.contains("atomicAdd((unsigned long long*)&sh_a0["), "{}", k.source);
    assert!(k.source.contains("atomicAdd((unsigned long long*)&out_a0[grp], (unsigned long long)m_a0)"), "{}", k.source);
    assert!(!k.source.contains("atomic_add_i128"), "{}", k.source);
    assert_eq!(k.rows_limit, (1 << 32) - 1);
    // A large domain (global arrays) of int64 values: split halves, below 2^32 rows.
    let k = wide_rows(&grouped(99_999, AggFunc::Sum), &cols(), &[]);
    assert!(k.source.contains("atomic_add_split(&out_a0["), "{}", k.source);
    assert!(k.source.contains("SplitSum* __restrict__ out_a0"), "{}", k.source);
    assert_eq!(k.rows_limit, (1 << 32) - 1);
    if crate::test_support::nvrtc_or_skip("split-sum kernels compile with NVRTC") {
        crate::compile_cubin(&k.source, "sm_90").unwrap_or_else(|e| panic!("{e}\n{}", k.source));
    }
}

#[test]
fn long_in_lists_test_a_bitmap_passed_with_the_launch() {
    // `v IN (0, 3, 6, …, 297)`: 100 values, too many to compare one by one.
    let with = |step: i64, literals| {
        let mut p = grouped(9, AggFunc::Sum);
        let list = (0..100).map(|k| Scalar::Int(k * step)).collect();
        p.operators = vec![Operator::Filter(Expr::InList { expr: Box::new(Expr::col(1, "v")), list, negated: false })];
        generate_with(&p, &cols(), &[], KernelOptions { literals, ..KernelOptions::default() }).unwrap()
    };
    let k = with(3, Literals::Parameters);
    assert!(k.source.contains("consts[0]"), "{}", k.source);
    assert!(!k.source.contains("== 297"), "{}", k.source);
    // consts: the first value, the bitmap's length in bits, then its words.
    let bits = 298usize;
    assert!(k.literals.is_empty());
    assert_eq!(k.consts.len(), 2 + bits.div_ceil(64));
    assert_eq!((k.consts[0], k.consts[1]), (0, bits as i64));
    let words: Vec<u64> = k.consts[2..].iter().map(|&w| w as u64).collect();
    for v in 0..bits {
        assert_eq!(words[v / 64] >> (v % 64) & 1 == 1, v % 3 == 0, "bit {v}");
    }
    // Another list of the same shape shares the kernel; inlined literals still pass the
    // bitmap as a parameter.
    assert_eq!(with(2, Literals::Parameters).source, k.source);
    let inline = with(3, Literals::Inline);
    assert_eq!(inline.consts, k.consts);
    for k in [&k, &inline] {
        if crate::test_support::nvrtc_or_skip("long IN list kernel compiles") {
            if let Err(e) = crate::compile_cubin(&k.source, "sm_90") {
                panic!("{e}\n{}", k.source);
            }
        }
    }
    // Short lists keep their compares.
    let mut p = grouped(9, AggFunc::Sum);
    p.operators = vec![Operator::Filter(Expr::InList { expr: Box::new(Expr::col(1, "v")), list: vec![Scalar::Int(1), Scalar::Int(5)], negated: false })];
    let short = generate(&p, &cols(), &[]).unwrap();
    assert!(short.literals.is_empty() && short.consts.is_empty() && short.source.contains("== 5LL"), "{}", short.source);
}

#[test]
fn literals_as_parameters_share_one_kernel_across_constants() {
    let with = |v: i64, literals| {
        let mut p = grouped(9, AggFunc::Sum);
        p.operators = vec![Operator::Filter(Expr::Cmp {
            op: CmpOp::Lt,
            left: Box::new(Expr::col(1, "v")),
            right: Box::new(Expr::lit(Scalar::Int(v), Type::Int64)),
        })];
        generate_with(&p, &cols(), &[], KernelOptions { literals, ..KernelOptions::default() }).unwrap()
    };
    let (a, b) = (with(10, Literals::Parameters), with(77, Literals::Parameters));
    assert_eq!(a.source, b.source);
    assert_eq!((a.literals.clone(), b.literals.clone()), (vec![10], vec![77]));
    assert!(a.source.contains(", const long long lit0)"), "{}", a.source);
    assert!(a.source.contains("< (long long)(lit0)"), "{}", a.source);
    // Inlined, the constant is in the source and there are no parameters.
    let (c, d) = (with(10, Literals::Inline), with(77, Literals::Inline));
    assert_ne!(c.source, d.source);
    assert!(c.literals.is_empty() && c.source.contains("(long long)(10LL)"), "{}", c.source);
    // i64::MIN inlined is written so that C reads a signed value (`-9223372036854775808LL`
    // is an unsigned 2^63 negated: every non-negative value compared below it).
    let min = with(i64::MIN, Literals::Inline);
    assert!(min.source.contains("(long long)((-9223372036854775807LL - 1LL))") && !min.source.contains("9223372036854775808"), "{}", min.source);
    if crate::test_support::nvrtc_or_skip("i64::MIN as C reads it") {
        let check = format!("static_assert(5LL > {} && {} < 0, \"signed\");\n", super::builder::c_long(i64::MIN), super::builder::c_long(i64::MIN));
        crate::compile_cubin(&check, "sm_90").unwrap_or_else(|e| panic!("{e}"));
        crate::compile_cubin(&min.source, "sm_90").unwrap_or_else(|e| panic!("{e}\n{}", min.source));
    }
}

/// Comparisons of two 32-bit values (a 32-bit column and a literal that fits) are made
/// in 32 bits; a literal that does not fit, or a 64-bit column, widens both sides.
#[test]
fn comparisons_of_32_bit_values_are_made_in_32_bits() {
    let with = |column: usize, v: i64, experiments: Experiments| {
        let mut p = grouped(9, AggFunc::Sum);
        p.operators = vec![Operator::Filter(Expr::Cmp {
            op: CmpOp::GtEq,
            left: Box::new(Expr::col(column, "x")),
            right: Box::new(Expr::lit(Scalar::Int(v), Type::Int64)),
        })];
        generate_with(&p, &cols(), &[], KernelOptions { experiments, ..KernelOptions::default() }).unwrap().source
    };
    let d = Experiments::default();
    assert!(with(0, 10, d).contains("((int)(c0[i]) >= (int)(lit0))"), "{}", with(0, 10, d));
    assert!(with(0, -2_147_483_648, d).contains("((int)(c0[i]) >= (int)(lit0))"));
    // A literal outside 32 bits: another kernel, comparing in 64 bits.
    assert!(with(0, 2_147_483_648, d).contains("((long long)(c0[i]) >= (long long)(lit0))"), "{}", with(0, 2_147_483_648, d));
    assert!(with(1, 10, d).contains("((long long)(c1[i]) >= (long long)(lit0))"), "{}", with(1, 10, d));
    let wide = Experiments { compares_32: false, ..d };
    assert!(with(0, 10, wide).contains("((long long)(c0[i]) >= (long long)(lit0))"));
}

#[test]
fn a_minimum_of_resident_blocks_goes_into_the_launch_bounds() {
    let with = |min_blocks| {
        let experiments = Experiments { min_blocks, ..Experiments::default() };
        generate_with(&grouped(9, AggFunc::Sum), &cols(), &[], KernelOptions { experiments, ..KernelOptions::default() }).unwrap().source
    };
    assert!(with(0).contains("__launch_bounds__(128) tessera_pipeline("), "{}", with(0));
    let s = with(12);
    assert!(s.contains("__launch_bounds__(128, 12) tessera_pipeline("), "{s}");
    if crate::test_support::nvrtc_or_skip("a kernel with a minimum of resident blocks compiles") {
        crate::compile_cubin(&s, "sm_90").unwrap_or_else(|e| panic!("{e}\n{s}"));
    }
}

#[test]
fn arithmetic_known_to_fit_64_bits_is_made_in_them() {
    // Column 0 holds 32-bit values, column 1 64-bit ones. The filter tests `e > 0`.
    let with = |e: Expr| {
        let mut p = grouped(9, AggFunc::Sum);
        p.operators = vec![Operator::Filter(Expr::Cmp { op: CmpOp::Gt, left: Box::new(e), right: Box::new(Expr::lit(Scalar::Int(0), Type::Int64)) })];
        let k = generate(&p, &cols(), &[]).unwrap();
        if crate::test_support::nvrtc_or_skip("kernels of 64-bit arithmetic compile") {
            crate::compile_cubin(&k.source, "sm_90").unwrap_or_else(|e| panic!("{e}\n{}", k.source));
        }
        k.source
    };
    let arith = |op, l: Expr, r: Expr, ty| Expr::Arith { op, left: Box::new(l), right: Box::new(r), ty };
    let cast = |x: Expr, ty| Expr::Cast { expr: Box::new(x), ty };
    let (x, v) = (Expr::col(0, "k"), Expr::col(1, "v"));
    // Two 32-bit values: the product fits 64 bits, and is checked against Int32's range.
    let s = with(arith(ArithOp::Mul, x.clone(), x.clone(), Type::Int32));
    assert!(s.contains("tessera_checked64(((long long)(c0[i]) * (long long)(c0[i])), -2147483648LL, 2147483647LL, overflow)") && s.contains("if (overflow) flags[0] = 1ull;"), "{s}");
    assert!(!s.contains("__int128"), "{s}");
    // ... into Int64, whose range holds every such product: no check at all.
    let s = with(arith(ArithOp::Mul, x.clone(), x.clone(), Type::Int64));
    assert!(s.contains("= ((long long)(c0[i]) * (long long)(c0[i]));"), "{s}");
    assert!(!s.contains("tessera_checked"), "{s}");
    // A 64-bit operand may hold anything: 128 bits, checked.
    let s = with(arith(ArithOp::Mul, x.clone(), v.clone(), Type::Int64));
    assert!(s.contains("tessera_checked(((__int128)(c0[i]) * (__int128)(c1[i])), -9223372036854775807LL, 9223372036854775807LL, overflow)"), "{s}");
    let s = with(arith(ArithOp::Add, v.clone(), v.clone(), Type::Int64));
    assert!(s.contains("tessera_checked(((__int128)(c1[i]) * 1 + (__int128)(c1[i]) * 1)"), "{s}");
    // A checked Int32 result has a known range: a product of two of them fits 64 bits too.
    let prod = arith(ArithOp::Mul, x.clone(), x.clone(), Type::Int32);
    let s = with(arith(ArithOp::Mul, prod.clone(), prod, Type::Int64));
    assert!(s.contains("((long long)(a1[i]) * (long long)(a2[i]))") || s.contains("((long long)(a1[i]) * (long long)(a1[i]))"), "{s}");
    assert!(!s.contains("__int128"), "{s}");
    // Widening casts are not checked; narrowing ones are, in 64 bits.
    let s = with(cast(x.clone(), Type::Int64));
    assert!(s.contains("= ((long long)(c0[i]));") && !s.contains("tessera_checked"), "{s}");
    let s = with(cast(v.clone(), Type::Int32));
    assert!(s.contains("tessera_checked64(((long long)(c1[i])), -2147483648LL, 2147483647LL, overflow)") && s.contains("if (overflow) flags[0] = 1ull;"), "{s}");
    // A decimal scaled by 10^2: an Int32 fits 64 bits after it and Decimal(12, 2) holds it.
    let s = with(cast(x.clone(), Type::Decimal { precision: 12, scale: 2 }));
    assert!(s.contains("= ((long long)(c0[i]) * 100LL);") && !s.contains("tessera_checked"), "{s}");
    let s = with(cast(x, Type::Decimal { precision: 9, scale: 2 }));
    assert!(s.contains("tessera_checked64(((long long)(c0[i]) * 100LL), -999999999LL, 999999999LL, overflow)"), "{s}");
    let s = with(cast(v, Type::Decimal { precision: 18, scale: 2 }));
    assert!(s.contains("tessera_checked((__int128)(c1[i]) * 100, -999999999999999999LL, 999999999999999999LL, overflow)"), "{s}");
}

#[test]
fn scalar_subqueries_are_parameters_read_once_each() {
    // v < (subquery r7) AND v > (subquery r7) - 1: one parameter for r7, whatever the
    // literal mode, and a float subquery is refused with its type.
    let sub = |ty| Expr::Subquery { result: 7, ty };
    let mut p = grouped(9, AggFunc::Sum);
    p.operators = vec![
        Operator::Filter(Expr::Cmp { op: CmpOp::Lt, left: Box::new(Expr::col(1, "v")), right: Box::new(sub(Type::Int64)) }),
        Operator::Filter(Expr::Cmp {
            op: CmpOp::Gt,
            left: Box::new(Expr::col(1, "v")),
            right: Box::new(Expr::Arith { op: ArithOp::Sub, left: Box::new(sub(Type::Int64)), right: Box::new(Expr::lit(Scalar::Int(1), Type::Int64)), ty: Type::Int64 }),
        }),
    ];
    for literals in [Literals::Parameters, Literals::Inline] {
        let k = generate_with(&p, &cols(), &[], KernelOptions { literals, ..KernelOptions::default() }).unwrap();
        assert_eq!(k.subqueries, vec![(7, Type::Int64)]);
        assert_eq!(k.params.iter().filter(|p| matches!(p, Param::Subquery(_))).count(), 1);
        assert!(k.source.contains("const long long sq0)"), "{}", k.source);
        assert!(k.source.contains("< (long long)(sq0)"), "{}", k.source);
        if crate::test_support::nvrtc_or_skip("a kernel with a scalar subquery compiles") {
            crate::compile_cubin(&k.source, "sm_90").unwrap();
        }
    }
    p.operators = vec![Operator::Filter(Expr::Cmp { op: CmpOp::Lt, left: Box::new(Expr::col(1, "v")), right: Box::new(sub(Type::Float64)) })];
    let err = generate(&p, &cols(), &[]).unwrap_err();
    assert!(err.iter().any(|u| matches!(u.reason, Reason::Subquery(Type::Float64))), "{err:?}");
}

#[test]
fn materialization_compacts_with_one_atomic_per_warp() {
    let mut p = grouped(9, AggFunc::Sum);
    p.sink = Sink::Materialize { result: 0, skip: 0, fetch: None };
    let k = generate(&p, &cols(), &[]).unwrap();
    let SinkLayout::Materialize { columns } = &k.sink else { panic!("not a materialization") };
    assert_eq!(columns.iter().map(|c| c.width).collect::<Vec<_>>(), vec![Width::I32, Width::I64]);
    assert!(k.source.contains("const unsigned long long pos = warp_append(out_count);"), "{}", k.source);
    assert!(k.source.contains("out_m0[pos] = c0[i]; out_m1[pos] = c1[i];"), "{}", k.source);
    // LIMIT without ORDER BY keeps input order: the CPU's job.
    p.sink = Sink::Materialize { result: 0, skip: 0, fetch: Some(5) };
    assert!(generate(&p, &cols(), &[]).is_err());
}

#[test]
fn kernels_walk_tiles_grid_stride() {
    let k = generate(&grouped(9, AggFunc::Sum), &cols(), &[]).unwrap();
    assert!(k.source.contains("tile += (int)gridDim.x * 512"), "{}", k.source);
}

#[test]
fn small_domains_aggregate_in_a_direct_shared_table() {
    let k = generate(&grouped(9, AggFunc::Sum), &cols(), &[]).unwrap();
    let SinkLayout::Aggregate { groups, table, .. } = &k.sink else { panic!("not an aggregate") };
    // Slot 0 is NULL's, then 0..=9.
    assert_eq!(*groups, 11);
    // Fewer slots than lanes: a copy per lane (see `table_copies`).
    assert_eq!(*table, GroupTable::Direct { slots: 11, copies: 32 });
    // int64 values: split sums (see `grouped_sums_add_with_fire_and_forget_atomics`).
    assert!(k.source.contains("__shared__ SplitSum sh_a0[352];"), "{}", k.source);
    assert!(k.source.contains("= (int)(grp1[i]) * 32 + (int)(threadIdx.x & 31u);"), "{}", k.source);
    assert!(k.source.contains("atomic_add_split(&sh_a0[sl2[i]], v0[i]);"), "{}", k.source);
    // The copies folded, then merged once per block, not per row.
    assert!(k.source.contains("SplitSum m_a0 = sh_a0[s * 32]; for (int c = 1; c < 32; ++c) { m_a0.lo += sh_a0[s * 32 + c].lo;"), "{}", k.source);
    assert!(k.source.contains("atomicAdd((unsigned long long*)&out_a0[grp].lo, (unsigned long long)m_a0.lo);"), "{}", k.source);
    // From 32 slots on, one copy indexed by the group itself.
    let k = generate(&grouped(40, AggFunc::Sum), &cols(), &[]).unwrap();
    let SinkLayout::Aggregate { table, .. } = &k.sink else { panic!("not an aggregate") };
    assert_eq!(*table, GroupTable::Direct { slots: 42, copies: 1 });
    assert!(k.source.contains("__shared__ SplitSum sh_a0[42];"), "{}", k.source);
    assert!(k.source.contains("atomicAdd((unsigned long long*)&out_a0[grp].lo, (unsigned long long)sh_a0[s].lo);"), "{}", k.source);
}

#[test]
fn large_domains_aggregate_with_global_atomics() {
    let k = generate(&grouped(99_999, AggFunc::Min), &cols(), &[]).unwrap();
    let SinkLayout::Aggregate { table, .. } = &k.sink else { panic!("not an aggregate") };
    assert_eq!(*table, GroupTable::Global);
    assert!(!k.source.contains("__shared__"), "{}", k.source);
    assert!(k.source.contains("atomicMin(&out_a0[grp1[i]], v0[i]); if (out_seen[grp1[i]] == 0u) out_seen[grp1[i]] = 1u;"), "{}", k.source);
}

/// `Experiments::global_copies`: a global group table whose accumulators are plain
/// 64-bit adds spreads its blocks over copies of its arrays (block b into copy b % N,
/// each array pointer moved once), as many as fit `GLOBAL_COPIES_MAX_BYTES`, by default
/// where 256 rows are estimated a slot; sums in two words, MIN/MAX and direct tables keep
/// one.
#[test]
fn global_tables_can_spread_over_copies() {
    let with_rows = |domain, func, copies, int32: bool, rows: u64| {
        let mut p = grouped(domain, func);
        let Source::Scan(scan) = &mut p.source else { unreachable!() };
        scan.rows = rows;
        if int32 {
            scan.fields[1].ty = Type::Int32;
        }
        let experiments = Experiments { global_copies: copies, ..Experiments::default() };
        generate_with(&p, &[int_col(), int_col()], &[], KernelOptions { experiments, ..KernelOptions::default() }).unwrap()
    };
    let with = |domain, func, copies, int32| with_rows(domain, func, copies, int32, 1000);
    let copies_of = |k: &Kernel| {
        let SinkLayout::Aggregate { global_copies, .. } = &k.sink else { panic!("not an aggregate") };
        *global_copies
    };
    let k = with(5000, AggFunc::Sum, 8, true);
    let SinkLayout::Aggregate { groups, table, .. } = &k.sink else { panic!("not an aggregate") };
    assert_eq!((*groups, *table, copies_of(&k)), (5002, GroupTable::Global, 8));
    assert!(k.source.contains("out_a0 += (size_t)(blockIdx.x & 7u) * 5002ull;"), "{}", k.source);
    // The seen flags stay one array, indexed by the group.
    assert!(!k.source.contains("out_seen +="), "{}", k.source);
    assert!(k.source.contains("if (out_seen[grp1[i]] == 0u) out_seen[grp1[i]] = 1u;"), "{}", k.source);
    // AVG: its sum and its count each move to the block's copy (its count shows the
    // groups present: the fold sets their flags).
    let k = with(5000, AggFunc::Avg, 4, true);
    assert_eq!(copies_of(&k), 4);
    assert!(k.source.contains("out_a0 += (size_t)(blockIdx.x & 3u) * 5002ull;") && k.source.contains("out_c0 += (size_t)(blockIdx.x & 3u) * 5002ull;"), "{}", k.source);
    // The default rule: 8 copies from 256 rows estimated a slot (no probes, the scan's
    // filter counted as keeping every row: its 5,002 slots from 1,280,512 rows).
    assert_eq!(copies_of(&with_rows(5000, AggFunc::Sum, 0, true, 1_280_512)), 8);
    assert_eq!(copies_of(&with_rows(5000, AggFunc::Sum, 0, true, 1_280_511)), 1);
    // 64 asked: 16 copies of 5,002 words fit 1 MiB, 32 do not.
    assert_eq!(copies_of(&with(5000, AggFunc::Count, 64, true)), 16);
    // None asked (the default), split sums of int64 values, MIN, a direct table.
    let k = with(5000, AggFunc::Count, 0, true);
    assert_eq!(copies_of(&k), 1);
    assert!(!k.source.contains("blockIdx.x & "), "{}", k.source);
    assert_eq!(copies_of(&with(5000, AggFunc::Sum, 8, false)), 1);
    assert_eq!(copies_of(&with(5000, AggFunc::Min, 8, true)), 1);
    assert_eq!(copies_of(&with(9, AggFunc::Count, 8, true)), 1);
    if crate::test_support::nvrtc_or_skip("kernels adding into copies compile with NVRTC") {
        let k = with(5000, AggFunc::Avg, 4, true);
        crate::compile_cubin(&k.source, "sm_90").unwrap_or_else(|e| panic!("{e}\n{}", k.source));
    }
}

/// Global arrays in copies leave the seen flags to the fold after the kernel where an
/// accumulator shows the groups present (`aggregate::presence`): a count of every row, or
/// a 64-bit SUM whose values' range (the planner's statistics) lies on one side of zero,
/// checked row by row (a value of the other sign raises flag 1: the query goes to the
/// CPU). Other sums, and tables without copies, mark them per row as before.
#[test]
fn copies_take_the_groups_present_from_an_accumulator() {
    let with = |func, copies, range: Option<(i64, i64)>| {
        let mut p = grouped(5000, func);
        let Source::Scan(scan) = &mut p.source else { unreachable!() };
        scan.fields[1].ty = Type::Int32;
        let Sink::Aggregate(a) = &mut p.sink else { unreachable!() };
        a.value_ranges = vec![range];
        let experiments = Experiments { global_copies: copies, ..Experiments::default() };
        generate_with(&p, &[int_col(), int_col()], &[], KernelOptions { experiments, ..KernelOptions::default() }).unwrap()
    };
    let seen_from = |k: &Kernel| {
        let SinkLayout::Aggregate { seen_from, .. } = &k.sink else { panic!("not an aggregate") };
        *seen_from
    };
    let marks_per_row = |k: &Kernel| k.source.contains("if (out_seen[grp1[i]] == 0u) out_seen[grp1[i]] = 1u;");
    // Positive values: the sum is the witness; each value is checked > 0.
    let k = with(AggFunc::Sum, 8, Some((1, 1_000)));
    assert_eq!(seen_from(&k), Some(0));
    assert!(!marks_per_row(&k) && !k.source.contains("out_seen["), "{}", k.source);
    assert!(k.source.contains("<= 0LL"), "{}", k.source);
    // Negative values: checked < 0.
    let k = with(AggFunc::Sum, 8, Some((-1_000, -3)));
    assert_eq!(seen_from(&k), Some(0));
    assert!(k.source.contains(">= 0LL") && !marks_per_row(&k), "{}", k.source);
    // Values that may be zero, or an unknown range: flags marked per row.
    for range in [Some((0, 1_000)), Some((-5, 5)), None] {
        let k = with(AggFunc::Sum, 8, range);
        assert_eq!(seen_from(&k), None, "{range:?}");
        assert!(marks_per_row(&k), "{range:?}: {}", k.source);
    }
    // COUNT, and AVG's count (its second array): no sign to check.
    let k = with(AggFunc::Count, 8, None);
    assert_eq!(seen_from(&k), Some(0));
    assert!(!marks_per_row(&k) && !k.source.contains("<= 0LL"), "{}", k.source);
    assert_eq!(seen_from(&with(AggFunc::Avg, 4, None)), Some(1));
    // Without copies there is no fold to set them.
    let k = with(AggFunc::Sum, 1, Some((1, 1_000)));
    assert_eq!(seen_from(&k), None);
    assert!(marks_per_row(&k) && !k.source.contains("<= 0LL"), "{}", k.source);
    // The rule on its own: the first count wins over an earlier sum; a nullable input
    // does not count.
    let sum = Accumulator::Sum(SumRepr::I64);
    let p = |j, array, sign| Some(Presence { aggregate: j, array, sign });
    assert_eq!(presence(&[sum, Accumulator::Count], &[false, false], &[Some((1, 9)), None]), p(1, 1, None));
    assert_eq!(presence(&[Accumulator::SumCount(SumRepr::I64), sum], &[false, false], &[None, Some((2, 3))]), p(0, 1, None));
    assert_eq!(presence(&[Accumulator::Count, sum], &[true, false], &[None, Some((2, 3))]), p(1, 1, Some(true)));
    assert_eq!(presence(&[Accumulator::Sum(SumRepr::Split)], &[false], &[Some((2, 3))]), None);
    assert_eq!(presence(&[sum], &[true], &[Some((2, 3))]), None);
    if crate::test_support::nvrtc_or_skip("kernels leaving seen flags to the fold compile with NVRTC") {
        let k = with(AggFunc::Sum, 8, Some((1, 1_000)));
        crate::compile_cubin(&k.source, "sm_90").unwrap_or_else(|e| panic!("{e}\n{}", k.source));
    }
}

/// `Experiments::direct_max_bytes` is the direct table's budget: a small domain keeps as
/// many copies as fit it, a domain whose one copy exceeds it uses global atomics.
#[test]
fn direct_tables_can_be_capped() {
    let cap_of = |domain, bytes| {
        let experiments = Experiments { direct_max_bytes: bytes, ..Experiments::default() };
        let k = generate_with(&grouped(domain, AggFunc::Sum), &cols(), &[], KernelOptions { experiments, ..KernelOptions::default() }).unwrap();
        let SinkLayout::Aggregate { table, .. } = k.sink else { panic!("not an aggregate") };
        table
    };
    let cap = |bytes| cap_of(40, bytes);
    // 42 slots of a split sum and a seen flag: 840 bytes.
    assert_eq!(cap(0), GroupTable::Direct { slots: 42, copies: 1 });
    assert_eq!(cap(840), GroupTable::Direct { slots: 42, copies: 1 });
    assert_eq!(cap(839), GroupTable::Global);
    // A small domain keeps fewer copies within the cap: 11 slots of 20 bytes, 32 copies
    // by default (7,040 bytes), 16 within 4 KiB.
    assert_eq!(cap_of(9, 0), GroupTable::Direct { slots: 11, copies: 32 });
    assert_eq!(cap_of(9, 4096), GroupTable::Direct { slots: 11, copies: 16 });
}

/// `Experiments::warp_combine`: lanes adding into one group combine their values and one
/// of them adds the total, into a direct table (one copy) or the global arrays; sums that
/// need more than 64 bits, and tables with a copy per lane, add per row as before.
#[test]
fn warp_combined_aggregation() {
    let experiments = Experiments { warp_combine: true, ..Experiments::default() };
    let options = KernelOptions { experiments, ..KernelOptions::default() };
    let int32_value = |domain, func| {
        let mut p = grouped(domain, func);
        let Source::Scan(scan) = &mut p.source else { unreachable!() };
        scan.fields[1].ty = Type::Int32;
        p
    };
    let mut kernels = Vec::new();
    // A direct table of 42 slots, int32 values (64-bit sums): combined.
    let k = generate_with(&int32_value(40, AggFunc::Sum), &[int_col(), int_col()], &[], options).unwrap();
    assert!(k.source.contains("const unsigned int wc_m = __match_any_sync(__activemask(), (int)(sl"), "{}", k.source);
    assert!(k.source.contains("const long long wc0 = tessera_peer_sum(wc_m, v0[i]);"), "{}", k.source);
    assert!(k.source.contains("if ((int)(threadIdx.x & 31u) == __ffs(wc_m) - 1) { atomicAdd((unsigned long long*)&sh_a0[sl"), "{}", k.source);
    kernels.push(k);
    // Global arrays: MIN combined, the seen flag set by the lane that adds.
    let k = generate_with(&grouped(99_999, AggFunc::Min), &cols(), &[], options).unwrap();
    assert!(k.source.contains("const long long wc0 = tessera_peer_min(wc_m, v0[i]); if ((int)(threadIdx.x & 31u) == __ffs(wc_m) - 1) { atomicMin(&out_a0[grp1[i]], wc0);"), "{}", k.source);
    assert!(k.source.contains("if (out_seen[grp1[i]] == 0u) out_seen[grp1[i]] = 1u; } }"), "{}", k.source);
    kernels.push(k);
    // COUNT adds the number of lanes.
    let k = generate_with(&grouped(99_999, AggFunc::CountStar), &cols(), &[], options).unwrap();
    assert!(k.source.contains("atomicAdd(&out_a0[grp1[i]], (unsigned long long)__popc(wc_m));"), "{}", k.source);
    kernels.push(k);
    // Split sums (int64 values) and a copy per lane: per row.
    let k = generate_with(&grouped(99_999, AggFunc::Sum), &cols(), &[], options).unwrap();
    assert!(!k.source.contains("__match_any_sync"), "{}", k.source);
    let k = generate_with(&int32_value(9, AggFunc::Sum), &[int_col(), int_col()], &[], options).unwrap();
    assert!(!k.source.contains("__match_any_sync"), "{}", k.source);
    if crate::test_support::nvrtc_or_skip("warp-combined aggregations compile with NVRTC") {
        for k in &kernels {
            crate::compile_cubin(&k.source, "sm_90").unwrap_or_else(|e| panic!("{e}\n{}", k.source));
        }
    }
}

/// A star join's probe pipeline: `SELECT d.year, sum(f.v) FROM f JOIN d ON f.dk = d.k
/// JOIN s ON f.sk = s.k GROUP BY d.year` over fact columns (dk, sk, v), with table 1
/// (s) more selective than table 0 (d).
fn star() -> (Pipeline, Vec<GpuColumn>, Vec<GpuTable>) {
    let fields = vec![Field::new("dk", Type::Int32, false), Field::new("sk", Type::Int32, false), Field::new("v", Type::Int64, false)];
    let probe = |table: usize, key: usize, build_fields: Vec<Field>| {
        Operator::Probe(tessera_ir::Probe {
            table,
            kind: JoinKind::Inner,
            keys: vec![Expr::col(key, "k")],
            build_fields,
            residual: None,
            nulls_equal: false,
            null_aware: false,
        })
    };
    let p = Pipeline {
        id: 3,
        source: Source::Scan(Scan {
            table: "f".into(),
            version: 1,
            columns: vec![0, 1, 2],
            fields: fields.clone(),
            dictionary: vec![false; 3],
            rows: 1000,
            kept_permille: 1000,
        }),
        operators: vec![probe(0, 0, vec![Field::new("year", Type::Int32, false)]), probe(1, 1, vec![])],
        sink: Sink::Aggregate(Aggregate {
            result: 0,
            group_by: vec![Expr::col(3, "year")],
            aggregates: vec![AggExpr { func: AggFunc::Sum, arg: Some(Expr::col(2, "v")), distinct: false, ty: Type::Int64, name: "a".into() }],
            strategy: GroupStrategy::Perfect { domains: vec![KeyDomain::Range { min: 1992, max: 1998 }] },
            fields: vec![Field::new("year", Type::Int32, false), Field::new("a", Type::Int64, true)],
            reduced: None,
            value_ranges: Vec::new(),
        }),
        device: Device::Gpu,
        device_reason: None,
    };
    let cols = vec![int_col(), int_col(), GpuColumn::plain(Width::I64, None)];
    let tables = vec![
        GpuTable { min: 0, slots: 3000, hashed: None, payload: vec![int_col()], payload_refs: vec![0], pass_permille: 1000, membership: false, chain: None },
        GpuTable { min: 0, slots: 100, hashed: None, payload: vec![], payload_refs: vec![], pass_permille: 5, membership: false, chain: None },
    ];
    (p, cols, tables)
}

/// Pipelines with two or more probes over tables that stay in L2, summing into global
/// arrays, run blocks of `WIDE_BLOCK_THREADS` (see there); a direct table in shared
/// memory, a tile past two zones of the zone bitmap, or the experiment off keep
/// `BLOCK_THREADS`.
#[test]
fn star_joins_into_global_arrays_take_wide_blocks() {
    let (mut p, cols, tables) = star();
    // star()'s grouping (7 years) is a direct table in shared memory.
    let k = generate(&p, &cols, &tables).unwrap();
    assert!(matches!(&k.sink, SinkLayout::Aggregate { table: GroupTable::Direct { .. }, .. }));
    assert_eq!(k.block_threads, BLOCK_THREADS);
    assert!(k.source.contains("__launch_bounds__(128)") && k.source.contains("s += blockDim.x"), "{}", k.source);
    if let Sink::Aggregate(a) = &mut p.sink {
        a.strategy = GroupStrategy::Perfect { domains: vec![KeyDomain::Range { min: 0, max: 199_999 }] };
    }
    let k = generate(&p, &cols, &tables).unwrap();
    assert!(matches!(&k.sink, SinkLayout::Aggregate { table: GroupTable::Global, .. }));
    assert_eq!((k.block_threads, k.items_per_thread), (WIDE_BLOCK_THREADS, ITEMS_PER_THREAD_MANY_PROBES));
    assert!(k.source.contains("__launch_bounds__(512)") && k.source.contains("i * 512") && k.source.contains("gridDim.x * 1024"), "{}", k.source);
    let with = |experiments: Experiments, items: Option<u32>| generate_with(&p, &cols, &tables, KernelOptions { literals: Literals::Inline, items_per_thread: items, experiments }).unwrap();
    let off = with(Experiments { wide_blocks: false, ..Experiments::default() }, None);
    assert_eq!(off.block_threads, BLOCK_THREADS);
    assert!(off.source.contains("__launch_bounds__(128)") && off.source.contains("i * 128"), "{}", off.source);
    // 512 threads x 8 items would span four zones.
    assert_eq!(with(Experiments::default(), Some(8)).block_threads, BLOCK_THREADS);
    assert_eq!(with(Experiments::default(), Some(4)).block_threads, WIDE_BLOCK_THREADS);
    if crate::test_support::nvrtc_or_skip("wide blocks compile with NVRTC") {
        crate::compile_cubin(&k.source, "sm_90").unwrap_or_else(|e| panic!("{e}\n{}", k.source));
    }
}

/// A star join into global arrays over bit-packed columns and columns of runs (laid out
/// for 128-thread blocks) takes wide blocks too, each group of 128 threads reading its
/// part of the tile (`tessera_part`): its rows, its bit-packed words and shift, its
/// directory words at 128 threads' strides (found from the part's value of the streams,
/// counted a grid's stride a tile, over `int` rows; from the tile over 64-bit rows); with `Experiments::compact_wide`
/// off, or over a packed column, 128 threads as before. The kernels compile.
#[test]
fn wide_star_joins_read_compact_columns_in_parts() {
    let (mut p, mut cols, tables) = star();
    if let Sink::Aggregate(a) = &mut p.sink {
        a.strategy = GroupStrategy::Perfect { domains: vec![KeyDomain::Range { min: 0, max: 199_999 }] };
    }
    cols[0].narrow = Some(Narrow::Bits(9));
    cols[2].narrow = Some(Narrow::Runs { value: 2, per_run: 4 });
    let with = |cols: &[GpuColumn], experiments: Experiments| generate_with(&p, cols, &tables, KernelOptions { literals: Literals::Inline, items_per_thread: None, experiments }).unwrap();
    let mut eager = Experiments { eager_min_sectors: 0.0, ..Experiments::default() };
    let k = with(&cols, eager);
    assert_eq!((k.block_threads, k.items_per_thread), (WIDE_BLOCK_THREADS, ITEMS_PER_THREAD_MANY_PROBES));
    let src = &k.source;
    assert!(src.contains("__launch_bounds__(512)") && src.contains("gridDim.x * 1024"), "{src}");
    assert!(src.contains("tessera_part<128, ITEMS>(tile) + (int)(threadIdx.x % 128u) + i * 128"), "{src}");
    // The part's value of the streams, advanced 1024 / 128 values a block a tile; the
    // 9-bit column's words and shift and the directory's pairs found from it.
    assert!(src.contains("unsigned int kq = tessera_stream_value<128>(tessera_part<128, ITEMS>(tile));") && src.contains("const unsigned int kstep = gridDim.x * 8u;"), "{src}");
    assert!(src.contains("tessera_bits_word<128, true>(col0, kq * 9u)") && src.contains("tessera_bits_take<9, ITEMS>(nbc0, (kq * 9u) & 31u, dbc0);"), "{src}");
    assert!(src.contains("        kq += kstep;\n") && src.contains("tessera_runs_pairs_at<128, true>(col2, kq + kstep);") && src.contains("__ldg(rdc2 + i * 4)"), "{src}");
    let wide = with(&cols, Experiments { index32: false, stream_steps: false, ..eager }).source;
    assert!(wide.contains("tessera_bits_base<9, 128, true>(col0, tessera_part<128, ITEMS>(next))"), "{wide}");
    assert!(wide.contains("tessera_bits_shift<9, 128>(tessera_part<128, ITEMS>(tile))"), "{wide}");
    assert!(wide.contains("tessera_runs_dirs<128, true>(col2, tessera_part<128, ITEMS>(after))") && wide.contains("__ldg(rdc2 + i * 4)"), "{wide}");
    if crate::test_support::nvrtc_or_skip("wide star joins over compact columns compile with NVRTC") {
        for src in [src, &wide] {
            crate::compile_cubin(src, "sm_90").unwrap_or_else(|e| panic!("{e}\n{src}"));
        }
    }
    eager.compact_wide = false;
    let narrow = with(&cols, eager);
    assert_eq!(narrow.block_threads, BLOCK_THREADS);
    assert!(!narrow.source.contains("tessera_part") && narrow.source.contains("i * 128"), "{}", narrow.source);
    let mut packed = cols.clone();
    packed[1].packed = true;
    assert_eq!(with(&packed, Experiments::default()).block_threads, BLOCK_THREADS);
    if crate::test_support::nvrtc_or_skip("wide kernels over compact columns compile with NVRTC") {
        for k in [&k, &narrow] {
            crate::compile_cubin(&k.source, "sm_90").unwrap_or_else(|e| panic!("{e}\n{}", k.source));
        }
    }
}

/// `Experiments::merge_sink` (the default): a star join summing into global arrays adds
/// each item's value in the loop that loaded its payloads (one loop over the items fewer,
/// the same statements), and still compiles; a kernel into a shared direct table is left
/// as it is, and `TESSERA_EXP_MERGE_SINK=0` keeps the loops apart.
#[test]
fn merged_sinks_add_in_the_loop_that_loaded_their_payloads() {
    let (mut p, cols, tables) = star();
    let merged = Experiments::default();
    let apart = Experiments { merge_sink: false, ..Experiments::default() };
    let with = |p: &Pipeline, experiments: Experiments| generate_with(p, &cols, &tables, KernelOptions { literals: Literals::Inline, items_per_thread: None, experiments }).unwrap();
    let loops = |k: &Kernel| k.source.matches("for (int i = 0; i < ITEMS; ++i) {").count();
    // A direct table in shared memory: unchanged.
    assert_eq!(with(&p, merged).source, with(&p, apart).source);
    if let Sink::Aggregate(a) = &mut p.sink {
        a.strategy = GroupStrategy::Perfect { domains: vec![KeyDomain::Range { min: 0, max: 199_999 }] };
    }
    let (plain, k) = (with(&p, apart), with(&p, merged));
    assert!(matches!(&k.sink, SinkLayout::Aggregate { table: GroupTable::Global, .. }));
    // Two loops fewer: the whole tiles' and the last tile's.
    assert_eq!(loops(&k) + 2, loops(&plain), "{}\n{}", plain.source, k.source);
    let body = |k: &Kernel| {
        // The first add into the group arrays.
        let add = k.source.find("&out_a0[").unwrap_or_else(|| panic!("no add into out_a0 in\n{}", k.source));
        let start = k.source[..add].rfind("for (int i = 0; i < ITEMS; ++i) {").unwrap_or_else(|| panic!("no loop before the add in\n{}", k.source));
        k.source[start..add].to_string()
    };
    // The adds' loop also holds the payload loads; without the switch it does not.
    assert!(body(&k).contains("_p0[") || body(&k).contains("_p1["), "{}", k.source);
    assert!(!body(&plain).contains("_p0[") && !body(&plain).contains("_p1["), "{}", plain.source);
    if crate::test_support::nvrtc_or_skip("merged sinks compile with NVRTC") {
        crate::compile_cubin(&k.source, "sm_90").unwrap_or_else(|e| panic!("{e}\n{}", k.source));
    }
}

/// `p`'s kernel with rows counted in 64 bits (`Experiments::index32` off): its
/// `rows_limit` is then its sums' alone.
fn wide_rows(p: &Pipeline, cols: &[GpuColumn], tables: &[GpuTable]) -> Kernel {
    let experiments = Experiments { index32: false, ..Experiments::default() };
    generate_with(p, cols, tables, KernelOptions { experiments, ..KernelOptions::default() }).unwrap()
}

/// Kernels over a table of at most `INDEX32_MAX_ROWS` rows count tiles and rows in 32
/// bits and refuse more rows; over more rows in 64 bits.
#[test]
fn small_tables_are_walked_with_32_bit_rows() {
    let mut p = grouped(9, AggFunc::Sum);
    let k = generate(&p, &cols(), &[]).unwrap();
    assert!(k.source.contains("const int nrows = (int)rows;") && k.source.contains("int tile = (int)blockIdx.x * 512;"), "{}", k.source);
    assert!(k.source.contains("for (; tile + 512 <= nrows; tile += (int)gridDim.x * 512) {"), "{}", k.source);
    assert!(k.source.contains("if (tile < nrows) {") && !k.source.contains("long long tile"), "{}", k.source);
    assert_eq!(k.rows_limit, INDEX32_MAX_ROWS);
    let wide = wide_rows(&p, &cols(), &[]);
    assert!(wide.source.contains("long long tile = (long long)blockIdx.x * 512LL;") && !wide.source.contains("nrows"), "{}", wide.source);
    assert!(wide.rows_limit > INDEX32_MAX_ROWS);
    // One row more than a 32-bit kernel may walk: 64 bits.
    let Source::Scan(scan) = &mut p.source else { unreachable!() };
    scan.rows = INDEX32_MAX_ROWS + 1;
    let big = generate(&p, &cols(), &[]).unwrap();
    assert!(big.source.contains("long long tile = (long long)blockIdx.x * 512LL;") && !big.source.contains("nrows"), "{}", big.source);
    assert!(big.rows_limit > INDEX32_MAX_ROWS);
    // A lean pipeline (one group, nothing but its columns loaded) keeps 64-bit rows.
    let Source::Scan(scan) = &mut p.source else { unreachable!() };
    scan.rows = 1000;
    let Sink::Aggregate(a) = &mut p.sink else { unreachable!() };
    a.strategy = GroupStrategy::Scalar;
    a.group_by.clear();
    a.fields.remove(0);
    let lean = generate(&p, &cols(), &[]).unwrap();
    assert_eq!(lean.items_per_thread, ITEMS_PER_THREAD_LEAN);
    assert!(lean.source.contains("long long tile = (long long)blockIdx.x * 1024LL;") && !lean.source.contains("nrows"), "{}", lean.source);
    if crate::test_support::nvrtc_or_skip("32- and 64-bit row kernels compile with NVRTC") {
        for k in [&k, &big] {
            crate::compile_cubin(&k.source, "sm_90").unwrap_or_else(|e| panic!("{e}\n{}", k.source));
        }
    }
}

/// The loop over a kernel's whole tiles (the body every tile but a partial last one runs).
fn whole_tile_loop(source: &str) -> &str {
    let start = source.find("for (; tile + ").unwrap_or_else(|| panic!("no whole-tile loop in {source}"));
    let end = source[start..].find("// The last tile").map_or(source.len(), |e| start + e);
    &source[start..end]
}

/// The loop over items (a stage) in which `needle` first appears.
fn stage_of(source: &str, needle: &str) -> usize {
    let at = source.find(needle).unwrap_or_else(|| panic!("{needle} not in {source}"));
    source[..at].matches("for (int i = 0; i < ITEMS; ++i) {").count()
}

/// The hoisted test every row takes is the cheapest for the rows it drops: a bitmap read
/// from L2 (over `BATCHED_BITMAP_MAX_BYTES`) costs `probe::L2_BITMAP_COST` tests of one in
/// L1, so a small table keeping 20% of the rows is tested before a large one keeping 4%
/// (SSB q2.1's supplier and part), and the large bitmap is looked up only for the rows it
/// keeps; not where the large one's test empties whole warps (0.5%), nor with
/// `bitmap_cost` 1 (by selectivity alone). The tests after the first keep the order of
/// selectivity.
#[test]
fn the_first_hoisted_test_is_the_cheapest_for_the_rows_it_drops() {
    let (p, cols, mut tables) = star();
    // Table 0: 1 M slots (a 125 KiB bitmap), 4% pass; table 1: 100 slots, 20%.
    tables[0].slots = 1_000_000;
    tables[0].pass_permille = 40;
    tables[1].pass_permille = 200;
    let with = |tables: &[GpuTable], cost: u32| {
        let mut options = KernelOptions::default();
        options.experiments.bitmap_cost = cost;
        generate_with(&p, &cols, tables, options).unwrap().source
    };
    let (large, small) = ("h0_bits[s", "h1_bits[s");
    let first_is = |src: &str, test: &str, other: &str| {
        let body = whole_tile_loop(src);
        stage_of(body, test) < stage_of(body, other)
    };
    let src = with(&tables, super::probe::L2_BITMAP_COST);
    assert!(first_is(&src, small, large), "{src}");
    // The large bitmap is looked up after the small one's test, for the rows it kept.
    let body = whole_tile_loop(&src);
    assert!(body.find("if (!f") < body.find(large), "{body}");
    let src = with(&tables, 1);
    assert!(first_is(&src, large, small), "{src}");
    // A large table keeping 0.5%: a warp's 64 rows are all dropped 73% of the time.
    tables[0].pass_permille = 5;
    let src = with(&tables, super::probe::L2_BITMAP_COST);
    assert!(first_is(&src, large, small), "{src}");
    // Three tests: the first the small table (20%), then by selectivity: the large one
    // (4%) before another small one (30%) that would cost less by its rank.
    let (mut p3, mut cols3, mut tables3) = (p.clone(), cols.clone(), tables.clone());
    tables3[0].pass_permille = 40;
    let Source::Scan(scan) = &mut p3.source else { unreachable!() };
    scan.columns.push(3);
    scan.fields.push(Field::new("ok", Type::Int32, false));
    cols3.push(int_col());
    p3.operators.push(Operator::Probe(tessera_ir::Probe {
        table: 2,
        kind: JoinKind::Inner,
        keys: vec![Expr::col(3, "ok")],
        build_fields: vec![],
        residual: None,
        nulls_equal: false,
        null_aware: false,
    }));
    tables3.push(GpuTable { pass_permille: 300, ..tables3[1].clone() });
    let src = generate_with(&p3, &cols3, &tables3, KernelOptions::default()).unwrap().source;
    let body = whole_tile_loop(&src);
    let (s1, s0, s2) = (stage_of(body, small), stage_of(body, large), stage_of(body, "h2_bits[s"));
    assert!(s1 < s0 && s0 <= s2 && body.find(large) < body.find("h2_bits[s"), "{body}");
}

#[test]
fn loads_are_issued_for_all_items_before_any_item_uses_them() {
    let (p, cols, tables) = star();
    let k = generate(&p, &cols, &tables).unwrap();
    let src = whole_tile_loop(&k.source);
    // The more selective probe (table 1, on column 1, 0.5% of rows pass) is tested
    // first; its key is loaded in a stage of its own, the slot looked up in the next,
    // tested after.
    let load_sk = stage_of(src, "c1[i] = col1[r];");
    let lookup_sk = stage_of(src, "h1_bits[s");
    let test_sk = stage_of(src, "if (!f");
    assert!(load_sk < lookup_sk && lookup_sk < test_sk, "{src}");
    // The other key is loaded only after that test, for the items it kept.
    let load_dk = stage_of(src, "c0[i] = col0[r];");
    assert!(load_dk >= test_sk, "{src}");
    // Each table's membership bitmap is read once: the probes reuse the hoisted tests'
    // slots. Probes never read the row arrays.
    assert_eq!(src.matches("h0_bits[s").count(), 1, "{src}");
    assert_eq!(src.matches("h1_bits[s").count(), 1, "{src}");
    assert!(!src.contains("h0_rows") && !src.contains("h1_rows"), "{src}");
    // 32-bit keys are placed with one unsigned 32-bit test (keys below the range wrap
    // above it).
    assert!(src.contains("s1[i] = (int)min((unsigned)(c1[i]) - (unsigned)(0), 100u);"), "{src}");
    // Not when the table's range ends beyond 32 bits: a key far below could wrap into it.
    let mut wide = tables.clone();
    wide[1].min = i64::from(i32::MAX) - 10;
    let kw = generate(&p, &cols, &wide).unwrap();
    assert!(kw.source.contains("s1[i] = (int)min((unsigned long long)(c1[i]) - (unsigned long long)(2147483637LL), 100ull);"), "{}", kw.source);
    // The parameters: the columns, then per table its payload and bitmap, then the
    // sink's arrays.
    let params = "const int32_t* __restrict__ col1, const int64_t* __restrict__ col2, const int32_t* __restrict__ h0_p0, \
                  const uint32_t* __restrict__ h0_bits, const uint32_t* __restrict__ h1_bits, SplitSum* __restrict__ out_a0, uint32_t* __restrict__ out_seen)";
    assert!(k.source.contains(params), "{}", k.source);
    // The payload and the value are loaded before the stage that aggregates them.
    assert!(stage_of(src, "h0_p0[") < stage_of(src, "atomic_add_split"), "{src}");
    assert!(stage_of(src, "c2[i] = col2[r];") < stage_of(src, "atomic_add_split"), "{src}");
    // Items dropped in a stage take part in no later one.
    assert!(src.contains("{ sel[i] = false; continue; }"), "{src}");
}

/// SSB q1.3's shape: `SELECT sum(v) FROM f JOIN d ON f.dk = d.k WHERE f.q BETWEEN 1 AND 3`
/// over fact columns (dk, q, v), the filter before the probe; the planner estimates that
/// the filter keeps `kept_permille` of the rows and the date table 3 per mille.
fn filtered_probe(kept_permille: u32, filter: Expr) -> (Pipeline, Vec<GpuColumn>, Vec<GpuTable>) {
    let fields = vec![Field::new("dk", Type::Int32, false), Field::new("q", Type::Int32, false), Field::new("v", Type::Int64, false)];
    let p = Pipeline {
        id: 1,
        source: Source::Scan(Scan { table: "f".into(), version: 1, columns: vec![0, 1, 2], fields: fields.clone(), dictionary: vec![false; 3], rows: 1_000_000, kept_permille }),
        operators: vec![
            Operator::Filter(filter),
            Operator::Probe(tessera_ir::Probe {
                table: 0,
                kind: JoinKind::Inner,
                keys: vec![Expr::col(0, "dk")],
                build_fields: vec![],
                residual: None,
                nulls_equal: false,
                null_aware: false,
            }),
        ],
        sink: Sink::Aggregate(Aggregate {
            result: 0,
            group_by: vec![],
            aggregates: vec![AggExpr { func: AggFunc::Sum, arg: Some(Expr::col(2, "v")), distinct: false, ty: Type::Int64, name: "a".into() }],
            strategy: GroupStrategy::Scalar,
            fields: vec![Field::new("a", Type::Int64, true)],
            reduced: None,
            value_ranges: Vec::new(),
        }),
        device: Device::Gpu,
        device_reason: None,
    };
    let cols = vec![int_col(), int_col(), GpuColumn::plain(Width::I64, None)];
    let tables = vec![GpuTable { min: 19920101, slots: 61131, hashed: None, payload: vec![], payload_refs: vec![], pass_permille: 3, membership: false, chain: None }];
    (p, cols, tables)
}

#[test]
fn a_far_more_selective_probe_is_tested_before_the_filters() {
    let between = |e: Expr| {
        let cmp = |op, v| Expr::Cmp { op, left: Box::new(e.clone()), right: Box::new(Expr::lit(Scalar::Int(v), Type::Int32)) };
        Expr::And(Box::new(cmp(CmpOp::GtEq, 1)), Box::new(cmp(CmpOp::LtEq, 3)))
    };
    let q = Expr::col(1, "q");
    let with = |kept: u32, filter: Expr, early: bool| {
        let (p, cols, tables) = filtered_probe(kept, filter);
        let mut options = KernelOptions::default();
        options.experiments.early_probes = early;
        generate_with(&p, &cols, &tables, options).unwrap().source
    };
    let (probe, test) = ("h0_bits[s", "(int)(c1[i]) >= ");
    // The filter keeps 60 per mille, the table 3: its test comes first, and the filter's
    // column is loaded after it, for the rows it kept.
    let early = with(60, between(q.clone()), true);
    let src = whole_tile_loop(&early);
    assert!(stage_of(src, probe) < stage_of(src, test), "{src}");
    assert!(stage_of(src, "c1[i] = col1[r];") > stage_of(src, probe), "{src}");
    assert_eq!(src.matches(probe).count(), 1, "{src}");
    assert!(src.find(probe) < src.find("{ sel[i] = false; continue; }"), "{src}");
    // In plan order: when the table keeps more than a quarter of what the filter does,
    // when switched off, and when the filter could fail (`q * 1000` may overflow).
    let product = Expr::Arith { op: ArithOp::Mul, left: Box::new(q.clone()), right: Box::new(Expr::lit(Scalar::Int(1000), Type::Int32)), ty: Type::Int32 };
    for late in [with(10, between(q.clone()), true), with(60, between(q.clone()), false), with(60, between(product), true)] {
        let src = whole_tile_loop(&late);
        // The filter's first rejection comes before the probe's lookup.
        let (rejected, looked_up) = (src.find("{ sel[i] = false; continue; }"), src.find(probe));
        assert!(rejected.is_some() && looked_up.is_some() && rejected < looked_up, "{src}");
    }
}

/// A scalar sum's rows that pass its first selective test are queued, and the rest of
/// the pipeline (the probe's lookup, the summed column read at the row) runs on full
/// warps of them; the filter's test carries the planner's estimate of what it keeps.
#[test]
fn a_scalar_sums_rows_left_by_a_selective_test_finish_in_full_warps() {
    let filter = Expr::Cmp { op: CmpOp::Lt, left: Box::new(Expr::col(1, "q")), right: Box::new(Expr::lit(Scalar::Int(3), Type::Int32)) };
    let with = |kept_permille: u32, pass_permille: u32, queue: bool| {
        let (p, cols, mut tables) = filtered_probe(kept_permille, filter.clone());
        tables[0].pass_permille = pass_permille;
        let mut options = KernelOptions::default();
        options.experiments.scalar_queue = queue;
        generate_with(&p, &cols, &tables, options).unwrap().source
    };
    // (A lane takes DRAIN_ITEMS entries a drain, a warp 32 times as many.)
    let drained = format!("while (tq_n >= {}) {{", 32 * crate::codegen::options::DRAIN_ITEMS);
    let (test, probe, push, drain) = ("(int)(c1[i]) < ", "h0_bits[s", "__ballot_sync(0xffffffffu, sel[i])", drained.as_str());
    // The filter keeps 13% (its estimate), the date table 1 in 7: queued after the filter.
    let k = with(130, 143, true);
    let src = whole_tile_loop(&k);
    let at = |needle: &str| src.find(needle).unwrap_or_else(|| panic!("{needle} not in {src}"));
    assert!(at(test) < at(push) && at(push) < at(drain) && at(drain) < at(probe), "{src}");
    // The summed column is read at the queued rows, not up front.
    // (Its rows queued as `int`s: the table's fit 32 bits. The lean kernel counts its
    // tiles in 64 bits, and a row it queues in 32 from its tile.)
    assert!(at(drain) < at("c2[i] = col2[r];") && at("const int r = tq_r[i];") < at("c2[i] = col2[r];"), "{src}");
    assert!(k.contains("long long tile = ") && src.contains("tq_row[tq_w][at] = (int)tile + (int)threadIdx.x + i * 128;"), "{k}");
    // The rows still queued after the last tile run too.
    assert!(k.contains("// The rows still queued.") && k.contains("(int)tq_lane + 32 * i < tq_n;"), "{k}");
    // Without the filter's estimate the first selective test is the probe's (2% of the
    // rows left, the summed column still to read): queued after it.
    let k = with(1000, 20, true);
    let src = whole_tile_loop(&k);
    assert!(src.find(probe).unwrap() < src.find(push).unwrap(), "{src}");
    // A lane takes one entry a drain where the rest reads a compact column at the row
    // (`defer::plan_early`): the summed column bit-packed.
    let (p, mut cols, mut tables) = filtered_probe(130, filter.clone());
    tables[0].pass_permille = 143;
    cols[2].narrow = Some(Narrow::Bits(24));
    let k = generate_with(&p, &cols, &tables, KernelOptions::default()).unwrap().source;
    let src = whole_tile_loop(&k);
    assert!(src.contains("while (tq_n >= 32) {") && src.contains("tessera_bits_get<24, 128>(col2, r)"), "{src}");
    // Not when no test leaves few rows, nor when a warp's vote skips most warps (one row
    // in 500 left), nor when switched off.
    for k in [with(1000, 500, true), with(1000, 2, true), with(130, 143, false)] {
        assert!(!k.contains("tq_n"), "{k}");
    }
    // Where no queue follows the filters (one row in 500 left by them: a vote), their
    // estimate is left out, and the kernel is the one without queues.
    assert_eq!(with(2, 143, true), with(2, 143, false));
}

#[test]
fn a_warp_whose_rows_all_failed_a_selective_test_skips_the_stages_left() {
    let q = Expr::col(1, "q");
    let filter = Expr::Cmp { op: CmpOp::Lt, left: Box::new(q), right: Box::new(Expr::lit(Scalar::Int(3), Type::Int32)) };
    let with = |pass_permille: u32, skip: bool| {
        let (p, cols, mut tables) = filtered_probe(60, filter.clone());
        tables[0].pass_permille = pass_permille;
        let mut options = KernelOptions::default();
        options.experiments.warp_skip = skip;
        // Left to itself the scalar sum queues its rows instead (see the next test).
        options.experiments.scalar_queue = false;
        generate_with(&p, &cols, &tables, options).unwrap().source
    };
    // One row in 333 passes the date test: a warp's 128 rows all fail it 68% of the
    // time. The vote comes after the test's rejection, before the filter's stage, and
    // the stages left sit inside it.
    let k = with(3, true);
    let src = whole_tile_loop(&k);
    assert_eq!(src.matches("if (tessera_warp_any(sel)) {").count(), 1, "{src}");
    let vote = src.find("if (tessera_warp_any(sel)) {").unwrap();
    assert!(src.find("if (!f2[i]) { sel[i] = false; continue; }").unwrap() < vote, "{src}");
    assert!(vote < src.find("(int)(c1[i]) < ").unwrap() && vote < src.find("tessera_i128(v0[i])").unwrap(), "{src}");
    // The partial last tile votes too; every lane of its warps reaches the vote.
    assert_eq!(k.matches("if (tessera_warp_any(sel)) {").count(), 2, "{k}");
    // Not when most warps keep a row (half the rows pass), nor when switched off.
    for k in [with(500, true), with(3, false)] {
        assert!(!k.contains("tessera_warp_any"), "{k}");
    }
    // The vote takes the flags as `bool` too (`TESSERA_EXP_SEL_BOOL=1`); it compiles.
    let (p, cols, mut tables) = filtered_probe(60, filter.clone());
    tables[0].pass_permille = 3;
    let mut options = KernelOptions::default();
    options.experiments.sel_bool = true;
    options.experiments.scalar_queue = false;
    let b = generate_with(&p, &cols, &tables, options).unwrap().source;
    assert!(b.contains("bool sel[ITEMS];") && b.contains("if (tessera_warp_any(sel)) {"), "{b}");
    if crate::test_support::nvrtc_or_skip("the vote over bool flags compiles") {
        for source in [&b, &k] {
            if let Err(e) = crate::compile_cubin(source, "sm_90") {
                panic!("{e}\n{source}");
            }
        }
    }
}

#[test]
fn keys_outside_a_table_land_on_its_always_clear_bit() {
    // Slot `slots` (where `lookup` clamps keys outside the range) is inside the
    // bitmap, whether or not `slots` is a multiple of 32.
    for slots in [1usize, 31, 32, 33, 64, 600_000, 1 << 20] {
        assert!(bitmap_words(slots) * 32 > slots, "{slots} slots");
        assert!(bitmap_words(slots) <= slots.div_ceil(32) + 1, "{slots} slots");
    }
}

#[test]
fn rows_of_selective_pipelines_finish_in_full_warps() {
    let (p, cols, tables) = star();
    let src = generate(&p, &cols, &tables).unwrap().source;
    assert!(src.contains("__shared__ int tq_s3[4][96];") && src.contains("__shared__ int tq_row[4][96];"), "{src}");
    // 0.5% of the rows pass: each warp queues what the rest of the pipeline reads (the
    // slot for the payload, the row for the value column) after the last test...
    let body = whole_tile_loop(&src);
    let test = body.rfind("{ sel[i] = false; continue; }").unwrap();
    let push = body.find("const unsigned int m = __ballot_sync(0xffffffffu, sel[i]);").expect("queueing");
    assert!(test < push, "{src}");
    assert!(body[push..].contains("tq_row[tq_w][at] = tile + (int)threadIdx.x + i * 128;"), "{src}");
    // ...and the payload gather, the value load and the aggregation run on 32 queued
    // rows at a time, one a lane, and on what is left after the last tile.
    let drain = body.find("while (tq_n >= 32) {").unwrap();
    assert!(push < drain, "{src}");
    // A queue taking 0.5% of the rows seldom fills: its drain loop stays rolled
    // (`defer::ROLLED_DRAIN_MAX_SHARE`); not with the share set to 0, nor for a queue
    // taking 5%.
    assert!(body[..drain].trim_end().ends_with("#pragma unroll 1"), "{src}");
    let rolled_off = |s: &str| s.lines().filter(|l| l.trim() != "#pragma unroll 1").map(|l| format!("{l}\n")).collect::<String>();
    let mut options = KernelOptions::default();
    options.experiments.rolled_drain_max = 0.0;
    let unrolled = generate_with(&p, &cols, &tables, options).unwrap().source;
    assert!(!unrolled.contains("#pragma unroll 1") && rolled_off(&src) == unrolled, "{unrolled}");
    let mut fuller = tables.clone();
    fuller[1].pass_permille = 50;
    let src5 = generate(&p, &cols, &fuller).unwrap().source;
    assert!(src5.contains("while (tq_n >= ") && !src5.contains("#pragma unroll 1"), "{src5}");
    let last = src.find("if (tq_n > 0)").unwrap();
    for part in [&body[drain..], &src[last..]] {
        assert!(part.contains("constexpr int ITEMS = 1;"), "{src}");
        assert!(part.contains("= h0_p0[s") && part.contains("const int r = tq_r[i];") && part.contains("atomic_add_split("), "{src}");
    }
    // The rows are queued as `int`s, the table's rows fitting 32 bits; with
    // `queue_rows32` off, as `long long`s.
    let mut options = KernelOptions::default();
    options.experiments.queue_rows32 = false;
    let wide = generate_with(&p, &cols, &tables, options).unwrap().source;
    assert!(wide.contains("__shared__ long long tq_row[4][96];") && wide.contains("const long long r = tq_r[i];") && !wide.contains("const int r = tq_r[i];"), "{wide}");
    assert!(wide.replace("long long tq_row", "int tq_row").replace("long long tq_r[", "int tq_r[").replace("const long long r = tq_r", "const int r = tq_r") == src, "{wide}");
    assert!(!body[..push].contains("atomic_add_split(") && !body[..push].contains("= h0_p0["), "{src}");
    // When most rows pass, they finish in place.
    let mut wide = tables.clone();
    wide[1].pass_permille = 900;
    let src = generate(&p, &cols, &wide).unwrap().source;
    assert!(!src.contains("__ballot_sync") && !src.contains("tq_n"), "{src}");
}

#[test]
fn columns_mostly_read_anyway_are_loaded_up_front_and_probed_together() {
    // The first probe lets 20% of the rows through: 83% of the other key's sectors
    // and 59% of the int64 value's would be read anyway. (Its rows finish in place: left
    // to itself, the grouping into a shared table queues them after that probe, and the
    // columns after it are read at the queued rows; see the next test but one.)
    let (p, cols, mut tables) = star();
    tables[1].pass_permille = 200;
    let generate = |p: &Pipeline, cols: &[GpuColumn], tables: &[GpuTable]| generate_with(p, cols, tables, in_place());
    let k = generate(&p, &cols, &tables).unwrap();
    let src = &k.source;
    // All three are loaded together, for the next tile while this one is probed
    // (before the tile loop for the first tile).
    // Checked against the row count before the loop and when the next tile is the
    // partial last one...
    let loads = "if (r < rows) { nc1[i] = col1[r]; nc0[i] = col0[r]; nc2[i] = col2[r]; }";
    assert_eq!(src.matches(loads).count(), 2, "{src}");
    // ...and not for a whole next tile.
    let body = whole_tile_loop(src);
    assert!(body.contains("if (next + 256 <= nrows) {"), "{src}");
    assert!(body.contains("{ const int r = next + (int)threadIdx.x + i * 128; nc1[i] = col1[r]; nc0[i] = col0[r]; nc2[i] = col2[r]; }"), "{src}");
    assert!(src.contains("{ c1[i] = nc1[i]; c0[i] = nc0[i]; c2[i] = nc2[i]; }"), "{src}");
    // Both membership bitmaps are read in one stage, tested in the next.
    let first = stage_of(src, "h1_bits[s");
    assert_eq!(stage_of(src, "h0_bits[s"), first, "{src}");
    assert_eq!(stage_of(src, "if (!f"), first + 1, "{src}");
    assert!(!src[src.find("h1_bits[s").unwrap()..].contains("= col"), "no column is loaded after the probes: {src}");
    // A bitmap too large for L1 is looked up only for the rows the first test keeps,
    // though its key is loaded up front.
    let mut large = tables.clone();
    large[0].slots = 1 << 20;
    let k = generate(&p, &cols, &large).unwrap();
    let src = &k.source;
    assert!(src.contains(loads), "{src}");
    assert!(src.find("h0_bits[s") > src.find("if (!f"), "{src}");
    // The estimate is what decides: at 0.5% the key waits for the first test.
    let (i32_col, i64_col) = (GpuColumn::plain(Width::I32, None), GpuColumn::plain(Width::I64, None));
    assert_eq!(sector_share(0.005, &i32_col), 1.0 - 0.995f64.powi(8));
    assert!(sector_share(0.005, &i32_col) < EAGER_MIN_SECTORS && sector_share(0.2, &i64_col) > EAGER_MIN_SECTORS);
    // A packed column is judged by its plain width (see `sector_share`).
    assert_eq!(sector_share(0.005, &GpuColumn { packed: true, ..i32_col }), sector_share(0.005, &i32_col));
}

/// The default options but with a grouped aggregation's rows queued only after its last
/// test (`Experiments::grouped_queue` off): what tests of loads up front take.
fn in_place() -> KernelOptions {
    KernelOptions { experiments: Experiments { grouped_queue: false, ..Experiments::default() }, ..KernelOptions::default() }
}

/// A grouped aggregation's rows queue after its first selective test (`defer::early_split`)
/// into a shared direct table; into the global arrays only where the rest reads a compact
/// column at the row and few of the queued rows reach the sums.
#[test]
fn grouped_rows_queue_after_their_first_selective_test_where_it_pays() {
    let (mut p, mut cols, mut tables) = star();
    // The first probe keeps 20%, the second all of those: star()'s grouping by year is a
    // shared direct table.
    tables[1].pass_permille = 200;
    let queued_at = |src: &str| {
        let body = whole_tile_loop(src);
        body.find("__ballot_sync(0xffffffffu, sel[i])").map(|push| (push, body.find("h0_bits[s").unwrap_or(usize::MAX)))
    };
    let k = generate(&p, &cols, &tables).unwrap();
    assert!(matches!(&k.sink, SinkLayout::Aggregate { table: GroupTable::Direct { .. }, .. }));
    // Queued before the second probe's lookup, whose key is read at the queued rows.
    let (push, probe) = queued_at(&k.source).unwrap_or_else(|| panic!("not queued: {}", k.source));
    assert!(push < probe, "{}", k.source);
    assert!(k.source.contains("c0[i] = col0[r];") && !k.source.contains("nc0[i]"), "{}", k.source);
    // Off, the rows queue after the last test instead, the columns loaded up front.
    let off = generate_with(&p, &cols, &tables, in_place()).unwrap().source;
    let (push, probe) = queued_at(&off).unwrap_or_else(|| panic!("not queued: {off}"));
    assert!(probe < push && off.contains("nc0[i]"), "{off}");
    // Into global arrays (a domain too large for shared memory), with a third probe of
    // the second key: its tables keep 20%, 20% and 20% (tested in that order)...
    if let Sink::Aggregate(a) = &mut p.sink {
        a.strategy = GroupStrategy::Perfect { domains: vec![KeyDomain::Range { min: 0, max: 199_999 }] };
    }
    let Operator::Probe(second) = p.operators[1].clone() else { unreachable!() };
    p.operators.push(Operator::Probe(tessera_ir::Probe { table: 2, ..second }));
    tables[0].pass_permille = 200;
    tables.push(GpuTable { pass_permille: 200, ..tables[1].clone() });
    let k = generate(&p, &cols, &tables).unwrap();
    assert!(matches!(&k.sink, SinkLayout::Aggregate { table: GroupTable::Global, .. }));
    // ...not over byte-wide columns...
    assert!(!k.source.contains("tq_n"), "{}", k.source);
    // ...but where the second key is bit-packed: 4% of the rows queued after the first
    // test reach the sums. The key is then decoded only for the queued rows.
    cols[1].narrow = Some(Narrow::Bits(12));
    let k = generate(&p, &cols, &tables).unwrap();
    let body = whole_tile_loop(&k.source);
    let push = body.find("__ballot_sync(0xffffffffu, sel[i])").unwrap_or_else(|| panic!("not queued: {}", k.source));
    assert!(body.find("h0_bits[s") < Some(push) && Some(push) < body.find("h1_bits[s"), "{}", k.source);
    let drain = k.source.find("while (tq_n >= 32) {").unwrap_or_else(|| panic!("no drain: {}", k.source));
    assert!(k.source[drain..].contains("tessera_bits_get<12, 128>(col1, r)"), "{}", k.source);
    // Not where a quarter of them would (the third table keeping all).
    tables[2].pass_permille = 1000;
    assert!(!generate(&p, &cols, &tables).unwrap().source.contains("tq_n"));
    tables[2].pass_permille = 200;
    if crate::test_support::nvrtc_or_skip("grouped rows queued early compile") {
        crate::compile_cubin(&k.source, "sm_90").unwrap_or_else(|e| panic!("{e}\n{}", k.source));
    }
}

#[test]
fn builds_write_rows_payload_and_a_membership_bitmap() {
    let p = build_pipeline();
    let k = generate(&p, &cols(), &[]).unwrap();
    let SinkLayout::Build { table } = &k.sink else { panic!("not a build") };
    assert_eq!((table.min, table.slots, table.payload.len()), (5, 100, 1));
    // outs: rows, the payload column, the bitmap; a bit is set for each row stored.
    assert!(k.source.contains("int32_t* __restrict__ out_rows, int64_t* __restrict__ out_p0, uint32_t* __restrict__ out_bits)"), "{}", k.source);
    assert!(k.source.contains("atomicOr(&out_bits[s1[i] >> 5], 1u << (s1[i] & 31));"), "{}", k.source);
    // Out-of-range keys and duplicates raise their flags.
    assert!(k.source.contains("flags[1] = 1ull") && k.source.contains("flags[2] = 1ull"), "{}", k.source);
}

/// Ranges that start at i64::MIN: a perfect-hash group key's, a dense build's and a
/// dense probe's smallest key are written as C reads them signed (`-9223372036854775808LL`
/// is an unsigned 2^63 negated) and taken off in unsigned arithmetic; the kernels
/// compile.
#[test]
fn ranges_from_the_smallest_64_bit_value_are_written_signed() {
    let mut agg = grouped(9, AggFunc::Sum);
    let Sink::Aggregate(a) = &mut agg.sink else { unreachable!() };
    a.strategy = GroupStrategy::Perfect { domains: vec![KeyDomain::Range { min: i64::MIN, max: i64::MIN + 9 }] };
    let agg_cols = vec![GpuColumn::plain(Width::I64, None), GpuColumn::plain(Width::I64, None)];
    let grouped_k = generate(&agg, &agg_cols, &[]).unwrap_or_else(|e| panic!("{e:?}"));
    assert!(grouped_k.source.contains("((long long)((unsigned long long)(c0[i]) - (unsigned long long)(-9223372036854775807LL - 1LL) + 1ull)) * 1LL)"), "{}", grouped_k.source);
    let mut build = build_pipeline();
    let Sink::HashBuild(h) = &mut build.sink else { unreachable!() };
    h.strategy = BuildStrategy::Perfect { min: i64::MIN, max: i64::MIN + 99 };
    let built = generate(&build, &agg_cols, &[]).unwrap_or_else(|e| panic!("{e:?}"));
    assert!(built.source.contains("(long long)((unsigned long long)(c0[i]) - (unsigned long long)(-9223372036854775807LL - 1LL))"), "{}", built.source);
    let (p, mut star_cols, mut tables) = star();
    star_cols[1] = GpuColumn::plain(Width::I64, None);
    tables[1].min = i64::MIN;
    let probed = generate(&p, &star_cols, &tables).unwrap_or_else(|e| panic!("{e:?}"));
    assert!(probed.source.contains("(unsigned long long)(c1[i]) - (unsigned long long)((-9223372036854775807LL - 1LL)), 100ull)"), "{}", probed.source);
    for k in [&grouped_k, &built, &probed] {
        assert!(!k.source.contains("9223372036854775808"), "{}", k.source);
        compiles(k, "a range from i64::MIN");
    }
}

/// A build keeps a payload of a known range narrowed: dictionary codes by the
/// dictionary's size, other values by the statistics' range (distances from its start,
/// checked: a value outside the form raises `flags[1]`); probes add the start back. Wide
/// ranges, NULLs, 32-bit columns by default and the experiment off keep the width.
#[test]
fn builds_narrow_payloads_of_a_known_range() {
    let build = |ranges: Vec<Option<(i64, i64)>>, cols: &[GpuColumn], narrow_payloads: u32| {
        let mut p = build_pipeline();
        let Sink::HashBuild(h) = &mut p.sink else { unreachable!() };
        h.payload = vec![0, 1];
        h.payload_ranges = ranges;
        let options = KernelOptions { experiments: Experiments { narrow_payloads, ..Experiments::default() }, ..KernelOptions::default() };
        generate_with(&p, cols, &[], options).unwrap()
    };
    let table = |k: &Kernel| match &k.sink {
        SinkLayout::Build { table } => table.clone(),
        other => panic!("not a build: {other:?}"),
    };
    let forms = |t: &GpuTable| t.payload.iter().map(|c| c.narrow).collect::<Vec<_>>();
    // The key (32-bit) by its range, the value (64-bit) from 1,000 to 1,200 in a byte.
    let k = build(vec![Some((5, 104)), Some((1000, 1200))], &cols(), 32);
    let t = table(&k);
    assert_eq!((forms(&t), t.payload_refs.clone()), (vec![Some(Narrow::U8), Some(Narrow::U8)], vec![5, 1000]));
    assert!(k.source.contains("uint8_t* __restrict__ out_p0, uint8_t* __restrict__ out_p1"), "{}", k.source);
    assert!(k.source.contains("(unsigned long long)(c1[i]) - (unsigned long long)1000LL;"), "{}", k.source);
    assert!(k.source.contains("if ((long long)(c1[i]) < 1000LL || pd"), "{}", k.source);
    assert!(k.source.contains(" > 255ull) { flags[1] = 1ull;"), "{}", k.source);
    let mut kernels = vec![k];
    // Dictionary codes need no statistics: 300 entries, two bytes from 0. A 64-bit value
    // of a range wider than 16 bits takes four; wider than 32, its width.
    let mut dict_cols = cols();
    dict_cols[0].dictionary = Some(DictRef { size: 300, id: 0, by_row: false });
    let k = build(vec![None, Some((-5, 70_000))], &dict_cols, 32);
    let t = table(&k);
    assert_eq!((forms(&t), t.payload_refs.clone()), (vec![Some(Narrow::U16), Some(Narrow::U32)], vec![0, -5]));
    kernels.push(k);
    let t = table(&build(vec![None, Some((0, 1 << 40))], &cols(), 32));
    assert_eq!(forms(&t), vec![None, None]);
    // By default (64) the 64-bit value alone; off, or a column that may be NULL: the
    // width.
    assert_eq!(forms(&table(&build(vec![Some((5, 104)), Some((1000, 1200))], &cols(), 64))), vec![None, Some(Narrow::U8)]);
    assert_eq!(forms(&table(&build(vec![Some((5, 104)), Some((1000, 1200))], &cols(), 0))), vec![None, None]);
    let mut nullable = cols();
    nullable[1].nullable = true;
    assert_eq!(forms(&table(&build(vec![Some((5, 104)), Some((1000, 1200))], &nullable, 32))), vec![Some(Narrow::U8), None]);
    // A probe reads the distance and adds the reference back, in the value's width.
    let (p, cols, mut tables) = star();
    tables[0].payload[0].narrow = Some(Narrow::U8);
    tables[0].payload_refs[0] = 1992;
    let k = generate(&p, &cols, &tables).unwrap();
    assert!(k.source.contains("const uint8_t* __restrict__ h0_p0"), "{}", k.source);
    assert!(k.source.contains("(int32_t)((uint32_t)1992LL + (uint32_t)h0_p0["), "{}", k.source);
    kernels.push(k);
    if crate::test_support::nvrtc_or_skip("narrowed payloads compile with NVRTC") {
        for k in &kernels {
            crate::compile_cubin(&k.source, "sm_90").unwrap_or_else(|e| panic!("{e}\n{}", k.source));
        }
    }
}

/// A build without keys (a cross join's side) stays on the CPU with its reason: no
/// hash table holds "every row matches" (its kernel used to pack an empty key).
#[test]
fn builds_without_keys_are_refused() {
    let mut p = build_pipeline();
    if let Sink::HashBuild(h) = &mut p.sink {
        h.keys.clear();
        h.strategy = BuildStrategy::Hash { key_ranges: Vec::new() };
    }
    let reasons = generate(&p, &cols(), &[]).unwrap_err();
    assert!(reasons.iter().any(|r| matches!(&r.reason, Reason::HashKey(k) if k.starts_with("none"))), "{reasons:?}");
}

#[test]
fn tile_shape_follows_the_options() {
    let (p, cols, tables) = star();
    let k = generate_with(&p, &cols, &tables, KernelOptions { literals: Literals::Parameters, items_per_thread: Some(8), ..KernelOptions::default() }).unwrap();
    assert_eq!(k.items_per_thread, 8);
    assert!(k.source.contains("constexpr int ITEMS = 8;") && k.source.contains("gridDim.x * 1024"), "{}", k.source);
    assert!(generate_with(&p, &cols, &tables, KernelOptions { literals: Literals::Parameters, items_per_thread: Some(0), ..KernelOptions::default() }).is_err());
    // By default: two probes, two items; no probe, four.
    assert_eq!(generate(&p, &cols, &tables).unwrap().items_per_thread, ITEMS_PER_THREAD_MANY_PROBES);
    assert_eq!(generate(&grouped(9, AggFunc::Sum), &self::cols(), &[]).unwrap().items_per_thread, ITEMS_PER_THREAD);
    // Lean pipelines (one group, nothing loaded but columns and membership bits) take
    // `ITEMS_PER_THREAD_LEAN`; grouped ones and star joins do not.
    let mut scalar = grouped(9, AggFunc::Sum);
    if let Sink::Aggregate(a) = &mut scalar.sink {
        a.group_by.clear();
        a.strategy = GroupStrategy::Scalar;
        a.fields.remove(0);
    }
    assert_eq!(generate(&scalar, &self::cols(), &[]).unwrap().items_per_thread, ITEMS_PER_THREAD_LEAN);
    let lean = generate_with(&scalar, &self::cols(), &[], KernelOptions::default()).unwrap();
    assert!(lean.source.contains(&format!("constexpr int ITEMS = {ITEMS_PER_THREAD_LEAN};")), "{}", lean.source);
    assert_eq!(generate(&grouped(9, AggFunc::Sum), &self::cols(), &[]).unwrap().items_per_thread, ITEMS_PER_THREAD);
    // Asked for, items are as asked; `lean_items` 0 gives lean pipelines the others'.
    let asked = KernelOptions { items_per_thread: Some(2), ..KernelOptions::default() };
    assert_eq!(generate_with(&scalar, &self::cols(), &[], asked).unwrap().items_per_thread, 2);
    let mut off = KernelOptions::default();
    off.experiments.lean_items = 0;
    assert_eq!(generate_with(&scalar, &self::cols(), &[], off).unwrap().items_per_thread, ITEMS_PER_THREAD);
    // SSB q1.1's shape, a probe testing membership only: lean. The same probe summing a
    // column of the build side: not.
    let (q11, q11_cols, q11_tables) = filtered_probe(60, Expr::lit(Scalar::Boolean(true), Type::Boolean));
    assert_eq!(generate(&q11, &q11_cols, &q11_tables).unwrap().items_per_thread, ITEMS_PER_THREAD_LEAN);
    let (mut payload, payload_cols, mut payload_tables) = filtered_probe(60, Expr::lit(Scalar::Boolean(true), Type::Boolean));
    if let Operator::Probe(probe) = &mut payload.operators[1] {
        probe.build_fields = vec![Field::new("price", Type::Int64, false)];
    }
    if let Sink::Aggregate(a) = &mut payload.sink {
        a.aggregates[0].arg = Some(Expr::col(3, "price"));
    }
    payload_tables[0].payload = vec![GpuColumn::plain(Width::I64, None)];
    assert_eq!(generate(&payload, &payload_cols, &payload_tables).unwrap().items_per_thread, ITEMS_PER_THREAD);
}

#[test]
fn star_join_kernels_compile_with_nvrtc() {
    if !crate::test_support::nvrtc_or_skip("star join kernels compile with NVRTC") {
        return;
    }
    let (p, cols, tables) = star();
    for items in [1, 4, 8, 16] {
        for literals in [Literals::Inline, Literals::Parameters] {
            let k = generate_with(&p, &cols, &tables, KernelOptions { literals, items_per_thread: Some(items), ..KernelOptions::default() }).unwrap();
            if let Err(e) = crate::compile_cubin(&k.source, "sm_90") {
                panic!("{items} items, {literals:?}: {e}\n{}", k.source);
            }
        }
    }
}

/// `Experiments::carry`: a whole tile's last stage (the aggregation) runs in the next
/// tile's iteration, between that tile's lookups and its second-to-last stage, reading
/// the values it carries over (the payload and the late-loaded column) and its flags
/// (`psel`); the last whole tile's runs after the loop, and the partial tile as before.
#[test]
fn a_tiles_last_stage_can_run_an_iteration_late() {
    let (mut p, cols, tables) = star();
    // A domain too large for a shared table: global atomics, no warp queue.
    if let Sink::Aggregate(a) = &mut p.sink {
        a.strategy = GroupStrategy::Perfect { domains: vec![KeyDomain::Range { min: 0, max: 99_999 }] };
    }
    let with = |carry| {
        let experiments = Experiments { carry, ..Experiments::default() };
        generate_with(&p, &cols, &tables, KernelOptions { experiments, ..KernelOptions::default() }).unwrap().source
    };
    let (late, now) = (with(true), with(false));
    assert!(!now.contains("psel"), "{now}");
    assert!(late.contains("int psel[ITEMS] = {};") && late.contains("int (&sel)[ITEMS] = psel;"), "{late}");
    assert!(late.contains("for (int i = 0; i < ITEMS; ++i) psel[i] = sel[i];"), "{late}");
    // The atomics: in the loop (the previous tile's), after it (the last whole tile's)
    // and in the partial tile.
    assert_eq!(late.matches("atomic_add_split(&out_a0[").count(), 3, "{late}");
    assert_eq!(now.matches("atomic_add_split(&out_a0[").count(), 2, "{now}");
    // In the loop the previous tile's aggregation comes before this tile's payload loads.
    let body = &late[late.find("for (; tile").unwrap()..late.find("// The last whole tile").unwrap()];
    assert!(body.find("int (&sel)[ITEMS] = psel;").unwrap() < body.find("h0_p0[").or_else(|| body.find("h0_p")).unwrap(), "{late}");
    if crate::test_support::nvrtc_or_skip("kernels running a stage a tile late compile with NVRTC") {
        crate::compile_cubin(&late, "sm_90").unwrap_or_else(|e| panic!("{e}\n{late}"));
    }
}

/// A scan whose leading filter compares a column with a literal takes the executor's
/// zone bitmap (`Param::Zones`): a tile it rules out runs none of the stages (whose
/// flags stay `true` in whole tiles), and the columns loaded up front are not loaded for
/// it; without such a filter, no bitmap. Each tile's zone is tested once, where the
/// tile's columns are loaded a tile ahead (`zn`, for a next tile that exists), and
/// carried to the iteration running it (`zt`); `TESSERA_EXP_ZONE_CARRY=0` tests it
/// where it is used, as before; `Experiments::zone_one` reads one bit of it.
#[test]
fn zone_bitmaps_skip_tiles() {
    let k = generate(&grouped(10, AggFunc::Sum), &cols(), &[]).unwrap();
    let src = &k.source;
    assert!(k.params.contains(&Param::Zones) && src.contains("const uint32_t* __restrict__ zones"), "{src}");
    assert!(src.contains("sel[i] = true;\n") && src.contains("    bool zt = tessera_zone_pass<512>(zones, tile, rows);"), "{src}");
    assert!(src.contains("        const bool zn = next < nrows && tessera_zone_pass<512>(zones, next, rows);\n"), "{src}");
    // Tested twice in all: the block's first tile, and each next one.
    assert_eq!(src.matches("tessera_zone_pass<").count(), 2, "{src}");
    let (test, stage) = (src.find("        if (zt) {\n").unwrap(), src.find("if (!(((long long)(c1[i])").unwrap());
    assert!(test < stage && stage < src.find("        zt = zn;\n").unwrap(), "{src}");
    let mut options = KernelOptions::default();
    options.experiments.eager_min_sectors = 0.0;
    let eager = generate_with(&grouped(10, AggFunc::Sum), &cols(), &[], options).unwrap();
    assert!(eager.source.contains("const bool zn = next < nrows && tessera_zone_pass<"), "{}", eager.source);
    assert!(eager.source.contains("if (r < rows && zn) {") && eager.source.contains(" if (zn) {"), "{}", eager.source);
    let mut before = KernelOptions::default();
    before.experiments.zone_carry = false;
    let before = generate_with(&grouped(10, AggFunc::Sum), &cols(), &[], before).unwrap();
    let old = &before.source;
    assert!(old.contains("        if (tessera_zone_pass<512>(zones, tile, rows)) {\n") && old.contains("const bool zn = tessera_zone_pass<512>(zones, next, rows);"), "{old}");
    assert!(!old.contains("zt"), "{old}");
    let mut one = KernelOptions::default();
    one.experiments.zone_one = true;
    let one = generate_with(&grouped(10, AggFunc::Sum), &cols(), &[], one).unwrap();
    let base = generate_with(&grouped(10, AggFunc::Sum), &cols(), &[], KernelOptions::default()).unwrap();
    assert_eq!(one.source.matches("tessera_zone_pass<512, true>").count(), 2, "{}", one.source);
    assert_eq!(one.source.replace("tessera_zone_pass<512, true>", "tessera_zone_pass<512>"), base.source, "{}", one.source);
    let mut unfiltered = grouped(10, AggFunc::Sum);
    unfiltered.operators.clear();
    let plain = generate(&unfiltered, &cols(), &[]).unwrap();
    assert!(!plain.params.contains(&Param::Zones) && !plain.source.contains("zone"), "{}", plain.source);
    if crate::test_support::nvrtc_or_skip("zone-bitmap kernels compile with NVRTC") {
        for k in [&k, &eager, &before, &one] {
            if let Err(e) = crate::compile_cubin(&k.source, "sm_90") {
                panic!("{e}\n{}", k.source);
            }
        }
    }
}

/// Narrowed source columns (`Narrow`) are read at their byte width and added to their
/// reference, wherever they are loaded (up front, after a probe, queued): 32-bit values
/// in 32-bit arithmetic, 64-bit ones in 64; a column's reference is a parameter after
/// the columns; the share of sectors a selective load touches counts the narrow bytes;
/// and the kernels compile.
#[test]
fn narrow_columns_load_at_their_width() {
    let (p, mut cols, tables) = star();
    cols[0].narrow = Some(Narrow::U16);
    cols[2].narrow = Some(Narrow::U32);
    let k = generate(&p, &cols, &tables).unwrap();
    let src = &k.source;
    assert!(src.contains("const uint16_t* __restrict__ col0"), "{src}");
    assert!(src.contains("const int32_t* __restrict__ col1"), "{src}");
    assert!(src.contains("const uint32_t* __restrict__ col2"), "{src}");
    assert!(src.contains("const long long col0_ref") && src.contains("const long long col2_ref") && !src.contains("col1_ref"), "{src}");
    assert!(src.contains("(int32_t)((uint32_t)col0_ref + (uint32_t)col0["), "{src}");
    assert!(src.contains("(int64_t)((unsigned long long)col2_ref + (unsigned long long)col2["), "{src}");
    let at = |p: &Param| k.params.iter().position(|q| q == p).unwrap();
    assert!(at(&Param::Column { column: 2, width: Width::I64, packed: false, narrow: Some(Narrow::U32) }) < at(&Param::Reference { column: 0 }));
    assert!(at(&Param::Reference { column: 0 }) < at(&Param::Reference { column: 2 }));
    // A 2-byte column has 16 rows a sector: a load for 5% of the rows touches more of
    // its sectors than of a 4-byte column's.
    assert!(sector_share(0.05, &cols[0]) > sector_share(0.05, &cols[1]));
    // Every column loaded up front, the next tile's while this one runs:
    let mut options = KernelOptions::default();
    options.experiments.eager_min_sectors = 0.0;
    let eager = generate_with(&p, &cols, &tables, options).unwrap();
    assert!(eager.source.contains("nc2[i] = (int64_t)((unsigned long long)col2_ref + (unsigned long long)col2[r]);"), "{}", eager.source);
    // Without narrowed columns, the kernels are the plain ones.
    let plain = generate(&p, &star().1, &tables).unwrap();
    assert!(!plain.source.contains("_ref"), "{}", plain.source);
    if crate::test_support::nvrtc_or_skip("narrow-column kernels compile with NVRTC") {
        for k in [&k, &eager] {
            if let Err(e) = crate::compile_cubin(&k.source, "sm_90") {
                panic!("{e}\n{}", k.source);
            }
        }
    }
    // A narrow form only where it is narrower than the column's width.
    assert_eq!(Narrow::for_span(255, Width::I32, 0), Some(Narrow::U8));
    assert_eq!(Narrow::for_span(256, Width::I32, 0), Some(Narrow::U16));
    assert_eq!(Narrow::for_span(65_536, Width::I32, 0), None);
    assert_eq!(Narrow::for_span(65_536, Width::I64, 0), Some(Narrow::U32));
    assert_eq!(Narrow::for_span(u64::from(u32::MAX) + 1, Width::I64, 0), None);
    assert_eq!(Narrow::for_span(0, Width::Str, 0), None);
    // Bit-packed where allowed and at most BITS_MAX_SHARE of the replaced form's bits.
    assert_eq!(Narrow::for_span(0, Width::I32, 8), Some(Narrow::Bits(1)));
    assert_eq!(Narrow::for_span(10, Width::I32, 8), Some(Narrow::Bits(4)));
    assert_eq!(Narrow::for_span(63, Width::I32, 8), Some(Narrow::Bits(6)));
    assert_eq!(Narrow::for_span(64, Width::I32, 8), Some(Narrow::U8));
    assert_eq!(Narrow::for_span(2_555, Width::I32, 8), Some(Narrow::Bits(12)));
    assert_eq!(Narrow::for_span(4_096, Width::I32, 8), Some(Narrow::U16));
    assert_eq!(Narrow::for_span((1 << 24) - 1, Width::I64, 8), Some(Narrow::Bits(24)));
    assert_eq!(Narrow::for_span(1 << 24, Width::I64, 8), Some(Narrow::U32));
    // A 32-bit column without a byte form replaces its own 32 bits.
    assert_eq!(Narrow::for_span(600_000, Width::I32, 8), Some(Narrow::Bits(20)));
    assert_eq!(Narrow::for_span(1 << 24, Width::I32, 8), None);
    assert_eq!(Narrow::for_span(0, Width::Str, 8), None);
    // From 32 bits: only what would take 4 bytes is bit-packed.
    assert_eq!(Narrow::for_span(10, Width::I32, 32), Some(Narrow::U8));
    assert_eq!(Narrow::for_span(2_555, Width::I32, 32), Some(Narrow::U16));
    assert_eq!(Narrow::for_span(600_000, Width::I32, 32), Some(Narrow::Bits(20)));
    assert_eq!(Narrow::for_span(600_000, Width::I64, 32), Some(Narrow::Bits(20)));
}

/// `pack_bits` lane-interleaves a column: row `g × 32B + v × B + t` at bits `v × w` of
/// stream `t` of group `g`, word `j` of the stream at `g × B × w + j × B + t`; it packs a
/// column in chunks of whole groups as it does whole: every width, random values and
/// each width's extremes, columns ending inside a group and inside a block's row.
#[test]
fn bit_packing_round_trips_every_width() {
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let b = BLOCK_THREADS as usize;
    for w in 1..=31u32 {
        let top = (1u64 << w) - 1;
        for n in [0usize, 1, 127, 129, 4095, 4096, 4097, 9000] {
            let values: Vec<u32> = (0..n)
                .map(|i| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    match i % 4 { 0 => top as u32, 1 => 0, _ => (x & top) as u32 }
                })
                .collect();
            let words = Narrow::bit_words(n, w);
            assert_eq!(words, (n.div_ceil(BITS_GROUP_ROWS) * w as usize + 1) * b);
            let mut whole = vec![0u32; words];
            assert_eq!(crate::codegen::pack_bits(&values, w, &mut whole), None);
            for (r, &v) in values.iter().enumerate() {
                assert_eq!(crate::codegen::unpack_bit(&whole, w, r), v, "width {w}, {n} rows, row {r}");
                // The layout itself, read bit by bit: stream t's bits v * w on.
                let (g, vi, t) = (r / BITS_GROUP_ROWS, (r / b) % 32, r % b);
                let bit = |k: usize| (whole[g * b * w as usize + (k / 32) * b + t] >> (k % 32)) & 1;
                let read = (0..w as usize).fold(0u32, |acc, k| acc | bit(vi * w as usize + k) << k);
                assert_eq!(read, v, "width {w}, row {r} where the layout puts it");
            }
            let mut chunked = vec![0u32; words];
            for (vals, out) in values.chunks(BITS_GROUP_ROWS).zip(chunked.chunks_mut(b * w as usize)) {
                assert_eq!(crate::codegen::pack_bits(vals, w, out), None);
            }
            assert_eq!(chunked, whole, "width {w}, {n} rows in chunks");
        }
        // A value wider than the width is reported, the first one.
        if w < 31 {
            let mut out = vec![0u32; Narrow::bit_words(3, w)];
            assert_eq!(crate::codegen::pack_bits(&[1, 1 << w, 1 << (w + 1)], w, &mut out), Some(1 << w));
        }
    }
}

/// The words a thread loads for a tile's values (`bit_loads`) cover them from every bit
/// a tile can start at, and stay inside the column's words (its spare word a stream
/// included): every width and every item count a tile may have (a power of two to 32).
#[test]
fn bit_loads_cover_every_tile_and_stay_in_the_column() {
    for w in 1..=31u32 {
        for items in [1u32, 2, 4, 8, 16, 32] {
            let loads = bit_loads(w, items);
            assert!(loads <= (items * w).div_ceil(32) + 1, "width {w}, {items} items: {loads} loads, more than the words kept");
            for v0 in (0..32).step_by(items as usize) {
                let (first, s) = ((v0 * w) / 32, (v0 * w) % 32);
                let last = (s + items * w - 1) / 32;
                assert!(last < loads, "width {w}, {items} items from value {v0}: word {last} not loaded");
                // Word w of a stream is the next group's first (or the column's spare).
                assert!(first + loads - 1 <= w, "width {w}, {items} items from value {v0}: past the spare word");
            }
        }
    }
    assert_eq!(bit_loads(20, 4), 3);
    assert_eq!(bit_loads(24, 4), 3);
    assert_eq!(bit_loads(17, 2), 2);
}

/// Bit-packed columns (`Narrow::Bits`) loaded up front are loaded as the words of the
/// thread's own stream (`tessera_bits_word` at the tile's value of the streams a kernel
/// over `int` rows counts, `tessera_bits_base` over 64-bit rows; coalesced, a block's
/// row of words apart) and taken out by `tessera_bits_take`, even one alone; loaded where first used (or with
/// `narrow_words` off, or items that do not divide 32) they are read a row alone
/// (`tessera_bits_get`); the kernels compile.
#[test]
fn bit_packed_columns_load_a_threads_words() {
    let (p, mut cols, tables) = star();
    cols[0].narrow = Some(Narrow::Bits(12));
    cols[1].narrow = Some(Narrow::Bits(4));
    cols[2].narrow = Some(Narrow::Bits(24));
    let mut options = KernelOptions::default();
    options.items_per_thread = Some(4);
    let late = generate_with(&p, &cols, &tables, options).unwrap();
    assert!(late.source.contains("const uint32_t* __restrict__ col0"), "{}", late.source);
    assert!(late.source.contains("tessera_bits_get<12, 128>(col0, "), "{}", late.source);
    // The first probe's key (the more selective probe goes first) is the one column
    // loaded up front: alone, bit-packed, still as its words.
    assert!(late.source.contains("tessera_bits_word<128>(col1, kq * 4u);"), "{}", late.source);
    options.experiments.eager_min_sectors = 0.0;
    let k = generate_with(&p, &cols, &tables, options).unwrap();
    let src = &k.source;
    // 4 items: 48 bits of 12-bit values (2 words loaded, 3 kept), 16 of 4-bit ones, 96 of 24-bit ones.
    assert!(src.contains("unsigned int nbc0[3] = {};") && src.contains("unsigned int nbc1[2] = {};") && src.contains("unsigned int nbc2[4] = {};"), "{src}");
    assert!(src.contains("{ const unsigned int* __restrict__ bw = tessera_bits_word<128>(col0, kq * 12u); nbc0[0] = __ldg(bw + 0); nbc0[1] = __ldg(bw + 128); }"), "{src}");
    assert!(src.contains(" if (next < rows) { const unsigned int* __restrict__ bw = tessera_bits_word<128>(col0, kq * 12u);"), "{src}");
    assert!(src.contains(" if (tile < rows) { const unsigned int* __restrict__ bw = tessera_bits_word<128>(col1, kq * 4u); nbc1[0] = __ldg(bw + 0); }"), "{src}");
    // 512 rows a tile: 4 values of each stream a tile.
    assert!(src.contains("unsigned int kq = tessera_stream_value<128>(tile);") && src.contains("const unsigned int kstep = gridDim.x * 4u;"), "{src}");
    assert!(src.contains("nbc2[0] = __ldg(bw + 0); nbc2[1] = __ldg(bw + 128); nbc2[2] = __ldg(bw + 256); }"), "{src}");
    assert!(src.contains("unsigned int dbc0[ITEMS]; tessera_bits_take<12, ITEMS>(nbc0, (kq * 12u) & 31u, dbc0);"), "{src}");
    // Whole tiles advance the count before loading the next tile's words; the last,
    // partial one takes its values and advances nothing.
    assert_eq!(src.matches("kq += kstep;").count(), 1, "{src}");
    // Over 64-bit rows (a lean pipeline's) of a table of at most INDEX32_MAX_ROWS rows,
    // still counted by their value of the streams, in 32 bits, and refused more rows;
    // with `stream_steps` off the words and the shift are found from the tile.
    let long = generate_with(&p, &cols, &tables, KernelOptions { experiments: Experiments { index32: false, ..options.experiments }, ..options }).unwrap();
    assert!(long.source.contains("long long tile") && long.source.contains("unsigned int kq = tessera_stream_value<128>(tile);"), "{}", long.source);
    assert_eq!(long.rows_limit, INDEX32_MAX_ROWS);
    let wide = generate_with(&p, &cols, &tables, KernelOptions { experiments: Experiments { index32: false, stream_steps: false, ..options.experiments }, ..options }).unwrap();
    assert!(wide.rows_limit > INDEX32_MAX_ROWS);
    assert!(wide.source.contains("{ const unsigned int* __restrict__ bw = tessera_bits_base<12, 128>(col0, next); nbc0[0] = __ldg(bw + 0); nbc0[1] = __ldg(bw + 128); }"), "{}", wide.source);
    assert!(wide.source.contains("unsigned int dbc0[ITEMS]; tessera_bits_take<12, ITEMS>(nbc0, tessera_bits_shift<12, 128>(tile), dbc0);"), "{}", wide.source);
    assert!(!wide.source.contains("kq"), "{}", wide.source);
    assert!(src.contains("c0[i] = (int32_t)((uint32_t)col0_ref + (uint32_t)dbc0[i]);"), "{src}");
    assert!(src.contains("c2[i] = (int64_t)((unsigned long long)col2_ref + (unsigned long long)dbc2[i]);"), "{src}");
    options.experiments.narrow_words = false;
    let off = generate_with(&p, &cols, &tables, options).unwrap();
    assert!(!off.source.contains("tessera_bits_word") && off.source.contains("tessera_bits_get<4, 128>(col1, r)"), "{}", off.source);
    // A row read alone is an `int` over `int` rows (`tessera_bits_get`'s 32-bit form).
    assert!(off.source.contains("const int r = tile + (int)threadIdx.x + i * 128;"), "{}", off.source);
    options.experiments.narrow_words = true;
    options.items_per_thread = Some(6);
    let six = generate_with(&p, &cols, &tables, options).unwrap();
    assert!(!six.source.contains("tessera_bits_word") && six.source.contains("tessera_bits_get<4, 128>(col1, r)"), "{}", six.source);
    if crate::test_support::nvrtc_or_skip("bit-packed column kernels compile with NVRTC") {
        for k in [&late, &k, &off, &six, &wide, &long] {
            if let Err(e) = crate::compile_cubin(&k.source, "sm_90") {
                panic!("{e}
{}", k.source);
            }
        }
    }
}

/// Runs (`Narrow::Runs`) round-trip: every row read back through the directory
/// (`run_value`, what `tessera_runs_get` computes), laid out whole or in parts on several
/// threads alike; adversarial columns (every row its own run, one run, runs ending at
/// and across 32-row words and parts, extremes, a last partial word, empty).
#[test]
fn runs_round_trip_whole_and_in_parts() {
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut columns: Vec<Vec<u32>> = vec![
        Vec::new(),
        vec![7],
        (0..100).map(|i| i as u32).collect(),
        vec![u32::MAX; 1000],
        (0..1000).map(|i| if (i / 32) % 2 == 0 { 0 } else { u32::MAX }).collect(),
        (0..1000).map(|i| ((i + 1) / 33) as u32).collect(),
        (0..4097).map(|i| (i % 2) as u32).collect(),
    ];
    let mut random = Vec::new();
    while random.len() < 50_000 {
        let (v, len) = (next() as u32, (next() % 9) as usize + 1);
        random.extend(std::iter::repeat_n(v, len));
    }
    columns.push(random);
    for rows in &columns {
        let runs = 1.max(rows.windows(2).filter(|w| w[0] != w[1]).count() + usize::from(!rows.is_empty()));
        let whole = crate::codegen::runs_of(rows, 1).unwrap();
        assert_eq!(whole.0.len(), 2 * rows.len().div_ceil(32) + crate::codegen::layout::RUNS_DIRECTORY_PAD);
        assert!(whole.0[2 * rows.len().div_ceil(32)..].iter().all(|&w| w == 0));
        assert_eq!(whole.1.len(), runs, "{} rows", rows.len());
        for threads in [2, 3, 7, 64] {
            assert_eq!(crate::codegen::runs_of(rows, threads).unwrap(), whole, "{} rows on {threads} threads", rows.len());
        }
        for (r, &v) in rows.iter().enumerate() {
            assert_eq!(crate::codegen::run_value(&whole.0, &whole.1, r), v, "{} rows, row {r}", rows.len());
            // Bit 0 of a word's starts is never set: the second word names row 0's run.
            assert_eq!(whole.0[2 * (r / 32)] & 1, 0);
        }
    }
}

/// Runs are chosen where they take at most half the bits a row of the form they replace,
/// from the column's runs: SSB's customer keys and dates repeated over an order's lines
/// (4 rows a run), not 1.5 rows a run, nor a column whose run numbers pass 32 bits;
/// against bit-packed forms too; forced, wherever values take at most 4 bytes.
#[test]
fn runs_are_chosen_where_they_take_half_the_bits() {
    let runs = |value, per_run| Some(Narrow::Runs { value, per_run });
    assert_eq!(Narrow::for_column(600_000, Width::I32, 0, 1, 120_000_000, 30_000_000), runs(4, 4));
    assert_eq!(Narrow::for_column(61_131, Width::I32, 0, 1, 120_000_000, 30_000_000), runs(2, 4));
    assert_eq!(runs(4, 4).unwrap().row_bits(), 10);
    assert_eq!(runs(2, 4).unwrap().row_bits(), 6);
    // Off, or too few rows a run: the single-value form (32-bit keys stay at their width).
    assert_eq!(Narrow::for_column(600_000, Width::I32, 0, 0, 120_000_000, 30_000_000), None);
    assert_eq!(Narrow::for_column(600_000, Width::I32, 0, 1, 120_000_000, 80_000_000), None);
    assert_eq!(Narrow::for_column(600_000, Width::I64, 0, 1, 120_000_000, 0), Some(Narrow::U32));
    // Runs of 2 rows of 1-byte values: 6 bits a row against 8.
    assert_eq!(Narrow::for_column(40, Width::I32, 0, 1, 1000, 500), Some(Narrow::U8));
    // Bit-packed: 20 bits against 2 + 32 / 4.
    assert_eq!(Narrow::for_column(600_000, Width::I32, 8, 1, 120_000_000, 30_000_000), runs(4, 4));
    assert_eq!(Narrow::for_column(600_000, Width::I32, 8, 1, 120_000_000, 40_000_000), Some(Narrow::Bits(20)));
    // Values beyond 32 bits, and more rows than 32-bit run numbers hold.
    assert_eq!(Narrow::for_column(1 << 40, Width::I64, 0, 1, 1 << 20, 1 << 10), None);
    assert_eq!(Narrow::for_column(600_000, Width::I64, 0, 1, 1 << 33, 1 << 20), Some(Narrow::U32));
    // Forced (to test them): any column whose values take at most 4 bytes.
    assert_eq!(Narrow::for_column(40, Width::I32, 0, 2, 1000, 1000), runs(1, 1));
    assert_eq!(Narrow::for_column(1 << 40, Width::I64, 0, 2, 1000, 1000), None);
    // A run's estimated rows are capped at 255.
    assert_eq!(Narrow::for_column(7, Width::I64, 0, 1, 1 << 20, 1), runs(1, 255));
}

/// A column of runs is read through its directory (`col{i}`, `uint32_t` words) and run
/// values (`col{i}_runs`, a parameter after the references): where first used by
/// `tessera_runs_get`, up front pipelined over tiles (the directory words a tile before
/// `tessera_runs_value_lane`, or `tessera_runs_value`, into registers of distances); the
/// kernels compile.
#[test]
fn runs_columns_read_their_directory() {
    let (p, mut cols, tables) = star();
    cols[0].narrow = Some(Narrow::Runs { value: 2, per_run: 4 });
    cols[2].narrow = Some(Narrow::Runs { value: 4, per_run: 4 });
    let mut options = KernelOptions::default();
    let late = generate_with(&p, &cols, &tables, options).unwrap();
    options.experiments.eager_min_sectors = 0.0;
    let eager = generate_with(&p, &cols, &tables, options).unwrap();
    // Up front, pipelined two tiles deep: the next tile's values from the directory words
    // loaded an iteration before, the words of the tile after it; with 2 items a thread
    // every item's pair in every lane.
    assert!(eager.source.contains("uint2 ndc0[ITEMS] = {};") && eager.source.contains("uint2 ndc2[ITEMS] = {};"), "{}", eager.source);
    // The registers hold distances, the reference added where the tile takes them.
    assert!(eager.source.contains("uint32_t nc0[ITEMS] = {};") && eager.source.contains("nc0[i] = tessera_runs_value(col0_runs, ndc0[i], rl);"), "{}", eager.source);
    assert!(eager.source.contains("if (r < rows) nc0[i] = tessera_runs_get(col0, col0_runs, r);"), "{}", eager.source);
    assert!(eager.source.contains("c0[i] = (int32_t)((uint32_t)col0_ref + (uint32_t)nc0[i]);"), "{}", eager.source);
    // Unless asked to add it as they are read (`Experiments::runs_distances`).
    let summed = generate_with(&p, &cols, &tables, KernelOptions { experiments: Experiments { runs_distances: false, ..options.experiments }, ..options }).unwrap();
    assert!(summed.source.contains("int32_t nc0[ITEMS] = {};") && summed.source.contains("c0[i] = nc0[i];"), "{}", summed.source);
    assert!(summed.source.contains("nc0[i] = (int32_t)((uint32_t)col0_ref + (uint32_t)tessera_runs_value(col0_runs, ndc0[i], rl));"), "{}", summed.source);
    // The directory's pair of the tile at `after`: kept, advanced 256 / 32 pairs a block a
    // tile (over 64-bit rows, found from the tile).
    assert!(eager.source.contains("if (const int after = next + (int)gridDim.x * 256; after < nrows) {"), "{}", eager.source);
    assert!(eager.source.contains("unsigned int kq = tessera_stream_value<128>(tile);") && eager.source.contains("const unsigned int kstep = gridDim.x * 2u;"), "{}", eager.source);
    assert!(eager.source.contains("const uint2* __restrict__ rdc2 = tessera_runs_pairs_at<128>(col2, kq + kstep);"), "{}", eager.source);
    let wide = generate_with(&p, &cols, &tables, KernelOptions { experiments: Experiments { index32: false, stream_steps: false, ..options.experiments }, ..options }).unwrap();
    assert!(wide.source.contains("const uint2* __restrict__ rdc2 = tessera_runs_dirs<128>(col2, after);") && !wide.source.contains("kstep"), "{}", wide.source);
    assert!(eager.source.contains("for (int i = 0; i < ITEMS; ++i) ndc2[i] = __ldg(rdc2 + i * 4);"), "{}", eager.source);
    // With 4 items a thread, held one word a lane (`Experiments::runs_lanes`), unless off.
    options.items_per_thread = Some(4);
    let laned = generate_with(&p, &cols, &tables, options).unwrap();
    options.experiments.runs_lanes = false;
    let pairs = generate_with(&p, &cols, &tables, options).unwrap();
    assert!(laned.source.contains("unsigned int ndc0 = 0u;") && laned.source.contains("unsigned int ndc2 = 0u;"), "{}", laned.source);
    assert!(laned.source.contains("nc0[i] = tessera_runs_value_lane(col0_runs, ndc0, i, rl);"), "{}", laned.source);
    assert!(laned.source.contains("ndc2 = tessera_runs_word_at<ITEMS, 4>(col2, kq + kstep);"), "{}", laned.source);
    assert!(pairs.source.contains("uint2 ndc0[ITEMS] = {};") && !pairs.source.contains("tessera_runs_dir_lane"), "{}", pairs.source);
    assert!(!late.source.contains("tessera_runs_value"), "{}", late.source);
    // Read a row alone where first used, a value: the distance added to the reference.
    assert!(late.source.contains("(int32_t)((uint32_t)col0_ref + (uint32_t)tessera_runs_get(col0, col0_runs, r))"), "{}", late.source);
    assert!(late.source.contains("(int64_t)((unsigned long long)col2_ref + (unsigned long long)tessera_runs_get(col2, col2_runs, r))"), "{}", late.source);
    for k in [&late, &eager, &laned, &pairs] {
        let src = &k.source;
        assert!(src.contains("const uint32_t* __restrict__ col0,") && src.contains("const uint16_t* __restrict__ col0_runs,"), "{src}");
        assert!(src.contains("const uint32_t* __restrict__ col2_runs"), "{src}");
        assert!(src.contains("tessera_runs_get(col0, col0_runs, r)") && src.contains("tessera_runs_get(col2, col2_runs, r)"), "{src}");
        let at = |name: &str| k.params.iter().position(|q| matches!(q, Param::RunValues { column, .. } if *column == if name == "0" { 0 } else { 2 }));
        let last_ref = k.params.iter().rposition(|q| matches!(q, Param::Reference { .. })).unwrap();
        assert!(at("0").unwrap() > last_ref && at("2").unwrap() == at("0").unwrap() + 1);
    }
    if crate::test_support::nvrtc_or_skip("kernels over columns of runs compile with NVRTC") {
        for k in [&late, &eager, &laned, &pairs, &wide] {
            if let Err(e) = crate::compile_cubin(&k.source, "sm_90") {
                panic!("{e}
{}", k.source);
            }
        }
    }
}

/// A column of runs loaded up front in a kernel with a zone bitmap: a tile the bitmap
/// rules out reads no run values, and the directory words of one it will rule out are
/// not loaded (before, every tile's were); the kernel compiles.
#[test]
fn runs_columns_skip_the_tiles_zone_bitmaps_rule_out() {
    let mut c = cols();
    c[1].narrow = Some(Narrow::Runs { value: 1, per_run: 4 });
    let mut options = KernelOptions::default();
    options.experiments.eager_min_sectors = 0.0;
    let k = generate_with(&grouped(10, AggFunc::Sum), &c, &[], options).unwrap();
    let src = &k.source;
    assert!(k.params.contains(&Param::Zones) && src.contains("tessera_runs_value_lane(col1_runs"), "{src}");
    // The first tile's values, read alone, and the loop's next tile's, from directories;
    // the zone of the tile whose directory words load two tiles ahead (`zu`) is the next
    // iteration's `zn`, so the loop tests one zone an iteration.
    assert!(src.contains("    { const bool zr = zt;\n    #pragma unroll\n"), "{src}");
    assert!(src.contains("        const bool zn = zu;\n") && src.contains("        { const bool zr = zn;\n        #pragma unroll\n"), "{src}");
    assert!(src.contains(" if (zr) { if (r < rows) nc1[i] = ") && src.contains(" if (zr) { nc1[i] = "), "{src}");
    assert_eq!(src.matches("zu = after < nrows && tessera_zone_pass<512>(zones, after, rows); if (zu) {").count(), 2, "{src}");
    assert_eq!(src.matches("tessera_zone_pass<").count(), 3, "{src}");
    let mut before = options;
    before.experiments.zone_carry = false;
    let old = generate_with(&grouped(10, AggFunc::Sum), &c, &[], before).unwrap().source;
    assert!(old.contains("    { const bool zr = tessera_zone_pass<512>(zones, tile, rows);\n    #pragma unroll\n"), "{old}");
    assert!(old.contains("        { const bool zr = tessera_zone_pass<512>(zones, next, rows);\n        #pragma unroll\n"), "{old}");
    assert_eq!(old.matches("after < nrows && tessera_zone_pass<512>(zones, after, rows)) {").count(), 2, "{old}");
    if crate::test_support::nvrtc_or_skip("kernels over runs with zone bitmaps compile with NVRTC") {
        crate::compile_cubin(src, "sm_90").unwrap_or_else(|e| panic!("{e}\n{src}"));
        crate::compile_cubin(&old, "sm_90").unwrap_or_else(|e| panic!("{e}\n{old}"));
    }
}

/// With `Experiments::narrow_words` (the default), narrowed 1- and 2-byte columns loaded up front are
/// loaded a word a lane (rows guarded where the tile may be partial) and handed out by
/// warp shuffles; 4-byte distances, and 2-byte ones with one item a thread, are loaded an
/// item at a time as before; and the kernels compile.
#[test]
fn narrow_columns_loaded_up_front_load_a_word_a_lane() {
    let (p, mut cols, tables) = star();
    cols[0].narrow = Some(Narrow::U16);
    cols[1].narrow = Some(Narrow::U8);
    cols[2].narrow = Some(Narrow::U32);
    let mut options = KernelOptions::default();
    options.experiments.eager_min_sectors = 0.0;
    options.experiments.narrow_words = true;
    options.items_per_thread = Some(4);
    let k = generate_with(&p, &cols, &tables, options).unwrap();
    let src = &k.source;
    // Four items a thread: one 4-byte word of u8 distances, two of u16 ones.
    assert!(src.contains("unsigned int nwc1[1] = {};") && src.contains("unsigned int nwc0[2] = {};"), "{src}");
    assert!(src.contains("nwc0[1] = (unsigned int)__ldg((const unsigned int*)(col0 + next + 256 + tessera_word_row<2, 128>()));"), "{src}");
    assert!(src.contains("nwc1[0] = r < rows ? tessera_word_load<unsigned int>(col1, r, rows) : 0u;"), "{src}");
    assert!(src.contains("c1[i] = (int32_t)((uint32_t)col1_ref + (uint32_t)tessera_word_pick<uint8_t, 4>(nwc1[i / 4], i % 4));"), "{src}");
    assert!(src.contains("c0[i] = (int32_t)((uint32_t)col0_ref + (uint32_t)tessera_word_pick<uint16_t, 2>(nwc0[i / 2], i % 2));"), "{src}");
    assert!(src.contains("nc2[i] = (int64_t)((unsigned long long)col2_ref + (unsigned long long)col2[r]);"), "{src}");
    // Two items a thread: a 2-byte word of u8 distances; a u16 distance fills a word alone
    // only with two items.
    options.items_per_thread = Some(2);
    let two = generate_with(&p, &cols, &tables, options).unwrap();
    assert!(two.source.contains("tessera_word_load<unsigned short>(col1, r, rows)"), "{}", two.source);
    assert!(two.source.contains("tessera_word_pick<uint16_t, 2>"), "{}", two.source);
    // An odd number of items a thread: no word holds a whole number of them.
    for odd in [1, 3] {
        options.items_per_thread = Some(odd);
        let k = generate_with(&p, &cols, &tables, options).unwrap();
        assert!(!k.source.contains("tessera_word"), "{}", k.source);
    }
    // Six: u8 distances in 16-bit words (three loads), u16 ones in 32-bit words.
    options.items_per_thread = Some(6);
    let six = generate_with(&p, &cols, &tables, options).unwrap();
    assert!(six.source.contains("unsigned int nwc1[3] = {};") && six.source.contains("unsigned int nwc0[3] = {};"), "{}", six.source);
    assert!(six.source.contains("tessera_word_pick<uint8_t, 2>") && six.source.contains("tessera_word_load<unsigned short>(col1, r, rows)"), "{}", six.source);
    // Off, the loads are an item's each.
    options.experiments.narrow_words = false;
    options.items_per_thread = Some(4);
    let off = generate_with(&p, &cols, &tables, options).unwrap();
    assert!(!off.source.contains("tessera_word"), "{}", off.source);
    if crate::test_support::nvrtc_or_skip("word-loaded narrow kernels compile with NVRTC") {
        for k in [&k, &two, &six] {
            if let Err(e) = crate::compile_cubin(&k.source, "sm_90") {
                panic!("{e}\n{}", k.source);
            }
        }
    }
}

/// With `Experiments::column_loads` set, every column load of a kernel (up front, a word a
/// lane, and where first used; plain and narrowed) goes through `tessera_col` under the
/// policy the kernel defines before the header; unset, no kernel mentions it; and the
/// kernels of each policy compile.
#[test]
fn column_loads_take_the_cache_policy_asked_for() {
    let (p, mut cols, tables) = star();
    cols[0].narrow = Some(Narrow::U16);
    cols[1].narrow = Some(Narrow::U8);
    let default = generate_with(&p, &cols, &tables, KernelOptions::default()).unwrap();
    assert!(!default.source.contains("tessera_col") && !default.source.contains("TESSERA_COLUMN_LOADS"), "{}", default.source);
    let mut kernels = Vec::new();
    for policy in 1..=3 {
        for eager in [0.0, 1.0] {
            let mut options = KernelOptions::default();
            options.experiments.column_loads = policy;
            options.experiments.eager_min_sectors = eager;
            options.items_per_thread = Some(4);
            let k = generate_with(&p, &cols, &tables, options).unwrap();
            let src = &k.source;
            assert!(src.starts_with(&format!("#define TESSERA_COLUMN_LOADS {policy}\n")), "{src}");
            // No column is read by indexing it any more.
            for c in 0..cols.len() {
                assert!(!src.contains(&format!("col{c}[")), "column {c} indexed:\n{src}");
            }
            if eager == 0.0 {
                assert!(src.contains("(unsigned int)tessera_col((const unsigned int*)(col0 + next + 256 + tessera_word_row<2, 128>()))"), "{src}");
                assert!(src.contains("nc2[i] = tessera_col(col2 + r);"), "{src}");
            } else {
                assert!(src.contains("tessera_col(col2 + r)"), "{src}");
            }
            kernels.push(k);
        }
    }
    if crate::test_support::nvrtc_or_skip("kernels with column load policies compile with NVRTC") {
        for k in &kernels {
            if let Err(e) = crate::compile_cubin(&k.source, "sm_90") {
                panic!("{e}\n{}", k.source);
            }
        }
    }
}

/// Source columns in bit-packed tiles (`tiles.cuh`) are decoded where they are loaded:
/// those of the first stage (eager) staged in shared memory a tile ahead and decoded from
/// there, or (where a kernel tile does not divide a stored tile) their words loaded a
/// tile ahead into registers and decoded by the warp; those loaded where first used
/// (lazy) decoded by the warp for the rows still selected (outside the loops that skip
/// the others), queued rows one by one; and the kernels compile.
#[test]
fn packed_columns_decode_where_they_load() {
    let (p, mut cols, mut tables) = star();
    for c in &mut cols {
        c.packed = true;
    }
    // Two items a thread, as over tables beyond L2 (see the next test).
    // (Rows finishing in place: see `columns_mostly_read_anyway_are_loaded_up_front_and_probed_together`.)
    let two = Experiments { packed_items: 2, grouped_queue: false, ..Experiments::default() };
    let generate = |p: &Pipeline, cols: &[GpuColumn], tables: &[GpuTable]| generate_with(p, cols, tables, KernelOptions { literals: Literals::Inline, experiments: two, ..KernelOptions::default() });
    // Lazy: the second key and the value are loaded after the first probe.
    let k = generate(&p, &cols, &tables).unwrap();
    assert!(k.source.contains("const unsigned long long* __restrict__ col0"), "{}", k.source);
    // A tile's rows by the warp, the tile's header loaded ahead.
    assert!(k.source.contains("c1[i] = (int32_t)tessera_dec_unpack32(d1, r, sel[i]);"), "{}", k.source);
    assert!(k.source.contains("tessera_tile_prefetch(col1, next + "), "{}", k.source);
    // The value is loaded for the rows a warp queued (not consecutive): row by row.
    assert!(k.source.contains("c2[i] = (int64_t)tessera_unpack(col2, r);"), "{}", k.source);
    assert!(!k.source.contains("tessera_unpack(col1"), "{}", k.source);
    assert!(!k.source.contains("col2["), "{}", k.source);
    assert!(k.params.iter().any(|p| matches!(p, Param::Column { column: 2, packed: true, .. })));
    // Eager: every column in the first stage, the next tile's while this one is probed.
    tables[1].pass_permille = 200;
    let eager = generate(&p, &cols, &tables).unwrap();
    // Staged: the next tile's words copied into the other buffer, after the barrier that
    // ends this tile's wait; values decoded from this tile's buffer.
    let src = &eager.source;
    assert!(src.contains("__shared__ __align__(16) unsigned long long st2[2][tessera_stage_words(256, 64)];"), "{src}");
    assert!(src.contains("tessera_stage<256>(col2, next, rows, st2[sb ^ 1], 2u);"), "{src}");
    // By default the next tile's copies are issued before this tile's values are
    // decoded; with TESSERA_EXP_STAGE_LATE=1, after.
    assert!(src.find("st2[sb ^ 1], 2u)") < src.find("tessera_staged_run64(sd2"), "{src}");
    let mut late_options = KernelOptions { experiments: two, ..KernelOptions::default() };
    late_options.experiments.stage_late = true;
    let late = generate_with(&p, &cols, &tables, late_options).unwrap();
    assert!(late.source.find("tessera_staged_run64(sd2") < late.source.find("st2[sb ^ 1], 2u)"), "{}", late.source);
    assert!(src.contains("if (sd2.runs) {"), "{src}");
    assert!(src.contains("const StageDec sd2 = tessera_stage_dec<256, 128>(sp2, tile);"), "{src}");
    assert!(src.contains("c2[i] = (int64_t)tessera_staged_run64(sd2, i);"), "{src}");
    assert!(src.contains("c1[i] = (int32_t)tessera_staged_single32(sd1, i);"), "{src}");
    let (wait, stage) = (src.find("__syncthreads();\n").unwrap(), src.find("st2[sb ^ 1]").unwrap());
    assert!(wait < stage && src.contains("tessera_stage_wait();\n        __syncthreads();"), "{src}");
    assert!(!src.contains("tessera_dec_words"), "{src}");
    golden("star_join_packed", src);
    // Three items a thread: 384-row tiles straddle stored tiles, so the warp decodes.
    let warp = generate_with(&p, &cols, &tables, KernelOptions { items_per_thread: Some(3), ..in_place() }).unwrap();
    // Words a tile ahead, headers two, values decoded in the tile.
    assert!(warp.source.contains("pwc2[i] = tessera_dec_words64(dn2, r, r < rows);"), "{}", warp.source);
    assert!(warp.source.contains("pwc2[i] = tessera_dec_words64(dn2, r, true);"), "{}", warp.source);
    assert!(warp.source.contains("c2[i] = (int64_t)tessera_dec_value64(dc2, wc2[i], true);"), "{}", warp.source);
    assert!(warp.source.contains("c1[i] = (int32_t)tessera_dec_value32(dc1, wc1[i], true);"), "{}", warp.source);
    assert!(!warp.source.contains("tessera_stage"), "{}", warp.source);
    if crate::test_support::nvrtc_or_skip("packed-column kernels compile with NVRTC") {
        for k in [&k, &eager, &late, &warp] {
            if let Err(e) = crate::compile_cubin(&k.source, "sm_90") {
                panic!("{e}\n{}", k.source);
            }
        }
    }
}

/// Multi-probe pipelines over packed columns run 4 items a thread while their tables
/// stay in L2 (`L2_RESIDENT_TABLE_BYTES`), 2 beyond; over plain columns always 2.
#[test]
fn packed_multi_probe_pipelines_take_4_items_over_tables_in_l2() {
    let (p, mut cols, mut tables) = star();
    let tile = |cols: &[GpuColumn], tables: &[GpuTable]| {
        let s = generate(&p, cols, tables).unwrap().source;
        s.contains("constexpr int ITEMS = 4;").then_some(4).or(s.contains("constexpr int ITEMS = 2;").then_some(2))
    };
    assert_eq!(tile(&cols, &tables), Some(2));
    for c in &mut cols {
        c.packed = true;
    }
    assert!(tables.iter().map(super::table_bytes).sum::<usize>() <= super::L2_RESIDENT_TABLE_BYTES);
    assert_eq!(tile(&cols, &tables), Some(4));
    // A dense table of 60 M slots (TPC-H SF 10's orders): 2.
    tables[0].slots = 60_000_000;
    assert_eq!(tile(&cols, &tables), Some(2));
}

/// The staging buffers' bound and the rows of a stored tile the generator assumes are
/// the store's.
#[test]
fn staging_matches_the_store() {
    assert_eq!(tessera_storage::packed::RUN_VALUE_WORDS, super::print::RUN_VALUE_WORDS as usize);
    assert_eq!(tessera_storage::tiles::TILE_ROWS, super::print::STORAGE_TILE_ROWS as usize);
    let tiles_cuh = include_str!("../../cuda/tiles.cuh");
    assert!(tiles_cuh.contains("constexpr int RUN_VALUE_WORDS = 256;") && tiles_cuh.contains("constexpr int TILE_ROWS_LOG2 = 11;"));
    assert!(tiles_cuh.contains(&format!("constexpr int STAGE_HEADER_WORDS = {};", super::print::STAGE_HEADER_WORDS)));
}

/// Compares a generated source with its checked-in copy `tests/golden/{name}.cu`, so that
/// every change to generated code shows up in review. Regenerate with `TESSERA_BLESS=1
/// cargo test -p tessera-cuda golden` and read the diff.
fn golden(name: &str, source: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(format!("{name}.cu"));
    if std::env::var_os("TESSERA_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, source).unwrap();
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e} (TESSERA_BLESS=1 writes it)", path.display()));
    assert_eq!(source, want, "generated source of {name} changed; rerun with TESSERA_BLESS=1 and review the diff");
    if crate::test_support::nvrtc_or_skip("golden kernels compile with NVRTC") {
        crate::compile_cubin(source, "sm_90").unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}

/// Scan, filter and a grouped sum in a block's shared table.
#[test]
fn golden_grouped_sum_kernel() {
    golden("grouped_sum", &generate(&grouped(9, AggFunc::Sum), &cols(), &[]).unwrap().source);
}

/// Scalar aggregates of every kind: registers, warp reductions, one atomic per warp.
#[test]
fn golden_scalar_aggregate_kernel() {
    let mut p = grouped(9, AggFunc::Sum);
    let Sink::Aggregate(a) = &mut p.sink else { unreachable!() };
    a.strategy = GroupStrategy::Scalar;
    a.group_by.clear();
    let agg = |func| tessera_ir::AggExpr { func, arg: Some(Expr::col(1, "v")), distinct: false, ty: Type::Int64, name: "a".into() };
    a.aggregates = vec![agg(AggFunc::Sum), agg(AggFunc::CountStar), agg(AggFunc::Min), agg(AggFunc::Max), agg(AggFunc::Avg)];
    a.fields = (0..5).map(|i| tessera_ir::Field::new(&format!("a{i}"), Type::Int64, true)).collect();
    golden("scalar_aggregate", &generate(&p, &cols(), &[]).unwrap().source);
}

/// Scalar sums of 32-bit values over rows whose total fits 64 bits add in a `long long`
/// register (the output array 64-bit too) and bound the rows a launch may read; an AVG
/// keeps its count, a SUM none (a zero total adds nothing). Over more rows than that
/// bound, 128 bits.
#[test]
fn scalar_sums_that_fit_64_bits_add_in_64_bits() {
    let mut p = grouped(9, AggFunc::Sum);
    let Sink::Aggregate(a) = &mut p.sink else { unreachable!() };
    a.strategy = GroupStrategy::Scalar;
    a.group_by.clear();
    let agg = |func| tessera_ir::AggExpr { func, arg: Some(Expr::col(0, "k")), distinct: false, ty: Type::Int64, name: "a".into() };
    a.aggregates = vec![agg(AggFunc::Sum), agg(AggFunc::Avg)];
    a.fields = (0..2).map(|i| tessera_ir::Field::new(&format!("a{i}"), Type::Int64, true)).collect();
    let k = wide_rows(&p, &cols(), &[]);
    let src = &k.source;
    assert!(src.contains("long long* __restrict__ out_a0") && src.contains("long long* __restrict__ out_a1"), "{src}");
    assert!(src.contains("    long long t0 = 0;\n") && src.contains("    long long t1 = 0; unsigned long long n1 = 0;\n"), "{src}");
    assert!(src.contains("t0 += v0[i];") && src.contains("t1 += v1[i]; n1 += 1ull;") && !src.contains("Int128 t"), "{src}");
    assert!(src.contains("atomicAdd((unsigned long long*)&out_a0[0], (unsigned long long)t0);"), "{src}");
    assert_eq!(k.rows_limit, ((1u64 << 63) - 1) >> 31);
    // More rows than 2^32 values of 2^31 could leave 64 bits: 128-bit registers.
    let Source::Scan(scan) = &mut p.source else { unreachable!() };
    scan.rows = 1 << 33;
    let big = wide_rows(&p, &cols(), &[]);
    assert!(big.source.contains("Int128 t0 = make_int128(0ull, 0ull);\n") && big.source.contains("Int128* __restrict__ out_a0"), "{}", big.source);
    if crate::test_support::nvrtc_or_skip("64-bit scalar sums compile with NVRTC") {
        crate::compile_cubin(src, "sm_90").unwrap_or_else(|e| panic!("{e}\n{src}"));
    }
}

/// Every accumulator kind in a direct table of several copies (fewer slots than lanes):
/// the copies of each slot folded before the merge.
#[test]
fn golden_grouped_copies_kernel() {
    let mut p = grouped(3, AggFunc::Sum);
    let Sink::Aggregate(a) = &mut p.sink else { unreachable!() };
    let agg = |func| tessera_ir::AggExpr { func, arg: Some(Expr::col(1, "v")), distinct: false, ty: Type::Int64, name: "a".into() };
    a.aggregates = vec![agg(AggFunc::Sum), agg(AggFunc::CountStar), agg(AggFunc::Min), agg(AggFunc::Max), agg(AggFunc::Avg)];
    a.fields = std::iter::once(Field::new("k", Type::Int32, false)).chain((0..5).map(|i| Field::new(&format!("a{i}"), Type::Int64, true))).collect();
    let k = generate(&p, &cols(), &[]).unwrap();
    let SinkLayout::Aggregate { table, .. } = &k.sink else { panic!("not an aggregate") };
    assert_eq!(*table, GroupTable::Direct { slots: 5, copies: 32 });
    golden("grouped_copies", &k.source);
    // Over 2^32 rows the sums are 128-bit, folded with their carry.
    let Source::Scan(scan) = &mut p.source else { unreachable!() };
    scan.rows = 1 << 33;
    let k = generate(&p, &cols(), &[]).unwrap();
    assert!(k.source.contains("Int128 m_a0 = sh_a0[s * 32]; for (int c = 1; c < 32; ++c) { { const unsigned long long lo = m_a0.lo + sh_a0[s * 32 + c].lo;"), "{}", k.source);
    if crate::test_support::nvrtc_or_skip("128-bit copies compile with NVRTC") {
        crate::compile_cubin(&k.source, "sm_90").unwrap_or_else(|e| panic!("{e}\n{}", k.source));
    }
}

/// Expressions: CASE branches (a lambda when a branch needs statements), checked
/// arithmetic, a long IN list's bitmap, into a large domain's global atomics.
#[test]
fn golden_expressions_kernel() {
    let mut p = grouped(99_999, AggFunc::Max);
    let v = || Box::new(Expr::col(1, "v"));
    let lit = |x| Box::new(Expr::lit(Scalar::Int(x), Type::Int64));
    let doubled = Expr::Arith { op: ArithOp::Mul, left: v(), right: lit(2), ty: Type::Int64 };
    let case = Expr::Case {
        when_then: vec![(Expr::Cmp { op: CmpOp::Gt, left: v(), right: lit(5) }, doubled)],
        otherwise: Some(Box::new(Expr::Arith { op: ArithOp::Add, left: v(), right: lit(1), ty: Type::Int64 })),
        ty: Type::Int64,
    };
    let list = (0..20).map(|k| Scalar::Int(k * 3)).collect();
    p.operators = vec![
        Operator::Filter(Expr::InList { expr: v(), list, negated: true }),
        Operator::Project {
            exprs: vec![Expr::col(0, "k"), case],
            fields: vec![tessera_ir::Field::new("k", Type::Int32, false), tessera_ir::Field::new("v", Type::Int64, false)],
        },
    ];
    golden("expressions", &generate(&p, &cols(), &[]).unwrap().source);
}

/// A star join: hoisted probes, the most selective first, and a warp queue for the few
/// rows that pass.
#[test]
fn golden_star_join_kernel() {
    let (p, cols, tables) = star();
    golden("star_join", &generate(&p, &cols, &tables).unwrap().source);
}

/// A star join whose columns load up front, the next tile's while this one is probed.
#[test]
fn golden_star_join_eager_kernel() {
    let (p, cols, mut tables) = star();
    tables[1].pass_permille = 200;
    golden("star_join_eager", &generate_with(&p, &cols, &tables, in_place()).unwrap().source);
}

/// Probes with residual predicates (TPC-H q07/q19's join conditions beyond the keys): an
/// inner probe tests its residual after gathering the payload; an anti probe tests
/// `found && residual`, gathering the build row's payload inside the test.
#[test]
fn golden_residual_probes_kernel() {
    let (mut p, cols, mut tables) = star();
    let cmp = |op, l: Expr, r: Expr| Expr::Cmp { op, left: Box::new(l), right: Box::new(r) };
    let int = |v| Expr::lit(Scalar::Int(v), Type::Int64);
    // Layout after probe 0: (dk, sk, v, year); probe 1's payload c follows at 4.
    let Operator::Probe(p0) = &mut p.operators[0] else { unreachable!() };
    p0.residual = Some(Expr::Or(Box::new(cmp(CmpOp::NotEq, Expr::col(3, "year"), int(1995))), Box::new(cmp(CmpOp::Gt, Expr::col(2, "v"), int(0)))));
    let Operator::Probe(p1) = &mut p.operators[1] else { unreachable!() };
    p1.kind = JoinKind::Anti;
    p1.build_fields = vec![Field::new("c", Type::Int32, false)];
    p1.residual = Some(cmp(CmpOp::Lt, Expr::col(4, "c"), Expr::col(0, "dk")));
    tables[1].payload = vec![int_col()];
    let k = generate(&p, &cols, &tables).unwrap();
    // Residual probes are not hoisted: each tests its key where the plan has it.
    assert!(k.source.contains("h1_p0["), "{}", k.source);
    golden("residual_probes", &k.source);
}

/// A hash build: row array, payload and membership bitmap.
#[test]
fn golden_build_kernel() {
    golden("build", &generate(&build_pipeline(), &cols(), &[]).unwrap().source);
}

/// A materialization: one atomic per warp for the rows' positions.
#[test]
fn golden_materialize_kernel() {
    let mut p = grouped(9, AggFunc::Sum);
    p.sink = Sink::Materialize { result: 0, skip: 0, fetch: None };
    golden("materialize", &generate(&p, &cols(), &[]).unwrap().source);
}

/// The build of `builds_write_rows_payload_and_a_membership_bitmap`.
fn build_pipeline() -> Pipeline {
    let mut p = grouped(9, AggFunc::Sum);
    p.operators.clear();
    p.sink = Sink::HashBuild(tessera_ir::HashBuild {
        table: 0,
        keys: vec![Expr::col(0, "k")],
        payload: vec![1],
        strategy: BuildStrategy::Perfect { min: 5, max: 104 },
        nulls_equal: false,
        estimated_rows: 100,
        membership: false,
        repeated_keys: false,
        null_aware: false,
        payload_ranges: Vec::new(),
    });
    p
}

/// Everything that keeps a pipeline off the GPU is reported, each with where it is.
#[test]
fn every_reason_is_reported_with_its_operator() {
    let mut p = grouped(9, AggFunc::Sum);
    let v = || Box::new(Expr::col(1, "v"));
    p.operators = vec![
        Operator::Filter(Expr::Arith { op: ArithOp::Div, left: v(), right: v(), ty: Type::Decimal { precision: 20, scale: 2 } }),
        Operator::Filter(Expr::Cmp { op: CmpOp::Lt, left: v(), right: Box::new(Expr::lit(Scalar::Int(3), Type::Int64)) }),
    ];
    let Sink::Aggregate(a) = &mut p.sink else { unreachable!() };
    a.aggregates[0].distinct = true;
    let reasons = generate(&p, &cols(), &[]).unwrap_err();
    assert_eq!(reasons.len(), 2, "{reasons:?}");
    assert_eq!(reasons[0].site, Site::Operator { index: 0, kind: "filter" });
    assert!(matches!(reasons[0].reason, Reason::Arithmetic(_)), "{reasons:?}");
    assert_eq!(reasons[1], Unsupported::new(Site::Sink("aggregate"), Reason::DistinctAggregate));
    assert_eq!(unsupported::describe(&reasons), "filter #0: decimal division at scales 0 / 0 into 2 on the GPU; aggregate: DISTINCT aggregate on the GPU");
}

/// `NOT IN` (a NULL-aware anti join): the build sets its two flags (a row, a NULL key)
/// before dropping its NULL keys; the probe keeps every row over an empty build, and
/// otherwise drops a row whose key matches, is NULL, or meets a NULL in the build.
#[test]
fn not_in_reads_what_the_build_saw() {
    let mut p = build_pipeline();
    let Sink::HashBuild(h) = &mut p.sink else { unreachable!() };
    (h.null_aware, h.membership, h.payload) = (true, true, vec![]);
    let Source::Scan(scan) = &mut p.source else { unreachable!() };
    scan.fields[0].nullable = true;
    let mut cols_k = cols();
    cols_k[0].nullable = true;
    let k = generate(&p, &cols_k, &[]).unwrap_or_else(|e| panic!("{e:?}"));
    assert!(k.params.contains(&Param::Out(Out::BuildSeen)), "{:?}", k.params);
    let (any, null, drop) = (k.source.find("out_bseen[0] = 1u").unwrap(), k.source.find("out_bseen[1] = 1u").unwrap(), k.source.find("if (!(kn").unwrap());
    assert!(any < drop && null < drop, "{}", k.source);
    compiles(&k, "NOT IN's build");
    for nullable_key in [false, true] {
        let (mut p, mut cols, tables) = hashed_probe_pipeline(JoinKind::Anti);
        let Operator::Probe(pr) = &mut p.operators[0] else { unreachable!() };
        (pr.null_aware, pr.keys) = (true, vec![Expr::col(1, "b")]);
        let mut tables = tables;
        tables[0].hashed = None;
        (tables[0].min, tables[0].slots) = (0, 4096);
        if nullable_key {
            let Source::Scan(scan) = &mut p.source else { unreachable!() };
            scan.fields[1].nullable = true;
            cols[1].nullable = true;
        }
        let k = generate(&p, &cols, &tables).unwrap_or_else(|e| panic!("{e:?}"));
        assert!(k.params.contains(&Param::BuildSeen { probe: 0 }), "{:?}", k.params);
        assert!(k.source.contains("__ldg(&h0_seen[0]) != 0u"), "{}", k.source);
        assert_eq!(k.source.contains("|| !(kn"), nullable_key, "{}", k.source);
        compiles(&k, "NOT IN's probe");
        // Over two keys, or with a residual, it stays on the CPU.
        let Operator::Probe(pr) = &mut p.operators[0] else { unreachable!() };
        pr.keys = vec![Expr::col(0, "a"), Expr::col(1, "b")];
        assert!(generate(&p, &cols, &tables).is_err());
    }
}

/// AVG of an integer, a double (`AVG(CAST(v AS DOUBLE))` as DataFusion plans it), sums
/// the integer exactly with its count: the host divides.
#[test]
fn averages_of_integers_sum_the_integers() {
    for group in [false, true] {
        let mut p = grouped(9, AggFunc::Avg);
        let Sink::Aggregate(a) = &mut p.sink else { unreachable!() };
        a.aggregates[0].arg = Some(Expr::Cast { expr: Box::new(Expr::col(1, "v")), ty: Type::Float64 });
        a.aggregates[0].ty = Type::Float64;
        a.fields[1].ty = Type::Float64;
        if !group {
            a.group_by.clear();
            a.strategy = GroupStrategy::Scalar;
            a.fields.remove(0);
        }
        let k = generate(&p, &cols(), &[]).unwrap_or_else(|e| panic!("{e:?}"));
        let SinkLayout::Aggregate { accumulators, .. } = &k.sink else { panic!("not an aggregate") };
        assert!(matches!(accumulators[..], [Accumulator::SumCount(_)]), "{accumulators:?}");
        assert!(!k.source.contains("double"), "{}", k.source);
        compiles(&k, "AVG of an integer");
    }
}

/// Integer `/` and `%` run in kernels: a zero divisor (and the type's smallest value by
/// -1) raises the overflow flag instead (the CPU reports it), and a NULL operand is not
/// divided at all.
#[test]
fn integer_division_and_remainder_flag_a_zero_divisor() {
    let mut p = grouped(9, AggFunc::Sum);
    let v = || Box::new(Expr::col(1, "v"));
    let lit = |x: i64| Box::new(Expr::lit(Scalar::Int(x), Type::Int64));
    let rem = Expr::Arith { op: ArithOp::Mod, left: v(), right: lit(7), ty: Type::Int64 };
    let quot = Expr::Arith { op: ArithOp::Div, left: lit(1000), right: v(), ty: Type::Int64 };
    p.operators = vec![
        Operator::Filter(Expr::Cmp { op: CmpOp::Eq, left: Box::new(rem), right: lit(3) }),
        Operator::Filter(Expr::Cmp { op: CmpOp::Gt, left: Box::new(quot), right: lit(-2) }),
    ];
    let k = generate(&p, &cols(), &[]).unwrap_or_else(|e| panic!("{e:?}"));
    assert!(k.source.contains(", (-9223372036854775807LL - 1LL), true, flags)"), "{}", k.source);
    assert!(k.source.contains(", (-9223372036854775807LL - 1LL), false, flags)"), "{}", k.source);
    compiles(&k, "integer division and remainder");
    // Over a value that may be NULL: divided only where it is not.
    let Source::Scan(scan) = &mut p.source else { unreachable!() };
    scan.fields[1].nullable = true;
    let mut cols_n = cols();
    cols_n[1].nullable = true;
    let k = generate(&p, &cols_n, &[]).unwrap_or_else(|e| panic!("{e:?}"));
    assert!(k.source.contains(") ? tessera_div("), "{}", k.source);
    compiles(&k, "integer division of values that may be NULL");
}

/// An open-addressing build on two keys packed in one word (`k` in the planned range
/// `[1, 1000]`, `v` in `[-5, 999_994]`): one `atomicCAS` a row; a duplicate key, a key
/// outside its range or a full table raise flags.
fn hashed_build_pipeline() -> Pipeline {
    let mut p = build_pipeline();
    let Sink::HashBuild(h) = &mut p.sink else { unreachable!() };
    h.keys = vec![Expr::col(0, "k"), Expr::col(1, "v")];
    h.payload = vec![0, 1];
    h.strategy = BuildStrategy::Hash { key_ranges: vec![Some((1, 1000)), Some((-5, 999_994))] };
    p
}

#[test]
fn hashed_builds_pack_their_keys_and_claim_slots() {
    let kernel = generate(&hashed_build_pipeline(), &cols(), &[]).unwrap();
    let SinkLayout::Build { table } = &kernel.sink else { panic!("{:?}", kernel.sink) };
    // Two slots per source row (1000), a power of two.
    assert_eq!(table.slots, 2048);
    let pack = table.hashed.as_ref().unwrap();
    let parts: Vec<(i64, u32, u32)> = pack.parts.iter().map(|p| (p.min, p.shift, p.bits())).collect();
    assert_eq!(parts, vec![(1, 0, 10), (-5, 10, 20)]);
    assert!(kernel.source.contains("tessera_hash_insert_unique(out_keys, 2047ull, "), "{}", kernel.source);
    assert!(kernel.params.contains(&Param::Out(Out::Keys)));
    assert!(!kernel.params.contains(&Param::Out(Out::BuildBitmap)));
}

/// A membership table (read only by semi/anti probes) takes a repeated key as one entry:
/// no duplicate flag (flags[2]), no payload. A build whose keys the statistics say repeat,
/// for a join that returns its rows, makes a chained table: payload at the build row,
/// the row pushed on its key's chain, no duplicate flag.
#[test]
fn membership_builds_take_repeated_keys_and_1_to_n_builds_chain_them() {
    for mut p in [hashed_build_pipeline(), build_pipeline()] {
        let flagged = generate(&p, &cols(), &[]).unwrap();
        assert!(flagged.source.contains("flags[2]"), "{}", flagged.source);
        let Sink::HashBuild(h) = &mut p.sink else { unreachable!() };
        h.membership = true;
        h.payload.clear();
        let k = generate(&p, &cols(), &[]).unwrap();
        assert!(!k.source.contains("flags[2]"), "{}", k.source);
        let SinkLayout::Build { table } = &k.sink else { panic!("{:?}", k.sink) };
        assert!(table.payload.is_empty());
        if crate::test_support::nvrtc_or_skip("membership builds compile with NVRTC") {
            crate::compile_cubin(&k.source, "sm_90").unwrap_or_else(|e| panic!("{e}\n{}", k.source));
        }
        let Sink::HashBuild(h) = &mut p.sink else { unreachable!() };
        (h.membership, h.repeated_keys, h.payload) = (false, true, vec![1]);
        let hashed = matches!(h.strategy, BuildStrategy::Hash { .. });
        let k = generate(&p, &cols(), &[]).unwrap();
        let SinkLayout::Build { table } = &k.sink else { panic!("{:?}", k.sink) };
        assert_eq!(table.chain, Some(1000));
        assert_eq!(table.hashed.is_some(), hashed);
        assert!(!k.source.contains("flags[2]"), "{}", k.source);
        assert!(k.source.contains("out_next[r] = atomicExch(&out_heads["), "{}", k.source);
        assert!(k.source.contains("out_p0[r] = "), "{}", k.source);
        assert_eq!(k.source.contains("tessera_hash_find_or_insert(out_keys"), hashed, "{}", k.source);
        assert!(k.params.contains(&Param::Out(Out::Heads)) && k.params.contains(&Param::Out(Out::Next)));
        if crate::test_support::nvrtc_or_skip("chained builds compile with NVRTC") {
            crate::compile_cubin(&k.source, "sm_90").unwrap_or_else(|e| panic!("{e}\n{}", k.source));
        }
    }
}

/// The probe pipeline of [`hashed_probe_pipeline`] over a chained table of the same
/// build (its keys repeat), with a residual `w <> v` when `residual`.
fn chained_probe_pipeline(kind: JoinKind, residual: bool) -> (Pipeline, Vec<GpuColumn>, Vec<GpuTable>) {
    let (mut p, cols, _) = hashed_probe_pipeline(kind);
    let mut build = hashed_build_pipeline();
    let Sink::HashBuild(h) = &mut build.sink else { unreachable!() };
    h.repeated_keys = true;
    let SinkLayout::Build { table } = generate(&build, &self::cols(), &[]).unwrap().sink else { unreachable!() };
    if residual {
        let Operator::Probe(probe) = &mut p.operators[0] else { unreachable!() };
        probe.residual = Some(Expr::Cmp { op: CmpOp::NotEq, left: Box::new(Expr::col(4, "w")), right: Box::new(Expr::col(2, "v")) });
    }
    (p, cols, vec![table])
}

/// Probes of a chained table: an inner join expands each row into its matches on a warp
/// queue (the rest of the pipeline runs on the queued entries, the payload gathered at
/// the match); a semi/anti join with a residual walks the chain until it holds; without
/// one it tests that the chain is not empty.
#[test]
fn probes_of_chained_tables_expand_or_walk_their_matches() {
    let (p, cols, tables) = chained_probe_pipeline(JoinKind::Inner, true);
    let k = wide_rows(&p, &cols, &tables);
    assert!(k.params.contains(&Param::Heads { probe: 0 }) && k.params.contains(&Param::Next { probe: 0 }), "{:?}", k.params);
    let body = whole_tile_loop(&k.source);
    assert!(body.contains("const unsigned int m = __ballot_sync(0xffffffffu, tq_m >= 0);"), "{}", k.source);
    assert!(body.contains("tq_m = __ldg(&h0_next[tq_m]);"), "{}", k.source);
    // The payload is read at the queued match, after the expansion.
    let expand = body.find("int tq_m = sel[i] ?").unwrap();
    let gather = body.find("h0_p1[").unwrap();
    assert!(expand < gather, "{}", k.source);
    // Expanded rows are not bounded by the source's: the sum takes 128 bits.
    assert_eq!(k.rows_limit, u64::MAX);
    let mut kernels = vec![k];
    for (kind, residual, needle) in [
        (JoinKind::Semi, true, "([&]() -> bool { for (int m"),
        (JoinKind::Anti, true, "([&]() -> bool { for (int m"),
        (JoinKind::Semi, false, " >= 0)"),
        (JoinKind::Anti, false, " >= 0)"),
    ] {
        let (p, cols, tables) = chained_probe_pipeline(kind, residual);
        let k = generate(&p, &cols, &tables).unwrap();
        assert!(k.source.contains(needle), "{kind:?} {residual}: {}", k.source);
        assert!(!k.source.contains("tq_m"), "{kind:?} {residual}: {}", k.source);
        kernels.push(k);
    }
    if crate::test_support::nvrtc_or_skip("chained probes compile with NVRTC") {
        for k in &kernels {
            crate::compile_cubin(&k.source, "sm_90").unwrap_or_else(|e| panic!("{e}\n{}", k.source));
        }
    }
    // One expansion a kernel; materialized rows have room for the source's rows only.
    let (mut p, cols, mut tables) = chained_probe_pipeline(JoinKind::Inner, false);
    p.operators.push(p.operators[0].clone());
    tables.push(tables[0].clone());
    let r = generate(&p, &cols, &tables).unwrap_err();
    assert!(r.iter().any(|u| u.reason == Reason::SecondExpansion), "{r:?}");
    let (mut p, cols, tables) = chained_probe_pipeline(JoinKind::Inner, false);
    p.sink = Sink::Materialize { result: 0, skip: 0, fetch: None };
    let r = generate(&p, &cols, &tables).unwrap_err();
    assert!(r.iter().any(|u| matches!(u.reason, Reason::ExpandedSink(_))), "{r:?}");
}

/// A mark join (EXISTS / IN inside OR) keeps every row and adds whether it matched, as
/// 0 or 1, which the filter after it reads; with a residual, whether a match passes it.
#[test]
fn mark_probes_add_whether_a_row_matched() {
    let or_mark = |p: &mut Pipeline| {
        // f(a, b, v) + mark: keep v < 10 OR mark.
        p.operators.push(Operator::Filter(Expr::Or(
            Box::new(Expr::Cmp { op: CmpOp::Lt, left: Box::new(Expr::col(2, "v")), right: Box::new(Expr::lit(Scalar::Int(10), Type::Int64)) }),
            Box::new(Expr::col(3, "mark")),
        )));
    };
    let mut kernels = Vec::new();
    for (residual, chained) in [(false, false), (true, false), (false, true), (true, true)] {
        let (mut p, cols, tables) = if chained { chained_probe_pipeline(JoinKind::Mark, residual) } else { hashed_probe_pipeline(JoinKind::Mark) };
        if residual && !chained {
            let Operator::Probe(probe) = &mut p.operators[0] else { unreachable!() };
            probe.residual = Some(Expr::Cmp { op: CmpOp::NotEq, left: Box::new(Expr::col(4, "w")), right: Box::new(Expr::col(2, "v")) });
        }
        or_mark(&mut p);
        let Sink::Aggregate(a) = &mut p.sink else { unreachable!() };
        a.aggregates[0].arg = Some(Expr::col(2, "v"));
        let k = generate(&p, &cols, &tables).unwrap_or_else(|e| panic!("{residual} {chained}: {e:?}"));
        assert!(k.source.contains(") ? 1 : 0"), "{residual} {chained}: {}", k.source);
        assert_eq!(k.source.contains("h0_p1["), residual, "{residual} {chained}: {}", k.source);
        kernels.push(k);
    }
    for k in &kernels {
        compiles(k, "mark probe");
    }
}

/// A LEFT OUTER probe of a chained table expands each row into its matches, and a row
/// without one into one entry whose match is −2: its build columns are NULL there (a
/// SUM over them counts only the matched).
#[test]
fn left_outer_probes_of_chained_tables_keep_unmatched_rows_once() {
    let (mut p, cols, tables) = chained_probe_pipeline(JoinKind::LeftOuter, false);
    let Sink::Aggregate(a) = &mut p.sink else { unreachable!() };
    a.aggregates[0].arg = Some(Expr::col(4, "w"));
    let k = generate(&p, &cols, &tables).unwrap_or_else(|e| panic!("{e:?}"));
    let body = whole_tile_loop(&k.source);
    assert!(body.contains(": -2) : -1;"), "{}", k.source);
    assert!(body.contains("__ballot_sync(0xffffffffu, tq_m != -1)"), "{}", k.source);
    assert!(body.contains("tq_m = tq_m >= 0 ? __ldg(&h0_next[tq_m]) : -1;"), "{}", k.source);
    let SinkLayout::Aggregate { accumulators, .. } = &k.sink else { panic!("not an aggregate") };
    assert!(matches!(accumulators[..], [Accumulator::SumCount(_)]), "{accumulators:?}");
    compiles(&k, "LEFT OUTER probe of a chained table");
    // With a residual: the chain is walked for a row it holds for first; a row with one
    // expands from its chain's head (else from none: once, unmatched), and the matches
    // it fails for are dropped, the test run only where there is a match.
    let (mut p, cols, tables) = chained_probe_pipeline(JoinKind::LeftOuter, true);
    let Sink::Aggregate(a) = &mut p.sink else { unreachable!() };
    a.aggregates[0].arg = Some(Expr::col(4, "w"));
    let k = generate(&p, &cols, &tables).unwrap_or_else(|e| panic!("{e:?}"));
    let body = whole_tile_loop(&k.source);
    let walk = body.find("([&]() -> bool { for (int m").unwrap_or_else(|| panic!("{}", k.source));
    let expand = body.find("__ballot_sync(0xffffffffu, tq_m != -1)").unwrap_or_else(|| panic!("{}", k.source));
    assert!(walk < expand, "{}", k.source);
    assert!(body[expand..].contains("]) && !(([&]() -> long long {"), "{}", k.source);
    compiles(&k, "LEFT OUTER probe of a chained table with a residual");
}

/// The probe pipeline of a hashed table: `f(a, b, v)` joined on `(a, b)` to the table of
/// [`hashed_build_pipeline`], grouped by a hash table on `v`.
fn hashed_probe_pipeline(kind: JoinKind) -> (Pipeline, Vec<GpuColumn>, Vec<GpuTable>) {
    let build = generate(&hashed_build_pipeline(), &cols(), &[]).unwrap();
    let SinkLayout::Build { table } = build.sink else { unreachable!() };
    let fields = vec![Field::new("a", Type::Int32, false), Field::new("b", Type::Int64, false), Field::new("v", Type::Int64, false)];
    let build_fields = vec![Field::new("k", Type::Int32, false), Field::new("w", Type::Int64, false)];
    let out_fields = if kind == JoinKind::Inner { 5 } else { 3 };
    let p = Pipeline {
        id: 4,
        source: Source::Scan(Scan { table: "f".into(), version: 1, columns: vec![0, 1, 2], fields: fields.clone(), dictionary: vec![false; 3], rows: 1 << 20, kept_permille: 1000 }),
        operators: vec![Operator::Probe(tessera_ir::Probe {
            table: 0,
            kind,
            keys: vec![Expr::col(0, "a"), Expr::col(1, "b")],
            build_fields,
            residual: None,
            nulls_equal: false,
            null_aware: false,
        })],
        sink: Sink::Aggregate(Aggregate {
            result: 0,
            group_by: vec![Expr::col(2, "v")],
            aggregates: vec![AggExpr { func: AggFunc::Sum, arg: Some(Expr::col(out_fields - 1, "x")), distinct: false, ty: Type::Int64, name: "s".into() }],
            strategy: GroupStrategy::Hash { estimated_groups: 50_000, key_ranges: vec![None] },
            fields: vec![Field::new("v", Type::Int64, false), Field::new("s", Type::Int64, true)],
            reduced: None,
            value_ranges: Vec::new(),
        }),
        device: Device::Gpu,
        device_reason: None,
    };
    let cols = vec![int_col(), GpuColumn::plain(Width::I64, None), GpuColumn::plain(Width::I64, None)];
    (p, cols, vec![table])
}

/// A payload that may be NULL is NULL where its validity bit is clear; after a LEFT OUTER
/// probe, also where the row found no match. Summing it counts its non-NULL values.
#[test]
fn payloads_that_may_be_null_read_their_validity_bits() {
    for kind in [JoinKind::Inner, JoinKind::LeftOuter] {
        let (mut p, cols, mut tables) = hashed_probe_pipeline(kind);
        for c in &mut tables[0].payload {
            c.nullable = true;
        }
        if kind == JoinKind::LeftOuter {
            let Sink::Aggregate(a) = &mut p.sink else { unreachable!() };
            a.aggregates[0].arg = Some(Expr::col(4, "w"));
        }
        let k = generate(&p, &cols, &tables).unwrap_or_else(|e| panic!("{kind:?}: {e:?}"));
        assert!(k.params.contains(&Param::PayloadValid { probe: 0, column: 1 }), "{kind:?}: {:?}", k.params);
        assert!(k.source.contains("__ldg(&h0_pv1["), "{kind:?}: {}", k.source);
        let SinkLayout::Aggregate { accumulators, .. } = &k.sink else { panic!("not an aggregate") };
        assert!(matches!(accumulators[..], [Accumulator::SumCount(_)]), "{kind:?}: {accumulators:?}");
        compiles(&k, &format!("{kind:?} probe of payloads that may be NULL"));
    }
}

#[test]
fn hashed_probes_test_the_first_slot_with_the_other_loads() {
    let (p, cols, tables) = hashed_probe_pipeline(JoinKind::Inner);
    let kernel = generate(&p, &cols, &tables).unwrap();
    let body = whole_tile_loop(&kernel.source);
    // The first slot's key is loaded in one stage and compared in a later one.
    assert!(stage_of(body, "__ldg(&h0_keys[") < stage_of(body, "tessera_hash_find_after(h0_keys"), "{body}");
    assert!(kernel.params.contains(&Param::Keys { probe: 0 }));
    // The group table: 2 × 50 000 estimated groups, two slots each.
    let SinkLayout::Aggregate { groups, hashed, keys, .. } = &kernel.sink else { panic!() };
    assert_eq!(*groups, 1 << 18);
    assert!(keys.is_empty());
    assert_eq!(hashed.as_ref().unwrap().bits(), 64);
}

/// A hashed build on two packed keys.
#[test]
fn golden_hashed_build_kernel() {
    golden("hashed_build", &generate(&hashed_build_pipeline(), &cols(), &[]).unwrap().source);
}

/// A probe of a hashed table on two keys into a hash aggregation.
#[test]
fn golden_hashed_probe_aggregate_kernel() {
    let (p, cols, tables) = hashed_probe_pipeline(JoinKind::Inner);
    golden("hashed_probe_aggregate", &generate(&p, &cols, &tables).unwrap().source);
}

/// Anti and semi probes of a hashed table keep or drop rows on the same test.
#[test]
fn hashed_anti_and_semi_probes_compile() {
    for kind in [JoinKind::Semi, JoinKind::Anti] {
        let (p, cols, tables) = hashed_probe_pipeline(kind);
        let kernel = generate(&p, &cols, &tables).unwrap();
        let test = if kind == JoinKind::Anti { "if (f" } else { "if (!f" };
        assert!(whole_tile_loop(&kernel.source).contains(test), "{kind:?}: {}", kernel.source);
        if crate::test_support::nvrtc_or_skip("hashed probes compile") {
            crate::compile_cubin(&kernel.source, "sm_90").unwrap_or_else(|e| panic!("{kind:?}: {e}\n{}", kernel.source));
        }
    }
}

/// `f LEFT OUTER JOIN t ON (a, b)`, with `w` (the table's second payload column, #4)
/// NULL where no row of `t` matched: `CASE WHEN w IS NULL THEN 0 ELSE w END` (TPC-H q13's
/// count after the join) summed per `v`, and a filter `w > 5 OR w IS NULL` in three-valued
/// logic before it.
fn left_outer_pipeline(residual: bool) -> (Pipeline, Vec<GpuColumn>, Vec<GpuTable>) {
    let (mut p, cols, tables) = hashed_probe_pipeline(JoinKind::LeftOuter);
    let w = || Expr::col(4, "w");
    let Operator::Probe(probe) = &mut p.operators[0] else { unreachable!() };
    if residual {
        // `f.v <> t.w` decides a match as well (as TPC-H q21's `l_suppkey <> l_suppkey`).
        probe.residual = Some(Expr::Cmp { op: CmpOp::NotEq, left: Box::new(Expr::col(2, "v")), right: Box::new(w()) });
    }
    let fields = p.operators[0].output_fields(p.source_fields());
    let five = Expr::lit(Scalar::Int(5), Type::Int64);
    p.operators.push(Operator::Filter(Expr::Or(
        Box::new(Expr::Cmp { op: CmpOp::Gt, left: Box::new(w()), right: Box::new(five) }),
        Box::new(Expr::IsNull(Box::new(w()))),
    )));
    let count = Expr::Case {
        when_then: vec![(Expr::IsNull(Box::new(w())), Expr::lit(Scalar::Int(0), Type::Int64))],
        otherwise: Some(Box::new(w())),
        ty: Type::Int64,
    };
    p.operators.push(Operator::Project {
        exprs: vec![Expr::col(2, "v"), count],
        fields: vec![fields[2].clone(), Field::new("c", Type::Int64, true)],
    });
    let Sink::Aggregate(a) = &mut p.sink else { unreachable!() };
    a.group_by = vec![Expr::col(0, "v")];
    a.aggregates[0].arg = Some(Expr::col(1, "c"));
    (p, cols, tables)
}

/// A LEFT OUTER probe keeps every row: the payload is read only where the key matched,
/// and is NULL elsewhere — through IS NULL, CASE and a three-valued OR, into an aggregate
/// that skips it — but a hash group key never may be NULL.
#[test]
fn left_outer_probes_carry_nulls_to_expressions_and_aggregates() {
    for residual in [false, true] {
        let (p, cols, tables) = left_outer_pipeline(residual);
        let kernel = generate(&p, &cols, &tables).unwrap_or_else(|e| panic!("{e:?}"));
        let body = whole_tile_loop(&kernel.source);
        assert!(body.contains(") ? (int64_t)h0_p1["), "the payload is read only where the key matched:\n{body}");
        assert!(!body.contains("if (f"), "a LEFT OUTER probe drops no row:\n{body}");
        if crate::test_support::nvrtc_or_skip("LEFT OUTER probes compile") {
            crate::compile_cubin(&kernel.source, "sm_90").unwrap_or_else(|e| panic!("{e}\n{}", kernel.source));
        }
        if !residual {
            golden("left_outer_probe", &kernel.source);
        }
    }
    // The payload itself summed: added and counted only where the key matched (a group
    // of NULLs sums to NULL).
    let (mut p, cols, tables) = hashed_probe_pipeline(JoinKind::LeftOuter);
    let Sink::Aggregate(a) = &mut p.sink else { unreachable!() };
    a.aggregates[0].arg = Some(Expr::col(4, "w"));
    let k = generate(&p, &cols, &tables).unwrap_or_else(|e| panic!("{e:?}"));
    let SinkLayout::Aggregate { accumulators, .. } = &k.sink else { panic!("not an aggregate") };
    assert!(matches!(accumulators[..], [Accumulator::SumCount(_)]), "{accumulators:?}");
    assert!(k.params.contains(&Param::Out(Out::Counts { aggregate: 0 })), "{:?}", k.params);
    assert!(k.source.contains("if (vn"), "{}", k.source);
    if crate::test_support::nvrtc_or_skip("sums of LEFT OUTER payloads compile") {
        crate::compile_cubin(&k.source, "sm_90").unwrap_or_else(|e| panic!("{e}\n{}", k.source));
    }
    // A hash group key that may be NULL (an unmatched row's payload) packs NULL as an
    // offset of its own.
    let (mut p, cols, tables) = hashed_probe_pipeline(JoinKind::LeftOuter);
    let Sink::Aggregate(a) = &mut p.sink else { unreachable!() };
    a.group_by = vec![Expr::col(3, "k")];
    let k = generate(&p, &cols, &tables).unwrap_or_else(|e| panic!("{e:?}"));
    let SinkLayout::Aggregate { hashed: Some(pack), .. } = &k.sink else { panic!("not a hash aggregation") };
    assert!(pack.parts[0].nullable, "{pack:?}");
    if crate::test_support::nvrtc_or_skip("LEFT OUTER payloads as hash group keys compile") {
        crate::compile_cubin(&k.source, "sm_90").unwrap_or_else(|e| panic!("{e}\n{}", k.source));
    }
}

/// Which CASEs over a value that may be NULL are NULL themselves: only those whose
/// tests do not rule it out.
#[test]
fn a_case_testing_its_value_for_null_is_never_null() {
    let (mut p, cols, tables) = left_outer_pipeline(false);
    let w = || Expr::col(4, "w");
    let zero = || Expr::lit(Scalar::Int(0), Type::Int64);
    let not_null = Expr::IsNotNull(Box::new(w()));
    let cases = [
        // COALESCE(w, 0) as DataFusion writes it.
        (vec![(not_null.clone(), w())], Some(zero()), true),
        (vec![(Expr::And(Box::new(not_null), Box::new(Expr::Cmp { op: CmpOp::Gt, left: Box::new(w()), right: Box::new(zero()) })), w())], Some(zero()), true),
        // The value where it was not tested, or no ELSE: may be NULL.
        (vec![(Expr::Cmp { op: CmpOp::Gt, left: Box::new(Expr::col(2, "v")), right: Box::new(zero()) }, w())], Some(zero()), false),
        (vec![(Expr::IsNull(Box::new(w())), zero())], None, false),
    ];
    for (when_then, otherwise, never_null) in cases {
        let Operator::Project { exprs, .. } = &mut p.operators[2] else { unreachable!() };
        exprs[1] = Expr::Case { when_then, otherwise: otherwise.map(Box::new), ty: Type::Int64 };
        let what = exprs[1].to_string();
        // One that may be NULL is summed where it is not, and counted.
        let k = generate(&p, &cols, &tables).unwrap_or_else(|r| panic!("{what}: {r:?}"));
        let SinkLayout::Aggregate { accumulators, .. } = &k.sink else { panic!("not an aggregate") };
        assert_eq!(accumulators[0].counted(), !never_null, "{what}: {accumulators:?}");
    }
}

/// `SELECT k, SUM(v) FROM t WHERE s LIKE <pattern> GROUP BY k` with `s` a string column
/// without a dictionary (offsets and bytes on the GPU).
fn like_pipeline(pattern: &str, negated: bool, case_insensitive: bool) -> (Pipeline, Vec<GpuColumn>) {
    let mut p = grouped(9, AggFunc::Sum);
    let Source::Scan(scan) = &mut p.source else { unreachable!() };
    scan.fields.push(Field::new("s", Type::Utf8, false));
    scan.columns.push(2);
    scan.dictionary.push(false);
    let like = Expr::Like { expr: Box::new(Expr::col(2, "s")), pattern: pattern.into(), negated, case_insensitive };
    p.operators = vec![Operator::Filter(like)];
    let mut cols = cols();
    cols.push(GpuColumn::plain(Width::Str, None));
    (p, cols)
}

#[test]
fn like_over_strings_without_a_dictionary_matches_their_bytes() {
    let (p, cols) = like_pipeline("%gr_en\"?%", true, false);
    let k = generate(&p, &cols, &[]).unwrap();
    // The pattern is a C string literal, quote and '?' escaped; offsets and bytes are
    // parameters of their own.
    assert!(k.source.contains(r#"= tessera_like(col2, col2_bytes, r, "%gr_en\042\077%", 9);"#), "{}", k.source);
    assert!(k.source.contains("if (!((!lk1[i])))"), "{}", k.source);
    assert!(k.source.contains("const unsigned char* __restrict__ col2_bytes"), "{}", k.source);
    assert!(k.params.contains(&Param::Bytes { column: 2 }), "{:?}", k.params);
    if crate::test_support::nvrtc_or_skip("LIKE kernels compile with NVRTC") {
        crate::compile_cubin(&k.source, "sm_90").unwrap_or_else(|e| panic!("{e}\n{}", k.source));
    }
    // What the matcher does not know, and any other use of such a column, stays on the CPU.
    for (pattern, ci, reason) in [("a\\%b", false, "escape character"), ("a%", true, "ILIKE")] {
        let (p, cols) = like_pipeline(pattern, false, ci);
        let r = generate(&p, &cols, &[]).unwrap_err();
        assert!(unsupported::describe(&r).contains(reason), "{r:?}");
    }
    // Its bytes as a build payload (values of the row layout): refused where it loads.
    let (mut p, cols) = like_pipeline("a%", false, false);
    p.sink = build_pipeline().sink;
    let Sink::HashBuild(h) = &mut p.sink else { unreachable!() };
    h.payload = vec![2];
    let r = generate(&p, &cols, &[]).unwrap_err();
    assert_eq!(r.iter().map(|u| &u.reason).collect::<Vec<_>>(), vec![&Reason::RawString], "{r:?}");
}

/// A string column without a dictionary rides through a kernel as its row number
/// (`DictRef::by_row`): as a build's payload, next to a LIKE over its bytes, and as a
/// group key the other keys determine (a MIN of the row numbers); never as a key.
#[test]
fn strings_ride_as_row_numbers() {
    let by_row = DictRef { size: 1000, id: 0, by_row: true };
    let (p, mut cols) = like_pipeline("a%", false, false);
    cols[2].dictionary = Some(by_row);
    let nvrtc = crate::test_support::nvrtc_or_skip("row-number kernels compile with NVRTC");
    let compile = |k: &Kernel| {
        if nvrtc {
            crate::compile_cubin(&k.source, "sm_90").unwrap_or_else(|e| panic!("{e}\n{}", k.source));
        }
    };
    // A payload: the row number is stored, the bytes are not read (nor uploaded).
    let mut build = p.clone();
    build.operators.clear();
    build.sink = build_pipeline().sink;
    let Sink::HashBuild(h) = &mut build.sink else { unreachable!() };
    h.payload = vec![1, 2];
    let k = generate(&build, &cols, &[]).unwrap();
    assert!(k.source.contains("= (int32_t)r;"), "{}", k.source);
    assert!(k.strings.is_empty(), "{:?}", k.strings);
    let SinkLayout::Build { table } = &k.sink else { panic!("not a build") };
    assert_eq!(table.payload[1], GpuColumn::plain(Width::I32, Some(by_row)));
    compile(&k);
    // The same build behind a LIKE over the column's bytes.
    build.operators = p.operators.clone();
    let k = generate(&build, &cols, &[]).unwrap();
    assert_eq!(k.strings, vec![2]);
    assert!(k.source.contains("tessera_like(col2, col2_bytes, r,") && k.source.contains("= (int32_t)r;"), "{}", k.source);
    compile(&k);
    // A dependent group key: grouped by k alone, the string's row numbers a MIN.
    let mut agg = p.clone();
    agg.operators.clear();
    let Sink::Aggregate(a) = &mut agg.sink else { unreachable!() };
    a.group_by.push(Expr::col(2, "s"));
    a.fields.insert(1, Field::new("s", Type::Utf8, false));
    a.strategy = GroupStrategy::Hash { estimated_groups: 10, key_ranges: vec![Some((0, 9)), None] };
    a.reduced = Some(tessera_ir::ReducedKeys { dependent: vec![false, true], strategy: GroupStrategy::Perfect { domains: vec![KeyDomain::Range { min: 0, max: 9 }] } });
    let k = generate(&agg, &cols, &[]).unwrap();
    let SinkLayout::Aggregate { keys, accumulators, value_dicts, .. } = &k.sink else { panic!("not an aggregate") };
    assert_eq!((keys.len(), accumulators.get(1), value_dicts.as_slice()), (1, Some(&Accumulator::Min), &[None, Some(by_row)][..]));
    compile(&k);
    // Without the reduction the string is a hash key: refused.
    let Sink::Aggregate(a) = &mut agg.sink else { unreachable!() };
    a.reduced = None;
    let r = generate(&agg, &cols, &[]).unwrap_err();
    assert!(unsupported::describe(&r).contains("strings without a dictionary"), "{r:?}");
}

/// Compiles `k` with NVRTC when it is there (see `test_support`).
fn compiles(k: &Kernel, what: &str) {
    if crate::test_support::nvrtc_or_skip("kernels over NULLs compile with NVRTC") {
        crate::compile_cubin(&k.source, "sm_90").unwrap_or_else(|e| panic!("{what}: {e}\n{}", k.source));
    }
}

/// [`grouped`] over a `v` whose data holds NULLs (on the GPU with its validity bitmap).
fn nullable_v(max: i64, func: AggFunc) -> (Pipeline, Vec<GpuColumn>) {
    let mut p = grouped(max, func);
    let Source::Scan(scan) = &mut p.source else { unreachable!() };
    scan.fields[1].nullable = true;
    (p, vec![int_col(), GpuColumn::nullable(Width::I64, None)])
}

/// A source column whose data holds NULLs comes with its validity bitmap, read where the
/// value is used: `v < 10` is TRUE only where `v` is not NULL. The same nullable column
/// without a NULL in its data goes without one, as a column that cannot be NULL.
#[test]
fn nullable_columns_come_with_their_validity_bits() {
    let (p, cols) = nullable_v(9, AggFunc::Sum);
    let k = generate(&p, &cols, &[]).unwrap_or_else(|e| panic!("{e:?}"));
    assert!(k.params.contains(&Param::Validity { column: 1 }), "{:?}", k.params);
    assert!(k.source.contains("const uint32_t* __restrict__ col1_valid"), "{}", k.source);
    let body = whole_tile_loop(&k.source);
    assert!(body.contains("if (!(((((__ldg(&col1_valid[r >> 5]) >> (r & 31)) & 1u) != 0u) && ((long long)(c1[i]) < (long long)(10LL)))))"), "{body}");
    compiles(&k, "nullable filter and sum");
    // No NULL in the data: no bitmap, and the kernel of a column that cannot be NULL.
    let plain = generate(&p, &self::cols(), &[]).unwrap();
    assert!(!plain.params.iter().any(|p| matches!(p, Param::Validity { .. })), "{:?}", plain.params);
    assert_eq!(plain.source, generate(&grouped(9, AggFunc::Sum), &self::cols(), &[]).unwrap().source);
    // Bit-packed tiles have no NULLs: such a column never comes packed.
    let mut packed = cols.clone();
    packed[1].packed = true;
    let r = generate(&p, &packed, &[]).unwrap_err();
    assert!(r.iter().any(|u| matches!(u.reason, Reason::NullableColumn { .. })), "{r:?}");
}

/// SUM, AVG, MIN and MAX skip NULL inputs and count the ones they take (a group of NULLs
/// gets NULL); COUNT(v) counts the non-NULL ones, COUNT(*) every row: scalar, in a block's
/// shared table and with global atomics.
#[test]
fn aggregates_skip_nulls_and_count_what_they_take() {
    let cases = [
        (AggFunc::Sum, "SumCount"),
        (AggFunc::Avg, "SumCount"),
        (AggFunc::Min, "MinCount"),
        (AggFunc::Max, "MaxCount"),
        (AggFunc::Count, "Count"),
        (AggFunc::CountStar, "Count"),
    ];
    for (func, want) in cases {
        for shape in ["scalar", "direct", "global"] {
            let (mut p, cols) = nullable_v(if shape == "global" { 99_999 } else { 9 }, func);
            p.operators.clear();
            let Sink::Aggregate(a) = &mut p.sink else { unreachable!() };
            if func == AggFunc::CountStar {
                a.aggregates[0].arg = None;
            }
            if shape == "scalar" {
                a.strategy = GroupStrategy::Scalar;
                a.group_by.clear();
                a.fields.remove(0);
            }
            let what = format!("{func:?} {shape}");
            let k = generate(&p, &cols, &[]).unwrap_or_else(|e| panic!("{what}: {e:?}"));
            let SinkLayout::Aggregate { accumulators, table, .. } = &k.sink else { panic!("{what}: not an aggregate") };
            assert!(format!("{:?}", accumulators[0]).starts_with(want), "{what}: {accumulators:?}");
            assert_eq!(k.params.contains(&Param::Out(Out::Counts { aggregate: 0 })), accumulators[0].counted(), "{what}: {:?}", k.params);
            let expected = match shape {
                "direct" => GroupTable::Direct { slots: 11, copies: 32 },
                _ => GroupTable::Global,
            };
            assert_eq!(*table, expected, "{what}");
            // Only where v is not NULL (COUNT(*) reads no v).
            assert_eq!(k.source.contains("if (vn"), func != AggFunc::CountStar, "{what}: {}", k.source);
            assert_eq!(k.source.contains("col1_valid[r >> 5]"), func != AggFunc::CountStar, "{what}: {}", k.source);
            if accumulators[0].counted() {
                assert!(k.source.contains("out_c0["), "{what}: {}", k.source);
            }
            compiles(&k, &what);
        }
    }
}

/// A NULL group key is a group of its own: slot 0 of the key's perfect-hash domain (as
/// results read it), or in a hash table the offset one past the key's range.
#[test]
fn null_group_keys_take_slot_zero() {
    let mut p = grouped(9, AggFunc::Sum);
    let Source::Scan(scan) = &mut p.source else { unreachable!() };
    scan.fields[0].nullable = true;
    let cols = vec![GpuColumn::nullable(Width::I32, None), GpuColumn::plain(Width::I64, None)];
    let k = generate(&p, &cols, &[]).unwrap_or_else(|e| panic!("{e:?}"));
    assert!(k.source.contains("? ((long long)((unsigned long long)(c0[i]) - (unsigned long long)0LL + 1ull)) * 1LL : 0LL)"), "{}", k.source);
    let SinkLayout::Aggregate { keys, accumulators, .. } = &k.sink else { panic!("not an aggregate") };
    assert_eq!((keys[0].slots, accumulators[0].counted()), (11, false));
    compiles(&k, "NULL group key");
    let Sink::Aggregate(a) = &mut p.sink else { unreachable!() };
    a.strategy = GroupStrategy::Hash { estimated_groups: 10, key_ranges: vec![Some((0, 9))] };
    let k = generate(&p, &cols, &[]).unwrap_or_else(|e| panic!("{e:?}"));
    let SinkLayout::Aggregate { hashed: Some(pack), .. } = &k.sink else { panic!("not a hash aggregation") };
    // 0..=9 and NULL (offset 10): 4 bits.
    assert_eq!((pack.parts[0].nullable, pack.parts[0].bits()), (true, 4));
    assert!(k.source.contains(" : 10ull"), "{}", k.source);
    assert!(k.source.contains(" <= 10ull"), "{}", k.source);
    compiles(&k, "NULL hash group key");
}

/// IS NULL over a column that may be NULL reads its validity bit (not its value); LIKE
/// over a NULL string is NULL (a filter drops the row under NOT LIKE too).
#[test]
fn is_null_and_like_follow_the_validity_bits() {
    let (mut p, cols) = nullable_v(9, AggFunc::CountStar);
    p.operators = vec![Operator::Filter(Expr::IsNull(Box::new(Expr::col(1, "v"))))];
    let Sink::Aggregate(a) = &mut p.sink else { unreachable!() };
    a.aggregates[0].arg = None;
    let k = generate(&p, &cols, &[]).unwrap();
    assert!(k.source.contains("if (!((!(((__ldg(&col1_valid[r >> 5])"), "{}", k.source);
    assert!(!k.source.contains("col1[r]"), "IS NULL loads no value: {}", k.source);
    compiles(&k, "IS NULL");
    let (mut p, mut cols) = like_pipeline("a%", true, false);
    let Source::Scan(scan) = &mut p.source else { unreachable!() };
    scan.fields[2].nullable = true;
    cols[2].nullable = true;
    let k = generate(&p, &cols, &[]).unwrap();
    assert!(k.source.contains("col2_valid[r >> 5]") && k.source.contains("(!lk"), "{}", k.source);
    compiles(&k, "NOT LIKE over NULLs");
}

/// Probe keys that may be NULL match nothing: inner and semi probes drop their rows, anti
/// probes (NOT EXISTS) keep them, LEFT OUTER probes give them NULL payloads — dense,
/// hashed and chained tables alike. A key with NULLs is not hoisted ahead of the others.
#[test]
fn null_probe_keys_match_nothing() {
    // Dense: the star join with its first key nullable.
    let (mut p, mut cols, tables) = star();
    let Source::Scan(scan) = &mut p.source else { unreachable!() };
    scan.fields[0].nullable = true;
    cols[0].nullable = true;
    for kind in [JoinKind::Inner, JoinKind::Semi, JoinKind::Anti] {
        let mut p = p.clone();
        let Operator::Probe(pr) = &mut p.operators[0] else { unreachable!() };
        pr.kind = kind;
        if kind != JoinKind::Inner {
            pr.build_fields.clear();
            let Sink::Aggregate(a) = &mut p.sink else { unreachable!() };
            a.group_by = vec![Expr::col(1, "sk")];
            a.strategy = GroupStrategy::Perfect { domains: vec![KeyDomain::Range { min: 0, max: 99 }] };
        }
        let k = generate(&p, &cols, &tables).unwrap_or_else(|e| panic!("{kind:?}: {e:?}"));
        assert!(k.source.contains("col0_valid[r >> 5]"), "{kind:?}: {}", k.source);
        // Inner and semi probes drop a NULL key's row first; an anti probe's found flag
        // is the key's validity and the table's bit.
        let test = if kind == JoinKind::Anti { "[i] = (kn1[i] && f3[i]);" } else { "if (!(kn1[i])) { sel[i] = false; continue; }" };
        assert!(k.source.contains(test), "{kind:?}: {}", k.source);
        compiles(&k, &format!("dense {kind:?} probe on a nullable key"));
    }
    // Hashed: the NULL key is outside every range.
    for kind in [JoinKind::Inner, JoinKind::Semi, JoinKind::Anti, JoinKind::LeftOuter] {
        let (mut p, mut cols, tables) = hashed_probe_pipeline(kind);
        let Source::Scan(scan) = &mut p.source else { unreachable!() };
        scan.fields[1].nullable = true;
        cols[1].nullable = true;
        let k = generate(&p, &cols, &tables).unwrap_or_else(|e| panic!("{kind:?}: {e:?}"));
        let test = if matches!(kind, JoinKind::Anti | JoinKind::LeftOuter) { "[i] = !(kn1[i] && " } else { "if (!(kn1[i])) { sel[i] = false; continue; }" };
        assert!(k.source.contains(test), "{kind:?}: {}", k.source);
        compiles(&k, &format!("hashed {kind:?} probe on a nullable key"));
    }
    // Chained: a NULL key has no chain.
    for (kind, residual) in [(JoinKind::Inner, true), (JoinKind::Semi, true), (JoinKind::Anti, false)] {
        let (mut p, mut cols, tables) = chained_probe_pipeline(kind, residual);
        let Source::Scan(scan) = &mut p.source else { unreachable!() };
        scan.fields[0].nullable = true;
        cols[0].nullable = true;
        let k = generate(&p, &cols, &tables).unwrap_or_else(|e| panic!("{kind:?}: {e:?}"));
        assert!(k.source.contains("col0_valid"), "{kind:?}: {}", k.source);
        compiles(&k, &format!("chained {kind:?} probe on a nullable key"));
    }
}

/// A residual that is NULL does not match (as FALSE): `w <> v` over a `v` with NULLs.
#[test]
fn null_residuals_do_not_match() {
    for kind in [JoinKind::Inner, JoinKind::Semi, JoinKind::Anti] {
        let (mut p, mut cols, tables) = chained_probe_pipeline(kind, true);
        let Source::Scan(scan) = &mut p.source else { unreachable!() };
        scan.fields[2].nullable = true;
        cols[2].nullable = true;
        // The group key is v itself: group by something else.
        let Sink::Aggregate(a) = &mut p.sink else { unreachable!() };
        a.group_by = vec![Expr::col(0, "a")];
        a.strategy = GroupStrategy::Perfect { domains: vec![KeyDomain::Range { min: 0, max: 9 }] };
        let k = generate(&p, &cols, &tables).unwrap_or_else(|e| panic!("{kind:?}: {e:?}"));
        assert!(k.source.contains("col2_valid[r >> 5]"), "{kind:?}: {}", k.source);
        compiles(&k, &format!("{kind:?} residual over NULLs"));
    }
}

/// A build drops rows whose key is NULL (they match no probe); a payload or materialized
/// value that may be NULL comes with a validity bitmap.
#[test]
fn builds_drop_null_keys_and_keep_the_validity_of_payloads() {
    let nullable = |p: &mut Pipeline, c: usize| {
        let Source::Scan(scan) = &mut p.source else { unreachable!() };
        scan.fields[c].nullable = true;
    };
    let mut cols_k = cols();
    cols_k[0].nullable = true;
    for (what, mut p) in [("dense", build_pipeline()), ("hashed", hashed_build_pipeline())] {
        nullable(&mut p, 0);
        if what == "hashed" {
            let Sink::HashBuild(h) = &mut p.sink else { unreachable!() };
            h.payload = vec![1];
        }
        let k = generate(&p, &cols_k, &[]).unwrap_or_else(|e| panic!("{what}: {e:?}"));
        assert!(k.source.contains("if (!(kn"), "{what}: {}", k.source);
        compiles(&k, &format!("{what} build on a nullable key"));
        // Chained (1:N) the same.
        let Sink::HashBuild(h) = &mut p.sink else { unreachable!() };
        h.repeated_keys = true;
        let k = generate(&p, &cols_k, &[]).unwrap_or_else(|e| panic!("{what} chained: {e:?}"));
        assert!(k.source.contains("if (!(kn"), "{what} chained: {}", k.source);
        compiles(&k, &format!("{what} chained build on a nullable key"));
    }
    // A payload that may be NULL sets its validity bit where it is not.
    let mut p = build_pipeline();
    nullable(&mut p, 1);
    let mut cols_v = cols();
    cols_v[1].nullable = true;
    let k = generate(&p, &cols_v, &[]).unwrap_or_else(|e| panic!("{e:?}"));
    let SinkLayout::Build { table } = &k.sink else { panic!("not a build") };
    assert!(table.payload.iter().any(|c| c.nullable), "{:?}", table.payload);
    assert!(k.params.iter().any(|p| matches!(p, Param::Out(Out::BuildPayloadValid { .. }))), "{:?}", k.params);
    assert!(k.source.contains("atomicOr(&out_pv"), "{}", k.source);
    compiles(&k, "build of a payload that may be NULL");
    // So does a materialized value.
    p.sink = Sink::Materialize { result: 0, skip: 0, fetch: None };
    let k = generate(&p, &cols_v, &[]).unwrap_or_else(|e| panic!("{e:?}"));
    let SinkLayout::Materialize { columns } = &k.sink else { panic!("not a materialization") };
    assert_eq!(columns.iter().map(|c| c.nullable).collect::<Vec<_>>(), vec![false, true]);
    assert!(k.params.contains(&Param::Out(Out::MaterializedValid { column: 1 })), "{:?}", k.params);
    assert!(k.source.contains("atomicOr(&out_v1[pos >> 5], 1u << (pos & 31));"), "{}", k.source);
    compiles(&k, "materialized value that may be NULL");
    // A nullable field without a NULL in its data is materialized as any column.
    let k = generate(&p, &cols(), &[]).unwrap_or_else(|e| panic!("{e:?}"));
    assert!(!k.params.iter().any(|p| matches!(p, Param::Out(Out::MaterializedValid { .. }))), "{:?}", k.params);
}

/// [`grouped`] with `v` a double: `SELECT k, func(v) FROM t WHERE v < 10.5 GROUP BY k`.
fn float_v(func: AggFunc) -> Pipeline {
    let mut p = grouped(9, func);
    let Source::Scan(scan) = &mut p.source else { unreachable!() };
    scan.fields[1].ty = Type::Float64;
    p.operators = vec![Operator::Filter(Expr::Cmp {
        op: CmpOp::Lt,
        left: Box::new(Expr::col(1, "v")),
        right: Box::new(Expr::lit(Scalar::Float(10.5), Type::Float64)),
    })];
    let Sink::Aggregate(a) = &mut p.sink else { unreachable!() };
    a.aggregates[0].ty = Type::Float64;
    a.fields[1].ty = Type::Float64;
    p
}

/// Floats are order keys in kernels: compared and taken MIN/MAX of as integers, the
/// literal as its key; a cast of an integer to a double is rounded on the device and
/// keyed there; arithmetic, SUM and AVG turn the keys back into doubles.
#[test]
fn floats_compare_and_take_min_max_as_order_keys() {
    for func in [AggFunc::Min, AggFunc::Max] {
        let k = generate(&float_v(func), &cols(), &[]).unwrap_or_else(|e| panic!("{e:?}"));
        let key = layout::float_order_key(10.5);
        assert!(k.source.contains(&format!("{key}LL")), "{}", k.source);
        compiles(&k, "MIN/MAX of a double");
    }
    // SUM and AVG add the doubles themselves, grouped (per row, atomically) and scalar
    // (in registers, a warp's total added once).
    for func in [AggFunc::Sum, AggFunc::Avg] {
        for scalar in [false, true] {
            let mut p = float_v(func);
            if scalar {
                let Sink::Aggregate(a) = &mut p.sink else { unreachable!() };
                a.group_by.clear();
                a.strategy = GroupStrategy::Scalar;
                a.fields.remove(0);
            }
            let k = generate(&p, &cols(), &[]).unwrap_or_else(|e| panic!("{e:?}"));
            let SinkLayout::Aggregate { accumulators, .. } = &k.sink else { panic!("not an aggregate") };
            assert!(matches!(accumulators[..], [Accumulator::Sum(SumRepr::F64) | Accumulator::SumCount(SumRepr::F64)]), "{accumulators:?}");
            assert!(k.source.contains("double* __restrict__ out_a0") && k.source.contains("tessera_float_of_key("), "{}", k.source);
            compiles(&k, "SUM/AVG of doubles");
        }
    }
    // An integer compared with a double: the integer is cast on the device.
    let mut p = grouped(9, AggFunc::Sum);
    p.operators = vec![Operator::Filter(Expr::Cmp {
        op: CmpOp::GtEq,
        left: Box::new(Expr::Cast { expr: Box::new(Expr::col(1, "v")), ty: Type::Float64 }),
        right: Box::new(Expr::lit(Scalar::Float(-0.25), Type::Float64)),
    })];
    let k = generate(&p, &cols(), &[]).unwrap_or_else(|e| panic!("{e:?}"));
    assert!(k.source.contains("tessera_float_key((double)(long long)("), "{}", k.source);
    compiles(&k, "a cast to double");
    // A double compared with a decimal literal (DataFusion casts the double): rounded
    // on the device as Arrow rounds, flagged where it does not fit.
    let mut p = float_v(AggFunc::Min);
    let dec = Type::Decimal { precision: 30, scale: 15 };
    p.operators = vec![Operator::Filter(Expr::Cmp {
        op: CmpOp::Lt,
        left: Box::new(Expr::Cast { expr: Box::new(Expr::col(1, "v")), ty: dec }),
        right: Box::new(Expr::lit(Scalar::Decimal(123_000_000_000_000), dec)),
    })];
    let k = generate(&p, &cols(), &[]).unwrap_or_else(|e| panic!("{e:?}"));
    assert!(k.source.contains(", 1e15, -9223372036854775807LL, 9223372036854775807LL, flags)"), "{}", k.source);
    compiles(&k, "a double cast to a decimal");
    // Arithmetic on doubles rounds each operation on its own (no fused multiply-add);
    // `%` is C's fmod, exact like Rust's.
    let mut p = float_v(AggFunc::Sum);
    let v = || Box::new(Expr::col(1, "v"));
    let two = || Box::new(Expr::lit(Scalar::Float(2.0), Type::Float64));
    let product = Expr::Arith { op: ArithOp::Mul, left: v(), right: two(), ty: Type::Float64 };
    let sum = Expr::Arith { op: ArithOp::Add, left: Box::new(product), right: Box::new(Expr::Negate(v())), ty: Type::Float64 };
    p.operators = vec![Operator::Filter(Expr::Cmp { op: CmpOp::Lt, left: Box::new(sum.clone()), right: two() })];
    let Sink::Aggregate(a) = &mut p.sink else { unreachable!() };
    a.aggregates[0].arg = Some(Expr::Arith { op: ArithOp::Div, left: v(), right: two(), ty: Type::Float64 });
    let k = generate(&p, &cols(), &[]).unwrap_or_else(|e| panic!("{e:?}"));
    for f in ["__dmul_rn(", "__dadd_rn(", "__ddiv_rn(", "tessera_float_key(-tessera_float_of_key("] {
        assert!(k.source.contains(f), "{f}: {}", k.source);
    }
    compiles(&k, "arithmetic on doubles");
    p.operators = vec![Operator::Filter(Expr::Cmp {
        op: CmpOp::Lt,
        left: Box::new(Expr::Arith { op: ArithOp::Mod, left: v(), right: two(), ty: Type::Float64 }),
        right: two(),
    })];
    let k = generate(&p, &cols(), &[]).unwrap_or_else(|e| panic!("{e:?}"));
    assert!(k.source.contains("fmod(tessera_float_of_key("), "{}", k.source);
    compiles(&k, "% of doubles");
}

/// The order keys order like IEEE 754's total order (Rust's `total_cmp`, which Arrow
/// compares floats by), and give their doubles back bit for bit.
#[test]
fn float_order_keys_follow_the_total_order() {
    let mut values = vec![f64::NEG_INFINITY, -1e300, -1.5, -f64::MIN_POSITIVE, -0.0, 0.0, 5e-324, 1.0, 2.5, f64::MAX, f64::INFINITY, f64::NAN, -f64::NAN];
    values.extend((0..200).map(|i| ((i as f64) - 100.0) * 0.37));
    for a in &values {
        assert_eq!(layout::float_from_order_key(layout::float_order_key(*a)).to_bits(), a.to_bits());
        for b in &values {
            assert_eq!(layout::float_order_key(*a).cmp(&layout::float_order_key(*b)), a.total_cmp(b), "{a} vs {b}");
        }
    }
}

/// Decimal division as Arrow computes it: the dividend scaled by 10^(4 + the divisor's
/// scale) in 128 bits, truncated, at the dividend's scale plus 4; a zero divisor raises
/// the overflow flag; `%` at the larger of the two scales. Other result scales stay on the
/// CPU.
#[test]
fn decimals_divide_at_the_dividends_scale_plus_four() {
    let mut p = grouped(9, AggFunc::Sum);
    let Source::Scan(scan) = &mut p.source else { unreachable!() };
    let (d2, d3, d6) = (Type::Decimal { precision: 12, scale: 2 }, Type::Decimal { precision: 8, scale: 3 }, Type::Decimal { precision: 19, scale: 6 });
    scan.fields[1].ty = d2;
    let div = |ty: Type, op: ArithOp| Expr::Arith {
        op,
        left: Box::new(Expr::col(1, "v")),
        right: Box::new(Expr::lit(Scalar::Decimal(3000), d3)),
        ty,
    };
    p.operators = vec![Operator::Filter(Expr::Cmp { op: CmpOp::Gt, left: Box::new(div(d6, ArithOp::Div)), right: Box::new(Expr::lit(Scalar::Decimal(2_200_000), d6)) })];
    let k = generate(&p, &cols(), &[]).unwrap_or_else(|e| panic!("{e:?}"));
    assert!(k.source.contains("tessera_decimal_div((__int128)(") && k.source.contains(") * 10000000LL, (long long)("), "{}", k.source);
    compiles(&k, "decimal division");
    // `%` at the larger scale, both operands brought to it.
    let d3r = Type::Decimal { precision: 8, scale: 3 };
    p.operators = vec![Operator::Filter(Expr::Cmp { op: CmpOp::Gt, left: Box::new(div(d3r, ArithOp::Mod)), right: Box::new(Expr::lit(Scalar::Decimal(1), d3r)) })];
    let k = generate(&p, &cols(), &[]).unwrap_or_else(|e| panic!("{e:?}"));
    assert!(k.source.contains("tessera_decimal_rem((__int128)(") && k.source.contains(") * 10LL, (__int128)("), "{}", k.source);
    compiles(&k, "decimal remainder");
    for (ty, op) in [(Type::Decimal { precision: 19, scale: 5 }, ArithOp::Div), (d6, ArithOp::Mod)] {
        p.operators = vec![Operator::Filter(Expr::Cmp { op: CmpOp::Gt, left: Box::new(div(ty, op)), right: Box::new(Expr::lit(Scalar::Decimal(1), ty)) })];
        assert!(generate(&p, &cols(), &[]).is_err(), "{op:?} into {ty}");
    }
}
