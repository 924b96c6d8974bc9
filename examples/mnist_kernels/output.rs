//! Text outputs: the confusion matrix (CSV and a printed table) and the metrics JSON.

use std::fmt::Write as _;
use std::path::Path;

use serde_json::{json, Value};

use crate::error::{io, Result};
use crate::train::EpochStats;

/// The confusion matrix as CSV: a header of predicted classes, then one row per true class,
/// each class by its name in `names` (one per class).
pub fn confusion_csv(confusion: &[Vec<u32>], names: &[String]) -> String {
    let mut csv = String::from("true\\predicted");
    for name in names.iter().take(confusion.len()) {
        let _ = write!(csv, ",{name}");
    }
    csv.push('\n');
    for (row, name) in confusion.iter().zip(names) {
        let _ = write!(csv, "{name}");
        for count in row {
            let _ = write!(csv, ",{count}");
        }
        csv.push('\n');
    }
    csv
}

/// The confusion matrix as an aligned table with each class's recall, for the terminal. Rows
/// carry the class's number and, where it is not just the number, its name from `names`;
/// columns carry the number only, to keep the table narrow.
pub fn confusion_table(confusion: &[Vec<u32>], names: &[String]) -> String {
    let width = confusion
        .iter()
        .flatten()
        .map(|c| c.to_string().len())
        .max()
        .unwrap_or(1)
        .max(confusion.len().to_string().len())
        .max(3);
    let label = |t: usize| match names.get(t) {
        Some(name) if *name != t.to_string() => format!("{t:>w$} {name}", w = width),
        _ => format!("{t:>w$}", w = width),
    };
    let label_width = (0..confusion.len())
        .map(|t| label(t).chars().count())
        .max()
        .unwrap_or(width)
        .max(width);
    let mut table = format!("{:>w$} |", "t\\p", w = label_width);
    for p in 0..confusion.len() {
        let _ = write!(table, " {p:>width$}");
    }
    table.push_str(" | recall\n");
    table.push_str(&"-".repeat(label_width + 2 + (width + 1) * confusion.len() + 9));
    table.push('\n');
    for (t, row) in confusion.iter().enumerate() {
        let _ = write!(table, "{:<w$} |", label(t), w = label_width);
        for count in row {
            let _ = write!(table, " {count:>width$}");
        }
        let total: u32 = row.iter().sum();
        let right = row.get(t).copied().unwrap_or(0);
        let recall = 100.0 * f64::from(right) / f64::from(total.max(1));
        let _ = writeln!(table, " | {recall:5.1}%");
    }
    table
}

/// An f32 as the f64 with the same shortest decimal form, so JSON shows `0.001` rather than
/// `0.0010000000474974513`.
pub fn short(x: f32) -> f64 {
    x.to_string().parse().unwrap_or(f64::from(x))
}

/// One epoch's stats as JSON.
pub fn epoch_json(stats: &EpochStats) -> Value {
    json!({
        "epoch": stats.epoch,
        "train_loss": short(stats.train_loss),
        "train_accuracy": short(stats.train_accuracy),
        "test_loss": short(stats.test_loss),
        "test_accuracy": short(stats.test_accuracy),
        "seconds": stats.seconds,
        "samples_per_second": stats.samples_per_second,
        "step_ms": stats.step_ms,
    })
}

/// Writes `text` to `path`.
pub fn write_text(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).map_err(io(path))
}

/// Writes `value` to `path` as pretty JSON.
pub fn write_json(path: &Path, value: &Value) -> Result<()> {
    // Serialising a `Value` cannot fail: its map keys are strings.
    let text = serde_json::to_string_pretty(value).unwrap_or_default();
    write_text(path, &(text + "\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_keeps_the_decimal_form() {
        assert_eq!(short(1e-3), 0.001);
        assert_eq!(short(0.7839), 0.7839);
    }

    fn digits(n: usize) -> Vec<String> {
        (0..n).map(|d| d.to_string()).collect()
    }

    #[test]
    fn csv_has_a_header_and_one_row_per_class() {
        let csv = confusion_csv(&[vec![5, 1], vec![0, 7]], &digits(2));
        assert_eq!(csv, "true\\predicted,0,1\n0,5,1\n1,0,7\n");
        let names = ["Coat".to_string(), "Ankle boot".to_string()];
        let csv = confusion_csv(&[vec![5, 1], vec![0, 7]], &names);
        assert_eq!(
            csv,
            "true\\predicted,Coat,Ankle boot\nCoat,5,1\nAnkle boot,0,7\n"
        );
    }

    #[test]
    fn table_names_the_rows() {
        let names = ["T-shirt/top".to_string(), "Bag".to_string()];
        let table = confusion_table(&[vec![3, 1], vec![0, 7]], &names);
        let lines: Vec<&str> = table.lines().collect();
        assert!(lines[2].starts_with("  0 T-shirt/top |"), "{table}");
        assert!(lines[3].starts_with("  1 Bag         |"), "{table}");
    }

    #[test]
    fn table_shows_recall() {
        let table = confusion_table(&[vec![3, 1], vec![0, 7]], &digits(2));
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 4);
        assert!(lines[2].ends_with("75.0%"), "{table}");
        assert!(lines[3].ends_with("100.0%"), "{table}");
    }
}
