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

use std::sync::{Arc, OnceLock};

use cudarc::driver::{CudaSlice, CudaStream, DevicePtr};

use crate::core::error::{Error, Result};

/// One stream's grid-barrier word, allocated on first use.
#[derive(Default)]
pub(crate) struct GridWord {
    word: OnceLock<(CudaSlice<u32>, u64)>,
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
}
