use gpu_dsl::prelude::*;

#[device]
fn bits<T: Integer>(x: T) -> T {
    x >> 1
}

/// `T: Number` may be a float: it does not satisfy `Integer`.
#[kernel]
fn k<T: Number>(x: &[T], out: &mut [T]) {
    let i = global_idx().x;
    if i < x.len() {
        out[i] = bits(x[i]);
    }
}

fn main() {}
