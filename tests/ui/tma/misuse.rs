use gpu_dsl::prelude::*;
use gpu_dsl::runtime::TensorMap;

#[kernel]
fn mutable_map(a: &mut TensorMap<f32>, out: &mut [f32]) {}

#[device]
fn takes_map(a: &TensorMap<f32>) -> f32 {
    0.0
}

#[kernel]
fn slice_for_map(x: &[f32], out: &mut [f32]) {
    let smem = dynamic_shared::<f32>();
    let bars = shared_array::<u64, 1>();
    tma_load_2d(smem, 0, x, 0, 0, bars, 0);
}

#[kernel]
fn map_copied(a: &TensorMap<f32>, out: &mut [f32]) {
    let b = a;
}

#[kernel]
fn map_of_bools(a: &TensorMap<bool>, out: &mut [f32]) {}

fn main() {}
