//! Which backend runs kernels: a CUDA device, or the CPU backend that runs every kernel's CPU
//! twin with the same semantics; and how `GPU_BACKEND` chooses one for [`crate::Gpu::best`].

use std::fmt;

use crate::core::error::{Error, Result};

/// The environment variable [`crate::Gpu::best`] reads: `cpu`, `cuda` or `auto` (the default).
pub const BACKEND_ENV: &str = "GPU_BACKEND";

/// What runs a device's kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Backend {
    /// A CUDA GPU: kernels are compiled by NVRTC and launched through the driver.
    Cuda,
    /// The host CPU: each kernel's CPU twin runs every thread of the grid.
    Cpu,
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::Cuda => "CUDA",
            Backend::Cpu => "CPU",
        })
    }
}

/// What `GPU_BACKEND` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BackendChoice {
    /// CUDA device 0 when usable, else the CPU backend.
    Auto,
    /// CUDA device 0 or an error.
    Cuda,
    /// The CPU backend.
    Cpu,
}

/// Parses `GPU_BACKEND` (case-insensitive, surrounding blanks ignored); unset or empty is
/// [`BackendChoice::Auto`].
pub(crate) fn parse_backend_env(value: Option<&str>) -> Result<BackendChoice> {
    let Some(value) = value else {
        return Ok(BackendChoice::Auto);
    };
    match value.trim().to_ascii_lowercase().as_str() {
        "" | "auto" | "best" => Ok(BackendChoice::Auto),
        "cuda" | "gpu" => Ok(BackendChoice::Cuda),
        "cpu" => Ok(BackendChoice::Cpu),
        _ => Err(Error::InvalidBackend {
            value: value.to_string(),
        }),
    }
}

/// Applies a choice: `cuda` opens the CUDA device (its failure is the error), `cpu` takes the
/// CPU backend, `auto` the CUDA device when it opens and the CPU backend otherwise. Generic so
/// it is tested without a GPU and without touching the process environment.
pub(crate) fn choose_backend<G>(
    choice: BackendChoice,
    cuda: impl FnOnce() -> Result<G>,
    cpu: impl FnOnce() -> G,
) -> Result<G> {
    match choice {
        BackendChoice::Cpu => Ok(cpu()),
        BackendChoice::Cuda => cuda().map_err(|source| Error::CudaRequired {
            source: Box::new(source),
        }),
        BackendChoice::Auto => Ok(cuda().unwrap_or_else(|_| cpu())),
    }
}

/// `GPU_BACKEND` as text; a value that is not UTF-8 is passed on lossily (and then rejected).
pub(crate) fn backend_env() -> Option<String> {
    std::env::var_os(BACKEND_ENV).map(|value| value.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_environment_variable() {
        assert_eq!(parse_backend_env(None).unwrap(), BackendChoice::Auto);
        assert_eq!(parse_backend_env(Some("")).unwrap(), BackendChoice::Auto);
        assert_eq!(
            parse_backend_env(Some("auto")).unwrap(),
            BackendChoice::Auto
        );
        assert_eq!(
            parse_backend_env(Some(" CPU ")).unwrap(),
            BackendChoice::Cpu
        );
        assert_eq!(
            parse_backend_env(Some("cuda")).unwrap(),
            BackendChoice::Cuda
        );
        match parse_backend_env(Some("tpu")) {
            Err(err @ Error::InvalidBackend { .. }) => {
                let text = err.to_string();
                assert!(
                    text.contains("\"tpu\"") && text.contains("cpu, cuda or auto"),
                    "{text}"
                );
            }
            other => panic!("expected InvalidBackend, got {other:?}"),
        }
    }

    #[test]
    fn choice_applies_cuda_availability() {
        let no_cuda = || -> Result<&str> { Err(Error::NoDriver) };
        let cuda = || -> Result<&str> { Ok("cuda") };
        let cpu = || "cpu";
        assert_eq!(
            choose_backend(BackendChoice::Auto, cuda, cpu).unwrap(),
            "cuda"
        );
        assert_eq!(
            choose_backend(BackendChoice::Auto, no_cuda, cpu).unwrap(),
            "cpu"
        );
        assert_eq!(
            choose_backend(BackendChoice::Cpu, cuda, cpu).unwrap(),
            "cpu"
        );
        assert_eq!(
            choose_backend(BackendChoice::Cuda, cuda, cpu).unwrap(),
            "cuda"
        );
        match choose_backend(BackendChoice::Cuda, no_cuda, cpu) {
            Err(err @ Error::CudaRequired { .. }) => {
                let text = err.to_string();
                assert!(text.contains("GPU_BACKEND=cuda"), "{text}");
                assert!(text.contains("libcuda.so.1"), "names the cause: {text}");
            }
            other => panic!("expected CudaRequired, got {other:?}"),
        }
    }
}
