//! Snapshots of the CUDA emitted for the vector accesses and the tensor-core intrinsics
//! (`cp.async`, `ldmatrix`, `wgmma` in its f16, TF32 and register-A forms, tensor copies).

use crate::cuda_source_of;

fn cuda(rust: &str) -> String {
    cuda_source_of(rust).unwrap_or_else(|errors| panic!("kernel rejected: {errors}"))
}

#[test]
fn tensor_core_tile_copies() {
    insta::assert_snapshot!(cuda(
        r#"
fn tile(a: &[f16], out: &mut [u32]) {
    let tile = shared_array::<u32, 128>();
    let lane = lane_id() as usize;
    cp_async_16(tile, lane * 4, a, lane * 8, lane * 8 + 8 <= a.len());
    cp_async_commit();
    cp_async_wait(0);
    sync_threads();
    let f = ldmatrix_x4_trans(tile, (lane % 16) * 8 + (lane / 16) * 4);
    let g = ldmatrix_x2(tile, (lane % 16) * 8);
    out[lane] = f[0] ^ f[3] ^ g[1];
}
"#
    ));
}

#[test]
fn generic_vector_access() {
    insta::assert_snapshot!(cuda(
        r#"
fn copy4<T: Number>(x: &[T], y: &mut [T]) {
    let i = global_idx().x * 4;
    if i + 4 <= x.len() {
        let v = x.load4(i);
        y.store4(i, v);
    }
}
"#
    ));
}

#[test]
fn warpgroup_mma() {
    let source = cuda(
        r#"
fn wg<const TB: usize>(a: &[f16], out: &mut [f32]) {
    let smem = dynamic_shared::<u32>();
    let t = thread_idx().x as usize;
    cp_async_16(smem, t * 4, a, t * 8, t * 8 + 8 <= a.len());
    cp_async_commit();
    cp_async_wait(0);
    fence_proxy_async();
    sync_threads();
    let mut acc = [0.0f32; 8];
    wgmma_fence();
    let da = wgmma_desc(smem, 0, 8192, 1024);
    let db = wgmma_desc(smem, 2048, 8192, 1024);
    wgmma_m64n16k16_bf16(&mut acc, smem, da, db, false, 0, 1 - TB);
    wgmma_commit();
    wgmma_wait(0, &mut acc);
    out[t] = acc[0] + acc[7];
}
"#,
    );
    // The operands, the predicate and the immediates follow the 8 accumulators.
    assert!(
        source.contains("wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, p, 1, 1, %11, %12;"),
        "{source}"
    );
    assert!(
        source.contains(r#""r"((int)(false)), "n"((int)(0)), "n"((int)((1ull - TB)))"#),
        "{source}"
    );
    assert!(source.contains("__align__(1024)"), "{source}");
    assert!(
        source.contains("rs_wgmma_wait(0u); asm volatile(\"\" : \"+f\"(acc[0])"),
        "{source}"
    );
    assert!(source.contains("rs_fence_proxy_async();"), "{source}");
}

#[test]
fn warpgroup_mma_tf32() {
    let source = cuda(
        r#"
fn wg(out: &mut [f32]) {
    let smem = dynamic_shared::<f32>();
    let mut acc = [0.0f32; 4];
    wgmma_fence();
    let da = wgmma_desc(smem, 0, 8192, 1024);
    let db = wgmma_desc(smem, 2048, 8192, 1024);
    wgmma_m64n8k8_tf32(&mut acc, smem, da, db, true);
    wgmma_commit();
    wgmma_wait(0, &mut acc);
    out[0] = acc[0] + acc[3];
}
"#,
    );
    // TF32 takes no transpose immediates: the operands and the predicate follow the 4
    // accumulators, then the two scales.
    assert!(
        source.contains(
            "wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {%0, %1, %2, %3}, %4, %5, p, 1, 1;"
        ),
        "{source}"
    );
    assert!(
        source.contains(r#""l"(da), "l"(db), "r"((int)(true)))"#),
        "{source}"
    );
    assert!(source.contains("__align__(1024)"), "{source}");
}

#[test]
fn warpgroup_mma_tf32_register_a() {
    let source = cuda(
        r#"
fn wg(a: &[f32], out: &mut [f32]) {
    let smem = dynamic_shared::<f32>();
    let mut acc = [0.0f32; 4];
    let frag = [a[0], a[1], a[2], a[3]];
    wgmma_fence();
    let db = wgmma_desc(smem, 0, 8192, 1024);
    wgmma_m64n8k8_tf32_rs(&mut acc, frag, smem, db, false);
    wgmma_commit();
    wgmma_wait(0, &mut acc);
    out[0] = acc[0] + acc[3];
}
"#,
    );
    // A's four b32 registers in braces follow the 4 accumulators, then B's descriptor, the
    // predicate and the two scales.
    assert!(
        source.contains(
            "wgmma.mma_async.sync.aligned.m64n8k8.f32.tf32.tf32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, %8, p, 1, 1;"
        ),
        "{source}"
    );
    assert!(
        source.contains(r#""r"(__float_as_uint(frag[0])), "r"(__float_as_uint(frag[1])), "r"(__float_as_uint(frag[2])), "r"(__float_as_uint(frag[3])), "l"(db), "r"((int)(false)))"#),
        "{source}"
    );
}

#[test]
fn tensor_copies() {
    let source = cuda(
        r#"
fn copy(map: &TensorMap<f16>, out: &mut [u32]) {
    let smem = dynamic_shared::<u32>();
    let bars = shared_array::<u64, 2>();
    if thread_idx().x == 0 {
        mbarrier_init(bars, 1, 1);
        mbarrier_arrive_expect_tx(bars, 1, 2048);
        tma_load_2d(smem, 256, map, 64, -8, bars, 1);
    }
    mbarrier_wait(bars, 1, 0);
    out[0] = smem[256];
}
"#,
    );
    // The descriptor is a __grid_constant__ parameter, followed by its buffer's pointer and
    // length; the copy names it by its generic address.
    assert!(
        source.contains("const __grid_constant__ rs_tensor_map map, const rs_f16* __restrict__ map_src, unsigned long long map_len"),
        "{source}"
    );
    assert!(
        source.contains("rs_tma_load_2d(&smem[rs_idx(256ull, smem_len"),
        "{source}"
    );
    assert!(
        source.contains("], &map, 64, rs_wrapping_neg(8), &bars["),
        "{source}"
    );
    assert!(
        source.contains(
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        ),
        "{source}"
    );
    assert!(
        source.contains("rs_mbarrier_arrive_expect_tx(&bars[rs_idx(1ull, 2ull"),
        "{source}"
    );
    assert!(source.contains("__align__(1024)"), "{source}");
}
