use gpu_dsl::prelude::*;

const MAX_NEIGHBOURS: usize = 26;

#[device]
#[derive(Clone, Copy)]
#[repr(C)]
pub struct BoxInfo {
    pub nn: u32,
    pub nei: [u32; MAX_NEIGHBOURS],
}

#[kernel]
fn count(boxes: &[BoxInfo], out: &mut [u32]) {
    let i = global_idx().x;
    if i < boxes.len() {
        out[i] = boxes[i].nn;
    }
}

fn main() {}
