//! Rows for the seventh set of classic CUDA programs ported to `#[kernel]`
//! (`port_kernels7.rs`), each timed against its CUDA C twin as `ports.rs` times the first set.

mod twins;

use gpu_dsl::prelude::*;
use gpu_dsl::runtime::KernelArg;

use crate::port_kernels7::{self as ports, Sphere, BINOMIAL_STEPS};
use crate::ports::{agree, agree_exact, row, values};
use crate::{median_ms, Only, Row};
use twins::{BINOMIAL_C, RAY_TRACE_C, RESIZE_C};

/// Every row of the seventh set of ports (GPU only: the twins have no CPU twin).
pub fn rows(stream: &Stream, only: &Only) -> gpu_dsl::Result<Vec<Row>> {
    let mut rows = Vec::new();
    if only.wants("port ray trace") {
        rows.push(ray_trace(stream, 4096, 40)?);
    }
    if only.wants("port bilinear resize") {
        rows.push(resize(stream, 4096, 6000)?);
    }
    if only.wants("port binomial options") {
        rows.push(binomial(stream, 2048)?);
    }
    Ok(rows)
}

/// `count` spheres scattered over a `size`-pixel square, as CUDA by Example's `rnd` places them.
pub fn spheres(count: usize, size: usize) -> Vec<Sphere> {
    let v = values(7 * count, 43);
    let half = size as f32 / 2.0;
    (0..count)
        .map(|i| {
            let r = &v[7 * i..7 * i + 7];
            Sphere {
                r: (r[0] + 1.0) * 0.5,
                g: (r[1] + 1.0) * 0.5,
                b: (r[2] + 1.0) * 0.5,
                radius: size as f32 * (0.02 + 0.05 * (r[3] + 1.0)),
                x: r[4] * half,
                y: r[5] * half,
                z: r[6] * half,
            }
        })
        .collect()
}

fn ray_trace(stream: &Stream, size: usize, count: usize) -> gpu_dsl::Result<Row> {
    let host = spheres(count, size);
    let flat: Vec<f32> = host
        .iter()
        .flat_map(|s| [s.r, s.g, s.b, s.radius, s.x, s.y, s.z])
        .collect();
    let spheres = DeviceBuffer::from_host(stream, &host)?;
    let spheres_twin = DeviceBuffer::from_host(stream, &flat)?;
    let mut image = DeviceBuffer::<u8>::zeroed(stream, size * size * 4)?;
    let mut image_twin = DeviceBuffer::<u8>::zeroed(stream, size * size * 4)?;
    let grid = Grid::xy(size.div_ceil(16) as u32, size.div_ceil(16) as u32);
    let config = LaunchConfig::new(grid, Block::xy(16, 16));
    let ms = median_ms(stream, || {
        ports::ray_trace::launch(stream, config, size, size, &spheres, &mut image)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &RAY_TRACE_C,
            config,
            &[
                KernelArg::scalar(size as i32),
                KernelArg::scalar(size as i32),
                KernelArg::slice(&spheres_twin),
                KernelArg::slice_mut(&mut image_twin),
            ],
        )
    })?;
    // sqrtf and the shading's rounding may move a byte by one where a product lands on a
    // whole number; count only bytes further apart.
    let (ours, theirs) = (image.to_host(stream)?, image_twin.to_host(stream)?);
    let far: Vec<bool> = ours
        .iter()
        .zip(&theirs)
        .map(|(a, b)| a.abs_diff(*b) > 1)
        .collect();
    agree_exact("ray trace", &far, &vec![false; far.len()], 0);
    Ok(row(
        "port ray trace",
        format!("{size}x{size}, {count} spheres"),
        ms,
        twin_ms,
        (size * size) as f64 / 1e9,
        "Gpx/s",
    ))
}

fn resize(stream: &Stream, src: usize, dst: usize) -> gpu_dsl::Result<Row> {
    let input = DeviceBuffer::from_host(stream, &values(src * src, 47))?;
    let mut out = DeviceBuffer::<f32>::zeroed(stream, dst * dst)?;
    let mut out_twin = DeviceBuffer::<f32>::zeroed(stream, dst * dst)?;
    let grid = Grid::xy(dst.div_ceil(32) as u32, dst.div_ceil(8) as u32);
    let config = LaunchConfig::new(grid, Block::xy(32, 8));
    let ms = median_ms(stream, || {
        ports::resize_bilinear::launch(stream, config, src, src, dst, dst, &input, &mut out)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &RESIZE_C,
            config,
            &[
                KernelArg::scalar(src as i32),
                KernelArg::scalar(src as i32),
                KernelArg::scalar(dst as i32),
                KernelArg::scalar(dst as i32),
                KernelArg::slice(&input),
                KernelArg::slice_mut(&mut out_twin),
            ],
        )
    })?;
    agree(
        "bilinear resize",
        &out.to_host(stream)?,
        &out_twin.to_host(stream)?,
        1e-5,
    );
    Ok(row(
        "port bilinear resize",
        format!("{src}² to {dst}²"),
        ms,
        twin_ms,
        4.0 * (src * src + dst * dst) as f64 / 1e9,
        "GB/s",
    ))
}

fn binomial(stream: &Stream, options: usize) -> gpu_dsl::Result<Row> {
    let spot: Vec<f32> = values(options, 53)
        .iter()
        .map(|v| 30.0 + 10.0 * v)
        .collect();
    let strike: Vec<f32> = values(options, 59).iter().map(|v| 30.0 + 5.0 * v).collect();
    let years: Vec<f32> = values(options, 61).iter().map(|v| 1.5 + v).collect();
    let (spot, strike, years) = (
        DeviceBuffer::from_host(stream, &spot)?,
        DeviceBuffer::from_host(stream, &strike)?,
        DeviceBuffer::from_host(stream, &years)?,
    );
    let (rate, volatility) = (0.06f32, 0.10f32);
    let mut price = DeviceBuffer::<f32>::zeroed(stream, options)?;
    let mut price_twin = DeviceBuffer::<f32>::zeroed(stream, options)?;
    let config = LaunchConfig::new(Grid::x(options as u32), Block::x(BINOMIAL_STEPS as u32));
    let ms = median_ms(stream, || {
        ports::binomial_options::launch(
            stream, config, &spot, &strike, &years, rate, volatility, &mut price,
        )
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &BINOMIAL_C,
            config,
            &[
                KernelArg::slice(&spot),
                KernelArg::slice(&strike),
                KernelArg::slice(&years),
                KernelArg::scalar(rate),
                KernelArg::scalar(volatility),
                KernelArg::slice_mut(&mut price_twin),
            ],
        )
    })?;
    agree(
        "binomial options",
        &price.to_host(stream)?,
        &price_twin.to_host(stream)?,
        1e-4,
    );
    Ok(row(
        "port binomial options",
        format!("{options} options, {BINOMIAL_STEPS} steps"),
        ms,
        twin_ms,
        options as f64 / 1e6,
        "Mopt/s",
    ))
}
