use gpu_dsl::prelude::*;

#[kernel]
fn scale(a: f32, x: &mut [f32]) {
    let i = global_idx().x;
    if i < x.len() {
        x[i] = a * x[i];
    }
}

#[allow(dead_code)]
fn run(stream: &Stream, x: &mut DeviceBuffer<f64>) -> gpu_dsl::Result<()> {
    scale::launch(stream, LaunchConfig::for_len(x.len(), 256), 2.0, x)
}

fn main() {}
