//! Rows for the eleventh set of classic CUDA programs ported to `#[kernel]`
//! (`port_kernels11.rs`), each timed against its CUDA C twin as `ports.rs` times the first set.

mod twins;

use gpu_dsl::prelude::*;
use gpu_dsl::runtime::KernelArg;

use crate::port_kernels11::{self as ports, Particle, SOBOL_BITS};
use crate::ports::{agree, agree_exact, row, values};
use crate::{median_ms, Only, Row};
use twins::{HISTOGRAM_C, PARTICLES_C, SOBOL_C};

/// Every row of the eleventh set of ports (GPU only: the twins have no CPU twin).
pub fn rows(stream: &Stream, only: &Only) -> gpu_dsl::Result<Vec<Row>> {
    let mut rows = Vec::new();
    if only.wants("port sobol") {
        rows.push(sobol(stream, 1 << 22, 8)?);
    }
    if only.wants("port particles") {
        rows.push(particles(stream, 1 << 24)?);
    }
    if only.wants("port histogram (per warp)") {
        rows.push(histogram(stream, 1 << 28)?);
    }
    Ok(rows)
}

/// Direction numbers: dimension 0 is van der Corput's (bit `k` at position `31 - k`); the
/// others are odd multiples of it, which keeps each a bijection of the bits.
pub fn directions(dims: usize) -> Vec<u32> {
    (0..dims)
        .flat_map(|d| {
            (0..SOBOL_BITS).map(move |k| {
                let base = 1u32 << (31 - k);
                base.wrapping_mul(2 * d as u32 + 1) | base
            })
        })
        .collect()
}

fn sobol(stream: &Stream, points: usize, dims: usize) -> gpu_dsl::Result<Row> {
    let v = DeviceBuffer::from_host(stream, &directions(dims))?;
    let mut out = DeviceBuffer::<f32>::zeroed(stream, points * dims)?;
    let mut out_twin = DeviceBuffer::<f32>::zeroed(stream, points * dims)?;
    let config = LaunchConfig::new(Grid::xy(264, dims as u32), Block::x(256));
    let ms = median_ms(stream, || {
        ports::sobol::launch(stream, config, points, &v, &mut out)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &SOBOL_C,
            config,
            &[
                KernelArg::scalar(points as i32),
                KernelArg::slice(&v),
                KernelArg::slice_mut(&mut out_twin),
            ],
        )
    })?;
    agree(
        "sobol",
        &out.to_host(stream)?,
        &out_twin.to_host(stream)?,
        0.0,
    );
    Ok(row(
        "port sobol",
        format!("2^{} points, {dims} dims", points.trailing_zeros()),
        ms,
        twin_ms,
        (points * dims) as f64 / 1e9,
        "Gpt/s",
    ))
}

fn particles(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    let v = values(6 * n, 107);
    let host: Vec<Particle> = v
        .chunks(6)
        .map(|c| Particle {
            pos: [(c[0] + 1.0) * 0.5, (c[1] + 1.0) * 0.5, (c[2] + 1.0) * 0.5],
            vel: [c[3], c[4], c[5]],
        })
        .collect();
    let flat: Vec<f32> = host
        .iter()
        .flat_map(|p| p.pos.into_iter().chain(p.vel))
        .collect();
    let mut ours = DeviceBuffer::from_host(stream, &host)?;
    let mut theirs = DeviceBuffer::from_host(stream, &flat)?;
    let (dt, drag) = (1e-3f32, 0.1f32);
    let config = LaunchConfig::try_for_len(n, 256)?;
    let ms = median_ms(stream, || {
        ports::particles_step::launch(stream, config, dt, drag, &mut ours)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &PARTICLES_C,
            config,
            &[
                KernelArg::scalar(dt),
                KernelArg::scalar(drag),
                KernelArg::slice_mut(&mut theirs),
            ],
        )
    })?;
    // Both took the same number of steps (warm-up and timed runs alike).
    let ours: Vec<f32> = ours
        .to_host(stream)?
        .iter()
        .flat_map(|p| p.pos.into_iter().chain(p.vel))
        .collect();
    agree("particles", &ours, &theirs.to_host(stream)?, 1e-5);
    Ok(row(
        "port particles",
        format!("2^{} particles", n.trailing_zeros()),
        ms,
        twin_ms,
        48.0 * n as f64 / 1e9,
        "GB/s",
    ))
}

fn histogram(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    let host: Vec<u8> = (0..n)
        .map(|i| ((i as u64).wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let data = DeviceBuffer::from_host(stream, &host)?;
    let mut bins = DeviceBuffer::<u32>::zeroed(stream, 256)?;
    let mut bins_twin = DeviceBuffer::<u32>::zeroed(stream, 256)?;
    let config = LaunchConfig::new(Grid::x(132 * 8), Block::x(256));
    let ms = median_ms(stream, || {
        ports::histogram_private::launch(stream, config, &data, &mut bins)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &HISTOGRAM_C,
            config,
            &[
                KernelArg::slice(&data),
                KernelArg::slice_mut(&mut bins_twin),
            ],
        )
    })?;
    // Both accumulate over every run, the same number of runs each.
    agree_exact(
        "histogram (per warp)",
        &bins.to_host(stream)?,
        &bins_twin.to_host(stream)?,
        0,
    );
    Ok(row(
        "port histogram (per warp)",
        format!("2^{} bytes", n.trailing_zeros()),
        ms,
        twin_ms,
        n as f64 / 1e9,
        "GB/s",
    ))
}
