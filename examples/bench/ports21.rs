//! Rows for the twenty-first set of classic CUDA programs ported to `#[kernel]`
//! (`port_kernels21.rs`), each timed against its CUDA C twin as `ports.rs` times the first set.

mod twins;

use gpu_dsl::prelude::*;
use gpu_dsl::runtime::KernelArg;

use crate::port_kernels21::{self as ports, Fields, BIN_LENGTH, CUTCP_BLOCK, SHARED_SIZE_LIMIT};
use crate::ports::{agree, agree_exact, row, values};
use crate::{median_ms, Only, Row};
use twins::{
    CORR_CORR_C, CORR_MEAN_C, CORR_REDUCE_C, CORR_STD_C, CUTCP_C, FDTD_EX_C, FDTD_EY_C, FDTD_HZ_C,
    MERGE_SORT_SHARED_C,
};

/// Every row of the twenty-first set of ports (GPU only: the twins have no CPU twin).
pub fn rows(stream: &Stream, only: &Only) -> gpu_dsl::Result<Vec<Row>> {
    let mut rows = Vec::new();
    if only.wants("port correlation") {
        rows.push(correlation(stream, 512, 512)?);
    }
    if only.wants("port fdtd-2d") {
        rows.push(fdtd_2d(stream, 4096, 4096, 10)?);
    }
    if only.wants("port cutcp") {
        rows.push(cutcp(stream, [128, 128, 64])?);
    }
    if only.wants("port merge sort shared") {
        rows.push(merge_sort_shared(stream, 1 << 22)?);
    }
    Ok(rows)
}

/// PolyBench's four correlation kernels over the CUDA C twins.
#[allow(clippy::too_many_arguments)]
fn correlation_twin(
    stream: &Stream,
    m: usize,
    n: usize,
    data: &mut DeviceBuffer<f32>,
    mean: &mut DeviceBuffer<f32>,
    std: &mut DeviceBuffer<f32>,
    symmat: &mut DeviceBuffer<f32>,
) -> gpu_dsl::Result<()> {
    let columns = LaunchConfig::try_for_len(m, ports::CORR_THREADS)?;
    stream.launch(
        &CORR_MEAN_C,
        columns,
        &[
            KernelArg::scalar(m as i32),
            KernelArg::scalar(n as i32),
            KernelArg::slice(data),
            KernelArg::slice_mut(mean),
        ],
    )?;
    stream.launch(
        &CORR_STD_C,
        columns,
        &[
            KernelArg::scalar(m as i32),
            KernelArg::scalar(n as i32),
            KernelArg::slice(data),
            KernelArg::slice(mean),
            KernelArg::slice_mut(std),
        ],
    )?;
    stream.launch(
        &CORR_REDUCE_C,
        ports::grid_2d(n, m)?,
        &[
            KernelArg::scalar(m as i32),
            KernelArg::scalar(n as i32),
            KernelArg::slice(mean),
            KernelArg::slice(std),
            KernelArg::slice_mut(data),
        ],
    )?;
    stream.launch(
        &CORR_CORR_C,
        columns,
        &[
            KernelArg::scalar(m as i32),
            KernelArg::scalar(n as i32),
            KernelArg::slice(data),
            KernelArg::slice_mut(symmat),
        ],
    )
}

fn correlation(stream: &Stream, m: usize, n: usize) -> gpu_dsl::Result<Row> {
    // Values in the thousands, as PolyBench's `i * j / M` are, so the deviations pass `EPS`.
    let host: Vec<f32> = values(n * m, 211).iter().map(|v| 2000.0 * v).collect();
    let pristine = DeviceBuffer::from_host(stream, &host)?;
    let buffers = || -> gpu_dsl::Result<[DeviceBuffer<f32>; 4]> {
        Ok([
            DeviceBuffer::zeroed(stream, n * m)?,
            DeviceBuffer::zeroed(stream, m)?,
            DeviceBuffer::zeroed(stream, m)?,
            DeviceBuffer::zeroed(stream, m * m)?,
        ])
    };
    let [mut data, mut mean, mut std, mut symmat] = buffers()?;
    let [mut data_t, mut mean_t, mut std_t, mut symmat_t] = buffers()?;
    // Each run centres and scales the data in place: both pay for the copy that restores it.
    let ms = median_ms(stream, || {
        data.copy_from(stream, &pristine)?;
        ports::correlation(stream, m, &mut data, &mut mean, &mut std, &mut symmat)
    })?;
    let twin_ms = median_ms(stream, || {
        data_t.copy_from(stream, &pristine)?;
        correlation_twin(
            stream,
            m,
            n,
            &mut data_t,
            &mut mean_t,
            &mut std_t,
            &mut symmat_t,
        )
    })?;
    agree(
        "correlation",
        &symmat.to_host(stream)?,
        &symmat_t.to_host(stream)?,
        1e-4,
    );
    Ok(row(
        "port correlation",
        format!("{n} x {m}"),
        ms,
        twin_ms,
        (m * m * n) as f64 / 2e9,
        "Gmac/s",
    ))
}

/// `steps` time steps of fdtd-2d over the CUDA C twins.
fn fdtd_twin(
    stream: &Stream,
    fict: &DeviceBuffer<f32>,
    steps: usize,
    fields: &mut Fields,
    nx: usize,
    ny: usize,
) -> gpu_dsl::Result<()> {
    let config = ports::grid_2d(nx, ny)?;
    for t in 0..steps {
        stream.launch(
            &FDTD_EY_C,
            config,
            &[
                KernelArg::scalar(nx as i32),
                KernelArg::scalar(ny as i32),
                KernelArg::slice(fict),
                KernelArg::slice(&fields.hz),
                KernelArg::slice_mut(&mut fields.ey),
                KernelArg::scalar(t as i32),
            ],
        )?;
        stream.launch(
            &FDTD_EX_C,
            config,
            &[
                KernelArg::scalar(nx as i32),
                KernelArg::scalar(ny as i32),
                KernelArg::slice(&fields.hz),
                KernelArg::slice_mut(&mut fields.ex),
            ],
        )?;
        stream.launch(
            &FDTD_HZ_C,
            config,
            &[
                KernelArg::scalar(nx as i32),
                KernelArg::scalar(ny as i32),
                KernelArg::slice(&fields.ex),
                KernelArg::slice(&fields.ey),
                KernelArg::slice_mut(&mut fields.hz),
            ],
        )?;
    }
    Ok(())
}

fn fdtd_2d(stream: &Stream, nx: usize, ny: usize, steps: usize) -> gpu_dsl::Result<Row> {
    let fict = DeviceBuffer::from_host(stream, &values(steps, 212))?;
    let start = [
        values(nx * (ny + 1), 213),
        values((nx + 1) * ny, 214),
        values(nx * ny, 215),
    ];
    let fields = || -> gpu_dsl::Result<Fields> {
        let [ex, ey, hz] = start.each_ref().map(|f| DeviceBuffer::from_host(stream, f));
        Ok(Fields {
            ex: ex?,
            ey: ey?,
            hz: hz?,
        })
    };
    let (mut ours, mut theirs) = (fields()?, fields()?);
    let port =
        |f: &mut Fields| (0..steps).try_for_each(|t| ports::fdtd_step(stream, &fict, t, f, nx, ny));
    let ms = median_ms(stream, || port(&mut ours))?;
    let twin_ms = median_ms(stream, || {
        fdtd_twin(stream, &fict, steps, &mut theirs, nx, ny)
    })?;
    // Each run advances the fields: compare one run of each from the same start.
    (ours, theirs) = (fields()?, fields()?);
    port(&mut ours)?;
    fdtd_twin(stream, &fict, steps, &mut theirs, nx, ny)?;
    agree(
        "fdtd-2d",
        &ours.hz.to_host(stream)?,
        &theirs.hz.to_host(stream)?,
        1e-5,
    );
    Ok(row(
        "port fdtd-2d",
        format!("{nx} x {ny}, {steps} steps"),
        ms,
        twin_ms,
        (nx * ny * steps) as f64 / 1e9,
        "Gcell/s",
    ))
}

fn cutcp(stream: &Stream, dims: [usize; 3]) -> gpu_dsl::Result<Row> {
    let (h, cutoff) = (0.5f32, 2.0 * BIN_LENGTH);
    // About six atoms a bin, as Parboil's water box fills its bins, charges away from zero.
    let extent = dims.map(|d| d as f32 * h);
    let atom_count = 6 * dims.iter().map(|d| d / 8).product::<usize>();
    let atoms: Vec<[f32; 4]> = values(4 * atom_count, 216)
        .chunks(4)
        .enumerate()
        .map(|(k, c)| {
            // `values` repeats with a short period: spread the atoms by their number too.
            let spread = (k as f32 * 0.618_034).fract();
            let q = if c[3] < 0.0 { c[3] - 0.5 } else { c[3] + 0.5 };
            [
                (0.5 + 0.5 * c[0]) * extent[0],
                ((0.5 + 0.5 * c[1]) + spread).fract() * extent[1],
                ((0.5 + 0.5 * c[2]) + 2.0 * spread).fract() * extent[2],
                q,
            ]
        })
        .collect();
    let bins = ports::cutcp_bins(&atoms, dims, h, cutoff);
    let list = ports::cutcp_neighbours(cutoff);
    let table = ports::cutcp_table(&list);
    let words = DeviceBuffer::from_host(stream, &bins.words)?;
    let points: usize = dims.iter().product();
    let mut regions = DeviceBuffer::<f32>::zeroed(stream, points)?;
    let mut regions_twin = DeviceBuffer::<f32>::zeroed(stream, points)?;
    let config = LaunchConfig::new(
        Grid::try_xyz(dims[0] / 8, dims[1] / 8, dims[2] / 8)?,
        CUTCP_BLOCK,
    );
    let cutoff2 = cutoff * cutoff;
    let ms = median_ms(stream, || {
        ports::cutcp(
            stream,
            &table,
            list.len(),
            &bins,
            &words,
            dims,
            h,
            cutoff,
            &mut regions,
        )
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &CUTCP_C,
            config,
            &[
                KernelArg::scalar(list.len() as i32),
                KernelArg::scalar(bins.dims[0] as i32),
                KernelArg::scalar(bins.dims[1] as i32),
                KernelArg::scalar(bins.pad as i32),
                KernelArg::slice(&words),
                KernelArg::scalar(h),
                KernelArg::scalar(cutoff2),
                KernelArg::scalar(1.0 / cutoff2),
                KernelArg::slice_mut(&mut regions_twin),
            ],
        )
    })?;
    agree(
        "cutcp",
        &regions.to_host(stream)?,
        &regions_twin.to_host(stream)?,
        1e-4,
    );
    Ok(row(
        "port cutcp",
        format!(
            "{}x{}x{} points, {} atoms",
            dims[0],
            dims[1],
            dims[2],
            bins.kept.len()
        ),
        ms,
        twin_ms,
        points as f64 / 1e9,
        "Gpoint/s",
    ))
}

fn merge_sort_shared(stream: &Stream, n: usize) -> gpu_dsl::Result<Row> {
    let keys: Vec<u32> = values(n, 217)
        .iter()
        .enumerate()
        .map(|(i, v)| ((v + 1.0) * 1e6) as u32 ^ (i as u32).wrapping_mul(0x9e37_79b9) >> 12)
        .collect();
    let vals: Vec<u32> = (0..n as u32).collect();
    let k = DeviceBuffer::from_host(stream, &keys)?;
    let v = DeviceBuffer::from_host(stream, &vals)?;
    let alloc = || DeviceBuffer::<u32>::zeroed(stream, n);
    let (mut dk, mut dv, mut dk_t, mut dv_t) = (alloc()?, alloc()?, alloc()?, alloc()?);
    let config = ports::merge_sort_config(n)?;
    let ms = median_ms(stream, || {
        ports::merge_sort_shared::launch::<true>(
            stream,
            config,
            &k,
            &v,
            &mut dk,
            &mut dv,
            SHARED_SIZE_LIMIT,
        )
    })?;
    let twin_ms = median_ms(stream, || {
        stream.launch(
            &MERGE_SORT_SHARED_C,
            config,
            &[
                KernelArg::slice(&k),
                KernelArg::slice(&v),
                KernelArg::slice_mut(&mut dk_t),
                KernelArg::slice_mut(&mut dv_t),
                KernelArg::scalar(SHARED_SIZE_LIMIT as u32),
            ],
        )
    })?;
    agree_exact(
        "merge sort keys",
        &dk.to_host(stream)?,
        &dk_t.to_host(stream)?,
        0,
    );
    agree_exact(
        "merge sort values",
        &dv.to_host(stream)?,
        &dv_t.to_host(stream)?,
        0,
    );
    Ok(row(
        "port merge sort shared",
        format!("{n} pairs"),
        ms,
        twin_ms,
        n as f64 / 1e9,
        "Gpair/s",
    ))
}
