//! Launch geometry and its validation against device and kernel limits.
//!
//! Validation is pure so it is tested without a GPU; a bad configuration becomes an error that
//! names the limit rather than a bare CUDA status code.

use crate::core::error::{Error, Result};

/// Shared memory a block may use without opting in through a function attribute.
pub const DEFAULT_SHARED_MEM_PER_BLOCK: u32 = 48 * 1024;

/// Grid dimensions, in blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Grid {
    /// Blocks along x.
    pub x: u32,
    /// Blocks along y.
    pub y: u32,
    /// Blocks along z.
    pub z: u32,
}

impl Grid {
    /// A 1D grid of `x` blocks.
    pub const fn x(x: u32) -> Self {
        Grid { x, y: 1, z: 1 }
    }

    /// A 2D grid.
    pub const fn xy(x: u32, y: u32) -> Self {
        Grid { x, y, z: 1 }
    }

    /// A 3D grid.
    pub const fn xyz(x: u32, y: u32, z: u32) -> Self {
        Grid { x, y, z }
    }

    /// Total number of blocks.
    pub const fn blocks(&self) -> u64 {
        self.x as u64 * self.y as u64 * self.z as u64
    }

    /// A 1D grid of `x` blocks, or [`Error::InvalidLaunch`] if it exceeds the grid limit.
    pub fn try_x(x: usize) -> Result<Self> {
        Grid::try_xyz(x, 1, 1)
    }

    /// A 2D grid, or [`Error::InvalidLaunch`] naming the first dimension over its limit.
    pub fn try_xy(x: usize, y: usize) -> Result<Self> {
        Grid::try_xyz(x, y, 1)
    }

    /// A 3D grid, or [`Error::InvalidLaunch`] naming the first dimension over its limit: block
    /// counts computed in `usize` are checked here rather than truncated by `as u32`.
    pub fn try_xyz(x: usize, y: usize, z: usize) -> Result<Self> {
        let checked = |axis: &str, blocks: usize, max: u32| match u32::try_from(blocks) {
            Ok(b) if b <= max => Ok(b),
            _ => Err(Error::InvalidLaunch(format!(
                "grid {axis} dimension of {blocks} blocks exceeds the limit of {max} blocks; use \
                 larger blocks, or fewer blocks whose threads loop over the work (a grid-stride \
                 loop)"
            ))),
        };
        let [max_x, max_y, max_z] = MAX_GRID_DIM;
        Ok(Grid::xyz(
            checked("x", x, max_x)?,
            checked("y", y, max_y)?,
            checked("z", z, max_z)?,
        ))
    }
}

/// The grid limits of every GPU since compute capability 3.0 (x, y, z), so a grid can be
/// checked without asking a device.
const MAX_GRID_DIM: [u32; 3] = [2_147_483_647, 65_535, 65_535];

/// Block dimensions, in threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Block {
    /// Threads along x.
    pub x: u32,
    /// Threads along y.
    pub y: u32,
    /// Threads along z.
    pub z: u32,
}

impl Block {
    /// A 1D block of `x` threads.
    pub const fn x(x: u32) -> Self {
        Block { x, y: 1, z: 1 }
    }

    /// A 2D block.
    pub const fn xy(x: u32, y: u32) -> Self {
        Block { x, y, z: 1 }
    }

    /// A 3D block.
    pub const fn xyz(x: u32, y: u32, z: u32) -> Self {
        Block { x, y, z }
    }

    /// Total number of threads.
    pub const fn threads(&self) -> u64 {
        self.x as u64 * self.y as u64 * self.z as u64
    }
}

/// Grid, block, dynamic shared memory and checking mode of one launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LaunchConfig {
    /// Blocks in the grid.
    pub grid: Grid,
    /// Threads in each block.
    pub block: Block,
    /// Dynamic shared memory per block, in bytes.
    pub shared_mem_bytes: u32,
    /// Checked mode (bounds and division checks that report Rust-style panics) for this
    /// launch; `None` leaves it to `GPU_CHECKED` (`1`/`0`), else the kernel's default (on in
    /// debug builds of the crate that defines it).
    pub checked: Option<bool>,
    /// The CPU backend's race checker for this launch (data races, divergent barriers, reads
    /// of unwritten shared memory); `None` leaves it to the device
    /// ([`Gpu::cpu_racecheck`](crate::Gpu::cpu_racecheck)) and `GPU_RACECHECK` (`1`/`0`). A
    /// CUDA device ignores it: run compute-sanitizer there.
    pub racecheck: Option<bool>,
}

impl LaunchConfig {
    /// A launch of `grid` blocks of `block` threads, without dynamic shared memory.
    pub const fn new(grid: Grid, block: Block) -> Self {
        LaunchConfig {
            grid,
            block,
            shared_mem_bytes: 0,
            checked: None,
            racecheck: None,
        }
    }

    /// The same launch with checked mode forced on or off.
    pub const fn checked(self, on: bool) -> Self {
        LaunchConfig {
            checked: Some(on),
            ..self
        }
    }

    /// The same launch with the CPU backend's race checker forced on or off.
    pub const fn racecheck(self, on: bool) -> Self {
        LaunchConfig {
            racecheck: Some(on),
            ..self
        }
    }

    /// The same launch with `bytes` of dynamic shared memory per block.
    pub const fn with_shared_mem(self, bytes: u32) -> Self {
        LaunchConfig {
            shared_mem_bytes: bytes,
            ..self
        }
    }

    /// A 1D launch covering `n` elements with `threads_per_block` threads per block.
    ///
    /// The grid has `ceil(n / threads_per_block)` blocks, at least one. Counts that do not fit
    /// the grid saturate, so the launch is rejected with an error naming the grid limit;
    /// [`LaunchConfig::try_for_len`] reports that error here instead, with the length.
    pub const fn for_len(n: usize, threads_per_block: u32) -> Self {
        let blocks = if threads_per_block == 0 {
            // A zero-thread block is rejected at launch; one block keeps the grid well-formed.
            1
        } else {
            let b = (n as u64).div_ceil(threads_per_block as u64);
            if b == 0 {
                1
            } else if b > u32::MAX as u64 {
                u32::MAX
            } else {
                b as u32
            }
        };
        LaunchConfig::new(Grid::x(blocks), Block::x(threads_per_block))
    }

    /// [`LaunchConfig::for_len`], or [`Error::InvalidLaunch`] when `threads_per_block` is 0 or
    /// `ceil(n / threads_per_block)` blocks exceed the grid's x limit (2³¹ − 1 blocks).
    pub fn try_for_len(n: usize, threads_per_block: u32) -> Result<Self> {
        if threads_per_block == 0 {
            return Err(Error::InvalidLaunch(format!(
                "a launch over {n} elements with 0 threads per block; a block needs at least 1 \
                 thread"
            )));
        }
        let blocks = (n as u64).div_ceil(u64::from(threads_per_block)).max(1);
        let max = MAX_GRID_DIM[0];
        if blocks > u64::from(max) {
            return Err(Error::InvalidLaunch(format!(
                "{n} elements, {threads_per_block} per block, need {blocks} blocks, over the grid \
                 limit of {max}; launch fewer blocks whose threads loop over the elements (a \
                 grid-stride loop)"
            )));
        }
        Ok(LaunchConfig::for_len(n, threads_per_block))
    }
}

/// The device limits a launch is checked against, read once per device.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DeviceLimits {
    /// Threads per block, all dimensions together.
    pub max_threads_per_block: u32,
    /// Per-dimension block limits (x, y, z).
    pub max_block_dim: [u32; 3],
    /// Per-dimension grid limits (x, y, z).
    pub max_grid_dim: [u32; 3],
    /// Shared memory per block without opting in (48 KiB on every current GPU).
    pub max_shared_mem_per_block: u32,
    /// Shared memory per block after opting in through a function attribute.
    pub max_shared_mem_per_block_optin: u32,
}

impl DeviceLimits {
    /// Limits of compute capability 9.0 (H100), for tests and documentation.
    pub const SM_90: DeviceLimits = DeviceLimits {
        max_threads_per_block: 1024,
        max_block_dim: [1024, 1024, 64],
        max_grid_dim: [2_147_483_647, 65_535, 65_535],
        max_shared_mem_per_block: DEFAULT_SHARED_MEM_PER_BLOCK,
        max_shared_mem_per_block_optin: 232_448,
    };

    /// Checks `config` against these limits, naming the first one it exceeds.
    pub fn validate(&self, config: &LaunchConfig) -> Result<()> {
        let LaunchConfig {
            grid,
            block,
            shared_mem_bytes,
            ..
        } = *config;
        let invalid = |msg: String| Err(Error::InvalidLaunch(msg));
        if block.x == 0 || block.y == 0 || block.z == 0 {
            return invalid(format!(
                "block ({}, {}, {}) has a zero dimension; every block dimension must be at least 1",
                block.x, block.y, block.z
            ));
        }
        if grid.x == 0 || grid.y == 0 || grid.z == 0 {
            return invalid(format!(
                "grid ({}, {}, {}) has a zero dimension; every grid dimension must be at least 1",
                grid.x, grid.y, grid.z
            ));
        }
        if block.threads() > u64::from(self.max_threads_per_block) {
            return invalid(format!(
                "block of {} threads exceeds the device limit of {} threads per block \
                 (block is {} x {} x {}); use smaller blocks and more of them",
                block.threads(),
                self.max_threads_per_block,
                block.x,
                block.y,
                block.z,
            ));
        }
        let axes = ["x", "y", "z"];
        let block_dims = [block.x, block.y, block.z];
        for ((axis, dim), max) in axes.iter().zip(block_dims).zip(self.max_block_dim) {
            if dim > max {
                return invalid(format!(
                    "block {axis} dimension of {dim} threads exceeds the device limit of {max}; \
                     move threads to another dimension or to more blocks"
                ));
            }
        }
        let grid_dims = [grid.x, grid.y, grid.z];
        for ((axis, dim), max) in axes.iter().zip(grid_dims).zip(self.max_grid_dim) {
            if dim > max {
                return invalid(format!(
                    "grid {axis} dimension of {dim} blocks exceeds the device limit of {max} blocks; \
                     use more threads per block or loop inside the kernel"
                ));
            }
        }
        let shared_max = self
            .max_shared_mem_per_block_optin
            .max(self.max_shared_mem_per_block);
        if shared_mem_bytes > shared_max {
            return invalid(format!(
                "dynamic shared memory of {shared_mem_bytes} bytes exceeds the device limit of \
                 {shared_max} bytes per block; use smaller tiles per block (and more blocks)"
            ));
        }
        Ok(())
    }
}

/// What a compiled kernel itself allows, read once when it is loaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct FunctionLimits {
    /// Threads per block this kernel can run with (lower than the device's when it uses many
    /// registers).
    pub max_threads_per_block: u32,
    /// Registers per thread, for the message.
    pub num_regs: u32,
    /// Statically declared shared memory, in bytes.
    pub static_shared_bytes: u32,
}

/// What a launch needs beyond validation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SharedMemPlan {
    /// Fits in the default per-block allowance.
    Default,
    /// Needs CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES raised to this many bytes.
    OptIn(u32),
}

/// Checks `config` against the kernel's own limits and decides whether shared memory must be
/// opted into.
pub(crate) fn plan_for_function(
    kernel: &str,
    config: &LaunchConfig,
    device: &DeviceLimits,
    function: &FunctionLimits,
) -> Result<SharedMemPlan> {
    let threads = config.block.threads();
    if threads > u64::from(function.max_threads_per_block) {
        return Err(Error::InvalidLaunch(format!(
            "block of {threads} threads exceeds kernel `{kernel}`'s limit of {} threads per block \
             (it uses {} registers per thread); use smaller blocks",
            function.max_threads_per_block, function.num_regs
        )));
    }
    let total = u64::from(config.shared_mem_bytes) + u64::from(function.static_shared_bytes);
    let optin = device
        .max_shared_mem_per_block_optin
        .max(device.max_shared_mem_per_block);
    if total > u64::from(optin) {
        return Err(Error::InvalidLaunch(format!(
            "kernel `{kernel}` declares {} bytes of static shared memory; with {} dynamic bytes the \
             block needs {total} bytes, over the device limit of {optin} bytes per block; \
             shrink its shared arrays or the dynamic allocation",
            function.static_shared_bytes, config.shared_mem_bytes
        )));
    }
    if total > u64::from(device.max_shared_mem_per_block) {
        Ok(SharedMemPlan::OptIn(config.shared_mem_bytes))
    } else {
        Ok(SharedMemPlan::Default)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMITS: DeviceLimits = DeviceLimits::SM_90;

    fn message(config: LaunchConfig) -> String {
        match LIMITS.validate(&config) {
            Err(Error::InvalidLaunch(msg)) => msg,
            other => panic!("expected InvalidLaunch for {config:?}, got {other:?}"),
        }
    }

    #[test]
    fn accepts_ordinary_launches() {
        let ok = [
            LaunchConfig::for_len(1 << 20, 256),
            LaunchConfig::new(Grid::xy(64, 64), Block::xy(16, 16)),
            LaunchConfig::new(Grid::xyz(1, 1, 65_535), Block::xyz(8, 8, 16)),
            LaunchConfig::new(Grid::x(1), Block::x(1024)),
            LaunchConfig::for_len(10, 128).with_shared_mem(48 * 1024),
            LaunchConfig::for_len(10, 128).with_shared_mem(232_448),
        ];
        for config in ok {
            LIMITS.validate(&config).unwrap();
        }
    }

    #[test]
    fn zero_dimensions() {
        assert!(message(LaunchConfig::new(Grid::x(1), Block::xy(32, 0))).contains("zero"));
        assert!(message(LaunchConfig::new(Grid::xyz(1, 0, 1), Block::x(32))).contains("grid"));
        assert!(message(LaunchConfig::for_len(100, 0)).contains("block (0, 1, 1)"));
    }

    #[test]
    fn threads_per_block() {
        let msg = message(LaunchConfig::new(Grid::x(1), Block::x(2048)));
        assert!(
            msg.starts_with(
                "block of 2048 threads exceeds the device limit of 1024 threads per block"
            ),
            "{msg}"
        );
        let msg = message(LaunchConfig::new(Grid::x(1), Block::xy(64, 32)));
        assert!(msg.contains("block is 64 x 32 x 1"), "{msg}");
    }

    #[test]
    fn block_dimension_limits() {
        let msg = message(LaunchConfig::new(Grid::x(1), Block::xyz(1, 1, 128)));
        assert!(msg.contains("block z dimension of 128 threads"), "{msg}");
        assert!(msg.contains("limit of 64"), "{msg}");
    }

    #[test]
    fn grid_dimension_limits() {
        let msg = message(LaunchConfig::new(Grid::xy(1, 65_536), Block::x(32)));
        assert!(msg.contains("grid y dimension of 65536 blocks"), "{msg}");
        assert!(msg.contains("limit of 65535 blocks"), "{msg}");
        let msg = message(LaunchConfig::new(Grid::x(u32::MAX), Block::x(32)));
        assert!(msg.contains("grid x dimension"), "{msg}");
    }

    #[test]
    fn shared_memory_limit() {
        let msg = message(LaunchConfig::for_len(1, 32).with_shared_mem(232_449));
        assert!(
            msg.contains("dynamic shared memory of 232449 bytes"),
            "{msg}"
        );
        assert!(msg.contains("232448"), "{msg}");
    }

    #[test]
    fn checked_builder() {
        let base = LaunchConfig::for_len(10, 32);
        assert_eq!(base.checked, None);
        assert_eq!(base.checked(true).checked, Some(true));
        assert_eq!(base.checked(false).with_shared_mem(8).checked, Some(false));
        LIMITS.validate(&base.checked(true)).unwrap();
    }

    #[test]
    fn for_len_arithmetic() {
        assert_eq!(LaunchConfig::for_len(0, 256).grid, Grid::x(1));
        assert_eq!(LaunchConfig::for_len(1, 256).grid, Grid::x(1));
        assert_eq!(LaunchConfig::for_len(256, 256).grid, Grid::x(1));
        assert_eq!(LaunchConfig::for_len(257, 256).grid, Grid::x(2));
        assert_eq!(LaunchConfig::for_len(1024, 256).grid, Grid::x(4));
        let c = LaunchConfig::for_len(1000, 128);
        assert_eq!(
            (c.grid, c.block, c.shared_mem_bytes),
            (Grid::x(8), Block::x(128), 0)
        );
    }

    #[test]
    fn for_len_huge_names_the_grid_limit() {
        // 2^31 blocks of one thread: one more than the grid's x limit.
        let msg = message(LaunchConfig::for_len(1 << 31, 1));
        assert!(
            msg.contains("grid x dimension of 2147483648 blocks"),
            "{msg}"
        );
        assert!(msg.contains("limit of 2147483647"), "{msg}");
        // Beyond u32 blocks the count saturates and is still rejected, not wrapped.
        let msg = message(LaunchConfig::for_len(usize::MAX, 1));
        assert!(msg.contains("grid x dimension"), "{msg}");
    }

    #[test]
    fn try_for_len_agrees_with_for_len_below_the_limit() {
        for (n, threads) in [(0, 256), (1, 256), (257, 256), (1000, 128), (1 << 40, 1024)] {
            assert_eq!(
                LaunchConfig::try_for_len(n, threads).unwrap(),
                LaunchConfig::for_len(n, threads)
            );
        }
        let last = 2_147_483_647usize;
        assert_eq!(
            LaunchConfig::try_for_len(last, 1).unwrap().grid,
            Grid::x(2_147_483_647)
        );
    }

    #[test]
    fn try_for_len_refuses_what_for_len_caps() {
        let message = |n, threads| match LaunchConfig::try_for_len(n, threads) {
            Err(Error::InvalidLaunch(msg)) => msg,
            other => panic!("expected InvalidLaunch for {n}/{threads}, got {other:?}"),
        };
        let msg = message(1 << 31, 1);
        assert!(msg.starts_with("2147483648 elements, 1 per block"), "{msg}");
        assert!(msg.contains("need 2147483648 blocks"), "{msg}");
        assert!(msg.contains("grid limit of 2147483647"), "{msg}");
        assert!(msg.contains("grid-stride loop"), "{msg}");
        // Past u32 blocks for_len saturates; the checked count is exact.
        let msg = message(usize::MAX, 2);
        assert!(
            msg.contains(&format!("need {} blocks", (usize::MAX as u64).div_ceil(2))),
            "{msg}"
        );
        assert!(message(10, 0).contains("0 threads per block"));
    }

    #[test]
    fn try_grids_check_each_dimension() {
        assert_eq!(Grid::try_x(7).unwrap(), Grid::x(7));
        assert_eq!(
            Grid::try_xy(2_147_483_647, 65_535).unwrap(),
            Grid::xy(2_147_483_647, 65_535)
        );
        assert_eq!(
            Grid::try_xyz(1, 2, 65_535).unwrap(),
            Grid::xyz(1, 2, 65_535)
        );
        for (grid, wanted) in [
            (
                Grid::try_x(1 << 31),
                "grid x dimension of 2147483648 blocks",
            ),
            (Grid::try_xy(1, 65_536), "grid y dimension of 65536 blocks"),
            (Grid::try_xyz(1, 1, usize::MAX), "grid z dimension of"),
        ] {
            match grid {
                Err(Error::InvalidLaunch(msg)) => {
                    assert!(msg.starts_with(wanted), "{msg}");
                    assert!(msg.contains("grid-stride loop"), "{msg}");
                }
                other => panic!("expected InvalidLaunch, got {other:?}"),
            }
        }
        // What the checked constructors accept, the device check accepts.
        LIMITS
            .validate(&LaunchConfig::new(
                Grid::try_xyz(2_147_483_647, 65_535, 65_535).unwrap(),
                Block::x(32),
            ))
            .unwrap();
    }

    #[test]
    fn function_limits() {
        let function = FunctionLimits {
            max_threads_per_block: 512,
            num_regs: 128,
            static_shared_bytes: 16 * 1024,
        };
        let plan = |c: LaunchConfig| plan_for_function("k", &c, &LIMITS, &function);
        match plan(LaunchConfig::for_len(10, 1024)) {
            Err(Error::InvalidLaunch(msg)) => {
                assert!(msg.contains("kernel `k`'s limit of 512 threads"), "{msg}");
                assert!(msg.contains("128 registers"), "{msg}");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            plan(LaunchConfig::for_len(10, 256)).unwrap(),
            SharedMemPlan::Default
        );
        // 16 KiB static + 32 KiB dynamic fits the default 48 KiB exactly.
        let c = LaunchConfig::for_len(10, 256).with_shared_mem(32 * 1024);
        assert_eq!(plan(c).unwrap(), SharedMemPlan::Default);
        let c = LaunchConfig::for_len(10, 256).with_shared_mem(32 * 1024 + 1);
        assert_eq!(plan(c).unwrap(), SharedMemPlan::OptIn(32 * 1024 + 1));
        let c = LaunchConfig::for_len(10, 256).with_shared_mem(232_448 - 16 * 1024 + 1);
        assert!(matches!(plan(c), Err(Error::InvalidLaunch(m)) if m.contains("static shared")));
    }
}
