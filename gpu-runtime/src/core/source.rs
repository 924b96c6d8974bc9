//! Kernel sources that name constants from outside the kernel: the macro cannot see their
//! values, so it emits the source as pieces, and these `const fn`s spell each constant as a
//! C++ literal and join the pieces while rustc compiles the user's crate. `SOURCE` stays a
//! `&'static str` known at compile time.

/// One piece of a kernel's CUDA source.
#[derive(Clone, Copy, Debug)]
pub enum SourcePiece {
    /// Source text as the macro wrote it.
    Text(&'static str),
    /// A `bool` constant.
    Bool(bool),
    /// A signed integer constant with its C++ literal suffix (`""`, `"ll"`).
    Signed(i64, &'static str),
    /// An unsigned integer constant with its C++ literal suffix (`"u"`, `"ull"`).
    Unsigned(u64, &'static str),
    /// An `f32` constant, by its bits (exact for every value, NaN and infinities included).
    F32(u32),
    /// An `f64` constant, by its bits.
    F64(u64),
    /// An `f16` or `bf16` constant: the C++ type (`rs_f16`, `rs_bf16`) and its bits.
    Half(&'static str, u16),
    /// An array constant's elements, separated by commas (a C++ array's initializer).
    List(Table),
}

/// The elements of an array constant, by type.
#[derive(Clone, Copy, Debug)]
pub enum Table {
    /// `[bool; N]`.
    Bool(&'static [bool]),
    /// `[i8; N]`.
    I8(&'static [i8]),
    /// `[i16; N]`.
    I16(&'static [i16]),
    /// `[i32; N]`.
    I32(&'static [i32]),
    /// `[i64; N]`.
    I64(&'static [i64]),
    /// `[isize; N]`.
    Isize(&'static [isize]),
    /// `[u8; N]`.
    U8(&'static [u8]),
    /// `[u16; N]`.
    U16(&'static [u16]),
    /// `[u32; N]`.
    U32(&'static [u32]),
    /// `[u64; N]`.
    U64(&'static [u64]),
    /// `[usize; N]`.
    Usize(&'static [usize]),
    /// `[f32; N]`.
    F32(&'static [f32]),
    /// `[f64; N]`.
    F64(&'static [f64]),
}

impl Table {
    const fn len(self) -> usize {
        match self {
            Table::Bool(v) => v.len(),
            Table::I8(v) => v.len(),
            Table::I16(v) => v.len(),
            Table::I32(v) => v.len(),
            Table::I64(v) => v.len(),
            Table::Isize(v) => v.len(),
            Table::U8(v) => v.len(),
            Table::U16(v) => v.len(),
            Table::U32(v) => v.len(),
            Table::U64(v) => v.len(),
            Table::Usize(v) => v.len(),
            Table::F32(v) => v.len(),
            Table::F64(v) => v.len(),
        }
    }

    /// Element `i` as the piece of a constant of its type.
    const fn element(self, i: usize) -> SourcePiece {
        match self {
            Table::Bool(v) => SourcePiece::Bool(v[i]),
            Table::I8(v) => SourcePiece::Signed(v[i] as i64, ""),
            Table::I16(v) => SourcePiece::Signed(v[i] as i64, ""),
            Table::I32(v) => SourcePiece::Signed(v[i] as i64, ""),
            Table::I64(v) => SourcePiece::Signed(v[i], "ll"),
            Table::Isize(v) => SourcePiece::Signed(v[i] as i64, "ll"),
            Table::U8(v) => SourcePiece::Unsigned(v[i] as u64, "u"),
            Table::U16(v) => SourcePiece::Unsigned(v[i] as u64, "u"),
            Table::U32(v) => SourcePiece::Unsigned(v[i] as u64, "u"),
            Table::U64(v) => SourcePiece::Unsigned(v[i], "ull"),
            Table::Usize(v) => SourcePiece::Unsigned(v[i] as u64, "ull"),
            // Bits: a file-scope array needs constant initializers, which `__int_as_float`
            // is not; the kernel reads the float back from them.
            Table::F32(v) => SourcePiece::Unsigned(v[i].to_bits() as u64, "u"),
            Table::F64(v) => SourcePiece::Unsigned(v[i].to_bits(), "ull"),
        }
    }
}

/// What separates a table's elements.
const SEPARATOR: &str = ", ";

/// The longest text a number piece spells (an `f64`'s `__longlong_as_double(...)`, 55 bytes).
const NUMBER_MAX: usize = 64;

/// A number piece spelled into a fixed buffer.
struct Spelled {
    bytes: [u8; NUMBER_MAX],
    len: usize,
}

impl Spelled {
    const fn new() -> Spelled {
        Spelled {
            bytes: [0; NUMBER_MAX],
            len: 0,
        }
    }

    const fn push_str(mut self, text: &str) -> Spelled {
        let text = text.as_bytes();
        let mut i = 0;
        while i < text.len() {
            self.bytes[self.len] = text[i];
            self.len += 1;
            i += 1;
        }
        self
    }

    const fn push_decimal(mut self, mut value: u64) -> Spelled {
        let mut digits = [0u8; 20];
        let mut count = 0;
        loop {
            digits[count] = b'0' + (value % 10) as u8;
            count += 1;
            value /= 10;
            if value == 0 {
                break;
            }
        }
        while count > 0 {
            count -= 1;
            self.bytes[self.len] = digits[count];
            self.len += 1;
        }
        self
    }

    const fn push_hex(mut self, value: u64, digits: u32) -> Spelled {
        let mut shift = digits * 4;
        while shift > 0 {
            shift -= 4;
            self.bytes[self.len] = b"0123456789abcdef"[((value >> shift) & 0xf) as usize];
            self.len += 1;
        }
        self
    }
}

impl SourcePiece {
    const fn spell(self) -> Spelled {
        let out = Spelled::new();
        match self {
            SourcePiece::Text(_) => out,
            SourcePiece::Bool(true) => out.push_str("true"),
            SourcePiece::Bool(false) => out.push_str("false"),
            SourcePiece::Unsigned(value, suffix) => out.push_decimal(value).push_str(suffix),
            // `-(m - 1) - 1` has the literal's type even for the type's minimum, whose
            // magnitude the positive literal cannot hold.
            SourcePiece::Signed(value, suffix) if value < 0 => out
                .push_str("(-")
                .push_decimal(value.unsigned_abs() - 1)
                .push_str(suffix)
                .push_str(" - 1")
                .push_str(suffix)
                .push_str(")"),
            SourcePiece::Signed(value, suffix) => {
                out.push_decimal(value.unsigned_abs()).push_str(suffix)
            }
            SourcePiece::F32(bits) => out
                .push_str("__int_as_float((int)0x")
                .push_hex(bits as u64, 8)
                .push_str("u)"),
            SourcePiece::F64(bits) => out
                .push_str("__longlong_as_double((long long)0x")
                .push_hex(bits, 16)
                .push_str("ull)"),
            SourcePiece::Half(ty, bits) => out
                .push_str(ty)
                .push_str("::from_bits(0x")
                .push_hex(bits as u64, 4)
                .push_str(")"),
            // Spelled element by element by `source_bytes`.
            SourcePiece::List(_) => out,
        }
    }

    const fn len(self) -> usize {
        match self {
            SourcePiece::Text(text) => text.len(),
            SourcePiece::List(table) => {
                let mut total = 0;
                let mut i = 0;
                while i < table.len() {
                    if i > 0 {
                        total += SEPARATOR.len();
                    }
                    total += table.element(i).spell().len;
                    i += 1;
                }
                total
            }
            other => other.spell().len,
        }
    }
}

/// The length in bytes of the source the pieces spell.
pub const fn source_len(pieces: &[SourcePiece]) -> usize {
    let mut total = 0;
    let mut i = 0;
    while i < pieces.len() {
        total += pieces[i].len();
        i += 1;
    }
    total
}

/// The source the pieces spell; `N` is [`source_len`] of them.
pub const fn source_bytes<const N: usize>(pieces: &[SourcePiece]) -> [u8; N] {
    let mut out = [0u8; N];
    let mut at = 0;
    let mut i = 0;
    while i < pieces.len() {
        let (bytes, len) = match pieces[i] {
            SourcePiece::Text(text) => (text.as_bytes(), text.len()),
            SourcePiece::List(table) => {
                let mut e = 0;
                while e < table.len() {
                    if e > 0 {
                        at = copy(&mut out, at, SEPARATOR.as_bytes(), SEPARATOR.len());
                    }
                    let spelled = table.element(e).spell();
                    at = copy(&mut out, at, &spelled.bytes, spelled.len);
                    e += 1;
                }
                i += 1;
                continue;
            }
            other => {
                let spelled = other.spell();
                let mut j = 0;
                while j < spelled.len {
                    out[at + j] = spelled.bytes[j];
                    j += 1;
                }
                at += spelled.len;
                i += 1;
                continue;
            }
        };
        let mut j = 0;
        while j < len {
            out[at + j] = bytes[j];
            j += 1;
        }
        at += len;
        i += 1;
    }
    out
}

/// Copies `len` bytes of `bytes` into `out` at `at`; the position after them.
const fn copy<const N: usize>(out: &mut [u8; N], at: usize, bytes: &[u8], len: usize) -> usize {
    let mut j = 0;
    while j < len {
        out[at + j] = bytes[j];
        j += 1;
    }
    at + len
}

/// The joined source as text: the pieces are UTF-8 text and ASCII numbers, so this never
/// fails for bytes from [`source_bytes`].
pub const fn source_str(bytes: &'static [u8]) -> &'static str {
    match core::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(_) => panic!("a kernel source joined from UTF-8 pieces is UTF-8"),
    }
}

/// Holds when a constant of type `Self` is the `T` a kernel assumed for it: a kernel takes a
/// constant whose uses fix no type as `i32`, and a constant of any other type must say so.
#[diagnostic::on_unimplemented(
    message = "this constant is a `{Self}`, but the kernel takes it as `{T}`: nothing in the \
               kernel fixes its type, and the macro, which sees only its name, gives it Rust's \
               type for an integer literal",
    label = "write `as {Self}` after it here, or use it where a `{Self}` is known \
             (`let n: {Self} = ...`)"
)]
pub trait AssumedType<T> {}

impl<T> AssumedType<T> for T {}

/// Compiles only when `_constant` is a `T`; see [`AssumedType`].
pub const fn assumed_type<T, C: AssumedType<T>>(_constant: &C) {}

#[cfg(test)]
mod tests {
    use super::*;

    const PIECES: &[SourcePiece] = &[
        SourcePiece::Text("a["),
        SourcePiece::Unsigned(32, "ull"),
        SourcePiece::Text("] "),
        SourcePiece::Signed(i32::MIN as i64, ""),
        SourcePiece::Text(" "),
        SourcePiece::Signed(-5, "ll"),
        SourcePiece::Text(" "),
        SourcePiece::Signed(7, ""),
        SourcePiece::Text(" "),
        SourcePiece::F32(0x3f80_0000),
        SourcePiece::Text(" "),
        SourcePiece::F64(f64::INFINITY.to_bits()),
        SourcePiece::Text(" "),
        SourcePiece::Half("rs_f16", 0x3c00),
        SourcePiece::Text(" "),
        SourcePiece::Bool(false),
        SourcePiece::Text(" {"),
        SourcePiece::List(Table::I32(&[3, -2, i32::MIN])),
        SourcePiece::Text("} {"),
        SourcePiece::List(Table::U8(&[])),
        SourcePiece::Text("} {"),
        SourcePiece::List(Table::F32(&[1.0])),
        SourcePiece::Text("}"),
    ];
    const LEN: usize = source_len(PIECES);
    const BYTES: [u8; LEN] = source_bytes(PIECES);
    const TEXT: &str = source_str(&BYTES);

    #[test]
    fn pieces_join_at_compile_time() {
        let expected = format!(
            "a[32ull] (-{}{} - 1) (-4ll - 1ll) 7 __int_as_float((int)0x3f800000u) \
             __longlong_as_double((long long)0x{:016x}ull) rs_f16::from_bits(0x3c00) false \
             {{3, (-1 - 1), (-{} - 1)}} {{}} {{1065353216u}}",
            i32::MAX,
            "",
            f64::INFINITY.to_bits(),
            i32::MAX
        );
        assert_eq!(TEXT, expected);
        assert_eq!(LEN, expected.len());
    }
}
