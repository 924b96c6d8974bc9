//! Finding libcuda, libnvrtc, libcublas and libnccl without letting cudarc panic at the user.
//!
//! cudarc's dynamic loading panics when a library or a symbol is missing. We probe for the
//! libraries first and also catch any panic at the entry points, so a machine without CUDA gets
//! an [`Error`] that says what to install.

use std::panic::{self, AssertUnwindSafe};
use std::sync::OnceLock;

use crate::core::collective::CommError;
use crate::core::error::{Error, Result};

/// Which CUDA library an entry point belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Library {
    Driver,
    Nvrtc,
    Cublas,
    Nccl,
}

impl Library {
    fn missing(self) -> Error {
        match self {
            Library::Driver => Error::NoDriver,
            Library::Nvrtc => Error::NoNvrtc,
            Library::Cublas => Error::NoCublas,
            Library::Nccl => Error::Comm(CommError::NoNccl {
                versioned_only: nccl_versioned_only(),
            }),
        }
    }

    fn label(self) -> &'static str {
        match self {
            Library::Driver => "driver",
            Library::Nvrtc => "NVRTC",
            Library::Cublas => "cuBLAS",
            Library::Nccl => "NCCL",
        }
    }

    /// Probes once per process: the answer cannot change without restarting the process, since
    /// cudarc caches the library it loaded (or its failure to) itself.
    fn present(self) -> bool {
        static DRIVER: OnceLock<bool> = OnceLock::new();
        static NVRTC: OnceLock<bool> = OnceLock::new();
        static CUBLAS: OnceLock<bool> = OnceLock::new();
        static NCCL: OnceLock<bool> = OnceLock::new();
        match self {
            Library::Driver => *DRIVER.get_or_init(|| {
                keep_driver_loaded();
                probe(cudarc::driver::sys::is_culib_present)
            }),
            Library::Nvrtc => *NVRTC.get_or_init(|| probe(cudarc::nvrtc::sys::is_culib_present)),
            Library::Cublas => *CUBLAS.get_or_init(|| probe(cudarc::cublas::sys::is_culib_present)),
            Library::Nccl => *NCCL.get_or_init(|| probe(cudarc::nccl::sys::is_culib_present)),
        }
    }
}

/// Loads libcuda for the rest of the process before the probe loads and unloads it: cuda-gdb
/// prepares its view of the GPU when libcuda is first loaded, and sees no kernel at all once
/// that first copy is unloaded and another loaded (as it is when the probe's handle is
/// dropped before cudarc loads its own).
fn keep_driver_loaded() {
    #[cfg(unix)]
    for name in [c"libcuda.so.1", c"libcuda.so"] {
        // SAFETY: dlopen of a NUL-terminated name; the handle is never closed, so libcuda
        // stays loaded as it would be after cudarc's own load, and its initialisers are the
        // ones cudarc's load would run.
        let handle = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if !handle.is_null() {
            return;
        }
    }
}

/// Whether `libnccl.so.2` loads although none of the names cudarc tries does: the NCCL wheel
/// ships only that file, and the message then says to add a `libnccl.so` link.
fn nccl_versioned_only() -> bool {
    #[cfg(unix)]
    {
        // SAFETY: dlopen of a NUL-terminated name, closed at once; loading libnccl runs only its
        // own initialisers, which set up no state that outlives the handle.
        unsafe {
            let handle = libc::dlopen(c"libnccl.so.2".as_ptr(), libc::RTLD_LAZY | libc::RTLD_LOCAL);
            if handle.is_null() {
                return false;
            }
            libc::dlclose(handle);
        }
        true
    }
    #[cfg(not(unix))]
    false
}

/// Runs a probe, treating a panic inside it as "absent".
fn probe(check: unsafe fn() -> bool) -> bool {
    // SAFETY: callers pass cudarc's is_culib_present functions, which only dlopen candidate
    // library names and drop the handles; loading libcuda/libnvrtc/libcublas/libnccl runs no initialisers that
    // could break Rust invariants.
    panic::catch_unwind(|| unsafe { check() }).unwrap_or(false)
}

/// Whether libcuda loaded, without trying again when it did not.
pub(crate) fn driver_loaded() -> bool {
    Library::Driver.present()
}

/// Runs `f`, the first call into `library`, mapping absence and panics to errors.
pub(crate) fn guarded<R>(library: Library, f: impl FnOnce() -> Result<R>) -> Result<R> {
    if !library.present() {
        return Err(library.missing());
    }
    match panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(payload) => {
            let detail = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown panic".to_string());
            // cudarc panics with "Unable to dynamically load" when the library itself is missing
            // and "Missing symbol" when it is too old; only the first means "install it".
            if detail.contains("Unable to dynamically load") {
                Err(library.missing())
            } else {
                Err(Error::LibraryTooOld {
                    library: library.label(),
                    detail,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panics_become_errors() {
        // Only meaningful where the library is present; elsewhere the absence wins first.
        let result: Result<()> = guarded(Library::Nvrtc, || panic!("Missing symbol nvrtcFoo"));
        match result {
            Err(Error::NoNvrtc) => assert!(!Library::Nvrtc.present()),
            Err(Error::LibraryTooOld { library, detail }) => {
                assert_eq!(library, "NVRTC");
                assert!(detail.contains("nvrtcFoo"));
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}
