//! The communicator on the CPU backend: every collective for several world sizes and element
//! types, bit-identical reductions, and the failures that must be errors rather than hangs.

use std::time::Duration;

use half::{bf16, f16};

use super::*;
use crate::random::philox4x32_10;

/// Runs `body` on every rank of a fresh CPU group of `world_size`, a thread each; the
/// results in rank order.
fn on_ranks<R: Send>(world_size: usize, body: impl Fn(Communicator, Stream) -> R + Sync) -> Vec<R> {
    let comms = cpu_group(world_size, Duration::from_secs(20));
    assert_eq!(comms.len(), world_size);
    on_group(comms, body)
}

/// Runs `body` on every rank of `comms`, a thread each, with its device's default stream;
/// the results in rank order.
pub(super) fn on_group<R: Send>(
    comms: Vec<Communicator>,
    body: impl Fn(Communicator, Stream) -> R + Sync,
) -> Vec<R> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = comms
            .into_iter()
            .map(|comm| {
                let body = &body;
                scope.spawn(move || {
                    let stream = comm.gpu().default_stream();
                    body(comm, stream)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().expect("a rank panicked"))
            .collect()
    })
}

/// Element `i` of rank `rank`'s data: small whole numbers, exact in every type.
fn value(rank: usize, i: usize) -> f64 {
    ((rank * 7 + i * 3) % 11) as f64
}

/// Converts test values into each element type.
pub(super) trait FromF64: CommElement {
    fn of(value: f64) -> Self;
}

macro_rules! from_f64 {
    ($($ty:ty => $conv:expr),*) => {$(impl FromF64 for $ty { fn of(value: f64) -> Self { $conv(value) } })*};
}

from_f64!(
    f32 => |v: f64| v as f32,
    f64 => |v: f64| v,
    f16 => f16::from_f64,
    bf16 => bf16::from_f64,
    i32 => |v: f64| v as i32,
    u8 => |v: f64| v as u8,
    i64 => |v: f64| v as i64
);

fn data<T: FromF64>(rank: usize, len: usize) -> Vec<T> {
    (0..len).map(|i| T::of(value(rank, i))).collect()
}

/// All-reduce (sum and mean), broadcast from every root, all-gather and reduce-scatter of
/// `T` on `world_size` CPU ranks, against sums taken on the host.
fn every_collective<T: FromF64 + PartialEq + std::fmt::Debug>(world_size: usize) {
    every_collective_on::<T>(cpu_group(world_size, Duration::from_secs(20)));
}

/// [`every_collective`] on the group `comms`, whose world size must divide the sums below
/// exactly where `T` is a float (NCCL's mean multiplies by the reciprocal).
pub(super) fn every_collective_on<T: FromF64 + PartialEq + std::fmt::Debug>(
    comms: Vec<Communicator>,
) {
    let (world_size, len) = (comms.len(), 1000);
    let sum = |i: usize| (0..world_size).map(|r| value(r, i)).sum::<f64>();
    let results = on_group(comms, |comm, stream| {
        let rank = comm.rank();
        let mut x = DeviceBuffer::from_host(&stream, &data::<T>(rank, len)).unwrap();
        comm.all_reduce(&stream, &mut x, ReduceOp::Sum).unwrap();
        let summed = x.to_host(&stream).unwrap();

        let mut x = DeviceBuffer::from_host(&stream, &data::<T>(rank, len)).unwrap();
        comm.all_reduce(&stream, &mut x, ReduceOp::Mean).unwrap();
        let mean = x.to_host(&stream).unwrap();

        let mut broadcasts = Vec::new();
        for root in 0..comm.world_size() {
            let mut x = DeviceBuffer::from_host(&stream, &data::<T>(rank, len)).unwrap();
            comm.broadcast(&stream, &mut x, root).unwrap();
            broadcasts.push(x.to_host(&stream).unwrap());
        }

        let send = DeviceBuffer::from_host(&stream, &data::<T>(rank, len)).unwrap();
        let mut gathered = DeviceBuffer::zeroed(&stream, len * world_size).unwrap();
        comm.all_gather(&stream, &send, &mut gathered).unwrap();

        let send = DeviceBuffer::from_host(&stream, &data::<T>(rank, len * world_size)).unwrap();
        let mut block = DeviceBuffer::zeroed(&stream, len).unwrap();
        comm.reduce_scatter(&stream, &send, &mut block, ReduceOp::Sum)
            .unwrap();
        (
            summed,
            mean,
            broadcasts,
            gathered.to_host(&stream).unwrap(),
            block.to_host(&stream).unwrap(),
        )
    });
    for (rank, (summed, mean, broadcasts, gathered, block)) in results.into_iter().enumerate() {
        let expected: Vec<T> = (0..len).map(|i| T::of(sum(i))).collect();
        assert_eq!(summed, expected, "sum on rank {rank} of {world_size}");
        let expected_mean: Vec<T> = (0..len)
            .map(|i| T::of(sum(i)).__div_count(world_size))
            .collect();
        assert_eq!(mean, expected_mean, "mean on rank {rank} of {world_size}");
        for (root, got) in broadcasts.into_iter().enumerate() {
            assert_eq!(got, data::<T>(root, len), "broadcast from {root} to {rank}");
        }
        let all: Vec<T> = (0..world_size).flat_map(|r| data::<T>(r, len)).collect();
        assert_eq!(gathered, all, "all_gather on rank {rank}");
        let mine: Vec<T> = (rank * len..(rank + 1) * len)
            .map(|i| T::of(sum(i)))
            .collect();
        assert_eq!(block, mine, "reduce_scatter block of rank {rank}");
    }
}

#[test]
fn every_collective_for_several_world_sizes() {
    for world_size in [1, 2, 3, 4] {
        every_collective::<f32>(world_size);
    }
}

#[test]
fn every_collective_for_every_element_kind() {
    every_collective::<f64>(3);
    every_collective::<f16>(2);
    every_collective::<bf16>(3);
    every_collective::<i32>(4);
    every_collective::<u8>(2);
    every_collective::<i64>(3);
}

/// Uniform f32 in (-1, 1) scaled by powers of ten, so that sums round differently in
/// different orders.
pub(super) fn rough_data(rank: usize, len: usize) -> Vec<f32> {
    (0..len)
        .map(|i| {
            let words = philox4x32_10([i as u32, rank as u32, 0, 0], [7, 11]);
            let unit = (words[0] >> 8) as f32 / (1u32 << 23) as f32 - 1.0;
            unit * 10f32.powi((words[1] % 7) as i32 - 3)
        })
        .collect()
}

#[test]
fn all_reduce_is_bit_identical_on_every_rank_and_sums_in_rank_order() {
    let (world_size, len) = (5, 1000);
    let results = on_ranks(world_size, |comm, stream| {
        let mut x = DeviceBuffer::from_host(&stream, &rough_data(comm.rank(), len)).unwrap();
        comm.all_reduce(&stream, &mut x, ReduceOp::Mean).unwrap();
        x.to_host(&stream).unwrap()
    });
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    for (rank, result) in results.iter().enumerate() {
        assert_eq!(bits(result), bits(&results[0]), "rank {rank} differs");
    }
    let inputs: Vec<Vec<f32>> = (0..world_size).map(|r| rough_data(r, len)).collect();
    let expected: Vec<f32> = (0..len)
        .map(|i| inputs.iter().fold(0.0f32, |sum, input| sum + input[i]) / world_size as f32)
        .collect();
    // Starting from rank 0's value rather than 0.0 gives the same bits (0.0 + x == x).
    assert_eq!(bits(&results[0]), bits(&expected));
}

#[test]
fn a_bucket_reduces_several_buffers_as_one_call() {
    let results = on_ranks(3, |comm, stream| {
        let rank = comm.rank();
        let mut a = DeviceBuffer::from_host(&stream, &data::<f32>(rank, 3)).unwrap();
        let mut b = DeviceBuffer::from_host(&stream, &data::<f32>(rank + 5, 7)).unwrap();
        let mut empty = DeviceBuffer::<f32>::zeroed(&stream, 0).unwrap();
        comm.all_reduce_bucket(&stream, &mut [&mut a, &mut empty, &mut b], ReduceOp::Sum)
            .unwrap();
        (a.to_host(&stream).unwrap(), b.to_host(&stream).unwrap())
    });
    for (a, b) in results {
        let expected_a: Vec<f32> = (0..3)
            .map(|i| (0..3).map(|r| value(r, i)).sum::<f64>() as f32)
            .collect();
        let expected_b: Vec<f32> = (0..7)
            .map(|i| (0..3).map(|r| value(r + 5, i)).sum::<f64>() as f32)
            .collect();
        assert_eq!((a, b), (expected_a, expected_b));
    }
}

#[test]
fn disagreeing_ranks_all_get_a_mismatch() {
    // Different lengths.
    let results = on_ranks(3, |comm, stream| {
        let len = if comm.rank() == 2 { 4 } else { 3 };
        let mut x = DeviceBuffer::<f32>::zeroed(&stream, len).unwrap();
        comm.all_reduce(&stream, &mut x, ReduceOp::Sum)
    });
    for result in results {
        match result {
            Err(Error::Comm(CommError::Mismatch {
                call: 0,
                rank: 2,
                expected,
                found,
            })) => {
                assert!(expected.contains("3 elements"), "{expected}");
                assert!(found.contains("4 elements"), "{found}");
            }
            other => panic!("expected a mismatch, got {other:?}"),
        }
    }
    // Different collectives, then different element types; the group goes on after each.
    let results = on_ranks(2, |comm, stream| {
        let mut x = DeviceBuffer::<f32>::zeroed(&stream, 2).unwrap();
        let first = match comm.rank() {
            0 => comm.all_reduce(&stream, &mut x, ReduceOp::Sum),
            _ => comm.broadcast(&stream, &mut x, 0),
        };
        let second = match comm.rank() {
            0 => comm.all_reduce(&stream, &mut x, ReduceOp::Sum),
            _ => {
                let mut y = DeviceBuffer::<f64>::zeroed(&stream, 2).unwrap();
                comm.all_reduce(&stream, &mut y, ReduceOp::Sum)
            }
        };
        let third = comm.all_reduce(&stream, &mut x, ReduceOp::Sum);
        (first, second, third)
    });
    for (first, second, third) in results {
        let first = first.unwrap_err().to_string();
        assert!(first.contains("rank 1 called broadcast"), "{first}");
        let second = second.unwrap_err().to_string();
        assert!(second.contains("of f64"), "{second}");
        third.unwrap();
    }
}

#[test]
fn bad_ranks_and_lengths_are_errors_before_any_exchange() {
    let results = on_ranks(2, |comm, stream| {
        let mut x = DeviceBuffer::<f32>::zeroed(&stream, 4).unwrap();
        let root = comm.broadcast(&stream, &mut x, 2);
        let mut short = DeviceBuffer::<f32>::zeroed(&stream, 7).unwrap();
        let gather = comm.all_gather(&stream, &x, &mut short);
        let scatter = comm.reduce_scatter(&stream, &short, &mut x, ReduceOp::Sum);
        // The group is still in step: nothing above reached it.
        comm.all_reduce(&stream, &mut x, ReduceOp::Sum).unwrap();
        (root, gather, scatter)
    });
    for (root, gather, scatter) in results {
        assert!(matches!(
            root,
            Err(Error::Comm(CommError::InvalidRank {
                rank: 2,
                world_size: 2
            }))
        ));
        assert!(matches!(
            gather,
            Err(Error::LengthMismatch {
                expected: 8,
                found: 7,
                ..
            })
        ));
        assert!(matches!(
            scatter,
            Err(Error::LengthMismatch {
                expected: 8,
                found: 7,
                ..
            })
        ));
    }
    assert!(matches!(
        Communicator::for_devices(&[]),
        Err(Error::Comm(CommError::Empty))
    ));
    let cpu = Gpu::cpu();
    assert!(matches!(
        Communicator::from_env(
            &cpu,
            &RankEnv {
                rank: 0,
                world_size: 1,
                local_rank: 0,
                rendezvous: None
            }
        ),
        Err(Error::Comm(CommError::Unsupported { .. }))
    ));
}

#[test]
fn a_rank_that_leaves_or_panics_does_not_hang_the_others() {
    for panics in [false, true] {
        let results = on_ranks(3, |comm, stream| {
            let mut x = DeviceBuffer::<f32>::zeroed(&stream, 2).unwrap();
            comm.all_reduce(&stream, &mut x, ReduceOp::Sum).unwrap();
            if comm.rank() == 1 {
                // Dropping the communicator (here, or by unwinding) leaves the group.
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
                    let _comm = comm;
                    if panics {
                        panic!("rank 1 fails");
                    }
                }));
                return Ok(outcome.is_err());
            }
            comm.all_reduce(&stream, &mut x, ReduceOp::Sum)
                .map(|()| false)
        });
        assert_eq!(results[1].as_ref().ok(), Some(&panics));
        for rank in [0, 2] {
            match &results[rank] {
                Err(Error::Comm(CommError::RankLeft {
                    rank: 1, call: 1, ..
                })) => {}
                other => panic!("rank {rank}: expected RankLeft, got {other:?}"),
            }
        }
    }
}

#[test]
fn a_rank_that_never_comes_times_out() {
    let mut comms = cpu_group(2, Duration::from_millis(200));
    let absent = comms.pop();
    let comm = comms.pop().unwrap();
    let stream = comm.gpu().default_stream();
    let mut x = DeviceBuffer::<f32>::zeroed(&stream, 1).unwrap();
    let err = comm.all_reduce(&stream, &mut x, ReduceOp::Sum).unwrap_err();
    assert!(
        matches!(&err, Error::Comm(CommError::Timeout { missing, .. }) if missing == "[1]"),
        "{err}"
    );
    drop(absent);
}
