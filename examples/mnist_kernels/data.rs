//! Reading a dataset's four IDX files into [`Dataset`]s, and finding the data:
//! `--data DIR` / `MNIST_DIR`, then `./data/mnist`, then a download, then Debian's
//! Fashion-MNIST package.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::download;
use crate::error::{Error, Result};
use crate::idx::{parse_images, parse_labels, read_maybe_gzip, Images};
use crate::train::Dataset;

/// The four files of a dataset in MNIST's layout, without the optional `.gz`.
pub const FILE_NAMES: [&str; 4] = [TRAIN_IMAGES, TRAIN_LABELS, TEST_IMAGES, TEST_LABELS];
/// Training images.
pub const TRAIN_IMAGES: &str = "train-images-idx3-ubyte";
/// Training labels.
pub const TRAIN_LABELS: &str = "train-labels-idx1-ubyte";
/// Test images.
pub const TEST_IMAGES: &str = "t10k-images-idx3-ubyte";
/// Test labels.
pub const TEST_LABELS: &str = "t10k-labels-idx1-ubyte";

/// Where MNIST is looked for, and downloaded to, when no folder is given.
pub const DEFAULT_DIR: &str = "data/mnist";
/// Where Debian's `dataset-fashion-mnist` package installs its files.
pub const FASHION_MNIST_DIR: &str = "/usr/share/datasets/fashion-mnist";

/// The path of `name` in `dir`: the raw file when present, else `name.gz`.
fn find_file(dir: &Path, name: &'static str) -> Result<PathBuf> {
    let raw = dir.join(name);
    if raw.is_file() {
        return Ok(raw);
    }
    let gz = dir.join(format!("{name}.gz"));
    if gz.is_file() {
        return Ok(gz);
    }
    Err(Error::MissingFile {
        dir: dir.to_path_buf(),
        name,
    })
}

/// Whether `dir` holds all four files (raw or gzip).
pub fn has_all_files(dir: &Path) -> bool {
    FILE_NAMES.iter().all(|name| find_file(dir, name).is_ok())
}

/// One split read from disk, before the two splits are checked against each other.
struct Split {
    images_path: PathBuf,
    labels_path: PathBuf,
    images: Images,
    labels: Vec<u8>,
}

/// Reads one split's image and label files and checks that their counts agree.
fn read_split(dir: &Path, images_name: &'static str, labels_name: &'static str) -> Result<Split> {
    let images_path = find_file(dir, images_name)?;
    let labels_path = find_file(dir, labels_name)?;
    let images = parse_images(&images_path, &read_maybe_gzip(&images_path)?)?;
    let labels = parse_labels(&labels_path, &read_maybe_gzip(&labels_path)?)?;
    if images.count != labels.len() {
        return Err(Error::CountMismatch {
            images_path,
            images: images.count,
            labels_path,
            labels: labels.len(),
        });
    }
    Ok(Split {
        images_path,
        labels_path,
        images,
        labels,
    })
}

/// Scales bytes to f32 in [0, 1].
fn to_dataset(split: Split, classes: usize) -> Dataset {
    Dataset {
        images: split
            .images
            .pixels
            .iter()
            .map(|&p| f32::from(p) / 255.0)
            .collect(),
        len: split.labels.len(),
        labels: split.labels,
        pixels: split.images.rows * split.images.cols,
        classes,
    }
}

/// Reads the training and test sets from `dir`. The classes are `0..=max training label`;
/// test images must have the training images' size and test labels must be among the classes.
pub fn load_dir(dir: &Path) -> Result<(Dataset, Dataset)> {
    let train = read_split(dir, TRAIN_IMAGES, TRAIN_LABELS)?;
    let test = read_split(dir, TEST_IMAGES, TEST_LABELS)?;
    if (train.images.rows, train.images.cols) != (test.images.rows, test.images.cols) {
        return Err(Error::ShapeMismatch {
            train_path: train.images_path,
            train_rows: train.images.rows,
            train_cols: train.images.cols,
            test_path: test.images_path,
            test_rows: test.images.rows,
            test_cols: test.images.cols,
        });
    }
    let classes = train
        .labels
        .iter()
        .max()
        .map_or(0, |&max| usize::from(max) + 1);
    if train.labels.is_empty() {
        return Err(Error::Truncated {
            path: train.labels_path,
            problem: "holds no samples".to_string(),
        });
    }
    if let Some((index, &label)) = test
        .labels
        .iter()
        .enumerate()
        .find(|(_, &label)| usize::from(label) >= classes)
    {
        return Err(Error::LabelOutOfRange {
            path: test.labels_path,
            index,
            label,
            classes,
        });
    }
    Ok((to_dataset(train, classes), to_dataset(test, classes)))
}

/// Which dataset was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// MNIST, in `./data/mnist` or just downloaded there.
    Mnist,
    /// Fashion-MNIST from Debian's package.
    FashionMnist,
    /// Files in the folder given by `--data` / `MNIST_DIR`.
    Given,
}

/// Where the data came from, for messages and the metrics file.
#[derive(Clone, Debug)]
pub struct Source {
    /// Which dataset.
    pub kind: Kind,
    /// Its folder.
    pub dir: PathBuf,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self.kind {
            Kind::Mnist => "MNIST",
            Kind::FashionMnist => "Fashion-MNIST",
            Kind::Given => "IDX dataset",
        };
        write!(f, "{name} from {}", self.dir.display())
    }
}

/// Fashion-MNIST's classes, by label (the data set's README).
pub const FASHION_CLASSES: [&str; 10] = [
    "T-shirt/top",
    "Trouser",
    "Pullover",
    "Dress",
    "Coat",
    "Sandal",
    "Shirt",
    "Sneaker",
    "Bag",
    "Ankle boot",
];

impl Source {
    /// Whether the data is Fashion-MNIST: Debian's package, or a folder given by `--data` whose
    /// path names it (`fashion-mnist`, `FashionMNIST`), as the IDX files themselves do not say.
    pub fn is_fashion(&self) -> bool {
        match self.kind {
            Kind::FashionMnist => true,
            Kind::Mnist => false,
            Kind::Given => self
                .dir
                .to_string_lossy()
                .to_ascii_lowercase()
                .contains("fashion"),
        }
    }

    /// The names of `classes` classes, by label: Fashion-MNIST's clothes, else the labels
    /// themselves (MNIST's digits).
    pub fn class_names(&self, classes: usize) -> Vec<String> {
        if self.is_fashion() && classes == FASHION_CLASSES.len() {
            FASHION_CLASSES
                .iter()
                .map(|name| name.to_string())
                .collect()
        } else {
            (0..classes).map(|label| label.to_string()).collect()
        }
    }
}

/// Picks the data folder: `given` (from `--data` or `MNIST_DIR`) when set, which must hold the
/// files; else `./data/mnist`; else a download into it (unless `allow_download` is false);
/// else Fashion-MNIST from Debian's package; else an error saying how to get data.
/// `default_dir` and `fashion_dir` are parameters so tests can point them at temporary folders.
pub fn locate(
    given: Option<&Path>,
    default_dir: &Path,
    fashion_dir: &Path,
    allow_download: bool,
) -> Result<Source> {
    if let Some(dir) = given {
        for name in FILE_NAMES {
            find_file(dir, name)?;
        }
        // Naming one of the known folders explicitly still names its dataset in messages.
        let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        };
        let kind = if same(dir, fashion_dir) {
            Kind::FashionMnist
        } else if same(dir, default_dir) {
            Kind::Mnist
        } else {
            Kind::Given
        };
        return Ok(Source {
            kind,
            dir: dir.to_path_buf(),
        });
    }
    if has_all_files(default_dir) {
        return Ok(Source {
            kind: Kind::Mnist,
            dir: default_dir.to_path_buf(),
        });
    }
    let mut tried = vec![format!("{} has not all four files", default_dir.display())];
    if allow_download {
        eprintln!("MNIST not in {}: downloading it", default_dir.display());
        match download::download_mnist(default_dir, &download::HttpFetcher::new()) {
            Ok(()) => {
                return Ok(Source {
                    kind: Kind::Mnist,
                    dir: default_dir.to_path_buf(),
                })
            }
            Err(err) => {
                eprintln!("warning: {err}");
                tried.push(format!("download failed: {err}"));
            }
        }
    } else {
        tried.push("downloading is off (--no-download)".to_string());
    }
    if has_all_files(fashion_dir) {
        eprintln!(
            "MNIST is not available: using Fashion-MNIST (same format, 10 classes of clothing) \
             from {}",
            fashion_dir.display()
        );
        return Ok(Source {
            kind: Kind::FashionMnist,
            dir: fashion_dir.to_path_buf(),
        });
    }
    tried.push(format!(
        "{} does not exist (package dataset-fashion-mnist)",
        fashion_dir.display()
    ));
    Err(Error::NoData {
        tried: tried.join("; "),
    })
}

/// The first `limit` samples of `data` (all of them when it has fewer).
pub fn truncate(data: &mut Dataset, limit: usize) {
    if limit < data.len {
        data.len = limit;
        data.labels.truncate(limit);
        data.images.truncate(limit * data.pixels);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::idx::{IMAGES_MAGIC, LABELS_MAGIC};
    use std::io::Write;

    /// An IDX image file's bytes: `count` images of `rows × cols`, pixel i of image n = n + i.
    pub fn images_bytes(count: u32, rows: u32, cols: u32) -> Vec<u8> {
        let mut bytes = IMAGES_MAGIC.to_be_bytes().to_vec();
        for dim in [count, rows, cols] {
            bytes.extend(dim.to_be_bytes());
        }
        for n in 0..count {
            for i in 0..rows * cols {
                bytes.push((n + i) as u8);
            }
        }
        bytes
    }

    /// An IDX label file's bytes.
    pub fn labels_bytes(labels: &[u8]) -> Vec<u8> {
        let mut bytes = LABELS_MAGIC.to_be_bytes().to_vec();
        bytes.extend((labels.len() as u32).to_be_bytes());
        bytes.extend(labels);
        bytes
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    /// Writes a small valid dataset (3 training and 2 test images of 2×3, classes 0..3) into
    /// `dir`, training files gzipped and test files raw, so both paths are exercised.
    pub fn write_small_dataset(dir: &Path) {
        std::fs::write(
            dir.join(format!("{TRAIN_IMAGES}.gz")),
            gzip(&images_bytes(3, 2, 3)),
        )
        .unwrap();
        std::fs::write(
            dir.join(format!("{TRAIN_LABELS}.gz")),
            gzip(&labels_bytes(&[0, 2, 1])),
        )
        .unwrap();
        std::fs::write(dir.join(TEST_IMAGES), images_bytes(2, 2, 3)).unwrap();
        std::fs::write(dir.join(TEST_LABELS), labels_bytes(&[2, 0])).unwrap();
    }

    fn message(result: Result<(Dataset, Dataset)>) -> String {
        match result {
            Ok(_) => panic!("expected an error"),
            Err(err) => err.to_string(),
        }
    }

    #[test]
    fn reads_raw_and_gzip_files() {
        let dir = tempfile::tempdir().unwrap();
        write_small_dataset(dir.path());
        let (train, test) = load_dir(dir.path()).unwrap();
        assert_eq!((train.len, train.pixels, train.classes), (3, 6, 3));
        assert_eq!(train.labels, vec![0, 2, 1]);
        assert_eq!(train.images.len(), 18);
        // Image 1, pixel 2 is the byte 3.
        assert_eq!(train.images[6 + 2], 3.0 / 255.0);
        assert_eq!((test.len, test.classes), (2, 3));
        assert_eq!(test.labels, vec![2, 0]);
    }

    #[test]
    fn wrong_magic_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        write_small_dataset(dir.path());
        // A label file where an image file belongs.
        std::fs::write(dir.path().join(TEST_IMAGES), labels_bytes(&[1, 2])).unwrap();
        let msg = message(load_dir(dir.path()));
        assert!(msg.contains(TEST_IMAGES), "{msg}");
        assert!(msg.contains("not an IDX images file"), "{msg}");
        assert!(msg.contains("0x00000801"), "{msg}");
    }

    #[test]
    fn truncated_data_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        write_small_dataset(dir.path());
        let mut bytes = images_bytes(2, 2, 3);
        bytes.truncate(bytes.len() - 1);
        std::fs::write(dir.path().join(TEST_IMAGES), bytes).unwrap();
        let msg = message(load_dir(dir.path()));
        assert!(msg.contains(TEST_IMAGES), "{msg}");
        assert!(msg.contains("truncated"), "{msg}");
        assert!(
            msg.contains("12 bytes of data") && msg.contains("only 11"),
            "{msg}"
        );
    }

    #[test]
    fn truncated_header_and_empty_file_are_errors() {
        let dir = tempfile::tempdir().unwrap();
        write_small_dataset(dir.path());
        std::fs::write(dir.path().join(TEST_LABELS), &labels_bytes(&[1])[..6]).unwrap();
        let msg = message(load_dir(dir.path()));
        assert!(msg.contains(TEST_LABELS) && msg.contains("header"), "{msg}");
        std::fs::write(dir.path().join(TEST_LABELS), b"").unwrap();
        let msg = message(load_dir(dir.path()));
        assert!(
            msg.contains(TEST_LABELS) && msg.contains("0 bytes"),
            "{msg}"
        );
    }

    #[test]
    fn trailing_bytes_are_corrupt() {
        let dir = tempfile::tempdir().unwrap();
        write_small_dataset(dir.path());
        let mut bytes = labels_bytes(&[1, 0]);
        bytes.push(7);
        std::fs::write(dir.path().join(TEST_LABELS), bytes).unwrap();
        let msg = message(load_dir(dir.path()));
        assert!(
            msg.contains(TEST_LABELS) && msg.contains("corrupt"),
            "{msg}"
        );
    }

    #[test]
    fn corrupt_gzip_names_the_file() {
        let dir = tempfile::tempdir().unwrap();
        write_small_dataset(dir.path());
        let path = dir.path().join(format!("{TRAIN_IMAGES}.gz"));
        let mut bytes = gzip(&images_bytes(3, 2, 3));
        bytes.truncate(bytes.len() / 2);
        std::fs::write(&path, bytes).unwrap();
        let msg = message(load_dir(dir.path()));
        assert!(msg.contains(&path.display().to_string()), "{msg}");
        assert!(msg.contains("gzip"), "{msg}");
    }

    #[test]
    fn count_mismatch_names_both_files() {
        let dir = tempfile::tempdir().unwrap();
        write_small_dataset(dir.path());
        std::fs::write(dir.path().join(TEST_LABELS), labels_bytes(&[1, 0, 2])).unwrap();
        let msg = message(load_dir(dir.path()));
        assert!(
            msg.contains(TEST_IMAGES) && msg.contains(TEST_LABELS),
            "{msg}"
        );
        assert!(
            msg.contains("2 images") && msg.contains("3 labels"),
            "{msg}"
        );
    }

    #[test]
    fn test_label_outside_the_training_classes() {
        let dir = tempfile::tempdir().unwrap();
        write_small_dataset(dir.path());
        std::fs::write(dir.path().join(TEST_LABELS), labels_bytes(&[1, 9])).unwrap();
        let msg = message(load_dir(dir.path()));
        assert!(
            msg.contains(TEST_LABELS) && msg.contains("label 9 of sample 1"),
            "{msg}"
        );
    }

    #[test]
    fn image_sizes_must_agree() {
        let dir = tempfile::tempdir().unwrap();
        write_small_dataset(dir.path());
        std::fs::write(dir.path().join(TEST_IMAGES), images_bytes(2, 3, 3)).unwrap();
        let msg = message(load_dir(dir.path()));
        assert!(msg.contains("2x3") && msg.contains("3x3"), "{msg}");
    }

    #[test]
    fn missing_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        write_small_dataset(dir.path());
        std::fs::remove_file(dir.path().join(TEST_LABELS)).unwrap();
        let err = locate(Some(dir.path()), dir.path(), dir.path(), false).unwrap_err();
        assert!(
            err.to_string().contains("missing t10k-labels-idx1-ubyte"),
            "{err}"
        );
    }

    #[test]
    fn discovery_order() {
        let given = tempfile::tempdir().unwrap();
        let default = tempfile::tempdir().unwrap();
        let fashion = tempfile::tempdir().unwrap();
        write_small_dataset(given.path());
        write_small_dataset(fashion.path());

        let found = locate(Some(given.path()), default.path(), fashion.path(), false).unwrap();
        assert_eq!(
            (found.kind, found.dir.as_path()),
            (Kind::Given, given.path())
        );
        assert_eq!(found.class_names(10)[0], "0");

        // No ./data/mnist and no download: Fashion-MNIST.
        let found = locate(None, default.path(), fashion.path(), false).unwrap();
        assert_eq!(found.kind, Kind::FashionMnist);
        assert_eq!(found.dir, fashion.path());
        assert_eq!(found.class_names(10)[0], "T-shirt/top");
        assert_eq!(found.class_names(10)[9], "Ankle boot");

        write_small_dataset(default.path());
        let found = locate(None, default.path(), fashion.path(), false).unwrap();
        assert_eq!(
            (found.kind, found.dir.as_path()),
            (Kind::Mnist, default.path())
        );
    }

    #[test]
    fn no_data_says_how_to_get_it() {
        let empty = tempfile::tempdir().unwrap();
        let missing = empty.path().join("nowhere");
        let err = locate(None, empty.path(), &missing, false).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("apt-get install dataset-fashion-mnist"),
            "{msg}"
        );
        assert!(
            msg.contains("./data/mnist") && msg.contains("--data DIR"),
            "{msg}"
        );
    }

    #[test]
    fn truncate_keeps_the_first_samples() {
        let dir = tempfile::tempdir().unwrap();
        write_small_dataset(dir.path());
        let (mut train, _) = load_dir(dir.path()).unwrap();
        truncate(&mut train, 2);
        assert_eq!(
            (train.len, train.labels.len(), train.images.len()),
            (2, 2, 12)
        );
        truncate(&mut train, 10);
        assert_eq!(train.len, 2);
    }
}
