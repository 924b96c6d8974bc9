//! Hopper's warpgroup matrix multiply on the CPU: `wgmma.mma_async` reading both operands from
//! shared memory through 128-byte-swizzled descriptors.
//!
//! A descriptor made here holds the operand's byte offset within its shared array instead of a
//! shared-window address, so `wgmma` reads the array it is given. The GPU runs the multiply
//! asynchronously until `wgmma.wait_group`; here it runs at the call, which is one of the
//! behaviours the GPU allows a correct kernel (one that leaves the tiles alone until the wait).
//! Each thread computes its own accumulators from shared memory, so no warp rendezvous is
//! needed.

use crate::core::scalar::{Scalar, ScalarType};
use crate::cpu::mma::half_to_f32;
use crate::cpu::slice::CpuSlice;
use crate::cpu::thread::ThreadCtx;
use crate::cpu::warp::WarpOp;

/// Threads of a warpgroup.
const WARPGROUP: u32 = 128;

/// The 128-byte swizzle: the 16-byte chunk (address bits 4-6) is XORed with the row of the
/// 1024-byte pattern (bits 7-9).
fn swizzle(offset: usize) -> usize {
    offset ^ (((offset >> 7) & 7) << 4)
}

/// The 128-byte-swizzle descriptor of the operand at element `index` of `shared`, with its
/// leading and stride byte offsets (see `wgmma`).
pub fn wgmma_desc<T: Scalar>(
    t: &ThreadCtx,
    shared: CpuSlice<'_, T>,
    index: usize,
    lbo: u32,
    sbo: u32,
    line: u32,
) -> u64 {
    let offset = index * std::mem::size_of::<T>();
    if !offset.is_multiple_of(16) || offset > shared.len() * std::mem::size_of::<T>() {
        t.contract_error(format!(
            "wgmma_desc at line {line}: element {index} is not a 16-byte boundary inside the \
             {} elements of shared memory",
            shared.len()
        ));
    }
    if !lbo.is_multiple_of(16) || !sbo.is_multiple_of(16) {
        t.contract_error(format!(
            "wgmma_desc at line {line}: byte offsets {lbo} and {sbo} are not multiples of 16"
        ));
    }
    let field = |bytes: u64| (bytes & 0x3ffff) >> 4;
    field(offset as u64) | field(u64::from(lbo)) << 16 | field(u64::from(sbo)) << 32 | 1 << 62
}

/// An operand of `size`-byte elements as its descriptor lays it out: the byte offset (before
/// swizzling) of element (`mn`, `k`), where `mn` runs over M for A and N for B. K-major
/// (`trans` false): rows of `mn` are 128 bytes apart in groups of 8 that are `sbo` apart, and k
/// runs along the row. MN-major (`trans` true, 16-bit elements only): 64 consecutive `mn` fill
/// a 128-byte row, rows of k are 128 bytes apart in groups of 8 that are `sbo` apart, and
/// groups of 64 `mn` are `lbo` apart.
fn operand_offset(desc: u64, trans: bool, mn: usize, k: usize, size: usize) -> usize {
    let start = ((desc & 0x3fff) << 4) as usize;
    let lbo = (((desc >> 16) & 0x3fff) << 4) as usize;
    let sbo = (((desc >> 32) & 0x3fff) << 4) as usize;
    if trans {
        start + (mn / 64) * lbo + (k / 8) * sbo + (k % 8) * 128 + (mn % 64) * size
    } else {
        start + (mn / 8) * sbo + (mn % 8) * 128 + k * size
    }
}

/// `wgmma.mma_async.sync.aligned.m64n{2R}k16.f32.{input}.{input}`: this thread's `R`
/// accumulators of the warpgroup's 64×2R product of A (`descs[0]`, 64×16) and B (`descs[1]`,
/// 16×2R), added to them when `accumulate`, overwriting them otherwise; `trans` gives each
/// operand's layout (false: K-major, true: MN-major). Thread `p` of the warpgroup holds rows
/// `16·(p / 32) + (p % 32) / 4` and 8 below it, columns `8j + 2·(p % 4)` and the next.
#[allow(clippy::too_many_arguments)]
pub fn wgmma<T: Scalar, const R: usize>(
    t: &ThreadCtx,
    input: ScalarType,
    acc: &mut [f32; R],
    shared: CpuSlice<'_, T>,
    descs: [u64; 2],
    accumulate: bool,
    trans: [bool; 2],
    line: u32,
) {
    let Some(to_f32) = half_to_f32(input) else {
        t.contract_error(format!(
            "wgmma at line {line} takes f16 or bf16 inputs, not {input}"
        ));
        return;
    };
    let read = |which: usize, mn: usize, k: usize| {
        let offset = swizzle(operand_offset(descs[which], trans[which], mn, k, 2));
        to_f32(u16::from_le_bytes(bytes_at(t, &shared, offset, line)))
    };
    multiply::<16, R>(t, acc, accumulate, line, read);
}

/// `wgmma.mma_async.sync.aligned.m64n{2R}k8.f32.tf32.tf32`: [`wgmma`] for `f32` words in
/// shared memory read as TF32, 64×2R×8, both operands K-major (PTX has no transpose for TF32).
///
/// The tensor cores use a TF32 operand's sign, exponent and top 10 mantissa bits and ignore
/// the low 13: the value is truncated toward zero to TF32. So does this twin, so that both
/// backends multiply the same numbers. (PTX names the operand type `.tf32` and allows the
/// transpose immediates for `.f16`/`.bf16` alone; the CUDA guide calls TF32's layout
/// implementation-defined and offers `__float_to_tf32` (`cvt.rna.tf32.f32`) to round first.
/// Feeding `f32` words unconverted and getting them truncated is what Hopper does, and what
/// kernels that `wgmma` `f32` tiles straight from memory rely on; `gemm_tf32`'s tests check
/// it on the GPU against products of truncated inputs, with a bound rounding would exceed.)
pub fn wgmma_tf32<T: Scalar, const R: usize>(
    t: &ThreadCtx,
    acc: &mut [f32; R],
    shared: CpuSlice<'_, T>,
    descs: [u64; 2],
    accumulate: bool,
    line: u32,
) {
    let read = |which: usize, mn: usize, k: usize| {
        let offset = swizzle(operand_offset(descs[which], false, mn, k, 4));
        to_tf32(f32::from_bits(u32::from_le_bytes(bytes_at(
            t, &shared, offset, line,
        ))))
    };
    multiply::<8, R>(t, acc, accumulate, line, read);
}

/// `wgmma.mma_async.sync.aligned.m64n{2R}k8.f32.tf32.tf32` with A from registers: [`wgmma_tf32`]
/// with the 64×8 A given by the warpgroup's fragments, B from its K-major descriptor.
///
/// Warp `w` of the warpgroup holds rows `16w..16w + 16` of A as `mma.m16n8k8` holds its A:
/// lane `l` has `a[r]` = A[`16w + l / 4 + 8·(r % 2)`][`l % 4 + 4·(r / 2)`]. A row's 8 values
/// lie with the 4 lanes of its quad, so the lanes stage their fragments and meet at a warp
/// rendezvous, as `mma` does; every lane of the warp must call it.
#[allow(clippy::too_many_arguments)]
pub fn wgmma_tf32_rs<T: Scalar, const R: usize>(
    t: &ThreadCtx,
    acc: &mut [f32; R],
    a: [f32; 4],
    shared: CpuSlice<'_, T>,
    desc: u64,
    accumulate: bool,
    line: u32,
) {
    let Some(seq) = t
        .block()
        .stage_mma(t.linear(), a.map(f32::to_bits), [0; 2], [0.0; 4])
    else {
        t.contract_error(format!(
            "wgmma at line {line}: staging A's fragments failed (re-entered)"
        ));
        return;
    };
    // Meet the warp: afterwards every live lane has staged its fragment for `seq`.
    t.warp(WarpOp::Sync, u32::MAX, 0, 0);
    let warp_start = t.linear() - t.lane_id();
    // Row `mn` of the warpgroup's A is one of this warp's (multiply asks for no other).
    let fragment = |mn: usize, k: usize| {
        let lane = (4 * (mn % 8) + k % 4) as u32;
        match t.block().staged_mma(warp_start + lane, seq) {
            Some(f) if f.seq == seq => f32::from_bits(f.a[(mn % 16) / 8 + 2 * (k / 4)]),
            _ => 0.0,
        }
    };
    let read = |which: usize, mn: usize, k: usize| {
        if which == 0 {
            to_tf32(fragment(mn, k))
        } else {
            let offset = swizzle(operand_offset(desc, false, mn, k, 4));
            to_tf32(f32::from_bits(u32::from_le_bytes(bytes_at(
                t, &shared, offset, line,
            ))))
        }
    };
    multiply::<8, R>(t, acc, accumulate, line, read);
}

/// `x` truncated to TF32: its low 13 mantissa bits cleared, as the tensor cores read it.
pub fn to_tf32(x: f32) -> f32 {
    f32::from_bits(x.to_bits() & !0x1fff)
}

/// The `N` bytes from byte `offset` of `shared`, one read per element they overlap (one for
/// an aligned f32 word in `u32` or `f32` memory).
fn bytes_at<T: Scalar, const N: usize>(
    t: &ThreadCtx,
    shared: &CpuSlice<'_, T>,
    offset: usize,
    line: u32,
) -> [u8; N] {
    let size = std::mem::size_of::<T>();
    let mut out = [0u8; N];
    let mut i = 0;
    while i < N {
        let at = offset + i;
        let bits = shared.get(at / size, t, line).to_bits();
        for byte in at % size..size.min(at % size + N - i) {
            out[i] = (bits >> (8 * byte)) as u8;
            i += 1;
        }
    }
    out
}

/// This thread's `R` accumulators of a warpgroup's 64×2R×K product, each operand element
/// given by `read(operand, mn, k)` (operand 0 is A, 1 is B); see [`wgmma`] for the layout.
fn multiply<const K: usize, const R: usize>(
    t: &ThreadCtx,
    acc: &mut [f32; R],
    accumulate: bool,
    line: u32,
    read: impl Fn(usize, usize, usize) -> f32,
) {
    if !t.block_threads().is_multiple_of(WARPGROUP) {
        t.contract_error(format!(
            "wgmma at line {line}: a block of {} threads is not whole warpgroups of 128",
            t.block_threads()
        ));
        return;
    }
    let p = t.linear() % WARPGROUP;
    let (warp, lane) = ((p / 32) as usize, (p % 32) as usize);
    let rows = [16 * warp + lane / 4, 16 * warp + lane / 4 + 8];
    let a: [[f32; K]; 2] = std::array::from_fn(|h| std::array::from_fn(|k| read(0, rows[h], k)));
    for j in 0..R / 4 {
        let cols = [8 * j + 2 * (lane % 4), 8 * j + 2 * (lane % 4) + 1];
        let b: [[f32; K]; 2] =
            std::array::from_fn(|c| std::array::from_fn(|k| read(1, cols[c], k)));
        for i in 0..4 {
            let (row, col) = (&a[i / 2], &b[i % 2]);
            let mut sum = if accumulate { acc[4 * j + i] } else { 0.0 };
            for k in 0..K {
                sum += row[k] * col[k];
            }
            acc[4 * j + i] = sum;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swizzle_permutes_chunks_within_each_1024_bytes() {
        // Row r of a pattern moves chunk c to c ^ r; bytes within a chunk stay in order.
        assert_eq!(swizzle(0), 0);
        assert_eq!(swizzle(128 + 2), 128 + 16 + 2);
        assert_eq!(swizzle(7 * 128 + 7 * 16), 7 * 128);
        assert_eq!(swizzle(1024 + 3 * 128 + 16), 1024 + 3 * 128 + 2 * 16);
        let mut seen: Vec<usize> = (0..1024).map(swizzle).collect();
        seen.sort_unstable();
        assert!(seen.iter().copied().eq(0..1024));
    }

    #[test]
    fn tf32_keeps_sign_exponent_and_ten_mantissa_bits() {
        assert_eq!(to_tf32(1.0), 1.0);
        // 1 + 2^-10 is a TF32 value; 1 + 2^-11 and anything below the next one truncate.
        assert_eq!(to_tf32(1.0 + 2f32.powi(-10)), 1.0 + 2f32.powi(-10));
        assert_eq!(to_tf32(1.0 + 2f32.powi(-11)), 1.0);
        assert_eq!(to_tf32(-(1.0 + 2f32.powi(-10) - 2f32.powi(-23))), -1.0);
        assert!(to_tf32(f32::NAN).is_nan());
        assert_eq!(to_tf32(f32::INFINITY), f32::INFINITY);
    }

    #[test]
    fn operand_offsets_follow_the_descriptor() {
        let desc = (2048u64 >> 4) | (8192u64 >> 4) << 16 | (1024u64 >> 4) << 32 | 1 << 62;
        // K-major: row 9 is in the second 8-row group, k 10 in the second 16-byte chunk.
        assert_eq!(
            operand_offset(desc, false, 9, 10, 2),
            2048 + 1024 + 128 + 16 + 4
        );
        // MN-major: mn 70 is in the second 64-wide group, k 9 in the second 8-row group.
        assert_eq!(
            operand_offset(desc, true, 70, 9, 2),
            2048 + 8192 + 1024 + 128 + 12
        );
        // K-major f32: k 10 is 40 bytes along its row.
        assert_eq!(
            operand_offset(desc, false, 9, 10, 4),
            2048 + 1024 + 128 + 40
        );
    }
}
