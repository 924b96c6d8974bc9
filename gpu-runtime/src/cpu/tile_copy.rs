//! The data movement of tensor-core kernels on the CPU: `ldmatrix` (a warp-wide load of 8x8
//! matrices of 16-bit values from shared memory) and `cp.async` (a 16-byte copy from global
//! to shared memory).
//!
//! `ldmatrix` hands each lane elements of rows whose addresses other lanes gave, so the lanes
//! exchange their row indices at a warp rendezvous and each then reads its own elements.
//! `cp.async` copies at once: a kernel must wait for its copies and synchronise before reading
//! them, and a copy that has already landed is one of the behaviours a GPU allows.

use crate::core::scalar::Scalar;
use crate::cpu::slice::CpuSlice;
use crate::cpu::thread::ThreadCtx;
use crate::cpu::warp::WarpOp;

/// `ldmatrix.sync.aligned.m8n8.x{N}[.trans].shared.b16`: `N` (1, 2 or 4) 8x8 matrices of 16-bit
/// values; lane `8 * j + r` gives, as a word index into `shared`, row `r` of matrix `j` (16
/// bytes, so a multiple of 4). Lane `l` receives in word `j` elements `2 * (l % 4)` and the next
/// of row `l / 4` of matrix `j`, or with `trans` element `l / 4` of rows `2 * (l % 4)` and the
/// next, the even one in the low half. Every lane of the warp must call it.
pub fn ldmatrix<const N: usize>(
    t: &ThreadCtx,
    shared: CpuSlice<'_, u32>,
    index: usize,
    trans: bool,
    line: u32,
) -> [u32; N] {
    if !index.is_multiple_of(4) {
        t.contract_error(format!(
            "ldmatrix at line {line}: row index {index} is not a multiple of 4 words (16 bytes)"
        ));
    }
    // Every lane stages its row index where MMAs stage fragments (both are warp-wide, so the
    // lanes' counts stay in step) and meets the warp once; then each reads the rows it needs.
    let staged = [index as u32, (index >> 32) as u32, 0, 0];
    let Some(seq) = t.block().stage_mma(t.linear(), staged, [0; 2], [0.0; 4]) else {
        t.contract_error("ldmatrix staging failed (re-entered)".to_string());
        return [0; N];
    };
    t.warp(WarpOp::Sync, u32::MAX, 0, 0);
    let warp_start = t.linear() - t.lane_id();
    // The word index another lane gave for its row (0 for a lane that has returned).
    let row = |source: u32| match t.block().staged_mma(warp_start + source, seq) {
        Some(f) if f.seq == seq => f.a[0] as usize | (f.a[1] as usize) << 32,
        _ => 0,
    };
    let lane = t.lane_id();
    let (group, quad) = (lane / 4, lane % 4);
    std::array::from_fn(|j| {
        let first = 8 * j as u32;
        if trans {
            let (even, odd) = (row(first + 2 * quad), row(first + 2 * quad + 1));
            let word = (group / 2) as usize;
            let shift = 16 * (group % 2);
            let lo = (shared.get(even + word, t, line) >> shift) & 0xffff;
            let hi = (shared.get(odd + word, t, line) >> shift) & 0xffff;
            lo | hi << 16
        } else {
            shared.get(row(first + group) + quad as usize, t, line)
        }
    })
}

/// `cp.async.cg.shared.global` of 16 bytes: elements `src_index..` of `src` to elements
/// `dst_index..` of `dst` (both 16-byte aligned), or 16 zero bytes when `valid` is false (the
/// source is not read).
pub fn cp_async_16<D: Scalar, S: Scalar>(
    t: &ThreadCtx,
    dst: CpuSlice<'_, D>,
    dst_index: usize,
    src: CpuSlice<'_, S>,
    src_index: usize,
    valid: bool,
    line: u32,
) {
    let (dst_size, src_size) = (std::mem::size_of::<D>(), std::mem::size_of::<S>());
    if !(dst_index * dst_size).is_multiple_of(16)
        || (valid && !(src_index * src_size).is_multiple_of(16))
    {
        t.contract_error(format!(
            "cp_async_16 at line {line}: indices {dst_index} and {src_index} are not both at \
             16-byte boundaries"
        ));
        return;
    }
    let mut bytes = [0u8; 16];
    if valid {
        for (e, chunk) in bytes.chunks_exact_mut(src_size).enumerate() {
            let bits = src.get(src_index + e, t, line).to_bits();
            chunk.copy_from_slice(&bits.to_le_bytes()[..src_size]);
        }
    }
    for (e, chunk) in bytes.chunks_exact(dst_size).enumerate() {
        let mut word = [0u8; 8];
        word[..dst_size].copy_from_slice(chunk);
        dst.set(
            dst_index + e,
            D::from_bits(u64::from_le_bytes(word)),
            t,
            line,
        );
    }
}
