//! The `image_filter` example's filters on the CPU backend against its plain host loops.

#[path = "../examples/image_filter/filters.rs"]
mod filters;

use filters::{DevicePlanes, Filter, Planes};
mod common;

use gpu_dsl::prelude::*;

/// Every filter of a small generated image, its sides not multiples of the 32-pixel tiles, on
/// the device and on the host: the CPU backend sums in the host's order, so they agree exactly.
#[test]
fn device_filters_match_the_host_loops() {
    let stream = Gpu::cpu().default_stream();
    let planes = Planes::from_image(&filters::generate(67, 45));
    let mut device = DevicePlanes::upload(&stream, &planes).unwrap();
    for filter in Filter::ALL {
        device.apply(&stream, filter).unwrap();
        let result = device.download(&stream).unwrap();
        let reference = filters::apply_host(&planes, filter);
        let diff = result.max_abs_diff(&reference);
        assert!(diff <= 1e-4, "{}: max |diff| {diff}", filter.name());
    }
}

/// The filters do what their names say on a known image: a flat image stays flat under blur
/// and sharpen and has no edges; a vertical step has edges on the two columns beside it.
#[test]
fn filters_on_known_images() {
    let flat = image::RgbImage::from_pixel(9, 7, image::Rgb([100, 150, 200]));
    let planes = Planes::from_image(&flat);
    for filter in [Filter::Blur, Filter::Sharpen] {
        let out = filters::apply_host(&planes, filter);
        assert!(out.max_abs_diff(&planes) < 1e-3, "{}", filter.name());
    }
    let edges = filters::apply_host(&planes, Filter::Edges);
    assert!(edges.channels.iter().flatten().all(|&v| v.abs() < 1e-4));

    let step = image::RgbImage::from_fn(8, 4, |x, _| image::Rgb([if x < 4 { 0 } else { 200 }; 3]));
    let edges = filters::apply_host(&Planes::from_image(&step), Filter::Edges);
    for x in 0..8 {
        let expected = if x == 3 || x == 4 { 800.0 } else { 0.0 };
        assert_eq!(edges.channels[0][x], expected, "column {x}");
    }
}

/// The test image shipped with the example decodes and is the one `generate` draws.
#[test]
fn shipped_test_image_is_the_generated_one() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/image_filter/test.png"
    );
    let shipped = image::open(path).unwrap().to_rgb8();
    assert_eq!(shipped, filters::generate(256, 192));
}

/// Splitting into channels and joining them back gives the image back.
#[test]
fn planes_round_trip() {
    let image = filters::generate(31, 17);
    assert_eq!(Planes::from_image(&image).to_image(), image);
}

/// The example's own kernel compiles with NVRTC, so its GPU path builds where no GPU is.
#[test]
fn gradient_magnitude_compiles_with_nvrtc() {
    common::assert_compiles_with_nvrtc(&[(&filters::gradient_magnitude::KERNEL, &[])]);
}
