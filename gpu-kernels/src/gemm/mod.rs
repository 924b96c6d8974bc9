//! Matrix multiply: `C = alpha·op(A)·op(B) + beta·C`, row-major.

pub mod tensor_core;

/// Whether an operand is used as stored or transposed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transpose {
    /// As stored.
    No,
    /// Transposed.
    Yes,
}

/// One multiply: op(A) is m×k (A stored m×k, or k×m when `trans_a`), op(B) k×n (B stored k×n,
/// or n×k when `trans_b`), C m×n.
#[derive(Clone, Copy, Debug)]
pub struct Gemm {
    /// Rows of op(A) and C.
    pub m: usize,
    /// Columns of op(B) and C.
    pub n: usize,
    /// Columns of op(A), rows of op(B).
    pub k: usize,
    /// Whether A is stored k×m.
    pub trans_a: Transpose,
    /// Whether B is stored n×k.
    pub trans_b: Transpose,
    /// The product's scale.
    pub alpha: f32,
    /// C's scale; 0 means C is not read.
    pub beta: f32,
}
