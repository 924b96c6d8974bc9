//! Host reference of the counter-based generator kernels use: Philox4x32-10 (Random123).
//!
//! Device code computes the same function, so a host test can predict every random number a
//! kernel draws from its (counter, key). Written here rather than taken from a crate because it
//! is twenty lines and must match the device side bit for bit, which a crate's API (streams,
//! seeding conventions) would hide.

/// First Philox4x32 round multiplier.
const M0: u32 = 0xD251_1F53;
/// Second Philox4x32 round multiplier.
const M1: u32 = 0xCD9E_8D57;
/// Weyl increment of the first key word (golden ratio).
const W0: u32 = 0x9E37_79B9;
/// Weyl increment of the second key word (sqrt(3) - 1).
const W1: u32 = 0xBB67_AE85;

/// The high and low halves of a 32 x 32 -> 64-bit product.
fn mul_hi_lo(a: u32, b: u32) -> (u32, u32) {
    let product = u64::from(a) * u64::from(b);
    ((product >> 32) as u32, product as u32)
}

/// One Philox4x32 round.
fn round(ctr: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let (hi0, lo0) = mul_hi_lo(M0, ctr[0]);
    let (hi1, lo1) = mul_hi_lo(M1, ctr[2]);
    [hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0]
}

/// Philox4x32 with `rounds` rounds; the key is bumped between rounds as Random123 does.
fn philox4x32(counter: [u32; 4], key: [u32; 2], rounds: u32) -> [u32; 4] {
    let mut ctr = counter;
    let mut key = key;
    for r in 0..rounds {
        if r > 0 {
            key = [key[0].wrapping_add(W0), key[1].wrapping_add(W1)];
        }
        ctr = round(ctr, key);
    }
    ctr
}

/// Random123's Philox4x32-10: four random 32-bit words from a 128-bit counter and 64-bit key.
pub fn philox4x32_10(counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    philox4x32(counter, key, 10)
}

/// Maps 32 random bits to an `f32` uniform in `[0, 1)`: the top 24 bits times 2^-24, exactly
/// as the device side does, so host and device agree bit for bit.
pub fn uniform_f32(bits: u32) -> f32 {
    // 24 bits fit the f32 mantissa, so both the conversion and the scaling are exact.
    (bits >> 8) as f32 * (1.0 / 16_777_216.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Known-answer vectors from Random123's `kat_vectors` file: counter, key, expected.
    #[allow(clippy::type_complexity)]
    const KAT_10: [([u32; 4], [u32; 2], [u32; 4]); 3] = [
        (
            [0; 4],
            [0; 2],
            [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8],
        ),
        (
            [u32::MAX; 4],
            [u32::MAX; 2],
            [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd],
        ),
        (
            [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344],
            [0xa409_3822, 0x299f_31d0],
            [0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1],
        ),
    ];

    #[test]
    fn philox4x32_10_known_answers() {
        for (counter, key, expected) in KAT_10 {
            assert_eq!(
                philox4x32_10(counter, key),
                expected,
                "counter {counter:08x?} key {key:08x?}"
            );
        }
    }

    #[test]
    fn philox4x32_7_known_answers() {
        // The same file's 7-round vectors pin the round function and key schedule separately
        // from the round count.
        let cases = [
            (
                [0; 4],
                [0; 2],
                [0x5f6f_b709, 0x0d89_3f64, 0x4f12_1f81, 0x4f73_0a48],
            ),
            (
                [u32::MAX; 4],
                [u32::MAX; 2],
                [0x5207_ddc2, 0x4516_5e59, 0x4d8e_e751, 0x8c52_f662],
            ),
            (
                [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344],
                [0xa409_3822, 0x299f_31d0],
                [0x4dfc_caba, 0x190a_87f0, 0xc473_62ba, 0xb6b5_242a],
            ),
        ];
        for (counter, key, expected) in cases {
            assert_eq!(philox4x32(counter, key, 7), expected);
        }
    }

    #[test]
    fn uniform_f32_range_and_resolution() {
        assert_eq!(uniform_f32(0), 0.0);
        assert_eq!(uniform_f32(0xff), 0.0, "the low 8 bits are dropped");
        assert_eq!(uniform_f32(0x100), 1.0 / 16_777_216.0);
        assert_eq!(uniform_f32(0x8000_0000), 0.5);
        let top = uniform_f32(u32::MAX);
        assert!(top < 1.0, "{top}");
        assert_eq!(top, 1.0 - 1.0 / 16_777_216.0);
    }
}
