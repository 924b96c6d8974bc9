const BIAS: f32 = 0.25;

mod helpers {
    use gpu_dsl::prelude::*;

    #[device]
    pub fn biased(x: f32) -> f32 {
        x + super::BIAS
    }
}

fn main() {}
