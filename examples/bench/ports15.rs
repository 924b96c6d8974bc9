//! Rows for the fifteenth set of classic CUDA programs ported to `#[kernel]`
//! (`port_kernels15.rs`), each timed against its CUDA C twin as `ports.rs` times the first set.

mod twins;

use gpu_dsl::prelude::*;
use gpu_dsl::runtime::KernelArg;

use crate::port_kernels15::{self as ports, LBM_W};
use crate::ports::{agree, row, values};
use crate::{median_ms, Only, Row};
use twins::{FAN1_C, FAN2_C, LBM_STEP_C, SRAD_C};

/// Every row of the fifteenth set of ports (GPU only: the twins have no CPU twin).
pub fn rows(stream: &Stream, only: &Only) -> gpu_dsl::Result<Vec<Row>> {
    let mut rows = Vec::new();
    if only.wants("port lattice boltzmann") {
        rows.push(lbm(stream, 4096, 2048)?);
    }
    if only.wants("port gaussian elimination") {
        rows.push(gaussian(stream, 1024)?);
    }
    if only.wants("port srad") {
        rows.push(srad(stream, 4096, 4096)?);
    }
    Ok(rows)
}

fn lbm(stream: &Stream, nx: usize, ny: usize) -> gpu_dsl::Result<Row> {
    let cells = nx * ny;
    let f_host: Vec<f32> = values(9 * cells, 151)
        .iter()
        .enumerate()
        .map(|(i, v)| LBM_W[i / cells] * (1.0 + 0.05 * v))
        .collect();
    let f = DeviceBuffer::from_host(stream, &f_host)?;
    let mut out = DeviceBuffer::<f32>::zeroed(stream, 9 * cells)?;
    let mut out_twin = DeviceBuffer::<f32>::zeroed(stream, 9 * cells)?;
    let omega = 1.2f32;
    let config = LaunchConfig::new(Grid::xy(nx.div_ceil(128) as u32, ny as u32), Block::x(128));
    let ms = median_ms(stream, || {
        ports::lbm_step::launch(stream, config, nx, ny, omega, &f, &mut out)
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &LBM_STEP_C,
            config,
            &[
                KernelArg::scalar(nx as i32),
                KernelArg::scalar(ny as i32),
                KernelArg::scalar(omega),
                KernelArg::slice(&f),
                KernelArg::slice_mut(&mut out_twin),
            ],
        )
    })?;
    agree(
        "lbm",
        &out.to_host(stream)?,
        &out_twin.to_host(stream)?,
        1e-5,
    );
    Ok(row(
        "port lattice boltzmann",
        format!("{nx}x{ny} D2Q9"),
        ms,
        twin_ms,
        (2 * 9 * cells * 4) as f64 / 1e9,
        "GB/s",
    ))
}

fn gaussian(stream: &Stream, size: usize) -> gpu_dsl::Result<Row> {
    let mut a_host = values(size * size, 152);
    for i in 0..size {
        a_host[i * size + i] += size as f32;
    }
    let b_host = values(size, 153);
    let (mut a, mut b) = (
        DeviceBuffer::from_host(stream, &a_host)?,
        DeviceBuffer::from_host(stream, &b_host)?,
    );
    let (mut a_twin, mut b_twin) = (
        DeviceBuffer::from_host(stream, &a_host)?,
        DeviceBuffer::from_host(stream, &b_host)?,
    );
    let mut m = DeviceBuffer::<f32>::zeroed(stream, size * size)?;
    let mut m_twin = DeviceBuffer::<f32>::zeroed(stream, size * size)?;
    let fan1 = LaunchConfig::try_for_len(size, 512)?;
    let fan2 = LaunchConfig::new(
        Grid::xy(size.div_ceil(4) as u32, size.div_ceil(4) as u32),
        Block::xy(4, 4),
    );
    // A whole elimination a run; later runs eliminate an upper triangular matrix, the same work.
    let ms = median_ms(stream, || {
        for t in 0..size - 1 {
            ports::fan1::launch(stream, fan1, size, t, &a, &mut m)?;
            ports::fan2::launch(stream, fan2, size, t, &m, &mut a, &mut b)?;
        }
        Ok(())
    })?;
    let twin_ms = median_ms(stream, || {
        for t in 0..size - 1 {
            stream.launch(
                &FAN1_C,
                fan1,
                &[
                    KernelArg::scalar(size as i32),
                    KernelArg::scalar(t as i32),
                    KernelArg::slice(&a_twin),
                    KernelArg::slice_mut(&mut m_twin),
                ],
            )?;
            stream.launch(
                &FAN2_C,
                fan2,
                &[
                    KernelArg::scalar(size as i32),
                    KernelArg::scalar(t as i32),
                    KernelArg::slice(&m_twin),
                    KernelArg::slice_mut(&mut a_twin),
                    KernelArg::slice_mut(&mut b_twin),
                ],
            )?;
        }
        Ok(())
    })?;
    agree(
        "gaussian",
        &a.to_host(stream)?,
        &a_twin.to_host(stream)?,
        1e-4,
    );
    Ok(row(
        "port gaussian elimination",
        format!("{size}², Rodinia's 4x4 blocks"),
        ms,
        twin_ms,
        (size * size * size) as f64 / 3.0 / 1e9,
        "Gflop/s",
    ))
}

fn srad(stream: &Stream, rows: usize, cols: usize) -> gpu_dsl::Result<Row> {
    let n = rows * cols;
    let j_host: Vec<f32> = values(n, 154).iter().map(|v| 1.5 + v).collect();
    let j = DeviceBuffer::from_host(stream, &j_host)?;
    let zeroed = || DeviceBuffer::<f32>::zeroed(stream, n);
    let (mut dn, mut ds, mut dw, mut de, mut c) =
        (zeroed()?, zeroed()?, zeroed()?, zeroed()?, zeroed()?);
    let mut twin: Vec<DeviceBuffer<f32>> = (0..5).map(|_| zeroed()).collect::<Result<_, _>>()?;
    let q0sqr = 0.05f32;
    let config = LaunchConfig::try_for_len(n, 256)?;
    let ms = median_ms(stream, || {
        ports::srad_coefficients::launch(
            stream, config, rows, cols, q0sqr, &j, &mut dn, &mut ds, &mut dw, &mut de, &mut c,
        )
    })?;
    let twin_ms = median_ms(stream, || {
        let [tn, ts, tw, te, tc] = &mut twin[..] else {
            unreachable!("five buffers")
        };
        stream.launch(
            &SRAD_C,
            config,
            &[
                KernelArg::scalar(rows as i32),
                KernelArg::scalar(cols as i32),
                KernelArg::scalar(q0sqr),
                KernelArg::slice(&j),
                KernelArg::slice_mut(tn),
                KernelArg::slice_mut(ts),
                KernelArg::slice_mut(tw),
                KernelArg::slice_mut(te),
                KernelArg::slice_mut(tc),
            ],
        )
    })?;
    agree("srad", &c.to_host(stream)?, &twin[4].to_host(stream)?, 1e-5);
    Ok(row(
        "port srad",
        format!("{rows}x{cols}"),
        ms,
        twin_ms,
        (6 * n * 4) as f64 / 1e9,
        "GB/s",
    ))
}
