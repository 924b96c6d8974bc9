//! CUDA graphs: a stream's work captured once and replayed with one launch, which removes the
//! per-kernel launch overhead of short steps (a training step of small kernels, say).

use std::fmt;

use cudarc::driver::sys::{CUgraphInstantiate_flags, CUstreamCaptureMode};
use cudarc::driver::CudaGraph;

use crate::error::{Error, Result};
use crate::stream::{Stream, StreamInner};

/// Work recorded from a stream by [`Stream::capture`], replayed by [`Graph::launch`].
///
/// A replay runs the captured launches with the arguments they had when captured: the same
/// buffers and the same scalar values. Work that must change from one replay to the next reads
/// what changes from device memory (a step counter, say).
pub struct Graph {
    graph: CudaGraph,
    stream: Stream,
    /// Checked launches in the graph: each replay queues that many on the stream.
    checked_launches: u64,
    /// Kernel launches captured, for reports.
    launches: u64,
}

impl fmt::Debug for Graph {
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
    pub fn capture(&self, record: impl FnOnce(&Stream) -> Result<()>) -> Result<Graph> {
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
        // Relaxed: loading a module or allocating the checked-mode slot during the capture is
        // fine; nothing else runs on this thread meanwhile.
        stream
            .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED)
            .map_err(Error::driver("starting a graph capture"))?;
        let recorded = record(self);
        let ended = stream.end_capture(CUgraphInstantiate_flags(0));
        recorded?;
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
        })
    }
}

impl Graph {
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
