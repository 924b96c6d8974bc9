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

/// An operand as its descriptor lays it out: the byte offset (before swizzling) of element
/// (`mn`, `k`), where `mn` runs over M for A and N for B. K-major (`trans` false): rows of `mn`
/// are 128 bytes apart in groups of 8 that are `sbo` apart, and k runs along the row.
/// MN-major (`trans` true): 64 consecutive `mn` fill a 128-byte row, rows of k are 128 bytes
/// apart in groups of 8 that are `sbo` apart, and groups of 64 `mn` are `lbo` apart.
fn operand_offset(desc: u64, trans: bool, mn: usize, k: usize) -> usize {
    let start = ((desc & 0x3fff) << 4) as usize;
    let lbo = (((desc >> 16) & 0x3fff) << 4) as usize;
    let sbo = (((desc >> 32) & 0x3fff) << 4) as usize;
    if trans {
        start + (mn / 64) * lbo + (k / 8) * sbo + (k % 8) * 128 + (mn % 64) * 2
    } else {
        start + (mn / 8) * sbo + (mn % 8) * 128 + (k / 8) * 16 + (k % 8) * 2
    }
}

/// The 16-bit value at byte `offset` of `shared`.
fn half_at<T: Scalar>(t: &ThreadCtx, shared: &CpuSlice<'_, T>, offset: usize, line: u32) -> u16 {
    let size = std::mem::size_of::<T>();
    let byte = |at: usize| {
        let bits = shared.get(at / size, t, line).to_bits();
        (bits >> (8 * (at % size))) as u8
    };
    u16::from_le_bytes([byte(offset), byte(offset + 1)])
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
    let read = |desc: u64, trans: bool, mn: usize, k: usize| {
        let offset = swizzle(operand_offset(desc, trans, mn, k));
        to_f32(half_at(t, &shared, offset, line))
    };
    let a: [[f32; 16]; 2] =
        std::array::from_fn(|h| std::array::from_fn(|k| read(descs[0], trans[0], rows[h], k)));
    for j in 0..R / 4 {
        let cols = [8 * j + 2 * (lane % 4), 8 * j + 2 * (lane % 4) + 1];
        let b: [[f32; 16]; 2] =
            std::array::from_fn(|c| std::array::from_fn(|k| read(descs[1], trans[1], cols[c], k)));
        for i in 0..4 {
            let (row, col) = (&a[i / 2], &b[i % 2]);
            let mut sum = if accumulate { acc[4 * j + i] } else { 0.0 };
            for k in 0..16 {
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
    fn operand_offsets_follow_the_descriptor() {
        let desc = (2048u64 >> 4) | (8192u64 >> 4) << 16 | (1024u64 >> 4) << 32 | 1 << 62;
        // K-major: row 9 is in the second 8-row group, k 10 in the second 16-byte chunk.
        assert_eq!(
            operand_offset(desc, false, 9, 10),
            2048 + 1024 + 128 + 16 + 4
        );
        // MN-major: mn 70 is in the second 64-wide group, k 9 in the second 8-row group.
        assert_eq!(
            operand_offset(desc, true, 70, 9),
            2048 + 8192 + 1024 + 128 + 12
        );
    }
}
