//! The example's one error type: every data, checkpoint and output failure names the file (or
//! URL) and the problem, so `main` can print it and exit instead of panicking.

use std::path::PathBuf;

/// What can go wrong outside the training itself.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read, written or created.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The underlying failure.
        source: std::io::Error,
    },
    /// A file that starts like gzip but does not decompress.
    #[error("{}: corrupt or truncated gzip data: {source}", path.display())]
    Gzip {
        /// The file.
        path: PathBuf,
        /// The decoder's complaint.
        source: std::io::Error,
    },
    /// An IDX file whose header is not the one expected.
    #[error("{}: not an IDX {expected_kind} file: magic {found:#010x}, expected {expected:#010x}", path.display())]
    BadMagic {
        /// The file.
        path: PathBuf,
        /// "images" or "labels".
        expected_kind: &'static str,
        /// The magic number read.
        found: u32,
        /// The magic number wanted.
        expected: u32,
    },
    /// A file whose length disagrees with what its header declares.
    #[error("{}: {problem}", path.display())]
    Truncated {
        /// The file.
        path: PathBuf,
        /// What was expected and what was found.
        problem: String,
    },
    /// Image and label files that disagree on the number of samples.
    #[error("{} holds {images} images but {} holds {labels} labels", images_path.display(), labels_path.display())]
    CountMismatch {
        /// The image file.
        images_path: PathBuf,
        /// Images it holds.
        images: usize,
        /// The label file.
        labels_path: PathBuf,
        /// Labels it holds.
        labels: usize,
    },
    /// Training and test images of different sizes.
    #[error("{} holds {train_rows}x{train_cols} images but {} holds {test_rows}x{test_cols}", train_path.display(), test_path.display())]
    ShapeMismatch {
        /// The training image file.
        train_path: PathBuf,
        /// Its rows.
        train_rows: usize,
        /// Its columns.
        train_cols: usize,
        /// The test image file.
        test_path: PathBuf,
        /// Its rows.
        test_rows: usize,
        /// Its columns.
        test_cols: usize,
    },
    /// A label outside the classes the training set defines.
    #[error("{}: label {label} of sample {index} is out of range (the training labels are 0..{classes})", path.display())]
    LabelOutOfRange {
        /// The label file.
        path: PathBuf,
        /// Which sample.
        index: usize,
        /// Its label.
        label: u8,
        /// Number of classes.
        classes: usize,
    },
    /// A data folder given explicitly that lacks one of the four files.
    #[error("{}: missing {name} (or {name}.gz)", dir.display())]
    MissingFile {
        /// The folder searched.
        dir: PathBuf,
        /// The file name looked for.
        name: &'static str,
    },
    /// No data anywhere, and nothing could be downloaded.
    #[error(
        "no MNIST data found ({tried}). To get data, do one of:\n  \
             - put the four MNIST IDX files (train-images-idx3-ubyte, train-labels-idx1-ubyte, \
             t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte, raw or .gz) in ./data/mnist\n  \
             - run online once without --no-download: MNIST is downloaded into ./data/mnist\n  \
             - sudo apt-get install dataset-fashion-mnist   (Fashion-MNIST, same format, \
             used automatically)\n  \
             - pass --data DIR (or set MNIST_DIR) to a folder with the four files"
    )]
    NoData {
        /// Where the search looked and why each place failed.
        tried: String,
    },
    /// A download that failed from every mirror.
    #[error("downloading {name}: {problem}")]
    Download {
        /// The file.
        name: &'static str,
        /// What each mirror answered.
        problem: String,
    },
    /// A weights file that cannot be used.
    #[error("{}: {problem}", path.display())]
    Checkpoint {
        /// The weights file.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
    },
    /// A chart that could not be drawn.
    #[error("{}: drawing failed: {message}", path.display())]
    Plot {
        /// The image file.
        path: PathBuf,
        /// The drawing backend's complaint.
        message: String,
    },
    /// An option combination that makes no sense.
    #[error("{0}")]
    Usage(String),
    /// A failure of the GPU runtime (device, compilation, launch).
    #[error(transparent)]
    Gpu(#[from] gpu_dsl::Error),
}

/// The example's result type.
pub type Result<T> = std::result::Result<T, Error>;

/// Wraps an I/O error with the path it concerns.
pub fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Error {
    let path = path.into();
    move |source| Error::Io { path, source }
}
