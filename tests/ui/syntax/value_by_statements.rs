use gpu_dsl::prelude::*;

#[kernel]
fn break_value_from_while(x: &mut [u32]) {
    let mut i = 0u32;
    while i < 4 {
        break 7u32;
    }
    x[0] = i;
}

#[kernel]
fn block_without_value(x: &mut [f32]) {
    let y = {
        let t = x[0] * 2.0;
    };
    x[1] = 1.0;
}

#[kernel]
fn if_value_without_else(x: &mut [u32], c: bool) {
    let y = if c {
        let t = 3u32;
        t
    };
    x[0] = y;
}

#[kernel]
fn slice_by_statements(x: &mut [f32], c: bool) {
    let row = if c {
        let start = 1usize;
        &x[start..]
    } else {
        &x[2..]
    };
    x[0] = row[0];
}

fn main() {}
