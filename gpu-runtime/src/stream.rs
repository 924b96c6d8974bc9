//! Streams: ordered queues of copies and launches on one device, and making them. Launching
//! is in `launch.rs`.

use std::fmt;

use crate::core::error::Result;
use crate::device::Gpu;
use crate::dispatch::QueueImpl;
use crate::event::Event;

/// A queue of work on one device. Cheap to clone; clones share the queue. On the CPU backend
/// work runs when it is queued, so a stream is already synchronized when a call returns (but
/// checked-mode panics still surface at the next synchronizing call, as on a GPU).
#[derive(Clone)]
pub struct Stream {
    pub(crate) gpu: Gpu,
    pub(crate) queue: QueueImpl,
}

impl fmt::Debug for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.queue.describe(self.gpu.ordinal()))
    }
}

impl Gpu {
    /// The device's default (legacy NULL) stream.
    pub fn default_stream(&self) -> Stream {
        Stream::new(self.clone(), self.inner.device.default_queue())
    }

    /// A new non-blocking stream; buffers used across streams are ordered with events.
    pub fn new_stream(&self) -> Result<Stream> {
        Ok(Stream::new(self.clone(), self.inner.device.new_queue()?))
    }
}

impl Stream {
    pub(crate) fn new(gpu: Gpu, queue: QueueImpl) -> Stream {
        Stream { gpu, queue }
    }

    /// The device this stream runs on.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// Blocks until all work queued so far has finished; reports asynchronous kernel faults
    /// and checked-mode panics ([`crate::Error::KernelPanic`]).
    pub fn synchronize(&self) -> Result<()> {
        self.queue.synchronize(self.gpu.device())
    }

    /// Records an event (timing enabled) after the work queued so far.
    pub fn record_event(&self) -> Result<Event> {
        Ok(Event {
            marker: self.queue.record_event()?,
            gpu: self.gpu.clone(),
        })
    }

    /// Makes later work on this stream wait for `event`, without blocking the host.
    pub fn wait_event(&self, event: &Event) -> Result<()> {
        self.queue.wait(&event.marker, event.gpu.backend())
    }

    /// Fails unless an object on device `gpu` may be used with this stream.
    pub(crate) fn check_device(&self, what: impl FnOnce() -> String, gpu: &Gpu) -> Result<()> {
        self.gpu.check_same(what, gpu)
    }
}
