//! The NCCL communicator with one rank, so the NCCL path runs on a one-GPU machine: every
//! collective, ordering on a second stream, and the per-process start over TCP.
//!
//! Without a GPU these print `skipped: no CUDA device`; without NCCL they print why and pass,
//! unless `GPU_REQUIRE_NCCL` is set (as on a machine where NCCL was installed for them).

use super::*;
use crate::{say_skipped, test_gpu};

/// Whether NCCL loads; says why not, or fails where `GPU_REQUIRE_NCCL` demands it.
fn nccl_present() -> bool {
    match nccl_version() {
        Ok(_) => true,
        Err(err) => {
            assert!(
                std::env::var_os("GPU_REQUIRE_NCCL").is_none(),
                "GPU_REQUIRE_NCCL is set but NCCL is unusable: {err}"
            );
            say_skipped(&format!("NCCL not available ({err})"));
            false
        }
    }
}

#[test]
fn a_unique_id_needs_nccl_but_no_gpu() {
    match CommId::new() {
        Ok(id) => {
            assert!(nccl_present());
            assert!(id.as_bytes().iter().any(|&b| b != 0), "an all-zero id");
            assert_eq!(CommId::from_bytes(id.as_bytes()), Some(id));
            let (major, minor, _) = nccl_version().unwrap();
            assert!(
                (major, minor) >= (2, 10),
                "NCCL {major}.{minor} lacks ncclAvg"
            );
        }
        Err(err) => {
            assert!(!nccl_present());
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
    if !nccl_present() {
        return;
    }
    let comms = Communicator::for_devices(std::slice::from_ref(&gpu)).unwrap();
    assert_eq!((comms[0].rank(), comms[0].world_size()), (0, 1));
    one_rank_collectives(&comms[0]);
}

#[test]
fn nccl_collectives_are_ordered_on_their_stream() {
    let Some(gpu) = test_gpu() else { return };
    if !nccl_present() {
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
    if !nccl_present() {
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
