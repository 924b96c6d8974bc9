//! Ahead-of-time kernels: compiled by NVRTC while `cargo build` runs, embedded in the program,
//! and loaded at run time without NVRTC.
//!
//! A build script cannot see the kernels of its own crate, so the kernels to compile ahead of
//! time live in a crate the build script depends on (a `[build-dependencies]` entry): there
//! each `#[kernel]`'s `KERNEL` static, with its CUDA source, is an ordinary Rust value.
//!
//! ```no_run
//! // The body of build.rs's `main`, with `my-kernels` in [dependencies] and
//! // [build-dependencies]:
//! gpu_dsl_runtime::aot::Builder::new("my-kernels")
//!     // .kernel(&my_kernels::saxpy::KERNEL)
//!     // .generic(&my_kernels::scale::KERNEL, &[TemplateArg::of::<f32>()])
//!     .emit();
//! ```
//!
//! and in the program, before the first launch: `gpu_dsl_runtime::include_aot!("my-kernels")?;`.
//!
//! At a kernel's first use on a device the runtime takes, in order: a CUBIN for the device's
//! architecture, a CUBIN of the same major version built for an older minor, PTX for an
//! architecture no newer than the device (compiled by the driver), and finally the disk cache
//! or NVRTC as without AOT. [`crate::compile_stats`] counts which; [`compiled_at_run_time`] (or
//! `GPU_AOT_REPORT=1`) lists the kernels no bundle held.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::core::aot::{self as bundle, Entry, Image};
use crate::core::checks::CHECKED_DEFINE;
use crate::core::error::{Error, Result};
use crate::core::generic::{check_generic, check_template_args, name_expression};
use crate::core::generic::{rust_instantiation, TemplateArg};
use crate::cuda::compile::{compile, nvrtc_info, Target};
use crate::kernel::Kernel;

pub use crate::core::aot::ImageKind;

/// Which builds of each kernel a [`Builder`] compiles.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Modes {
    /// The mode a launch uses when neither it nor `GPU_CHECKED` chooses: unchecked, except for
    /// kernels declared checked by default.
    #[default]
    Default,
    /// Only unchecked builds.
    Unchecked,
    /// Only checked (`-DGPU_CHECKED`) builds.
    Checked,
    /// Both, for programs that switch with `GPU_CHECKED`.
    Both,
}

impl Modes {
    fn for_kernel(self, kernel: &Kernel) -> &'static [bool] {
        match self {
            Modes::Default if kernel.checked_by_default() => &[true],
            Modes::Default | Modes::Unchecked => &[false],
            Modes::Checked => &[true],
            Modes::Both => &[false, true],
        }
    }
}

/// Environment variable that overrides a [`Builder`]'s targets at build time, e.g.
/// `GPU_AOT_ARCHS=sm_86,sm_90,compute_90`.
pub const ARCHS_ENV: &str = "GPU_AOT_ARCHS";

/// Compiles kernels for a list of architectures into a bundle, from a build script.
#[derive(Clone, Debug)]
pub struct Builder {
    name: String,
    cubins: Vec<u32>,
    ptx: Vec<u32>,
    kernels: Vec<(&'static Kernel, Vec<TemplateArg>)>,
    modes: Modes,
    threads: usize,
}

impl Builder {
    /// A bundle named `name` (written as `<name>.aot`) with the default targets: CUBINs for
    /// `sm_80` and `sm_90`, and PTX for `compute_90` for newer GPUs.
    pub fn new(name: &str) -> Builder {
        Builder {
            name: name.to_string(),
            cubins: vec![80, 90],
            ptx: vec![90],
            kernels: Vec::new(),
            modes: Modes::Default,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }

    /// The real architectures to build CUBINs for, as (major, minor): `(8, 6)` is `sm_86`.
    pub fn cubin_archs(mut self, archs: &[(u32, u32)]) -> Builder {
        self.cubins = archs
            .iter()
            .map(|&(major, minor)| major * 10 + minor)
            .collect();
        self
    }

    /// The virtual architectures to build PTX for (none: no driver JIT fallback).
    pub fn ptx_archs(mut self, archs: &[(u32, u32)]) -> Builder {
        self.ptx = archs
            .iter()
            .map(|&(major, minor)| major * 10 + minor)
            .collect();
        self
    }

    /// Adds a kernel without template arguments.
    pub fn kernel(mut self, kernel: &'static Kernel) -> Builder {
        self.kernels.push((kernel, Vec::new()));
        self
    }

    /// Adds kernels without template arguments.
    pub fn kernels(mut self, kernels: impl IntoIterator<Item = &'static Kernel>) -> Builder {
        self.kernels
            .extend(kernels.into_iter().map(|kernel| (kernel, Vec::new())));
        self
    }

    /// Adds one instantiation of a generic kernel.
    pub fn generic(mut self, kernel: &'static Kernel, template_args: &[TemplateArg]) -> Builder {
        self.kernels.push((kernel, template_args.to_vec()));
        self
    }

    /// Adds kernels with their template arguments (empty for plain kernels), as the lists
    /// kernel libraries publish.
    pub fn instantiations(
        mut self,
        all: impl IntoIterator<Item = (&'static Kernel, Vec<TemplateArg>)>,
    ) -> Builder {
        self.kernels.extend(all);
        self
    }

    /// Which builds of each kernel to compile.
    pub fn modes(mut self, modes: Modes) -> Builder {
        self.modes = modes;
        self
    }

    /// How many NVRTC compilations run at once (default: one per CPU).
    pub fn threads(mut self, threads: usize) -> Builder {
        self.threads = threads.max(1);
        self
    }

    /// The same builder with its targets taken from `spec` (`sm_<n>` for CUBINs, `compute_<n>`
    /// for PTX, separated by commas), as [`ARCHS_ENV`] gives them.
    pub fn targets_from(mut self, spec: &str) -> Result<Builder> {
        let mut cubins = Vec::new();
        let mut ptx = Vec::new();
        for target in spec.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            let number = |digits: &str| digits.parse::<u32>().ok().filter(|&n| n >= 10);
            match (target.strip_prefix("sm_"), target.strip_prefix("compute_")) {
                (Some(digits), _) if number(digits).is_some() => cubins.extend(number(digits)),
                (_, Some(digits)) if number(digits).is_some() => ptx.extend(number(digits)),
                _ => {
                    return Err(self.error(format!(
                        "target `{target}` is neither sm_<n> nor compute_<n> (e.g. sm_90, \
                         compute_90)"
                    )))
                }
            }
        }
        if cubins.is_empty() && ptx.is_empty() {
            return Err(self.error(format!("`{spec}` names no target")));
        }
        self.cubins = cubins;
        self.ptx = ptx;
        Ok(self)
    }

    fn error(&self, reason: String) -> Error {
        Error::AotBuild {
            bundle: self.name.clone(),
            reason,
        }
    }

    /// Compiles every kernel for every target and returns the bundle's bytes.
    pub fn build(&self) -> Result<Vec<u8>> {
        let info = nvrtc_info()?;
        for &arch in self.cubins.iter().chain(&self.ptx) {
            if !info.supported_archs.is_empty() && !info.supported_archs.contains(&arch) {
                return Err(self.error(format!(
                    "NVRTC {} cannot target architecture {arch} (it supports {:?})",
                    info.version_string(),
                    info.supported_archs
                )));
            }
        }
        let mut jobs = Vec::new();
        // Instantiations that spell the same C++ (u64 and usize are both `unsigned long
        // long`) are one variant, compiled once.
        let mut seen = HashSet::new();
        for (kernel, args) in &self.kernels {
            if kernel.is_generic() {
                check_template_args(kernel.spec(), args)?;
            } else {
                check_generic(kernel.spec(), !args.is_empty())?;
            }
            for &checked in self.modes.for_kernel(kernel) {
                if seen.insert(variant_key(kernel, args, checked)) {
                    jobs.push(Job {
                        kernel,
                        args,
                        checked,
                    });
                }
            }
        }
        let results = self.run_jobs(&jobs);
        let mut compiled = Vec::new();
        for result in results {
            compiled.push(result?);
        }
        let entries: Vec<Entry<'_>> = compiled
            .iter()
            .map(|variant| Entry {
                key: variant.key,
                label: &variant.label,
                lowered: &variant.lowered,
                checked: variant.checked,
                images: variant
                    .images
                    .iter()
                    .map(|(kind, arch, arch_specific, bytes)| Image {
                        kind: *kind,
                        arch: *arch,
                        arch_specific: *arch_specific,
                        bytes,
                    })
                    .collect(),
            })
            .collect();
        Ok(bundle::encode(&entries))
    }

    /// Runs the jobs on [`Builder::threads`] threads; results come back in the jobs' order.
    fn run_jobs(&self, jobs: &[Job<'_>]) -> Vec<Result<Variant>> {
        let next = AtomicUsize::new(0);
        let results: Mutex<Vec<Option<Result<Variant>>>> =
            Mutex::new((0..jobs.len()).map(|_| None).collect());
        std::thread::scope(|scope| {
            for _ in 0..self.threads.min(jobs.len()) {
                scope.spawn(|| loop {
                    let index = next.fetch_add(1, Ordering::Relaxed);
                    let Some(job) = jobs.get(index) else { break };
                    let result = self.compile_variant(job);
                    results
                        .lock()
                        .unwrap_or_else(|poisoned| poisoned.into_inner())[index] = Some(result);
                });
            }
        });
        results
            .into_inner()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .into_iter()
            .map(|result| {
                result.unwrap_or_else(|| Err(self.error("a compile thread stopped".to_string())))
            })
            .collect()
    }

    /// One kernel variant for every target: a kernel pinned to an architecture gets only its
    /// own `sm_<n>a` CUBIN, whatever the targets.
    fn compile_variant(&self, job: &Job<'_>) -> Result<Variant> {
        let spec = job.kernel.spec();
        let expression = spec.is_generic().then(|| name_expression(spec, job.args));
        let targets: Vec<Target> = match spec.arch_specific() {
            Some((major, minor)) => vec![Target::Cubin(major * 10 + minor)],
            None => {
                let cubins = self.cubins.iter().map(|&arch| Target::Cubin(arch));
                cubins
                    .chain(self.ptx.iter().map(|&arch| Target::Ptx(arch)))
                    .collect()
            }
        };
        let mut images = Vec::new();
        let mut lowered = String::new();
        for target in targets {
            // Never `--device-debug`: GPU_DEVICE_DEBUG at build time must not leak into a
            // release's images (and the runtime passes bundles over when it is set).
            let mut options = target.options();
            if job.checked {
                options.push(CHECKED_DEFINE.to_string());
            }
            let compiled = compile(spec, &options, target.kind(), expression.as_deref())?;
            if let Some(name) = compiled.lowered_name {
                lowered = name;
            }
            let (kind, arch) = match target {
                Target::Cubin(arch) => (ImageKind::Cubin, arch),
                Target::Ptx(arch) => (ImageKind::Ptx, arch),
            };
            images.push((kind, arch, spec.arch_specific().is_some(), compiled.image));
        }
        let mode = if job.checked { "checked" } else { "unchecked" };
        Ok(Variant {
            key: variant_key(job.kernel, job.args, job.checked),
            label: format!("{} ({mode})", rust_instantiation(spec, job.args)),
            lowered,
            checked: job.checked,
            images,
        })
    }

    /// Builds the bundle into `dir/<name>.aot` and returns its path.
    pub fn write_to(&self, dir: &Path) -> Result<PathBuf> {
        let bytes = self.build()?;
        let path = dir.join(format!("{}.aot", self.name));
        std::fs::write(&path, bytes)
            .map_err(|source| self.error(format!("cannot write {}: {source}", path.display())))?;
        Ok(path)
    }

    /// What a build script calls: builds into `$OUT_DIR/<name>.aot` (targets overridden by
    /// [`ARCHS_ENV`] when set), tells cargo when to run it again, and on failure prints what
    /// went wrong and what to install, and exits with an error so the build stops.
    pub fn emit(self) {
        println!("cargo:rerun-if-env-changed={ARCHS_ENV}");
        println!("cargo:rerun-if-env-changed=LD_LIBRARY_PATH");
        let name = self.name.clone();
        match self.emit_result() {
            Ok(path) => println!("cargo:rerun-if-changed={}", path.display()),
            Err(err) => {
                eprintln!("error: building the ahead-of-time kernel bundle `{name}` failed: {err}");
                if matches!(err, Error::NoNvrtc | Error::LibraryTooOld { .. }) {
                    eprintln!(
                        "AOT kernels are compiled by NVRTC while cargo builds, so NVRTC must be \
                         installed on the build machine (it is not needed where the program \
                         runs): `pip install nvidia-cuda-nvrtc`, then put its lib directory \
                         (e.g. .../site-packages/nvidia/cu13/lib) on LD_LIBRARY_PATH, or build \
                         without the `aot` feature."
                    );
                }
                std::process::exit(1);
            }
        }
    }

    fn emit_result(self) -> Result<PathBuf> {
        let out_dir = std::env::var_os("OUT_DIR").ok_or_else(|| {
            self.error("OUT_DIR is not set: call emit() from a build script".into())
        })?;
        let builder = match std::env::var(ARCHS_ENV) {
            Ok(spec) => self.targets_from(&spec)?,
            Err(_) => self,
        };
        builder.write_to(Path::new(&out_dir))
    }
}

/// The bundle key of one variant of `kernel`: what the runtime looks it up by.
fn variant_key(kernel: &Kernel, template_args: &[TemplateArg], checked: bool) -> [u8; 32] {
    let spec = kernel.spec();
    let expression = spec
        .is_generic()
        .then(|| name_expression(spec, template_args));
    let entry_text = expression.as_deref().unwrap_or(spec.entry());
    bundle::entry_key(spec.source(), entry_text, checked)
}

/// Whether a registered bundle holds this variant of `kernel` (its instantiation with
/// `template_args`, checked or not): its first launch then needs no NVRTC.
pub fn is_registered(
    kernel: &'static Kernel,
    template_args: &[TemplateArg],
    checked: bool,
) -> bool {
    bundle::lookup(&variant_key(kernel, template_args, checked)).is_some()
}

/// One kernel variant to compile.
struct Job<'a> {
    kernel: &'static Kernel,
    args: &'a [TemplateArg],
    checked: bool,
}

/// One compiled kernel variant: its images as (kind, arch, arch-specific, bytes).
struct Variant {
    key: [u8; 32],
    label: String,
    lowered: String,
    checked: bool,
    images: Vec<(ImageKind, u32, bool, Vec<u8>)>,
}

/// One kernel variant of a bundle, as [`contents`] lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BundleEntry<'a> {
    /// The kernel's Rust name with its template arguments and mode, e.g.
    /// "scale::<f32, 256> (unchecked)".
    pub label: &'a str,
    /// The mangled entry point of a generic instantiation; empty for plain kernels.
    pub lowered_name: &'a str,
    /// Whether this is the checked (`-DGPU_CHECKED`) build.
    pub checked: bool,
    /// Its images.
    pub images: Vec<BundleImage<'a>>,
}

/// One image of a [`BundleEntry`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BundleImage<'a> {
    /// CUBIN or PTX.
    pub kind: ImageKind,
    /// The architecture, as (major, minor).
    pub arch: (u32, u32),
    /// Built for `sm_<arch>a`, so it runs on that architecture only.
    pub arch_specific: bool,
    /// The image itself.
    pub bytes: &'a [u8],
}

/// What a bundle holds, without registering it; a damaged one is an error.
pub fn contents(bundle: &[u8]) -> Result<Vec<BundleEntry<'_>>> {
    Ok(bundle::decode(bundle)?
        .into_iter()
        .map(|entry| BundleEntry {
            label: entry.label,
            lowered_name: entry.lowered,
            checked: entry.checked,
            images: entry
                .images
                .iter()
                .map(|image| BundleImage {
                    kind: image.kind,
                    arch: (image.arch / 10, image.arch % 10),
                    arch_specific: image.arch_specific,
                    bytes: image.bytes,
                })
                .collect(),
        })
        .collect())
}

/// Registers a bundle (usually embedded with [`crate::include_aot!`]): its kernels' first uses
/// load its images instead of compiling. Returns how many kernel variants it holds.
pub fn register(bundle: &'static [u8]) -> Result<usize> {
    bundle::register(bundle)
}

/// Queues a bundle that is parsed at the first kernel lookup; what registration before `main`
/// uses. A bundle that turns out unusable is reported on stderr then and ignored.
#[doc(hidden)]
pub fn __register_later(bundle: &'static [u8]) {
    bundle::register_later(bundle);
}

/// How many kernel variants the registered bundles hold.
pub fn registered_variants() -> usize {
    bundle::registered_count()
}

/// The kernel variants this process compiled at run time (NVRTC or its disk cache) because no
/// registered bundle held them, as "`name::<args>` (mode)": what to add to an AOT list.
/// `GPU_AOT_REPORT=1` prints each as it happens.
pub fn compiled_at_run_time() -> Vec<String> {
    bundle::compiled_at_run_time()
}

/// Embeds `$OUT_DIR/<name>.aot`, written by [`Builder::emit`] in the build script, and
/// registers it: `gpu_dsl_runtime::include_aot!("my-kernels")?;` evaluates to
/// `Result<usize>`.
#[macro_export]
macro_rules! include_aot {
    ($name:literal) => {
        $crate::aot::register(::core::include_bytes!(::core::concat!(
            ::core::env!("OUT_DIR"),
            "/",
            $name,
            ".aot"
        )))
    };
}

/// Registers a `&'static [u8]` bundle before `main` runs, where the platform has initialiser
/// sections (ELF, Mach-O, PE): what a library that ships AOT kernels uses, since no call of its
/// own runs before its users' first launch. The bundle is parsed at the first kernel lookup.
#[doc(hidden)]
#[macro_export]
macro_rules! __register_aot_at_startup {
    ($bundle:expr) => {
        const _: () = {
            extern "C" fn register_bundle() {
                $crate::aot::__register_later($bundle);
            }
            // Kept by the linker although nothing names it: rustc passes every `#[used]`
            // static of a dependency to the link.
            #[used]
            #[cfg_attr(
                any(target_os = "linux", target_os = "android", target_os = "freebsd"),
                link_section = ".init_array"
            )]
            #[cfg_attr(target_vendor = "apple", link_section = "__DATA,__mod_init_func")]
            #[cfg_attr(windows, link_section = ".CRT$XCU")]
            static REGISTER: extern "C" fn() = register_bundle;
        };
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse() {
        let builder = Builder::new("t")
            .targets_from("sm_86, sm_90,compute_90")
            .unwrap();
        assert_eq!(builder.cubins, [86, 90]);
        assert_eq!(builder.ptx, [90]);
        for bad in ["sm_x", "gfx90", "", "compute_"] {
            match Builder::new("t").targets_from(bad) {
                Err(Error::AotBuild { bundle, reason }) => {
                    assert_eq!(bundle, "t");
                    assert!(!reason.is_empty());
                }
                other => panic!("{bad}: {other:?}"),
            }
        }
    }

    #[test]
    fn defaults_are_sm80_sm90_and_ptx90() {
        let builder = Builder::new("t");
        assert_eq!(builder.cubins, [80, 90]);
        assert_eq!(builder.ptx, [90]);
        assert_eq!(builder.modes, Modes::Default);
    }
}
