//! Text output with indentation, shared by the emitters.

/// Accumulates lines at the current indentation.
pub struct Writer {
    text: String,
    depth: usize,
}

impl Writer {
    pub fn new() -> Self {
        Writer {
            text: String::new(),
            depth: 0,
        }
    }

    /// Writes one indented line.
    pub fn line(&mut self, line: &str) {
        for _ in 0..self.depth {
            self.text.push_str("    ");
        }
        self.text.push_str(line);
        self.text.push('\n');
    }

    /// Writes a line at column 0 (preprocessor directives).
    pub fn raw_line(&mut self, line: &str) {
        self.text.push_str(line);
        self.text.push('\n');
    }

    pub fn indent(&mut self) {
        self.depth += 1;
    }

    pub fn dedent(&mut self) {
        self.depth -= 1;
    }

    /// The current indentation, in levels.
    pub fn depth(&self) -> usize {
        self.depth
    }

    pub fn finish(self) -> String {
        self.text
    }
}
