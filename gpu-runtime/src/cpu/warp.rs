//! Warp rendezvous: the 32 lanes of a warp exchanging values (shuffles, votes, `sync_warp`).
//!
//! Each lane deposits its operation and value and suspends; once every lane its mask names
//! (less those that have returned) has deposited, the scheduler computes every participant's
//! result at once and resumes them. Computing all results before any lane runs on is what
//! makes back-to-back shuffles safe: no lane can overwrite its deposit while another still
//! needs it.

/// Threads per warp, as on every NVIDIA GPU.
pub(crate) const WARP_SIZE: u32 = 32;

/// Which warp operation a lane is waiting in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum WarpOp {
    /// `sync_warp`.
    Sync,
    /// `shfl_sync`.
    Index,
    /// `shfl_up_sync`.
    Up,
    /// `shfl_down_sync`.
    Down,
    /// `shfl_xor_sync`.
    Xor,
    /// `all_sync`.
    All,
    /// `any_sync`.
    Any,
    /// `ballot_sync`.
    Ballot,
}

impl WarpOp {
    /// The kernel-language name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            WarpOp::Sync => "sync_warp",
            WarpOp::Index => "shfl_sync",
            WarpOp::Up => "shfl_up_sync",
            WarpOp::Down => "shfl_down_sync",
            WarpOp::Xor => "shfl_xor_sync",
            WarpOp::All => "all_sync",
            WarpOp::Any => "any_sync",
            WarpOp::Ballot => "ballot_sync",
        }
    }
}

/// One lane's part of a warp operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Deposit {
    /// The operation.
    pub(crate) op: WarpOp,
    /// The lanes it names.
    pub(crate) mask: u32,
    /// The value's bits (shuffles) or the predicate (votes).
    pub(crate) bits: u64,
    /// Source lane, delta or lane mask (shuffles).
    pub(crate) arg: u32,
    /// The source line of the call, for the race checker's reports.
    pub(crate) line: u32,
}

const NO_DEPOSIT: Deposit = Deposit {
    op: WarpOp::Sync,
    mask: 0,
    bits: 0,
    arg: 0,
    line: 0,
};

/// One warp's deposits while its lanes wait.
#[derive(Clone, Debug)]
pub(crate) struct Rendezvous {
    deposits: [Deposit; WARP_SIZE as usize],
    /// Lanes that have deposited and wait.
    waiting: u32,
}

impl Default for Rendezvous {
    fn default() -> Self {
        Rendezvous {
            deposits: [NO_DEPOSIT; WARP_SIZE as usize],
            waiting: 0,
        }
    }
}

impl Rendezvous {
    /// Lane `lane` deposits and waits.
    pub(crate) fn deposit(&mut self, lane: u32, deposit: Deposit) {
        self.deposits[(lane % WARP_SIZE) as usize] = deposit;
        self.waiting |= 1 << (lane % WARP_SIZE);
    }

    /// Lanes waiting.
    pub(crate) fn waiting(&self) -> u32 {
        self.waiting
    }

    /// What lane `lane` deposited (meaningful while it waits).
    pub(crate) fn deposit_of(&self, lane: u32) -> Deposit {
        self.deposits[(lane % WARP_SIZE) as usize]
    }

    /// A set of waiting lanes that can all proceed, given the lanes still `live`: a waiting
    /// lane together with every live lane its mask names (and theirs, transitively), when all
    /// of those are waiting too.
    pub(crate) fn ready_group(&self, live: u32) -> Option<u32> {
        let mut candidates = self.waiting;
        while candidates != 0 {
            let lane = candidates.trailing_zeros();
            let mut group = 1u32 << lane;
            loop {
                let mut needed = group;
                let mut members = group;
                while members != 0 {
                    let member = members.trailing_zeros();
                    members &= members - 1;
                    needed |= self.deposits[member as usize].mask & live;
                }
                if needed & !self.waiting != 0 {
                    // A needed lane is live but elsewhere: this group cannot complete yet.
                    break;
                }
                if needed == group {
                    return Some(group);
                }
                group = needed;
            }
            candidates &= !group;
        }
        None
    }

    /// Computes the results of `group` (from `ready_group`) into `results` and stops them
    /// waiting.
    pub(crate) fn release(&mut self, group: u32, results: &mut [u64; WARP_SIZE as usize]) {
        let mut members = group;
        while members != 0 {
            let lane = members.trailing_zeros();
            members &= members - 1;
            results[lane as usize] = self.result(lane, group);
        }
        self.waiting &= !group;
    }

    /// Lane `lane`'s result when `group` completes together.
    fn result(&self, lane: u32, group: u32) -> u64 {
        let own = self.deposits[lane as usize];
        let participants = group & (own.mask | 1 << lane);
        let from = |src: Option<u32>| match src {
            Some(src) if src < WARP_SIZE && group & (1 << src) != 0 => {
                self.deposits[src as usize].bits
            }
            // An inactive or absent source lane: CUDA leaves the value undefined; the lane
            // keeps its own.
            _ => own.bits,
        };
        let preds = || {
            let mut set = 0u32;
            let mut members = participants;
            while members != 0 {
                let member = members.trailing_zeros();
                members &= members - 1;
                if self.deposits[member as usize].bits != 0 {
                    set |= 1 << member;
                }
            }
            set
        };
        match own.op {
            WarpOp::Sync => 0,
            WarpOp::Index => from(Some(own.arg % WARP_SIZE)),
            WarpOp::Up => from(lane.checked_sub(own.arg)),
            WarpOp::Down => from(lane.checked_add(own.arg)),
            WarpOp::Xor => from(Some(lane ^ own.arg)),
            WarpOp::All => u64::from(preds() == participants),
            WarpOp::Any => u64::from(preds() != 0),
            WarpOp::Ballot => u64::from(preds()),
        }
    }
}

/// The result of a warp operation for a lane that is alone (a barrier-free kernel's thread).
pub(crate) fn alone(lane: u32, deposit: Deposit) -> u64 {
    let lane = lane % WARP_SIZE;
    let mut rendezvous = Rendezvous::default();
    rendezvous.deposit(lane, deposit);
    let mut results = [0; WARP_SIZE as usize];
    rendezvous.release(1 << lane, &mut results);
    results[lane as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full_warp(op: WarpOp, arg: u32, value: impl Fn(u32) -> u64) -> [u64; 32] {
        let mut r = Rendezvous::default();
        for lane in 0..32 {
            r.deposit(
                lane,
                Deposit {
                    op,
                    mask: u32::MAX,
                    bits: value(lane),
                    arg,
                    line: 0,
                },
            );
        }
        let group = r.ready_group(u32::MAX).expect("all lanes deposited");
        assert_eq!(group, u32::MAX);
        let mut results = [0; 32];
        r.release(group, &mut results);
        assert_eq!(r.waiting(), 0);
        results
    }

    #[test]
    fn shuffles_follow_cuda() {
        let down = full_warp(WarpOp::Down, 4, u64::from);
        assert_eq!(down[0], 4);
        assert_eq!(down[27], 31);
        assert_eq!(down[28], 28, "lane + delta >= 32 keeps its own value");
        let up = full_warp(WarpOp::Up, 3, u64::from);
        assert_eq!((up[2], up[3], up[31]), (2, 0, 28));
        let xor = full_warp(WarpOp::Xor, 1, u64::from);
        assert_eq!((xor[0], xor[1], xor[30]), (1, 0, 31));
        let xor_out = full_warp(WarpOp::Xor, 32, u64::from);
        assert_eq!(
            xor_out[5], 5,
            "a source lane past the warp gives the own value"
        );
        let index = full_warp(WarpOp::Index, 33, |lane| u64::from(lane) * 10);
        assert!(index.iter().all(|&v| v == 10), "src_lane % 32");
    }

    #[test]
    fn votes() {
        let all = full_warp(WarpOp::All, 0, |_| 1);
        assert!(all.iter().all(|&v| v == 1));
        let not_all = full_warp(WarpOp::All, 0, |lane| u64::from(lane != 7));
        assert!(not_all.iter().all(|&v| v == 0));
        let any = full_warp(WarpOp::Any, 0, |lane| u64::from(lane == 7));
        assert!(any.iter().all(|&v| v == 1));
        let ballot = full_warp(WarpOp::Ballot, 0, |lane| u64::from(lane % 2 == 0));
        assert!(ballot.iter().all(|&v| v == 0x5555_5555));
    }

    #[test]
    fn masks_and_returned_lanes() {
        let mut r = Rendezvous::default();
        let half = |bits| Deposit {
            op: WarpOp::Down,
            mask: 0xffff,
            bits,
            arg: 8,
            line: 0,
        };
        for lane in 0..15 {
            r.deposit(lane, half(u64::from(lane)));
        }
        assert_eq!(r.ready_group(u32::MAX), None, "lane 15 is live and missing");
        // Lane 15 returned: the others proceed without it.
        let live = !(1u32 << 15);
        let group = r.ready_group(live).unwrap();
        assert_eq!(group, 0x7fff);
        let mut results = [0; 32];
        r.release(group, &mut results);
        assert_eq!(results[0], 8);
        assert_eq!(results[7], 7, "source lane 15 is gone: own value");
        // Two independent halves with their own masks.
        let mut r = Rendezvous::default();
        for lane in 16..32 {
            r.deposit(
                lane,
                Deposit {
                    op: WarpOp::Ballot,
                    mask: 0xffff_0000,
                    bits: 1,
                    arg: 0,
                    line: 0,
                },
            );
        }
        let group = r.ready_group(u32::MAX).unwrap();
        assert_eq!(group, 0xffff_0000);
        r.release(group, &mut results);
        assert_eq!(results[20], 0xffff_0000);
        assert_eq!(
            alone(
                3,
                Deposit {
                    op: WarpOp::Ballot,
                    mask: u32::MAX,
                    bits: 1,
                    arg: 0,
                    line: 0,
                }
            ),
            8
        );
    }
}
