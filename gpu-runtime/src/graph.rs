//! CUDA graphs: a stream's work captured once and replayed with one launch, which removes the
//! per-kernel launch overhead of short steps (a training step of small kernels, say).

use std::fmt;
use std::marker::PhantomData;

use crate::core::error::Result;
use crate::cuda::graph::CudaReplay;
use crate::stream::Stream;

/// Work recorded from a stream by [`Stream::capture`], replayed by [`Graph::launch`].
///
/// A replay runs the captured launches with the arguments they had when captured: the same
/// buffers and the same scalar values. Work that must change from one replay to the next reads
/// what changes from device memory (a step counter, say). The graph borrows what the capturing
/// closure borrowed, for `'a`, so no buffer it uses can be freed while it can still run.
pub struct Graph<'a> {
    replay: CudaReplay,
    stream: Stream,
    /// The capturing closure's borrows.
    borrows: PhantomData<&'a ()>,
}

impl fmt::Debug for Graph<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Graph({} launches on {:?})",
            self.replay.launches, self.stream
        )
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
        let replay = self.queue.capture(self.gpu().device(), || record(self))?;
        Ok(Graph {
            replay,
            stream: self.clone(),
            borrows: PhantomData,
        })
    }
}

impl Graph<'_> {
    /// Queues one replay of the captured work on the stream it was captured from.
    pub fn launch(&self) -> Result<()> {
        self.stream
            .queue
            .replay(self.stream.gpu().device(), &self.replay)
    }

    /// Kernel launches the graph holds.
    pub fn launches(&self) -> u64 {
        self.replay.launches
    }

    /// The stream the graph replays on.
    pub fn stream(&self) -> &Stream {
        &self.stream
    }
}
