//! CUDA graph capture and replay on a [`CudaQueue`].

use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
use cudarc::driver::CudaGraph;

use crate::core::error::{Error, Result};
use crate::cuda::device::CudaDevice;
use crate::cuda::stream::CudaQueue;

/// A captured, uploaded graph and the launches it holds.
pub(crate) struct CudaReplay {
    graph: CudaGraph,
    /// Checked launches in the graph: each replay queues that many on the stream.
    checked_launches: u64,
    /// Kernel launches captured, for reports.
    pub(crate) launches: u64,
}

impl CudaQueue {
    /// Captures the work `record` queues on this stream, after synchronizing `device` so that
    /// everything queued before on any stream has finished.
    pub(crate) fn capture(
        &self,
        device: &CudaDevice,
        record: impl FnOnce() -> Result<()>,
    ) -> Result<CudaReplay> {
        let (stream, checks) = (&self.stream, &self.checks);
        if stream.cu_stream().is_null() {
            return Err(Error::InvalidLaunch(
                "CUDA cannot capture the legacy default stream into a graph: capture a stream \
                 from Gpu::new_stream()"
                    .to_string(),
            ));
        }
        let checked_before = checks.launched();
        let launches_before = checks.kernel_launches();
        // A cooperative kernel in the capture takes the stream's grid-barrier word, which must
        // not be allocated inside the capture (it would become a node of the graph).
        self.grid_word.address(stream)?;
        // Everything queued before, on any stream, is finished: the captured work depends on
        // nothing outside the graph.
        device.synchronize()?;
        // No device-wide synchronization on another thread may run until the capture ends.
        let capturing = device.capture_gate.capturing();
        // cudarc orders buffers across streams by recording and waiting on events; a capture
        // may not wait on an event recorded outside it (CUDA_ERROR_STREAM_CAPTURE_ISOLATION),
        // so the tracking pauses while capturing, and the synchronization above stands in.
        // Counted across threads: captures in progress together share one pause.
        let ctx = stream.context();
        {
            let mut paused = device.capture_gate.paused();
            if paused.0 == 0 {
                paused.1 = ctx.is_event_tracking();
                if paused.1 {
                    // SAFETY: only launches are queued while tracking is off, on capturing
                    // streams after a device-wide synchronization, so no buffer is in use on
                    // another stream; buffers allocated meanwhile (none, unless `record`
                    // allocates) are ordered by their stream.
                    unsafe { ctx.disable_event_tracking() };
                }
            }
            paused.0 += 1;
        }
        // Relaxed: loading a module or allocating the checked-mode slot during the capture is
        // fine; nothing else runs on this thread meanwhile.
        let recorded = stream
            .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED)
            .map_err(Error::driver("starting a graph capture"))
            .and_then(|()| {
                let recorded = record();
                let ended = stream.end_capture(CUgraphInstantiate_flags(0));
                recorded.map(|()| ended)
            });
        {
            let mut paused = device.capture_gate.paused();
            paused.0 -= 1;
            if paused.0 == 0 && paused.1 {
                // SAFETY: restores the tracking paused by the first capture in progress; no
                // other is in progress now.
                unsafe { ctx.enable_event_tracking() };
            }
        }
        drop(capturing);
        let ended = recorded?;
        let graph = ended
            .map_err(Error::driver(
                "finishing a graph capture (an operation in it cannot be captured, such as a \
                 copy to or from pageable host memory or a synchronization)",
            ))?
            .ok_or_else(|| Error::InvalidLaunch("the graph capture recorded nothing".into()))?;
        // The launches were counted as queued while capturing; they run at each replay instead.
        let checked_launches = checks.launched() - checked_before;
        graph
            .upload()
            .map_err(Error::driver("uploading a graph to the device"))?;
        Ok(CudaReplay {
            graph,
            checked_launches,
            launches: checks.kernel_launches() - launches_before,
        })
    }

    /// Queues one replay of `replay` on this stream, the one it was captured from.
    pub(crate) fn replay(&self, device: &CudaDevice, replay: &CudaReplay) -> Result<()> {
        replay
            .graph
            .launch()
            .map_err(Error::driver("launching a graph"))?;
        if replay.checked_launches > 0 {
            self.checks.note_launches(replay.checked_launches);
            device.device_checks.note_launches(replay.checked_launches);
        }
        Ok(())
    }
}
