//! With the `aot` feature, compiles every kernel of gpu-kernels, with the instantiations the
//! library launches, into `$OUT_DIR/gpu-kernels.aot`, which src/lib.rs embeds and registers.
//! Without it, does nothing: kernels are compiled by NVRTC at their first launch.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "aot")]
    gpu_dsl_runtime::aot::Builder::new("gpu-kernels")
        .instantiations(gpu_dsl_kernels::all_instantiations())
        .emit();
}
