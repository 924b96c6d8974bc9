//! Gravitational n-body: every body attracts every other, one time step per launch.
//!
//! `cargo run --release --example nbody [BODIES] [STEPS]` — a `#[device]` struct `Body` with
//! methods, shared-memory tiles of bodies, the interactions per second on the GPU, and the
//! positions checked against the same kernel on the CPU backend.

use gpu_dsl::prelude::*;

/// Bodies per block, and per shared-memory tile.
const TILE: u32 = 256;

/// A point mass and its velocity.
#[device]
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Body {
    pub pos: [f32; 3],
    pub mass: f32,
    pub vel: [f32; 3],
    pub pad: f32,
}

#[device]
impl Body {
    /// The acceleration `other` gives this body (times G = 1), softened.
    pub fn pull(&self, other: &Body) -> [f32; 3] {
        let d = [
            other.pos[0] - self.pos[0],
            other.pos[1] - self.pos[1],
            other.pos[2] - self.pos[2],
        ];
        // Softening keeps the force finite when two bodies meet.
        let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + 1e-3;
        let inv = 1.0 / r2.sqrt();
        let s = other.mass * inv * inv * inv;
        [d[0] * s, d[1] * s, d[2] * s]
    }

    /// Moves the body by `dt` under acceleration `acc` (semi-implicit Euler).
    pub fn advance(&mut self, acc: [f32; 3], dt: f32) {
        for k in 0..3 {
            self.vel[k] += acc[k] * dt;
            self.pos[k] += self.vel[k] * dt;
        }
    }
}

/// One step: each thread sums the pull of all bodies, a tile of them at a time from shared
/// memory, then moves its own body into `next`.
#[kernel]
fn step(bodies: &[Body], dt: f32, next: &mut [Body]) {
    let tile = shared_array::<Body, 256>();
    let i = global_idx().x;
    let n = bodies.len();
    let mut me = if i < n { bodies[i] } else { bodies[0] };
    let mut acc = [0.0f32; 3];
    let tx = thread_idx().x as usize;
    for start in (0..n).step_by(256) {
        if start + tx < n {
            tile[tx] = bodies[start + tx];
        }
        sync_threads();
        let count = if n - start < 256 { n - start } else { 256 };
        for j in 0..count {
            let a = me.pull(&tile[j]);
            acc[0] += a[0];
            acc[1] += a[1];
            acc[2] += a[2];
        }
        sync_threads();
    }
    if i < n {
        me.advance(acc, dt);
        next[i] = me;
    }
}

fn main() {
    if let Err(error) = run() {
        eprintln!("error: {error}");
        std::process::exit(1);
    }
}

fn initial(n: usize) -> Vec<Body> {
    (0..n)
        .map(|i| {
            let t = i as f32 * 0.618_034;
            let r = 1.0 + (i % 97) as f32 * 0.01;
            Body {
                pos: [
                    r * (t * std::f32::consts::TAU).cos(),
                    r * (t * std::f32::consts::TAU).sin(),
                    (i % 13) as f32 * 0.05,
                ],
                mass: 1.0 / n as f32,
                vel: [0.0; 3],
                pad: 0.0,
            }
        })
        .collect()
}

/// Runs `steps` steps of `n` bodies on `gpu`; returns the bodies and the seconds per step.
fn simulate(gpu: &Gpu, n: usize, steps: usize) -> gpu_dsl::Result<(Vec<Body>, f64)> {
    let stream = gpu.default_stream();
    let mut a = DeviceBuffer::from_host(&stream, &initial(n))?;
    let mut b = DeviceBuffer::zeroed(&stream, n)?;
    let config = LaunchConfig::for_len(n, TILE);
    // The first launch compiles (or loads from the cache); time the ones after it.
    step::launch(&stream, config, &a, 0.01, &mut b)?;
    std::mem::swap(&mut a, &mut b);
    let start = stream.record_event()?;
    for _ in 1..steps {
        step::launch(&stream, config, &a, 0.01, &mut b)?;
        std::mem::swap(&mut a, &mut b);
    }
    let end = stream.record_event()?;
    let seconds = f64::from(start.elapsed_ms(&end)?) / 1e3 / (steps - 1).max(1) as f64;
    Ok((a.to_host(&stream)?, seconds))
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(16384);
    let steps: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(10);
    let gpu = Gpu::best()?;
    println!("device: {} ({:?} backend)", gpu.name(), gpu.backend());
    let (bodies, seconds) = simulate(&gpu, n, steps)?;
    let interactions = (n * n) as f64 / seconds;
    println!(
        "{n} bodies, {steps} steps: {:.3} ms per step, {:.2e} interactions/s ({:.0} GFLOP/s at 20 flops each)",
        seconds * 1e3,
        interactions,
        interactions * 20.0 / 1e9
    );
    // Gravity is internal: the total momentum stays near its initial zero.
    let momentum: f32 = (0..3)
        .map(|k| bodies.iter().map(|b| b.mass * b.vel[k]).sum::<f32>().abs())
        .sum();
    println!("total momentum after {steps} steps: {momentum:.2e} (starts at 0)");
    // The same kernel on the CPU backend, with fewer bodies so it finishes quickly.
    let check_n = n.min(1024);
    let (gpu_small, _) = simulate(&gpu, check_n, 3)?;
    let (cpu_small, _) = simulate(&Gpu::cpu(), check_n, 3)?;
    let mut worst = 0.0f32;
    for (g, c) in gpu_small.iter().zip(&cpu_small) {
        for k in 0..3 {
            worst = worst.max((g.pos[k] - c.pos[k]).abs());
        }
    }
    println!(
        "{check_n} bodies, 3 steps: largest position difference from the CPU backend {worst:.2e}"
    );
    if worst > 1e-3 {
        return Err(format!("the GPU and the CPU backend disagree by {worst}").into());
    }
    Ok(())
}
