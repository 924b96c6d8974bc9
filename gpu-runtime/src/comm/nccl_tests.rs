//! The NCCL communicator with one rank, so the NCCL path runs on a one-GPU machine: every
//! collective, ordering on a second stream, and the per-process start over TCP; and, on a
//! machine with two or more GPUs, with a rank on each: every collective's values, the same
//! bits on every rank, and ranks started one by one.
//!
//! Without a GPU these print `skipped: no CUDA device`; without NCCL they print why and pass,
//! unless `GPU_REQUIRE_NCCL` is set (as on a machine where NCCL was installed for them).

use super::*;
use crate::{say_skipped, test_gpu, test_nccl};

#[test]
fn a_unique_id_needs_nccl_but_no_gpu() {
    match CommId::new() {
        Ok(id) => {
            assert!(test_nccl());
            assert!(id.as_bytes().iter().any(|&b| b != 0), "an all-zero id");
            assert_eq!(CommId::from_bytes(id.as_bytes()), Some(id));
            let (major, minor, _) = nccl_version().unwrap();
            assert!(
                (major, minor) >= (2, 10),
                "NCCL {major}.{minor} lacks ncclAvg"
            );
        }
        Err(err) => {
            assert!(!test_nccl());
            let text = err.to_string();
            assert!(
                matches!(err, Error::Comm(CommError::NoNccl { .. })),
                "{text}"
            );
            assert!(text.contains("LD_LIBRARY_PATH"), "{text}");
        }
    }
}

/// Every collective on a group of one: each leaves the data as it was (a mean over one rank
/// is the value), through NCCL's kernels on the stream given.
fn one_rank_collectives(comm: &Communicator) {
    let gpu = comm.gpu();
    let stream = gpu.new_stream().unwrap();
    let data: Vec<f32> = (0..1000).map(|i| i as f32 * 0.5 - 7.0).collect();
    let mut x = DeviceBuffer::from_host(&stream, &data).unwrap();
    comm.all_reduce(&stream, &mut x, ReduceOp::Sum).unwrap();
    assert_eq!(x.to_host(&stream).unwrap(), data);
    comm.all_reduce(&stream, &mut x, ReduceOp::Mean).unwrap();
    assert_eq!(x.to_host(&stream).unwrap(), data);
    comm.broadcast(&stream, &mut x, 0).unwrap();
    assert_eq!(x.to_host(&stream).unwrap(), data);
    assert!(comm.broadcast(&stream, &mut x, 1).is_err());

    let mut gathered = DeviceBuffer::<f32>::zeroed(&stream, data.len()).unwrap();
    comm.all_gather(&stream, &x, &mut gathered).unwrap();
    assert_eq!(gathered.to_host(&stream).unwrap(), data);
    let mut block = DeviceBuffer::<f32>::zeroed(&stream, data.len()).unwrap();
    comm.reduce_scatter(&stream, &gathered, &mut block, ReduceOp::Sum)
        .unwrap();
    assert_eq!(block.to_host(&stream).unwrap(), data);

    let ints: Vec<i32> = (0..300).collect();
    let halves: Vec<half::bf16> = (0..300).map(|i| half::bf16::from_f32(i as f32)).collect();
    let mut a = DeviceBuffer::from_host(&stream, &ints).unwrap();
    let mut b = DeviceBuffer::from_host(&stream, &ints).unwrap();
    comm.all_reduce_bucket(&stream, &mut [&mut a, &mut b], ReduceOp::Sum)
        .unwrap();
    assert_eq!(a.to_host(&stream).unwrap(), ints);
    assert_eq!(b.to_host(&stream).unwrap(), ints);
    let mut h = DeviceBuffer::from_host(&stream, &halves).unwrap();
    comm.all_reduce(&stream, &mut h, ReduceOp::Mean).unwrap();
    assert_eq!(h.to_host(&stream).unwrap(), halves);
}

#[test]
fn nccl_one_rank_runs_every_collective() {
    let Some(gpu) = test_gpu() else { return };
    if !test_nccl() {
        return;
    }
    let comms = Communicator::for_devices(std::slice::from_ref(&gpu)).unwrap();
    assert_eq!((comms[0].rank(), comms[0].world_size()), (0, 1));
    one_rank_collectives(&comms[0]);
}

#[test]
fn nccl_collectives_are_ordered_on_their_stream() {
    let Some(gpu) = test_gpu() else { return };
    if !test_nccl() {
        return;
    }
    let comm = Communicator::for_devices(std::slice::from_ref(&gpu))
        .unwrap()
        .pop()
        .unwrap();
    let (compute, reduce) = (gpu.new_stream().unwrap(), gpu.new_stream().unwrap());
    let len = 1 << 22;
    let mut x = DeviceBuffer::<f32>::zeroed(&compute, len).unwrap();
    for round in 1..=4 {
        // Written on one stream, reduced on another after an event, read back on the first.
        x.fill(&compute, round as f32).unwrap();
        reduce.wait_event(&compute.record_event().unwrap()).unwrap();
        comm.all_reduce(&reduce, &mut x, ReduceOp::Sum).unwrap();
        compute.wait_event(&reduce.record_event().unwrap()).unwrap();
        let host = x.to_host(&compute).unwrap();
        assert!(host.iter().all(|&v| v == round as f32), "round {round}");
    }
}

#[test]
fn nccl_one_rank_starts_from_the_environment_over_tcp() {
    let Some(gpu) = test_gpu() else { return };
    if !test_nccl() {
        return;
    }
    // A port the OS says is free now; a group of one only listens, nobody connects.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .unwrap();
    let env = RankEnv {
        rank: 0,
        world_size: 1,
        local_rank: 0,
        rendezvous: Some(Rendezvous::Tcp(format!("127.0.0.1:{port}"))),
    };
    let comm = Communicator::from_env(&gpu, &env).unwrap();
    one_rank_collectives(&comm);
    drop(comm);
    // And alone, with no rendezvous at all.
    let env = RankEnv {
        rendezvous: None,
        ..env
    };
    let comm = Communicator::from_env(&gpu, &env).unwrap();
    one_rank_collectives(&comm);
}

/// Every CUDA device, in the largest power-of-two count the machine has (the float means
/// below are then exact); `None`, after saying why, on a machine with fewer than two.
fn several_gpus() -> Option<Vec<Gpu>> {
    test_gpu()?;
    if !test_nccl() {
        return None;
    }
    let count = Gpu::count().unwrap_or(0);
    if count < 2 {
        say_skipped("one CUDA device; the multi-rank NCCL tests need two or more");
        return None;
    }
    let ranks = 1 << count.ilog2();
    Some((0..ranks).map(|i| Gpu::new(i).unwrap()).collect())
}

#[test]
fn nccl_ranks_on_several_gpus_run_every_collective() {
    let Some(gpus) = several_gpus() else { return };
    super::tests::every_collective_on::<f32>(Communicator::for_devices(&gpus).unwrap());
    super::tests::every_collective_on::<f64>(Communicator::for_devices(&gpus).unwrap());
    super::tests::every_collective_on::<half::bf16>(Communicator::for_devices(&gpus).unwrap());
}

#[test]
fn nccl_all_reduce_gives_every_rank_the_same_bits() {
    let Some(gpus) = several_gpus() else { return };
    let (world_size, len) = (gpus.len(), 1 << 20);
    let results =
        super::tests::on_group(Communicator::for_devices(&gpus).unwrap(), |comm, stream| {
            let data = super::tests::rough_data(comm.rank(), len);
            let mut x = DeviceBuffer::from_host(&stream, &data).unwrap();
            comm.all_reduce(&stream, &mut x, ReduceOp::Mean).unwrap();
            x.to_host(&stream).unwrap()
        });
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    for (rank, result) in results.iter().enumerate() {
        assert_eq!(
            bits(result),
            bits(&results[0]),
            "rank {rank} differs from rank 0"
        );
    }
    // Whatever NCCL's order of summation, the mean is within rounding of the host's.
    let inputs: Vec<Vec<f32>> = (0..world_size)
        .map(|r| super::tests::rough_data(r, len))
        .collect();
    for (i, &got) in results[0].iter().enumerate() {
        let exact = inputs.iter().map(|input| input[i] as f64).sum::<f64>() / world_size as f64;
        let scale = inputs
            .iter()
            .map(|input| input[i].abs() as f64)
            .sum::<f64>();
        assert!(
            (got as f64 - exact).abs() <= scale * 1e-6,
            "element {i}: {got} against {exact}"
        );
    }
}

#[test]
fn nccl_ranks_started_one_by_one_over_tcp_meet() {
    let Some(gpus) = several_gpus() else { return };
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .unwrap();
    let world_size = gpus.len();
    // As separate processes would: each rank reads its place and meets the others at rank 0.
    let sums = std::thread::scope(|scope| {
        let ranks: Vec<_> = gpus
            .iter()
            .enumerate()
            .map(|(rank, gpu)| {
                scope.spawn(move || {
                    let env = RankEnv {
                        rank,
                        world_size,
                        local_rank: rank,
                        rendezvous: Some(Rendezvous::Tcp(format!("127.0.0.1:{port}"))),
                    };
                    let comm = Communicator::from_env(gpu, &env).unwrap();
                    let stream = gpu.new_stream().unwrap();
                    let mut x = DeviceBuffer::from_host(&stream, &[rank as i64 + 1; 3]).unwrap();
                    comm.all_reduce(&stream, &mut x, ReduceOp::Sum).unwrap();
                    x.to_host(&stream).unwrap()
                })
            })
            .collect();
        ranks
            .into_iter()
            .map(|rank| rank.join().expect("a rank panicked"))
            .collect::<Vec<_>>()
    });
    let expected = (world_size * (world_size + 1) / 2) as i64;
    for sum in sums {
        assert_eq!(sum, [expected; 3]);
    }
}
