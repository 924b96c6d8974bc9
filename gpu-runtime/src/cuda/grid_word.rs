//! The word a stream's cooperative launches meet at in `grid_sync`.
//!
//! The generated barrier (the `rs_grid_sync` helper) flips the word's top bit once every block
//! has arrived and leaves its low bits as they were, so the word needs no reset between
//! barriers or launches. Two launches must never share one while both run, so it is not a
//! module global (two cooperative launches of one kernel on two streams would meet at it): each
//! stream has its own, allocated on its first cooperative launch (or capture) and kept until
//! the stream goes, and passed to each launch as the kernel's hidden last parameter. Launches
//! on one stream run one after another, and a captured graph replays on the stream it was
//! captured from, so no two users of a word overlap.
//!
//! A launch one of whose threads panicked (checked mode, assertions) stops waiting at its
//! barriers, and leaves the word's count part-way through one: the blocks that had arrived
//! added to it, the others never will. The next barrier on that word would then flip early or
//! never. So after a cooperative kernel that can panic, the next cooperative launch on the
//! stream has the word zeroed before it, on the stream (one memset, only after kernels with
//! checks or assertions compiled in).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use cudarc::driver::{CudaSlice, CudaStream, DevicePtr};

use crate::core::error::{Error, Result};

/// One stream's grid-barrier word, allocated on first use.
#[derive(Default)]
pub(crate) struct GridWord {
    word: OnceLock<(CudaSlice<u32>, u64)>,
    /// Whether the last launch that used the word could panic, and so may have left it
    /// part-way through a barrier.
    after_panicky: AtomicBool,
}

impl GridWord {
    /// The word's device address, allocating and zeroing it on `stream` (its own stream, so
    /// the zeroing is ordered before every launch that uses it) the first time.
    pub(crate) fn address(&self, stream: &Arc<CudaStream>) -> Result<u64> {
        if let Some((_, address)) = self.word.get() {
            return Ok(*address);
        }
        let word = stream
            .alloc_zeros::<u32>(1)
            .map_err(Error::driver("allocating a stream's grid-barrier word"))?;
        let (address, read) = word.device_ptr(stream);
        drop(read);
        // Another thread may have won the race; its word is kept and this one freed.
        Ok(self.word.get_or_init(|| (word, address)).1)
    }

    /// The word's address for a launch on `stream`, zeroed first (on the stream, ordered before
    /// the launch) when the previous launch that used it could panic; `can_panic` says whether
    /// this one can.
    pub(crate) fn for_launch(&self, stream: &Arc<CudaStream>, can_panic: bool) -> Result<u64> {
        let address = self.address(stream)?;
        if self.after_panicky.swap(can_panic, Ordering::Relaxed) {
            // SAFETY: `address` is the word's own 4-byte allocation on this stream's device,
            // alive as long as `self` (which the stream holds), and the memset is queued on the
            // stream every launch using the word runs on, so it neither races with them nor
            // outlives the allocation.
            unsafe { cudarc::driver::result::memset_d8_async(address, 0, 4, stream.cu_stream()) }
                .map_err(Error::driver("zeroing a stream's grid-barrier word"))?;
        }
        Ok(address)
    }
}
