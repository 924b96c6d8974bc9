//! Snapshots of the CUDA emitted for representative kernels, so a codegen change shows in review.

use crate::cuda_source_of;

fn cuda(rust: &str) -> String {
    cuda_source_of(rust).unwrap_or_else(|errors| panic!("kernel rejected: {errors}"))
}

#[test]
fn saxpy() {
    insta::assert_snapshot!(cuda(
        r#"
fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = global_idx().x;
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}
"#
    ));
}

#[test]
fn loops_and_shadowing() {
    insta::assert_snapshot!(cuda(
        r#"
fn row_sums(m: &[f32], cols: usize, out: &mut [f32]) {
    let row = global_idx().x;
    if row >= out.len() {
        return;
    }
    let mut sum = 0.0;
    for c in 0..cols {
        sum += m[row * cols + c];
    }
    let mut k = 0u32;
    while k < 4 {
        k += 1;
        if k == 2 {
            continue;
        }
    }
    loop {
        break;
    }
    let sum = sum / cols as f32;
    out[row] = sum;
}
"#
    ));
}

#[test]
fn grid_stride_loop() {
    insta::assert_snapshot!(cuda(
        r#"
fn scale(a: f32, x: &mut [f32]) {
    for i in (global_idx().x..x.len()).step_by(grid_size().x) {
        x[i] *= a;
    }
}
"#
    ));
}

#[test]
fn rust_integer_semantics() {
    insta::assert_snapshot!(cuda(
        r#"
fn ints(a: i32, b: i64, f: f32, out: &mut [i64]) {
    let wrapped = a * 3 + 7 - a;
    let shifted = a << 35;
    let neg = -b;
    let sat = f as i32;
    let big = (f as f64) as u64;
    let m = a.abs().max(2).min(i32::MAX);
    out[0] = wrapped as i64 + shifted as i64 + neg + sat as i64 + big as i64 + m as i64;
    out[1] = (a % 5) as i64 / 2;
}
"#
    ));
}

#[test]
fn floats_methods_and_select() {
    insta::assert_snapshot!(cuda(
        r#"
fn activations(x: &[f64], y: &mut [f32]) {
    let i = global_idx().x;
    if i < x.len() {
        let v = x[i] as f32;
        let relu = if v > 0.0 { v } else { 0.0 };
        let sig = 1.0 / (1.0 + (-v).exp());
        let t = v.tanh().mul_add(2.0, f32::EPSILON);
        let r = f64::sqrt(x[i].abs()) as f32 + f32::consts::PI;
        let inf = if v.is_nan() { f32::INFINITY } else { v.powi(3) % 2.5 };
        y[i] = relu + sig + t + r + inf.clamp(-1.0, 1.0);
    } else if i == 0 {
        y[0] = 0.0;
    } else {
        return;
    }
}
"#
    ));
}

#[test]
fn index_intrinsics_2d() {
    insta::assert_snapshot!(cuda(
        r#"
fn transpose(width: u32, height: u32, input: &[f32], output: &mut [f32]) {
    let x = block_idx().x * block_dim().x + thread_idx().x;
    let y = global_idx().y as u32;
    if x < width && y < height {
        output[(x * height + y) as usize] = input[(y * width + x) as usize];
    }
}
"#
    ));
}

#[test]
fn names_that_collide_in_cpp() {
    insta::assert_snapshot!(cuda(
        r#"
fn k(float: f32, x_len: u64, x: &mut [f32]) {
    let new = float;
    let rs_min = new;
    x[0] = rs_min + x_len as f32;
}
"#
    ));
}

/// Type inference follows rustc: an unsuffixed literal takes the type it meets, else i32/f64.
#[test]
fn literal_inference() {
    let source = cuda(
        r#"
fn k(a: u64, x: &mut [f64]) {
    let n = 3;
    let m = n + a;
    let d = 2.5;
    let free = 7;
    x[0] = d * m as f64 + free as f64;
}
"#,
    );
    assert!(source.contains("unsigned long long n = 3ull;"), "{source}");
    assert!(source.contains("double d = 2.5;"), "{source}");
    assert!(source.contains("int free = 7;"), "{source}");
}

/// `#[unroll]` puts `#pragma unroll` before the loop, also with `step_by`.
#[test]
fn unrolled_loops() {
    insta::assert_snapshot!(cuda(
        r#"
fn dot8(x: &[f32], out: &mut [f32]) {
    let mut acc = [0.0f32; 8];
    #[unroll]
    for i in 0..8 {
        acc[i] = x[i] * 2.0;
    }
    let mut sum = 0.0f32;
    #[unroll]
    for i in (0..8).step_by(2) {
        sum += acc[i] + acc[i + 1];
    }
    out[0] = sum;
}
"#
    ));
}

/// `#[kernel(launch_bounds(..))]` becomes `__launch_bounds__` on the entry point.
#[test]
fn launch_bounds() {
    insta::assert_snapshot!(cuda(
        r#"
#[kernel(launch_bounds(256, 2))]
fn fill(x: &mut [f32]) {
    x[global_idx().x] = 1.0;
}
"#
    ));
    let one = cuda(
        r#"
#[kernel(launch_bounds(128))]
fn fill(x: &mut [f32]) {
    x[global_idx().x] = 1.0;
}
"#,
    );
    assert!(
        one.contains("__global__ void __launch_bounds__(128) fill("),
        "{one}"
    );
}

/// Malformed kernel arguments are errors that show the accepted forms.
#[test]
fn kernel_arguments_are_checked() {
    for args in [
        "launch_bounds",
        "launch_bounds(0)",
        "launch_bounds(2048)",
        "launch_bounds(256, 2, 1)",
        "bounds(256)",
    ] {
        let errors = cuda_source_of(&format!(
            "#[kernel({args})]\nfn k(x: &mut [f32]) {{ x[0] = 1.0; }}"
        ))
        .expect_err(args);
        assert_eq!(
            errors.matches("compile_error").count(),
            1,
            "{args}: {errors}"
        );
    }
}

/// Any other attribute on a loop is an error, reported with the rest.
#[test]
fn loops_take_only_unroll() {
    let errors = cuda_source_of(
        r#"
fn k(x: &mut [f32]) {
    #[unroll(0)]
    for i in 0..4 {
        x[i] = 0.0;
    }
    #[inline]
    for i in 0..4 {
        x[i] = 1.0;
    }
}
"#,
    )
    .expect_err("two bad loop attributes");
    assert_eq!(errors.matches("compile_error").count(), 2, "{errors}");
    assert!(errors.contains("`#[unroll]`"), "{errors}");
    assert!(errors.contains("positive count"), "{errors}");
}

/// `#[unroll(N)]` asks for a factor; `a..=b` runs through `b` without stepping past it, so
/// it ends at the type's maximum, also with `step_by`.
#[test]
fn counted_unroll_and_inclusive_ranges() {
    insta::assert_snapshot!(cuda(
        r#"
fn k(x: &mut [u32]) {
    #[unroll(4)]
    for i in 0..=7u32 {
        x[i as usize] = i;
    }
    for i in (4_294_967_000u32..=u32::MAX).step_by(3) {
        x[0] += i;
    }
    let _ = x[1];
}
"#
    ));
}

/// Lengths from const parameters' arithmetic stay C++ expressions of the template
/// parameters; those the macro can fold are numbers, as before.
#[test]
fn const_generic_lengths() {
    insta::assert_snapshot!(cuda(
        r#"
fn k<const BLOCK: usize, const N: usize>(x: &mut [f32]) {
    const TWO: usize = 2;
    let tile = shared_array::<f32, { BLOCK * BLOCK }>();
    let pad = [0.0f32; { N + 1 }];
    let fixed = [1.0f32; { TWO * 3 }];
    let t = thread_idx().x as usize;
    tile[t] = pad[t % (N + 1)] + fixed[t % 6];
    x[t] = tile[t];
}
"#
    ));
}

#[test]
fn rejections_are_reported_together() {
    let errors = cuda_source_of(
        r#"
fn k(x: &mut [f32]) {
    let f = |v: f32| v;
    let r = 0..4;
    let f = x?;
    let t = (1, 2);
    let s = "text";
}
"#,
    )
    .expect_err("three unsupported constructs");
    assert_eq!(errors.matches("compile_error").count(), 3, "{errors}");
}

/// A device call nested in another's arguments is parsed once, so each recursive call is
/// reported once.
#[test]
fn nested_device_calls_are_reported_once() {
    let errors = cuda_source_of(
        r#"
fn k(out: &mut [u32]) {
    out[0] = f(1);
}
fn f(n: u32) -> u32 {
    f(f(f(n)))
}
"#,
    )
    .expect_err("three recursive calls");
    assert_eq!(errors.matches("compile_error").count(), 3, "{errors}");
}

/// A `const` used only as a length is not emitted as a C++ variable (NVRTC would warn that it
/// is unused), and an unread `let` with a pure value neither.
#[test]
fn constants_only_in_lengths_are_not_variables() {
    let source = cuda(
        r#"
fn k(out: &mut [f32]) {
    const WIDTH: usize = 8;
    let unused = 3;
    let tile = shared_array::<f32, WIDTH>();
    tile[0] = 1.0;
    out[0] = tile[0];
}
"#,
    );
    assert!(!source.contains("WIDTH"), "{source}");
    assert!(!source.contains("unused"), "{source}");
    assert!(source.contains("__shared__ float tile[8ull];"), "{source}");
}

/// A vector access's bounds check adds to the index: an index whose operator binds more
/// loosely than `+` (a select, a shift, a bit operation) keeps its parentheses.
#[test]
fn vector_index_keeps_loose_operators_together() {
    let source = cuda(
        r#"
fn pick(flag: bool, i: usize, x: &[f32], out: &mut [f32]) {
    let v = x.load4(if flag { i } else { 8 });
    let w = x.load4(i << 2);
    let z = x.load4(i * 4 + 8);
    out.store4(i & 12, v);
    out[0] = w[1] + z[2];
}
"#,
    );
    assert!(
        source.contains("rs_idx((flag ? i : 8ull) + 3ull"),
        "{source}"
    );
    assert!(
        source.contains("rs_idx((i << ((unsigned int)(2) & 63u)) + 3ull"),
        "{source}"
    );
    assert!(source.contains("rs_idx((i & 12ull) + 3ull"), "{source}");
    assert!(
        source.contains("rs_idx((i * 4ull) + 8ull + 3ull"),
        "{source}"
    );
}

#[test]
fn user_types() {
    insta::assert_snapshot!(cuda(
        r#"
fn demo(bodies: &mut [Body], op: Op, out: &mut [f32]) {
    let i = global_idx().x;
    if i < bodies.len() {
        let mut b = bodies[i];
        b.shift(1.0);
        bodies[i] = b;
        bodies[i].mass = 2.0 * bodies[i].mass;
        let origin = Body::new([0.0; 3], Body::UNIT);
        let c = Complex { re: b.pos[0], im: b.mass } * Complex { re: 2.0, im: 0.0 };
        let mut z = -c;
        z += c;
        let v = match op {
            Op::Add => b.dist2(&origin) + z.re,
            Op::Mul => b.dist2(&origin) * z.im,
        };
        let pos = b.pos;
        let mut sum = 0.0f32;
        bump(&mut sum, pos);
        if b == origin {
            sum += 1.0;
        }
        out[i] = v + sum;
    }
}

fn bump(total: &mut f32, v: [f32; 3]) {
    *total += v[0] + v[1] + v[2];
}

#[derive(Clone, Copy, PartialEq)]
#[repr(C)]
struct Body {
    pos: [f32; 3],
    mass: f32,
}

impl Body {
    const UNIT: f32 = 1.0;
    fn new(pos: [f32; 3], mass: f32) -> Body {
        Body { pos, mass }
    }
    fn dist2(&self, other: &Body) -> f32 {
        let d = [other.pos[0] - self.pos[0], other.pos[1] - self.pos[1], other.pos[2] - self.pos[2]];
        d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
    }
    fn shift(&mut self, dx: f32) {
        self.pos[0] += dx;
    }
}

#[derive(Clone, Copy)]
#[repr(C)]
struct Complex {
    re: f32,
    im: f32,
}

impl core::ops::Mul for Complex {
    type Output = Complex;
    fn mul(self, o: Complex) -> Complex {
        Complex { re: self.re * o.re - self.im * o.im, im: self.re * o.im + self.im * o.re }
    }
}

impl core::ops::Neg for Complex {
    type Output = Complex;
    fn neg(self) -> Complex {
        Complex { re: -self.re, im: -self.im }
    }
}

impl core::ops::AddAssign for Complex {
    fn add_assign(&mut self, o: Complex) {
        self.re += o.re;
        self.im += o.im;
    }
}

#[derive(Clone, Copy)]
#[repr(u32)]
enum Op {
    Add,
    Mul,
}
"#
    ));
}

#[test]
fn assertions_and_printing() {
    insta::assert_snapshot!(cuda(
        r#"
fn checks(x: &[f32], n: u32, out: &mut [f32]) {
    let i = global_idx().x;
    assert!(i < x.len(), "thread {} of {}", i, n);
    assert_eq!(n % 2, 0u32);
    debug_assert_ne!(x[i], 1.0, "x[{}] is one", i);
    if x[i] < 0.0 {
        panic!("negative {:e}", x[i]);
    }
    out[helper(i)] = x[i];
    println!("{:>8.3} {} {:#x} {}%", x[i], i, n, true);
}
fn helper(i: usize) -> usize {
    assert!(i % 2 == 0 || !(i > 3));
    i
}
"#
    ));
}

#[test]
fn tuples() {
    insta::assert_snapshot!(cuda(
        r#"
fn spread(x: &[f32], out: &mut [f32]) {
    let i = global_idx().x;
    if i + 1 < x.len() {
        let (lo, hi) = min_max(x[i], x[i + 1]);
        let pair = (lo, hi * 2.0);
        let (_, mut top) = pair;
        top += pair.0;
        out[i] = top;
    }
}

fn min_max(a: f32, b: f32) -> (f32, f32) {
    if a < b { (a, b) } else { (b, a) }
}
"#
    ));
}

#[test]
fn sub_slices() {
    insta::assert_snapshot!(cuda(
        r#"
fn row_sums(m: &[f32], n: usize, out: &mut [f32]) {
    let i = global_idx().x;
    if i < out.len() {
        let row = &m[i * n..(i + 1) * n];
        let head = &row[..2];
        out[i] = row_sum(row) + row_sum(&m[i * n..=i * n]) + head[1] + row.len() as f32;
        let tail = &mut out[i..];
        tail[0] += 1.0;
    }
}

fn row_sum(row: &[f32]) -> f32 {
    let mut s = 0.0;
    for j in 0..row.len() {
        s += row[j];
    }
    s
}
"#
    ));
}

#[test]
fn format_strings_are_checked() {
    for (kernel, message) in [
        (
            r#"fn k(a: u32) { println!("{} {}", a); }"#,
            "placeholder for argument 2 but only 1 argument is given",
        ),
        (
            r#"fn k(a: u32) { println!("{}", a, a); }"#,
            "argument 2 is never used",
        ),
        (
            r#"fn k(a: u32) { println!("{b}"); }"#,
            "cannot find value `b`",
        ),
        (
            r#"fn k(a: u32) { println!("{a.b}"); }"#,
            "names no argument",
        ),
        (
            r#"fn k(a: u32) { println!("{}", x = a); }"#,
            "named arguments",
        ),
        (
            r#"fn k(a: f32) { println!("{:x}", a); }"#,
            "`{:x}` cannot format a `f32`",
        ),
        (
            r#"fn k(a: u32) { println!("{:b}", a); }"#,
            "cannot print binary",
        ),
        (r#"fn k(a: u32) { println!("{:^5}", a); }"#, "cannot center"),
        (
            r#"fn k(a: u32) { println!("{:*>5}", a); }"#,
            "remove the fill character `*`",
        ),
        (
            r#"fn k(a: u32) { println!("{:1$}", a); }"#,
            "taken from arguments",
        ),
        (r#"fn k(a: u32) { println!("{", a); }"#, "unmatched `{`"),
        (
            r#"fn k(a: u32) { let s = "x"; println!(s); }"#,
            "must be a string literal",
        ),
        (
            r#"fn k(a: &[u32]) { println!("{}", a); }"#,
            "numbers and `bool`s only",
        ),
        (r#"fn k(a: u32) { assert!(a); }"#, "mismatched types"),
        (
            r#"fn k(a: u32, b: i32) { assert_eq!(a, b); }"#,
            "mismatched types",
        ),
        (
            r#"fn k(a: u32) { assert_eq!(a); }"#,
            "takes two values to compare",
        ),
        (
            r#"fn k(a: u32) { vec!(a); }"#,
            "macros such as `vec!` are not supported",
        ),
        (
            r#"fn k(a: u32) { assert!(a > 0, "{}{}{}{}{}{}{}{}{}", a, a, a, a, a, a, a, a, a); }"#,
            "at most 8 values",
        ),
    ] {
        let errors = cuda_source_of(kernel).expect_err(kernel);
        assert!(errors.contains(message), "{kernel}: {errors}");
    }
}

/// The tiled matrix multiply as Rust users write it: the thread and block indices, the shared
/// memory indices and the inner loop's counter compute in 32 bits (`TILE`, a module constant,
/// is known only to the C++ compiler, which picks the width from its value); everything that
/// involves the unknown `n` stays 64-bit.
#[test]
fn narrowed_tiled_matmul() {
    insta::assert_snapshot!(cuda(
        r#"
fn matmul_tiled(n: usize, a: &[f32], b: &[f32], c: &mut [f32]) {
    let tile_a = shared_array::<f32, { TILE * TILE }>();
    let tile_b = shared_array::<f32, { TILE * TILE }>();
    let tx = thread_idx().x as usize;
    let ty = thread_idx().y as usize;
    let row = block_idx().y as usize * TILE + ty;
    let col = block_idx().x as usize * TILE + tx;
    let mut sum = 0.0f32;
    for t in 0..n / TILE {
        tile_a[ty * TILE + tx] = a[row * n + t * TILE + tx];
        tile_b[ty * TILE + tx] = b[(t * TILE + ty) * n + col];
        sync_threads();
        for k in 0..TILE {
            sum += tile_a[ty * TILE + k] * tile_b[k * TILE + tx];
        }
        sync_threads();
    }
    c[row * n + col] = sum;
}
"#
    )
    .replace('\u{1}', "$"));
}

/// What stays 64-bit: a subtraction that may wrap (`tx - 1`), a product past 32 bits
/// (`block_idx().x * 4096`), parameters, mutable variables and loops bounded by them; and what
/// is narrowed: a subtraction that cannot wrap, a division by a non-zero constant, shifts,
/// `global_idx().y` and `lane_id()`.
#[test]
fn narrowed_and_wide_index_arithmetic() {
    insta::assert_snapshot!(cuda(
        r#"
fn k(m: usize, x: &mut [u32]) {
    const W: usize = 64;
    let tile = shared_array::<u32, 256>();
    let tx = thread_idx().x as usize;
    let wraps = tx - 1;
    let safe = (tx + W) - 1;
    let far = block_idx().x as usize * 4096 + tx;
    let y = global_idx().y;
    let lane = lane_id() as usize;
    let packed = (tx >> 5) * 33 + (lane & 31) + (y << 2) % 7 + safe / W + tx.min(lane);
    let mut count = 0usize;
    for i in 0..m {
        count += i;
    }
    for j in (0..W).step_by(32) {
        tile[(j + tx) % 256] = packed as u32;
    }
    x[far] = tile[wraps % 256] + (count + m) as u32;
}
"#
    ));
}

#[test]
fn grid_sync_in_a_device_function() {
    insta::assert_snapshot!(cuda(
        r#"
fn phases(a: &mut [f32], b: &mut [f32]) {
    let i = global_idx().x;
    if i < a.len() {
        a[i] = i as f32;
    }
    wait_for_all();
    if i < b.len() {
        b[i] = a[a.len() - 1 - i];
    }
}
fn wait_for_all() {
    grid_sync();
}
"#
    ));
}

/// The CPU twin of a barrier-free kernel with a device function: the per-thread twin, the
/// block twin's race-checker dispatch and generic loop, and the device function generic over
/// the thread view.
#[test]
fn saxpy_cpu_twin() {
    let (program, types) = crate::checked_program_of(
        r#"
fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = global_idx().x;
    if i < y.len() {
        y[i] = scaled(a, x, i) + y[i];
    }
}
fn scaled(a: f32, x: &[f32], i: usize) -> f32 {
    a * x[i]
}
"#,
    )
    .unwrap_or_else(|errors| panic!("kernel rejected: {errors}"));
    let twin = crate::emit::cpu::emit_twin(&program, &types, "rt");
    assert!(twin.block && !twin.needs_sync);
    insta::assert_snapshot!(twin.source);
}
