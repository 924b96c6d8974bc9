use gpu_dsl::prelude::*;

#[kernel]
fn k(counts: &[u32]) {
    counts.atomic_add(0, 1);
}

fn main() {}
