//! NVTX ranges, so Nsight Systems names the profiler's launches and copies: libnvToolsExt is
//! loaded at run time where it is installed, and without it a range is nothing at all.
//!
//! Loaded by hand with `dlopen` rather than through cudarc, whose loader panics on a missing
//! library and which would need a feature for NVTX; two functions are all the profiler uses.

use std::ffi::{c_char, c_int, CString};
use std::marker::PhantomData;
use std::sync::OnceLock;

type PushFn = unsafe extern "C" fn(*const c_char) -> c_int;
type PopFn = unsafe extern "C" fn() -> c_int;

/// NVTX's range functions.
struct Nvtx {
    push: PushFn,
    pop: PopFn,
}

/// The library, loaded on first use; `None` where it is absent.
fn nvtx() -> Option<&'static Nvtx> {
    static NVTX: OnceLock<Option<Nvtx>> = OnceLock::new();
    NVTX.get_or_init(load).as_ref()
}

#[cfg(unix)]
fn load() -> Option<Nvtx> {
    for name in [c"libnvToolsExt.so.1", c"libnvToolsExt.so"] {
        // SAFETY: dlopen of a NUL-terminated name; the handle is never closed, so the symbols
        // below stay valid for the rest of the process.
        let handle = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            continue;
        }
        // SAFETY: dlsym on a live handle with NUL-terminated names.
        let (push, pop) = unsafe {
            (
                libc::dlsym(handle, c"nvtxRangePushA".as_ptr()),
                libc::dlsym(handle, c"nvtxRangePop".as_ptr()),
            )
        };
        if push.is_null() || pop.is_null() {
            continue;
        }
        // SAFETY: non-null addresses of NVTX's C functions `int nvtxRangePushA(const char*)`
        // and `int nvtxRangePop(void)` (nvToolsExt.h), which these types spell.
        let (push, pop) = unsafe {
            (
                std::mem::transmute::<*mut libc::c_void, PushFn>(push),
                std::mem::transmute::<*mut libc::c_void, PopFn>(pop),
            )
        };
        return Some(Nvtx { push, pop });
    }
    None
}

#[cfg(not(unix))]
fn load() -> Option<Nvtx> {
    None
}

/// An open NVTX range on this thread, closed when dropped; inert without libnvToolsExt.
pub(crate) struct NvtxRange {
    open: bool,
    /// NVTX ranges belong to a thread: the pop must happen where the push did.
    thread: PhantomData<*const ()>,
}

impl NvtxRange {
    /// Opens a range named `name()` (called only when NVTX is present).
    pub(crate) fn push(name: impl FnOnce() -> String) -> NvtxRange {
        let Some(nvtx) = nvtx() else {
            return NvtxRange::closed();
        };
        let Ok(name) = CString::new(name()) else {
            return NvtxRange::closed();
        };
        // SAFETY: a NUL-terminated string that lives through the call; NVTX copies the
        // message before returning.
        unsafe { (nvtx.push)(name.as_ptr()) };
        NvtxRange {
            open: true,
            thread: PhantomData,
        }
    }

    fn closed() -> NvtxRange {
        NvtxRange {
            open: false,
            thread: PhantomData,
        }
    }
}

impl Drop for NvtxRange {
    fn drop(&mut self) {
        if let (true, Some(nvtx)) = (self.open, nvtx()) {
            // SAFETY: closes the range this value opened, on the thread that opened it (the
            // value is not Send).
            unsafe { (nvtx.pop)() };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_without_the_library_is_inert() {
        let range = NvtxRange::push(|| "profiled".to_string());
        // Where libnvToolsExt is installed the range is real; elsewhere nothing was opened.
        assert_eq!(range.open, nvtx().is_some());
        drop(range);
        let nul = NvtxRange::push(|| "a\0b".to_string());
        assert!(!nul.open);
    }
}
