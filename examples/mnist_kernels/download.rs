//! Downloading MNIST from the usual mirrors, each file checked against its known size and
//! SHA-256 before it is kept.

use std::io::Read;
use std::path::Path;
use std::time::Duration;

use sha2::{Digest, Sha256};

use crate::error::{io, Error, Result};

/// Mirrors tried in order; each serves the four `.gz` files under these names.
pub const MIRRORS: [&str; 2] = [
    "https://ossci-datasets.s3.amazonaws.com/mnist/",
    "https://storage.googleapis.com/cvdf-datasets/mnist/",
];

/// One file to download: its name, size in bytes and SHA-256 (hex).
#[derive(Clone, Copy, Debug)]
pub struct Expected {
    /// File name on the mirror and on disk.
    pub name: &'static str,
    /// Size in bytes.
    pub size: usize,
    /// SHA-256, lowercase hex.
    pub sha256: &'static str,
}

/// The four MNIST files as published (sizes and SHA-256 as listed in TensorFlow Datasets'
/// `url_checksums/mnist.txt` for the cvdf mirror, which serves the same bytes as the others).
pub const MNIST_FILES: [Expected; 4] = [
    Expected {
        name: "train-images-idx3-ubyte.gz",
        size: 9_912_422,
        sha256: "440fcabf73cc546fa21475e81ea370265605f56be210a4024d2ca8f203523609",
    },
    Expected {
        name: "train-labels-idx1-ubyte.gz",
        size: 28_881,
        sha256: "3552534a0a558bbed6aed32b30c495cca23d567ec52cac8be1a0730e8010255c",
    },
    Expected {
        name: "t10k-images-idx3-ubyte.gz",
        size: 1_648_877,
        sha256: "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
    },
    Expected {
        name: "t10k-labels-idx1-ubyte.gz",
        size: 4_542,
        sha256: "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",
    },
];

/// Something that fetches a URL's body; a trait so tests can download without a network.
pub trait Fetch {
    /// The body of `url`, at most `limit` bytes, or a description of the failure.
    fn fetch(&self, url: &str, limit: usize) -> std::result::Result<Vec<u8>, String>;
}

/// Fetches over HTTPS with short timeouts, so an offline machine fails in seconds rather than
/// hanging.
pub struct HttpFetcher {
    agent: ureq::Agent,
}

impl HttpFetcher {
    /// A fetcher with a 5 s connect timeout and 120 s for a whole file.
    pub fn new() -> Self {
        HttpFetcher {
            agent: ureq::AgentBuilder::new()
                .timeout_connect(Duration::from_secs(5))
                .timeout(Duration::from_secs(120))
                .build(),
        }
    }
}

impl Fetch for HttpFetcher {
    fn fetch(&self, url: &str, limit: usize) -> std::result::Result<Vec<u8>, String> {
        // ureq's messages start with the URL, which the caller already prints.
        let message = |e: ureq::Error| e.to_string().replace(&format!("{url}: "), "");
        let response = self.agent.get(url).call().map_err(message)?;
        let mut body = Vec::new();
        // One byte over the limit is read so an oversized body is noticed, not cut to size.
        response
            .into_reader()
            .take(limit as u64 + 1)
            .read_to_end(&mut body)
            .map_err(|e| e.to_string())?;
        Ok(body)
    }
}

/// SHA-256 of `bytes` as lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Checks a body against the expected size and hash.
fn verify(body: &[u8], expected: &Expected) -> std::result::Result<(), String> {
    if body.len() != expected.size {
        return Err(format!("{} bytes, expected {}", body.len(), expected.size));
    }
    let found = sha256_hex(body);
    if found != expected.sha256 {
        return Err(format!("SHA-256 {found}, expected {}", expected.sha256));
    }
    Ok(())
}

/// Downloads one file into `dir` from the first mirror that serves the right bytes. A file
/// already there with the right hash is kept. The file is written under a temporary name and
/// renamed, so an interrupted download never leaves a partial file under the real name.
pub fn download_file(
    dir: &Path,
    expected: &Expected,
    mirrors: &[&str],
    fetcher: &dyn Fetch,
) -> Result<()> {
    let path = dir.join(expected.name);
    if let Ok(bytes) = std::fs::read(&path) {
        if verify(&bytes, expected).is_ok() {
            return Ok(());
        }
    }
    let mut problems = Vec::new();
    for mirror in mirrors {
        let url = format!("{mirror}{}", expected.name);
        match fetcher
            .fetch(&url, expected.size)
            .and_then(|body| verify(&body, expected).map(|()| body))
        {
            Ok(body) => {
                std::fs::create_dir_all(dir).map_err(io(dir))?;
                let partial = dir.join(format!("{}.part", expected.name));
                std::fs::write(&partial, &body).map_err(io(&partial))?;
                std::fs::rename(&partial, &path).map_err(io(&path))?;
                eprintln!("downloaded {url} (SHA-256 verified)");
                return Ok(());
            }
            Err(problem) => problems.push(format!("{url}: {problem}")),
        }
    }
    Err(Error::Download {
        name: expected.name,
        problem: problems.join("; "),
    })
}

/// Downloads the four MNIST files into `dir`, verifying each.
pub fn download_mnist(dir: &Path, fetcher: &dyn Fetch) -> Result<()> {
    for expected in &MNIST_FILES {
        download_file(dir, expected, &MIRRORS, fetcher)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::collections::HashMap;

    /// Serves fixed bodies per URL and records what was asked.
    struct FakeFetcher {
        bodies: HashMap<String, Vec<u8>>,
        asked: RefCell<Vec<String>>,
    }

    impl Fetch for FakeFetcher {
        fn fetch(&self, url: &str, _limit: usize) -> std::result::Result<Vec<u8>, String> {
            self.asked.borrow_mut().push(url.to_string());
            self.bodies
                .get(url)
                .cloned()
                .ok_or_else(|| "connection refused".to_string())
        }
    }

    const BODY: &[u8] = b"hello";

    fn expected() -> Expected {
        Expected {
            name: "file.gz",
            size: BODY.len(),
            // SHA-256 of "hello".
            sha256: "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
        }
    }

    #[test]
    fn hashes_as_hex() {
        assert_eq!(sha256_hex(BODY), expected().sha256);
    }

    #[test]
    fn skips_a_mirror_with_wrong_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let fetcher = FakeFetcher {
            bodies: HashMap::from([
                ("https://a/file.gz".to_string(), b"hellp".to_vec()),
                ("https://b/file.gz".to_string(), BODY.to_vec()),
            ]),
            asked: RefCell::default(),
        };
        download_file(
            dir.path(),
            &expected(),
            &["https://a/", "https://b/"],
            &fetcher,
        )
        .unwrap();
        assert_eq!(std::fs::read(dir.path().join("file.gz")).unwrap(), BODY);
        assert_eq!(fetcher.asked.borrow().len(), 2);
        assert!(!dir.path().join("file.gz.part").exists());

        // Already there and valid: nothing is fetched.
        download_file(dir.path(), &expected(), &["https://a/"], &fetcher).unwrap();
        assert_eq!(fetcher.asked.borrow().len(), 2);
    }

    #[test]
    fn every_mirror_failing_is_an_error_naming_each() {
        let dir = tempfile::tempdir().unwrap();
        let fetcher = FakeFetcher {
            bodies: HashMap::from([("https://a/file.gz".to_string(), b"hello!".to_vec())]),
            asked: RefCell::default(),
        };
        let err = download_file(
            dir.path(),
            &expected(),
            &["https://a/", "https://b/"],
            &fetcher,
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("https://a/file.gz: 6 bytes, expected 5"),
            "{err}"
        );
        assert!(
            err.contains("https://b/file.gz: connection refused"),
            "{err}"
        );
        assert!(!dir.path().join("file.gz").exists());
    }
}
