//! Which directories and files on disk the runtime may load compiled code from.
//!
//! A cache entry's checksum catches damage, not a CUBIN planted by someone else: whoever can
//! write to a cache directory can make this process run their code. So a directory the runtime
//! loads kernels from (or writes them to) must be owned by the user running it and writable by
//! nobody else, and so must each file it loads. Anything else is not used: the runtime warns
//! once per process and compiles instead. The disk kernel cache follows this rule, and every
//! later on-disk store of compiled code or tuning results must call the same functions.
//!
//! On targets without Unix permissions everything is trusted: there is no owner or mode to
//! check, and such a system's per-user directories are the protection.

use std::fmt;
use std::fs::{self, Metadata};
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// Why a directory or file is not trusted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Distrust {
    /// Owned by another user than the one running the process.
    OtherOwner {
        /// The owner's uid.
        owner: u32,
        /// The process's effective uid.
        user: u32,
    },
    /// Writable by its group or by others.
    Writable {
        /// The permission bits.
        mode: u32,
    },
    /// A directory was expected.
    NotDirectory,
    /// A regular file was expected.
    NotFile,
    /// Its metadata could not be read.
    Unreadable(io::ErrorKind),
}

impl fmt::Display for Distrust {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Distrust::OtherOwner { owner, user } => {
                write!(f, "is owned by uid {owner}, not by this user (uid {user})")
            }
            Distrust::Writable { mode } => {
                write!(f, "is writable by its group or others (mode {mode:03o})")
            }
            Distrust::NotDirectory => f.write_str("is not a directory"),
            Distrust::NotFile => f.write_str("is not a regular file"),
            Distrust::Unreadable(kind) => write!(f, "cannot be inspected ({kind})"),
        }
    }
}

/// Checks that `dir` is a directory owned by this process's user and writable by nobody else.
pub(crate) fn trusted_dir(dir: &Path) -> Result<(), Distrust> {
    trusted_dir_for(dir, current_uid())
}

/// [`trusted_dir`] for the user `uid`, so tests can check the ownership rule without root.
pub(crate) fn trusted_dir_for(dir: &Path, uid: u32) -> Result<(), Distrust> {
    let meta = fs::metadata(dir).map_err(|err| Distrust::Unreadable(err.kind()))?;
    if !meta.is_dir() {
        return Err(Distrust::NotDirectory);
    }
    owned_and_private(&meta, uid)
}

/// Checks the metadata of an open file (so what was checked is what is read): a regular file
/// owned by the user `uid` (the caller's [`current_uid`], or another in tests) and writable by
/// nobody else.
pub(crate) fn trusted_file_for(meta: &Metadata, uid: u32) -> Result<(), Distrust> {
    if !meta.is_file() {
        return Err(Distrust::NotFile);
    }
    owned_and_private(meta, uid)
}

#[cfg(unix)]
fn owned_and_private(meta: &Metadata, uid: u32) -> Result<(), Distrust> {
    use std::os::unix::fs::MetadataExt;
    if meta.uid() != uid {
        return Err(Distrust::OtherOwner {
            owner: meta.uid(),
            user: uid,
        });
    }
    let mode = meta.mode() & 0o7777;
    if mode & 0o022 != 0 {
        return Err(Distrust::Writable { mode });
    }
    Ok(())
}

#[cfg(not(unix))]
fn owned_and_private(_meta: &Metadata, _uid: u32) -> Result<(), Distrust> {
    Ok(())
}

/// The effective uid, which the kernel compares with owners when it checks permissions.
///
/// libc is already in the build (corosensei, tempfile); asking the kernel is exact, where the
/// owner of a probe file created in the temporary directory would be wrong on a filesystem
/// mounted with a fixed owner and unavailable where that directory is read-only.
#[cfg(unix)]
pub(crate) fn current_uid() -> u32 {
    // SAFETY: geteuid takes no arguments, touches no memory of ours and cannot fail.
    unsafe { libc::geteuid() }
}

/// No users to tell apart: every owner check passes.
#[cfg(not(unix))]
pub(crate) fn current_uid() -> u32 {
    0
}

/// Creates `dir` and the parents it lacks, each readable and writable by this user only.
pub(crate) fn create_private_dir(dir: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

/// Opens a new file for writing, readable and writable by this user only; fails if `path`
/// exists, so a file or link planted there is never written through.
pub(crate) fn create_private_file(path: &Path) -> io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

/// The warning for an untrusted `path` of the store at `dir`: what was refused, why, and what
/// to do.
pub(crate) fn warning(dir: &Path, path: &Path, why: &Distrust) -> String {
    let fix = match why {
        Distrust::Writable { .. } if path == dir => {
            format!("run `chmod 700 {}`", dir.display())
        }
        Distrust::Writable { .. } => format!("run `chmod 600 {}`", path.display()),
        Distrust::OtherOwner { .. }
        | Distrust::NotDirectory
        | Distrust::NotFile
        | Distrust::Unreadable(_) => "use a directory you own".to_string(),
    };
    format!(
        "gpu-runtime: not loading kernels from {} ({} {why}): someone else could plant code \
         there; {fix}, or set GPU_CACHE_DIR to a directory only you can write (kernels are \
         compiled instead meanwhile)",
        dir.display(),
        path.display(),
    )
}

/// Prints [`warning`] on stderr the first time any store is refused in this process; returns
/// whether it printed.
pub(crate) fn warn_once(dir: &Path, path: &Path, why: &Distrust) -> bool {
    static WARNED: AtomicBool = AtomicBool::new(false);
    if WARNED.swap(true, Ordering::Relaxed) {
        return false;
    }
    eprintln!("{}", warning(dir, path, why));
    true
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().mode() & 0o777
    }

    fn chmod(path: &Path, mode: u32) {
        fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn created_directories_and_files_are_private() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("a").join("b");
        create_private_dir(&dir).unwrap();
        // Every level this call created, not only the last.
        assert_eq!(mode(&root.path().join("a")), 0o700);
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(trusted_dir(&dir), Ok(()));
        let file = dir.join("f");
        drop(create_private_file(&file).unwrap());
        assert_eq!(mode(&file), 0o600);
        let meta = fs::metadata(&file).unwrap();
        assert_eq!(trusted_file_for(&meta, current_uid()), Ok(()));
        // Never written through an existing path.
        assert!(create_private_file(&file).is_err());
        // An existing directory keeps its mode.
        chmod(&dir, 0o755);
        create_private_dir(&dir).unwrap();
        assert_eq!(mode(&dir), 0o755);
        assert_eq!(trusted_dir(&dir), Ok(()), "read-only for others is fine");
    }

    #[test]
    fn writable_by_group_or_others_is_refused() {
        let root = tempfile::tempdir().unwrap();
        for bad in [0o777, 0o770, 0o720, 0o702] {
            chmod(root.path(), bad);
            assert_eq!(
                trusted_dir(root.path()),
                Err(Distrust::Writable { mode: bad }),
                "{bad:o}"
            );
        }
        chmod(root.path(), 0o700);
        let file = root.path().join("entry");
        fs::write(&file, b"x").unwrap();
        for bad in [0o660, 0o620, 0o602, 0o666] {
            chmod(&file, bad);
            let meta = fs::metadata(&file).unwrap();
            assert_eq!(
                trusted_file_for(&meta, current_uid()),
                Err(Distrust::Writable { mode: bad }),
                "{bad:o}"
            );
        }
        chmod(&file, 0o644);
        assert_eq!(
            trusted_file_for(&fs::metadata(&file).unwrap(), current_uid()),
            Ok(())
        );
    }

    #[test]
    fn another_owner_is_refused() {
        // Making a file another user owns needs root, so the check is asked for another uid.
        let root = tempfile::tempdir().unwrap();
        let me = current_uid();
        assert_eq!(fs::metadata(root.path()).unwrap().uid(), me);
        let other = me.wrapping_add(1);
        assert_eq!(
            trusted_dir_for(root.path(), other),
            Err(Distrust::OtherOwner {
                owner: me,
                user: other
            })
        );
        let file = root.path().join("entry");
        fs::write(&file, b"x").unwrap();
        let meta = fs::metadata(&file).unwrap();
        assert!(matches!(
            trusted_file_for(&meta, other),
            Err(Distrust::OtherOwner { .. })
        ));
        // Ownership is checked before the mode.
        chmod(root.path(), 0o777);
        assert!(matches!(
            trusted_dir_for(root.path(), other),
            Err(Distrust::OtherOwner { .. })
        ));
    }

    #[test]
    fn wrong_kinds_and_missing_paths_are_refused() {
        let root = tempfile::tempdir().unwrap();
        let file = root.path().join("file");
        fs::write(&file, b"x").unwrap();
        assert_eq!(trusted_dir(&file), Err(Distrust::NotDirectory));
        let meta = fs::metadata(root.path()).unwrap();
        assert_eq!(
            trusted_file_for(&meta, current_uid()),
            Err(Distrust::NotFile)
        );
        assert_eq!(
            trusted_dir(&root.path().join("missing")),
            Err(Distrust::Unreadable(io::ErrorKind::NotFound))
        );
    }

    #[test]
    fn the_warning_names_the_directory_the_problem_and_the_fix() {
        let dir = Path::new("/tmp/shared/kernels");
        let text = warning(dir, dir, &Distrust::Writable { mode: 0o777 });
        for word in [
            "/tmp/shared/kernels",
            "mode 777",
            "chmod 700 /tmp/shared/kernels",
        ] {
            assert!(text.contains(word), "{text}");
        }
        assert!(text.contains("GPU_CACHE_DIR"), "{text}");
        assert_eq!(text.lines().count(), 1);
        let file = dir.join("x.cubin");
        let text = warning(dir, &file, &Distrust::Writable { mode: 0o664 });
        assert!(
            text.contains("chmod 600 /tmp/shared/kernels/x.cubin"),
            "{text}"
        );
        let text = warning(
            dir,
            dir,
            &Distrust::OtherOwner {
                owner: 0,
                user: 1000,
            },
        );
        for word in [
            "owned by uid 0",
            "uid 1000",
            "a directory you own",
            "GPU_CACHE_DIR",
        ] {
            assert!(text.contains(word), "{text}");
        }
    }

    #[test]
    fn the_warning_is_printed_once_per_process() {
        let dir = Path::new("/nowhere");
        let why = Distrust::NotDirectory;
        warn_once(dir, dir, &why);
        assert!(!warn_once(dir, dir, &why));
    }
}
