//! Rows for the twentieth set of classic CUDA programs ported to `#[kernel]`
//! (`port_kernels20.rs`), each timed against its CUDA C twin as `ports.rs` times the first set.

mod twins;

use gpu_dsl::prelude::*;
use gpu_dsl::runtime::KernelArg;

use crate::port_kernels20::{self as ports, Float4, MD_THREADS, PF_THREADS, TPACF_THREADS};
use crate::ports::{agree, agree_exact, row, values};
use crate::{median_ms, Only, Row};
use twins::{DWT_HAAR_C, MD_C, PF_FIND_INDEX_C, PF_NORMALIZE_C, TPACF_C};

/// Every row of the twentieth set of ports (GPU only: the twins have no CPU twin).
pub fn rows(stream: &Stream, only: &Only) -> gpu_dsl::Result<Vec<Row>> {
    let mut rows = Vec::new();
    if only.wants("port tpacf") {
        rows.push(tpacf(stream, 1024, 256)?);
    }
    if only.wants("port md") {
        rows.push(md(stream, 80, 128)?);
    }
    if only.wants("port dwt haar") {
        rows.push(dwt_haar(stream, 1 << 26)?);
    }
    if only.wants("port particlefilter find index") {
        rows.push(pf_find_index(stream, 1 << 16)?);
    }
    if only.wants("port particlefilter normalize") {
        rows.push(pf_normalize(stream, 1 << 16)?);
    }
    Ok(rows)
}

fn tpacf(stream: &Stream, n: usize, sets: usize) -> gpu_dsl::Result<Row> {
    let bounds = DeviceBuffer::from_host(stream, &ports::tpacf_bounds())?;
    let data = DeviceBuffer::from_host(stream, &ports::sphere_points(&values(3 * n, 211), n))?;
    let random = ports::sphere_points(&values(3 * n * sets, 212), n * sets);
    let random = DeviceBuffer::from_host(stream, &random)?;
    let mut hist = DeviceBuffer::<u32>::zeroed(stream, ports::TPACF_BINS)?;
    let mut hist_twin = DeviceBuffer::<u32>::zeroed(stream, ports::TPACF_BINS)?;
    let config = LaunchConfig::new(Grid::x(sets as u32), Block::x(TPACF_THREADS as u32));
    let port = |hist: &mut DeviceBuffer<u32>| {
        ports::tpacf_histogram::launch(stream, config, &bounds, &data, &random, hist)
    };
    let twin = |hist: &mut DeviceBuffer<u32>| {
        stream.launch(
            &TPACF_C,
            config,
            &[
                KernelArg::slice(&bounds),
                KernelArg::slice(&data),
                KernelArg::slice(&random),
                KernelArg::slice_mut(hist),
                KernelArg::scalar(n as i32),
            ],
        )
    };
    let ms = median_ms(stream, || port(&mut hist))?;
    let twin_ms = median_ms(stream, || twin(&mut hist_twin))?;
    // Each run adds to the histogram: compare one run of each from zero.
    hist.fill(stream, 0)?;
    hist_twin.fill(stream, 0)?;
    port(&mut hist)?;
    twin(&mut hist_twin)?;
    agree_exact(
        "tpacf",
        &hist.to_host(stream)?,
        &hist_twin.to_host(stream)?,
        0,
    );
    Ok(row(
        "port tpacf",
        format!("{n} x {sets} sets"),
        ms,
        twin_ms,
        (n * n * sets) as f64 / 1e9,
        "Gpair/s",
    ))
}

fn md(stream: &Stream, side: usize, max_neighbors: usize) -> gpu_dsl::Result<Row> {
    let n = side * side * side;
    let (positions, neighbors) = ports::md_atoms(&values(3 * n, 213), side, max_neighbors);
    let positions = DeviceBuffer::from_host(stream, &positions)?;
    let neighbors = DeviceBuffer::from_host(stream, &neighbors)?;
    let mut forces = DeviceBuffer::<Float4>::zeroed(stream, n)?;
    let mut forces_twin = DeviceBuffer::<Float4>::zeroed(stream, n)?;
    // SHOC's constants, its cutoff reaching the second shell of the lattice.
    let (cutsq, lj1, lj2) = (6.25f32, 1.5f32, 2.0f32);
    let config = LaunchConfig::try_for_len(n, MD_THREADS)?;
    let ms = median_ms(stream, || {
        ports::md_lj_force::launch(
            stream,
            config,
            &positions,
            &neighbors,
            &mut forces,
            max_neighbors,
            cutsq,
            lj1,
            lj2,
        )
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &MD_C,
            config,
            &[
                KernelArg::slice_mut(&mut forces_twin),
                KernelArg::slice(&positions),
                KernelArg::scalar(max_neighbors as i32),
                KernelArg::slice(&neighbors),
                KernelArg::scalar(cutsq),
                KernelArg::scalar(lj1),
                KernelArg::scalar(lj2),
                KernelArg::scalar(n as i32),
            ],
        )
    })?;
    let words = |f: Vec<Float4>| -> Vec<f32> { f.iter().flat_map(|v| [v.x, v.y, v.z]).collect() };
    agree(
        "md",
        &words(forces.to_host(stream)?),
        &words(forces_twin.to_host(stream)?),
        1e-5,
    );
    Ok(row(
        "port md",
        format!("{n} x {max_neighbors}"),
        ms,
        twin_ms,
        (n * max_neighbors) as f64 / 1e9,
        "Gpair/s",
    ))
}

/// The CUDA C twin's launches of the whole Haar decomposition, as `ports::dwt_haar`'s.
fn dwt_haar_twin(
    stream: &Stream,
    signal: &DeviceBuffer<f32>,
    details: &mut DeviceBuffer<f32>,
    scratch: &mut [DeviceBuffer<f32>; 2],
) -> gpu_dsl::Result<usize> {
    let mut len = signal.len();
    let mut last = None;
    while len > 1 {
        let (threads, levels) = ports::haar_launch(len);
        let blocks = len / 2 / threads;
        let config = LaunchConfig::new(Grid::x(blocks as u32), Block::x(threads as u32))
            .with_shared_mem((2 * threads * 4) as u32);
        let [a, b] = &mut *scratch;
        let (input, output, written) = match last {
            None => (signal, a, 0),
            Some(0) => (&*a, b, 1),
            Some(_) => (&*b, a, 0),
        };
        stream.launch(
            &DWT_HAAR_C,
            config,
            &[
                KernelArg::slice(input),
                KernelArg::slice_mut(details),
                KernelArg::slice_mut(output),
                KernelArg::scalar(levels),
                KernelArg::scalar((len / 2) as u32),
                KernelArg::scalar(threads as i32),
            ],
        )?;
        last = Some(written);
        len = blocks;
    }
    Ok(last.unwrap_or(0))
}

fn dwt_haar(stream: &Stream, len: usize) -> gpu_dsl::Result<Row> {
    let signal = DeviceBuffer::from_host(stream, &values(len, 214))?;
    let mut details = DeviceBuffer::<f32>::zeroed(stream, len)?;
    let mut details_twin = DeviceBuffer::<f32>::zeroed(stream, len)?;
    let blocks = len / 2 / ports::haar_launch(len).0;
    let zeros = || DeviceBuffer::<f32>::zeroed(stream, blocks);
    let mut scratch = [zeros()?, zeros()?];
    let mut scratch_twin = [zeros()?, zeros()?];
    let mut out = 0;
    let mut out_twin = 0;
    let ms = median_ms(stream, || {
        out = ports::dwt_haar(stream, &signal, &mut details, &mut scratch)?;
        Ok(())
    })?;
    let twin_ms = median_ms(stream, || {
        out_twin = dwt_haar_twin(stream, &signal, &mut details_twin, &mut scratch_twin)?;
        Ok(())
    })?;
    let mut ours = details.to_host(stream)?;
    let mut theirs = details_twin.to_host(stream)?;
    ours[0] = scratch[out].to_host(stream)?[0];
    theirs[0] = scratch_twin[out_twin].to_host(stream)?[0];
    agree("dwt haar", &ours, &theirs, 1e-5);
    Ok(row(
        "port dwt haar",
        format!("{len}"),
        ms,
        twin_ms,
        (len * 4 * 2) as f64 / 1e9,
        "GB/s",
    ))
}

/// A particle filter's state: positions, a CDF rising from near 0 to 1, and the systematic
/// resampling's `u`, rising through it.
fn particles(n: usize) -> [Vec<f32>; 4] {
    let x = values(n, 215);
    let y = values(n, 216);
    let weights: Vec<f32> = values(n, 217).iter().map(|w| 1.5 + w).collect();
    let total: f32 = weights.iter().sum();
    let cdf = weights
        .iter()
        .scan(0.0f32, |acc, w| {
            *acc += w / total;
            Some(*acc)
        })
        .collect();
    let u1 = 0.37 / n as f32;
    let u = (0..n).map(|i| u1 + i as f32 / n as f32).collect();
    [x, y, cdf, u]
}

fn pf_find_index(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    let [x, y, cdf, u] = particles(n).map(|v| DeviceBuffer::from_host(stream, &v));
    let (x, y, cdf, u) = (x?, y?, cdf?, u?);
    let mut xj = DeviceBuffer::<f32>::zeroed(stream, n)?;
    let mut yj = DeviceBuffer::<f32>::zeroed(stream, n)?;
    let mut xj_twin = DeviceBuffer::<f32>::zeroed(stream, n)?;
    let mut yj_twin = DeviceBuffer::<f32>::zeroed(stream, n)?;
    let config = LaunchConfig::try_for_len(n, PF_THREADS as u32)?;
    let ms = median_ms(stream, || {
        ports::pf_find_index::launch(stream, config, &x, &y, &cdf, &u, &mut xj, &mut yj)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &PF_FIND_INDEX_C,
            config,
            &[
                KernelArg::slice(&x),
                KernelArg::slice(&y),
                KernelArg::slice(&cdf),
                KernelArg::slice(&u),
                KernelArg::slice_mut(&mut xj_twin),
                KernelArg::slice_mut(&mut yj_twin),
                KernelArg::scalar(n as i32),
            ],
        )
    })?;
    agree_exact(
        "particlefilter xj",
        &xj.to_host(stream)?,
        &xj_twin.to_host(stream)?,
        0,
    );
    agree_exact(
        "particlefilter yj",
        &yj.to_host(stream)?,
        &yj_twin.to_host(stream)?,
        0,
    );
    Ok(row(
        "port particlefilter find index",
        format!("{n}"),
        ms,
        twin_ms,
        n as f64 / 1e6,
        "Mparticle/s",
    ))
}

fn pf_normalize(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    let start: Vec<f32> = values(n, 218).iter().map(|w| 1.5 + w).collect();
    let mut weights = DeviceBuffer::from_host(stream, &start)?;
    let mut weights_twin = DeviceBuffer::from_host(stream, &start)?;
    let mut cdf = DeviceBuffer::<f32>::zeroed(stream, n)?;
    let mut cdf_twin = DeviceBuffer::<f32>::zeroed(stream, n)?;
    let mut u = DeviceBuffer::<f32>::zeroed(stream, n)?;
    let mut u_twin = DeviceBuffer::<f32>::zeroed(stream, n)?;
    let u1 = 0.37 / n as f32;
    let config = LaunchConfig::new(Grid::x(1), Block::x(PF_THREADS as u32));
    let port =
        |w: &mut DeviceBuffer<f32>, cdf: &mut DeviceBuffer<f32>, u: &mut DeviceBuffer<f32>| {
            ports::pf_normalize_weights::launch(stream, config, w, cdf, u, u1)
        };
    let twin =
        |w: &mut DeviceBuffer<f32>, cdf: &mut DeviceBuffer<f32>, u: &mut DeviceBuffer<f32>| {
            stream.launch(
                &PF_NORMALIZE_C,
                config,
                &[
                    KernelArg::slice_mut(w),
                    KernelArg::slice_mut(cdf),
                    KernelArg::slice_mut(u),
                    KernelArg::scalar(u1),
                    KernelArg::scalar(n as i32),
                ],
            )
        };
    let ms = median_ms(stream, || port(&mut weights, &mut cdf, &mut u))?;
    let twin_ms = median_ms(stream, || {
        twin(&mut weights_twin, &mut cdf_twin, &mut u_twin)
    })?;
    // Each run divides the weights again: compare one run of each from the same weights.
    weights = DeviceBuffer::from_host(stream, &start)?;
    weights_twin = DeviceBuffer::from_host(stream, &start)?;
    port(&mut weights, &mut cdf, &mut u)?;
    twin(&mut weights_twin, &mut cdf_twin, &mut u_twin)?;
    for (name, ours, theirs) in [
        ("particlefilter weights", &weights, &weights_twin),
        ("particlefilter cdf", &cdf, &cdf_twin),
        ("particlefilter u", &u, &u_twin),
    ] {
        agree(name, &ours.to_host(stream)?, &theirs.to_host(stream)?, 1e-5);
    }
    Ok(row(
        "port particlefilter normalize",
        format!("{n}"),
        ms,
        twin_ms,
        n as f64 / 1e6,
        "Mparticle/s",
    ))
}
