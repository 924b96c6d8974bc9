//! Arrays and `#[device]` structs as kernel memory and arguments, through the public API: a
//! hand-written `#[repr(C)]` struct made a `Value` by `__device_struct!`, hand-written CPU twins
//! and CUDA sources (compiled by NVRTC where it is installed, run on the GPU where there is one).

use gpu_dsl_runtime::cpu::{CpuArgs, ThreadCtx};
use gpu_dsl_runtime::{
    check_with_nvrtc, test_device, test_nvrtc, Block, DeviceBuffer, ElemType, Error, Gpu, Grid,
    Kernel, KernelArg, LaunchConfig, ParamKind, PinnedBuffer, ScalarType, Stream, Value, ValueType,
};

#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Body {
    pub pos: [f32; 3],
    pub mass: f32,
}

gpu_dsl_runtime::__device_struct! {
    Body { pos: [f32; 3] => pub __gpu_place_pos, mass: f32 => pub __gpu_place_mass }
    size 16, align 4, offsets [0, 12]
}

/// A struct with padding (after `alive`) and a nested struct, as C lays it out.
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct Particle {
    alive: bool,
    id: u64,
    body: Body,
}

gpu_dsl_runtime::__device_struct! {
    Particle { alive: bool => __gpu_place_alive, id: u64 => __gpu_place_id, body: Body => __gpu_place_body }
    size 32, align 8, offsets [0, 8, 16]
}

const BODY: ValueType = ValueType {
    name: "Body",
    size: 16,
    align: 4,
};

const F3: ValueType = ValueType {
    name: "[f32; 3]",
    size: 12,
    align: 4,
};

fn bodies(n: usize) -> Vec<Body> {
    (0..n)
        .map(|i| {
            let x = i as f32;
            Body {
                pos: [x, -x, 0.5 * x],
                mass: 1.0 + (i % 7) as f32,
            }
        })
        .collect()
}

fn global_x(t: &ThreadCtx) -> usize {
    (t.block_idx().x * t.block_dim().x + t.thread_idx().x) as usize
}

fn cpu() -> (Gpu, Stream) {
    let gpu = Gpu::cpu();
    let stream = gpu.new_stream().expect("the CPU backend makes streams");
    (gpu, stream)
}

/// Every kernel's CUDA compiles (sm_80 and sm_90) where NVRTC is installed.
fn assert_compiles(kernel: &Kernel) {
    if !test_nvrtc() {
        return;
    }
    for arch in [(8, 0), (9, 0)] {
        check_with_nvrtc(kernel, &[], arch, false)
            .unwrap_or_else(|e| panic!("{} (sm_{}{}): {e}", kernel.name(), arch.0, arch.1));
    }
}

// ---------------------------------------------------------------------------------------------
// Buffers

#[test]
fn buffers_of_structs_round_trip_and_start_zeroed() {
    let (gpu, stream) = cpu();
    let host = bodies(1000);
    let mut buf = DeviceBuffer::from_host(&stream, &host).unwrap();
    assert_eq!(buf.to_host(&stream).unwrap(), host);
    assert_eq!(
        format!("{buf:?}"),
        "DeviceBuffer<Body>(len 1000 on the CPU backend)"
    );

    let zeroed = DeviceBuffer::<Particle>::zeroed(&stream, 3).unwrap();
    let zero = Particle {
        alive: false,
        id: 0,
        body: Body {
            pos: [0.0; 3],
            mass: 0.0,
        },
    };
    assert_eq!(zeroed.to_host(&stream).unwrap(), [zero; 3]);

    let other = bodies(1000).into_iter().rev().collect::<Vec<_>>();
    let src = DeviceBuffer::from_host(&stream, &other).unwrap();
    buf.copy_from(&stream, &src).unwrap();
    let mut out = vec![zero.body; 1000];
    buf.copy_to_host(&stream, &mut out).unwrap();
    assert_eq!(out, other);

    let mut pinned = PinnedBuffer::<[f32; 3]>::new(&gpu, 4).unwrap();
    let rows = DeviceBuffer::from_host(&stream, &[[1.0f32, 2.0, 3.0]; 4]).unwrap();
    rows.copy_to_pinned(&stream, &mut pinned).unwrap();
    assert_eq!(pinned.as_slice().unwrap(), [[1.0, 2.0, 3.0]; 4]);
}

#[test]
fn value_types_describe_themselves() {
    assert_eq!(Body::ELEM, ElemType::Value(BODY));
    assert_eq!(Particle::ELEM.name(), "Particle");
    assert_eq!(<[Body; 2]>::ELEM.name(), "[Body; 2]");
    let slice = ParamKind::Slice {
        elem: Body::ELEM,
        mutable: true,
    };
    assert_eq!(slice.to_string(), "&mut [Body]");
    assert_eq!(ParamKind::Value(BODY).to_string(), "Body");
    assert_eq!(KernelArg::value([1.0f32; 3]).kind().to_string(), "[f32; 3]");
    assert_eq!(
        KernelArg::value(2.0f32).kind(),
        ParamKind::Scalar(ScalarType::F32),
        "a scalar by value is a scalar argument"
    );
}

// ---------------------------------------------------------------------------------------------
// Arguments

fn drift_twin(args: &CpuArgs<'_>, t: &ThreadCtx) {
    let shift: Body = args.value(0);
    let src = args.slice::<Body>(1);
    let dst = args.slice::<Body>(2);
    let i = global_x(t);
    if i < src.len() && i < dst.len() {
        let mut b = src.get(i, t, line!());
        for k in 0..3 {
            b.pos[k] += shift.pos[k] * b.mass;
        }
        b.mass += shift.mass;
        dst.set(i, b, t, line!());
    }
}

static DRIFT: Kernel = Kernel::__generated_v2(
    "drift",
    "drift",
    concat!(
        "struct Body { float pos[3]; float mass; };\n",
        "static_assert(sizeof(Body) == 16 && alignof(Body) == 4, \"Body's layout\");\n",
        "extern \"C\" __global__ void drift(Body shift, const Body* src, unsigned long long \
         src_len, Body* dst, unsigned long long dst_len) {\n",
        "  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n",
        "  if (i < src_len && i < dst_len) {\n",
        "    Body b = src[i];\n",
        "    for (int k = 0; k < 3; ++k) b.pos[k] += shift.pos[k] * b.mass;\n",
        "    b.mass += shift.mass;\n",
        "    dst[i] = b;\n",
        "  }\n",
        "}\n"
    ),
    &[
        ParamKind::Value(BODY),
        ParamKind::Slice {
            elem: ElemType::Value(BODY),
            mutable: false,
        },
        ParamKind::Slice {
            elem: ElemType::Value(BODY),
            mutable: true,
        },
    ],
    "gpu-runtime/tests/user_values.rs",
    false,
)
.with_cpu(drift_twin, false);

#[test]
fn a_struct_by_value_and_slices_of_structs_reach_the_kernel() {
    assert_compiles(&DRIFT);
    let gpu = test_device();
    let stream = gpu.default_stream();
    let host = bodies(300);
    let shift = Body {
        pos: [0.25, -1.0, 2.0],
        mass: 0.5,
    };
    let src = DeviceBuffer::from_host(&stream, &host).unwrap();
    let mut dst = DeviceBuffer::<Body>::zeroed(&stream, host.len()).unwrap();
    let args = [
        KernelArg::value(shift),
        KernelArg::slice(&src),
        KernelArg::slice_mut(&mut dst),
    ];
    stream
        .launch(&DRIFT, LaunchConfig::for_len(host.len(), 128), &args)
        .unwrap();
    drop(args);
    let want: Vec<Body> = host
        .iter()
        .map(|b| Body {
            pos: [0, 1, 2].map(|k| b.pos[k] + shift.pos[k] * b.mass),
            mass: b.mass + shift.mass,
        })
        .collect();
    assert_eq!(dst.to_host(&stream).unwrap(), want);
}

#[test]
fn launches_check_value_types() {
    let (_gpu, stream) = cpu();
    let src = DeviceBuffer::from_host(&stream, &bodies(4)).unwrap();
    let mut dst = DeviceBuffer::<Body>::zeroed(&stream, 4).unwrap();
    let mut wrong = DeviceBuffer::<[f32; 4]>::zeroed(&stream, 4).unwrap();
    let mismatch =
        |args: &[KernelArg<'_>]| match stream.launch(&DRIFT, LaunchConfig::for_len(4, 32), args) {
            Err(Error::ArgumentMismatch {
                index,
                expected,
                found,
                ..
            }) => (index, expected, found),
            other => panic!("expected an argument mismatch, got {other:?}"),
        };
    let (index, expected, found) = mismatch(&[
        KernelArg::value([0.0f32; 4]),
        KernelArg::slice(&src),
        KernelArg::slice_mut(&mut dst),
    ]);
    assert_eq!(
        (index, expected.as_str(), found.as_str()),
        (0, "Body", "[f32; 4]")
    );
    let (index, expected, found) = mismatch(&[
        KernelArg::value(bodies(1)[0]),
        KernelArg::slice(&src),
        KernelArg::slice_mut(&mut wrong),
    ]);
    assert_eq!(
        (index, expected.as_str(), found.as_str()),
        (2, "&mut [Body]", "&mut [[f32; 4]]")
    );
}

fn scale_rows_twin(args: &CpuArgs<'_>, t: &ThreadCtx) {
    let s: [f32; 3] = args.value(0);
    let rows = args.slice::<[f32; 3]>(1);
    let i = global_x(t);
    if i < rows.len() {
        let row = rows.get(i, t, line!());
        rows.set(i, [row[0] * s[0], row[1] * s[1], row[2] * s[2]], t, line!());
    }
}

static SCALE_ROWS: Kernel = Kernel::__generated_v2(
    "scale_rows",
    "scale_rows",
    concat!(
        "struct F3 { float v[3]; };\n",
        "extern \"C\" __global__ void scale_rows(F3 s, F3* rows, unsigned long long rows_len) {\n",
        "  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n",
        "  if (i < rows_len) for (int k = 0; k < 3; ++k) rows[i].v[k] *= s.v[k];\n",
        "}\n"
    ),
    &[
        ParamKind::Value(F3),
        ParamKind::Slice {
            elem: ElemType::Value(F3),
            mutable: true,
        },
    ],
    "gpu-runtime/tests/user_values.rs",
    false,
)
.with_cpu(scale_rows_twin, false);

#[test]
fn arrays_by_value_and_slices_of_arrays() {
    assert_eq!(<[f32; 3]>::ELEM, ElemType::Value(F3));
    assert_compiles(&SCALE_ROWS);
    let gpu = test_device();
    let stream = gpu.default_stream();
    let host: Vec<[f32; 3]> = (0..100).map(|i| [i as f32, 1.0, -(i as f32)]).collect();
    let s = [2.0f32, 0.5, -1.0];
    let mut rows = DeviceBuffer::from_host(&stream, &host).unwrap();
    stream
        .launch(
            &SCALE_ROWS,
            LaunchConfig::for_len(host.len(), 64),
            &[KernelArg::value(s), KernelArg::slice_mut(&mut rows)],
        )
        .unwrap();
    let want: Vec<[f32; 3]> = host
        .iter()
        .map(|r| [r[0] * s[0], r[1] * s[1], r[2] * s[2]])
        .collect();
    assert_eq!(rows.to_host(&stream).unwrap(), want);
}

// ---------------------------------------------------------------------------------------------
// Places

fn nudge_twin(args: &CpuArgs<'_>, t: &ThreadCtx) {
    // Launched with `KernelArg::value(dy)`, read as a value: a scalar either way.
    let dy: f32 = args.value(0);
    let particles = args.slice::<Particle>(1);
    let i = global_x(t);
    if i < particles.len() {
        let p = particles.place(i, t, line!());
        let y = Body::__gpu_place_pos(Particle::__gpu_place_body(p)).index(1, t, line!());
        y.set(y.read(t, line!()) + dy, t, line!());
        Particle::__gpu_place_alive(p).set(true, t, line!());
        let id = Particle::__gpu_place_id(p);
        id.set(id.read(t, line!()) * 2, t, line!());
    }
}

static NUDGE: Kernel = Kernel::__generated_v2(
    "nudge",
    "nudge",
    concat!(
        "struct Body { float pos[3]; float mass; };\n",
        "struct Particle { bool alive; unsigned long long id; Body body; };\n",
        "static_assert(sizeof(Particle) == 32 && alignof(Particle) == 8, \"Particle's layout\");\n",
        "extern \"C\" __global__ void nudge(float dy, Particle* p, unsigned long long p_len) {\n",
        "  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;\n",
        "  if (i < p_len) { p[i].body.pos[1] += dy; p[i].alive = true; p[i].id *= 2; }\n",
        "}\n"
    ),
    &[
        ParamKind::Scalar(ScalarType::F32),
        ParamKind::Slice {
            elem: ElemType::Value(ValueType {
                name: "Particle",
                size: 32,
                align: 8,
            }),
            mutable: true,
        },
    ],
    "gpu-runtime/tests/user_values.rs",
    false,
)
.with_cpu(nudge_twin, false);

#[test]
fn places_write_one_field_of_an_element() {
    assert_compiles(&NUDGE);
    let gpu = test_device();
    let stream = gpu.default_stream();
    let host: Vec<Particle> = bodies(77)
        .into_iter()
        .enumerate()
        .map(|(i, body)| Particle {
            alive: i % 2 == 0,
            id: i as u64 * 3,
            body,
        })
        .collect();
    let mut buf = DeviceBuffer::from_host(&stream, &host).unwrap();
    stream
        .launch(
            &NUDGE,
            LaunchConfig::for_len(host.len(), 32),
            &[KernelArg::value(1.5f32), KernelArg::slice_mut(&mut buf)],
        )
        .unwrap();
    let want: Vec<Particle> = host
        .iter()
        .map(|p| {
            let mut p = *p;
            p.body.pos[1] += 1.5;
            p.alive = true;
            p.id *= 2;
            p
        })
        .collect();
    assert_eq!(buf.to_host(&stream).unwrap(), want);
}

fn poke_read_only_twin(args: &CpuArgs<'_>, t: &ThreadCtx) {
    let bodies = args.slice::<Body>(0);
    let mass = Body::__gpu_place_mass(bodies.place(0, t, line!()));
    mass.set(mass.read(t, 4242) + 1.0, t, 4242);
}

static POKE_READ_ONLY: Kernel = Kernel::__generated_v2(
    "poke_read_only",
    "poke_read_only",
    "/* CUDA source: not used by the CPU backend */",
    &[ParamKind::Slice {
        elem: ElemType::Value(BODY),
        mutable: false,
    }],
    "gpu-runtime/tests/user_values.rs",
    false,
)
.with_cpu(poke_read_only_twin, false);

#[test]
fn places_refuse_writes_to_read_only_slices() {
    let (_gpu, stream) = cpu();
    let host = bodies(2);
    let buf = DeviceBuffer::from_host(&stream, &host).unwrap();
    let err = stream
        .launch(
            &POKE_READ_ONLY,
            LaunchConfig::for_len(1, 1),
            &[KernelArg::slice(&buf)],
        )
        .unwrap_err();
    assert!(
        matches!(&err, Error::CpuBackend { reason, .. }
            if reason.contains("line 4242 writes into element 0 of a read-only slice")),
        "{err}"
    );
    assert_eq!(buf.to_host(&stream).unwrap(), host, "nothing written");
}

fn past_the_end_twin(args: &CpuArgs<'_>, t: &ThreadCtx) {
    let bodies = args.slice::<Body>(0);
    let i = global_x(t);
    // Element 3 of a [f32; 3]: the place exists nowhere, reads zeros and ignores writes.
    let z = Body::__gpu_place_pos(bodies.place(i, t, 10)).index(3, t, 4343);
    z.set(z.read(t, 11) + 1.0, t, 11);
    // An element past the slice's end: the same.
    let beyond = bodies.place(bodies.len() + i, t, 20);
    Body::__gpu_place_mass(beyond).set(1.0, t, 21);
}

static PAST_THE_END: Kernel = Kernel::__generated_v2(
    "past_the_end",
    "past_the_end",
    "/* CUDA source: not used by the CPU backend */",
    &[ParamKind::Slice {
        elem: ElemType::Value(BODY),
        mutable: true,
    }],
    "gpu-runtime/tests/user_values.rs",
    true,
)
.with_cpu(past_the_end_twin, false);

#[test]
fn places_are_bounds_checked() {
    let (_gpu, stream) = cpu();
    let host = bodies(1);
    let mut buf = DeviceBuffer::from_host(&stream, &host).unwrap();
    stream
        .launch(
            &PAST_THE_END,
            LaunchConfig::for_len(1, 1),
            &[KernelArg::slice_mut(&mut buf)],
        )
        .unwrap();
    match stream.synchronize() {
        Err(Error::KernelPanic { line, message, .. }) => {
            assert_eq!(line, 4343);
            assert!(
                message.contains("the len is 3 but the index is 3"),
                "{message}"
            );
        }
        other => panic!("expected a kernel panic, got {other:?}"),
    }
    assert_eq!(buf.to_host(&stream).unwrap(), host, "nothing written");
}

// ---------------------------------------------------------------------------------------------
// Shared memory

/// Rotates each block's bodies by one through a shared array of structs, and writes each
/// body's mass into column 0 of a shared 2D tile before reading it back.
fn rotate_twin(args: &CpuArgs<'_>, t: &ThreadCtx) {
    let bodies = args.slice::<Body>(0);
    let tile = t.shared_array::<Body>(0, 32);
    let grid = t.shared_array::<[f32; 33]>(1, 32);
    let tid = t.thread_idx().x as usize;
    let i = global_x(t);
    tile.set(tid, bodies.get(i, t, line!()), t, line!());
    grid.place(tid, t, line!()).index(0, t, line!()).set(
        bodies.get(i, t, line!()).mass,
        t,
        line!(),
    );
    t.sync_threads();
    let mut b = tile.get((tid + 1) % 32, t, line!());
    b.mass = grid.get((tid + 1) % 32, t, line!())[0] * 2.0;
    bodies.set(i, b, t, line!());
}

static ROTATE: Kernel = Kernel::__generated_v2(
    "rotate",
    "rotate",
    concat!(
        "struct Body { float pos[3]; float mass; };\n",
        "extern \"C\" __global__ void rotate(Body* bodies, unsigned long long bodies_len) {\n",
        "  __shared__ Body tile[32];\n",
        "  __shared__ float grid[32][33];\n",
        "  unsigned int tid = threadIdx.x;\n",
        "  unsigned long long i = blockIdx.x * 32ull + tid;\n",
        "  tile[tid] = bodies[i];\n",
        "  grid[tid][0] = bodies[i].mass;\n",
        "  __syncthreads();\n",
        "  Body b = tile[(tid + 1) % 32];\n",
        "  b.mass = grid[(tid + 1) % 32][0] * 2.0f;\n",
        "  bodies[i] = b;\n",
        "}\n"
    ),
    &[ParamKind::Slice {
        elem: ElemType::Value(BODY),
        mutable: true,
    }],
    "gpu-runtime/tests/user_values.rs",
    false,
)
.with_cpu(rotate_twin, true);

#[test]
fn shared_memory_of_structs_and_of_arrays() {
    assert_compiles(&ROTATE);
    let gpu = test_device();
    let stream = gpu.default_stream();
    let host = bodies(96);
    let mut buf = DeviceBuffer::from_host(&stream, &host).unwrap();
    let config = LaunchConfig::new(Grid::x(3), Block::x(32));
    stream
        .launch(&ROTATE, config, &[KernelArg::slice_mut(&mut buf)])
        .unwrap();
    let want: Vec<Body> = (0..host.len())
        .map(|i| {
            let from = host[i / 32 * 32 + (i % 32 + 1) % 32];
            Body {
                pos: from.pos,
                mass: from.mass * 2.0,
            }
        })
        .collect();
    assert_eq!(buf.to_host(&stream).unwrap(), want);
}

// ---------------------------------------------------------------------------------------------
// The twin contract

fn misread_twin(args: &CpuArgs<'_>, t: &ThreadCtx) {
    let wrong: [f32; 4] = args.value(0);
    let bodies = args.slice::<[f32; 4]>(1);
    if bodies.is_empty() && global_x(t) == 0 {
        // Both reads failed their type check: zeros and an empty slice.
        assert_eq!(wrong, [0.0; 4]);
    }
}

static MISREAD: Kernel = Kernel::__generated_v2(
    "misread",
    "misread",
    "/* CUDA source: not used by the CPU backend */",
    &[
        ParamKind::Value(BODY),
        ParamKind::Slice {
            elem: ElemType::Value(BODY),
            mutable: false,
        },
    ],
    "gpu-runtime/tests/user_values.rs",
    false,
)
.with_cpu(misread_twin, false);

#[test]
fn a_twin_that_misreads_a_value_type_fails_the_launch() {
    let (_gpu, stream) = cpu();
    let buf = DeviceBuffer::from_host(&stream, &bodies(3)).unwrap();
    let body = bodies(1)[0];
    let err = stream
        .launch(
            &MISREAD,
            LaunchConfig::for_len(1, 1),
            &[KernelArg::value(body), KernelArg::slice(&buf)],
        )
        .unwrap_err();
    assert!(
        matches!(&err, Error::CpuBackend { reason, .. }
            if reason.contains("reads parameter 0 as [f32; 4], but it is Body")),
        "{err}"
    );
}
