//! PNG charts: the training curve and the confusion matrix.
//!
//! Text is drawn with DejaVu Sans embedded from the `dejavu` crate and registered with
//! plotters' `ab_glyph` renderer, so charts render the same on a machine without system fonts.

use std::path::Path;
use std::sync::Once;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::FontStyle;

use crate::error::{Error, Result};
use crate::train::EpochStats;

/// The font family name charts use (plotters' default family, so every default style finds it).
const FONT: &str = "sans-serif";

/// Registers the embedded font once per process.
fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Both registrations are of a valid TTF shipped in the crate, so they cannot fail in
        // practice; a failure would only lose the text, not the chart.
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular());
        let _ = plotters::style::register_font(FONT, FontStyle::Bold, dejavu::sans::bold());
    });
}

/// Turns any drawing error into the example's error, naming the file.
fn plot_err(path: &Path) -> impl Fn(&dyn std::fmt::Display) -> Error + '_ {
    move |err| Error::Plot {
        path: path.to_path_buf(),
        message: err.to_string(),
    }
}

/// Line colours of the train and test series.
const TRAIN_COLOR: RGBColor = RGBColor(31, 119, 180);
/// Test series colour.
const TEST_COLOR: RGBColor = RGBColor(214, 39, 40);

/// Draws loss (left) and accuracy (right) per epoch, train and test, into a PNG at `path`.
pub fn training_curve(path: &Path, epochs: &[EpochStats], title: &str) -> Result<()> {
    register_font();
    let err = plot_err(path);
    let root = BitMapBackend::new(path, (1280, 540)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let root = root
        .titled(title, (FONT, 26).into_font().style(FontStyle::Bold))
        .map_err(|e| err(&e))?;
    let (left, right) = root.split_horizontally(640);
    let last = epochs.len().max(1) as f64 + 0.5;

    type Getter = fn(&EpochStats) -> f32;
    let panels: [(&DrawingArea<_, _>, &str, Getter, Getter, bool); 2] = [
        (&left, "loss", |s| s.train_loss, |s| s.test_loss, false),
        (
            &right,
            "accuracy (%)",
            |s| 100.0 * s.train_accuracy,
            |s| 100.0 * s.test_accuracy,
            true,
        ),
    ];
    for (area, label, train, test, is_accuracy) in panels {
        let values = epochs.iter().flat_map(|s| [train(s), test(s)]);
        let (lo, hi) = values.fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
        let (lo, hi) = if lo.is_finite() {
            (lo as f64, hi as f64)
        } else {
            (0.0, 1.0)
        };
        let pad = ((hi - lo) * 0.1).max(if is_accuracy { 0.5 } else { 0.01 });
        let (lo, hi) = if is_accuracy {
            ((lo - pad).max(0.0), (hi + pad).min(100.0))
        } else {
            ((lo - pad).max(0.0), hi + pad)
        };
        let mut chart = ChartBuilder::on(area)
            .caption(label, (FONT, 22))
            .margin(20)
            .x_label_area_size(50)
            .y_label_area_size(70)
            .build_cartesian_2d(0.5f64..last, lo..hi)
            .map_err(|e| err(&e))?;
        chart
            .configure_mesh()
            .x_desc("epoch")
            .y_desc(label)
            .x_labels(epochs.len().clamp(1, 20) + 1)
            .x_label_formatter(&|v| format!("{v:.0}"))
            .y_label_formatter(&|v| {
                if is_accuracy {
                    format!("{v:.1}")
                } else {
                    format!("{v:.3}")
                }
            })
            .label_style((FONT, 16))
            .axis_desc_style((FONT, 18))
            .draw()
            .map_err(|e| err(&e))?;
        for (name, color, get) in [("train", TRAIN_COLOR, train), ("test", TEST_COLOR, test)] {
            let points: Vec<(f64, f64)> = epochs
                .iter()
                .map(|s| (s.epoch as f64, get(s) as f64))
                .collect();
            chart
                .draw_series(LineSeries::new(points.clone(), color.stroke_width(2)))
                .map_err(|e| err(&e))?
                .label(name)
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
                });
            chart
                .draw_series(
                    points
                        .into_iter()
                        .map(|p| Circle::new(p, 4, color.filled())),
                )
                .map_err(|e| err(&e))?;
        }
        chart
            .configure_series_labels()
            .position(if is_accuracy {
                SeriesLabelPosition::LowerRight
            } else {
                SeriesLabelPosition::UpperRight
            })
            .label_font((FONT, 16))
            .border_style(BLACK)
            .background_style(WHITE.mix(0.85))
            .draw()
            .map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))
}

/// Draws the confusion matrix (`confusion[true][predicted]`) as a heatmap, each cell shaded by
/// its share of its row and labelled with its count; the axes name the classes by `names`.
pub fn confusion_heatmap(
    path: &Path,
    confusion: &[Vec<u32>],
    names: &[String],
    title: &str,
) -> Result<()> {
    register_font();
    let err = plot_err(path);
    let classes = confusion.len().max(1);
    // Names wider than a number (Fashion-MNIST's "T-shirt/top") get a wider y label area, and
    // the x axis's a smaller font, so that neighbours do not overlap.
    let longest = names.iter().map(|n| n.chars().count()).max().unwrap_or(1);
    let named = longest > 3;
    let name = move |v: f64| {
        let i = v.round();
        if i < 0.0 {
            return String::new();
        }
        names
            .get(i as usize)
            .cloned()
            .unwrap_or_else(|| format!("{i:.0}"))
    };
    let label_area = if named { 30 + 8 * longest as u32 } else { 55 };
    let root = BitMapBackend::new(path, (705 + label_area, 760)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let edge = classes as f64 - 0.5;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, (FONT, 22).into_font().style(FontStyle::Bold))
        .margin(20)
        .x_label_area_size(55)
        .y_label_area_size(label_area)
        .build_cartesian_2d(-0.5f64..edge, -0.5f64..edge)
        .map_err(|e| err(&e))?;
    // Row 0 is drawn at the top, so the y axis counts down from the last class.
    let flip = move |v: f64| classes as f64 - 1.0 - v;
    chart
        .configure_mesh()
        .disable_mesh()
        .x_labels(classes.min(30))
        .y_labels(classes.min(30))
        .x_label_formatter(&|v| name(*v))
        .y_label_formatter(&|v| name(flip(*v)))
        .x_desc("predicted class")
        .y_desc("true class")
        .label_style((FONT, 16))
        .x_label_style((FONT, if named { 12 } else { 16 }))
        .axis_desc_style((FONT, 18))
        .draw()
        .map_err(|e| err(&e))?;
    let cells = confusion.iter().enumerate().flat_map(|(t, row)| {
        let total = row.iter().sum::<u32>().max(1) as f64;
        row.iter()
            .enumerate()
            .map(move |(p, &count)| (t, p, count, count as f64 / total))
    });
    let cells: Vec<_> = cells.collect();
    chart
        .draw_series(cells.iter().map(|&(t, p, _, share)| {
            let y = flip(t as f64);
            // White to a dark blue, by the cell's share of its row.
            let mix = |full: f64, dark: f64| (full + (dark - full) * share.sqrt()) as u8;
            let color = RGBColor(mix(255.0, 8.0), mix(255.0, 48.0), mix(255.0, 107.0));
            Rectangle::new(
                [(p as f64 - 0.5, y - 0.5), (p as f64 + 0.5, y + 0.5)],
                color.filled(),
            )
        }))
        .map_err(|e| err(&e))?;
    if classes <= 20 {
        let size = if classes <= 10 { 15 } else { 11 };
        chart
            .draw_series(cells.iter().map(|&(t, p, count, share)| {
                let color: &'static RGBColor = if share.sqrt() > 0.5 { &WHITE } else { &BLACK };
                let style = TextStyle::from((FONT, size).into_font())
                    .color(color)
                    .pos(Pos::new(HPos::Center, VPos::Center));
                Text::new(count.to_string(), (p as f64, flip(t as f64)), style)
            }))
            .map_err(|e| err(&e))?;
    }
    root.present().map_err(|e| err(&e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(epoch: usize) -> EpochStats {
        EpochStats {
            epoch,
            train_loss: 1.0 / epoch as f32,
            train_accuracy: 0.8 + 0.01 * epoch as f32,
            test_loss: 1.1 / epoch as f32,
            test_accuracy: 0.78 + 0.01 * epoch as f32,
            seconds: 1.0,
            samples_per_second: 1.0,
            step_ms: 1.0,
            profile: None,
            first_step_seconds: None,
        }
    }

    /// A PNG file starts with these bytes.
    const PNG_SIGNATURE: [u8; 8] = [0x89, b'P', b'N', b'G', b'\r', b'\n', 0x1a, b'\n'];

    #[test]
    fn writes_png_files() {
        let dir = tempfile::tempdir().unwrap();
        let curve = dir.path().join("curve.png");
        training_curve(&curve, &[stats(1), stats(2), stats(3)], "test").unwrap();
        assert!(std::fs::read(&curve).unwrap().starts_with(&PNG_SIGNATURE));

        let matrix = dir.path().join("confusion.png");
        let digits = ["0".to_string(), "1".to_string()];
        confusion_heatmap(&matrix, &[vec![5, 1], vec![0, 7]], &digits, "test").unwrap();
        assert!(std::fs::read(&matrix).unwrap().starts_with(&PNG_SIGNATURE));
        let names = crate::data::FASHION_CLASSES.map(String::from);
        let mut fashion = vec![vec![1u32; 10]; 10];
        for (i, row) in fashion.iter_mut().enumerate() {
            row[i] = 90;
        }
        let named = dir.path().join("fashion.png");
        confusion_heatmap(&named, &fashion, &names, "Fashion-MNIST").unwrap();
        assert!(std::fs::read(&named).unwrap().starts_with(&PNG_SIGNATURE));
    }

    #[test]
    fn a_missing_folder_is_an_error_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("no/such/dir/curve.png");
        let msg = training_curve(&path, &[stats(1)], "x")
            .unwrap_err()
            .to_string();
        assert!(msg.contains("curve.png"), "{msg}");
    }
}
