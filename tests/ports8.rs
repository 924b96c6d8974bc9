//! The classic CUDA programs of `examples/bench/port_kernels8.rs` (timed in `ports8.rs` against
//! their CUDA C twins) against plain Rust, on the CPU backend and, where there is one, the GPU.

mod common;

#[path = "../examples/bench/port_kernels8.rs"]
mod ports8;

use common::{assert_compiles_with_nvrtc, backends, close, random_f32};
use gpu_dsl::prelude::*;
use ports8::{Node, FENCE_THREADS};

#[test]
fn every_port_compiles_with_nvrtc() {
    assert_compiles_with_nvrtc(&[
        (&ports8::bfs_expand::KERNEL, &[]),
        (&ports8::spmv_ell::KERNEL, &[]),
        (&ports8::fence_sum::KERNEL, &[]),
    ]);
}

#[test]
fn bfs_level_visits_the_frontiers_unvisited_neighbours() {
    let n = 300usize;
    let mut nodes = Vec::new();
    let mut edges = Vec::new();
    for v in 0..n {
        let degree = v % 5;
        nodes.push(Node {
            start: edges.len() as u32,
            edges: degree as u32,
        });
        edges.extend((0..degree).map(|e| ((v * 7 + e * 13 + 1) % n) as u32));
    }
    let mask: Vec<bool> = (0..n).map(|v| v.is_multiple_of(3)).collect();
    let visited: Vec<bool> = (0..n).map(|v| v.is_multiple_of(3) || v % 4 == 1).collect();
    // The frontier is one level (cost 2): neighbours shared by two of its nodes get 3 from
    // either, whichever thread writes last.
    let cost: Vec<i32> = (0..n).map(|v| if mask[v] { 2 } else { -1 }).collect();
    let (mut expected_cost, mut expected_next) = (cost.clone(), vec![false; n]);
    for v in (0..n).filter(|&v| mask[v]) {
        let node = nodes[v];
        for &id in &edges[node.start as usize..(node.start + node.edges) as usize] {
            if !visited[id as usize] {
                expected_cost[id as usize] = cost[v] + 1;
                expected_next[id as usize] = true;
            }
        }
    }
    assert!(
        expected_next.iter().any(|&b| b),
        "the level reaches someone"
    );
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dnodes = DeviceBuffer::from_host(&stream, &nodes).unwrap();
        let dedges = DeviceBuffer::from_host(&stream, &edges).unwrap();
        let mut dmask = DeviceBuffer::from_host(&stream, &mask).unwrap();
        let mut next = DeviceBuffer::<bool>::zeroed(&stream, n).unwrap();
        let dvisited = DeviceBuffer::from_host(&stream, &visited).unwrap();
        let mut dcost = DeviceBuffer::from_host(&stream, &cost).unwrap();
        let config = LaunchConfig::for_len(n, 64);
        ports8::bfs_expand::launch(
            &stream, config, &dnodes, &dedges, &mut dmask, &mut next, &dvisited, &mut dcost,
        )
        .unwrap();
        assert_eq!(
            dcost.to_host(&stream).unwrap(),
            expected_cost,
            "{}",
            gpu.name()
        );
        assert_eq!(
            next.to_host(&stream).unwrap(),
            expected_next,
            "{}",
            gpu.name()
        );
        assert!(dmask.to_host(&stream).unwrap().iter().all(|&b| !b));
    }
}

#[test]
fn ell_product_matches_the_dense_sum() {
    let (rows, width) = (203usize, 5usize);
    let cols: Vec<u32> = (0..rows * width)
        .map(|i| ((i * 31 + 7) % rows) as u32)
        .collect();
    let vals = random_f32(rows * width, 3);
    let x = random_f32(rows, 4);
    let expected: Vec<f32> = (0..rows)
        .map(|r| {
            (0..width)
                .map(|k| vals[k * rows + r] * x[cols[k * rows + r] as usize])
                .sum()
        })
        .collect();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dcols = DeviceBuffer::from_host(&stream, &cols).unwrap();
        let dvals = DeviceBuffer::from_host(&stream, &vals).unwrap();
        let dx = DeviceBuffer::from_host(&stream, &x).unwrap();
        let mut y = DeviceBuffer::<f32>::zeroed(&stream, rows).unwrap();
        let config = LaunchConfig::for_len(rows, 64);
        ports8::spmv_ell::launch(&stream, config, rows, width, &dcols, &dvals, &dx, &mut y)
            .unwrap();
        close(&y.to_host(&stream).unwrap(), &expected, 1e-5);
    }
}

#[test]
fn fence_sum_adds_every_block_and_rearms_itself() {
    let n = 100_003usize;
    let input = random_f32(n, 5);
    let expected: f64 = input.iter().map(|&v| v as f64).sum();
    for gpu in backends() {
        let stream = gpu.default_stream();
        let dinput = DeviceBuffer::from_host(&stream, &input).unwrap();
        let blocks = 37;
        let mut partial = DeviceBuffer::<f32>::zeroed(&stream, blocks).unwrap();
        let mut done = DeviceBuffer::<u32>::zeroed(&stream, 1).unwrap();
        let config = LaunchConfig::new(Grid::x(blocks as u32), Block::x(FENCE_THREADS as u32));
        // Twice: the last block resets the count, so the second launch sums again.
        for _ in 0..2 {
            let mut total = DeviceBuffer::<f32>::zeroed(&stream, 1).unwrap();
            ports8::fence_sum::launch(
                &stream,
                config,
                &dinput,
                &mut partial,
                &mut done,
                &mut total,
            )
            .unwrap();
            let got = total.to_host(&stream).unwrap()[0] as f64;
            assert!(
                (got - expected).abs() < 1e-3 * (1.0 + expected.abs()),
                "{got} vs {expected}"
            );
            assert_eq!(done.to_host(&stream).unwrap(), vec![0], "{}", gpu.name());
        }
    }
}
