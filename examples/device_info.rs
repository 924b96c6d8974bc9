//! Lists the CUDA devices and their properties.
//!
//! `cargo run --example device_info`

use gpu_dsl::prelude::*;

fn main() {
    let count = match Gpu::count() {
        Ok(count) => count,
        Err(error) => {
            eprintln!("error: {error}");
            std::process::exit(1);
        }
    };
    println!("{count} CUDA device(s)");
    for ordinal in 0..count {
        match Gpu::new(ordinal) {
            Ok(gpu) => {
                println!("{}", gpu.info());
                let stats = gpu.memory_stats();
                println!("  allocated by this process: {stats}");
            }
            Err(error) => eprintln!("device {ordinal}: {error}"),
        }
    }
}
