//! Rows for the sixteenth set of classic CUDA programs ported to `#[kernel]`
//! (`port_kernels16.rs`), each timed against its CUDA C twin as `ports.rs` times the first set.

mod twins;

use gpu_dsl::prelude::*;
use gpu_dsl::runtime::KernelArg;

use crate::port_kernels16::{self as ports, Vec3, TILE_BODIES};
use crate::ports::{agree, agree_exact, row, values};
use crate::{median_ms, Only, Row};
use twins::{BIT_REVERSE_C, NBODY_BODIES_C, SPMV_CSR_SCALAR_C};

/// Every row of the sixteenth set of ports (GPU only: the twins have no CPU twin).
pub fn rows(stream: &Stream, only: &Only) -> gpu_dsl::Result<Vec<Row>> {
    let mut rows = Vec::new();
    if only.wants("port n-body (vec3 type)") {
        rows.push(nbody(stream, 1 << 15)?);
    }
    if only.wants("port spmv (csr scalar, iterators)") {
        rows.push(spmv(stream, 1 << 20)?);
    }
    if only.wants("port bit reversal") {
        rows.push(bit_reverse(stream, 24)?);
    }
    Ok(rows)
}

fn nbody(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    let words = values(4 * n, 161);
    let bodies = ports::bodies(&words);
    let flat: Vec<f32> = bodies
        .iter()
        .flat_map(|b| [b.pos.x, b.pos.y, b.pos.z, b.mass])
        .collect();
    let ours = DeviceBuffer::from_host(stream, &bodies)?;
    let theirs = DeviceBuffer::from_host(stream, &flat)?;
    let mut acc = DeviceBuffer::<Vec3>::zeroed(stream, n)?;
    let mut acc_twin = DeviceBuffer::<f32>::zeroed(stream, 3 * n)?;
    let softening = 1e-3f32;
    let config = LaunchConfig::try_for_len(n, TILE_BODIES as u32)?;
    let ms = median_ms(stream, || {
        ports::nbody_bodies::launch(stream, config, softening, &ours, &mut acc)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &NBODY_BODIES_C,
            config,
            &[
                KernelArg::scalar(softening),
                KernelArg::slice(&theirs),
                KernelArg::slice_mut(&mut acc_twin),
            ],
        )
    })?;
    let ours: Vec<f32> = acc
        .to_host(stream)?
        .iter()
        .flat_map(|v| [v.x, v.y, v.z])
        .collect();
    agree("n-body (vec3)", &ours, &acc_twin.to_host(stream)?, 1e-3);
    Ok(row(
        "port n-body (vec3 type)",
        format!("2^{} bodies", n.trailing_zeros()),
        ms,
        twin_ms,
        (n * n) as f64 / 1e9,
        "Gpair/s",
    ))
}

fn spmv(stream: &Stream, rows: usize) -> gpu_dsl::Result<Row> {
    let width = rows;
    let mut row_ptr = vec![0u32];
    let mut cols = Vec::new();
    for r in 0..rows {
        for k in 0..8 + (r * 7) % 17 {
            cols.push(((r * 131 + k * 977) % width) as u32);
        }
        row_ptr.push(cols.len() as u32);
    }
    let vals = values(cols.len(), 162);
    let (rp, c, v, x) = (
        DeviceBuffer::from_host(stream, &row_ptr)?,
        DeviceBuffer::from_host(stream, &cols)?,
        DeviceBuffer::from_host(stream, &vals)?,
        DeviceBuffer::from_host(stream, &values(width, 163))?,
    );
    let mut y = DeviceBuffer::<f32>::zeroed(stream, rows)?;
    let mut y_twin = DeviceBuffer::<f32>::zeroed(stream, rows)?;
    let config = LaunchConfig::try_for_len(rows, 128)?;
    let ms = median_ms(stream, || {
        ports::spmv_csr_scalar::launch(stream, config, &rp, &c, &v, &x, &mut y)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &SPMV_CSR_SCALAR_C,
            config,
            &[
                KernelArg::slice(&rp),
                KernelArg::slice(&c),
                KernelArg::slice(&v),
                KernelArg::slice(&x),
                KernelArg::slice_mut(&mut y_twin),
            ],
        )
    })?;
    agree(
        "spmv (csr scalar)",
        &y.to_host(stream)?,
        &y_twin.to_host(stream)?,
        1e-5,
    );
    Ok(row(
        "port spmv (csr scalar, iterators)",
        format!(
            "2^{} rows, {}M nnz",
            rows.trailing_zeros(),
            cols.len() >> 20
        ),
        ms,
        twin_ms,
        cols.len() as f64 / 1e9,
        "Gnnz/s",
    ))
}

fn bit_reverse(stream: &Stream, log_n: u32) -> gpu_dsl::Result<Row> {
    let n = 1usize << log_n;
    let input = DeviceBuffer::from_host(stream, &values(n, 164))?;
    let mut out = DeviceBuffer::<f32>::zeroed(stream, n)?;
    let mut out_twin = DeviceBuffer::<f32>::zeroed(stream, n)?;
    let config = LaunchConfig::try_for_len(n, 256)?;
    let ms = median_ms(stream, || {
        ports::bit_reverse::launch(stream, config, log_n, &input, &mut out)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &BIT_REVERSE_C,
            config,
            &[
                KernelArg::scalar(log_n),
                KernelArg::slice(&input),
                KernelArg::slice_mut(&mut out_twin),
            ],
        )
    })?;
    agree_exact(
        "bit reversal",
        &out.to_host(stream)?,
        &out_twin.to_host(stream)?,
        0,
    );
    Ok(row(
        "port bit reversal",
        format!("2^{log_n}"),
        ms,
        twin_ms,
        (2 * n * 4) as f64 / 1e9,
        "GB/s",
    ))
}
