//! The geometry of a two-dimensional tensor map: what Hopper's tensor copies (TMA) read from
//! global memory and how they lay the box out in shared memory. Both backends check a map with
//! [`TmaGeometry::new`], so a map the driver would refuse is refused on the CPU backend too.

use crate::core::error::{Error, Result};

/// How a tensor copy permutes the 16-byte chunks of the box it writes into shared memory, so
/// that a warp reading a column of chunks hits distinct banks (and `wgmma` finds the layout its
/// descriptors name).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Swizzle {
    /// Rows stored as they are.
    None,
    /// Chunk bit 0 flipped by bit 7 of the byte address (a 256-byte pattern).
    B32,
    /// Chunk bits 0-1 flipped by bits 7-8 (a 512-byte pattern).
    B64,
    /// Chunk bits 0-2 flipped by bits 7-9 (a 1024-byte pattern), as `wgmma`'s 128-byte swizzle.
    B128,
}

impl Swizzle {
    /// The longest box row, in bytes, the mode permutes within.
    pub fn span(self) -> usize {
        match self {
            Swizzle::None => 256 * 8,
            Swizzle::B32 => 32,
            Swizzle::B64 => 64,
            Swizzle::B128 => 128,
        }
    }

    /// Where the byte at `offset` (from a 1024-byte aligned base) of the unswizzled box lands.
    pub fn apply(self, offset: usize) -> usize {
        let bits = match self {
            Swizzle::None => 0,
            Swizzle::B32 => 1,
            Swizzle::B64 => 3,
            Swizzle::B128 => 7,
        };
        offset ^ (((offset >> 7) & bits) << 4)
    }
}

/// A tensor map's geometry: `rows` rows of `cols` elements, `row_stride` elements apart, read
/// in boxes of `box_rows` × `box_cols` elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TmaGeometry {
    /// Bytes per element.
    pub elem_size: usize,
    /// Rows of the tensor (the outer dimension).
    pub rows: u64,
    /// Elements per row (the inner, contiguous dimension).
    pub cols: u64,
    /// Elements from one row's start to the next's.
    pub row_stride: u64,
    /// Rows per box.
    pub box_rows: u32,
    /// Elements per box row.
    pub box_cols: u32,
    /// The shared-memory layout of a box.
    pub swizzle: Swizzle,
}

impl TmaGeometry {
    /// Checks a map over a buffer of `buffer_len` elements of `elem_size` bytes whose first
    /// element lies at `address` against what the driver accepts.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        elem_size: usize,
        address: usize,
        buffer_len: usize,
        [rows, cols]: [usize; 2],
        row_stride: usize,
        [box_rows, box_cols]: [u32; 2],
        swizzle: Swizzle,
    ) -> Result<TmaGeometry> {
        let invalid = |reason: String| Err(Error::InvalidTensorMap { reason });
        if !matches!(elem_size, 1 | 2 | 4 | 8) {
            return invalid(format!(
                "elements of {elem_size} bytes: tensor copies move elements of 1, 2, 4 or 8 bytes"
            ));
        }
        if !address.is_multiple_of(16) {
            return invalid("the buffer does not start on a 16-byte boundary".to_string());
        }
        if rows == 0 || cols == 0 || rows as u64 > 1 << 32 || cols as u64 > 1 << 32 {
            return invalid(format!(
                "a {rows} × {cols} tensor: each dimension must be between 1 and 2^32"
            ));
        }
        if row_stride < cols || !(row_stride * elem_size).is_multiple_of(16) {
            return invalid(format!(
                "a row stride of {row_stride} elements: it must be at least the row length \
                 ({cols}) and a multiple of 16 bytes ({} elements)",
                16 / elem_size
            ));
        }
        let needed = (rows - 1)
            .checked_mul(row_stride)
            .and_then(|start| start.checked_add(cols));
        if needed.is_none_or(|needed| needed > buffer_len) {
            return invalid(format!(
                "{rows} rows of {cols} elements, {row_stride} apart, do not fit in a buffer of \
                 {buffer_len} elements"
            ));
        }
        let row_bytes = box_cols as usize * elem_size;
        if box_rows == 0 || box_cols == 0 || box_rows > 256 || box_cols > 256 {
            return invalid(format!(
                "a {box_rows} × {box_cols} box: each box dimension must be between 1 and 256"
            ));
        }
        if !row_bytes.is_multiple_of(16) {
            return invalid(format!(
                "a box row of {row_bytes} bytes: it must be a multiple of 16 bytes"
            ));
        }
        if row_bytes > swizzle.span() {
            return invalid(format!(
                "a box row of {row_bytes} bytes under {swizzle:?} swizzle, which permutes rows of \
                 at most {} bytes: narrow the box",
                swizzle.span()
            ));
        }
        Ok(TmaGeometry {
            elem_size,
            rows: rows as u64,
            cols: cols as u64,
            row_stride: row_stride as u64,
            box_rows,
            box_cols,
            swizzle,
        })
    }

    /// Bytes one box fills in shared memory (out-of-bounds elements included, as zeros): what a
    /// copy completes on its mbarrier.
    pub fn box_bytes(&self) -> u32 {
        self.box_rows * self.box_cols * self.elem_size as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swizzles_permute_chunks_within_their_pattern() {
        for (mode, pattern) in [
            (Swizzle::B32, 256),
            (Swizzle::B64, 512),
            (Swizzle::B128, 1024),
        ] {
            let mut seen: Vec<usize> = (0..2048).map(|b| mode.apply(b)).collect();
            seen.sort_unstable();
            assert!(seen.iter().copied().eq(0..2048));
            // Bytes stay in their 16-byte chunk and their pattern.
            assert!((0..2048).all(|b| mode.apply(b) % 16 == b % 16));
            assert!((0..2048).all(|b| mode.apply(b) / pattern == b / pattern));
        }
        // Row 3 of 128 bytes: chunk 1 goes to 1 ^ 3 = 2.
        assert_eq!(Swizzle::B128.apply(3 * 128 + 16 + 5), 3 * 128 + 32 + 5);
        assert_eq!(Swizzle::None.apply(3 * 128 + 16), 3 * 128 + 16);
    }

    #[test]
    fn maps_the_driver_refuses_are_refused() {
        let ok = TmaGeometry::new(2, 0, 64 * 64, [64, 64], 64, [64, 64], Swizzle::B128).unwrap();
        assert_eq!(ok.box_bytes(), 8192);
        let refused = [
            TmaGeometry::new(2, 8, 4096, [64, 64], 64, [64, 64], Swizzle::B128),
            TmaGeometry::new(2, 0, 4096, [64, 64], 60, [64, 64], Swizzle::B128),
            TmaGeometry::new(2, 0, 4096, [64, 64], 68, [64, 64], Swizzle::B128),
            TmaGeometry::new(2, 0, 4096, [64, 64], 64, [64, 128], Swizzle::B128),
            TmaGeometry::new(2, 0, 4096, [64, 64], 64, [64, 4], Swizzle::None),
            TmaGeometry::new(2, 0, 4096, [64, 64], 64, [300, 8], Swizzle::None),
            TmaGeometry::new(3, 0, 4096, [64, 64], 64, [8, 8], Swizzle::None),
            TmaGeometry::new(2, 0, 4096, [0, 64], 64, [8, 8], Swizzle::None),
        ];
        for result in refused {
            assert!(
                matches!(result, Err(Error::InvalidTensorMap { .. })),
                "{result:?}"
            );
        }
    }
}
