//! CUDA graphs: a stream's work captured once and replayed with one launch, which removes the
//! per-kernel launch overhead of short steps (a training step of small kernels, say).

use std::fmt;
use std::marker::PhantomData;

use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
use cudarc::driver::CudaGraph;

use crate::error::{Error, Result};
use crate::stream::{Stream, StreamInner};

/// Work recorded from a stream by [`Stream::capture`], replayed by [`Graph::launch`].
///
/// A replay runs the captured launches with the arguments they had when captured: the same
/// buffers and the same scalar values. Work that must change from one replay to the next reads
/// what changes from device memory (a step counter, say). The graph borrows what the capturing
/// closure borrowed, for `'a`, so no buffer it uses can be freed while it can still run.
pub struct Graph<'a> {
    graph: CudaGraph,
    stream: Stream,
    /// Checked launches in the graph: each replay queues that many on the stream.
    checked_launches: u64,
    /// Kernel launches captured, for reports.
    launches: u64,
    /// The capturing closure's borrows.
    borrows: PhantomData<&'a ()>,
}

impl fmt::Debug for Graph<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Graph({} launches on {:?})", self.launches, self.stream)
    }
}

impl Stream {
    /// Records the work `record` queues on this stream into a [`Graph`] instead of running it.
    ///
    /// Needs a CUDA stream made by [`Gpu::new_stream`](crate::Gpu::new_stream): CUDA cannot
    /// capture the legacy default stream, and the CPU backend has no graphs (run the work
    /// directly there). Kernels are compiled and loaded during the capture if they were not
    /// yet, but copies between the host and the device cannot be captured; run `record` once
    /// outside a capture first to find such problems with a plain error. If `record` fails,
    /// the capture is abandoned and its error returned.
    ///
    /// The returned graph keeps `record`'s borrows for as long as it lives, which keeps its
    /// buffers alive; to read a buffer between replays, let `record` borrow a `RefCell` that
    /// holds it. A replay is ordered after earlier work on this stream only: order work on other
    /// streams that touches the same buffers with events ([`Stream::wait_event`]).
    pub fn capture<'a, F>(&self, record: F) -> Result<Graph<'a>>
    where
        F: FnOnce(&Stream) -> Result<()> + 'a,
    {
        let (stream, checks) = match &self.inner {
            StreamInner::Cuda { stream, checks } => (stream, checks),
            StreamInner::Cpu(_) => {
                return Err(Error::CudaOnly {
                    what: "capturing a CUDA graph",
                })
            }
        };
        if stream.cu_stream().is_null() {
            return Err(Error::InvalidLaunch(
                "CUDA cannot capture the legacy default stream into a graph: capture a stream \
                 from Gpu::new_stream()"
                    .to_string(),
            ));
        }
        let checked_before = checks.launched();
        let launches_before = checks.kernel_launches();
        // Everything queued before, on any stream, is finished: the captured work depends on
        // nothing outside the graph.
        self.gpu().synchronize()?;
        // cudarc orders buffers across streams by recording and waiting on events; a capture
        // may not wait on an event recorded outside it (CUDA_ERROR_STREAM_CAPTURE_ISOLATION),
        // so the tracking pauses while capturing, and the synchronization above stands in.
        let ctx = stream.context();
        let tracking = ctx.is_event_tracking();
        if tracking {
            // SAFETY: only launches are queued while tracking is off, on this one stream after
            // a device-wide synchronization, so no buffer is in use on another stream; buffers
            // allocated meanwhile (none, unless `record` allocates) are ordered by the stream.
            unsafe { ctx.disable_event_tracking() };
        }
        // Relaxed: loading a module or allocating the checked-mode slot during the capture is
        // fine; nothing else runs on this thread meanwhile.
        let recorded = stream
            .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED)
            .map_err(Error::driver("starting a graph capture"))
            .and_then(|()| {
                let recorded = record(self);
                let ended = stream.end_capture(CUgraphInstantiate_flags(0));
                recorded.map(|()| ended)
            });
        if tracking {
            // SAFETY: restores the tracking paused above.
            unsafe { ctx.enable_event_tracking() };
        }
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
        Ok(Graph {
            graph,
            stream: self.clone(),
            checked_launches,
            launches: checks.kernel_launches() - launches_before,
            borrows: PhantomData,
        })
    }
}

impl Graph<'_> {
    /// Queues one replay of the captured work on the stream it was captured from.
    pub fn launch(&self) -> Result<()> {
        self.graph
            .launch()
            .map_err(Error::driver("launching a graph"))?;
        if self.checked_launches > 0 {
            if let StreamInner::Cuda { checks, .. } = &self.stream.inner {
                checks.note_launches(self.checked_launches);
            }
            self.stream
                .gpu()
                .cuda("launching a graph")?
                .device_checks
                .note_launches(self.checked_launches);
        }
        Ok(())
    }

    /// Kernel launches the graph holds.
    pub fn launches(&self) -> u64 {
        self.launches
    }

    /// The stream the graph replays on.
    pub fn stream(&self) -> &Stream {
        &self.stream
    }
}
