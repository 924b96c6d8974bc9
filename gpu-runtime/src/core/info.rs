//! What a device is: its properties, read once when it is opened.

use std::fmt;

use crate::core::backend::Backend;
use crate::core::launch::DeviceLimits;

/// Properties of a device, read once when it is opened.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DeviceInfo {
    /// Which backend the device is.
    pub backend: Backend,
    /// Device ordinal.
    pub ordinal: usize,
    /// Marketing name.
    pub name: String,
    /// (major, minor).
    pub compute_capability: (u32, u32),
    /// Streaming multiprocessors.
    pub sm_count: u32,
    /// Total memory, bytes.
    pub total_memory: usize,
    /// Threads per block, all dimensions together.
    pub max_threads_per_block: u32,
    /// Resident threads per multiprocessor.
    pub max_threads_per_sm: u32,
    /// Block dimension limits (x, y, z).
    pub max_block_dim: [u32; 3],
    /// Grid dimension limits (x, y, z).
    pub max_grid_dim: [u32; 3],
    /// Shared memory per block without opting in, bytes.
    pub shared_mem_per_block: u32,
    /// Shared memory per block after opting in, bytes.
    pub shared_mem_per_block_optin: u32,
    /// Shared memory per multiprocessor, bytes.
    pub shared_mem_per_sm: u32,
    /// 32-bit registers per block.
    pub registers_per_block: u32,
    /// Threads per warp.
    pub warp_size: u32,
    /// L2 cache, bytes.
    pub l2_cache_bytes: u32,
    /// Peak SM clock in kHz, if the driver reports it.
    pub clock_rate_khz: Option<u32>,
    /// Peak memory clock in kHz, if the driver reports it.
    pub memory_clock_rate_khz: Option<u32>,
    /// Memory bus width in bits, if the driver reports it.
    pub memory_bus_width_bits: Option<u32>,
    /// Whether ECC is on.
    pub ecc_enabled: bool,
    /// Whether the GPU shares memory with the host (e.g. Jetson).
    pub integrated: bool,
    /// PCI location, "domain:bus:device.function".
    pub pci_bus_id: String,
    /// CUDA driver API version as (major, minor), e.g. (13, 0).
    pub driver_version: (u32, u32),
}

impl DeviceInfo {
    /// The limits launches are validated against.
    pub fn limits(&self) -> DeviceLimits {
        DeviceLimits {
            max_threads_per_block: self.max_threads_per_block,
            max_block_dim: self.max_block_dim,
            max_grid_dim: self.max_grid_dim,
            max_shared_mem_per_block: self.shared_mem_per_block,
            max_shared_mem_per_block_optin: self.shared_mem_per_block_optin,
        }
    }

    /// Theoretical DRAM bandwidth in GB/s (2 × memory clock × bus width, as deviceQuery does).
    pub fn memory_bandwidth_gb_s(&self) -> Option<f64> {
        let clock = f64::from(self.memory_clock_rate_khz?) * 1e3;
        let bytes = f64::from(self.memory_bus_width_bits?) / 8.0;
        Some(2.0 * clock * bytes / 1e9)
    }
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

fn kib(bytes: u32) -> String {
    format!("{} KiB", bytes / 1024)
}

impl fmt::Display for DeviceInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.backend == Backend::Cpu {
            return self.fmt_cpu(f);
        }
        let (major, minor) = self.compute_capability;
        let mhz = |khz: Option<u32>| match khz {
            Some(k) => format!("{} MHz", k / 1000),
            None => "unknown".to_string(),
        };
        writeln!(f, "CudaDeviceProperties(")?;
        writeln!(f, "    ordinal={},", self.ordinal)?;
        writeln!(f, "    name='{}',", self.name)?;
        writeln!(f, "    major={major}, minor={minor},  # sm_{major}{minor}")?;
        writeln!(
            f,
            "    total_memory={},  # {} bytes",
            mib(self.total_memory as u64),
            self.total_memory
        )?;
        writeln!(f, "    multi_processor_count={},", self.sm_count)?;
        writeln!(
            f,
            "    max_threads_per_block={}, max_threads_per_multi_processor={},",
            self.max_threads_per_block, self.max_threads_per_sm
        )?;
        writeln!(
            f,
            "    max_block_dim=({}, {}, {}), max_grid_dim=({}, {}, {}),",
            self.max_block_dim[0],
            self.max_block_dim[1],
            self.max_block_dim[2],
            self.max_grid_dim[0],
            self.max_grid_dim[1],
            self.max_grid_dim[2]
        )?;
        writeln!(
            f,
            "    shared_memory_per_block={}, shared_memory_per_block_optin={}, \
             shared_memory_per_multiprocessor={},",
            kib(self.shared_mem_per_block),
            kib(self.shared_mem_per_block_optin),
            kib(self.shared_mem_per_sm)
        )?;
        writeln!(
            f,
            "    regs_per_block={}, warp_size={}, L2_cache_size={},",
            self.registers_per_block,
            self.warp_size,
            mib(u64::from(self.l2_cache_bytes))
        )?;
        write!(
            f,
            "    clock_rate={}, memory_clock_rate={}, memory_bus_width=",
            mhz(self.clock_rate_khz),
            mhz(self.memory_clock_rate_khz)
        )?;
        match self.memory_bus_width_bits {
            Some(bits) => writeln!(f, "{bits} bits,")?,
            None => writeln!(f, "unknown,")?,
        }
        if let Some(bw) = self.memory_bandwidth_gb_s() {
            writeln!(f, "    memory_bandwidth={bw:.0} GB/s,  # theoretical")?;
        }
        writeln!(
            f,
            "    ecc_enabled={}, integrated={}, pci_bus_id='{}', driver_version={}.{}",
            self.ecc_enabled,
            self.integrated,
            self.pci_bus_id,
            self.driver_version.0,
            self.driver_version.1
        )?;
        write!(f, ")")
    }
}

impl DeviceInfo {
    /// The CPU backend's properties: worker threads, host memory, and the launch limits it
    /// enforces (an H100's).
    fn fmt_cpu(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "CpuBackendProperties(")?;
        writeln!(f, "    name='{}',", self.name)?;
        writeln!(
            f,
            "    worker_threads={},  # blocks run in parallel, one per worker",
            self.sm_count
        )?;
        writeln!(
            f,
            "    host_memory={},  # {} bytes",
            mib(self.total_memory as u64),
            self.total_memory
        )?;
        writeln!(
            f,
            "    max_threads_per_block={}, max_block_dim=({}, {}, {}), max_grid_dim=({}, {}, {}),",
            self.max_threads_per_block,
            self.max_block_dim[0],
            self.max_block_dim[1],
            self.max_block_dim[2],
            self.max_grid_dim[0],
            self.max_grid_dim[1],
            self.max_grid_dim[2]
        )?;
        writeln!(
            f,
            "    shared_memory_per_block={}, shared_memory_per_block_optin={}, warp_size={},",
            kib(self.shared_mem_per_block),
            kib(self.shared_mem_per_block_optin),
            self.warp_size
        )?;
        writeln!(
            f,
            "    # launch limits are an H100's (sm_90): a launch valid here is valid there"
        )?;
        write!(f, ")")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h100() -> DeviceInfo {
        DeviceInfo {
            backend: Backend::Cuda,
            ordinal: 0,
            name: "NVIDIA H100 80GB HBM3".into(),
            compute_capability: (9, 0),
            sm_count: 132,
            total_memory: 85_029_158_912,
            max_threads_per_block: 1024,
            max_threads_per_sm: 2048,
            max_block_dim: [1024, 1024, 64],
            max_grid_dim: [2_147_483_647, 65_535, 65_535],
            shared_mem_per_block: 49_152,
            shared_mem_per_block_optin: 232_448,
            shared_mem_per_sm: 233_472,
            registers_per_block: 65_536,
            warp_size: 32,
            l2_cache_bytes: 52_428_800,
            clock_rate_khz: Some(1_980_000),
            memory_clock_rate_khz: Some(2_619_000),
            memory_bus_width_bits: Some(5120),
            ecc_enabled: true,
            integrated: false,
            pci_bus_id: "0000:19:00.0".into(),
            driver_version: (13, 0),
        }
    }

    #[test]
    fn info_display_is_readable() {
        let text = h100().to_string();
        assert!(text.starts_with("CudaDeviceProperties(\n"), "{text}");
        assert!(text.contains("name='NVIDIA H100 80GB HBM3'"), "{text}");
        assert!(text.contains("major=9, minor=0"), "{text}");
        assert!(text.contains("multi_processor_count=132"), "{text}");
        assert!(
            text.contains("shared_memory_per_block_optin=227 KiB"),
            "{text}"
        );
        assert!(text.contains("memory_bandwidth=3352 GB/s"), "{text}");
        assert!(text.lines().count() > 8, "{text}");
        assert_eq!(h100().limits(), DeviceLimits::SM_90);
    }
}
