use gpu_dsl::prelude::*;

#[kernel]
fn binary(n: u32) {
    println!("{:b}", n);
}

#[kernel]
fn centered(n: u32) {
    println!("[{:^8}]", n);
}

#[kernel]
fn fill(n: u32) {
    println!("[{:*>8}]", n);
}

#[kernel]
fn from_argument(n: u32, w: usize) {
    println!("[{:1$}]", n, w);
}

#[kernel]
fn generic_width<T: Integer>(n: T) {
    println!("{}", n);
}

#[kernel]
fn unknown_type(n: u32) {
    println!("{:p}", n);
}

fn main() {}
