//! The `monte_carlo_pi` example's kernel on the CPU backend: close to π, and the same for the
//! same seed.

#[path = "../examples/monte_carlo_pi/pi.rs"]
mod pi;

mod common;

use gpu_dsl::prelude::*;
use pi::Plan;

/// A run of about a million points, small enough for the CPU backend.
fn plan(seed: u64) -> Plan {
    Plan {
        threads: 4096,
        pairs: 64,
        batches: 2,
        seed,
    }
}

#[test]
fn estimate_is_within_five_standard_errors_of_pi() {
    let stream = Gpu::cpu().default_stream();
    let plan = plan(7);
    let hits = pi::count(&stream, &plan).unwrap();
    let (estimate, std_error) = pi::estimate(hits, plan.points());
    let error = (estimate - std::f64::consts::PI).abs();
    assert!(
        error < 5.0 * std_error,
        "π ≈ {estimate}, {:.1} standard errors ({std_error:.2e}) away",
        error / std_error
    );
}

#[test]
fn same_seed_same_hits_other_seed_other_hits() {
    let stream = Gpu::cpu().default_stream();
    let first = pi::count(&stream, &plan(11)).unwrap();
    assert_eq!(first, pi::count(&stream, &plan(11)).unwrap());
    assert_ne!(first, pi::count(&stream, &plan(12)).unwrap());
}

#[test]
fn kernel_counts_match_the_host_twin_of_philox() {
    let stream = Gpu::cpu().default_stream();
    let plan = plan(3);
    let mut hits = DeviceBuffer::<u32>::zeroed(&stream, plan.threads).unwrap();
    let config = LaunchConfig::for_len(plan.threads, pi::BLOCK);
    pi::count_hits::launch(&stream, config, 3, 0, 1, plan.pairs, &mut hits).unwrap();
    let device = hits.to_host(&stream).unwrap();
    assert_eq!(device, pi::host_hits(&plan, 1, 0..plan.threads));
}

#[test]
fn inside_is_exact_at_the_boundary() {
    // Cell 0 along x: (2·0 + 1)² + (2y + 1)² < 2^50 exactly when 2y + 1 < 2^25 - ε.
    assert_eq!(pi::inside_host(0, u32::MAX), 1);
    assert_eq!(pi::inside_host(u32::MAX, u32::MAX), 0);
    assert_eq!(pi::inside_host(0, 0), 1);
}

/// The example's own kernel compiles with NVRTC, so its GPU path builds where no GPU is.
#[test]
fn count_hits_compiles_with_nvrtc() {
    common::assert_compiles_with_nvrtc(&[(&pi::count_hits::KERNEL, &[])]);
}
