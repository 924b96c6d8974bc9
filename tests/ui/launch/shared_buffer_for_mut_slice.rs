use gpu_dsl::prelude::*;

mod kernels {
    use gpu_dsl::prelude::*;

    #[kernel]
    pub fn fill(value: f32, out: &mut [f32]) {
        let i = global_idx().x;
        if i < out.len() {
            out[i] = value;
        }
    }
}

#[allow(dead_code)]
fn run(stream: &Stream, out: &DeviceBuffer<f32>) -> gpu_dsl::Result<()> {
    kernels::fill::launch(stream, LaunchConfig::for_len(out.len(), 256), 1.0, out)
}

fn main() {}
