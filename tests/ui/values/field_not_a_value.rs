// Every field must be a type kernels can keep in memory.
#[derive(Clone, Copy)]
#[repr(C)]
struct Named {
    name: &'static str,
    mass: f32,
}

gpu_dsl::runtime::__device_struct! {
    Named { name: &'static str => __gpu_place_name, mass: f32 => __gpu_place_mass }
    size 24, align 8, offsets [0, 16]
}

fn main() {}
