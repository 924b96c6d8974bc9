use gpu_dsl::prelude::*;

mod helpers {
    use gpu_dsl::prelude::*;

    const BIAS: f32 = 0.25;

    #[device]
    pub fn biased(x: f32) -> f32 {
        x + BIAS
    }
}

#[kernel]
fn k(x: &mut [f32]) {
    x[0] = helpers::biased(x[0]);
}

fn main() {}
