//! The Mandelbrot set with a `Complex` type and its operators, written to a PNG.
//!
//! `cargo run --release --example mandelbrot [WIDTH] [OUT.png]` — one thread per pixel iterates
//! `z = z * z + c`; the image is written where asked (default `mandelbrot.png`), and the escape
//! counts are checked against the same arithmetic on the CPU.

use gpu_dsl::prelude::*;

/// A complex number; the operators below make `z * z + c` read as mathematics.
#[device]
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
pub struct Complex {
    pub re: f32,
    pub im: f32,
}

#[device]
impl Complex {
    /// `|z|²`, without the square root.
    pub fn norm2(&self) -> f32 {
        self.re * self.re + self.im * self.im
    }
}

#[device]
impl core::ops::Add for Complex {
    type Output = Complex;
    fn add(self, o: Complex) -> Complex {
        Complex {
            re: self.re + o.re,
            im: self.im + o.im,
        }
    }
}

#[device]
impl core::ops::Mul for Complex {
    type Output = Complex;
    fn mul(self, o: Complex) -> Complex {
        Complex {
            re: self.re * o.re - self.im * o.im,
            im: self.re * o.im + self.im * o.re,
        }
    }
}

/// Escape counts of a `width` x `height` view of the plane centred at `center`, `scale` wide.
#[kernel]
fn escape_counts(width: usize, center: Complex, scale: f32, max_iter: u32, counts: &mut [u32]) {
    let i = global_idx().x;
    if i < counts.len() {
        let height = counts.len() / width;
        let x = (i % width) as f32 / width as f32 - 0.5;
        let y = (i / width) as f32 / height as f32 - 0.5;
        let c = center
            + Complex {
                re: x * scale,
                im: y * scale * height as f32 / width as f32,
            };
        let mut z = Complex { re: 0.0, im: 0.0 };
        let mut k = 0u32;
        while k < max_iter && z.norm2() <= 4.0 {
            z = z * z + c;
            k += 1;
        }
        counts[i] = k;
    }
}

fn main() {
    if let Err(error) = run() {
        eprintln!("error: {error}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let width: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(1920);
    let out = args.next().unwrap_or_else(|| "mandelbrot.png".to_string());
    let height = width * 2 / 3;
    let max_iter = 256u32;
    let center = Complex { re: -0.6, im: 0.0 };
    let scale = 3.2f32;

    let gpu = Gpu::best()?;
    println!("device: {} ({:?} backend)", gpu.name(), gpu.backend());
    let stream = gpu.default_stream();
    let mut counts = DeviceBuffer::zeroed(&stream, width * height)?;
    let config = LaunchConfig::for_len(width * height, 256);
    escape_counts::launch(&stream, config, width, center, scale, max_iter, &mut counts)?;
    let start = stream.record_event()?;
    escape_counts::launch(&stream, config, width, center, scale, max_iter, &mut counts)?;
    let end = stream.record_event()?;
    let counts = counts.to_host(&stream)?;
    println!(
        "{width}x{height}, up to {max_iter} iterations: {:.3} ms",
        start.elapsed_ms(&end)?
    );

    // Every 97th pixel against the same arithmetic on the CPU; a pixel on the set's edge may
    // escape one iteration apart where FMA contraction rounds differently.
    let mut mismatches = 0;
    for i in (0..counts.len()).step_by(97) {
        let x = (i % width) as f32 / width as f32 - 0.5;
        let y = (i / width) as f32 / height as f32 - 0.5;
        let (cr, ci) = (
            center.re + x * scale,
            center.im + y * scale * height as f32 / width as f32,
        );
        let (mut zr, mut zi, mut k) = (0.0f32, 0.0f32, 0u32);
        while k < max_iter && zr * zr + zi * zi <= 4.0 {
            let re = zr * zr - zi * zi + cr;
            zi = zr * zi + zi * zr + ci;
            zr = re;
            k += 1;
        }
        if counts[i].abs_diff(k) > 1 {
            mismatches += 1;
        }
    }
    println!(
        "checked every 97th pixel against the CPU: {mismatches} differ by more than one iteration"
    );

    let mut image = image::RgbImage::new(width as u32, height as u32);
    for (i, &count) in counts.iter().enumerate() {
        let t = count as f32 / max_iter as f32;
        let pixel = if count >= max_iter {
            [0, 0, 0]
        } else {
            [
                (255.0 * t.sqrt()) as u8,
                (255.0 * t) as u8,
                (128.0 + 127.0 * t) as u8,
            ]
        };
        image.put_pixel((i % width) as u32, (i / width) as u32, image::Rgb(pixel));
    }
    image.save(&out)?;
    println!("wrote {out}");
    if mismatches * 100 > counts.len() / 97 {
        return Err("more than 1% of the checked pixels differ from the CPU".into());
    }
    Ok(())
}
