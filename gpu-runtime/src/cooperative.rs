//! Sizing cooperative launches: kernels that call `grid_sync` need every block of their grid
//! resident at once, so their grid is bounded by what the device holds.

use crate::core::error::Result;
use crate::core::generic::{check_generic, check_template_args, TemplateArg};
use crate::core::launch::LaunchConfig;
use crate::kernel::Kernel;
use crate::stream::Stream;

impl Stream {
    /// The most blocks a launch of `kernel` with `config`'s block shape, dynamic shared memory
    /// and checked mode may have when they must all be resident at once, as a kernel that
    /// calls `grid_sync` needs (`config.grid` is ignored). Size a persistent grid with it and
    /// cover the data with a grid-stride loop; a launch with more blocks is
    /// [`crate::Error::CooperativeGridTooLarge`].
    ///
    /// On a GPU it is the kernel's occupancy (blocks per multiprocessor, from its registers and
    /// shared memory) times the multiprocessors, and compiles the kernel on first use; on the
    /// CPU backend, 16,384 threads divided by the threads per block.
    pub fn max_cooperative_blocks(
        &self,
        kernel: &'static Kernel,
        config: LaunchConfig,
    ) -> Result<u32> {
        check_generic(kernel.spec(), false)?;
        self.max_cooperative_blocks_generic(kernel, &[], config)
    }

    /// [`Stream::max_cooperative_blocks`] for a generic kernel instantiated with
    /// `template_args`.
    pub fn max_cooperative_blocks_generic(
        &self,
        kernel: &'static Kernel,
        template_args: &[TemplateArg],
        config: LaunchConfig,
    ) -> Result<u32> {
        // A plain kernel (from `max_cooperative_blocks`) takes no template arguments.
        if kernel.is_generic() || !template_args.is_empty() {
            check_template_args(kernel.spec(), template_args)?;
        }
        let limits = self.gpu.limits();
        limits.validate(&config)?;
        self.queue.max_cooperative_blocks(
            self.gpu.device(),
            kernel.spec(),
            template_args,
            &config,
            &limits,
            || self.gpu.cache_config(),
        )
    }
}
