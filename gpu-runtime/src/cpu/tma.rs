//! Tensor copies on the CPU: `cp.async.bulk.tensor.2d` moves a box of a tensor map into
//! shared memory at once, in the layout its swizzle gives, and completes its bytes on the
//! mbarrier named, as the hardware's copy does when it lands.

use crate::core::scalar::Scalar;
use crate::core::tensor_map::TmaGeometry;
use crate::cpu::mbarrier::mbarrier_complete_tx;
use crate::cpu::slice::CpuSlice;
use crate::cpu::thread::ThreadCtx;

/// A `&TensorMap<T>` parameter as a CPU twin holds it: the buffer, read only, and its geometry.
#[derive(Clone, Copy)]
pub struct CpuTensorMap<'a, T> {
    data: CpuSlice<'a, T>,
    geometry: Option<TmaGeometry>,
}

impl<'a, T> CpuTensorMap<'a, T> {
    /// The map over `data`; `None` for an argument that could not be read (already reported).
    pub(crate) fn new(data: CpuSlice<'a, T>, geometry: Option<TmaGeometry>) -> Self {
        CpuTensorMap { data, geometry }
    }
}

/// `tma_load_2d`: the box of `map` whose first element is column `x`, row `y` of the tensor
/// into shared memory from element `dst_index` of `dst` on, its bytes completed on
/// `bars[bar]`. Elements outside the tensor (coordinates may be negative) arrive as zeros.
#[allow(clippy::too_many_arguments)]
pub fn tma_load_2d<D: Scalar, S: Scalar>(
    t: &ThreadCtx,
    dst: CpuSlice<'_, D>,
    dst_index: usize,
    map: &CpuTensorMap<'_, S>,
    x: i32,
    y: i32,
    bars: CpuSlice<'_, u64>,
    bar: usize,
    line: u32,
) {
    let Some(geometry) = map.geometry else {
        return;
    };
    let (dst_size, src_size) = (std::mem::size_of::<D>(), std::mem::size_of::<S>());
    let base = dst_index * dst_size;
    let box_bytes = geometry.box_bytes() as usize;
    if !base.is_multiple_of(128) {
        t.contract_error(format!(
            "tma_load_2d at line {line}: shared index {dst_index} is not on a 128-byte boundary"
        ));
        return;
    }
    if (base + box_bytes).div_ceil(dst_size) > dst.len() {
        t.contract_error(format!(
            "tma_load_2d at line {line}: a box of {box_bytes} bytes from shared index \
             {dst_index} overruns the shared memory ({} elements of {dst_size} bytes)",
            dst.len()
        ));
        return;
    }
    let row_bytes = geometry.box_cols as usize * src_size;
    let (rows, cols) = (geometry.rows as i64, geometry.cols as i64);
    for r in 0..geometry.box_rows as usize {
        let row = i64::from(y) + r as i64;
        for chunk in 0..row_bytes / 16 {
            let mut bytes = [0u8; 16];
            for (e, out) in bytes.chunks_exact_mut(src_size).enumerate() {
                let col = i64::from(x) + (chunk * 16 / src_size + e) as i64;
                if (0..rows).contains(&row) && (0..cols).contains(&col) {
                    let at = row as usize * geometry.row_stride as usize + col as usize;
                    let bits = map.data.get(at, t, line).to_bits();
                    out.copy_from_slice(&bits.to_le_bytes()[..src_size]);
                }
            }
            let offset = geometry.swizzle.apply(base + r * row_bytes + chunk * 16);
            for (e, part) in bytes.chunks_exact(dst_size).enumerate() {
                let mut word = [0u8; 8];
                word[..dst_size].copy_from_slice(part);
                dst.set(
                    offset / dst_size + e,
                    D::from_bits(u64::from_le_bytes(word)),
                    t,
                    line,
                );
            }
        }
    }
    mbarrier_complete_tx(t, bars, bar, geometry.box_bytes(), line);
}
