//! User-defined data in kernels: shared memory of arrays, `#[device]` structs with methods and
//! operators, and fieldless enums, each run on the test device and compared with the CPU.

mod common;

use common::{assert_compiles_with_nvrtc, random_f32};
use gpu::prelude::*;
use gpu::runtime::test_device;

/// The classic transpose through a padded 2D tile: `tile[r][c]` with one column of padding
/// against shared-memory bank conflicts.
#[kernel]
fn transpose_tiled(rows: usize, cols: usize, x: &[f32], y: &mut [f32]) {
    let tile = shared_array::<[f32; 33], 32>();
    let tx = thread_idx().x as usize;
    let ty = thread_idx().y as usize;
    let c = block_idx().x as usize * 32 + tx;
    let r = block_idx().y as usize * 32 + ty;
    if r < rows && c < cols {
        tile[ty][tx] = x[r * cols + c];
    }
    sync_threads();
    let oc = block_idx().y as usize * 32 + tx;
    let or = block_idx().x as usize * 32 + ty;
    if or < cols && oc < rows {
        y[or * rows + oc] = tile[tx][ty];
    }
}

#[test]
fn transpose_through_a_2d_shared_tile() {
    assert_compiles_with_nvrtc(&[(&transpose_tiled::KERNEL, &[])]);
    let gpu = test_device();
    let stream = gpu.default_stream();
    let (rows, cols) = (70, 45);
    let host = random_f32(rows * cols, 7);
    let x = DeviceBuffer::from_host(&stream, &host).unwrap();
    let mut y = DeviceBuffer::zeroed(&stream, rows * cols).unwrap();
    let grid = Grid::xy(cols.div_ceil(32) as u32, rows.div_ceil(32) as u32);
    let config = LaunchConfig::new(grid, Block::xy(32, 32));
    transpose_tiled::launch(&stream, config, rows, cols, &x, &mut y).unwrap();
    let got = y.to_host(&stream).unwrap();
    for r in 0..rows {
        for c in 0..cols {
            assert_eq!(got[c * rows + r], host[r * cols + c], "element ({r}, {c})");
        }
    }
}
