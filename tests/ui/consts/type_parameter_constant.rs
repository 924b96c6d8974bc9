use gpu_dsl::prelude::*;

#[kernel]
fn k<T: Integer>(x: &mut [T]) {
    x[0] = T::MAX;
}

fn main() {}
