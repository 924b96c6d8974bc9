//! The range analysis on representative kernels: which bounds it proves, and what it leaves
//! unknown.

use super::{cond_cuda, Bound, Fact, Ranges};
use crate::checked_program_of;

/// The fact of the variable named `name` in the kernel `rust`.
fn fact(rust: &str, name: &str) -> Option<Fact> {
    let (program, types) = checked_program_of(rust).unwrap_or_else(|e| panic!("{e}"));
    let kernel = program.root();
    let ranges = Ranges::of(kernel, &types[0], None);
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
    // `tx.min(n)` is at most 1023: compared in 64 bits (`n` has no fact), its result fits.
    assert_eq!(bounds(INDICES, "unknown_min"), Some((0, 1023)));
}

#[test]
fn what_may_wrap_or_is_unknown_has_no_fact() {
    // `tx - 1` wraps for thread 0; a divisor may be zero; a shift by 40 masks differently.
    assert_eq!(bounds(INDICES, "wraps"), None);
    assert_eq!(bounds(INDICES, "by_param"), None);
    assert_eq!(bounds(INDICES, "far"), None);
    // Memory and shared memory indexed by any value.
    assert_eq!(bounds(INDICES, "from_memory"), None);
    // A variable written in a straight line after its `let` is each of its values in turn.
    assert_eq!(bounds(INDICES, "changed"), Some((0, 1024)));
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
    // One past 9: the CUDA counter of `a..=b` steps there.
    assert_eq!(bounds(rust, "j"), Some((2, 10)));
    assert_eq!(bounds(rust, "s"), Some((0, 99)));
    assert_eq!(bounds(rust, "u"), None);
    assert_eq!(bounds(rust, "w"), Some((0, 1023 + 3)));
    let reversed = r#"
fn k(out: &mut [u32]) {
    for r in (0..16).rev() {
        out[r] = 0;
    }
}
"#;
    // Its CUDA counter starts at 16, one past the last value.
    assert_eq!(bounds(reversed, "r"), Some((0, 16)));
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
        super::BoundOp::Add,
        std::rc::Rc::new(big.clone()),
        std::rc::Rc::new(Bound::Sym("N".into(), "N".into())),
    );
    assert_eq!(
        sum.cuda(),
        "rs_bound_add(18446744073709551615ull, (unsigned long long)(N))"
    );
    assert_eq!(Bound::Num(u128::MAX).cuda(), "18446744073709551615ull");
}

/// The fact of `name` in `rust` with the kernel's parameters known only at launch.
fn launch_fact(rust: &str, name: &str) -> Option<Fact> {
    let (program, types) = checked_program_of(rust).unwrap_or_else(|e| panic!("{e}"));
    let kernel = program.root();
    let params = super::Params {
        values: kernel
            .params
            .iter()
            .filter(|p| matches!(p.ty, crate::types::Ty::Scalar(crate::types::Scalar::Usize)))
            .map(|p| (p.local, kernel.local(p.local).name.clone()))
            .collect(),
        lens: kernel
            .params
            .iter()
            .filter(|p| matches!(p.ty, crate::types::Ty::Slice { .. }))
            .map(|p| (p.local, format!("{}_len", kernel.local(p.local).name)))
            .collect(),
        grid: super::Params::bounds_grid(kernel),
    };
    let ranges = Ranges::of(kernel, &types[0], Some(&params));
    let local = kernel
        .locals
        .iter()
        .position(|local| local.name == name)
        .unwrap_or_else(|| panic!("no variable `{name}`"));
    ranges.local(crate::ir::LocalId(local as u32)).cloned()
}

#[test]
fn conditions_bound_the_variables_they_compare() {
    let rust = r#"
fn k(n: usize, out: &mut [u32]) {
    let tx = thread_idx().x as usize;
    let gx = global_idx().x;
    if gx < 1000 {
        let inside = gx * 4;
        out[0] = inside as u32;
    }
    let outside = tx + 1;
    if tx > 0 {
        let below = tx - 1;
        out[1] = below as u32;
    }
    let picked = if tx >= 1 { tx - 1 } else { 0 };
    if gx >= 500 {
        return;
    }
    let after = gx + 1;
    out[2] = (outside + picked + after) as u32;
}
"#;
    assert_eq!(bounds(rust, "inside"), Some((0, 999 * 4)));
    assert_eq!(bounds(rust, "below"), Some((0, 1022)));
    assert_eq!(bounds(rust, "picked"), Some((0, 1022)));
    // After `if gx >= 500 { return; }`, `gx < 500`.
    assert_eq!(bounds(rust, "after"), Some((1, 500)));
    assert_eq!(bounds(rust, "outside"), Some((1, 1024)));
}

#[test]
fn parameters_make_facts_decided_at_launch() {
    let rust = r#"
fn k(width: usize, height: usize, out: &mut [u32]) {
    let x = global_idx().x;
    let y = global_idx().y;
    if x < width && y < height {
        let at = y * width + x;
        let right = (x + 1).min(width - 1);
        out[at] = right as u32;
    }
    let i = global_idx().x;
    if i < out.len() {
        let doubled = i * 2;
        out[doubled / 2] = 0;
    }
}
"#;
    let at = launch_fact(rust, "at").expect("a fact decided at launch");
    let cond = cond_cuda(&at.cond);
    assert!(cond.contains("(unsigned long long)(width)"), "{cond}");
    assert!(cond.contains("(unsigned long long)(height)"), "{cond}");
    assert!(at.cond.iter().any(|(a, _)| a.at_run_time()));
    // `width - 1` cannot wrap where `x < width`: no atom asks for it.
    let right = launch_fact(rust, "right").expect("a fact decided at launch");
    assert!(
        !cond_cuda(&right.cond).contains("rs_bound_sub((unsigned long long)(width), 1ull) <= 0")
    );
    let doubled = launch_fact(rust, "doubled").expect("a fact decided at launch");
    assert!(
        cond_cuda(&doubled.cond).contains("out_len"),
        "{:?}",
        doubled.cond
    );
    // Without the launch's parameters, nothing of them is known.
    assert_eq!(fact(rust, "at"), None);
}

#[test]
fn a_parameter_divisor_is_checked_at_launch() {
    let rust = r#"
fn k(n: usize, nz: usize, table: &[f32], out: &mut [u32]) {
    let rows = table.len() / n;
    let inner = nz - 1;
    for r in 0..rows {
        for z in 1..inner {
            out[r * n + z] = 0;
        }
    }
}
"#;
    // `table.len() / n` is the quotient when `n >= 1`, which the launch checks.
    let rows = launch_fact(rust, "rows").expect("a quotient decided at launch");
    let cond = cond_cuda(&rows.cond);
    assert!(cond.contains("1ull <= (unsigned long long)(n)"), "{cond}");
    // Elsewhere a parameter is bounded below by 0 alone: `nz - 1` stays 64-bit.
    assert_eq!(launch_fact(rust, "inner"), None);
    assert_eq!(fact(rust, "rows"), None);
}

/// A variable bound to a length (`let m = mean.len();`, as PolyBench's correlation ports name
/// a matrix's columns) divides as the length itself does: the launch checks it is not zero,
/// also before a condition such as `j < m` implies it.
#[test]
fn a_variable_bound_to_a_length_is_checked_at_launch_as_a_divisor() {
    let rust = r#"
fn k(mean: &[f32], data: &mut [f32]) {
    let m = mean.len();
    let rows = data.len() / m;
    let mut inner = m;
    inner -= 1;
    let wide = data.len() / inner;
    data[0] = (rows + wide) as f32;
}
"#;
    let rows = launch_fact(rust, "rows").expect("a quotient decided at launch");
    let cond = cond_cuda(&rows.cond);
    assert!(
        cond.contains("1ull <= (unsigned long long)(mean_len)"),
        "{cond}"
    );
    // A mutable variable is not the launch's value: its quotient stays unknown.
    assert_eq!(launch_fact(rust, "wide"), None);
    assert_eq!(fact(rust, "rows"), None);
}

#[test]
fn a_signed_value_is_bounded_only_where_it_cannot_be_negative() {
    let rust = r#"
fn k(width: usize, out: &mut [u32]) {
    let x = thread_idx().x as usize;
    let from_unsigned = x as i64;
    let shifted = from_unsigned - 2;
    if shifted >= 0 && shifted < width as i64 {
        let both = shifted as usize;
        out[both] = 0;
    }
    if shifted < width as i64 {
        let above_only = shifted as usize;
        out[above_only] = 0;
    }
    if shifted < 0 || shifted >= 5 {
        return;
    }
    let after_return = shifted as usize;
    let narrow = x as i32;
    if narrow - 5 < narrow {
        let above_it = narrow;
        out[1] = above_it as u32;
    }
    out[after_return] = narrow as u32;
}
"#;
    assert_eq!(bounds(rust, "from_unsigned"), Some((0, 1023)));
    assert_eq!(bounds(rust, "narrow"), Some((0, 1023)));
    // It may be negative: a shifted fact, which no unsigned use sees until a condition
    // bounds it both ways.
    let shifted = fact(rust, "shifted").expect("a shifted fact");
    assert_eq!((shifted.lo, shifted.hi), (Bound::Num(0), Bound::Num(1023)));
    assert_eq!(shifted.shift, Bound::Num(2));
    assert_eq!(fact(rust, "above_only"), None);
    assert_eq!(bounds(rust, "after_return"), Some((0, 4)));
    // Above a value that may be negative: nothing more than its own bound.
    assert_eq!(bounds(rust, "above_it"), Some((0, 1023)));
    let both = launch_fact(rust, "both").expect("a fact decided at launch");
    assert!(cond_cuda(&both.cond).contains("width"), "{:?}", both.cond);
}

/// The numeric `(lo, hi, shift)` of `name`: it lies in `[lo - shift, hi - shift]`.
fn shifted(rust: &str, name: &str) -> Option<(u128, u128, u128)> {
    let fact = fact(rust, name)?;
    assert!(fact.cond.is_empty(), "{name}: {:?}", fact.cond);
    match (fact.lo, fact.hi, fact.shift) {
        (Bound::Num(lo), Bound::Num(hi), Bound::Num(shift)) => Some((lo, hi, shift)),
        other => panic!("{name}: symbolic bounds {other:?}"),
    }
}

#[test]
fn signed_sums_and_differences_may_go_below_zero_as_far_as_an_int_goes() {
    let rust = r#"
fn k(width: usize, out: &mut [i64]) {
    let x = thread_idx().x as usize;
    let offset = x as i64 - 3;
    let moved = offset + 5;
    let col = x as isize - 1;
    let narrow = x as i32 - 7;
    let again = offset - 4;
    let cancelled = offset - offset;
    let too_far = offset - (x as i64) * 4_000_000;
    let as_unsigned = offset as usize;
    let product = offset * 2;
    let small = x as i16 - 1;
    let mut written = x as i64 - 1;
    written += 1;
    let c = width as i64 - 1 - 2;
    out[0] = moved + col as i64 + narrow as i64 + again + cancelled + too_far + product;
    out[1] = (as_unsigned + small as usize) as i64 + written + c;
}
"#;
    assert_eq!(shifted(rust, "offset"), Some((0, 1023, 3)));
    // x - 3 + 5, in [2, 1025]: the shift stays, the bounds move.
    assert_eq!(shifted(rust, "moved"), Some((5, 1028, 3)));
    assert_eq!(shifted(rust, "col"), Some((0, 1023, 1)));
    assert_eq!(shifted(rust, "narrow"), Some((0, 1023, 7)));
    assert_eq!(shifted(rust, "again"), Some((0, 1023, 7)));
    // A shifted subtrahend, a shift past `i32::MAX`, an unsigned use, a product, a type
    // narrower than `int` and a mutable variable: nothing.
    assert_eq!(fact(rust, "cancelled"), None);
    assert_eq!(fact(rust, "too_far"), None);
    assert_eq!(fact(rust, "as_unsigned"), None);
    assert_eq!(fact(rust, "product"), None);
    assert_eq!(fact(rust, "small"), None);
    assert_eq!(fact(rust, "written"), None);
    assert_eq!(fact(rust, "c"), None);
}

#[test]
fn mutable_variables_keep_a_bound_their_writes_respect() {
    let rust = r#"
fn k(n: usize, out: &mut [u32]) {
    let tile = shared_array::<f32, 1024>();
    let tid = thread_idx().x as usize;
    let mut stride = block_dim().x as usize / 2;
    while stride > 0 {
        if tid < stride {
            tile[tid] += tile[tid + stride];
        }
        sync_threads();
        stride >>= 1;
    }
    let mut width = 1;
    while width < block_dim().x as usize {
        width *= 2;
    }
    let mut grows = 1;
    let mut halves = 1024;
    while halves > 0 {
        grows *= 2;
        halves >>= 1;
    }
    let mut sum = 0;
    for j in 0..n {
        sum += j;
    }
    let mut clamped = tid;
    clamped = clamped.min(7);
    out[0] = (stride + width + grows + halves + sum + clamped) as u32;
}
"#;
    assert_eq!(bounds(rust, "stride"), Some((0, 512)));
    // Below the loop's bound until doubled: at most twice it.
    assert_eq!(bounds(rust, "width"), Some((1, 2046)));
    assert_eq!(bounds(rust, "halves"), Some((0, 1024)));
    assert_eq!(bounds(rust, "clamped"), Some((0, 1023)));
    // Doubled while another variable halves from 1024: 11 trips (see `trips`); never below
    // its first value.
    assert_eq!(bounds(rust, "grows"), Some((1, 2048)));
    // Summed without end: no bound.
    assert_eq!(bounds(rust, "sum"), None);
}

#[test]
fn closures_called_in_place_take_their_arguments_facts() {
    let rust = r#"
fn k(image: &[u8], out: &mut [u32]) {
    let tx = thread_idx().x as usize;
    let ty = thread_idx().y as usize;
    let at = |x: usize, y: usize| {
        let offset = y * 64 + x;
        image[offset] as u32
    };
    let passed = |x: usize| {
        let scaled = x * 3;
        scaled as u32
    };
    out[0] = at(tx, ty) + at(tx + 1, 0);
    out[1] = apply(passed, tx);
}

fn apply<F: Fn(usize) -> u32>(f: F, x: usize) -> u32 {
    f(x)
}
"#;
    assert_eq!(bounds(rust, "offset"), Some((0, 1023 * 64 + 1024)));
    // Passed on, a closure may be called with anything.
    assert_eq!(bounds(rust, "scaled"), None);
}

#[test]
fn a_variable_doubled_while_another_halves_is_bounded_by_the_trips() {
    let rust = r#"
fn k(out: &mut [u32]) {
    let n = 2 * block_dim().x as usize;
    let t = thread_idx().x as usize;
    let mut offset = 1;
    let mut d = n >> 1;
    while d > 0 {
        if t < d {
            out[offset * (2 * t + 1) - 1] = 0;
        }
        offset *= 2;
        d >>= 1;
    }
    let mut e = 1;
    while e < n {
        offset >>= 1;
        e *= 2;
    }
    let mut unbounded = 1;
    let mut f = n;
    while f > 0 {
        unbounded *= 2;
        if t > 3 {
            f >>= 1;
        }
    }
    let mut nested = 1;
    for _ in 0..4 {
        let mut g = n;
        while g > 0 {
            nested *= 2;
            g >>= 1;
        }
    }
    out[0] = (offset + unbounded + nested) as u32;
}
"#;
    // `d` starts at most 1024 (11 bits): 11 doublings of 1.
    assert_eq!(bounds(rust, "offset"), Some((0, 2048)));
    // Halved only in a branch, so the trips are not bounded.
    assert_eq!(fact(rust, "unbounded"), None);
    // Its loop runs once for each trip of another.
    assert_eq!(fact(rust, "nested"), None);
}

#[test]
fn a_fit_decided_at_launch_never_narrows_a_value_past_i32_max() {
    // `x + i` is below 3.07e9, past `int`; `/ d` adds a condition decided at launch (`d >=
    // 1`), whose `int` alternative would wrap `x`.
    let rust = r#"
fn k(d: usize, out: &mut [u32]) {
    let x = thread_idx().x as usize * 3_000_000;
    for i in 0..4 {
        let y = (x + i) / d;
        out[i] = y as u32;
    }
}
"#;
    let cuda = crate::cuda_source_of(rust).unwrap_or_else(|e| panic!("{e}"));
    assert!(cuda.contains("unsigned int x = "), "{cuda}");
    assert!(cuda.contains("unsigned long long y = "), "{cuda}");
}

#[test]
fn negated_bounds_signed_loops_and_clamps_stay_within_an_int() {
    let rust = r#"
fn k(width: usize, out: &mut [f32]) {
    let x = thread_idx().x as usize;
    let low = -(x as i64);
    let mut total = 0.0f32;
    for d in -3..=3i64 {
        let shifted = x as i64 + d;
        let clamped = shifted.max(0);
        let both = shifted.max(low);
        total += (clamped + both) as f32;
    }
    out[0] = total;
}
"#;
    // -x for x in [0, 1023]: (1023 - x) - 1023.
    assert_eq!(shifted(rust, "low"), Some((0, 1023, 1023)));
    // -3..=3, and one past, where the CUDA counter steps.
    assert_eq!(shifted(rust, "d"), Some((0, 7, 3)));
    assert_eq!(shifted(rust, "shifted"), Some((0, 1030, 3)));
    // The larger of it and 0 is not negative; of two values that may be, nothing.
    assert_eq!(shifted(rust, "clamped"), Some((0, 1030, 0)));
    assert_eq!(fact(rust, "both"), None);
}

#[test]
fn a_signed_parameter_is_bounded_where_the_launch_finds_it_not_negative() {
    let rust = r#"
fn k(radius: isize, out: &mut [f32]) {
    for d in -radius..=radius {
        out[0] += d as f32;
    }
}
"#;
    let (program, types) = crate::checked_program_of(rust).unwrap_or_else(|e| panic!("{e}"));
    let emitted = crate::emit::cuda::emit(&program, &types);
    let atoms: Vec<String> = emitted
        .launch_fit
        .iter()
        .map(|(a, b)| format!("{} <= {}", a.cuda(), b.cuda()))
        .collect();
    // Negative, the radius is past `i64::MAX` as an unsigned number, and the launch says no.
    assert!(
        atoms.contains(&"(unsigned long long)(radius) <= 9223372036854775807ull".to_string()),
        "{atoms:?}"
    );
    assert!(
        emitted.source.contains("index_t d = (-((index_t)radius))"),
        "{}",
        emitted.source
    );
}

#[test]
fn rem_euclid_by_a_positive_divisor_is_below_it() {
    let rust = r#"
fn k(out: &mut [u32]) {
    let x = thread_idx().x as usize;
    let wrapped = (x as i64 - 3).rem_euclid(7);
    let by_zero_maybe = (x as i64 - 3).rem_euclid(x as i64);
    out[0] = (wrapped + by_zero_maybe) as u32;
}
"#;
    assert_eq!(bounds(rust, "wrapped"), Some((0, 6)));
    // A divisor that may be 0 bounds nothing.
    assert_eq!(fact(rust, "by_zero_maybe"), None);
}

#[test]
fn a_value_without_a_fact_clamped_by_min_is_bounded_by_the_other_operand() {
    let rust = r#"
fn k(src_w: usize, src_h: usize, dst_w: usize, src: &[f32], out: &mut [f32]) {
    let x = global_idx().x;
    if x < dst_w {
        let sx = x as f32 * 1.5;
        let x0 = (sx as usize).min(src_w - 1);
        let y0 = (sx as usize).min(src_h - 1);
        let at = y0 * src_w + x0;
        let unknown = (sx as usize).min(src[0] as usize);
        out[x] = src[at] + unknown as f32;
    }
}
"#;
    let x0 = launch_fact(rust, "x0").expect("a fact decided at launch");
    assert_eq!(x0.lo, Bound::Num(0));
    assert!(cond_cuda(&x0.cond).contains("src_w"), "{:?}", x0.cond);
    let at = launch_fact(rust, "at").expect("a fact decided at launch");
    assert!(cond_cuda(&at.cond).contains("src_h"), "{:?}", at.cond);
    // Neither operand bounded: nothing is known.
    assert_eq!(launch_fact(rust, "unknown"), None);
}

#[test]
fn a_grid_stride_index_is_bounded_by_its_guard_and_the_launch() {
    let rust = r#"
fn k(points: usize, out: &mut [f32]) {
    let mut i = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    while i < points {
        let mut bits = i as u32;
        let mut k = 0usize;
        while bits != 0 {
            bits >>= 1;
            k += 1;
        }
        out[i] = k as f32;
        i += grid_size().x;
    }
}
"#;
    // `i` starts below the grid's threads and steps by them while below `points`.
    let i = launch_fact(rust, "i").expect("a fact decided at launch");
    assert!(i.hi.at_run_time() && !i.cond.is_empty(), "{i:?}");
    // `bits` has at most 32 set bits to shift out, so `k` counts at most 32.
    let k = launch_fact(rust, "k").expect("a counted fact");
    assert_eq!(k.hi_num(), Some(32), "{k:?}");
    assert!(k.cond.is_empty(), "{k:?}");
}

#[test]
fn a_binary_search_keeps_its_ends_within_the_table() {
    let search = |len: &str| {
        format!(
            r#"
fn k<const N: usize>(table: &[f32], x: f32, out: &mut [u32]) {{
    let (mut lo, mut hi) = (0, {len});
    while hi > lo + 1 {{
        let mid = (lo + hi) / 2;
        if x >= table[mid] {{
            hi = mid;
        }} else {{
            lo = mid;
        }}
    }}
    let mut creeping = 0;
    let mut steps = 0;
    while steps < 10 {{
        creeping = (creeping + {len}) / 2 + 1;
        steps += 1;
    }}
    out[0] = (lo + hi + creeping + steps) as u32;
}}
"#
        )
    };
    // `lo = mid` creeps 10, 15, 17, 18 towards `hi`'s 20, and stops at it.
    let numbers = search("20");
    assert_eq!(bounds(&numbers, "lo"), Some((0, 20)));
    assert_eq!(bounds(&numbers, "hi"), Some((0, 20)));
    // `(x + 20) / 2 + 1` reaches 21, past every other variable's bound: no threshold holds it.
    assert_eq!(fact(&numbers, "creeping"), None);
    // Where the table's length is a constant only C++ knows, the same in its terms.
    let symbolic = search("N");
    for name in ["lo", "hi"] {
        let fact = fact(&symbolic, name).unwrap_or_else(|| panic!("{name} has no fact"));
        assert_eq!(fact.hi, Bound::Sym("N".into(), "N".into()), "{name}");
    }
}
