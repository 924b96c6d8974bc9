use gpu_dsl::prelude::*;

/// Unknown to the macro, so no row length.
const WIDTH: usize = 3;

#[kernel]
fn k(
    #[constant] flags: &[[bool; 2]; 4],
    #[constant] rows: &[[i32; WIDTH]; 4],
    #[constant] deep: &[[[f32; 2]; 2]; 4],
    x: &mut [f32],
) {
    x[0] = 1.0;
}

fn main() {}
