//! Communicators: groups of ranks, one device each, that reduce, broadcast and gather
//! [`DeviceBuffer`]s with each other, for data-parallel training on several GPUs.
//!
//! On CUDA devices a [`Communicator`] is an NCCL communicator (libnccl is loaded at run time;
//! without it starting one is [`CommError::NoNccl`], which says what to install). On the CPU
//! backend the ranks are threads of one process that exchange through memory, with the same
//! API and the same results, so data-parallel code is tested without GPUs. Every collective is
//! queued on the [`Stream`] it is given, ordered after the work queued there before it.
//!
//! Two ways to start a group:
//! - one process driving every device, a thread per rank: [`Communicator::for_devices`];
//! - a process per device, started by a launcher (`scripts/launch`, or torchrun) that sets
//!   `RANK`, `WORLD_SIZE`, `LOCAL_RANK` and a rendezvous (`MASTER_ADDR`/`MASTER_PORT`, or
//!   `GPU_COMM_ID_FILE`): [`RankEnv::from_env`] and [`Communicator::from_env`], on one host or
//!   several.
//!
//! ```
//! use gpu_dsl_runtime::comm::{Communicator, ReduceOp};
//! use gpu_dsl_runtime::{DeviceBuffer, Gpu};
//!
//! # fn main() -> gpu_dsl_runtime::Result<()> {
//! // Three ranks on the CPU backend; with GPUs, pass Gpu::new(0)?, Gpu::new(1)?, ...
//! let comms = Communicator::for_devices(&[Gpu::cpu(), Gpu::cpu(), Gpu::cpu()])?;
//! let sums = std::thread::scope(|scope| {
//!     let ranks: Vec<_> = comms
//!         .into_iter()
//!         .map(|comm| {
//!             scope.spawn(move || -> gpu_dsl_runtime::Result<Vec<f32>> {
//!                 let stream = comm.gpu().default_stream();
//!                 let mut x = DeviceBuffer::from_host(&stream, &[comm.rank() as f32; 2])?;
//!                 comm.all_reduce(&stream, &mut x, ReduceOp::Sum)?;
//!                 x.to_host(&stream)
//!             })
//!         })
//!         .collect();
//!     ranks.into_iter().map(|rank| rank.join().unwrap()).collect::<Vec<_>>()
//! });
//! for sum in sums {
//!     assert_eq!(sum?, [3.0, 3.0]); // 0 + 1 + 2
//! }
//! # Ok(())
//! # }
//! ```
//!
//! Every rank must make the same collective calls in the same order, with the same lengths,
//! element type and root. The CPU backend checks that and reports a disagreement on every rank
//! as [`CommError::Mismatch`]; NCCL does not compare calls across ranks, so there a
//! disagreement is undefined (usually a hang): test data-parallel code on the CPU backend.
//! A rank that drops its communicator, or whose thread panics, makes the others' next
//! collective fail with [`CommError::RankLeft`] on the CPU backend; every wait there and in the
//! rendezvous ends after `GPU_COMM_TIMEOUT` seconds (300 by default).

use std::fmt;
use std::time::Duration;

use crate::buffer::{check_len, DeviceBuffer};
use crate::core::backend::Backend;
use crate::cpu::comm::CpuGroup;
use crate::cuda::nccl::{self, NcclComm, UNIQUE_ID_BYTES};
use crate::device::Gpu;
use crate::dispatch::{CommImpl, DeviceImpl};
use crate::stream::Stream;
use crate::{Error, Result};

mod rendezvous;

pub use crate::core::collective::{CommElement, CommError, ReduceOp};
pub use rendezvous::{timeout, RankEnv, Rendezvous, ID_FILE_ENV, TIMEOUT_ENV};

/// One rank of a group: reduces, broadcasts and gathers device buffers with the other ranks.
pub struct Communicator {
    inner: CommImpl,
    rank: usize,
    world_size: usize,
    gpu: Gpu,
}

/// The token every rank of a group started rank by rank joins with: NCCL's unique id, made
/// by one rank (rank 0) and handed to the others ([`Rendezvous`] does that between processes).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct CommId([u8; UNIQUE_ID_BYTES]);

impl CommId {
    /// A new id (needs NCCL, not a GPU).
    pub fn new() -> Result<CommId> {
        nccl::unique_id().map(CommId)
    }

    /// The id's bytes, to send to the other ranks.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// An id received from rank 0; `None` unless it has the length of one.
    pub fn from_bytes(bytes: &[u8]) -> Option<CommId> {
        bytes.try_into().ok().map(CommId)
    }
}

impl fmt::Debug for CommId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CommId({} bytes)", self.0.len())
    }
}

/// The installed NCCL's version as (major, minor, patch); an error says how to install it.
pub fn nccl_version() -> Result<(u32, u32, u32)> {
    let code = u32::try_from(nccl::version()?).unwrap_or(0);
    // NCCL 2.9 on: major * 10000 + minor * 100 + patch.
    Ok((code / 10000, code / 100 % 100, code % 100))
}

impl Communicator {
    /// One communicator per device, rank `i` on `gpus[i]`, for one process that drives every
    /// device (a thread per rank: move each communicator to its thread). On the CPU backend
    /// pass [`Gpu::cpu`] once per rank.
    pub fn for_devices(gpus: &[Gpu]) -> Result<Vec<Communicator>> {
        Communicator::for_devices_with(gpus, rendezvous::timeout())
    }

    /// [`Communicator::for_devices`] with the CPU backend's wait limit given.
    pub(crate) fn for_devices_with(gpus: &[Gpu], timeout: Duration) -> Result<Vec<Communicator>> {
        let first = gpus.first().ok_or(CommError::Empty)?;
        if let Some(rank) = gpus.iter().position(|gpu| gpu.backend() != first.backend()) {
            return Err(CommError::MixedBackends {
                first: first.backend().to_string(),
                rank,
                other: gpus[rank].backend().to_string(),
            }
            .into());
        }
        let world_size = gpus.len();
        let inners = match first.backend() {
            Backend::Cpu => {
                let group = CpuGroup::new(world_size, timeout);
                (0..world_size)
                    .map(|rank| CommImpl::Cpu {
                        group: group.clone(),
                        rank,
                    })
                    .collect()
            }
            Backend::Cuda => {
                let devices = gpus
                    .iter()
                    .map(|gpu| match gpu.device() {
                        DeviceImpl::Cuda(cuda) => Ok(cuda),
                        DeviceImpl::Cpu(_) => Err(Error::from(CommError::Empty)),
                    })
                    .collect::<Result<Vec<_>>>()?;
                NcclComm::init_all(&devices)?
                    .into_iter()
                    .map(CommImpl::Cuda)
                    .collect::<Vec<_>>()
            }
        };
        Ok(inners
            .into_iter()
            .zip(gpus)
            .enumerate()
            .map(|(rank, (inner, gpu))| Communicator {
                inner,
                rank,
                world_size,
                gpu: gpu.clone(),
            })
            .collect())
    }

    /// Rank `rank` of `world_size` on CUDA device `gpu`, joining the group of `id`; blocks
    /// until every rank has joined. Each rank calls this in its own process (or thread).
    pub fn init_rank(gpu: &Gpu, rank: usize, world_size: usize, id: &CommId) -> Result<Self> {
        if rank >= world_size {
            return Err(CommError::InvalidRank { rank, world_size }.into());
        }
        let DeviceImpl::Cuda(device) = gpu.device() else {
            return Err(cpu_ranks_are_threads());
        };
        let inner = CommImpl::Cuda(NcclComm::init_rank(device, rank, world_size, &id.0)?);
        Ok(Communicator {
            inner,
            rank,
            world_size,
            gpu: gpu.clone(),
        })
    }

    /// This process's rank on `gpu` (usually `Gpu::new(env.local_rank)`), as a launcher
    /// described it ([`RankEnv::from_env`]): rank 0 makes the group's id and hands it out
    /// through the rendezvous, then every rank joins.
    pub fn from_env(gpu: &Gpu, env: &RankEnv) -> Result<Self> {
        if gpu.backend() == Backend::Cpu {
            return Err(cpu_ranks_are_threads());
        }
        let make_id = || CommId::new().map(|id| id.0.to_vec());
        let bytes = match &env.rendezvous {
            Some(rendezvous) => {
                rendezvous.exchange(env.rank, env.world_size, make_id, rendezvous::timeout())?
            }
            None if env.world_size == 1 => make_id()?,
            None => {
                return Err(CommError::BadEnv {
                    var: "MASTER_ADDR",
                    value: String::new(),
                    reason: "a group of several processes needs a rendezvous".to_string(),
                }
                .into())
            }
        };
        let id = CommId::from_bytes(&bytes).ok_or_else(|| CommError::Rendezvous {
            at: env
                .rendezvous
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default(),
            reason: format!("received {} bytes, not an NCCL id", bytes.len()),
        })?;
        Communicator::init_rank(gpu, env.rank, env.world_size, &id)
    }

    /// This rank, `0..world_size`.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Ranks in the group.
    pub fn world_size(&self) -> usize {
        self.world_size
    }

    /// The device of this rank.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// Fails unless `stream` and the buffers are on this rank's device.
    fn check<T: CommElement>(&self, stream: &Stream, buffers: &[&DeviceBuffer<T>]) -> Result<()> {
        self.gpu
            .check_same(|| "the stream".to_string(), stream.gpu())?;
        for buffer in buffers {
            stream.check_device(|| format!("a DeviceBuffer<{}>", T::TYPE), buffer.gpu())?;
        }
        Ok(())
    }

    /// Replaces `buffer` on every rank with the sum (or mean) over the ranks, queued on
    /// `stream`.
    pub fn all_reduce<T: CommElement>(
        &self,
        stream: &Stream,
        buffer: &mut DeviceBuffer<T>,
        op: ReduceOp,
    ) -> Result<()> {
        self.all_reduce_bucket(stream, &mut [buffer], op)
    }

    /// [`Communicator::all_reduce`] of several buffers as one collective (one NCCL group):
    /// a bucket of gradients costs one exchange, not one per buffer.
    pub fn all_reduce_bucket<T: CommElement>(
        &self,
        stream: &Stream,
        buffers: &mut [&mut DeviceBuffer<T>],
        op: ReduceOp,
    ) -> Result<()> {
        let shared: Vec<&DeviceBuffer<T>> = buffers.iter().map(|b| &**b).collect();
        self.check(stream, &shared)?;
        let mut memories: Vec<_> = buffers
            .iter_mut()
            .map(|buffer| {
                let len = buffer.len();
                (buffer.memory_mut(), len)
            })
            .collect();
        self.inner.all_reduce(&stream.queue, &mut memories, op)
    }

    /// Replaces `buffer` on every rank with rank `root`'s, queued on `stream`.
    pub fn broadcast<T: CommElement>(
        &self,
        stream: &Stream,
        buffer: &mut DeviceBuffer<T>,
        root: usize,
    ) -> Result<()> {
        if root >= self.world_size {
            return Err(CommError::InvalidRank {
                rank: root,
                world_size: self.world_size,
            }
            .into());
        }
        self.check(stream, &[buffer])?;
        let len = buffer.len();
        self.inner
            .broadcast(&stream.queue, buffer.memory_mut(), len, root)
    }

    /// Fills `recv` (`world_size` × `send.len()` elements) with every rank's `send`, rank 0's
    /// first, queued on `stream`.
    pub fn all_gather<T: CommElement>(
        &self,
        stream: &Stream,
        send: &DeviceBuffer<T>,
        recv: &mut DeviceBuffer<T>,
    ) -> Result<()> {
        self.check(stream, &[send, recv])?;
        let len = send.len();
        check_len("all_gather: recv", len * self.world_size, recv.len())?;
        self.inner
            .all_gather(&stream.queue, send.memory(), recv.memory_mut(), len)
    }

    /// Reduces every rank's `send` (`world_size` × `recv.len()` elements) and leaves block
    /// `rank` of the result in `recv`, queued on `stream`.
    pub fn reduce_scatter<T: CommElement>(
        &self,
        stream: &Stream,
        send: &DeviceBuffer<T>,
        recv: &mut DeviceBuffer<T>,
        op: ReduceOp,
    ) -> Result<()> {
        self.check(stream, &[send, recv])?;
        let len = recv.len();
        check_len("reduce_scatter: send", len * self.world_size, send.len())?;
        self.inner
            .reduce_scatter(&stream.queue, send.memory(), recv.memory_mut(), len, op)
    }
}

impl fmt::Debug for Communicator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Communicator(rank {} of {} on {:?})",
            self.rank, self.world_size, self.gpu
        )
    }
}

/// Why a CPU-backend rank cannot be started on its own.
fn cpu_ranks_are_threads() -> Error {
    CommError::Unsupported {
        what: "the CPU backend's ranks are threads of one process: start them together with \
               Communicator::for_devices(&[Gpu::cpu(), ...]) (NCCL, on CUDA devices, starts \
               ranks one by one)"
            .to_string(),
    }
    .into()
}

/// A CPU-backend group whose waits end after `timeout`, for tests of the failure paths.
#[cfg(test)]
pub(crate) fn cpu_group(world_size: usize, timeout: Duration) -> Vec<Communicator> {
    Communicator::for_devices_with(&vec![Gpu::cpu(); world_size], timeout).unwrap_or_default()
}

#[cfg(test)]
mod nccl_tests;
#[cfg(test)]
mod tests;
