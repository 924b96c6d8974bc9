//! Ahead-of-time kernel images: the bundle format a build script writes and a program embeds,
//! the choice of an image for a device, and the process-wide registry of bundles.
//!
//! A bundle is `MAGIC`, a format version, and entries. Each entry is keyed by a hash of what
//! NVRTC would have compiled at run time (the kernel's source, its entry or name expression,
//! and the mode), so a launch finds its image from the kernel alone, and a kernel whose source
//! changed since the bundle was built simply misses it. All integers are little-endian.

use std::collections::HashMap;
use std::sync::{Mutex, RwLock};

use sha2::{Digest, Sha256};

use crate::core::error::{Error, Result};

/// The first bytes of every bundle.
pub(crate) const MAGIC: &[u8; 8] = b"GPUAOT\0\x01";

/// The format version this build reads and writes.
pub(crate) const VERSION: u32 = 1;

/// What an image holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ImageKind {
    /// SASS for one real architecture (`sm_<n>`), loaded as is.
    Cubin,
    /// PTX for a virtual architecture (`compute_<n>`), compiled by the driver at load.
    Ptx,
}

impl ImageKind {
    fn tag(self) -> u8 {
        match self {
            ImageKind::Cubin => 0,
            ImageKind::Ptx => 1,
        }
    }

    fn from_tag(tag: u8) -> Option<ImageKind> {
        match tag {
            0 => Some(ImageKind::Cubin),
            1 => Some(ImageKind::Ptx),
            _ => None,
        }
    }
}

/// One compiled image of a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Image<'a> {
    /// CUBIN or PTX.
    pub kind: ImageKind,
    /// The architecture as `10 * major + minor`.
    pub arch: u32,
    /// Built for `sm_<arch>a`: runs on that exact architecture only.
    pub arch_specific: bool,
    /// The image (PTX without a trailing NUL).
    pub bytes: &'a [u8],
}

/// One kernel variant: its images and, for a generic instantiation, its lowered entry name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry<'a> {
    /// [`entry_key`] of the variant.
    pub key: [u8; 32],
    /// The kernel's Rust name with its template arguments, for reports.
    pub label: &'a str,
    /// The mangled entry point of a generic instantiation; empty for plain kernels.
    pub lowered: &'a str,
    /// Whether this is the checked (`-DGPU_CHECKED`) build.
    pub checked: bool,
    /// The images, in the order the builder produced them.
    pub images: Vec<Image<'a>>,
}

/// What identifies a kernel variant in a bundle: its source, its entry (or name expression)
/// and its mode. The options besides the architecture and mode are fixed, so they are not in it.
pub(crate) fn entry_key(source: &str, entry_text: &str, checked: bool) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(b"gpu-aot-entry");
    for part in [source, entry_text] {
        hasher.update((part.len() as u64).to_le_bytes());
        hasher.update(part.as_bytes());
    }
    hasher.update([u8::from(checked)]);
    hasher.finalize().into()
}

/// Serializes entries into a bundle.
pub(crate) fn encode(entries: &[Entry<'_>]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&(entries.len() as u32).to_le_bytes());
    for entry in entries {
        out.extend_from_slice(&entry.key);
        put_str(&mut out, entry.label);
        put_str(&mut out, entry.lowered);
        out.push(u8::from(entry.checked));
        out.extend_from_slice(&(entry.images.len() as u32).to_le_bytes());
        for image in &entry.images {
            out.push(image.kind.tag());
            out.extend_from_slice(&image.arch.to_le_bytes());
            out.push(u8::from(image.arch_specific));
            out.extend_from_slice(&(image.bytes.len() as u64).to_le_bytes());
            out.extend_from_slice(image.bytes);
        }
    }
    out
}

fn put_str(out: &mut Vec<u8>, text: &str) {
    out.extend_from_slice(&(text.len() as u32).to_le_bytes());
    out.extend_from_slice(text.as_bytes());
}

/// Reads a bundle; a damaged, truncated or foreign one is an [`Error::AotBundle`].
pub(crate) fn decode(bytes: &[u8]) -> Result<Vec<Entry<'_>>> {
    let mut reader = Reader { bytes, at: 0 };
    if reader.take(MAGIC.len(), "the magic number")? != MAGIC {
        return Err(bad(
            "it does not start with the AOT bundle magic number".to_string()
        ));
    }
    let version = reader.u32("the format version")?;
    if version != VERSION {
        return Err(bad(format!(
            "it is format version {version}, this build reads version {VERSION}; rebuild the \
             bundle with this version of the crate"
        )));
    }
    let count = reader.u32("the entry count")?;
    let mut entries = Vec::new();
    for _ in 0..count {
        let key: [u8; 32] = reader
            .take(32, "an entry key")?
            .try_into()
            .map_err(|_| bad("an entry key is cut short".to_string()))?;
        let label = reader.str("an entry's label")?;
        let lowered = reader.str("an entry's lowered name")?;
        let checked = reader.flag("an entry's mode")?;
        let images = reader.u32("an entry's image count")?;
        let mut entry = Entry {
            key,
            label,
            lowered,
            checked,
            images: Vec::new(),
        };
        for _ in 0..images {
            let tag = reader.take(1, "an image kind")?[0];
            let kind = ImageKind::from_tag(tag)
                .ok_or_else(|| bad(format!("image kind {tag} of `{label}` is unknown")))?;
            let arch = reader.u32("an image architecture")?;
            let arch_specific = reader.flag("an image's architecture flag")?;
            let len = reader.u64("an image length")?;
            let len = usize::try_from(len)
                .map_err(|_| bad(format!("an image of `{label}` is impossibly long")))?;
            let bytes = reader.take(len, "an image")?;
            entry.images.push(Image {
                kind,
                arch,
                arch_specific,
                bytes,
            });
        }
        entries.push(entry);
    }
    if reader.at != bytes.len() {
        return Err(bad(format!(
            "{} bytes follow its last entry",
            bytes.len() - reader.at
        )));
    }
    Ok(entries)
}

fn bad(reason: String) -> Error {
    Error::AotBundle { reason }
}

/// A cursor over a bundle that reports where it was cut short.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, len: usize, what: &str) -> Result<&'a [u8]> {
        let end = self
            .at
            .checked_add(len)
            .filter(|&end| end <= self.bytes.len());
        let Some(end) = end else {
            return Err(bad(format!(
                "it is truncated: {what} at byte {} runs past its end ({} bytes)",
                self.at,
                self.bytes.len()
            )));
        };
        let taken = &self.bytes[self.at..end];
        self.at = end;
        Ok(taken)
    }

    fn u32(&mut self, what: &str) -> Result<u32> {
        let raw = self.take(4, what)?;
        Ok(u32::from_le_bytes([raw[0], raw[1], raw[2], raw[3]]))
    }

    fn u64(&mut self, what: &str) -> Result<u64> {
        let raw = self.take(8, what)?;
        let mut word = [0u8; 8];
        word.copy_from_slice(raw);
        Ok(u64::from_le_bytes(word))
    }

    fn flag(&mut self, what: &str) -> Result<bool> {
        match self.take(1, what)?[0] {
            0 => Ok(false),
            1 => Ok(true),
            other => Err(bad(format!("{what} is {other}, not 0 or 1"))),
        }
    }

    fn str(&mut self, what: &str) -> Result<&'a str> {
        let len = self.u32(what)? as usize;
        std::str::from_utf8(self.take(len, what)?).map_err(|_| bad(format!("{what} is not UTF-8")))
    }
}

/// The image to load on a device of architecture `device` (`10 * major + minor`): a CUBIN for
/// exactly that architecture, else a portable CUBIN of the same major version and a lower or
/// equal minor, else the newest portable PTX no newer than the device (which the driver
/// compiles), else `None`. An architecture-specific image is chosen only on its architecture.
pub(crate) fn select_image<'a, 'b>(images: &'b [Image<'a>], device: u32) -> Option<&'b Image<'a>> {
    let runs_on = |image: &Image<'_>| {
        if image.arch_specific {
            image.arch == device
        } else {
            match image.kind {
                ImageKind::Cubin => image.arch / 10 == device / 10 && image.arch <= device,
                ImageKind::Ptx => image.arch <= device,
            }
        }
    };
    let of_kind = |kind: ImageKind| {
        images
            .iter()
            .filter(move |image| image.kind == kind && runs_on(image))
            .max_by_key(|image| (image.arch, image.arch_specific))
    };
    of_kind(ImageKind::Cubin).or_else(|| of_kind(ImageKind::Ptx))
}

/// A registered variant: its label, lowered name and images, borrowed from a `'static` bundle.
type Registered = Entry<'static>;

/// The process's bundles: parsed ones by key, and those registered before `main` that are
/// parsed at their first use.
struct Registry {
    entries: RwLock<Option<HashMap<[u8; 32], Registered>>>,
    pending: Mutex<Vec<&'static [u8]>>,
}

static REGISTRY: Registry = Registry {
    entries: RwLock::new(None),
    pending: Mutex::new(Vec::new()),
};

/// Parses `bundle` and adds its entries to the registry, returning how many it holds. An
/// entry already registered by an earlier bundle is replaced.
pub(crate) fn register(bundle: &'static [u8]) -> Result<usize> {
    let entries = decode(bundle)?;
    let count = entries.len();
    let mut map = REGISTRY
        .entries
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let map = map.get_or_insert_with(HashMap::new);
    for entry in entries {
        map.insert(entry.key, entry);
    }
    Ok(count)
}

/// Queues `bundle` to be parsed at the first lookup: what the registration that runs before
/// `main` calls, where nothing should fail or print.
pub(crate) fn register_later(bundle: &'static [u8]) {
    REGISTRY
        .pending
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .push(bundle);
}

/// Parses the queued bundles; one that fails to parse is reported on stderr once and ignored,
/// so its kernels are compiled by NVRTC as if it were absent. The queue stays locked until
/// its bundles are in the registry, so no lookup sees them neither queued nor registered.
fn drain_pending() {
    let mut pending = REGISTRY
        .pending
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    for bundle in pending.drain(..) {
        if let Err(err) = register(bundle) {
            eprintln!("gpu: an embedded AOT bundle is unusable and was ignored: {err}");
        }
    }
}

/// The registered variant with `key`, if any bundle holds it.
pub(crate) fn lookup(key: &[u8; 32]) -> Option<Registered> {
    drain_pending();
    let map = REGISTRY
        .entries
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    map.as_ref()?.get(key).cloned()
}

/// How many kernel variants the registered bundles hold.
pub(crate) fn registered_count() -> usize {
    drain_pending();
    let map = REGISTRY
        .entries
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    map.as_ref().map_or(0, HashMap::len)
}

/// The kernel variants this process compiled with NVRTC (or took from the disk cache NVRTC
/// fills), which no registered bundle held.
static RUN_TIME_COMPILES: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Records that `label` (a kernel instantiation and its mode) was not found ahead of time;
/// with `GPU_AOT_REPORT=1` it is also printed, so a build's AOT list can be completed.
pub(crate) fn note_compiled_at_run_time(label: String) {
    if std::env::var("GPU_AOT_REPORT").is_ok_and(|v| matches!(v.trim(), "1" | "true")) {
        eprintln!("GPU_AOT_REPORT: {label} was compiled at run time: no AOT bundle holds it");
    }
    RUN_TIME_COMPILES
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .push(label);
}

/// The kernel variants recorded by [`note_compiled_at_run_time`], in order.
pub(crate) fn compiled_at_run_time() -> Vec<String> {
    RUN_TIME_COMPILES
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(kind: ImageKind, arch: u32, arch_specific: bool) -> Image<'static> {
        Image {
            kind,
            arch,
            arch_specific,
            bytes: b"image",
        }
    }

    fn sample() -> Vec<Entry<'static>> {
        vec![
            Entry {
                key: entry_key("src", "saxpy", false),
                label: "saxpy",
                lowered: "",
                checked: false,
                images: vec![
                    Image {
                        bytes: b"\x7fELF cubin 80",
                        ..image(ImageKind::Cubin, 80, false)
                    },
                    Image {
                        bytes: b".version 9.0",
                        ..image(ImageKind::Ptx, 90, false)
                    },
                ],
            },
            Entry {
                key: entry_key("src", "scale<float, 256ULL>", true),
                label: "scale::<f32, 256>",
                lowered: "_Z5scaleIfLy256EEvPf",
                checked: true,
                images: vec![image(ImageKind::Cubin, 90, true)],
            },
        ]
    }

    #[test]
    fn bundles_round_trip() {
        let entries = sample();
        let bytes = encode(&entries);
        assert_eq!(&bytes[..8], MAGIC);
        assert_eq!(decode(&bytes).unwrap(), entries);
        assert_eq!(decode(&encode(&[])).unwrap(), Vec::<Entry>::new());
    }

    #[test]
    fn keys_depend_on_source_entry_and_mode() {
        let key = entry_key("src", "k", false);
        assert_eq!(key, entry_key("src", "k", false));
        assert_ne!(key, entry_key("src2", "k", false));
        assert_ne!(key, entry_key("src", "k2", false));
        assert_ne!(key, entry_key("src", "k", true));
        // Length prefixes keep the parts apart.
        assert_ne!(entry_key("ab", "c", false), entry_key("a", "bc", false));
    }

    fn reason(bytes: &[u8]) -> String {
        match decode(bytes) {
            Err(Error::AotBundle { reason }) => reason,
            other => panic!("expected a bundle error, got {other:?}"),
        }
    }

    #[test]
    fn every_truncation_is_an_error() {
        let bytes = encode(&sample());
        for len in 0..bytes.len() {
            let why = reason(&bytes[..len]);
            assert!(
                why.contains("truncated") || why.contains("magic"),
                "{len}: {why}"
            );
        }
    }

    #[test]
    fn damaged_bundles_are_errors() {
        let good = encode(&sample());
        let mut magic = good.clone();
        magic[0] = b'X';
        assert!(reason(&magic).contains("magic"));

        let mut version = good.clone();
        version[8..12].copy_from_slice(&(VERSION + 1).to_le_bytes());
        let why = reason(&version);
        assert!(why.contains(&format!("version {}", VERSION + 1)), "{why}");

        let mut trailing = good.clone();
        trailing.push(0);
        assert!(reason(&trailing).contains("follow its last entry"));

        // The first entry's kind byte: after the header, key, two strings, mode and count.
        let kind_at = 16 + 32 + (4 + "saxpy".len()) + 4 + 1 + 4;
        let mut kind = good.clone();
        assert_eq!(kind[kind_at], ImageKind::Cubin.tag());
        kind[kind_at] = 7;
        assert!(reason(&kind).contains("kind 7"));

        let mut huge_count = good.clone();
        huge_count[12..16].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(reason(&huge_count).contains("truncated"));

        let mut huge_image = good;
        huge_image[kind_at + 6..kind_at + 14].copy_from_slice(&u64::MAX.to_le_bytes());
        let why = reason(&huge_image);
        assert!(
            why.contains("truncated") || why.contains("impossibly"),
            "{why}"
        );
    }

    #[test]
    fn selection_prefers_the_exact_cubin() {
        let images = [
            image(ImageKind::Cubin, 80, false),
            image(ImageKind::Cubin, 90, false),
            image(ImageKind::Ptx, 90, false),
        ];
        let pick = |device| select_image(&images, device).map(|i| (i.kind, i.arch));
        assert_eq!(pick(90), Some((ImageKind::Cubin, 90)));
        assert_eq!(pick(80), Some((ImageKind::Cubin, 80)));
        // Same major, newer minor: the sm_80 CUBIN runs on an A10 or an RTX 4090.
        assert_eq!(pick(86), Some((ImageKind::Cubin, 80)));
        assert_eq!(pick(89), Some((ImageKind::Cubin, 80)));
        // A newer major: only the PTX, compiled by the driver.
        assert_eq!(pick(100), Some((ImageKind::Ptx, 90)));
        assert_eq!(pick(120), Some((ImageKind::Ptx, 90)));
        // Older than everything in the bundle.
        assert_eq!(pick(75), None);
    }

    #[test]
    fn selection_keeps_arch_specific_images_on_their_arch() {
        let pinned = [image(ImageKind::Cubin, 90, true)];
        assert_eq!(select_image(&pinned, 90).map(|i| i.arch), Some(90));
        assert_eq!(select_image(&pinned, 100), None);
        assert_eq!(select_image(&pinned, 80), None);
        let pinned_ptx = [image(ImageKind::Ptx, 90, true)];
        assert_eq!(select_image(&pinned_ptx, 100), None);
        // A portable CUBIN of the same major does not stand in for a missing minor either way.
        let newer = [image(ImageKind::Cubin, 86, false)];
        assert_eq!(select_image(&newer, 80), None);
    }

    #[test]
    fn selection_takes_the_newest_compatible() {
        let images = [
            image(ImageKind::Ptx, 80, false),
            image(ImageKind::Cubin, 80, false),
            image(ImageKind::Cubin, 86, false),
            image(ImageKind::Ptx, 90, false),
        ];
        let pick = |device| select_image(&images, device).map(|i| (i.kind, i.arch));
        assert_eq!(pick(89), Some((ImageKind::Cubin, 86)));
        assert_eq!(pick(90), Some((ImageKind::Ptx, 90)));
        assert_eq!(pick(87), Some((ImageKind::Cubin, 86)));
    }

    #[test]
    fn registry_finds_registered_entries() {
        let bytes: &'static [u8] = Box::leak(encode(&sample()).into_boxed_slice());
        let key = sample()[1].key;
        register_later(bytes);
        let found = lookup(&key).expect("registered before the lookup");
        assert_eq!(found.lowered, "_Z5scaleIfLy256EEvPf");
        assert!(registered_count() >= 2);
        assert!(register(&bytes[..10]).is_err());
        assert!(lookup(&entry_key("never", "registered", false)).is_none());
    }
}
