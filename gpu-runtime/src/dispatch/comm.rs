//! Communicators: NCCL on CUDA devices, a meeting of threads on the CPU backend. The front
//! ([`crate::comm::Communicator`]) checks lengths, ranks and devices; this picks the backend.

use std::sync::Arc;

use crate::core::collective::{Collective, CommElement, CommError, ReduceOp};
use crate::core::error::{Error, Result};
use crate::cpu::comm::{combine, CpuGroup};
use crate::cuda::nccl::NcclComm;
use crate::dispatch::{MemoryImpl, QueueImpl};

/// One rank's communicator.
pub(crate) enum CommImpl {
    Cuda(NcclComm),
    Cpu { group: Arc<CpuGroup>, rank: usize },
}

impl Drop for CommImpl {
    fn drop(&mut self) {
        if let CommImpl::Cpu { group, rank } = self {
            group.leave(*rank);
        }
    }
}

/// The error for a buffer or stream of the other backend; the front's device checks rule it
/// out, so this only guards a broken invariant without panicking.
fn wrong_backend() -> Error {
    Error::Comm(CommError::Unsupported {
        what: "a communicator was given a stream or buffer of another backend than its own"
            .to_string(),
    })
}

impl CommImpl {
    /// Reduces each `(memory, len)` in place across the ranks, as one collective.
    pub(crate) fn all_reduce<T: CommElement>(
        &self,
        queue: &QueueImpl,
        buffers: &mut [(&mut MemoryImpl<T>, usize)],
        op: ReduceOp,
    ) -> Result<()> {
        match (self, queue) {
            (CommImpl::Cuda(comm), QueueImpl::Cuda(queue)) => {
                let mut cuda = Vec::with_capacity(buffers.len());
                for (memory, len) in buffers.iter_mut() {
                    let memory = memory.cuda_mut().ok_or_else(wrong_backend)?;
                    cuda.push((memory, *len));
                }
                comm.all_reduce(&queue.stream, &mut cuda, op)
            }
            (CommImpl::Cpu { group, rank }, QueueImpl::Cpu(_)) => {
                let mut data = Vec::new();
                for (memory, _) in buffers.iter() {
                    data.extend_from_slice(host(memory)?);
                }
                let len = data.len();
                let total = group.meet(*rank, Collective::AllReduce { op, len }, data, combine)?;
                let mut offset = 0;
                for (memory, _) in buffers.iter_mut() {
                    let out = host_mut(memory)?;
                    out.copy_from_slice(&total[offset..offset + out.len()]);
                    offset += out.len();
                }
                Ok(())
            }
            _ => Err(wrong_backend()),
        }
    }

    /// Overwrites `memory` (`len` elements) with rank `root`'s.
    pub(crate) fn broadcast<T: CommElement>(
        &self,
        queue: &QueueImpl,
        memory: &mut MemoryImpl<T>,
        len: usize,
        root: usize,
    ) -> Result<()> {
        match (self, queue) {
            (CommImpl::Cuda(comm), QueueImpl::Cuda(queue)) => {
                let memory = memory.cuda_mut().ok_or_else(wrong_backend)?;
                comm.broadcast(&queue.stream, memory, len, root)
            }
            (CommImpl::Cpu { group, rank }, QueueImpl::Cpu(_)) => {
                // Only the root's data is used: the others hand in nothing.
                let data = if *rank == root {
                    host(memory)?.to_vec()
                } else {
                    Vec::new()
                };
                let call = Collective::Broadcast { root, len };
                let root_data = group.meet(*rank, call, data, combine)?;
                host_mut(memory)?.copy_from_slice(&root_data);
                Ok(())
            }
            _ => Err(wrong_backend()),
        }
    }

    /// `recv` = every rank's `send` (`len` elements each), end to end in rank order.
    pub(crate) fn all_gather<T: CommElement>(
        &self,
        queue: &QueueImpl,
        send: &MemoryImpl<T>,
        recv: &mut MemoryImpl<T>,
        len: usize,
    ) -> Result<()> {
        match (self, queue) {
            (CommImpl::Cuda(comm), QueueImpl::Cuda(queue)) => {
                let send = send.cuda().ok_or_else(wrong_backend)?;
                let recv = recv.cuda_mut().ok_or_else(wrong_backend)?;
                comm.all_gather(&queue.stream, send, recv, len)
            }
            (CommImpl::Cpu { group, rank }, QueueImpl::Cpu(_)) => {
                let data = host(send)?.to_vec();
                let all = group.meet(*rank, Collective::AllGather { len }, data, combine)?;
                host_mut(recv)?.copy_from_slice(&all);
                Ok(())
            }
            _ => Err(wrong_backend()),
        }
    }

    /// `recv` (`len` elements) = this rank's block of the reduction of every rank's `send`.
    pub(crate) fn reduce_scatter<T: CommElement>(
        &self,
        queue: &QueueImpl,
        send: &MemoryImpl<T>,
        recv: &mut MemoryImpl<T>,
        len: usize,
        op: ReduceOp,
    ) -> Result<()> {
        match (self, queue) {
            (CommImpl::Cuda(comm), QueueImpl::Cuda(queue)) => {
                let send = send.cuda().ok_or_else(wrong_backend)?;
                let recv = recv.cuda_mut().ok_or_else(wrong_backend)?;
                comm.reduce_scatter(&queue.stream, send, recv, len, op)
            }
            (CommImpl::Cpu { group, rank }, QueueImpl::Cpu(_)) => {
                let data = host(send)?.to_vec();
                let call = Collective::ReduceScatter { op, len };
                let total = group.meet(*rank, call, data, combine)?;
                host_mut(recv)?.copy_from_slice(&total[rank * len..(rank + 1) * len]);
                Ok(())
            }
            _ => Err(wrong_backend()),
        }
    }
}

/// A CPU-backend buffer's elements.
fn host<T: CommElement>(memory: &MemoryImpl<T>) -> Result<&[T]> {
    match memory {
        MemoryImpl::Host(buffer) => Ok(buffer.as_slice()),
        MemoryImpl::Cuda(_) => Err(wrong_backend()),
    }
}

/// A CPU-backend buffer's elements, for writing.
fn host_mut<T: CommElement>(memory: &mut MemoryImpl<T>) -> Result<&mut [T]> {
    match memory {
        MemoryImpl::Host(buffer) => Ok(buffer.as_mut_slice()),
        MemoryImpl::Cuda(_) => Err(wrong_backend()),
    }
}
