//! `__device_struct!`: what `#[device]` expands next to a user's `#[repr(C)]` struct so that
//! kernels can keep it in memory. Its `unsafe` lives here, in the runtime's macro text, so
//! generated code holds none of its own.

/// Makes a `#[device] #[repr(C)]` struct a [`Value`](crate::Value): kernel parameters by
/// value, elements of `DeviceBuffer`s, slices and shared memory. Only `#[device]` writes it:
///
/// ```
/// #[derive(Clone, Copy)]
/// #[repr(C)]
/// pub struct Body {
///     pub pos: [f32; 3],
///     mass: f32,
/// }
///
/// gpu_dsl_runtime::__device_struct! {
///     Body { pos: [f32; 3] => pub __gpu_place_pos, mass: f32 => __gpu_place_mass }
///     size 16, align 4, offsets [0, 12]
/// }
/// ```
///
/// Each field (a name, or a tuple struct's position: `0: f32 => __gpu_place_0`) names the
/// function that projects a [`CpuPlace`](crate::cpu::CpuPlace) of the struct onto the field
/// (macro_rules cannot build `__gpu_place_pos` from `pos` itself), with the field's own
/// visibility. The size, alignment and offsets are the C layout `#[device]`
/// computed for the CUDA struct (which asserts them too); the expansion asserts at compile time
/// that the Rust struct has exactly that layout, and every field's type must be a `Value`.
#[doc(hidden)]
#[macro_export]
macro_rules! __device_struct {
    (
        $name:ident {
            $($field:tt : $ty:ty => $vis:vis $place:ident),* $(,)?
        }
        size $size:expr, align $align:expr, offsets [$($offset:expr),* $(,)?]
    ) => {
        // SAFETY: the struct is `repr(C)` with exactly the layout of its CUDA twin (asserted
        // below, and by `static_assert`s on the CUDA side), every field is a `Value` (so zero
        // bytes are valid, there are no pointers and no Drop: `Value: Copy`), and the loads
        // and stores below go field by field through the fields' own `Value` impls, touching
        // only the fields' bytes, never the padding.
        unsafe impl $crate::Value for $name {
            const ELEM: $crate::ElemType = $crate::ElemType::Value($crate::ValueType {
                name: ::core::stringify!($name),
                size: $size,
                align: $align,
            });

            #[inline(always)]
            unsafe fn __load(ptr: *mut Self) -> Self {
                $name {
                    $(
                        // SAFETY: the field lies inside the value at `ptr`, which the caller
                        // vouches for (`Value::__load`'s contract), so the field is valid and
                        // aligned and accessed only atomically.
                        $field: unsafe {
                            <$ty as $crate::Value>::__load(::core::ptr::addr_of_mut!((*ptr).$field))
                        },
                    )*
                }
            }

            #[inline(always)]
            unsafe fn __store(ptr: *mut Self, value: Self) {
                $(
                    // SAFETY: as for `__load`.
                    unsafe {
                        <$ty as $crate::Value>::__store(
                            ::core::ptr::addr_of_mut!((*ptr).$field),
                            value.$field,
                        )
                    };
                )*
            }
        }

        const _: () = {
            ::core::assert!(
                ::core::mem::size_of::<$name>() == $size,
                "{}",
                ::core::concat!(
                    "the size of `", ::core::stringify!($name), "` differs from its CUDA struct's (",
                    ::core::stringify!($size), " bytes); is it `#[repr(C)]`?"
                )
            );
            ::core::assert!(
                ::core::mem::align_of::<$name>() == $align,
                "{}",
                ::core::concat!(
                    "the alignment of `", ::core::stringify!($name),
                    "` differs from its CUDA struct's (", ::core::stringify!($align),
                    " bytes); is it `#[repr(C)]`?"
                )
            );
            $(
                ::core::assert!(
                    ::core::mem::offset_of!($name, $field) == $offset,
                    "{}",
                    ::core::concat!(
                        "field `", ::core::stringify!($field), "` of `", ::core::stringify!($name),
                        "` is not at byte ", ::core::stringify!($offset),
                        " as in its CUDA struct; is it `#[repr(C)]`?"
                    )
                );
            )*
        };

        impl $name {
            $(
                /// The field's place inside a place of the struct (for CPU twins).
                #[doc(hidden)]
                #[inline(always)]
                // Twins project only the fields they write in memory.
                #[allow(dead_code)]
                $vis fn $place<'a>(
                    place: $crate::cpu::CpuPlace<'a, $name>,
                ) -> $crate::cpu::CpuPlace<'a, $ty> {
                    // SAFETY: `offset_of!` gives where the field of type `$ty` starts in every
                    // `$name`.
                    unsafe { place.__field::<$ty>(::core::mem::offset_of!($name, $field)) }
                }
            )*
        }
    };
}

/// C's layout of a struct whose fields have these `(size, align)`s, in order: each field's
/// offset, the size and the alignment. `#[device]` asserts a struct with fields of other
/// `#[device]` structs against it, since their sizes are known only to rustc.
#[doc(hidden)]
pub const fn __c_layout<const N: usize>(fields: [(usize, usize); N]) -> ([usize; N], usize, usize) {
    let mut offsets = [0; N];
    let (mut offset, mut align): (usize, usize) = (0, 1);
    let mut i = 0;
    while i < N {
        let (size, field_align) = fields[i];
        offset = offset.div_ceil(field_align) * field_align;
        offsets[i] = offset;
        offset += size;
        if field_align > align {
            align = field_align;
        }
        i += 1;
    }
    (offsets, offset.div_ceil(align) * align, align)
}
