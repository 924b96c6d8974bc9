//! The filters of `image_filter`, on a device and as plain loops on the host, and the generated
//! test image; shared with `tests/image_filter.rs`.
//!
//! An image is filtered per channel: each of R, G and B is a row-major plane of `f32` in 0..=255.
//! Blur and sharpen are one [`convolve2d`] each; edge detection is the Sobel gradient's
//! magnitude, `sqrt(gx² + gy²)`, from two convolutions and [`gradient_magnitude`]. Neighbours
//! outside the image repeat the edge ([`Boundary::Clamp`]) on both sides.

use gpu_dsl::kernels::stencil::{convolve2d, Boundary, DeviceWeights, Weights};
use gpu_dsl::prelude::*;
use image::{Rgb, RgbImage};

/// A filter the example applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Filter {
    /// The 5×5 Gaussian blur (binomial weights).
    Blur,
    /// The 3×3 sharpen filter.
    Sharpen,
    /// The magnitude of the 3×3 Sobel gradient.
    Edges,
}

impl Filter {
    /// Every filter, in the order the example runs them.
    pub const ALL: [Filter; 3] = [Filter::Blur, Filter::Sharpen, Filter::Edges];

    /// The filter's name, also the suffix of its output file.
    pub fn name(self) -> &'static str {
        match self {
            Filter::Blur => "blur",
            Filter::Sharpen => "sharpen",
            Filter::Edges => "edges",
        }
    }

    /// The weights of its convolutions: one for blur and sharpen, Sobel x and y for edges.
    fn weights(self) -> Vec<Weights> {
        match self {
            Filter::Blur => vec![Weights::gaussian_blur5()],
            Filter::Sharpen => vec![Weights::sharpen3()],
            Filter::Edges => vec![Weights::sobel_x3(), Weights::sobel_y3()],
        }
    }
}

/// `out[i] = sqrt(gx[i]² + gy[i]²)`: the gradient's length from its two components.
#[kernel]
pub fn gradient_magnitude(gx: &[f32], gy: &[f32], out: &mut [f32]) {
    let i = global_idx().x;
    if i < out.len() {
        out[i] = (gx[i] * gx[i] + gy[i] * gy[i]).sqrt();
    }
}

/// An image as three planes of `f32`, one per channel.
#[derive(Clone, Debug, PartialEq)]
pub struct Planes {
    /// Pixels per row.
    pub width: usize,
    /// Rows.
    pub height: usize,
    /// R, G and B, each `width * height` values in 0..=255, row by row.
    pub channels: [Vec<f32>; 3],
}

impl Planes {
    /// Splits an RGB image into its channels.
    pub fn from_image(image: &RgbImage) -> Planes {
        let (width, height) = (image.width() as usize, image.height() as usize);
        let mut channels: [Vec<f32>; 3] = Default::default();
        for (c, plane) in channels.iter_mut().enumerate() {
            *plane = image.pixels().map(|p| f32::from(p.0[c])).collect();
        }
        Planes {
            width,
            height,
            channels,
        }
    }

    /// Joins the channels into an RGB image, each value rounded and clamped to 0..=255.
    pub fn to_image(&self) -> RgbImage {
        let byte = |v: f32| v.round().clamp(0.0, 255.0) as u8;
        RgbImage::from_fn(self.width as u32, self.height as u32, |x, y| {
            let i = y as usize * self.width + x as usize;
            Rgb(self.channels.each_ref().map(|plane| byte(plane[i])))
        })
    }

    /// The largest absolute difference between two images' values.
    pub fn max_abs_diff(&self, other: &Planes) -> f32 {
        self.channels
            .iter()
            .zip(&other.channels)
            .flat_map(|(a, b)| a.iter().zip(b).map(|(x, y)| (x - y).abs()))
            .fold(0.0, f32::max)
    }
}

/// The channels on a device, the filters' weights, and the planes the filters write.
pub struct DevicePlanes {
    width: usize,
    height: usize,
    channels: Vec<DeviceBuffer<f32>>,
    /// Each filter's weights, in the order of [`Filter::ALL`], uploaded once so a timed
    /// [`Self::apply`] launches kernels only.
    weights: Vec<Vec<DeviceWeights>>,
    outputs: Vec<DeviceBuffer<f32>>,
    gx: DeviceBuffer<f32>,
    gy: DeviceBuffer<f32>,
}

impl DevicePlanes {
    /// Copies the image's channels to the stream's device.
    pub fn upload(stream: &Stream, planes: &Planes) -> gpu_dsl::Result<DevicePlanes> {
        let pixels = planes.width * planes.height;
        let channels = planes
            .channels
            .iter()
            .map(|plane| DeviceBuffer::from_host(stream, plane))
            .collect::<gpu_dsl::Result<Vec<_>>>()?;
        let outputs = (0..3)
            .map(|_| DeviceBuffer::zeroed(stream, pixels))
            .collect::<gpu_dsl::Result<Vec<_>>>()?;
        let mut weights = Vec::new();
        for filter in Filter::ALL {
            let uploaded: gpu_dsl::Result<Vec<_>> =
                filter.weights().iter().map(|w| w.upload(stream)).collect();
            weights.push(uploaded?);
        }
        Ok(DevicePlanes {
            width: planes.width,
            height: planes.height,
            channels,
            weights,
            outputs,
            gx: DeviceBuffer::zeroed(stream, pixels)?,
            gy: DeviceBuffer::zeroed(stream, pixels)?,
        })
    }

    /// Queues `filter` on every channel; the result stays on the device until [`Self::download`].
    pub fn apply(&mut self, stream: &Stream, filter: Filter) -> gpu_dsl::Result<()> {
        let (w, h) = (self.width, self.height);
        let index = Filter::ALL.iter().position(|&f| f == filter).unwrap_or(0);
        let weights = &self.weights[index];
        for (input, output) in self.channels.iter().zip(&mut self.outputs) {
            match filter {
                Filter::Blur | Filter::Sharpen => {
                    convolve2d(stream, input, w, h, &weights[0], Boundary::Clamp, output)?;
                }
                Filter::Edges => {
                    convolve2d(
                        stream,
                        input,
                        w,
                        h,
                        &weights[0],
                        Boundary::Clamp,
                        &mut self.gx,
                    )?;
                    convolve2d(
                        stream,
                        input,
                        w,
                        h,
                        &weights[1],
                        Boundary::Clamp,
                        &mut self.gy,
                    )?;
                    let config = LaunchConfig::for_len(w * h, 256);
                    gradient_magnitude::launch(stream, config, &self.gx, &self.gy, output)?;
                }
            }
        }
        Ok(())
    }

    /// The last filter's result, copied back to the host.
    pub fn download(&self, stream: &Stream) -> gpu_dsl::Result<Planes> {
        let mut channels: [Vec<f32>; 3] = Default::default();
        for (plane, output) in channels.iter_mut().zip(&self.outputs) {
            *plane = output.to_host(stream)?;
        }
        Ok(Planes {
            width: self.width,
            height: self.height,
            channels,
        })
    }
}

/// `filter` on every channel, as plain loops on one host thread: the reference the device's
/// result is checked against.
pub fn apply_host(planes: &Planes, filter: Filter) -> Planes {
    let (w, h) = (planes.width, planes.height);
    let weights = filter.weights();
    let channels = planes.channels.each_ref().map(|plane| match filter {
        Filter::Blur | Filter::Sharpen => convolve_host(plane, w, h, &weights[0]),
        Filter::Edges => {
            let gx = convolve_host(plane, w, h, &weights[0]);
            let gy = convolve_host(plane, w, h, &weights[1]);
            gx.iter()
                .zip(&gy)
                .map(|(x, y)| (x * x + y * y).sqrt())
                .collect()
        }
    });
    Planes {
        width: w,
        height: h,
        channels,
    }
}

/// One channel through a (2r+1)² stencil, neighbours clamped to the image, the products summed
/// row by row and left to right as the device kernel sums them.
fn convolve_host(plane: &[f32], width: usize, height: usize, weights: &Weights) -> Vec<f32> {
    let r = weights.radius() as isize;
    let side = weights.side();
    let taps = weights.values();
    let clamp = |v: isize, n: usize| v.clamp(0, n as isize - 1) as usize;
    let mut out = vec![0.0f32; width * height];
    for y in 0..height {
        for x in 0..width {
            let mut acc = 0.0f32;
            for dy in 0..side {
                let sy = clamp(y as isize + dy as isize - r, height);
                for dx in 0..side {
                    let sx = clamp(x as isize + dx as isize - r, width);
                    acc += taps[dy * side + dx] * plane[sy * width + sx];
                }
            }
            out[y * width + x] = acc;
        }
    }
    out
}

/// A test image drawn by code: a colour gradient, a checkerboard, a disc and thin lines, so
/// blur, sharpen and edges each have something to show.
pub fn generate(width: u32, height: u32) -> RgbImage {
    let (w, h) = (width as f32, height as f32);
    RgbImage::from_fn(width, height, |x, y| {
        let (fx, fy) = (x as f32 / w, y as f32 / h);
        // Background: red grows to the right, blue downwards.
        let mut rgb = [40.0 + 180.0 * fx, 90.0, 60.0 + 160.0 * fy];
        // A checkerboard in the upper left quarter, cells of 1/16 of the width.
        let cell = (width / 16).max(1);
        if fx < 0.5 && fy < 0.5 && ((x / cell) + (y / cell)).is_multiple_of(2) {
            rgb = [235.0, 235.0, 235.0];
        }
        // A yellow disc on the right.
        let (dx, dy) = (fx - 0.72, (fy - 0.55) * h / w);
        if dx * dx + dy * dy < 0.04 {
            rgb = [250.0, 210.0, 40.0];
        }
        // Thin dark diagonal lines in the lower left, one pixel wide.
        if fx < 0.45 && fy > 0.55 && (x + y).is_multiple_of(12) {
            rgb = [10.0, 10.0, 30.0];
        }
        Rgb(rgb.map(|v| v as u8))
    })
}
