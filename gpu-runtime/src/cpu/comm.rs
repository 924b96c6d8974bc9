//! The CPU backend's communicator: ranks are threads of one process, and a collective is a
//! meeting in shared memory. Each rank hands in a copy of its data; the last to arrive checks
//! that the calls agree and computes the result once, reducing in rank order, so every rank
//! gets the same bits (a sum over threads in arrival order would differ from run to run).
//!
//! A rank that drops its communicator (at the end of its work, or while unwinding from a
//! panic) leaves the group: a rank waiting for it gets [`CommError::RankLeft`] instead of
//! waiting forever, and every wait is bounded by the group's timeout besides.

use std::any::Any;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::core::collective::{Collective, CommElement, CommError, ReduceOp};
use crate::core::scalar::ScalarType;

/// One rank's part of a collective: what it called and a copy of its data (a `Vec<T>`).
struct Contribution {
    call: Collective,
    elem: ScalarType,
    data: Box<dyn Any + Send>,
}

/// A finished collective: the whole result (a `Vec<T>`, each rank reads its part), or how the
/// calls disagreed, which every rank reports.
type Outcome = Result<Arc<dyn Any + Send + Sync>, Disagreement>;

/// Ranks that made different calls: the first that differs from rank 0, and both calls.
#[derive(Clone)]
struct Disagreement {
    rank: usize,
    expected: String,
    found: String,
}

struct State {
    /// The collective being gathered, counted from 0.
    call: u64,
    /// This call's contributions so far, by rank.
    arrived: Vec<Option<Contribution>>,
    /// The last finished call's outcome; a rank may still be reading it when others arrive
    /// at the next call, which cannot finish before that rank joins it.
    done: Option<(u64, Outcome)>,
    /// Ranks whose communicator was dropped.
    left: Vec<bool>,
    /// The first rank found missing for good, so that every rank names the same one (a rank
    /// that gives up leaves too, and must not be blamed by those still waiting).
    lost: Option<usize>,
}

/// The meeting place of one group's ranks.
pub(crate) struct CpuGroup {
    state: Mutex<State>,
    changed: Condvar,
    world_size: usize,
    timeout: Duration,
}

impl CpuGroup {
    /// A group of `world_size` ranks whose waits give up after `timeout`.
    pub(crate) fn new(world_size: usize, timeout: Duration) -> Arc<CpuGroup> {
        Arc::new(CpuGroup {
            state: Mutex::new(State {
                call: 0,
                arrived: (0..world_size).map(|_| None).collect(),
                done: None,
                left: vec![false; world_size],
                lost: None,
            }),
            changed: Condvar::new(),
            world_size,
            timeout,
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A rank that panicked holding the lock left the state consistent: every update is
        // made before anything that could panic.
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Marks `rank` as gone, waking the ranks that wait for it.
    pub(crate) fn leave(&self, rank: usize) {
        let mut state = self.lock();
        if let Some(left) = state.left.get_mut(rank) {
            *left = true;
        }
        drop(state);
        self.changed.notify_all();
    }

    /// Runs collective `call` for `rank` with its `data`; returns the whole result, computed
    /// by `combine` from every rank's data in rank order.
    pub(crate) fn meet<T: CommElement>(
        &self,
        rank: usize,
        call: Collective,
        data: Vec<T>,
        combine: fn(&Collective, Vec<Vec<T>>) -> Vec<T>,
    ) -> Result<Arc<Vec<T>>, CommError> {
        let mut state = self.lock();
        let number = state.call;
        state.arrived[rank] = Some(Contribution {
            call,
            elem: T::TYPE,
            data: Box::new(data),
        });
        if state.arrived.iter().all(Option::is_some) {
            let contributions: Vec<Contribution> =
                state.arrived.iter_mut().filter_map(Option::take).collect();
            let outcome = finish(contributions, combine);
            state.done = Some((number, outcome));
            state.call += 1;
            self.changed.notify_all();
        }
        let deadline = Instant::now() + self.timeout;
        loop {
            if let Some((finished, outcome)) = &state.done {
                if *finished == number {
                    return match outcome {
                        Ok(result) => Ok(downcast(result.clone())),
                        Err(disagreement) => Err(CommError::Mismatch {
                            call: number,
                            rank: disagreement.rank,
                            expected: disagreement.expected.clone(),
                            found: disagreement.found.clone(),
                        }),
                    };
                }
            }
            let missing: Vec<usize> = (0..self.world_size)
                .filter(|&r| state.arrived[r].is_none())
                .collect();
            let gone = state
                .lost
                .or_else(|| missing.iter().copied().find(|&r| state.left[r]));
            if let Some(gone) = gone {
                state.lost = Some(gone);
                // This call can never finish: withdraw, so the state stays consistent for a
                // rank that inspects it later.
                state.arrived[rank] = None;
                return Err(CommError::RankLeft {
                    rank: gone,
                    call: number,
                    what: call.to_string(),
                });
            }
            let now = Instant::now();
            if now >= deadline {
                state.arrived[rank] = None;
                return Err(CommError::Timeout {
                    what: format!("collective call {number} ({call})"),
                    seconds: self.timeout.as_secs(),
                    missing: format!("{missing:?}"),
                });
            }
            state = self
                .changed
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .0;
        }
    }
}

/// Checks that every rank made the same call, then combines their data.
fn finish<T: CommElement>(
    contributions: Vec<Contribution>,
    combine: fn(&Collective, Vec<Vec<T>>) -> Vec<T>,
) -> Outcome {
    let (first_call, first_elem) = (contributions[0].call, contributions[0].elem);
    let describe = |call: &Collective, elem: ScalarType| format!("{call} of {elem}");
    let disagreement = |rank: usize, contribution: &Contribution| Disagreement {
        rank,
        expected: describe(&first_call, first_elem),
        found: describe(&contribution.call, contribution.elem),
    };
    // Calls first: the data of a rank that disagrees may be of another type than this one's.
    for (rank, contribution) in contributions.iter().enumerate() {
        if contribution.call != first_call || contribution.elem != first_elem {
            return Err(disagreement(rank, contribution));
        }
    }
    let mut inputs = Vec::with_capacity(contributions.len());
    for (rank, contribution) in contributions.into_iter().enumerate() {
        // Every rank named T's element type, so every copy is a Vec<T>.
        match contribution.data.downcast::<Vec<T>>() {
            Ok(data) => inputs.push(*data),
            Err(data) => {
                let contribution = Contribution {
                    data,
                    ..contribution
                };
                return Err(disagreement(rank, &contribution));
            }
        }
    }
    let result: Arc<dyn Any + Send + Sync> = Arc::new(combine(&first_call, inputs));
    Ok(result)
}

/// The result as the caller's type; `finish` made it of that type.
fn downcast<T: CommElement>(result: Arc<dyn Any + Send + Sync>) -> Arc<Vec<T>> {
    result
        .downcast::<Vec<T>>()
        .unwrap_or_else(|_| Arc::new(Vec::new()))
}

/// Element-wise reduction of the ranks' equally long vectors, in rank order.
pub(crate) fn reduce<T: CommElement>(op: ReduceOp, inputs: Vec<Vec<T>>) -> Vec<T> {
    let ranks = inputs.len();
    let mut inputs = inputs.into_iter();
    let mut total = inputs.next().unwrap_or_default();
    for input in inputs {
        for (sum, value) in total.iter_mut().zip(input) {
            *sum = sum.__add(value);
        }
    }
    if op == ReduceOp::Mean {
        for value in &mut total {
            *value = value.__div_count(ranks);
        }
    }
    total
}

/// Combines the ranks' data for `call`: the reduction for an all-reduce or reduce-scatter,
/// the root's data for a broadcast, the ranks' data end to end for an all-gather.
pub(crate) fn combine<T: CommElement>(call: &Collective, inputs: Vec<Vec<T>>) -> Vec<T> {
    match *call {
        Collective::AllReduce { op, .. } | Collective::ReduceScatter { op, .. } => {
            reduce(op, inputs)
        }
        Collective::Broadcast { root, .. } => inputs.into_iter().nth(root).unwrap_or_default(),
        Collective::AllGather { .. } => inputs.concat(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reduction_is_in_rank_order() {
        // (1e8 + 1) - 1e8 rounds the 1 away in f32; a different order would keep it.
        let inputs = vec![vec![1e8f32], vec![1.0], vec![-1e8]];
        assert_eq!(reduce(ReduceOp::Sum, inputs), vec![0.0]);
        let inputs = vec![vec![2.0f64, 4.0], vec![4.0, 8.0]];
        assert_eq!(reduce(ReduceOp::Mean, inputs), vec![3.0, 6.0]);
    }

    #[test]
    fn a_lone_rank_meets_itself() {
        let group = CpuGroup::new(1, Duration::from_secs(5));
        let call = Collective::AllGather { len: 2 };
        let out = group.meet(0, call, vec![1i32, 2], combine).unwrap();
        assert_eq!(*out, vec![1, 2]);
    }
}
