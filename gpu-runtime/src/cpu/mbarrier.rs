//! mbarriers on the CPU: a `u64` of shared memory counting arrivals per phase.
//!
//! The word holds the arrivals still pending in this phase (bits 0-30), the count each phase
//! expects (bits 32-62) and the phase's parity (bit 63). A waiting thread lets the block's
//! other threads run until the phase it waits for has completed; the CPU's `cp.async` copies
//! land at once, so `cp.async.mbarrier.arrive` is a plain arrival.

use crate::cpu::slice::CpuSlice;
use crate::cpu::thread::ThreadCtx;

/// Polls of one wait before it is reported as a deadlock: far more than any kernel whose
/// arrivals do come needs, as every poll lets every other thread of the block run.
const MAX_POLLS: u32 = 1 << 20;

const COUNT_MASK: u64 = (1 << 31) - 1;
const PARITY: u64 = 1 << 63;

/// `mbarrier.init`: `bars[index]` expects `count` arrivals per phase, starting a phase of
/// parity 0.
pub fn mbarrier_init(t: &ThreadCtx, bars: CpuSlice<'_, u64>, index: usize, count: u32, line: u32) {
    if count == 0 || u64::from(count) > COUNT_MASK {
        t.contract_error(format!(
            "mbarrier_init at line {line}: a count of {count} is outside 1..2^31"
        ));
        return;
    }
    let count = u64::from(count);
    bars.set(index, count | count << 32, t, line);
}

/// `mbarrier.arrive`: one arrival on `bars[index]`; the phase's last completes it.
pub fn mbarrier_arrive(t: &ThreadCtx, bars: CpuSlice<'_, u64>, index: usize, line: u32) {
    // Atomic to the race checker: arrivals race by design.
    let word = bars.atomic_load(index, t, line);
    let (pending, expected) = (word & COUNT_MASK, (word >> 32) & COUNT_MASK);
    if expected == 0 {
        t.contract_error(format!(
            "mbarrier_arrive at line {line}: barrier {index} was never initialised"
        ));
        return;
    }
    let next = if pending <= 1 {
        // The phase completes: flip the parity and expect the full count again.
        (word & PARITY) ^ PARITY | expected << 32 | expected
    } else {
        word - 1
    };
    bars.atomic_exchange(index, next, t, line);
    if let Some(local) = t.block().race() {
        // What the arriving threads did before is ordered before what the waiters do after.
        local.arrive(bars.addr(index), pending <= 1);
    }
}

/// `mbarrier.try_wait.parity` in a loop: returns once the phase of parity `parity & 1` of
/// `bars[index]` has completed, letting the block's other threads run meanwhile.
pub fn mbarrier_wait(t: &ThreadCtx, bars: CpuSlice<'_, u64>, index: usize, parity: u32, line: u32) {
    let waited = u64::from(parity & 1) << 63;
    for _ in 0..MAX_POLLS {
        // The current phase has the other parity once the awaited one completed.
        if bars.atomic_load(index, t, line) & PARITY != waited {
            if let Some(local) = t.block().race() {
                local.acquire(t.linear(), bars.addr(index));
            }
            return;
        }
        if !t.spin() {
            return;
        }
    }
    t.contract_error(format!(
        "mbarrier_wait at line {line}: the phase of parity {} of barrier {index} never \
         completed (too few arrivals: a deadlock on a GPU)",
        parity & 1
    ));
}
