//! The profiler: exactly the launches and copies of a profiled block, its table and its Chrome
//! trace, on the CPU backend; event times on a GPU (skipped without one).

use std::sync::{Mutex, MutexGuard};
use std::time::Instant;

use gpu_dsl::prelude::*;
use gpu_dsl::runtime::{Activity, CopyDirection, ProfileReport, Profiler};

#[kernel]
fn add_one(x: &mut [f32]) {
    let i = global_idx().x;
    if i < x.len() {
        x[i] += 1.0;
    }
}

#[kernel]
fn scale<T: Float>(a: T, x: &mut [T]) {
    let i = global_idx().x;
    if i < x.len() {
        x[i] *= a;
    }
}

/// The profiler is process-wide, so the tests of this binary take turns.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

const N: usize = 1000;

fn names(report: &ProfileReport) -> Vec<String> {
    report.records().iter().map(|r| r.activity.name()).collect()
}

#[test]
fn cpu_profile_records_exactly_the_launches_and_copies() {
    let _turn = serial();
    let gpu = Gpu::cpu();
    let stream = gpu.default_stream();
    let side = gpu.new_stream().unwrap();
    let host = vec![1.0f32; N];
    let mut pinned = PinnedBuffer::from_slice(&gpu, &host).unwrap();
    let mut y = DeviceBuffer::<f32>::zeroed(&stream, N).unwrap();
    let config = LaunchConfig::for_len(N, 128);

    let (x, report) = gpu_dsl::profile(|| -> gpu_dsl::Result<DeviceBuffer<f32>> {
        let mut x = DeviceBuffer::from_host(&stream, &host)?;
        for _ in 0..3 {
            add_one::launch(&stream, config, &mut x)?;
        }
        scale::launch::<f32>(&side, config, 2.0, &mut x)?;
        y.copy_from_pinned(&stream, &pinned)?;
        y.copy_from(&stream, &x)?;
        y.copy_to_pinned(&stream, &mut pinned)?;
        x.to_host(&stream)?;
        Ok(x)
    })
    .unwrap();
    assert_eq!(x.unwrap().to_host(&stream).unwrap(), vec![8.0f32; N]);

    assert_eq!(
        names(&report),
        [
            "Memcpy HtoD (pageable)",
            "add_one",
            "add_one",
            "add_one",
            "scale::<f32>",
            "Memcpy HtoD (pinned)",
            "Memcpy DtoD",
            "Memcpy DtoH (pinned)",
            "Memcpy DtoH (pageable)",
        ]
    );
    let records = report.records();
    match &records[4].activity {
        Activity::Launch {
            kernel,
            template_args,
            grid,
            block,
            shared_mem_bytes,
        } => {
            assert_eq!(kernel, "scale");
            assert_eq!(template_args, &["f32".to_string()]);
            assert_eq!((grid.x, block.x, *shared_mem_bytes), (8, 128, 0));
        }
        other => panic!("expected a launch, found {other:?}"),
    }
    let copies: Vec<(usize, CopyDirection, bool)> = records
        .iter()
        .filter_map(|r| match r.activity {
            Activity::Copy {
                bytes,
                direction,
                pinned,
            } => Some((bytes, direction, pinned)),
            Activity::Launch { .. } => None,
        })
        .collect();
    let bytes = N * 4;
    assert_eq!(
        copies,
        [
            (bytes, CopyDirection::HostToDevice, false),
            (bytes, CopyDirection::HostToDevice, true),
            (bytes, CopyDirection::DeviceToDevice, false),
            (bytes, CopyDirection::DeviceToHost, true),
            (bytes, CopyDirection::DeviceToHost, false),
        ]
    );
    // Two streams, numbered in the order they appeared.
    assert_eq!(records[0].stream, 0);
    assert_eq!(records[4].stream, 1);
    assert!(records.iter().all(|r| r.duration_us.is_some()));
    assert!(report.device_us() <= report.wall_us());

    check_table(&report);
    check_trace(&report, records.len());
}

/// Every name appears once with its call count, in the order of total time, longest first.
fn check_table(report: &ProfileReport) {
    let table = report.table();
    let mut totals: Vec<(String, usize, f64)> = Vec::new();
    for record in report.records() {
        let name = record.activity.name();
        match totals.iter_mut().find(|(n, _, _)| *n == name) {
            Some(row) => {
                row.1 += 1;
                row.2 += record.duration_us.unwrap();
            }
            None => totals.push((name, 1, record.duration_us.unwrap())),
        }
    }
    totals.sort_by(|a, b| b.2.total_cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
    let rows: Vec<&str> = table
        .lines()
        .filter(|line| totals.iter().any(|(n, _, _)| line.starts_with(n.as_str())))
        .collect();
    assert_eq!(rows.len(), totals.len(), "{table}");
    for (row, (name, calls, _)) in rows.iter().zip(&totals) {
        let rest = row[name.len()..].split_whitespace().next().unwrap();
        assert!(
            row.starts_with(&format!("{name} ")),
            "expected {name} here:\n{table}"
        );
        assert_eq!(rest.parse::<usize>().unwrap(), *calls, "{table}");
    }
    assert!(table.contains("GB/s"));
}

fn check_trace(report: &ProfileReport, timed: usize) {
    let path = std::env::temp_dir().join(format!("gpu-profile-{}.json", std::process::id()));
    report.chrome_trace(&path).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    let trace: serde_json::Value = serde_json::from_str(&text).unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    let complete: Vec<&serde_json::Value> = events.iter().filter(|e| e["ph"] == "X").collect();
    assert_eq!(complete.len(), timed);
    for event in &complete {
        assert!(event["ts"].as_f64().unwrap() >= 0.0);
        assert!(event["dur"].as_f64().unwrap() >= 0.0);
        assert!(event["pid"].is_u64() && event["tid"].is_u64());
    }
    let tids: std::collections::BTreeSet<u64> = complete
        .iter()
        .map(|e| e["tid"].as_u64().unwrap())
        .collect();
    assert_eq!(tids.len(), 2, "one track per stream");
    assert_eq!(complete[4]["name"], "scale::<f32>");
    assert_eq!(complete[4]["args"]["grid"][0], 8);
    assert_eq!(complete[0]["args"]["bytes"], N * 4);
    assert_eq!(complete[0]["args"]["direction"], "HtoD");
}

#[test]
fn nothing_is_recorded_outside_a_profile() {
    let _turn = serial();
    let gpu = Gpu::cpu();
    let stream = gpu.default_stream();
    let config = LaunchConfig::for_len(N, 128);
    let mut x = DeviceBuffer::from_host(&stream, &[0.0f32; N]).unwrap();

    let profiler = Profiler::start().unwrap();
    add_one::launch(&stream, config, &mut x).unwrap();
    let report = profiler.finish().unwrap();
    assert_eq!(names(&report), ["add_one"]);

    // Work after the finish belongs to no profile, and the next starts empty.
    add_one::launch(&stream, config, &mut x).unwrap();
    x.to_host(&stream).unwrap();
    let report = Profiler::start().unwrap().finish().unwrap();
    assert!(report.records().is_empty(), "{:?}", report.records());
    assert_eq!(x.to_host(&stream).unwrap(), vec![2.0f32; N]);
}

#[test]
fn a_second_profiler_is_refused_while_one_records() {
    let _turn = serial();
    let gpu = Gpu::cpu();
    let stream = gpu.default_stream();
    let mut x = DeviceBuffer::from_host(&stream, &[0.0f32; N]).unwrap();
    let config = LaunchConfig::for_len(N, 128);

    let outer = Profiler::start().unwrap();
    assert!(matches!(
        Profiler::start(),
        Err(gpu_dsl::Error::ProfilerActive)
    ));
    assert!(matches!(
        gpu_dsl::profile(|| ()),
        Err(gpu_dsl::Error::ProfilerActive)
    ));
    add_one::launch(&stream, config, &mut x).unwrap();
    // Dropped unfinished: recording stops and what it saw is discarded.
    drop(outer);
    add_one::launch(&stream, config, &mut x).unwrap();
    let ((), report) = gpu_dsl::profile(|| ()).unwrap();
    assert!(report.records().is_empty());
}

#[test]
fn gpu_event_times_are_positive_and_within_the_wall_time() {
    let _turn = serial();
    let Some(gpu) = gpu_dsl::runtime::test_gpu() else {
        return;
    };
    let stream = gpu.default_stream();
    let side = gpu.new_stream().unwrap();
    let n = 1 << 22;
    let config = LaunchConfig::for_len(n, 256);
    let mut x = DeviceBuffer::from_host(&stream, &vec![1.0f32; n]).unwrap();
    let mut z = DeviceBuffer::from_host(&side, &vec![1.0f32; n]).unwrap();
    // Compiled before the profile, so compilation is not in its wall time either way.
    add_one::launch(&stream, config, &mut x).unwrap();
    scale::launch::<f32>(&side, config, 1.0, &mut z).unwrap();
    gpu.synchronize().unwrap();

    let started = Instant::now();
    let profiler = Profiler::start().unwrap();
    for _ in 0..50 {
        add_one::launch(&stream, config, &mut x).unwrap();
        scale::launch::<f32>(&side, config, 1.0, &mut z).unwrap();
    }
    let host = x.to_host(&stream).unwrap();
    gpu.synchronize().unwrap();
    let report = profiler.finish().unwrap();
    let wall_us = started.elapsed().as_secs_f64() * 1e6;
    assert_eq!(host[0], 52.0);

    let records = report.records();
    assert_eq!(records.len(), 101);
    // The two streams may overlap, but each one's kernels run one after another.
    let mut kernel_us = [0.0f64; 2];
    let mut last_start = [f64::MIN; 2];
    for record in records {
        let duration = record.duration_us.expect("every record is timed");
        assert!(duration > 0.0, "{record:?}");
        let stream = record.stream as usize;
        assert!(stream < 2, "{record:?}");
        if matches!(record.activity, Activity::Launch { .. }) {
            kernel_us[stream] += duration;
            assert!(record.start_us >= last_start[stream], "{record:?}");
            last_start[stream] = record.start_us;
        }
    }
    for (stream, total) in kernel_us.iter().enumerate() {
        assert!(*total > 0.0, "stream {stream} has no kernel time");
        assert!(
            *total < wall_us,
            "stream {stream}: kernels {total} us, wall {wall_us} us"
        );
    }
    assert!(report.wall_us() <= wall_us);
    println!("{}", report.table());
}
