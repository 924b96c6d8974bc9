// A layout that disagrees with the CUDA struct's fails to compile, naming the field.
#[derive(Clone, Copy)]
#[repr(C)]
struct Body {
    pos: [f32; 3],
    mass: f32,
}

gpu_dsl::runtime::__device_struct! {
    Body { pos: [f32; 3] => __gpu_place_pos, mass: f32 => __gpu_place_mass }
    size 16, align 4, offsets [0, 8]
}

fn main() {}
