//! The weights file: a small versioned binary format.
//!
//! Layout (all integers u32 little-endian): magic `MLPWGHTS`, version, layer count, then each
//! layer's inputs and outputs, then each layer's weights (`inputs × outputs` f32 LE, row-major)
//! and biases (`outputs` f32 LE), then the SHA-256 of everything before it.

use std::path::Path;

use sha2::{Digest, Sha256};

use crate::error::{io, Error, Result};
use crate::train::{Layer, Model};

/// The first eight bytes of a weights file.
const MAGIC: &[u8; 8] = b"MLPWGHTS";
/// The format version this code writes and reads.
const VERSION: u32 = 1;
/// Bytes of the trailing checksum.
const CHECKSUM_LEN: usize = 32;

/// The file name of the weights in the output folder.
pub const FILE_NAME: &str = "weights.bin";

/// Serialises `model`.
pub fn to_bytes(model: &Model) -> Vec<u8> {
    let mut bytes = MAGIC.to_vec();
    bytes.extend(VERSION.to_le_bytes());
    bytes.extend((model.layers.len() as u32).to_le_bytes());
    for layer in &model.layers {
        bytes.extend((layer.inputs as u32).to_le_bytes());
        bytes.extend((layer.outputs as u32).to_le_bytes());
    }
    for layer in &model.layers {
        for value in layer.weights.iter().chain(&layer.bias) {
            bytes.extend(value.to_le_bytes());
        }
    }
    let checksum = Sha256::digest(&bytes);
    bytes.extend(checksum);
    bytes
}

/// Writes `model` to `path` (through a temporary file, so a crash never leaves half a file).
pub fn save(path: &Path, model: &Model) -> Result<()> {
    let partial = path.with_extension("bin.part");
    std::fs::write(&partial, to_bytes(model)).map_err(io(&partial))?;
    std::fs::rename(&partial, path).map_err(io(path))
}

/// Reads the bytes of a weights file; `path` is only for messages.
pub fn from_bytes(path: &Path, bytes: &[u8]) -> Result<Model> {
    let bad = |problem: String| Error::Checkpoint {
        path: path.to_path_buf(),
        problem,
    };
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        return Err(bad("not a weights file (wrong magic)".to_string()));
    }
    if bytes.len() < MAGIC.len() + 8 + CHECKSUM_LEN {
        return Err(bad(format!("truncated: {} bytes", bytes.len())));
    }
    let (body, checksum) = bytes.split_at(bytes.len() - CHECKSUM_LEN);
    let mut reader = Reader {
        bytes: body,
        at: MAGIC.len(),
    };
    let version = reader
        .u32()
        .ok_or_else(|| bad("truncated header".to_string()))?;
    if version != VERSION {
        return Err(bad(format!(
            "format version {version}, this program reads version {VERSION}"
        )));
    }
    if Sha256::digest(body).as_slice() != checksum {
        return Err(bad(
            "checksum mismatch: the file is truncated or corrupt".to_string()
        ));
    }
    let count = reader
        .u32()
        .ok_or_else(|| bad("truncated header".to_string()))? as usize;
    let mut dims = Vec::new();
    for l in 0..count {
        let (Some(inputs), Some(outputs)) = (reader.u32(), reader.u32()) else {
            return Err(bad(format!("truncated in the dimensions of layer {l}")));
        };
        dims.push((inputs as usize, outputs as usize));
    }
    for (l, pair) in dims.windows(2).enumerate() {
        if pair[0].1 != pair[1].0 {
            return Err(bad(format!(
                "layer {l} has {} outputs but layer {} has {} inputs",
                pair[0].1,
                l + 1,
                pair[1].0
            )));
        }
    }
    let mut layers = Vec::new();
    for (l, &(inputs, outputs)) in dims.iter().enumerate() {
        let weights = reader.f32s(inputs.saturating_mul(outputs));
        let bias = reader.f32s(outputs);
        let (Some(weights), Some(bias)) = (weights, bias) else {
            return Err(bad(format!("truncated in the values of layer {l}")));
        };
        layers.push(Layer {
            inputs,
            outputs,
            weights,
            bias,
        });
    }
    if reader.at != body.len() {
        return Err(bad(format!(
            "{} bytes after the last layer",
            body.len() - reader.at
        )));
    }
    if layers.is_empty() {
        return Err(bad("holds no layers".to_string()));
    }
    Ok(Model { layers })
}

/// Reads a weights file and checks that it fits data of `pixels` inputs and `classes` classes.
pub fn load(path: &Path, pixels: usize, classes: usize) -> Result<Model> {
    let bytes = std::fs::read(path).map_err(io(path))?;
    let model = from_bytes(path, &bytes)?;
    let first = model.layers[0].inputs;
    let last = model.layers[model.layers.len() - 1].outputs;
    if (first, last) != (pixels, classes) {
        return Err(Error::Checkpoint {
            path: path.to_path_buf(),
            problem: format!(
                "the model maps {first} inputs to {last} classes but the data has {pixels} \
                 pixels and {classes} classes"
            ),
        });
    }
    Ok(model)
}

/// A cursor over little-endian values; `None` past the end.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, len: usize) -> Option<&[u8]> {
        let end = self.at.checked_add(len)?;
        let slice = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(slice)
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    fn f32s(&mut self, count: usize) -> Option<Vec<f32>> {
        let bytes = self.take(count.checked_mul(4)?)?;
        Some(
            bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model() -> Model {
        Model {
            layers: vec![
                Layer {
                    inputs: 3,
                    outputs: 2,
                    weights: vec![0.5, -1.0, 2.0, 0.25, -0.125, 3.5],
                    bias: vec![0.1, -0.2],
                },
                Layer {
                    inputs: 2,
                    outputs: 4,
                    weights: (0..8).map(|i| i as f32 * 0.3).collect(),
                    bias: vec![1.0, 2.0, 3.0, 4.0],
                },
            ],
        }
    }

    fn problem(bytes: &[u8]) -> String {
        from_bytes(Path::new("w.bin"), bytes)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn round_trips_through_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        save(&path, &model()).unwrap();
        assert_eq!(load(&path, 3, 4).unwrap(), model());
    }

    #[test]
    fn dimensions_must_match_the_data() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        save(&path, &model()).unwrap();
        let msg = load(&path, 784, 10).unwrap_err().to_string();
        assert!(
            msg.contains(FILE_NAME) && msg.contains("784 pixels"),
            "{msg}"
        );
    }

    #[test]
    fn truncated_or_corrupt_files_are_errors_naming_the_file() {
        let bytes = to_bytes(&model());
        let msg = problem(&bytes[..bytes.len() - 5]);
        assert!(msg.starts_with("w.bin: checksum mismatch"), "{msg}");
        let msg = problem(&bytes[..10]);
        assert!(msg.starts_with("w.bin: truncated"), "{msg}");

        let mut flipped = bytes.clone();
        flipped[30] ^= 1;
        assert!(problem(&flipped).contains("checksum mismatch"));

        let mut magic = bytes.clone();
        magic[0] = b'X';
        assert!(problem(&magic).contains("wrong magic"));

        let mut version = bytes;
        version[8] = 9;
        assert!(problem(&version).contains("format version 9"));
    }

    #[test]
    fn inconsistent_layers_are_rejected() {
        let mut broken = model();
        broken.layers[1].inputs = 5;
        broken.layers[1].weights = vec![0.0; 20];
        let msg = problem(&to_bytes(&broken));
        assert!(
            msg.contains("layer 0 has 2 outputs but layer 1 has 5 inputs"),
            "{msg}"
        );
    }
}
