//! Which backend [`Gpu::best`] picks: `GPU_BACKEND` asks for one, and CUDA device 0 is used
//! when it opens, else the CPU backend.

use crate::core::error::{Error, Result};
use crate::device::Gpu;

/// The environment variable [`Gpu::best`] reads: `cpu`, `cuda` or `auto` (the default).
pub const BACKEND_ENV: &str = "GPU_BACKEND";

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
fn backend_env() -> Option<String> {
    std::env::var_os(BACKEND_ENV).map(|value| value.to_string_lossy().into_owned())
}

impl Gpu {
    /// The best device here: CUDA device 0 when it is usable, else the CPU backend.
    ///
    /// `GPU_BACKEND=cpu` forces the CPU backend; `GPU_BACKEND=cuda` forces CUDA, and then a
    /// machine without a usable device is an error ([`Error::CudaRequired`]) rather than a
    /// silent fallback.
    pub fn best() -> Result<Gpu> {
        let choice = parse_backend_env(backend_env().as_deref())?;
        choose_backend(choice, || Gpu::new(0), Gpu::cpu)
    }
}

/// The device tests run kernels on: [`Gpu::best`], so CUDA device 0 where there is one and the
/// CPU backend elsewhere; tests using it never skip. Panics, failing the test, when
/// `GPU_BACKEND` is invalid or demands an absent CUDA device.
#[doc(hidden)]
pub fn test_device() -> Gpu {
    match Gpu::best() {
        Ok(gpu) => gpu,
        Err(err) => panic!("no device to test on: {err}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::backend::Backend;

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

    #[test]
    fn best_follows_the_environment_here() {
        // Whatever GPU_BACKEND says in this process, best() agrees with the pure functions.
        let choice = parse_backend_env(backend_env().as_deref());
        match (choice, Gpu::best()) {
            (Ok(BackendChoice::Cpu), Ok(gpu)) => assert_eq!(gpu.backend(), Backend::Cpu),
            (Ok(BackendChoice::Cuda), result) => {
                assert_eq!(result.is_ok(), Gpu::new(0).is_ok());
            }
            (Ok(BackendChoice::Auto), Ok(gpu)) => {
                let expected = if Gpu::new(0).is_ok() {
                    Backend::Cuda
                } else {
                    Backend::Cpu
                };
                assert_eq!(gpu.backend(), expected);
            }
            (Err(_), Err(Error::InvalidBackend { .. })) => {}
            (choice, result) => panic!("{choice:?} gave {result:?}"),
        }
    }
}
