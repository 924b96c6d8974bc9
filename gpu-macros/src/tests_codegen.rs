//! Checks of the CUDA emitted for index arithmetic (where it computes in 32 bits, and what the
//! launch decides) and for math calls.

use crate::cuda_source_of;

fn cuda(rust: &str) -> String {
    cuda_source_of(rust).unwrap_or_else(|errors| panic!("kernel rejected: {errors}"))
}

/// A kernel whose 32-bit body depends on its parameters takes whether they fit as a hidden
/// last parameter, which its launcher computes with saturating `u64` arithmetic, and has that
/// body as an entry of its own; a kernel that gains nothing from it keeps one body and its
/// parameters.
#[test]
fn launch_decides_the_width_of_parameter_indices() {
    let expand = |rust: &str| {
        let tokens: proc_macro2::TokenStream = rust.parse().expect("Rust");
        crate::chain::expand_kernel(proc_macro2::TokenStream::new(), tokens, Vec::new()).to_string()
    };
    let split = expand(
        "fn scaled(stride: usize, out: &mut [u64]) { let i = global_idx().x; if i < out.len() { for k in 0..4 { out[i] += (i * stride + k) as u64; } } }",
    );
    assert!(split.contains("rs_launch_fits"), "{split}");
    assert!(split.contains("saturating_mul"), "{split}");
    assert!(split.contains("out . len () as u64"), "{split}");
    assert!(
        split.contains("KernelArg :: scalar (launch_fits as u32)"),
        "{split}"
    );
    // The 32-bit body is an entry of its own too, which launches that fit run.
    assert!(
        split.contains("__with_fits_entry (\"scaled_rs_fits\")"),
        "{split}"
    );
    assert!(split.contains("void scaled_rs_fits("), "{split}");
    // A sum, or one product per thread, is not worth a second body.
    let plain = expand(
        "fn shifted(offset: usize, out: &mut [u64]) { let i = global_idx().x; if i < out.len() { out[i] = (i + offset + i * offset) as u64; } }",
    );
    assert!(!plain.contains("rs_launch_fits"), "{plain}");
    assert!(!plain.contains("launch_fits"), "{plain}");
    // A grid-stride loop's index fits where the launch's threads and the length do: the
    // launcher reads the grid from the configuration.
    let strided = expand(
        "fn strided(n: usize, out: &mut [u32]) { let mut i = global_idx().x; while i < n { let mut k = 0; while k < 8 { out[i * 8 + k] = k as u32; k += 1; } i += grid_size().x; } }",
    );
    assert!(strided.contains("config . grid . x as u64"), "{strided}");
    assert!(strided.contains("config . block . x as u64"), "{strided}");
    assert!(strided.contains("void strided_rs_fits("), "{strided}");
    // In a generic kernel, whose one entry holds both bodies, the launch's grid is no bound.
    let generic = expand(
        "fn strided_by<const K: usize>(n: usize, out: &mut [u32]) { let mut i = global_idx().x; while i < n { let mut k = 0; while k < K { out[i * K + k] = k as u32; k += 1; } i += grid_size().x; } }",
    );
    assert!(!generic.contains("config . grid"), "{generic}");
}

/// A `step_by` loop by a constant over a bound only the launch knows steps as C's `j += 32`
/// in the body the launch picks when the bound plus the step fits in `int`; one by a step
/// only the launch knows keeps its count, which the compiler unrolls.
#[test]
fn step_by_a_constant_steps_where_the_launch_fits() {
    let by_const = cuda(
        "fn rows(cols: usize, x: &[f32], y: &mut [f32]) { let row = global_idx().x / 32; let lane = thread_idx().x as usize % 32; if row < x.len() / cols { for j in (lane..cols).step_by(32) { y[row * cols + j] = x[row * cols + j]; } } }",
    );
    assert!(by_const.contains("rs_step_by<(rs_fits)>("), "{by_const}");
    assert!(!by_const.contains("j_count"), "{by_const}");
    let by_threads = cuda(
        "fn rows(cols: usize, x: &[f32], y: &mut [f32]) { let row = block_idx().x as usize; let t = thread_idx().x as usize; let threads = block_dim().x as usize; if row < x.len() / cols { for j in (t..cols).step_by(threads) { y[row * cols + j] = x[row * cols + j]; } } }",
    );
    assert!(
        !by_threads.contains("rs_step_by<(rs_fits)>("),
        "{by_threads}"
    );
    assert!(by_threads.contains("j_count"), "{by_threads}");
}

/// In the `else` of `if t < BLOCK` (a module `const`), `t - BLOCK` cannot wrap: it narrows
/// where `BLOCK` fits, not never.
#[test]
fn else_of_a_constant_bound_narrows_the_difference() {
    let source = cuda(
        "fn k(out: &mut [f32]) { let tile = shared_array::<f32, 64>(); let t = thread_idx().x as usize; if t < BLOCK { tile[t] = 1.0; } else { let c = t - BLOCK; tile[c * 2] = 2.0; } sync_threads(); out[t] = tile[t % 64]; }",
    )
    // The constant's placeholder is delimited by control characters.
    .replace('\u{1}', "");
    // Before, the difference's alias required `BLOCK <= 0`.
    assert!(
        source.contains("(k0) <= (unsigned long long)(k0)"),
        "{source}"
    );
    let aliases = source.lines().filter(|line| line.contains("typedef"));
    assert!(
        aliases.clone().all(|line| !line.contains("<= 0ull")),
        "{source}"
    );
}

/// A call of a `#[device]` function has its returned value's fact, with the parameters known
/// by the arguments': `i + conflict_free(i)` narrows as `i + (i >> 5)` would.
#[test]
fn device_function_values_narrow() {
    let source = cuda(
        "fn k(out: &mut [f32]) { let tile = shared_array::<f32, 2112>(); let t = thread_idx().x as usize; let i = 2 * t + 1; tile[i + conflict_free(i)] = 1.0; sync_threads(); out[t] = tile[t]; }
         fn conflict_free(i: usize) -> usize { i >> 5 }",
    );
    let store = source
        .lines()
        .find(|line| line.contains("tile[") && line.contains("= 1.0f"))
        .expect("the store");
    // Before, the sum was 64-bit: `((unsigned long long)(unsigned int)i) + conflict_free(..)`.
    assert!(
        store.contains("[rs_idx(i + ((int)conflict_free("),
        "{source}"
    );
}

/// The work-efficient scan's tree: `offset` doubles in the up-sweep and halves in the
/// down-sweep, and in the up-sweep, which only the doubling reaches, it is at least 1, so
/// `offset * (2 * thid + 1) - 1` cannot wrap; `ai`, written again by the statement after
/// its `let`, holds that statement's value after it.
#[test]
fn scan_tree_offsets_narrow_in_the_up_sweep() {
    let source = cuda(
        "fn k(out: &mut [f32]) {
            let temp = shared_array::<f32, 2112>();
            let n = 2 * block_dim().x as usize;
            let thid = thread_idx().x as usize;
            let mut offset = 1;
            let mut d = n >> 1;
            while d > 0 {
                sync_threads();
                if thid < d {
                    let mut ai = offset * (2 * thid + 1) - 1;
                    ai += ai >> 5;
                    temp[ai] += 1.0;
                }
                offset *= 2;
                d >>= 1;
            }
            let mut d = 1;
            while d < n {
                offset >>= 1;
                sync_threads();
                if thid < d {
                    temp[offset * (2 * thid + 1)] += 1.0;
                }
                d *= 2;
            }
            out[thid] = temp[thid];
        }",
    );
    assert!(
        source.contains("int ai = (offset * ((2 * thid) + 1)) - 1;"),
        "{source}"
    );
    assert!(source.contains("ai = ai + (ai >> "), "{source}");
}

/// `sin_cos` is one `sincosf` (`sincos` for `f64`), of a plain value and of one computed
/// first alike.
#[test]
fn sin_cos_is_one_call() {
    let source = cuda(
        "fn k(x: &[f32], d: &[f64], out: &mut [f32]) { let i = global_idx().x; if i < out.len() { let (s, c) = (x[i] * 2.0).sin_cos(); let (t, u) = d[i].sin_cos(); out[i] = s + c + (t * u) as f32; } }",
    );
    assert_eq!(source.matches("rs_sin_cos(").count(), 4, "{source}");
    assert!(!source.contains("sinf("), "{source}");
    // The helper's own `sincosf` alone.
    assert_eq!(source.matches("cosf(").count(), 1, "{source}");
}

/// A chain of small-integer `+`, `-` and `*` computes in `unsigned int` and converts to its
/// type once; a float converts to a small integer in one PTX conversion.
#[test]
fn small_integer_chains_convert_once() {
    let source = cuda(
        r#"
fn k(a: &[i16], f: &[f32], out: &mut [i16]) {
    let i = global_idx().x;
    if i < out.len() {
        out[i] = a[i] + 2 * a[i] - a[i] * a[i] + f[i] as i16;
    }
}
"#,
    );
    let line = source
        .lines()
        .find(|line| line.contains("out[") && line.contains(" = "))
        .expect("the store");
    // One conversion of the chain's result (the others convert a literal and a float).
    assert_eq!(line.matches("(short)(").count(), 1, "{line}");
    assert!(!line.contains("rs_wrapping"), "{line}");
    assert!(source.contains("cvt.rzi.s16.f32"), "{source}");
}

/// A value that fits in `int` but whose computation passes `i32::MAX` on the way computes in
/// `unsigned int`: `int` only where no intermediate can overflow it.
#[test]
fn int_only_where_every_intermediate_fits() {
    let source = cuda(
        r#"
fn k(out: &mut [u64]) {
    let t = thread_idx().x as usize;
    let fits = (t * 4_000_000 + 4095) >> 12;
    let small = (t * 1000 + 7) >> 2;
    out[0] = (fits + small) as u64;
}
"#,
    );
    assert!(source.contains("unsigned int fits = "), "{source}");
    assert!(source.contains("int small = "), "{source}");
    assert!(!source.contains("unsigned int small"), "{source}");
}

/// `position` over a slice's own walk takes the loop's index where the element passes: no
/// 64-bit counter runs beside the loop. Filtered, the position counts the elements kept.
#[test]
fn position_over_a_slice_is_the_loop_index() {
    let whole = cuda(
        "fn first_at_least(cdf: &[f32], u: &[f32], out: &mut [u32]) { let i = global_idx().x; if i < u.len() { out[i] = cdf.iter().position(|&c| c >= u[i]).unwrap_or(cdf.len() - 1) as u32; } }",
    );
    assert!(whole.contains("gpu_acc1 = (unsigned long long)"), "{whole}");
    assert!(!whole.contains("gpu_acc1 = gpu_index1 + 1ull"), "{whole}");
    let filtered = cuda(
        "fn first_even_big(x: &[u32], out: &mut [u32]) { out[0] = x.iter().filter(|&&v| v % 2 == 0).position(|&v| v > 10).unwrap_or(99) as u32; }",
    );
    assert!(
        filtered.contains("gpu_acc1 = gpu_index1 + 1ull"),
        "{filtered}"
    );
}
