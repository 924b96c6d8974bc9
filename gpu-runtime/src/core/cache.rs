//! The on-disk kernel cache: where it lives, how entries are keyed, and how they are framed.
//!
//! An entry is `<dir>/<sha256 hex>.<cubin|ptx>`: a fixed header (magic, format, kind, payload
//! length, payload sha256) and the payload. Anything that does not check out is treated as a
//! miss, deleted and rebuilt; I/O failures never fail a launch.
//!
//! The checksum catches damage, not a planted CUBIN: the directory is created `0700` and its
//! entries `0600`, and nothing is loaded from (or written to) a directory or file that another
//! user owns or that its group or others can write ([`crate::core::trust`]); the runtime warns
//! once and compiles instead.

use std::ffi::OsString;
use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

use crate::core::error::{Error, Result};
use crate::core::trust::{self, Distrust};

/// Where compiled kernels are kept between processes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CacheConfig {
    /// No disk cache: every process compiles its kernels once.
    Disabled,
    /// Cache compiled kernels in this directory (created `0700` on first write). It is used only
    /// while owned by this user and not writable by group or others.
    Dir(PathBuf),
}

impl CacheConfig {
    /// From the environment: `GPU_CACHE_DIR` (`off` disables), else
    /// `$XDG_CACHE_HOME/gpu-dsl/kernels`, else `$HOME/.cache/gpu-dsl/kernels`.
    pub fn from_env() -> CacheConfig {
        Self::resolve(
            std::env::var_os("GPU_CACHE_DIR"),
            std::env::var_os("XDG_CACHE_HOME"),
            std::env::var_os("HOME"),
        )
    }

    /// The directory, when caching is on.
    pub fn dir(&self) -> Option<&Path> {
        match self {
            CacheConfig::Disabled => None,
            CacheConfig::Dir(dir) => Some(dir),
        }
    }

    /// Deletes every cached kernel (and stale temporary file) in the directory; returns how
    /// many files were removed. A missing directory counts as empty.
    pub fn clear(&self) -> Result<usize> {
        let Some(dir) = self.dir() else {
            return Ok(0);
        };
        let io_error = |path: &Path| {
            let path = path.to_path_buf();
            move |source| Error::Io { path, source }
        };
        let entries = match fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(0),
            Err(err) => return Err(io_error(dir)(err)),
        };
        let mut removed = 0;
        for entry in entries {
            let path = entry.map_err(io_error(dir))?.path();
            let ours = path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| matches!(e, "cubin" | "ptx" | "tmp"));
            if ours && path.is_file() {
                fs::remove_file(&path).map_err(io_error(&path))?;
                removed += 1;
            }
        }
        Ok(removed)
    }

    fn resolve(
        gpu_cache_dir: Option<OsString>,
        xdg_cache_home: Option<OsString>,
        home: Option<OsString>,
    ) -> CacheConfig {
        let non_empty = |v: Option<OsString>| v.filter(|v| !v.is_empty());
        if let Some(dir) = non_empty(gpu_cache_dir) {
            if dir
                .to_str()
                .is_some_and(|s| s.trim().eq_ignore_ascii_case("off"))
            {
                return CacheConfig::Disabled;
            }
            return CacheConfig::Dir(PathBuf::from(dir));
        }
        // The XDG spec says to ignore relative paths, which would depend on the working directory.
        if let Some(xdg) = non_empty(xdg_cache_home).map(PathBuf::from) {
            if xdg.is_absolute() {
                return CacheConfig::Dir(xdg.join("gpu-dsl").join("kernels"));
            }
        }
        match non_empty(home) {
            Some(home) => CacheConfig::Dir(
                PathBuf::from(home)
                    .join(".cache")
                    .join("gpu-dsl")
                    .join("kernels"),
            ),
            None => CacheConfig::Disabled,
        }
    }
}

/// What an entry holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum ArtifactKind {
    /// A device binary for one architecture.
    Cubin,
    /// PTX text for the driver to JIT-compile (when NVRTC does not know the GPU).
    Ptx,
}

impl ArtifactKind {
    fn extension(self) -> &'static str {
        match self {
            ArtifactKind::Cubin => "cubin",
            ArtifactKind::Ptx => "ptx",
        }
    }

    fn tag(self) -> u8 {
        match self {
            ArtifactKind::Cubin => 0,
            ArtifactKind::Ptx => 1,
        }
    }
}

/// Everything that changes the compiled output, hashed: the source, the device architecture,
/// the NVRTC options (so checked and unchecked builds differ), NVRTC's version and, for a
/// generic kernel, the instantiation's name expression.
pub(crate) fn cache_key(
    source: &str,
    arch: (u32, u32),
    options: &[String],
    nvrtc_version: (u32, u32),
    name_expression: Option<&str>,
) -> [u8; 32] {
    let mut hasher = Sha256::new();
    // Length prefixes keep field boundaries unambiguous ("ab"+"c" differs from "a"+"bc").
    let mut field = |bytes: &[u8]| {
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    };
    field(b"gpu-dsl kernel cache v1");
    field(source.as_bytes());
    field(format!("{}.{}", arch.0, arch.1).as_bytes());
    field(&(options.len() as u64).to_le_bytes());
    for option in options {
        field(option.as_bytes());
    }
    field(format!("{}.{}", nvrtc_version.0, nvrtc_version.1).as_bytes());
    // Appended only when present, so keys of non-generic kernels are those of earlier versions.
    if let Some(expression) = name_expression {
        field(b"name expression");
        field(expression.as_bytes());
    }
    hasher.finalize().into()
}

/// The payload of a generic kernel's entry: the lowered entry name, a NUL, then the image, so
/// a disk hit needs no NVRTC to find the entry point.
pub(crate) fn pack_named(lowered_name: &str, image: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(lowered_name.len() + 1 + image.len());
    out.extend_from_slice(lowered_name.as_bytes());
    out.push(0);
    out.extend_from_slice(image);
    out
}

/// Splits a [`pack_named`] payload, or `None` when it is not one.
pub(crate) fn unpack_named(payload: &[u8]) -> Option<(String, Vec<u8>)> {
    let nul = payload.iter().position(|&b| b == 0)?;
    let (name, rest) = payload.split_at(nul);
    let name = std::str::from_utf8(name).ok().filter(|n| !n.is_empty())?;
    let image = &rest[1..];
    (!image.is_empty()).then(|| (name.to_string(), image.to_vec()))
}

/// Lowercase hex of a key, the entry's file stem.
pub(crate) fn hex(key: &[u8; 32]) -> String {
    key.iter().map(|b| format!("{b:02x}")).collect()
}

/// The path of an entry.
pub(crate) fn entry_path(dir: &Path, key: &[u8; 32], kind: ArtifactKind) -> PathBuf {
    dir.join(format!("{}.{}", hex(key), kind.extension()))
}

const MAGIC: &[u8; 8] = b"GPUKCACH";
const FORMAT: u8 = 1;
const HEADER_LEN: usize = 8 + 1 + 1 + 6 + 8 + 32;

/// Frames a payload with the header that lets a reader reject damaged files.
pub(crate) fn encode_entry(kind: ArtifactKind, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
    out.extend_from_slice(MAGIC);
    out.push(FORMAT);
    out.push(kind.tag());
    out.extend_from_slice(&[0; 6]);
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&Sha256::digest(payload));
    out.extend_from_slice(payload);
    out
}

/// The payload of a well-formed entry of `kind`, or `None` for anything else.
pub(crate) fn decode_entry(bytes: &[u8], kind: ArtifactKind) -> Option<&[u8]> {
    if bytes.len() < HEADER_LEN {
        return None;
    }
    let (header, payload) = bytes.split_at(HEADER_LEN);
    if &header[..8] != MAGIC || header[8] != FORMAT || header[9] != kind.tag() {
        return None;
    }
    let len = u64::from_le_bytes(header[16..24].try_into().ok()?);
    if len != payload.len() as u64 || payload.is_empty() {
        return None;
    }
    if header[24..56] != Sha256::digest(payload)[..] {
        return None;
    }
    Some(payload)
}

/// The outcome of looking an entry up.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Lookup {
    /// A verified payload.
    Hit(Vec<u8>),
    /// A file that failed verification (already deleted).
    Corrupt,
    /// No entry (or it could not be read).
    Miss,
    /// The directory or the entry could be written by someone else, so it was not read.
    Untrusted,
}

/// Reads and verifies an entry, deleting it when it is damaged; loads nothing from a directory
/// or file someone else could have written (warning once).
pub(crate) fn read_entry(dir: &Path, key: &[u8; 32], kind: ArtifactKind) -> Lookup {
    read_entry_for(dir, key, kind, trust::current_uid())
}

/// [`read_entry`] as the user `uid`, so tests can check the ownership rule without root.
fn read_entry_for(dir: &Path, key: &[u8; 32], kind: ArtifactKind, uid: u32) -> Lookup {
    // Someone else could have written it: refused with a warning. Not there, not a directory
    // or file, or unreadable: nothing to load, as for any missing entry.
    let refuse = |path: &Path, why: Distrust| match why {
        Distrust::OtherOwner { .. } | Distrust::Writable { .. } => {
            trust::warn_once(dir, path, &why);
            Lookup::Untrusted
        }
        Distrust::NotDirectory | Distrust::NotFile | Distrust::Unreadable(_) => Lookup::Miss,
    };
    if let Err(why) = trust::trusted_dir_for(dir, uid) {
        return refuse(dir, why);
    }
    let path = entry_path(dir, key, kind);
    let Ok(mut file) = fs::File::open(&path) else {
        return Lookup::Miss;
    };
    // The open file's own metadata, so the file checked is the file read.
    let checked = file
        .metadata()
        .map_err(|err| Distrust::Unreadable(err.kind()))
        .and_then(|meta| trust::trusted_file_for(&meta, uid));
    if let Err(why) = checked {
        return refuse(&path, why);
    }
    let mut bytes = Vec::new();
    if file.read_to_end(&mut bytes).is_err() {
        return Lookup::Miss;
    }
    match decode_entry(&bytes, kind) {
        Some(payload) => Lookup::Hit(payload.to_vec()),
        None => {
            remove_entry(dir, key, kind);
            Lookup::Corrupt
        }
    }
}

/// Deletes an entry, ignoring failures: a later write replaces it anyway.
pub(crate) fn remove_entry(dir: &Path, key: &[u8; 32], kind: ArtifactKind) {
    let _ = fs::remove_file(entry_path(dir, key, kind));
}

/// Writes an entry atomically: readers see the old file, no file, or the whole new one. The
/// directory is created private to this user; one someone else could write is refused
/// (warning once), since entries there could be replaced.
pub(crate) fn write_entry(
    dir: &Path,
    key: &[u8; 32],
    kind: ArtifactKind,
    payload: &[u8],
) -> io::Result<PathBuf> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    trust::create_private_dir(dir)?;
    if let Err(why) = trust::trusted_dir(dir) {
        trust::warn_once(dir, dir, &why);
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("{} {why}", dir.display()),
        ));
    }
    let path = entry_path(dir, key, kind);
    // Unique per process and call, in the same directory so the rename cannot cross filesystems.
    let tmp = dir.join(format!(
        ".{}.{}.{}.tmp",
        hex(key),
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let result = trust::create_private_file(&tmp)
        .and_then(|mut file| file.write_all(&encode_entry(kind, payload)))
        .and_then(|()| fs::rename(&tmp, &path));
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result.map(|()| path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn key_changes_with_every_input() {
        let base_opts = opts(&["--gpu-architecture=sm_90", "--std=c++17"]);
        let checked_opts = opts(&["--gpu-architecture=sm_90", "--std=c++17", "-DGPU_CHECKED"]);
        let base = cache_key("src", (9, 0), &base_opts, (12, 4), None);
        assert_eq!(base, cache_key("src", (9, 0), &base_opts, (12, 4), None));
        let variants = [
            cache_key("src ", (9, 0), &base_opts, (12, 4), None),
            cache_key("src", (8, 9), &base_opts, (12, 4), None),
            cache_key(
                "src",
                (9, 0),
                &opts(&["--gpu-architecture=sm_90"]),
                (12, 4),
                None,
            ),
            cache_key(
                "src",
                (9, 0),
                &opts(&["--std=c++17", "--gpu-architecture=sm_90"]),
                (12, 4),
                None,
            ),
            cache_key("src", (9, 0), &base_opts, (12, 5), None),
            cache_key("src", (9, 0), &base_opts, (13, 4), None),
            // Checked mode is one more option.
            cache_key("src", (9, 0), &checked_opts, (12, 4), None),
            // Each instantiation of a generic kernel has its own entry.
            cache_key("src", (9, 0), &base_opts, (12, 4), Some("k<float>")),
            cache_key("src", (9, 0), &base_opts, (12, 4), Some("")),
        ];
        assert_ne!(
            cache_key("src", (9, 0), &base_opts, (12, 4), Some("k<float>")),
            cache_key("src", (9, 0), &base_opts, (12, 4), Some("k<double>")),
        );
        for (i, variant) in variants.iter().enumerate() {
            assert_ne!(&base, variant, "variant {i} collided");
        }
        // Boundaries between options matter.
        assert_ne!(
            cache_key("s", (9, 0), &opts(&["ab", "c"]), (12, 4), None),
            cache_key("s", (9, 0), &opts(&["a", "bc"]), (12, 4), None)
        );
        assert_eq!(hex(&base).len(), 64);
    }

    #[test]
    fn named_payloads_round_trip() {
        let packed = pack_named("_Z5scaleIfLy256EEvT_PS0_y", b"\x7fELF\0\0binary");
        assert_eq!(
            unpack_named(&packed),
            Some((
                "_Z5scaleIfLy256EEvT_PS0_y".to_string(),
                b"\x7fELF\0\0binary".to_vec()
            ))
        );
        assert_eq!(unpack_named(b"no separator"), None);
        assert_eq!(unpack_named(b"\0image"), None, "empty name");
        assert_eq!(unpack_named(b"name\0"), None, "empty image");
        assert_eq!(unpack_named(b"\xff\xfe\0image"), None, "not UTF-8");
    }

    #[test]
    fn entries_round_trip() {
        let payload = b"\x7fELF pretend cubin".to_vec();
        let framed = encode_entry(ArtifactKind::Cubin, &payload);
        assert_eq!(
            decode_entry(&framed, ArtifactKind::Cubin),
            Some(&payload[..])
        );
        // The kind is part of the frame.
        assert_eq!(decode_entry(&framed, ArtifactKind::Ptx), None);
    }

    #[test]
    fn damaged_entries_are_rejected() {
        let payload: Vec<u8> = (0..=255).collect();
        let framed = encode_entry(ArtifactKind::Cubin, &payload);
        let reject = |bytes: &[u8]| assert_eq!(decode_entry(bytes, ArtifactKind::Cubin), None);
        reject(b"");
        reject(b"garbage that is long enough to fill a header and then some more bytes");
        reject(&framed[..framed.len() - 1]); // truncated
        reject(&framed[..HEADER_LEN]); // header only
        let mut extended = framed.clone();
        extended.push(0);
        reject(&extended);
        for position in [0, 8, 16, 30, HEADER_LEN, framed.len() - 1] {
            let mut flipped = framed.clone();
            flipped[position] ^= 0x40;
            reject(&flipped);
        }
        reject(&encode_entry(ArtifactKind::Cubin, b""));
    }

    #[test]
    fn disk_round_trip_and_corruption() {
        let dir = tempfile::tempdir().unwrap();
        let nested = dir.path().join("a").join("b");
        let key = cache_key("k", (9, 0), &[], (12, 4), None);
        assert_eq!(read_entry(&nested, &key, ArtifactKind::Cubin), Lookup::Miss);

        let path = write_entry(&nested, &key, ArtifactKind::Cubin, b"binary").unwrap();
        assert_eq!(path, entry_path(&nested, &key, ArtifactKind::Cubin));
        assert!(path.to_str().unwrap().ends_with(".cubin"));
        assert_eq!(
            read_entry(&nested, &key, ArtifactKind::Cubin),
            Lookup::Hit(b"binary".to_vec())
        );
        // No temporary files are left behind.
        assert_eq!(fs::read_dir(&nested).unwrap().count(), 1);

        fs::write(&path, b"garbage").unwrap();
        assert_eq!(
            read_entry(&nested, &key, ArtifactKind::Cubin),
            Lookup::Corrupt
        );
        assert!(!path.exists(), "a corrupt entry is deleted");
        assert_eq!(read_entry(&nested, &key, ArtifactKind::Cubin), Lookup::Miss);

        // Truncation, e.g. a crash during a non-atomic copy of the cache directory.
        write_entry(&nested, &key, ArtifactKind::Cubin, b"binary").unwrap();
        let full = fs::read(&path).unwrap();
        fs::write(&path, &full[..full.len() - 2]).unwrap();
        assert_eq!(
            read_entry(&nested, &key, ArtifactKind::Cubin),
            Lookup::Corrupt
        );
    }

    #[cfg(unix)]
    fn mode(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[cfg(unix)]
    fn chmod(path: &Path, mode: u32) {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn the_cache_directory_and_entries_are_private() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("gpu-dsl").join("kernels");
        let key = [7u8; 32];
        let path = write_entry(&dir, &key, ArtifactKind::Cubin, b"binary").unwrap();
        assert_eq!(mode(&root.path().join("gpu-dsl")), 0o700);
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&path), 0o600);
        assert_eq!(
            read_entry(&dir, &key, ArtifactKind::Cubin),
            Lookup::Hit(b"binary".to_vec())
        );
    }

    #[cfg(unix)]
    #[test]
    fn nothing_is_loaded_from_or_written_to_a_directory_others_can_write() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("kernels");
        let key = [8u8; 32];
        let path = write_entry(&dir, &key, ArtifactKind::Cubin, b"binary").unwrap();
        for shared in [0o777, 0o770, 0o730] {
            chmod(&dir, shared);
            assert_eq!(
                read_entry(&dir, &key, ArtifactKind::Cubin),
                Lookup::Untrusted,
                "{shared:o}"
            );
            assert!(path.exists(), "a refused entry is left alone");
            let err = write_entry(&dir, &[9u8; 32], ArtifactKind::Cubin, b"other").unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::PermissionDenied);
            assert!(
                err.to_string().contains("writable by its group or others"),
                "{err}"
            );
            assert_eq!(
                fs::read_dir(&dir).unwrap().count(),
                1,
                "nothing was written"
            );
        }
        // Made private again, it is used again.
        chmod(&dir, 0o700);
        assert_eq!(
            read_entry(&dir, &key, ArtifactKind::Cubin),
            Lookup::Hit(b"binary".to_vec())
        );
    }

    #[cfg(unix)]
    #[test]
    fn an_entry_others_can_write_is_not_loaded_and_is_replaced() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("kernels");
        let key = [10u8; 32];
        let path = write_entry(&dir, &key, ArtifactKind::Ptx, b"ptx").unwrap();
        for shared in [0o660, 0o620, 0o666] {
            chmod(&path, shared);
            assert_eq!(
                read_entry(&dir, &key, ArtifactKind::Ptx),
                Lookup::Untrusted,
                "{shared:o}"
            );
        }
        // The rebuilt kernel's write replaces it with a private file.
        write_entry(&dir, &key, ArtifactKind::Ptx, b"ptx").unwrap();
        assert_eq!(mode(&path), 0o600);
        assert_eq!(
            read_entry(&dir, &key, ArtifactKind::Ptx),
            Lookup::Hit(b"ptx".to_vec())
        );
    }

    #[cfg(unix)]
    #[test]
    fn entries_of_another_user_are_not_loaded() {
        // Files of another user need root to make; the reader is told it is someone else.
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("kernels");
        let key = [11u8; 32];
        write_entry(&dir, &key, ArtifactKind::Cubin, b"binary").unwrap();
        let me = trust::current_uid();
        assert_eq!(
            read_entry_for(&dir, &key, ArtifactKind::Cubin, me),
            Lookup::Hit(b"binary".to_vec())
        );
        assert_eq!(
            read_entry_for(&dir, &key, ArtifactKind::Cubin, me.wrapping_add(1)),
            Lookup::Untrusted
        );
    }

    #[test]
    fn clear_removes_only_cache_files() {
        let dir = tempfile::tempdir().unwrap();
        let config = CacheConfig::Dir(dir.path().join("kernels"));
        assert_eq!(config.clear().unwrap(), 0, "a missing directory is empty");
        let kernels = config.dir().unwrap();
        write_entry(kernels, &[1; 32], ArtifactKind::Cubin, b"a").unwrap();
        write_entry(kernels, &[2; 32], ArtifactKind::Ptx, b"b").unwrap();
        fs::write(kernels.join("notes.txt"), b"keep").unwrap();
        assert_eq!(config.clear().unwrap(), 2);
        assert!(kernels.join("notes.txt").exists());
        assert_eq!(CacheConfig::Disabled.clear().unwrap(), 0);

        let not_a_dir = CacheConfig::Dir(kernels.join("notes.txt"));
        assert!(matches!(not_a_dir.clear(), Err(Error::Io { .. })));
    }

    #[test]
    fn write_failure_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("not-a-dir");
        fs::write(&file, b"x").unwrap();
        let key = [0u8; 32];
        assert!(write_entry(&file, &key, ArtifactKind::Cubin, b"p").is_err());
        assert_eq!(read_entry(&file, &key, ArtifactKind::Cubin), Lookup::Miss);
    }

    #[test]
    fn directory_from_environment() {
        let os = |s: &str| Some(OsString::from(s));
        assert_eq!(
            CacheConfig::resolve(os("/tmp/k"), os("/xdg"), os("/home/u")),
            CacheConfig::Dir(PathBuf::from("/tmp/k"))
        );
        assert_eq!(
            CacheConfig::resolve(os("off"), os("/xdg"), os("/home/u")),
            CacheConfig::Disabled
        );
        assert_eq!(
            CacheConfig::resolve(os("OFF"), None, None),
            CacheConfig::Disabled
        );
        assert_eq!(
            CacheConfig::resolve(None, os("/xdg"), os("/home/u")),
            CacheConfig::Dir(PathBuf::from("/xdg/gpu-dsl/kernels"))
        );
        assert_eq!(
            CacheConfig::resolve(os(""), os("relative"), os("/home/u")),
            CacheConfig::Dir(PathBuf::from("/home/u/.cache/gpu-dsl/kernels"))
        );
        assert_eq!(
            CacheConfig::resolve(None, None, None),
            CacheConfig::Disabled
        );
        assert_eq!(CacheConfig::Disabled.dir(), None);
    }
}
