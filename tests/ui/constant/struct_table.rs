use gpu_dsl::prelude::*;

#[device]
#[derive(Clone, Copy)]
#[repr(C)]
pub struct Sample {
    pub k: f32,
    pub phi: f32,
}

// Parboil's MRI-Q keeps its k-space samples in `__constant__` memory as an array of structs.
#[kernel]
fn samples_in_constant(#[constant] samples: &[Sample; 64], y: &mut [f32]) {
    y[0] = samples[0].k;
}

fn main() {}
