//! Rust format strings, as `assert!`, `panic!`, `print!` and `println!` take them: parsed once
//! here for every stage, and translated to C `printf` conversions for the GPU.
//!
//! Written by hand rather than taken from a crate: the kernel language needs the parse to
//! report each problem in its own words (what the GPU cannot print, and what to write instead),
//! and the translation to `printf` is ours anyway. The grammar is `std::fmt`'s:
//! `{[arg][:[[fill]align][sign]['#']['0'][width]['.' precision][type]]}`, with `{{` and `}}`.

use crate::types::Scalar;

/// A parsed format string.
#[derive(Clone, Debug, PartialEq)]
pub struct Template {
    pub pieces: Vec<Piece>,
    /// The variables named inline (`{x}`), in order of first use; placeholder index
    /// `explicit arguments + i` stands for the `i`-th.
    pub captures: Vec<String>,
}

impl Template {
    /// The format string with every placeholder numbered (`{2:>8.3}`), for a `format!` whose
    /// arguments are the explicit ones followed by the captured variables.
    pub fn rust_text(&self) -> String {
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Text(text) => out.push_str(&text.replace('{', "{{").replace('}', "}}")),
                Piece::Arg {
                    index, spec_text, ..
                } if spec_text.is_empty() => out.push_str(&format!("{{{index}}}")),
                Piece::Arg {
                    index, spec_text, ..
                } => out.push_str(&format!("{{{index}:{spec_text}}}")),
            }
        }
        out
    }
}

/// Literal text or one placeholder.
#[derive(Clone, Debug, PartialEq)]
pub enum Piece {
    /// Text as printed (`{{` already made `{`).
    Text(String),
    /// `{}`, `{0}`, `{x}`, `{:>8.3}`: argument `index` formatted by `spec` (written
    /// `spec_text`).
    Arg {
        index: usize,
        spec: Spec,
        spec_text: String,
    },
}

/// Where padding goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    Left,
    Center,
    Right,
}

/// Which formatting trait a placeholder asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trait {
    Display,
    Debug,
    LowerHex,
    UpperHex,
    Octal,
    Binary,
    LowerExp,
    UpperExp,
}

impl Trait {
    /// The placeholder as the user writes it, for messages.
    fn written(self) -> &'static str {
        match self {
            Trait::Display => "{}",
            Trait::Debug => "{:?}",
            Trait::LowerHex => "{:x}",
            Trait::UpperHex => "{:X}",
            Trait::Octal => "{:o}",
            Trait::Binary => "{:b}",
            Trait::LowerExp => "{:e}",
            Trait::UpperExp => "{:E}",
        }
    }
}

/// A placeholder's format spec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spec {
    pub fill: char,
    pub align: Option<Align>,
    /// `+`: always print the sign.
    pub plus: bool,
    /// `#`: the alternate form (`0x` before hex digits).
    pub alternate: bool,
    /// `0`: pad numbers with zeros after the sign.
    pub zero: bool,
    pub width: Option<usize>,
    pub precision: Option<usize>,
    pub format: Trait,
}

impl Default for Spec {
    fn default() -> Spec {
        Spec {
            fill: ' ',
            align: None,
            plus: false,
            alternate: false,
            zero: false,
            width: None,
            precision: None,
            format: Trait::Display,
        }
    }
}

/// Parses `text` for `args` arguments; every argument must be used, as rustc requires.
pub fn parse(text: &str, args: usize) -> Result<Template, String> {
    let mut pieces = Vec::new();
    let mut captures: Vec<String> = Vec::new();
    let mut literal = String::new();
    let mut next_arg = 0;
    let mut used = vec![false; args];
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                literal.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                literal.push('}');
            }
            '}' => {
                return Err(
                    "unmatched `}` in the format string: write `}}` for a literal `}`".to_string(),
                )
            }
            '{' => {
                let mut inner = String::new();
                loop {
                    match chars.next() {
                        Some('}') => break,
                        Some(c) => inner.push(c),
                        None => {
                            return Err("unmatched `{` in the format string: close the \
                                        placeholder with `}`, or write `{{` for a literal `{`"
                                .to_string())
                        }
                    }
                }
                let (arg, spec_text) = inner.split_once(':').unwrap_or((&inner, ""));
                let arg = arg.trim();
                let spec = parse_spec(spec_text)?;
                let index = if arg.is_empty() {
                    next_arg += 1;
                    next_arg - 1
                } else if let Ok(index) = arg.parse::<usize>() {
                    index
                } else if is_identifier(arg) {
                    let position = match captures.iter().position(|c| c == arg) {
                        Some(position) => position,
                        None => {
                            captures.push(arg.to_string());
                            captures.len() - 1
                        }
                    };
                    pieces.push(Piece::Text(std::mem::take(&mut literal)));
                    pieces.push(Piece::Arg {
                        index: args + position,
                        spec,
                        spec_text: spec_text.to_string(),
                    });
                    continue;
                } else {
                    return Err(format!(
                        "`{{{arg}}}` names no argument: write `{{}}`, a position such as `{{0}}`, \
                         or a variable's name"
                    ));
                };
                if index >= args {
                    return Err(format!(
                        "the format string has a placeholder for argument {} but {} given: \
                         pass one argument per `{{}}`",
                        index + 1,
                        match args {
                            0 => "no arguments are".to_string(),
                            1 => "only 1 argument is".to_string(),
                            n => format!("only {n} arguments are"),
                        }
                    ));
                }
                used[index] = true;
                pieces.push(Piece::Text(std::mem::take(&mut literal)));
                pieces.push(Piece::Arg {
                    index,
                    spec,
                    spec_text: spec_text.to_string(),
                });
            }
            other => literal.push(other),
        }
    }
    pieces.push(Piece::Text(literal));
    pieces.retain(|piece| !matches!(piece, Piece::Text(text) if text.is_empty()));
    if let Some(unused) = used.iter().position(|u| !u) {
        return Err(format!(
            "argument {} is never used: add a `{{}}` for it to the format string, or remove it",
            unused + 1
        ));
    }
    Ok(Template { pieces, captures })
}

/// Whether `text` is a Rust identifier, as an inline argument names a variable.
fn is_identifier(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c == '_' || c.is_alphabetic())
        && chars.all(|c| c == '_' || c.is_alphanumeric())
}

/// Parses what follows the `:` of a placeholder.
fn parse_spec(text: &str) -> Result<Spec, String> {
    let mut spec = Spec::default();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    let align_of = |c: char| match c {
        '<' => Some(Align::Left),
        '^' => Some(Align::Center),
        '>' => Some(Align::Right),
        _ => None,
    };
    if let Some(align) = chars.get(1).copied().and_then(align_of) {
        spec.fill = chars[0];
        spec.align = Some(align);
        i = 2;
    } else if let Some(align) = chars.first().copied().and_then(align_of) {
        spec.align = Some(align);
        i = 1;
    }
    match chars.get(i) {
        Some('+') => {
            spec.plus = true;
            i += 1;
        }
        Some('-') => i += 1,
        _ => {}
    }
    if chars.get(i) == Some(&'#') {
        spec.alternate = true;
        i += 1;
    }
    if chars.get(i) == Some(&'0') {
        spec.zero = true;
        i += 1;
    }
    let digits = |i: &mut usize| {
        let start = *i;
        while chars.get(*i).is_some_and(char::is_ascii_digit) {
            *i += 1;
        }
        let text: String = chars[start..*i].iter().collect();
        text.parse::<usize>().ok()
    };
    spec.width = digits(&mut i);
    if chars.get(i) == Some(&'.') {
        i += 1;
        if chars.get(i) == Some(&'*') {
            return Err(from_argument());
        }
        spec.precision = Some(digits(&mut i).ok_or_else(|| {
            "a `.` in a format spec needs the precision after it, as in `{:.3}`".to_string()
        })?);
    }
    if chars.get(i) == Some(&'$') {
        return Err(from_argument());
    }
    let rest: String = chars[i..].iter().collect();
    spec.format = match rest.as_str() {
        "" => Trait::Display,
        "?" => Trait::Debug,
        "x" => Trait::LowerHex,
        "X" => Trait::UpperHex,
        "o" => Trait::Octal,
        "b" => Trait::Binary,
        "e" => Trait::LowerExp,
        "E" => Trait::UpperExp,
        "x?" | "X?" => {
            return Err(format!(
                "`{{:{rest}}}` is not supported in kernels: write `{{:{}}}`",
                &rest[..1]
            ))
        }
        other if other.contains('$') => return Err(from_argument()),
        other => {
            return Err(format!(
                "unknown format spec `{{:{text}}}` (`{other}` is not a format type): kernels \
                 take `{{}}`, `{{:?}}`, `{{:x}}`, `{{:X}}`, `{{:o}}`, `{{:b}}`, `{{:e}}` and \
                 `{{:E}}`, with fill, alignment, sign, `#`, `0`, width and precision"
            ))
        }
    };
    Ok(spec)
}

fn from_argument() -> String {
    "widths and precisions taken from arguments (`$`, `.*`) are not supported in kernels: \
     write the number in the format string"
        .to_string()
}

/// Whether a value of type `scalar` can be formatted by `format`; the message says why not.
pub fn check_trait(format: Trait, scalar: Scalar) -> Result<(), String> {
    let ok = match format {
        Trait::Display | Trait::Debug => true,
        Trait::LowerHex | Trait::UpperHex | Trait::Octal | Trait::Binary => scalar.is_int(),
        Trait::LowerExp | Trait::UpperExp => scalar.is_number(),
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{}` cannot format a `{}`: {}",
            format.written(),
            scalar.rust_name(),
            match format {
                Trait::LowerExp | Trait::UpperExp => "it takes numbers",
                _ => "it takes integers (convert with `as`, or print floats with `{}`)",
            }
        ))
    }
}

/// A C string literal's body for `text`: quotes, backslashes and bytes outside printable ASCII
/// escaped (as three-digit octal, which no following digit can extend).
pub fn c_string_body(text: &str, out: &mut String) {
    for byte in text.bytes() {
        match byte {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'?' => out.push_str("\\?"),
            0x20..=0x7e => out.push(byte as char),
            other => out.push_str(&format!("\\{other:03o}")),
        }
    }
}

/// How one argument is passed to `printf`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrintfArg {
    /// As it is (integers, whose conversion names their width).
    Plain,
    /// Converted to `double` (floats of any width).
    Double,
    /// As the string `"true"` or `"false"`.
    Bool,
}

/// The `printf` conversion (`%-8.3f`) that prints a `scalar` as `spec` asks, as close to Rust's
/// output as C can: the same for integers, `bool` and floats with a precision; the message says
/// what printf cannot express.
pub fn printf_conversion(spec: &Spec, scalar: Scalar) -> Result<(String, PrintfArg), String> {
    check_trait(spec.format, scalar)?;
    if spec.fill != ' ' && !(spec.fill == '0' && spec.align.is_none()) {
        return Err(format!(
            "the GPU's printf pads with spaces or zeros only: remove the fill character `{}`",
            spec.fill
        ));
    }
    if spec.align == Some(Align::Center) {
        return Err(
            "the GPU's printf cannot center (`^`): align left (`<`) or right (`>`)".to_string(),
        );
    }
    let mut flags = String::new();
    let left = match spec.align {
        Some(Align::Left) => true,
        // Rust pads a `bool` like a string: on the right unless told otherwise.
        None => scalar == Scalar::Bool,
        Some(Align::Right | Align::Center) => false,
    };
    if left && spec.width.is_some() {
        flags.push('-');
    }
    if spec.plus && scalar != Scalar::Bool {
        flags.push('+');
    }
    if spec.alternate {
        match spec.format {
            Trait::LowerHex | Trait::UpperHex => flags.push('#'),
            // `{:#?}` of a number or bool is `{:?}`.
            Trait::Debug => {}
            Trait::Display | Trait::Octal | Trait::Binary | Trait::LowerExp | Trait::UpperExp => {
                return Err(format!(
                    "the GPU's printf has no alternate form (`#`) of `{}`: remove the `#`",
                    spec.format.written()
                ))
            }
        }
    }
    if spec.zero && scalar != Scalar::Bool {
        flags.push('0');
    }
    let width = spec.width.map(|w| w.to_string()).unwrap_or_default();
    if let Scalar::Generic(generic) = scalar {
        if !scalar.is_float() {
            return Err(format!(
                "the GPU's printf needs to know the width of `{}` when the macro runs: print \
                 `x as i64` (or `x as f64`) instead",
                generic.name
            ));
        }
    }
    if scalar == Scalar::Bool {
        return Ok((format!("%{flags}{width}s"), PrintfArg::Bool));
    }
    if scalar.is_int() {
        let length = match scalar {
            // C's printf reads the promoted int back at the type's width.
            Scalar::I8 | Scalar::U8 => "hh",
            Scalar::I16 | Scalar::U16 => "h",
            Scalar::I32 | Scalar::U32 => "",
            Scalar::I64 | Scalar::U64 | Scalar::Usize | Scalar::Isize => "ll",
            Scalar::Bool
            | Scalar::F32
            | Scalar::F64
            | Scalar::F16
            | Scalar::Bf16
            | Scalar::Generic(_) => {
                return Err(format!(
                    "a `{}` cannot be printed as an integer",
                    scalar.rust_name()
                ))
            }
        };
        let conversion = match spec.format {
            Trait::Display | Trait::Debug if scalar.is_signed_int() => "d",
            Trait::Display | Trait::Debug => "u",
            Trait::LowerHex => "x",
            Trait::UpperHex => "X",
            Trait::Octal => "o",
            Trait::Binary => {
                return Err(
                    "the GPU's printf cannot print binary (`{:b}`): print `{:x}` \
                            instead"
                        .to_string(),
                )
            }
            Trait::LowerExp | Trait::UpperExp => {
                return Err(format!(
                    "the GPU's printf cannot print an integer with `{}`: convert it with \
                     `as f64` first",
                    spec.format.written()
                ))
            }
        };
        // Rust ignores a precision on integers.
        return Ok((
            format!("%{flags}{width}{length}{conversion}"),
            PrintfArg::Plain,
        ));
    }
    let precision = spec.precision.map(|p| format!(".{p}")).unwrap_or_default();
    let conversion = match (spec.format, spec.precision) {
        (Trait::Display | Trait::Debug, Some(_)) => "f",
        // No printf conversion prints the shortest digits that read back as the same float, as
        // Rust does: six significant digits are the closest (see docs/LANGUAGE.md).
        (Trait::Display | Trait::Debug, None) => "g",
        (Trait::LowerExp, _) => "e",
        (Trait::UpperExp, _) => "E",
        (Trait::LowerHex | Trait::UpperHex | Trait::Octal | Trait::Binary, _) => {
            return Err(format!(
                "`{}` takes integers: print floats with `{{}}`",
                spec.format.written()
            ))
        }
    };
    Ok((
        format!("%{flags}{width}{precision}{conversion}"),
        PrintfArg::Double,
    ))
}
