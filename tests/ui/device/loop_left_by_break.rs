use gpu_dsl::prelude::*;

// A `loop` that a `break` leaves falls through to the end without a value; one left only by
// `return` (see `co_rank` in the fourteenth set of ports) does not.
#[device]
fn first_above(x: &[f32], limit: f32) -> usize {
    let mut i = 0;
    loop {
        if i == x.len() {
            break;
        }
        if x[i] > limit {
            return i;
        }
        i += 1;
    }
}

fn main() {}
