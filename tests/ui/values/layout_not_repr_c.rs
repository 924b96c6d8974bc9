// Without #[repr(C)] Rust reorders the fields, and the layout no longer matches the C struct.
#[derive(Clone, Copy)]
struct Mixed {
    flag: bool,
    x: f64,
    last: bool,
}

gpu_dsl::runtime::__device_struct! {
    Mixed { flag: bool => __gpu_place_flag, x: f64 => __gpu_place_x, last: bool => __gpu_place_last }
    size 24, align 8, offsets [0, 8, 16]
}

fn main() {}
