//! Tensor-core matrix multiply-accumulate on the CPU: `mma.sync.aligned.m16n8k16.row.col` with
//! f16 or bf16 inputs and f32 accumulators, a warp-wide operation.
//!
//! Each lane holds fragments of A (16x16), B (16x8) and C (16x8) in the PTX ISA's layout; the
//! lanes stage their fragments in block memory, meet at a warp rendezvous, and each computes
//! its own four elements of D = A * B + C from everyone's fragments. Stages are double-buffered
//! by the lane's count of MMAs: after a rendezvous a fast lane can reach its next MMA (writing
//! the other buffer) before a slow one has read this one, but not the one after, which needs
//! the slow lane to arrive first.

use half::{bf16, f16};

use crate::core::scalar::ScalarType;
use crate::cpu::block::MmaFragments;
use crate::cpu::thread::ThreadCtx;
use crate::cpu::warp::WarpOp;

/// The conversion of a tensor-core input type's 16-bit pattern to `f32`: `None` for types
/// other than `f16` and `bf16`.
pub(crate) fn half_to_f32(input: ScalarType) -> Option<fn(u16) -> f32> {
    match input {
        ScalarType::F16 => Some(|bits| f16::from_bits(bits).to_f32()),
        ScalarType::Bf16 => Some(|bits| bf16::from_bits(bits).to_f32()),
        _ => None,
    }
}

/// `D = A * B + C` for one warp: A 16x16 and B 16x8 in `input` (`F16` or `Bf16`) pairs packed
/// into `u32`s, C and D 16x8 in `f32`, every operand distributed over the 32 lanes as PTX's
/// `mma.m16n8k16` fragments. Every lane of the warp must call it (as `mma.sync.aligned`
/// requires); lanes that have returned contribute zeros. Returns this lane's fragment of D.
pub fn mma_m16n8k16(
    t: &ThreadCtx,
    input: ScalarType,
    acc: [f32; 4],
    a: [u32; 4],
    b: [u32; 2],
) -> [f32; 4] {
    let Some(to_f32) = half_to_f32(input) else {
        t.contract_error(format!(
            "mma_m16n8k16 takes f16 or bf16 inputs, not {input}"
        ));
        return acc;
    };
    let Some(seq) = t.block().stage_mma(t.linear(), a, b, acc) else {
        t.contract_error("mma_m16n8k16 staging failed (re-entered)".to_string());
        return acc;
    };
    // Meet the warp: afterwards every live lane has staged its fragments for `seq`.
    t.warp(WarpOp::Sync, u32::MAX, 0, 0);
    let warp_start = t.linear() - t.lane_id();
    let fetch = |source: u32| match t.block().staged_mma(warp_start + source, seq) {
        Some(f) if f.seq == seq => f,
        _ => MmaFragments::EMPTY,
    };
    let lane = t.lane_id();
    let (group, in_group) = (lane / 4, lane % 4);
    // The two rows of A and two columns of B this lane's elements of D need, converted once.
    let a_rows: [[f32; 16]; 2] = std::array::from_fn(|h| {
        std::array::from_fn(|k| to_f32(a_element(&fetch, group + 8 * h as u32, k as u32)))
    });
    let b_cols: [[f32; 16]; 2] = std::array::from_fn(|c| {
        std::array::from_fn(|k| to_f32(b_element(&fetch, k as u32, in_group * 2 + c as u32)))
    });
    std::array::from_fn(|i| {
        let mut sum = acc[i];
        for k in 0..16 {
            sum += a_rows[i / 2][k] * b_cols[i & 1][k];
        }
        sum
    })
}

/// A[row][k] from the lanes' A fragments (`lanes(l)`: lane l's): lane `(row % 8) * 4 + (k % 8) / 2`, element
/// `(k / 8) * 4 + (row / 8) * 2 + k % 2` (two per register, the even one in the low half).
fn a_element(lanes: &impl Fn(u32) -> MmaFragments, row: u32, k: u32) -> u16 {
    let lane = (row % 8) * 4 + (k % 8) / 2;
    let element = (k / 8) * 4 + (row / 8) * 2 + k % 2;
    half_of(lanes(lane).a[(element / 2) as usize], element % 2)
}

/// B[k][col] from the lanes' B fragments: lane `col * 4 + (k % 8) / 2`, element
/// `(k / 8) * 2 + k % 2`.
fn b_element(lanes: &impl Fn(u32) -> MmaFragments, k: u32, col: u32) -> u16 {
    let lane = col * 4 + (k % 8) / 2;
    let element = (k / 8) * 2 + k % 2;
    half_of(lanes(lane).b[(element / 2) as usize], element % 2)
}

/// The low (0) or high (1) 16 bits of a packed register.
fn half_of(register: u32, which: u32) -> u16 {
    (register >> (16 * which)) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds every lane's fragments from whole matrices, by the PTX ISA's layout tables.
    fn fragments(a: &[[f32; 16]; 16], b: &[[f32; 8]; 16]) -> [MmaFragments; 32] {
        let pack = |lo: f32, hi: f32| {
            u32::from(f16::from_f32(lo).to_bits()) | u32::from(f16::from_f32(hi).to_bits()) << 16
        };
        std::array::from_fn(|lane| {
            let (g, tig) = (lane / 4, lane % 4);
            let a_at = |i: usize| {
                let row = if i < 2 || (4..6).contains(&i) {
                    g
                } else {
                    g + 8
                };
                let col = tig * 2 + (i & 1) + if i >= 4 { 8 } else { 0 };
                a[row][col]
            };
            let b_at = |i: usize| {
                let row = tig * 2 + (i & 1) + if i >= 2 { 8 } else { 0 };
                b[row][g]
            };
            MmaFragments {
                seq: 0,
                a: [
                    pack(a_at(0), a_at(1)),
                    pack(a_at(2), a_at(3)),
                    pack(a_at(4), a_at(5)),
                    pack(a_at(6), a_at(7)),
                ],
                b: [pack(b_at(0), b_at(1)), pack(b_at(2), b_at(3))],
                c: [0.0; 4],
            }
        })
    }

    #[test]
    fn fragment_indexing_inverts_the_ptx_layout() {
        let a: [[f32; 16]; 16] =
            std::array::from_fn(|r| std::array::from_fn(|c| (r * 16 + c) as f32));
        let b: [[f32; 8]; 16] =
            std::array::from_fn(|r| std::array::from_fn(|c| (r * 8 + c) as f32));
        let all = fragments(&a, &b);
        let lanes = |lane: u32| all[lane as usize];
        let f = |bits: u16| f16::from_bits(bits).to_f32();
        for row in 0..16 {
            for k in 0..16 {
                assert_eq!(f(a_element(&lanes, row, k)), a[row as usize][k as usize]);
            }
        }
        for k in 0..16 {
            for col in 0..8 {
                assert_eq!(f(b_element(&lanes, k, col)), b[k as usize][col as usize]);
            }
        }
    }
}
