//! NCCL communicators and their collectives, queued on the caller's stream.
//!
//! cudarc's safe `Comm` binds a communicator to one stream at creation; ours queue each
//! collective on whichever stream the caller passes (gradients are reduced on a stream of their
//! own while the backward pass runs on another), so this file calls cudarc's `result` layer
//! with the raw communicator. Buffers are passed through cudarc's pointer guards, which make
//! the stream wait for earlier writes to them on other streams and record the collective as
//! their latest use.

use std::ffi::CStr;
use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaContext, CudaStream, SyncOnDrop};
use cudarc::nccl::{result, sys};

use crate::core::collective::{CommError, ReduceOp};
use crate::core::error::{Error, Result};
use crate::core::scalar::{Scalar, ScalarType};
use crate::core::value::Value;
use crate::cuda::device::CudaDevice;
use crate::cuda::loader::{guarded, Library};
use crate::cuda::memory::CudaMemory;

/// Bytes of an NCCL unique id, the token every rank of a group starts from.
pub(crate) const UNIQUE_ID_BYTES: usize = 128;

/// The raw communicator and the last stream a collective was queued on.
struct Handle {
    comm: sys::ncclComm_t,
    last: Option<Arc<CudaStream>>,
}

// SAFETY: an NCCL communicator may be used from any thread as long as calls on it do not
// overlap; the Mutex around `Handle` serialises them.
unsafe impl Send for Handle {}

/// One rank's NCCL communicator, on one device.
pub(crate) struct NcclComm {
    handle: Mutex<Handle>,
    ctx: Arc<CudaContext>,
}

/// The installed NCCL's version, e.g. 23203 for 2.32.3.
pub(crate) fn version() -> Result<i32> {
    guarded(Library::Nccl, || {
        result::get_nccl_version().map_err(|err| nccl_error("reading NCCL's version", err, None))
    })
}

/// A new unique id, made by one rank and handed to all of them.
pub(crate) fn unique_id() -> Result<[u8; UNIQUE_ID_BYTES]> {
    guarded(Library::Nccl, || {
        let id = result::get_uniqueid()
            .map_err(|err| nccl_error("making a unique id (ncclGetUniqueId)", err, None))?;
        Ok(id.internal.map(|c| c as u8))
    })
}

impl NcclComm {
    /// One communicator per device, rank `i` on `devices[i]`, for one process driving them all.
    pub(crate) fn init_all(devices: &[&CudaDevice]) -> Result<Vec<NcclComm>> {
        guarded(Library::Nccl, || {
            let ordinals = devices
                .iter()
                .map(|device| i32::try_from(device.ctx.ordinal()).unwrap_or(i32::MAX))
                .collect::<Vec<i32>>();
            let count = i32::try_from(devices.len()).map_err(|_| CommError::InvalidRank {
                rank: devices.len(),
                world_size: i32::MAX as usize,
            })?;
            let mut comms = vec![std::ptr::null_mut(); devices.len()];
            // SAFETY: `comms` has room for `count` handles and `ordinals` holds `count` device
            // ordinals of open devices; NCCL writes one communicator per device.
            unsafe { result::comm_init_all(comms.as_mut_ptr(), count, ordinals.as_ptr()) }
                .map_err(|err| {
                    nccl_error("creating the communicators (ncclCommInitAll)", err, None)
                })?;
            Ok(comms
                .into_iter()
                .zip(devices)
                .map(|(comm, device)| NcclComm::wrap(comm, &device.ctx))
                .collect())
        })
    }

    /// Rank `rank` of `world_size`, on `device`, joining the group of `id`; blocks until every
    /// rank has joined.
    pub(crate) fn init_rank(
        device: &CudaDevice,
        rank: usize,
        world_size: usize,
        id: &[u8; UNIQUE_ID_BYTES],
    ) -> Result<NcclComm> {
        guarded(Library::Nccl, || {
            let too_many = || CommError::InvalidRank { rank, world_size };
            let nranks = i32::try_from(world_size).map_err(|_| too_many())?;
            let rank = i32::try_from(rank).map_err(|_| too_many())?;
            // NCCL starts the rank on the calling thread's current device.
            device
                .ctx
                .bind_to_thread()
                .map_err(Error::driver("making the device current for NCCL"))?;
            let id = sys::ncclUniqueId {
                internal: id.map(|b| b as std::ffi::c_char),
            };
            let mut comm = std::ptr::null_mut();
            // SAFETY: `comm` is a valid place for the handle NCCL writes; the id is 128 bytes
            // as NCCL defines it, and rank < nranks was checked by the caller.
            unsafe { result::comm_init_rank(&mut comm, nranks, id, rank) }
                .map_err(|err| nccl_error("joining the group (ncclCommInitRank)", err, None))?;
            Ok(NcclComm::wrap(comm, &device.ctx))
        })
    }

    fn wrap(comm: sys::ncclComm_t, ctx: &Arc<CudaContext>) -> NcclComm {
        NcclComm {
            handle: Mutex::new(Handle { comm, last: None }),
            ctx: ctx.clone(),
        }
    }

    /// Runs `queue` (which queues NCCL calls on `stream` with the raw communicator) with the
    /// device current and the calls serialised, remembering the stream for the drop.
    fn queue<R>(
        &self,
        stream: &Arc<CudaStream>,
        queue: impl FnOnce(sys::ncclComm_t, sys::cudaStream_t) -> Result<R>,
    ) -> Result<R> {
        let mut handle = self
            .handle
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        self.ctx
            .bind_to_thread()
            .map_err(Error::driver("making the device current for NCCL"))?;
        let out = queue(handle.comm, stream.cu_stream() as sys::cudaStream_t)?;
        handle.last = Some(stream.clone());
        Ok(out)
    }

    /// Reduces every buffer of `buffers` in place across the ranks, as one NCCL group (one
    /// launch for a whole bucket of gradients).
    pub(crate) fn all_reduce<T: Value + Scalar>(
        &self,
        stream: &Arc<CudaStream>,
        buffers: &mut [(&mut CudaMemory<T>, usize)],
        op: ReduceOp,
    ) -> Result<()> {
        let datatype = data_type(T::TYPE)?;
        self.queue(stream, |comm, cu_stream| {
            let mut guards: Vec<SyncOnDrop<'_>> = Vec::with_capacity(buffers.len());
            let mut pointers = Vec::with_capacity(buffers.len());
            for (memory, len) in buffers.iter_mut() {
                let (ptr, guard) = memory.device_ptr_mut(stream);
                pointers.push((ptr, *len));
                guards.push(guard);
            }
            group(comm, || {
                for &(ptr, len) in &pointers {
                    // SAFETY: `ptr` is a live allocation of at least `len` elements of
                    // `datatype` on this communicator's device, held by `guards` (which orders
                    // the stream after its earlier writes and records this use) until the group
                    // is queued; in place, as NCCL allows.
                    unsafe {
                        result::all_reduce(
                            ptr as *const _,
                            ptr as *mut _,
                            len,
                            datatype,
                            reduce_op(op),
                            comm,
                            cu_stream,
                        )
                    }
                    .map_err(|err| nccl_error("queuing an all-reduce", err, Some(comm)))?;
                }
                Ok(())
            })?;
            drop(guards);
            Ok(())
        })
    }

    /// Overwrites `memory` (`len` elements) on every rank with the root's.
    pub(crate) fn broadcast<T: Value + Scalar>(
        &self,
        stream: &Arc<CudaStream>,
        memory: &mut CudaMemory<T>,
        len: usize,
        root: usize,
    ) -> Result<()> {
        let datatype = data_type(T::TYPE)?;
        let root = i32::try_from(root).unwrap_or(i32::MAX);
        self.queue(stream, |comm, cu_stream| {
            let (ptr, guard) = memory.device_ptr_mut(stream);
            // SAFETY: `ptr` is a live allocation of at least `len` elements on this device,
            // held by `guard` until the broadcast is queued; in place, as NCCL allows.
            unsafe {
                result::broadcast(
                    ptr as *const _,
                    ptr as *mut _,
                    len,
                    datatype,
                    root,
                    comm,
                    cu_stream,
                )
            }
            .map_err(|err| nccl_error("queuing a broadcast", err, Some(comm)))?;
            drop(guard);
            Ok(())
        })
    }

    /// `recv` (`len` × ranks elements) = every rank's `send` (`len` elements), in rank order.
    pub(crate) fn all_gather<T: Value + Scalar>(
        &self,
        stream: &Arc<CudaStream>,
        send: &CudaMemory<T>,
        recv: &mut CudaMemory<T>,
        len: usize,
    ) -> Result<()> {
        let datatype = data_type(T::TYPE)?;
        self.queue(stream, |comm, cu_stream| {
            let (src, read) = send.device_ptr(stream);
            let (dst, write) = recv.device_ptr_mut(stream);
            // SAFETY: `src` holds at least `len` elements and `dst` at least `len` × ranks
            // (checked by the caller), both live on this device and held by their guards until
            // the call is queued; they are distinct buffers.
            unsafe {
                result::all_gather(
                    src as *const _,
                    dst as *mut _,
                    len,
                    datatype,
                    comm,
                    cu_stream,
                )
            }
            .map_err(|err| nccl_error("queuing an all-gather", err, Some(comm)))?;
            drop((read, write));
            Ok(())
        })
    }

    /// `recv` (`len` elements) = this rank's block of the reduction of every rank's `send`
    /// (`len` × ranks elements).
    pub(crate) fn reduce_scatter<T: Value + Scalar>(
        &self,
        stream: &Arc<CudaStream>,
        send: &CudaMemory<T>,
        recv: &mut CudaMemory<T>,
        len: usize,
        op: ReduceOp,
    ) -> Result<()> {
        let datatype = data_type(T::TYPE)?;
        self.queue(stream, |comm, cu_stream| {
            let (src, read) = send.device_ptr(stream);
            let (dst, write) = recv.device_ptr_mut(stream);
            // SAFETY: `src` holds at least `len` × ranks elements and `dst` at least `len`
            // (checked by the caller), both live on this device and held by their guards until
            // the call is queued; they are distinct buffers.
            unsafe {
                result::reduce_scatter(
                    src as *const _,
                    dst as *mut _,
                    len,
                    datatype,
                    reduce_op(op),
                    comm,
                    cu_stream,
                )
            }
            .map_err(|err| nccl_error("queuing a reduce-scatter", err, Some(comm)))?;
            drop((read, write));
            Ok(())
        })
    }
}

impl Drop for NcclComm {
    fn drop(&mut self) {
        let handle = self
            .handle
            .get_mut()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        // Collectives still queued would be cut short by the abort; a failed wait (a faulted
        // device) leaves nothing to protect.
        if let Some(stream) = handle.last.take() {
            let _ = stream.synchronize();
        }
        // Abort rather than destroy: destroying waits for the other ranks, and a rank whose
        // peers died must still be able to drop its communicator.
        // SAFETY: the handle came from a successful init and is not used after this.
        let _ = unsafe { result::comm_abort(handle.comm) };
    }
}

/// Queues the calls `body` makes as one NCCL group.
fn group(comm: sys::ncclComm_t, body: impl FnOnce() -> Result<()>) -> Result<()> {
    result::group_start().map_err(|err| nccl_error("starting a group", err, Some(comm)))?;
    let queued = body();
    // The group must be closed even when a call in it failed.
    let closed = result::group_end()
        .map(drop)
        .map_err(|err| nccl_error("ending a group", err, Some(comm)));
    queued.and(closed)
}

/// NCCL's name for element type `elem`.
fn data_type(elem: ScalarType) -> Result<sys::ncclDataType_t> {
    use sys::ncclDataType_t as D;
    Ok(match elem {
        ScalarType::I8 => D::ncclInt8,
        ScalarType::U8 => D::ncclUint8,
        ScalarType::I32 => D::ncclInt32,
        ScalarType::U32 => D::ncclUint32,
        ScalarType::I64 => D::ncclInt64,
        ScalarType::U64 => D::ncclUint64,
        ScalarType::F16 => D::ncclFloat16,
        ScalarType::F32 => D::ncclFloat32,
        ScalarType::F64 => D::ncclFloat64,
        ScalarType::Bf16 => D::ncclBfloat16,
        // CommElement admits only the types above.
        ScalarType::Bool
        | ScalarType::I16
        | ScalarType::U16
        | ScalarType::Usize
        | ScalarType::Isize => {
            return Err(Error::Comm(CommError::Unsupported {
                what: format!("NCCL has no {elem} type"),
            }))
        }
    })
}

fn reduce_op(op: ReduceOp) -> sys::ncclRedOp_t {
    match op {
        ReduceOp::Sum => sys::ncclRedOp_t::ncclSum,
        ReduceOp::Mean => sys::ncclRedOp_t::ncclAvg,
    }
}

/// A failed NCCL call as the runtime's error, with NCCL's last message for `comm` when there
/// is one.
fn nccl_error(
    context: &'static str,
    err: result::NcclError,
    comm: Option<sys::ncclComm_t>,
) -> Error {
    let detail = comm.and_then(|comm| {
        // SAFETY: `comm` is a live communicator; NCCL returns a NUL-terminated string it owns
        // (or null), read before any other NCCL call.
        let text = unsafe { sys::ncclGetLastError(comm) };
        if text.is_null() {
            return None;
        }
        // SAFETY: non-null, NUL-terminated, owned by NCCL and unchanged while read here.
        let text = unsafe { CStr::from_ptr(text) }
            .to_string_lossy()
            .into_owned();
        (!text.trim().is_empty()).then_some(text)
    });
    Error::Comm(CommError::Nccl {
        context,
        name: format!("{:?}", err.0),
        detail,
    })
}
