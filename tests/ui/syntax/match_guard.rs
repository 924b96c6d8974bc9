use gpu_dsl::prelude::*;

#[kernel]
fn nested_guarded_match(x: &mut [i32], n: i32) {
    x[0] = 1 + match n {
        v if v > 3 => v,
        _ => 2,
    };
}

#[kernel]
fn struct_pattern(x: &mut [i32], n: i32) {
    match n {
        v if v > 3 => x[0] = v,
        [a, b] => x[0] = 2,
        _ => x[0] = 3,
    }
}

fn main() {}
