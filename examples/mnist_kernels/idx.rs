//! The IDX file format (MNIST's): a big-endian magic number whose low byte is the number of
//! dimensions, one big-endian u32 per dimension, then the data; files may be gzipped.

use std::io::Read;
use std::path::Path;

use crate::error::{io, Error, Result};

/// Magic number of an IDX file of unsigned bytes with three dimensions (images).
pub const IMAGES_MAGIC: u32 = 0x0000_0803;
/// Magic number of an IDX file of unsigned bytes with one dimension (labels).
pub const LABELS_MAGIC: u32 = 0x0000_0801;
/// The first two bytes of every gzip stream.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Images of one IDX file, still as bytes.
#[derive(Debug)]
pub struct Images {
    /// Number of images.
    pub count: usize,
    /// Rows of each image.
    pub rows: usize,
    /// Columns of each image.
    pub cols: usize,
    /// `count × rows × cols` pixels, row-major.
    pub pixels: Vec<u8>,
}

/// Reads a whole file, decompressing it when it starts with the gzip magic bytes (whatever its
/// name says).
pub fn read_maybe_gzip(path: &Path) -> Result<Vec<u8>> {
    let bytes = std::fs::read(path).map_err(io(path))?;
    if !bytes.starts_with(&GZIP_MAGIC) {
        return Ok(bytes);
    }
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes.as_slice())
        .read_to_end(&mut out)
        .map_err(|source| Error::Gzip {
            path: path.to_path_buf(),
            source,
        })?;
    Ok(out)
}

/// Splits an IDX header off `bytes`: checks the magic and returns the dimensions (big-endian
/// u32 each, one per dimension the magic declares) and the data after them.
fn idx_header<'a>(
    path: &Path,
    bytes: &'a [u8],
    magic: u32,
    kind: &'static str,
) -> Result<(Vec<usize>, &'a [u8])> {
    let dims = (magic & 0xff) as usize;
    let header_len = 4 + 4 * dims;
    let word = |i: usize| u32::from_be_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
    if bytes.len() < 4 {
        return Err(Error::Truncated {
            path: path.to_path_buf(),
            problem: format!(
                "truncated: {} bytes, too short for an IDX header",
                bytes.len()
            ),
        });
    }
    let found = word(0);
    if found != magic {
        return Err(Error::BadMagic {
            path: path.to_path_buf(),
            expected_kind: kind,
            found,
            expected: magic,
        });
    }
    if bytes.len() < header_len {
        return Err(Error::Truncated {
            path: path.to_path_buf(),
            problem: format!(
                "truncated: {} bytes, the IDX header alone is {header_len}",
                bytes.len()
            ),
        });
    }
    let shape = (0..dims).map(|d| word(4 + 4 * d) as usize).collect();
    Ok((shape, &bytes[header_len..]))
}

/// Checks that the data after the header is exactly `expected` bytes.
fn check_len(path: &Path, data: &[u8], expected: Option<usize>, what: &str) -> Result<()> {
    match expected {
        Some(expected) if data.len() == expected => Ok(()),
        Some(expected) if data.len() < expected => Err(Error::Truncated {
            path: path.to_path_buf(),
            problem: format!(
                "truncated: the header declares {what} ({expected} bytes of data) but only {} follow",
                data.len()
            ),
        }),
        Some(expected) => Err(Error::Truncated {
            path: path.to_path_buf(),
            problem: format!(
                "corrupt: the header declares {what} ({expected} bytes of data) but {} follow",
                data.len()
            ),
        }),
        None => Err(Error::Truncated {
            path: path.to_path_buf(),
            problem: format!("corrupt: the header declares {what}, too large to hold"),
        }),
    }
}

/// Parses an IDX image file (magic 0x00000803: count × rows × cols unsigned bytes).
pub fn parse_images(path: &Path, bytes: &[u8]) -> Result<Images> {
    let (shape, data) = idx_header(path, bytes, IMAGES_MAGIC, "images")?;
    let (count, rows, cols) = (shape[0], shape[1], shape[2]);
    let expected = count.checked_mul(rows).and_then(|n| n.checked_mul(cols));
    check_len(
        path,
        data,
        expected,
        &format!("{count} images of {rows}x{cols}"),
    )?;
    Ok(Images {
        count,
        rows,
        cols,
        pixels: data.to_vec(),
    })
}

/// Parses an IDX label file (magic 0x00000801: count unsigned bytes).
pub fn parse_labels(path: &Path, bytes: &[u8]) -> Result<Vec<u8>> {
    let (shape, data) = idx_header(path, bytes, LABELS_MAGIC, "labels")?;
    check_len(path, data, Some(shape[0]), &format!("{} labels", shape[0]))?;
    Ok(data.to_vec())
}
