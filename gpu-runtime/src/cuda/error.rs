//! Turning cudarc's status codes into the runtime's backend-neutral error data.

use cudarc::driver::DriverError;
use cudarc::nvrtc::result::NvrtcError;

use crate::core::error::{DriverStatus, Error, NvrtcStatus};
use crate::cuda::loader;

impl From<DriverError> for DriverStatus {
    fn from(err: DriverError) -> DriverStatus {
        // The enum's Debug name needs no FFI; the long description calls into libcuda, which
        // would panic if it never loaded (only possible for statuses built by hand).
        let description = if loader::driver_loaded() {
            err.error_string()
                .ok()
                .map(|text| text.to_string_lossy().into_owned())
        } else {
            None
        };
        DriverStatus {
            code: err.0 as u32,
            name: format!("{:?}", err.0),
            description,
        }
    }
}

impl From<NvrtcError> for NvrtcStatus {
    fn from(err: NvrtcError) -> NvrtcStatus {
        NvrtcStatus {
            code: err.0 as u32,
            name: format!("{:?}", err.0),
        }
    }
}

impl Error {
    /// Wraps a driver status with what the runtime was doing.
    pub(crate) fn driver(context: &'static str) -> impl FnOnce(DriverError) -> Error {
        move |source| Error::Driver {
            context,
            source: source.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use cudarc::driver::sys::CUresult;
    use cudarc::nvrtc::sys::nvrtcResult;

    use super::*;

    #[test]
    fn statuses_keep_their_names() {
        let status = DriverStatus::from(DriverError(CUresult::CUDA_ERROR_OUT_OF_MEMORY));
        assert_eq!(status.name, "CUDA_ERROR_OUT_OF_MEMORY");
        assert_eq!(status.code, CUresult::CUDA_ERROR_OUT_OF_MEMORY as u32);
        assert!(status.to_string().starts_with("CUDA_ERROR_OUT_OF_MEMORY"));
        let err = Error::driver("copying")(DriverError(CUresult::CUDA_ERROR_INVALID_VALUE));
        assert!(
            err.to_string()
                .starts_with("CUDA driver error while copying: CUDA_ERROR_INVALID_VALUE"),
            "{err}"
        );
        let nvrtc = NvrtcStatus::from(NvrtcError(nvrtcResult::NVRTC_ERROR_INTERNAL_ERROR));
        assert_eq!(nvrtc.to_string(), "NvrtcError(NVRTC_ERROR_INTERNAL_ERROR)");
    }
}
