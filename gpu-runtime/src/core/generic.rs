//! Generic kernels: C++ templates instantiated at launch from Rust type and const arguments.
//!
//! The macro emits `template <typename T, unsigned long long N> __global__ void scale(...)`;
//! a launch names the instantiation (`scale<float, 256ULL>`), NVRTC compiles it as a *name
//! expression* and reports the mangled entry point it lowered to.

use std::fmt;

use crate::core::error::{Error, Result};
use crate::core::kernel::{KernelSpec, ParamKind, TemplateParam};
use crate::core::scalar::{Scalar, ScalarType};
use crate::core::value::ElemType;

/// One template argument of a generic launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TemplateArg {
    /// A scalar type, for a [`TemplateParam::Type`].
    Type(ScalarType),
    /// A value, for a [`TemplateParam::Const`].
    Const(u64),
}

impl TemplateArg {
    /// The type argument for `T`.
    pub const fn of<T: Scalar>() -> TemplateArg {
        TemplateArg::Type(T::TYPE)
    }

    /// The parameter kind this argument fits.
    pub const fn param(&self) -> TemplateParam {
        match self {
            TemplateArg::Type(_) => TemplateParam::Type,
            TemplateArg::Const(_) => TemplateParam::Const,
        }
    }

    /// The C++ spelling inside a name expression, e.g. `float` or `256ULL`.
    pub fn cuda_spelling(&self) -> String {
        match self {
            TemplateArg::Type(ty) => template_type_name(*ty).to_string(),
            TemplateArg::Const(value) => format!("{value}ULL"),
        }
    }
}

impl fmt::Display for TemplateArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TemplateArg::Type(ty) => write!(f, "{ty}"),
            TemplateArg::Const(value) => write!(f, "{value}"),
        }
    }
}

/// The C++ spelling of a scalar type as a template argument; the 16-bit floats use the
/// wrapper types the macro's prelude defines.
fn template_type_name(ty: ScalarType) -> &'static str {
    match ty {
        ScalarType::F16 => "rs_f16",
        ScalarType::Bf16 => "rs_bf16",
        other => other.cuda_name(),
    }
}

/// `scale<float, 256ULL>`: what NVRTC instantiates and lowers.
pub(crate) fn name_expression(kernel: &KernelSpec, args: &[TemplateArg]) -> String {
    let args: Vec<String> = args.iter().map(TemplateArg::cuda_spelling).collect();
    format!("{}<{}>", kernel.entry(), args.join(", "))
}

/// `scale::<f32, 256>`: how messages name an instantiation.
pub(crate) fn rust_instantiation(kernel: &KernelSpec, args: &[TemplateArg]) -> String {
    if args.is_empty() {
        return kernel.name().to_string();
    }
    let args: Vec<String> = args.iter().map(TemplateArg::to_string).collect();
    format!("{}::<{}>", kernel.name(), args.join(", "))
}

fn describe_params(params: &[TemplateParam]) -> String {
    let names: Vec<String> = params.iter().map(TemplateParam::to_string).collect();
    format!("<{}>", names.join(", "))
}

fn template_error(kernel: &KernelSpec, reason: String) -> Error {
    Error::TemplateArgs {
        kernel: kernel.name(),
        reason,
    }
}

/// Fails when a generic kernel is launched as a plain one, or the other way round.
pub(crate) fn check_generic(kernel: &KernelSpec, generic_launch: bool) -> Result<()> {
    match (kernel.is_generic(), generic_launch) {
        (true, false) => Err(template_error(
            kernel,
            format!(
                "the kernel is generic over {}; launch it with Stream::launch_generic and its \
                 template arguments (its generated launcher does this)",
                describe_params(kernel.template_params())
            ),
        )),
        (false, true) => Err(template_error(
            kernel,
            "the kernel is not generic; launch it with Stream::launch, without template \
             arguments"
                .to_string(),
        )),
        _ => Ok(()),
    }
}

/// Checks template arguments against the kernel's template parameters, count and kind.
pub(crate) fn check_template_args(kernel: &KernelSpec, args: &[TemplateArg]) -> Result<()> {
    check_generic(kernel, true)?;
    let params = kernel.template_params();
    if args.len() != params.len() {
        return Err(template_error(
            kernel,
            format!(
                "it takes {} template argument(s) {} but {} were given",
                params.len(),
                describe_params(params),
                args.len()
            ),
        ));
    }
    for (index, (param, arg)) in params.iter().zip(args).enumerate() {
        if *param != arg.param() {
            let wanted = match param {
                TemplateParam::Type => "a type (e.g. f32)",
                TemplateParam::Const => "a const (an unsigned integer)",
            };
            let given = match arg {
                TemplateArg::Type(ty) => format!("the type {ty}"),
                TemplateArg::Const(value) => format!("the const {value}"),
            };
            return Err(template_error(
                kernel,
                format!("template argument {index} must be {wanted} but {given} was given"),
            ));
        }
    }
    Ok(())
}

/// The kernel's parameters with every generic one replaced by its instantiated type; `args`
/// must already have passed [`check_template_args`].
pub(crate) fn instantiate_params(
    kernel: &KernelSpec,
    args: &[TemplateArg],
) -> Result<Vec<ParamKind>> {
    kernel
        .params()
        .iter()
        .map(|param| match *param {
            ParamKind::GenericScalar { param } => {
                type_arg(kernel, args, param).map(ParamKind::Scalar)
            }
            ParamKind::GenericSlice { param, mutable } => {
                type_arg(kernel, args, param).map(|elem| ParamKind::Slice {
                    elem: ElemType::Scalar(elem),
                    mutable,
                })
            }
            concrete => Ok(concrete),
        })
        .collect()
}

fn type_arg(kernel: &KernelSpec, args: &[TemplateArg], param: u8) -> Result<ScalarType> {
    match args.get(usize::from(param)) {
        Some(TemplateArg::Type(ty)) => Ok(*ty),
        // check_well_formed rules this out for kernels that reach a launch.
        _ => Err(Error::InvalidKernel {
            kernel: kernel.name().to_string(),
            reason: format!(
                "a parameter refers to template parameter {param}, which is not a type"
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static SCALE: KernelSpec = KernelSpec::generic(
        "scale",
        "/* template source */",
        &[
            ParamKind::GenericScalar { param: 0 },
            ParamKind::GenericSlice {
                param: 0,
                mutable: true,
            },
            ParamKind::Scalar(ScalarType::U32),
        ],
        &[TemplateParam::Type, TemplateParam::Const],
        "src/scale.rs",
        false,
    );

    static PLAIN: KernelSpec = KernelSpec::plain("plain", "plain", "/* src */", &[], "", false);

    fn reason(result: Result<impl fmt::Debug>) -> String {
        match result {
            Err(Error::TemplateArgs { kernel, reason }) => {
                assert!(kernel == "scale" || kernel == "plain", "{kernel}");
                reason
            }
            other => panic!("expected TemplateArgs, got {other:?}"),
        }
    }

    #[test]
    fn spellings() {
        let args = [TemplateArg::of::<f32>(), TemplateArg::Const(256)];
        assert_eq!(name_expression(&SCALE, &args), "scale<float, 256ULL>");
        assert_eq!(rust_instantiation(&SCALE, &args), "scale::<f32, 256>");
        assert_eq!(rust_instantiation(&PLAIN, &[]), "plain");
        let cases = [
            (ScalarType::Bool, "bool"),
            (ScalarType::U8, "unsigned char"),
            (ScalarType::I32, "int"),
            (ScalarType::U32, "unsigned int"),
            (ScalarType::I64, "long long"),
            (ScalarType::U64, "unsigned long long"),
            (ScalarType::Usize, "unsigned long long"),
            (ScalarType::Isize, "long long"),
            (ScalarType::F32, "float"),
            (ScalarType::F64, "double"),
            (ScalarType::F16, "rs_f16"),
            (ScalarType::Bf16, "rs_bf16"),
        ];
        for (ty, cpp) in cases {
            assert_eq!(TemplateArg::Type(ty).cuda_spelling(), cpp);
        }
        assert_eq!(
            TemplateArg::Const(u64::MAX).cuda_spelling(),
            "18446744073709551615ULL"
        );
    }

    #[test]
    fn arguments_are_checked_by_count_and_kind() {
        check_template_args(&SCALE, &[TemplateArg::of::<f64>(), TemplateArg::Const(1)]).unwrap();
        let r = reason(check_template_args(&SCALE, &[TemplateArg::of::<f64>()]));
        assert!(
            r.contains("takes 2 template argument(s) <type, const> but 1"),
            "{r}"
        );
        let r = reason(check_template_args(
            &SCALE,
            &[TemplateArg::Const(3), TemplateArg::Const(1)],
        ));
        assert!(r.contains("argument 0 must be a type"), "{r}");
        assert!(r.contains("the const 3"), "{r}");
        let r = reason(check_template_args(
            &SCALE,
            &[TemplateArg::of::<f64>(), TemplateArg::of::<u32>()],
        ));
        assert!(r.contains("argument 1 must be a const"), "{r}");
        assert!(r.contains("the type u32"), "{r}");
    }

    #[test]
    fn generic_and_plain_launches_do_not_mix() {
        let r = reason(check_generic(&SCALE, false));
        assert!(r.contains("Stream::launch_generic"), "{r}");
        let r = reason(check_template_args(&PLAIN, &[]));
        assert!(r.contains("not generic"), "{r}");
        check_generic(&PLAIN, false).unwrap();
    }

    #[test]
    fn parameters_are_instantiated() {
        let params =
            instantiate_params(&SCALE, &[TemplateArg::of::<f64>(), TemplateArg::Const(8)]).unwrap();
        assert_eq!(
            params,
            [
                ParamKind::Scalar(ScalarType::F64),
                ParamKind::Slice {
                    elem: ElemType::Scalar(ScalarType::F64),
                    mutable: true
                },
                ParamKind::Scalar(ScalarType::U32),
            ]
        );
    }
}
