//! NVRTC: compiling a kernel's CUDA source to CUBIN (or PTX), and nothing else.
//!
//! cudarc's safe `compile_ptx_with_opts` yields PTX only, so this goes one level down to get a
//! CUBIN, which loads without a driver JIT step and caches better.

use std::ffi::{c_char, c_int, CStr, CString};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use cudarc::nvrtc::result::{self as nvrtc, NvrtcError};
use cudarc::nvrtc::sys::{self, nvrtcProgram, nvrtcResult};

use crate::core::cache::ArtifactKind;
use crate::core::checks::CHECKED_DEFINE;
use crate::core::error::{Error, Result};
use crate::core::kernel::KernelSpec;
use crate::cuda::loader::{guarded, Library};

/// What NVRTC is loaded and what it can target, queried once per process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct NvrtcInfo {
    /// (major, minor).
    pub version: (u32, u32),
    /// Architectures as `10 * major + minor`, ascending; empty if NVRTC could not say.
    pub supported_archs: Vec<u32>,
}

impl NvrtcInfo {
    /// The version as "major.minor".
    pub(crate) fn version_string(&self) -> String {
        format!("{}.{}", self.version.0, self.version.1)
    }
}

/// Loads NVRTC (once) and asks for its version and architectures.
pub(crate) fn nvrtc_info() -> Result<&'static NvrtcInfo> {
    static INFO: OnceLock<NvrtcInfo> = OnceLock::new();
    if let Some(info) = INFO.get() {
        return Ok(info);
    }
    let info = guarded(Library::Nvrtc, query_nvrtc)?;
    Ok(INFO.get_or_init(|| info))
}

fn query_nvrtc() -> Result<NvrtcInfo> {
    let (mut major, mut minor): (c_int, c_int) = (0, 0);
    // SAFETY: nvrtcVersion writes two ints through valid pointers to locals.
    unsafe { sys::nvrtcVersion(&mut major, &mut minor) }
        .result()
        .map_err(|source| Error::Nvrtc {
            context: "querying the NVRTC version",
            source: source.into(),
            log: String::new(),
        })?;
    let mut count: c_int = 0;
    // SAFETY: writes one int through a valid pointer.
    let counted = unsafe { sys::nvrtcGetNumSupportedArchs(&mut count) }.result();
    let mut archs = vec![0 as c_int; usize::try_from(count).unwrap_or(0)];
    // Without the list we still try the device's own architecture, so failure here is not fatal.
    // SAFETY: `archs` has room for the `count` ints NVRTC reported.
    let listed = counted.is_ok()
        && !archs.is_empty()
        && unsafe { sys::nvrtcGetSupportedArchs(archs.as_mut_ptr()) }
            .result()
            .is_ok();
    let mut supported_archs: Vec<u32> = if listed {
        archs
            .iter()
            .filter_map(|&a| u32::try_from(a).ok())
            .collect()
    } else {
        Vec::new()
    };
    supported_archs.sort_unstable();
    Ok(NvrtcInfo {
        version: (
            u32::try_from(major).unwrap_or(0),
            u32::try_from(minor).unwrap_or(0),
        ),
        supported_archs,
    })
}

/// The version of the NVRTC library this process loads, as (major, minor).
pub fn nvrtc_version() -> Result<(u32, u32)> {
    nvrtc_info().map(|info| info.version)
}

/// What NVRTC should produce for a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// SASS for `sm_<n>`: the device's own architecture.
    Cubin(u32),
    /// PTX for `compute_<n>`, an older architecture the driver JIT-compiles forward, used when
    /// NVRTC predates the GPU.
    Ptx(u32),
}

impl Target {
    /// The artifact this target produces.
    pub(crate) fn kind(self) -> ArtifactKind {
        match self {
            Target::Cubin(_) => ArtifactKind::Cubin,
            Target::Ptx(_) => ArtifactKind::Ptx,
        }
    }

    /// The NVRTC options for this target; nothing here needs CUDA headers on disk.
    pub(crate) fn options(self) -> Vec<String> {
        let arch = match self {
            Target::Cubin(n) => format!("--gpu-architecture=sm_{n}"),
            Target::Ptx(n) => format!("--gpu-architecture=compute_{n}"),
        };
        vec![arch, "--std=c++17".to_string()]
    }

    /// The options for this target in checked or unchecked mode. The options are part of the
    /// disk-cache key, so the two modes are cached apart.
    pub(crate) fn options_for(self, checked: bool) -> Vec<String> {
        let mut options = self.options();
        if checked {
            options.push(CHECKED_DEFINE.to_string());
        }
        if device_debug().is_some() {
            options.push("--device-debug".to_string());
        }
        options
    }
}

/// Where kernels' CUDA sources are written for cuda-gdb when `GPU_DEVICE_DEBUG=1`: they are
/// then compiled with `--device-debug` (no optimisation, full debug information) under their
/// path, so the debugger lists the generated source line by line. Read once per process.
pub(crate) fn device_debug() -> Option<&'static Path> {
    static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
    DIR.get_or_init(|| {
        let on = std::env::var("GPU_DEVICE_DEBUG").is_ok_and(|v| matches!(v.trim(), "1" | "true"));
        on.then(|| std::env::temp_dir().join("gpu-dsl-device-debug"))
    })
    .as_deref()
}

/// The name NVRTC gives the program: under `GPU_DEVICE_DEBUG`, the path of a copy of its
/// source that cuda-gdb can open (the bare name if it cannot be written).
fn program_name(kernel: &KernelSpec) -> String {
    let file = format!("{}.cu", kernel.name());
    let Some(dir) = device_debug() else {
        return file;
    };
    let path = dir.join(&file);
    match std::fs::create_dir_all(dir).and_then(|()| std::fs::write(&path, kernel.source())) {
        Ok(()) => path.to_string_lossy().into_owned(),
        Err(err) => {
            eprintln!(
                "GPU_DEVICE_DEBUG: cannot write {} ({err}); cuda-gdb will not list its source",
                path.display()
            );
            file
        }
    }
}

/// Picks the best target for compute capability `cc`, or `None` if NVRTC supports nothing that
/// can run on it.
pub(crate) fn choose_target(cc: (u32, u32), supported: &[u32]) -> Option<Target> {
    let wanted = cc.0 * 10 + cc.1;
    if supported.is_empty() || supported.contains(&wanted) {
        return Some(Target::Cubin(wanted));
    }
    // PTX for an older virtual architecture runs on newer GPUs of any major version.
    supported
        .iter()
        .copied()
        .filter(|&a| a < wanted)
        .max()
        .map(Target::Ptx)
}

/// Describes a supported-architecture list for error messages, e.g. "sm_75..sm_120".
pub(crate) fn describe_archs(supported: &[u32]) -> String {
    match (supported.first(), supported.last()) {
        (Some(lo), Some(hi)) => format!("sm_{lo}..sm_{hi}"),
        _ => "an unknown set of architectures".to_string(),
    }
}

/// What NVRTC produced for one kernel (instantiation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Compiled {
    /// CUBIN or PTX (PTX without its trailing NUL).
    pub image: Vec<u8>,
    /// The mangled entry a name expression lowered to; `None` for non-generic kernels.
    pub lowered_name: Option<String>,
    /// NVRTC's log of a successful compilation: its warnings, empty when there are none.
    pub warnings: String,
}

/// Compiles `kernel` with NVRTC into a CUBIN or PTX image; a generic kernel is instantiated
/// through `name_expression` (e.g. `scale<float, 256ULL>`).
pub(crate) fn compile(
    kernel: &KernelSpec,
    options: &[String],
    kind: ArtifactKind,
    name_expression: Option<&str>,
) -> Result<Compiled> {
    kernel.check_well_formed()?;
    let options = arch_specific_options(kernel, options)?;
    guarded(Library::Nvrtc, || {
        compile_unguarded(kernel, &options, kind, name_expression)
    })
}

/// `options` for `kernel`: a kernel that uses architecture-specific instructions (wgmma) is
/// compiled for `sm_90a` / `compute_90a` instead of `sm_90` / `compute_90`, and for no other
/// architecture.
fn arch_specific_options(kernel: &KernelSpec, options: &[String]) -> Result<Vec<String>> {
    let Some((major, minor)) = kernel.arch_specific() else {
        return Ok(options.to_vec());
    };
    let wanted = format!("{}", major * 10 + minor);
    options
        .iter()
        .map(|option| {
            let Some(arch) = option.strip_prefix("--gpu-architecture=") else {
                return Ok(option.clone());
            };
            let number = arch.trim_start_matches(|c: char| c.is_ascii_alphabetic() || c == '_');
            if number == wanted {
                Ok(format!("{option}a"))
            } else {
                Err(Error::ArchSpecificKernel {
                    kernel: kernel.name().to_string(),
                    needs: (major, minor),
                    target: arch.to_string(),
                })
            }
        })
        .collect()
}

/// Owns an nvrtcProgram so every exit path destroys it.
struct Program {
    handle: nvrtcProgram,
    // NVRTC may keep pointers into the source and name until the program is destroyed.
    _source: CString,
    _name: CString,
}

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: `handle` came from create_program and is destroyed only here.
        let _ = unsafe { nvrtc::destroy_program(self.handle) };
    }
}

impl Program {
    fn log(&self) -> String {
        // SAFETY: `handle` is a live program.
        match unsafe { nvrtc::get_program_log(self.handle) } {
            Ok(raw) => c_chars_to_string(&raw),
            Err(_) => String::from("<NVRTC did not provide a log>"),
        }
    }

    /// The mangled name a name expression added before compiling lowered to.
    fn lowered_name(&self, kernel: &KernelSpec, expression: &CStr) -> Result<String> {
        let mut lowered: *const c_char = std::ptr::null();
        // SAFETY: `handle` is a live, compiled program to which `expression` was added; NVRTC
        // writes a pointer to a string it owns until the program is destroyed.
        unsafe { sys::nvrtcGetLoweredName(self.handle, expression.as_ptr(), &mut lowered) }
            .result()
            .map_err(|source| Error::Nvrtc {
                context: "finding the mangled name of a template instantiation",
                source: source.into(),
                log: self.log(),
            })?;
        if lowered.is_null() {
            return Err(Error::InvalidKernel {
                kernel: kernel.name().to_string(),
                reason: format!(
                    "NVRTC found no lowered name for `{}`",
                    expression.to_string_lossy()
                ),
            });
        }
        // SAFETY: non-null, NUL-terminated and alive while `self` is (see above); copied out
        // before returning.
        let name = unsafe { CStr::from_ptr(lowered) };
        Ok(name.to_string_lossy().into_owned())
    }

    fn output(&self, kind: ArtifactKind) -> Result<Vec<u8>> {
        type SizeFn = unsafe fn(nvrtcProgram, *mut usize) -> nvrtcResult;
        type GetFn = unsafe fn(nvrtcProgram, *mut c_char) -> nvrtcResult;
        let (size_fn, get_fn): (SizeFn, GetFn) = match kind {
            ArtifactKind::Cubin => (sys::nvrtcGetCUBINSize, sys::nvrtcGetCUBIN),
            ArtifactKind::Ptx => (sys::nvrtcGetPTXSize, sys::nvrtcGetPTX),
        };
        let failed = |source: NvrtcError| Error::Nvrtc {
            context: "retrieving the compiled image",
            source: source.into(),
            log: self.log(),
        };
        let mut size = 0usize;
        // SAFETY: `handle` is a live, successfully compiled program; `size` is a valid out-pointer.
        unsafe { size_fn(self.handle, &mut size) }
            .result()
            .map_err(failed)?;
        let mut image = vec![0u8; size];
        if size > 0 {
            // SAFETY: `image` has exactly the `size` bytes NVRTC asked for.
            unsafe { get_fn(self.handle, image.as_mut_ptr().cast()) }
                .result()
                .map_err(failed)?;
        }
        if kind == ArtifactKind::Ptx {
            // PTX comes NUL-terminated; the driver wants it as a string without one.
            while image.last() == Some(&0) {
                image.pop();
            }
        }
        if image.is_empty() {
            return Err(Error::Nvrtc {
                context: "retrieving the compiled image (NVRTC returned an empty one)",
                source: NvrtcError(nvrtcResult::NVRTC_ERROR_INTERNAL_ERROR).into(),
                log: self.log(),
            });
        }
        Ok(image)
    }
}

fn compile_unguarded(
    kernel: &KernelSpec,
    options: &[String],
    kind: ArtifactKind,
    name_expression: Option<&str>,
) -> Result<Compiled> {
    let malformed = |reason: &str| Error::InvalidKernel {
        kernel: kernel.name().to_string(),
        reason: reason.to_string(),
    };
    let source = CString::new(kernel.source()).map_err(|_| malformed("NUL byte in source"))?;
    let name = CString::new(program_name(kernel)).map_err(|_| malformed("NUL byte in name"))?;
    if options.iter().any(|o| o.contains('\0')) {
        return Err(malformed("NUL byte in a compiler option"));
    }
    let expression = name_expression
        .map(CString::new)
        .transpose()
        .map_err(|_| malformed("NUL byte in a template instantiation"))?;
    let handle = nvrtc::create_program(&source, Some(&name)).map_err(|source| Error::Nvrtc {
        context: "creating an NVRTC program",
        source: source.into(),
        log: String::new(),
    })?;
    let program = Program {
        handle,
        _source: source,
        _name: name,
    };
    if let Some(expression) = &expression {
        // SAFETY: `program.handle` is live and `expression` a NUL-terminated string that
        // outlives the program's use of it (it lives until this function returns).
        unsafe { sys::nvrtcAddNameExpression(program.handle, expression.as_ptr()) }
            .result()
            .map_err(|source| Error::Nvrtc {
                context: "adding a template instantiation (name expression)",
                source: source.into(),
                log: String::new(),
            })?;
    }
    // SAFETY: `program.handle` is live; options were checked to contain no NUL bytes, so
    // cudarc's CString conversion cannot fail.
    match unsafe { nvrtc::compile_program(program.handle, options) } {
        Ok(()) => Ok(Compiled {
            image: program.output(kind)?,
            lowered_name: match &expression {
                Some(expression) => Some(program.lowered_name(kernel, expression)?),
                None => None,
            },
            warnings: program.log().trim().to_string(),
        }),
        Err(NvrtcError(nvrtcResult::NVRTC_ERROR_COMPILATION)) => Err(Error::Compile {
            kernel: kernel.name().to_string(),
            log: program.log(),
        }),
        Err(source) => Err(Error::Nvrtc {
            context: "compiling (NVRTC rejected the options or failed internally)",
            source: source.into(),
            log: program.log(),
        }),
    }
}

fn c_chars_to_string(raw: &[c_char]) -> String {
    let bytes: Vec<u8> = raw
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets() {
        let nvrtc_12_4 = [50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90];
        assert_eq!(choose_target((9, 0), &nvrtc_12_4), Some(Target::Cubin(90)));
        assert_eq!(choose_target((8, 6), &nvrtc_12_4), Some(Target::Cubin(86)));
        // A Blackwell GPU with an NVRTC that predates it: PTX for the newest known arch.
        assert_eq!(choose_target((12, 0), &nvrtc_12_4), Some(Target::Ptx(90)));
        // A GPU older than anything NVRTC supports.
        assert_eq!(choose_target((3, 5), &nvrtc_12_4), None);
        // NVRTC could not list its architectures: try the device's own.
        assert_eq!(choose_target((10, 0), &[]), Some(Target::Cubin(100)));
        assert_eq!(describe_archs(&nvrtc_12_4), "sm_50..sm_90");
    }

    #[test]
    fn options_need_no_headers() {
        assert_eq!(
            Target::Cubin(90).options(),
            ["--gpu-architecture=sm_90", "--std=c++17"]
        );
        assert_eq!(
            Target::Ptx(120).options()[0],
            "--gpu-architecture=compute_120"
        );
        assert_eq!(Target::Cubin(90).kind(), ArtifactKind::Cubin);
        assert_eq!(
            Target::Cubin(90).options_for(false),
            Target::Cubin(90).options()
        );
        assert_eq!(
            Target::Cubin(90).options_for(true),
            ["--gpu-architecture=sm_90", "--std=c++17", "-DGPU_CHECKED"]
        );
        assert_eq!(Target::Ptx(90).kind(), ArtifactKind::Ptx);
    }

    #[test]
    fn cubin_with_real_nvrtc() {
        if !crate::test_nvrtc() {
            return;
        }
        let info = nvrtc_info().expect("NVRTC is usable");
        assert!(info.version.0 >= 11, "{info:?}");
        assert!(info.supported_archs.contains(&90), "{info:?}");
        let kernel = KernelSpec::plain(
            "k",
            "k",
            "extern \"C\" __global__ void k(float* x, unsigned long long n) { if (n) x[0] = 1.0f; }",
            &[],
            "",
            false,
        );
        let target = choose_target((9, 0), &info.supported_archs).unwrap();
        let cubin = compile(&kernel, &target.options(), target.kind(), None).unwrap();
        assert_eq!(&cubin.image[..4], b"\x7fELF");
        assert_eq!(cubin.lowered_name, None);
        let ptx = compile(&kernel, &Target::Ptx(90).options(), ArtifactKind::Ptx, None)
            .unwrap()
            .image;
        assert!(
            !ptx.contains(&0),
            "PTX is handed to the driver without NUL bytes"
        );
        assert!(String::from_utf8(ptx).unwrap().contains(".entry k"));
    }

    #[test]
    fn log_conversion_stops_at_nul() {
        let raw: Vec<c_char> = b"error\0junk".iter().map(|&b| b as c_char).collect();
        assert_eq!(c_chars_to_string(&raw), "error");
    }
}
