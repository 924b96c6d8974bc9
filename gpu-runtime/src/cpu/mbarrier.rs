//! mbarriers on the CPU: a `u64` of shared memory counting arrivals and transaction bytes per
//! phase.
//!
//! The word holds the arrivals still pending in this phase (bits 0-19), the count each phase
//! expects (bits 20-39), the transaction bytes still expected (bits 40-61, two's complement:
//! a copy may complete its bytes before they are announced) and the phase's parity (bit 63).
//! Twenty bits are what the hardware allows for both counts. A phase completes once no
//! arrival and no byte is pending. A waiting thread lets the block's other threads run until
//! the phase it waits for has completed; the CPU's `cp.async` and tensor copies land at once,
//! so `cp.async.mbarrier.arrive` is a plain arrival and a tensor copy completes its bytes as
//! it is issued.

use crate::cpu::slice::CpuSlice;
use crate::cpu::thread::ThreadCtx;

/// Polls of one wait before it is reported as a deadlock: far more than any kernel whose
/// arrivals do come needs, as every poll lets every other thread of the block run.
const MAX_POLLS: u32 = 1 << 20;

/// The largest arrival count and transaction byte count of a phase (PTX: 2^20 - 1).
const MAX_COUNT: u32 = (1 << 20) - 1;
const COUNT_MASK: u64 = (1 << 20) - 1;
const TX_BITS: u32 = 22;
const TX_MASK: u64 = (1 << TX_BITS) - 1;
const PARITY: u64 = 1 << 63;

/// An mbarrier word, unpacked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Phase {
    pending: u64,
    expected: u64,
    tx: i64,
    parity: u64,
}

impl Phase {
    fn unpack(word: u64) -> Phase {
        let raw_tx = (word >> 40) & TX_MASK;
        // Sign-extend the 22-bit transaction count.
        let tx = ((raw_tx << (64 - TX_BITS)) as i64) >> (64 - TX_BITS);
        Phase {
            pending: word & COUNT_MASK,
            expected: (word >> 20) & COUNT_MASK,
            tx,
            parity: word & PARITY,
        }
    }

    fn pack(self) -> u64 {
        self.pending | self.expected << 20 | ((self.tx as u64) & TX_MASK) << 40 | self.parity
    }

    /// The phase after this one completed, when nothing of it is pending any more.
    fn settle(self) -> (Phase, bool) {
        if self.pending == 0 && self.tx == 0 {
            let next = Phase {
                pending: self.expected,
                expected: self.expected,
                tx: 0,
                parity: self.parity ^ PARITY,
            };
            (next, true)
        } else {
            (self, false)
        }
    }
}

/// `mbarrier.init`: `bars[index]` expects `count` arrivals per phase, starting a phase of
/// parity 0.
pub fn mbarrier_init(t: &ThreadCtx, bars: CpuSlice<'_, u64>, index: usize, count: u32, line: u32) {
    if count == 0 || count > MAX_COUNT {
        t.contract_error(format!(
            "mbarrier_init at line {line}: a count of {count} is outside 1..2^20"
        ));
        return;
    }
    let count = u64::from(count);
    bars.set(index, count | count << 20, t, line);
}

/// `mbarrier.arrive`: one arrival on `bars[index]`; the phase's last completes it.
pub fn mbarrier_arrive(t: &ThreadCtx, bars: CpuSlice<'_, u64>, index: usize, line: u32) {
    update(t, bars, index, line, "mbarrier_arrive", 1, 0);
}

/// `mbarrier.arrive.expect_tx`: announces `bytes` more transaction bytes for the current phase
/// of `bars[index]` (the tensor copies that will complete them), then arrives once.
pub fn mbarrier_arrive_expect_tx(
    t: &ThreadCtx,
    bars: CpuSlice<'_, u64>,
    index: usize,
    bytes: u32,
    line: u32,
) {
    if bytes > MAX_COUNT {
        t.contract_error(format!(
            "mbarrier_arrive_expect_tx at line {line}: {bytes} bytes is more than a phase can \
             expect (2^20 - 1)"
        ));
        return;
    }
    update(
        t,
        bars,
        index,
        line,
        "mbarrier_arrive_expect_tx",
        1,
        i64::from(bytes),
    );
}

/// `complete_tx`: a tensor copy's `bytes` have landed in shared memory.
pub(crate) fn mbarrier_complete_tx(
    t: &ThreadCtx,
    bars: CpuSlice<'_, u64>,
    index: usize,
    bytes: u32,
    line: u32,
) {
    update(t, bars, index, line, "tma_load_2d", 0, -i64::from(bytes));
}

/// Applies `arrivals` arrivals and `tx` announced (positive) or completed (negative) bytes.
fn update(
    t: &ThreadCtx,
    bars: CpuSlice<'_, u64>,
    index: usize,
    line: u32,
    what: &str,
    arrivals: u64,
    tx: i64,
) {
    // Atomic to the race checker: arrivals race by design.
    let word = bars.atomic_load(index, t, line);
    let mut phase = Phase::unpack(word);
    if phase.expected == 0 {
        t.contract_error(format!(
            "{what} at line {line}: barrier {index} was never initialised"
        ));
        return;
    }
    if phase.pending < arrivals {
        t.contract_error(format!(
            "{what} at line {line}: barrier {index} got more arrivals in one phase than the \
             {} it was initialised with",
            phase.expected
        ));
        return;
    }
    phase.pending -= arrivals;
    phase.tx += tx;
    if phase.tx.unsigned_abs() > u64::from(MAX_COUNT) {
        t.contract_error(format!(
            "{what} at line {line}: barrier {index} has {} transaction bytes outstanding, more \
             than a phase can count (2^20 - 1)",
            phase.tx
        ));
        return;
    }
    let (next, completed) = phase.settle();
    bars.atomic_exchange(index, next.pack(), t, line);
    if let Some(local) = t.block().race() {
        // What the arriving threads (and the copies they issued) did before is ordered before
        // what the waiters do after.
        local.arrive(bars.addr(index), completed);
    }
}

/// `mbarrier.try_wait.parity` in a loop: returns once the phase of parity `parity & 1` of
/// `bars[index]` has completed, letting the block's other threads run meanwhile.
pub fn mbarrier_wait(t: &ThreadCtx, bars: CpuSlice<'_, u64>, index: usize, parity: u32, line: u32) {
    let waited = u64::from(parity & 1) << 63;
    let mut word = 0;
    for _ in 0..MAX_POLLS {
        word = bars.atomic_load(index, t, line);
        // The current phase has the other parity once the awaited one completed.
        if word & PARITY != waited {
            if let Some(local) = t.block().race() {
                local.acquire(t.linear(), bars.addr(index));
            }
            return;
        }
        if !t.spin() {
            return;
        }
    }
    let phase = Phase::unpack(word);
    t.contract_error(format!(
        "mbarrier_wait at line {line}: the phase of parity {} of barrier {index} never \
         completed ({} of {} arrivals and {} transaction bytes still pending: a deadlock on a \
         GPU)",
        parity & 1,
        phase.pending,
        phase.expected,
        phase.tx
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip_with_negative_transaction_counts() {
        for tx in [0, 1, -1, 4096, -(MAX_COUNT as i64), MAX_COUNT as i64] {
            let phase = Phase {
                pending: 3,
                expected: MAX_COUNT as u64,
                tx,
                parity: PARITY,
            };
            assert_eq!(Phase::unpack(phase.pack()), phase);
        }
    }

    #[test]
    fn a_phase_completes_only_without_pending_bytes() {
        let phase = Phase {
            pending: 0,
            expected: 2,
            tx: 16,
            parity: 0,
        };
        assert!(!phase.settle().1);
        let (next, done) = Phase { tx: 0, ..phase }.settle();
        assert!(done);
        assert_eq!((next.pending, next.tx, next.parity), (2, 0, PARITY));
    }
}
