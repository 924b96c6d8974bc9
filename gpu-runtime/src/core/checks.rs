//! Checked mode and assertions: Rust-style panics for out-of-bounds indexing, integer
//! division errors and failed `assert!`s.
//!
//! The contract with generated code: a kernel source that has checks or assertions declares
//!
//! ```text
//! struct rs_error_slot { unsigned int flag; unsigned int kind; unsigned int kernel_id;
//!                        unsigned int line; unsigned long long index; unsigned long long len;
//!                        unsigned int block[3]; unsigned int thread[3];
//!                        unsigned int assertion; unsigned int arg_types;
//!                        unsigned long long args[8]; };
//! extern "C" { __device__ rs_error_slot* rs_error_slot_ptr; __device__ unsigned int rs_kernel_id; }
//! ```
//!
//! compiled in with `-DGPU_CHECKED`, and always in a kernel with an `assert!` or `panic!` (which
//! Rust keeps in release builds too). The first failing check or assertion claims the slot
//! (`atomicCAS(&flag, 0, 1)`), fills it with its block and thread, fences and ends the
//! thread. An assertion (kind 4) records its number in the kernel's message table and its
//! arguments: 4 bits of type code per argument in `arg_types` (see
//! [`PanicArg::decode`](crate::core::assertion::PanicArg)), the bits in `args`. The runtime gives
//! each device one zeroed slot, points every such module's `rs_error_slot_ptr` at it and sets
//! `rs_kernel_id` to an id from the process-wide registry below. A stream remembers that such
//! a launch is pending; its next synchronizing call reads the slot and turns a claimed one
//! into [`Error::KernelPanic`], resetting it for later launches.
//!
//! The slot is per device, like CUDA's own sticky errors: a panic is reported by the first
//! synchronizing call of any stream (or event, or the device) with a checked launch pending,
//! so with checked kernels running concurrently on several streams it may surface on a stream
//! other than the one that panicked, but it is never lost.

use std::collections::HashMap;
use std::mem::offset_of;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, OnceLock};

use crate::core::assertion::{AssertionMessages, PanicArg, MAX_ASSERT_ARGS};
use crate::core::error::{Error, Result};
use crate::core::generic::{rust_instantiation, TemplateArg};
use crate::core::kernel::KernelSpec;

/// The NVRTC option that compiles a kernel's checks in.
pub(crate) const CHECKED_DEFINE: &str = "-DGPU_CHECKED";
/// The module global holding the slot's device address.
pub(crate) const SLOT_PTR_GLOBAL: &str = "rs_error_slot_ptr";
/// The module global holding the kernel's registry id.
pub(crate) const KERNEL_ID_GLOBAL: &str = "rs_kernel_id";

/// The device's `rs_error_slot`, field for field.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ErrorRecord {
    /// 0 while free; set to 1 by the first failing check.
    pub flag: u32,
    /// 1 = index out of bounds, 2 = division by zero, 3 = division overflow.
    pub kind: u32,
    /// The failing kernel's registry id.
    pub kernel_id: u32,
    /// The Rust source line of the check.
    pub line: u32,
    /// The index (kind 1) or the dividend as u64 (kind 2).
    pub index: u64,
    /// The slice length (kind 1), else 0.
    pub len: u64,
    /// The failing thread's `blockIdx`.
    pub block: [u32; 3],
    /// The failing thread's `threadIdx`.
    pub thread: [u32; 3],
    /// The assertion's number in the kernel's message table (kind 4).
    pub assertion: u32,
    /// 4 bits of type code per argument, argument 0 lowest; 0 ends the list (kind 4).
    pub arg_types: u32,
    /// The arguments' bits (kind 4).
    pub args: [u64; MAX_ASSERT_ARGS],
}

/// Bytes of the slot on the device.
pub(crate) const RECORD_BYTES: usize = 128;
const _: () = assert!(std::mem::size_of::<ErrorRecord>() == RECORD_BYTES);

/// Index out of bounds.
const KIND_INDEX: u32 = 1;
/// Integer division (or remainder) by zero.
const KIND_DIV_ZERO: u32 = 2;
/// Integer division overflow (`MIN / -1`).
const KIND_DIV_OVERFLOW: u32 = 3;
/// A failed `assert!` or a `panic!`: the message comes from the kernel's table.
const KIND_ASSERTION: u32 = 4;
/// `ilog2` or `ilog10` of a value below 1.
const KIND_LOG: u32 = 5;

impl ErrorRecord {
    /// Decodes the slot as copied from the device (CUDA hosts and devices are little-endian).
    pub(crate) fn from_bytes(bytes: &[u8; RECORD_BYTES]) -> ErrorRecord {
        let u32_at = |offset: usize| {
            u32::from_le_bytes([
                bytes[offset],
                bytes[offset + 1],
                bytes[offset + 2],
                bytes[offset + 3],
            ])
        };
        let u64_at =
            |offset: usize| u64::from(u32_at(offset)) | u64::from(u32_at(offset + 4)) << 32;
        let dim_at = |offset: usize| [u32_at(offset), u32_at(offset + 4), u32_at(offset + 8)];
        let args_at = offset_of!(ErrorRecord, args);
        ErrorRecord {
            flag: u32_at(offset_of!(ErrorRecord, flag)),
            kind: u32_at(offset_of!(ErrorRecord, kind)),
            kernel_id: u32_at(offset_of!(ErrorRecord, kernel_id)),
            line: u32_at(offset_of!(ErrorRecord, line)),
            index: u64_at(offset_of!(ErrorRecord, index)),
            len: u64_at(offset_of!(ErrorRecord, len)),
            block: dim_at(offset_of!(ErrorRecord, block)),
            thread: dim_at(offset_of!(ErrorRecord, thread)),
            assertion: u32_at(offset_of!(ErrorRecord, assertion)),
            arg_types: u32_at(offset_of!(ErrorRecord, arg_types)),
            args: std::array::from_fn(|i| u64_at(args_at + 8 * i)),
        }
    }

    /// What failed, worded as Rust's panic message, with the file it was written in when the
    /// kernel's message table knows it (an assertion in a device function of another file).
    pub(crate) fn message(
        &self,
        messages: Option<AssertionMessages>,
    ) -> (Option<&'static str>, String) {
        if self.kind != KIND_ASSERTION {
            return (None, panic_message(self.kind, self.index, self.len));
        }
        let args: Option<Vec<PanicArg>> = (0..MAX_ASSERT_ARGS)
            .map(|i| (self.arg_types >> (4 * i)) & 0xf)
            .take_while(|&code| code != 0)
            .zip(self.args)
            .map(|(code, bits)| PanicArg::decode(code, bits))
            .collect();
        match (messages, args) {
            (Some(messages), Some(args)) => match messages(self.assertion, &args) {
                Some((file, message)) => (Some(file), message),
                None => (None, unknown_assertion(self.assertion)),
            },
            _ => (None, unknown_assertion(self.assertion)),
        }
    }

    /// The panic this record reports, naming the kernel from the registry.
    pub(crate) fn into_error(self) -> Error {
        let identity = identity(self.kernel_id);
        let (kernel, file, messages) = match &identity {
            Some(id) => (id.display.clone(), id.file, id.messages),
            None => (format!("<unknown kernel #{}>", self.kernel_id), "", None),
        };
        let (assert_file, message) = self.message(messages);
        Error::KernelPanic {
            kernel,
            file: assert_file.unwrap_or(file).to_string(),
            line: self.line,
            block: self.block,
            thread: self.thread,
            message,
        }
    }
}

fn unknown_assertion(id: u32) -> String {
    format!(
        "assertion #{id} failed; its message is not in the kernel's table (the kernel was \
         generated by a different macro than this runtime understands)"
    )
}

/// A checked-mode violation worded as Rust's panic message: `kind` 1 index out of bounds,
/// 2 division by zero, 3 division overflow, 5 an integer logarithm of a value below 1.
pub(crate) fn panic_message(kind: u32, index: u64, len: u64) -> String {
    match kind {
        KIND_INDEX => format!("index out of bounds: the len is {len} but the index is {index}"),
        KIND_DIV_ZERO => "attempt to divide by zero".to_string(),
        KIND_DIV_OVERFLOW => "attempt to divide with overflow".to_string(),
        KIND_LOG => "argument of integer logarithm must be positive".to_string(),
        other => format!(
            "a check of unknown kind {other} failed (index {index}, len {len}); the kernel was \
             generated by a newer macro than this runtime understands"
        ),
    }
}

/// Who a kernel id stands for.
#[derive(Debug)]
struct KernelIdentity {
    /// The kernel's name with its template arguments, as messages show it.
    display: String,
    /// The Rust source file.
    file: &'static str,
    /// Formats its assertions' messages.
    messages: Option<AssertionMessages>,
}

#[derive(Default)]
struct Registry {
    /// By (address of the `static Kernel`, template arguments).
    ids: HashMap<(usize, Box<[TemplateArg]>), u32>,
    /// Entry `i` is id `i + 1`; id 0 means "no kernel" (an unset `rs_kernel_id`).
    entries: Vec<Arc<KernelIdentity>>,
}

static REGISTRY: LazyLock<Mutex<Registry>> = LazyLock::new(Mutex::default);

fn registry() -> std::sync::MutexGuard<'static, Registry> {
    // Every update is a pair of pushes done before anything can panic, so a poisoned lock
    // still guards consistent data.
    REGISTRY
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The process-wide id of one kernel instantiation, registering it on first use.
pub(crate) fn kernel_id(kernel: &'static KernelSpec, args: &[TemplateArg]) -> Result<u32> {
    let key = (kernel.address(), Box::<[TemplateArg]>::from(args));
    let mut registry = registry();
    if let Some(&id) = registry.ids.get(&key) {
        return Ok(id);
    }
    let id = u32::try_from(registry.entries.len() + 1).map_err(|_| Error::InvalidKernel {
        kernel: kernel.name().to_string(),
        reason: "the process has registered 2^32 checked kernel instantiations".to_string(),
    })?;
    registry.entries.push(Arc::new(KernelIdentity {
        display: rust_instantiation(kernel, args),
        file: kernel.file(),
        messages: kernel.assertions(),
    }));
    registry.ids.insert(key, id);
    Ok(id)
}

fn identity(id: u32) -> Option<Arc<KernelIdentity>> {
    let index = usize::try_from(id).ok()?.checked_sub(1)?;
    registry().entries.get(index).cloned()
}

/// Whether a launch runs checked: the launch's own choice, else `GPU_CHECKED`, else the
/// kernel's default.
pub(crate) fn resolve_checked(launch: Option<bool>, kernel_default: bool) -> bool {
    launch.or_else(env_checked).unwrap_or(kernel_default)
}

/// Whether a CPU launch runs under the race checker: the launch's choice, else on when the
/// device has it on or `GPU_RACECHECK` says so.
pub(crate) fn resolve_racecheck(launch: Option<bool>, device: bool) -> bool {
    launch.unwrap_or_else(|| device || env_racecheck())
}

/// `GPU_RACECHECK`, read once per process.
fn env_racecheck() -> bool {
    static ENV: OnceLock<bool> = OnceLock::new();
    *ENV.get_or_init(|| {
        parse_checked_env(std::env::var("GPU_RACECHECK").ok().as_deref()).unwrap_or(false)
    })
}

/// `GPU_CHECKED`, read once per process.
fn env_checked() -> Option<bool> {
    static ENV: OnceLock<Option<bool>> = OnceLock::new();
    *ENV.get_or_init(|| parse_checked_env(std::env::var("GPU_CHECKED").ok().as_deref()))
}

/// `1`/`0` (also `true`/`false`); anything else leaves the decision to the kernel.
fn parse_checked_env(value: Option<&str>) -> Option<bool> {
    match value?.trim().to_ascii_lowercase().as_str() {
        "1" | "true" => Some(true),
        "0" | "false" => Some(false),
        _ => None,
    }
}

/// Checked launches queued on one stream (or device) and how far they have been checked.
#[derive(Debug, Default)]
pub(crate) struct PendingChecks {
    launched: AtomicU64,
    checked: AtomicU64,
    /// Every kernel launch, checked or not (for [`crate::Graph::launches`]).
    kernels: AtomicU64,
}

impl PendingChecks {
    /// Counts one checked launch just queued.
    pub(crate) fn note_launch(&self) {
        self.note_launches(1);
    }

    /// Counts `n` checked launches just queued (a graph replay queues all of its own).
    pub(crate) fn note_launches(&self, n: u64) {
        self.launched.fetch_add(n, Ordering::AcqRel);
    }

    /// Counts one kernel launch, checked or not.
    pub(crate) fn note_kernel_launch(&self) {
        self.kernels.fetch_add(1, Ordering::Relaxed);
    }

    /// Kernel launches queued so far, checked or not.
    pub(crate) fn kernel_launches(&self) -> u64 {
        self.kernels.load(Ordering::Relaxed)
    }

    /// How many checked launches have been queued; taken before a synchronization, it names
    /// the launches that synchronization waits for.
    pub(crate) fn launched(&self) -> u64 {
        self.launched.load(Ordering::Acquire)
    }

    /// Whether some of the first `through` launches have not been checked yet.
    pub(crate) fn pending(&self, through: u64) -> bool {
        self.checked.load(Ordering::Acquire) < through
    }

    pub(crate) fn mark_checked(&self, through: u64) {
        self.checked.fetch_max(through, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::kernel::ParamKind;
    use crate::core::kernel::TemplateParam;

    fn record_bytes(r: &ErrorRecord) -> [u8; RECORD_BYTES] {
        let mut out = [0u8; RECORD_BYTES];
        out[0..4].copy_from_slice(&r.flag.to_le_bytes());
        out[4..8].copy_from_slice(&r.kind.to_le_bytes());
        out[8..12].copy_from_slice(&r.kernel_id.to_le_bytes());
        out[12..16].copy_from_slice(&r.line.to_le_bytes());
        out[16..24].copy_from_slice(&r.index.to_le_bytes());
        out[24..32].copy_from_slice(&r.len.to_le_bytes());
        for (i, v) in r.block.iter().chain(&r.thread).enumerate() {
            out[32 + 4 * i..36 + 4 * i].copy_from_slice(&v.to_le_bytes());
        }
        out[56..60].copy_from_slice(&r.assertion.to_le_bytes());
        out[60..64].copy_from_slice(&r.arg_types.to_le_bytes());
        for (i, v) in r.args.iter().enumerate() {
            out[64 + 8 * i..72 + 8 * i].copy_from_slice(&v.to_le_bytes());
        }
        out
    }

    #[test]
    fn layout_matches_the_cuda_struct() {
        // The C++ struct: four unsigned ints, two unsigned long longs (8-aligned at 16), eight
        // unsigned ints, eight unsigned long longs (8-aligned at 64).
        assert_eq!(offset_of!(ErrorRecord, flag), 0);
        assert_eq!(offset_of!(ErrorRecord, kind), 4);
        assert_eq!(offset_of!(ErrorRecord, kernel_id), 8);
        assert_eq!(offset_of!(ErrorRecord, line), 12);
        assert_eq!(offset_of!(ErrorRecord, index), 16);
        assert_eq!(offset_of!(ErrorRecord, len), 24);
        assert_eq!(offset_of!(ErrorRecord, block), 32);
        assert_eq!(offset_of!(ErrorRecord, thread), 44);
        assert_eq!(offset_of!(ErrorRecord, assertion), 56);
        assert_eq!(offset_of!(ErrorRecord, arg_types), 60);
        assert_eq!(offset_of!(ErrorRecord, args), 64);
        let record = ErrorRecord {
            flag: 1,
            kind: 1,
            kernel_id: 7,
            line: 12,
            index: 104,
            len: 1 << 40,
            block: [3, 1, 2],
            thread: [17, 4, 5],
            assertion: 9,
            arg_types: 0x72,
            args: [1, 2, 3, 4, 5, 6, 7, u64::MAX],
        };
        assert_eq!(ErrorRecord::from_bytes(&record_bytes(&record)), record);
    }

    #[test]
    fn messages_read_like_rust_panics() {
        let oob = ErrorRecord {
            flag: 1,
            kind: 1,
            index: 104,
            len: 100,
            ..Default::default()
        };
        let text = |r: ErrorRecord| r.message(None).1;
        assert_eq!(
            text(oob),
            "index out of bounds: the len is 100 but the index is 104"
        );
        let zero = ErrorRecord { kind: 2, ..oob };
        assert_eq!(text(zero), "attempt to divide by zero");
        let overflow = ErrorRecord { kind: 3, ..oob };
        assert_eq!(text(overflow), "attempt to divide with overflow");
        assert!(text(ErrorRecord { kind: 9, ..oob }).contains("unknown kind 9"));
    }

    #[test]
    fn registry_names_kernels_and_instantiations() {
        static SAXPY: KernelSpec =
            KernelSpec::plain("saxpy", "saxpy", "", &[], "examples/saxpy.rs", true);
        static SCALE: KernelSpec = KernelSpec::generic(
            "scale",
            "",
            &[ParamKind::GenericScalar { param: 0 }],
            &[TemplateParam::Type, TemplateParam::Const],
            "src/scale.rs",
            false,
        );
        let id = kernel_id(&SAXPY, &[]).unwrap();
        assert_ne!(id, 0);
        assert_eq!(kernel_id(&SAXPY, &[]).unwrap(), id, "ids are stable");
        let f32_256 = [TemplateArg::of::<f32>(), TemplateArg::Const(256)];
        let f64_128 = [TemplateArg::of::<f64>(), TemplateArg::Const(128)];
        let a = kernel_id(&SCALE, &f32_256).unwrap();
        let b = kernel_id(&SCALE, &f64_128).unwrap();
        assert!(a != b && a != id && b != id);

        let record = ErrorRecord {
            flag: 1,
            kind: 1,
            kernel_id: id,
            line: 12,
            index: 104,
            len: 100,
            block: [3, 0, 0],
            thread: [17, 0, 0],
            ..Default::default()
        };
        assert_eq!(
            record.into_error().to_string(),
            "kernel `saxpy` panicked at examples/saxpy.rs:12 in block (3, 0, 0) thread \
             (17, 0, 0): index out of bounds: the len is 100 but the index is 104"
        );
        let generic = ErrorRecord {
            kernel_id: b,
            kind: 2,
            line: 3,
            ..record
        };
        assert_eq!(
            generic.into_error().to_string(),
            "kernel `scale::<f64, 128>` panicked at src/scale.rs:3 in block (3, 0, 0) thread \
             (17, 0, 0): attempt to divide by zero"
        );
        let unknown = ErrorRecord {
            kernel_id: u32::MAX,
            ..record
        };
        assert!(unknown.into_error().to_string().contains("unknown kernel"));
    }

    #[test]
    fn assertions_are_formatted_from_the_kernel_table() {
        fn messages(id: u32, args: &[PanicArg]) -> Option<(&'static str, String)> {
            match (id, args) {
                (5, [row, len]) => {
                    Some(("src/rows.rs", format!("row {row} has {len:>3} elements")))
                }
                _ => None,
            }
        }
        static ROWS: KernelSpec = KernelSpec::plain("rows", "rows", "", &[], "src/main.rs", true)
            .with_assertions(messages);
        let id = kernel_id(&ROWS, &[]).unwrap();
        let mut args = [0u64; MAX_ASSERT_ARGS];
        args[0] = 113;
        args[1] = (-7i32) as u32 as u64;
        let record = ErrorRecord {
            flag: 1,
            kind: KIND_ASSERTION,
            kernel_id: id,
            line: 41,
            block: [3, 0, 0],
            thread: [17, 0, 0],
            assertion: 5,
            arg_types: 0x26, // usize, then i32
            args,
            ..Default::default()
        };
        match record.into_error() {
            Error::KernelPanic {
                kernel,
                file,
                line,
                block,
                thread,
                message,
            } => {
                assert_eq!(kernel, "rows");
                assert_eq!(file, "src/rows.rs", "the assertion's own file");
                assert_eq!(line, 41);
                assert_eq!(block, [3, 0, 0]);
                assert_eq!(thread, [17, 0, 0]);
                assert_eq!(message, "row 113 has  -7 elements");
            }
            other => panic!("{other:?}"),
        }
        let unknown = ErrorRecord {
            assertion: 6,
            ..record
        };
        assert!(unknown.message(Some(messages)).1.contains("assertion #6"));
        let bad_type = ErrorRecord {
            arg_types: 0xf6,
            ..record
        };
        assert!(bad_type.message(Some(messages)).1.contains("assertion #5"));
    }

    #[test]
    fn mode_selection() {
        assert_eq!(parse_checked_env(Some("1")), Some(true));
        assert_eq!(parse_checked_env(Some(" 0 ")), Some(false));
        assert_eq!(parse_checked_env(Some("TRUE")), Some(true));
        assert_eq!(parse_checked_env(Some("maybe")), None);
        assert_eq!(parse_checked_env(None), None);
        // The launch's choice wins over everything.
        assert!(resolve_checked(Some(true), false));
        assert!(!resolve_checked(Some(false), true));
        // Otherwise the environment, else the kernel's default.
        let env = env_checked();
        assert_eq!(resolve_checked(None, true), env.unwrap_or(true));
        assert_eq!(resolve_checked(None, false), env.unwrap_or(false));
    }

    #[test]
    fn pending_checks_count_launches() {
        let checks = PendingChecks::default();
        assert!(!checks.pending(checks.launched()));
        checks.note_launch();
        checks.note_launch();
        let through = checks.launched();
        assert_eq!(through, 2);
        assert!(checks.pending(through));
        checks.note_launch();
        checks.mark_checked(through);
        assert!(!checks.pending(through));
        assert!(
            checks.pending(checks.launched()),
            "a later launch is still pending"
        );
        checks.mark_checked(1);
        assert!(!checks.pending(through), "marks never move back");
    }
}
