//! The range analysis on representative kernels: which bounds it proves, and what it leaves
//! unknown.

use super::ranges::{cond_cuda, Bound, Fact, Ranges};
use crate::checked_program_of;

/// The fact of the variable named `name` in the kernel `rust`.
fn fact(rust: &str, name: &str) -> Option<Fact> {
    let (program, types) = checked_program_of(rust).unwrap_or_else(|e| panic!("{e}"));
    let kernel = program.root();
    let ranges = Ranges::of(kernel, &types[0]);
    let local = kernel
        .locals
        .iter()
        .position(|local| local.name == name)
        .unwrap_or_else(|| panic!("no variable `{name}`"));
    ranges.local(crate::ir::LocalId(local as u32)).cloned()
}

/// The numeric bounds of `name`, asserting the fact holds unconditionally.
fn bounds(rust: &str, name: &str) -> Option<(u128, u128)> {
    let fact = fact(rust, name)?;
    assert!(fact.cond.is_empty(), "{name}: {:?}", fact.cond);
    match (fact.lo, fact.hi) {
        (Bound::Num(lo), Bound::Num(hi)) => Some((lo, hi)),
        other => panic!("{name}: symbolic bounds {other:?}"),
    }
}

const INDICES: &str = r#"
fn k(n: usize, x: &[u64], out: &mut [u32]) {
    let tile = shared_array::<u32, 64>();
    let tx = thread_idx().x as usize;
    let tz = thread_idx().z as usize;
    let row = block_idx().y as usize * 32 + tx;
    let col = block_idx().x as usize * 32 + tx;
    let y = global_idx().y;
    let gx = global_idx().x;
    let lane = lane_id() as usize;
    let dim = block_dim().x as usize;
    let wraps = tx - 1;
    let safe = tx + 1 - 1;
    let quarter = tx / 4;
    let by_param = tx / n;
    let rem = tx % 7;
    let masked = (row & 255) | 3;
    let down = tx >> 5;
    let up = tx << 3;
    let far = tx << 40;
    let smaller = tx.min(lane);
    let larger = row.max(tz);
    let picked = if n > 3 { tx } else { lane + 2048 };
    let unknown_min = tx.min(n);
    let mut changed = tx;
    changed += 1;
    let from_memory = x[0] as usize;
    let read = tile[tx] as usize;
    let indexed = tile[from_memory] + 0 * (n as u32);
    let wrapping_u32 = thread_idx().x * 5_000_000;
    let widened_u32 = (thread_idx().x * 5_000_000) as usize;
    out[0] = (row + col + y + gx + lane + dim + wraps + safe + quarter + by_param + rem + masked
        + down + up + far + smaller + larger + picked + unknown_min + changed + from_memory + read + tz) as u32 + indexed + wrapping_u32
        + widened_u32 as u32;
}
"#;

#[test]
fn builtins_bound_thread_and_block_indices() {
    assert_eq!(bounds(INDICES, "tx"), Some((0, 1023)));
    assert_eq!(bounds(INDICES, "tz"), Some((0, 63)));
    assert_eq!(bounds(INDICES, "row"), Some((0, 65534 * 32 + 1023)));
    assert_eq!(bounds(INDICES, "y"), Some((0, 65534 * 1024 + 1023)));
    assert_eq!(bounds(INDICES, "lane"), Some((0, 31)));
    assert_eq!(bounds(INDICES, "dim"), Some((1, 1024)));
    // Past 32 bits: (2^31 - 2) * 32 and the x axis of the grid-wide index.
    assert_eq!(bounds(INDICES, "col"), None);
    assert_eq!(bounds(INDICES, "gx"), None);
}

#[test]
fn operators_follow_interval_arithmetic() {
    assert_eq!(bounds(INDICES, "safe"), Some((0, 1023)));
    assert_eq!(bounds(INDICES, "quarter"), Some((0, 255)));
    assert_eq!(bounds(INDICES, "rem"), Some((0, 6)));
    assert_eq!(bounds(INDICES, "masked"), Some((0, 255 + 3)));
    assert_eq!(bounds(INDICES, "down"), Some((0, 31)));
    assert_eq!(bounds(INDICES, "up"), Some((0, 1023 * 8)));
    assert_eq!(bounds(INDICES, "smaller"), Some((0, 31)));
    assert_eq!(bounds(INDICES, "larger"), Some((0, 65534 * 32 + 1023)));
    assert_eq!(bounds(INDICES, "picked"), Some((0, 31 + 2048)));
    // `tx.min(n)` is at most 1023, but `n` itself is computed in 64 bits.
    assert_eq!(bounds(INDICES, "unknown_min"), None);
}

#[test]
fn what_may_wrap_or_is_unknown_has_no_fact() {
    // `tx - 1` wraps for thread 0; a divisor may be zero; a shift by 40 masks differently.
    assert_eq!(bounds(INDICES, "wraps"), None);
    assert_eq!(bounds(INDICES, "by_param"), None);
    assert_eq!(bounds(INDICES, "far"), None);
    // Mutable variables, memory and shared memory indexed by any value.
    assert_eq!(bounds(INDICES, "changed"), None);
    assert_eq!(bounds(INDICES, "from_memory"), None);
    // A `u32` read from shared memory is some `u32`: it fits, but proves nothing more.
    assert_eq!(bounds(INDICES, "read"), Some((0, u32::MAX as u128)));
    assert_eq!(bounds(INDICES, "indexed"), Some((0, u32::MAX as u128)));
    // `u32` arithmetic wraps at 32 bits: its value is any `u32`.
    assert_eq!(bounds(INDICES, "wrapping_u32"), Some((0, u32::MAX as u128)));
    assert_eq!(bounds(INDICES, "widened_u32"), Some((0, u32::MAX as u128)));
}

#[test]
fn loop_counters_stay_below_their_bound() {
    let rust = r#"
fn k(n: usize, out: &mut [u32]) {
    for i in 0..16 {
        for j in 2..=9 {
            for s in (0..100).step_by(7) {
                for u in 0..n {
                    let tx = thread_idx().x as usize;
                    for w in tx..tx + 4 {
                        out[0] = (i + j + s + u + w) as u32;
                    }
                }
            }
        }
    }
}
"#;
    assert_eq!(bounds(rust, "i"), Some((0, 15)));
    assert_eq!(bounds(rust, "j"), Some((2, 9)));
    assert_eq!(bounds(rust, "s"), Some((0, 99)));
    assert_eq!(bounds(rust, "u"), None);
    assert_eq!(bounds(rust, "w"), Some((0, 1023 + 3)));
}

#[test]
fn constants_give_bounds_the_cpp_compiler_decides() {
    let rust = r#"
fn k<const N: usize>(out: &mut [u32]) {
    const W: usize = 8;
    let tx = thread_idx().x as usize;
    let scaled = tx * N;
    let local = tx * W;
    let shifted = tx + N - 1;
    out[0] = (scaled + local + shifted) as u32;
}
"#;
    // A const generic's value is known only to C++: the fit is a condition on it.
    let scaled = fact(rust, "scaled").expect("a conditional fact");
    assert_eq!(
        cond_cuda(&scaled.cond),
        "rs_bound_mul(1023ull, (unsigned long long)(N)) <= 4294967295ull"
    );
    // A `const` in the function is a literal.
    assert_eq!(bounds(rust, "local"), Some((0, 1023 * 8)));
    // `tx + N - 1` cannot wrap where `N >= 1`: that joins the condition.
    let shifted = fact(rust, "shifted").expect("a conditional fact");
    let cond = cond_cuda(&shifted.cond);
    assert!(cond.contains("1ull <= (unsigned long long)(N)"), "{cond}");
}

#[test]
fn bounds_fold_numbers_and_saturate() {
    let big = Bound::Num(u64::MAX as u128);
    let sum = Bound::Op(
        super::ranges::BoundOp::Add,
        std::rc::Rc::new(big.clone()),
        std::rc::Rc::new(Bound::Sym("N".into())),
    );
    assert_eq!(
        sum.cuda(),
        "rs_bound_add(18446744073709551615ull, (unsigned long long)(N))"
    );
    assert_eq!(Bound::Num(u128::MAX).cuda(), "18446744073709551615ull");
}
