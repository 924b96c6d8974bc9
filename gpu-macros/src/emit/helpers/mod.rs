//! Device functions the generated code calls where C++ and Rust differ. Only the helpers a
//! kernel uses are written into its source, so the output stays short and readable.

mod semantics;

/// One helper: its name, the helpers it calls, and its definition.
pub struct Helper {
    pub name: &'static str,
    pub needs: &'static [&'static str],
    pub code: &'static str,
}

/// The helpers of the machine: types, checked mode and assertions, memory, tensor cores,
/// synchronisation, random numbers and atomics.
const MACHINE: &[Helper] = &[
    Helper {
        name: "rs_tuple",
        needs: &[],
        code: "\
// Rust tuples: fields _0, _1, ...
template <typename A, typename B> struct rs_tuple2 { A _0; B _1; };
template <typename A, typename B, typename C> struct rs_tuple3 { A _0; B _1; C _2; };
template <typename A, typename B, typename C, typename D> struct rs_tuple4 { A _0; B _1; C _2; D _3; };
template <typename A, typename B, typename C, typename D, typename E> struct rs_tuple5 { A _0; B _1; C _2; D _3; E _4; };
template <typename A, typename B, typename C, typename D, typename E, typename F> struct rs_tuple6 { A _0; B _1; C _2; D _3; E _4; F _5; };
// `==` and `!=` compare field by field, as Rust's derived `PartialEq` of tuples does.
template <typename A, typename B> __device__ __forceinline__ bool operator==(const rs_tuple2<A, B>& a, const rs_tuple2<A, B>& b) { return a._0 == b._0 && a._1 == b._1; }
template <typename A, typename B, typename C> __device__ __forceinline__ bool operator==(const rs_tuple3<A, B, C>& a, const rs_tuple3<A, B, C>& b) { return a._0 == b._0 && a._1 == b._1 && a._2 == b._2; }
template <typename A, typename B, typename C, typename D> __device__ __forceinline__ bool operator==(const rs_tuple4<A, B, C, D>& a, const rs_tuple4<A, B, C, D>& b) { return a._0 == b._0 && a._1 == b._1 && a._2 == b._2 && a._3 == b._3; }
template <typename A, typename B, typename C, typename D, typename E> __device__ __forceinline__ bool operator==(const rs_tuple5<A, B, C, D, E>& a, const rs_tuple5<A, B, C, D, E>& b) { return a._0 == b._0 && a._1 == b._1 && a._2 == b._2 && a._3 == b._3 && a._4 == b._4; }
template <typename A, typename B, typename C, typename D, typename E, typename F> __device__ __forceinline__ bool operator==(const rs_tuple6<A, B, C, D, E, F>& a, const rs_tuple6<A, B, C, D, E, F>& b) { return a._0 == b._0 && a._1 == b._1 && a._2 == b._2 && a._3 == b._3 && a._4 == b._4 && a._5 == b._5; }
template <typename A, typename B> __device__ __forceinline__ bool operator!=(const rs_tuple2<A, B>& a, const rs_tuple2<A, B>& b) { return !(a == b); }
template <typename A, typename B, typename C> __device__ __forceinline__ bool operator!=(const rs_tuple3<A, B, C>& a, const rs_tuple3<A, B, C>& b) { return !(a == b); }
template <typename A, typename B, typename C, typename D> __device__ __forceinline__ bool operator!=(const rs_tuple4<A, B, C, D>& a, const rs_tuple4<A, B, C, D>& b) { return !(a == b); }
template <typename A, typename B, typename C, typename D, typename E> __device__ __forceinline__ bool operator!=(const rs_tuple5<A, B, C, D, E>& a, const rs_tuple5<A, B, C, D, E>& b) { return !(a == b); }
template <typename A, typename B, typename C, typename D, typename E, typename F> __device__ __forceinline__ bool operator!=(const rs_tuple6<A, B, C, D, E, F>& a, const rs_tuple6<A, B, C, D, E, F>& b) { return !(a == b); }
",
    },
    Helper {
        name: "rs_sin_cos",
        needs: &["rs_tuple"],
        code: "\
// Rust's `sin_cos`: both parts from one reduction of the angle.
__device__ __forceinline__ rs_tuple2<float, float> rs_sin_cos(float x) { float s, c; sincosf(x, &s, &c); return rs_tuple2<float, float>{s, c}; }
__device__ __forceinline__ rs_tuple2<double, double> rs_sin_cos(double x) { double s, c; sincos(x, &s, &c); return rs_tuple2<double, double>{s, c}; }
",
    },
    Helper {
        name: "rs_arr",
        needs: &[],
        code: "\
// Rust arrays as values (fields, arguments, results): C arrays cannot be copied, a struct
// holding one can. `rs_arr_of` turns a C array (at any depth) into one, and is the identity on
// everything else; `rs_assign` stores one into a C array.
template <typename T, unsigned long long N> struct rs_arr {
    T v[N];
    __device__ __forceinline__ T& operator[](unsigned long long i) { return v[i]; }
    __device__ __forceinline__ const T& operator[](unsigned long long i) const { return v[i]; }
};
template <typename T, unsigned long long N>
__device__ __forceinline__ bool operator==(const rs_arr<T, N>& a, const rs_arr<T, N>& b) {
    for (unsigned long long i = 0; i < N; ++i) if (!(a.v[i] == b.v[i])) return false;
    return true;
}
template <typename T, unsigned long long N>
__device__ __forceinline__ bool operator!=(const rs_arr<T, N>& a, const rs_arr<T, N>& b) { return !(a == b); }
template <typename T> struct rs_value { typedef T type; };
template <typename T, unsigned long long N> struct rs_value<T[N]> { typedef rs_arr<typename rs_value<T>::type, N> type; };
template <typename T> __device__ __forceinline__ const T& rs_arr_of(const T& x) { return x; }
template <typename T, unsigned long long N>
__device__ __forceinline__ rs_arr<typename rs_value<T>::type, N> rs_arr_of(const T (&a)[N]) {
    rs_arr<typename rs_value<T>::type, N> r;
    for (unsigned long long i = 0; i < N; ++i) r.v[i] = rs_arr_of(a[i]);
    return r;
}
template <typename T, unsigned long long N>
__device__ __forceinline__ rs_arr<T, N> rs_arr_fill(const T& x) {
    rs_arr<T, N> r;
    for (unsigned long long i = 0; i < N; ++i) r.v[i] = x;
    return r;
}
template <typename D, typename S> __device__ __forceinline__ void rs_assign(D& d, const S& s) { d = s; }
template <typename D, typename S, unsigned long long N>
__device__ __forceinline__ void rs_assign(D (&d)[N], const rs_arr<S, N>& s) {
    for (unsigned long long i = 0; i < N; ++i) rs_assign(d[i], s.v[i]);
}
",
    },
    Helper {
        name: "rs_bits",
        needs: &[],
        code: "\
__device__ __forceinline__ unsigned int rs_bits(float x) { return __float_as_uint(x); }
__device__ __forceinline__ unsigned long long rs_bits(double x) { return (unsigned long long)__double_as_longlong(x); }
",
    },
    Helper {
        name: "rs_bits64",
        needs: &[],
        code: "\
// A type parameter's bits, zero-extended, and back; halves (structs) keep theirs in `.bits`.
__device__ __forceinline__ unsigned long long rs_bits64(signed char x) { return (unsigned char)x; }
__device__ __forceinline__ unsigned long long rs_bits64(unsigned char x) { return x; }
__device__ __forceinline__ unsigned long long rs_bits64(short x) { return (unsigned short)x; }
__device__ __forceinline__ unsigned long long rs_bits64(unsigned short x) { return x; }
__device__ __forceinline__ unsigned long long rs_bits64(int x) { return (unsigned int)x; }
__device__ __forceinline__ unsigned long long rs_bits64(unsigned int x) { return x; }
__device__ __forceinline__ unsigned long long rs_bits64(long long x) { return (unsigned long long)x; }
__device__ __forceinline__ unsigned long long rs_bits64(unsigned long long x) { return x; }
__device__ __forceinline__ unsigned long long rs_bits64(float x) { return __float_as_uint(x); }
__device__ __forceinline__ unsigned long long rs_bits64(double x) { return (unsigned long long)__double_as_longlong(x); }
template <typename T> __device__ __forceinline__ unsigned long long rs_bits64(T x) { return x.bits; }
template <typename T> __device__ __forceinline__ T rs_from_bits64(unsigned long long b) { T x; x.bits = (unsigned short)b; return x; }
template <> __device__ __forceinline__ signed char rs_from_bits64<signed char>(unsigned long long b) { return (signed char)(unsigned char)b; }
template <> __device__ __forceinline__ unsigned char rs_from_bits64<unsigned char>(unsigned long long b) { return (unsigned char)b; }
template <> __device__ __forceinline__ short rs_from_bits64<short>(unsigned long long b) { return (short)(unsigned short)b; }
template <> __device__ __forceinline__ unsigned short rs_from_bits64<unsigned short>(unsigned long long b) { return (unsigned short)b; }
template <> __device__ __forceinline__ int rs_from_bits64<int>(unsigned long long b) { return (int)(unsigned int)b; }
template <> __device__ __forceinline__ unsigned int rs_from_bits64<unsigned int>(unsigned long long b) { return (unsigned int)b; }
template <> __device__ __forceinline__ long long rs_from_bits64<long long>(unsigned long long b) { return (long long)b; }
template <> __device__ __forceinline__ unsigned long long rs_from_bits64<unsigned long long>(unsigned long long b) { return b; }
template <> __device__ __forceinline__ float rs_from_bits64<float>(unsigned long long b) { return __uint_as_float((unsigned int)b); }
template <> __device__ __forceinline__ double rs_from_bits64<double>(unsigned long long b) { return __longlong_as_double((long long)b); }
",
    },
    Helper {
        name: "rs_half",
        needs: &[],
        code: "\
// half::f16 and half::bf16: 16-bit storage; arithmetic in f32, rounded back after each
// operation, as the half crate does. Conversions are PTX cvt, so no CUDA headers are needed.
struct rs_f16 {
    unsigned short bits;
    rs_f16() = default;
    __device__ explicit rs_f16(float f) { asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(bits) : \"f\"(f)); }
    __device__ explicit rs_f16(double d) { asm(\"cvt.rn.f16.f64 %0, %1;\" : \"=h\"(bits) : \"d\"(d)); }
    // Integers, for `i as T` and literals in generic code: through f32, exact below 2^24.
    __device__ explicit rs_f16(int i) : rs_f16((float)i) {}
    __device__ explicit rs_f16(unsigned int i) : rs_f16((float)i) {}
    __device__ explicit rs_f16(long long i) : rs_f16((float)i) {}
    __device__ explicit rs_f16(unsigned long long i) : rs_f16((float)i) {}
    __device__ operator float() const { float f; asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(bits)); return f; }
    static __device__ rs_f16 from_bits(unsigned short b) { rs_f16 h; h.bits = b; return h; }
};
struct rs_bf16 {
    unsigned short bits;
    rs_bf16() = default;
    __device__ explicit rs_bf16(float f) { asm(\"cvt.rn.bf16.f32 %0, %1;\" : \"=h\"(bits) : \"f\"(f)); }
    // Through f32: a double rounding, which differs from a direct one only in rare ties.
    __device__ explicit rs_bf16(double d) : rs_bf16((float)d) {}
    __device__ explicit rs_bf16(int i) : rs_bf16((float)i) {}
    __device__ explicit rs_bf16(unsigned int i) : rs_bf16((float)i) {}
    __device__ explicit rs_bf16(long long i) : rs_bf16((float)i) {}
    __device__ explicit rs_bf16(unsigned long long i) : rs_bf16((float)i) {}
    __device__ operator float() const { return __uint_as_float((unsigned int)bits << 16); }
    static __device__ rs_bf16 from_bits(unsigned short b) { rs_bf16 h; h.bits = b; return h; }
};
#define RS_HALF_OPS(H) \\
    __device__ __forceinline__ H operator+(H a, H b) { return H((float)a + (float)b); } \\
    __device__ __forceinline__ H operator-(H a, H b) { return H((float)a - (float)b); } \\
    __device__ __forceinline__ H operator*(H a, H b) { return H((float)a * (float)b); } \\
    __device__ __forceinline__ H operator/(H a, H b) { return H((float)a / (float)b); } \\
    __device__ __forceinline__ H operator-(H a) { H r = a; r.bits ^= 0x8000; return r; } \\
    __device__ __forceinline__ float rs_to_f32(H x) { return (float)x; } \\
    __device__ __forceinline__ double rs_to_f64(H x) { return (double)(float)x; }
RS_HALF_OPS(rs_f16)
RS_HALF_OPS(rs_bf16)
// Warp shuffles of a type parameter instantiated with a half type move its bits.
#define RS_HALF_SHFL(H) \\
    __device__ __forceinline__ H __shfl_sync(unsigned int m, H v, int l, int w = 32) { return H::from_bits((unsigned short)__shfl_sync(m, (unsigned int)v.bits, l, w)); } \\
    __device__ __forceinline__ H __shfl_up_sync(unsigned int m, H v, unsigned int d, int w = 32) { return H::from_bits((unsigned short)__shfl_up_sync(m, (unsigned int)v.bits, d, w)); } \\
    __device__ __forceinline__ H __shfl_down_sync(unsigned int m, H v, unsigned int d, int w = 32) { return H::from_bits((unsigned short)__shfl_down_sync(m, (unsigned int)v.bits, d, w)); } \\
    __device__ __forceinline__ H __shfl_xor_sync(unsigned int m, H v, int l, int w = 32) { return H::from_bits((unsigned short)__shfl_xor_sync(m, (unsigned int)v.bits, l, w)); }
RS_HALF_SHFL(rs_f16)
RS_HALF_SHFL(rs_bf16)
__device__ __forceinline__ bool rs_is_nan(rs_f16 x) { return (x.bits & 0x7fff) > 0x7c00; }
__device__ __forceinline__ bool rs_is_infinite(rs_f16 x) { return (x.bits & 0x7fff) == 0x7c00; }
__device__ __forceinline__ bool rs_is_finite(rs_f16 x) { return (x.bits & 0x7fff) < 0x7c00; }
__device__ __forceinline__ bool rs_is_nan(rs_bf16 x) { return (x.bits & 0x7fff) > 0x7f80; }
__device__ __forceinline__ bool rs_is_infinite(rs_bf16 x) { return (x.bits & 0x7fff) == 0x7f80; }
__device__ __forceinline__ bool rs_is_finite(rs_bf16 x) { return (x.bits & 0x7fff) < 0x7f80; }
",
    },
    Helper {
        name: "rs_asserts_on",
        needs: &[],
        code: "\
// The kernel has assertions, which report through the error slot in unchecked builds too.
#define RS_ASSERTS
",
    },
    Helper {
        name: "rs_checked",
        needs: &[],
        code: "\
// Checked mode (NVRTC option -DGPU_CHECKED) and assertions: the first failed check or assertion
// of a launch is recorded in the runtime's error slot and the thread exits; the runtime reports
// it as a Rust panic.
#if defined(GPU_CHECKED) || defined(RS_ASSERTS)
struct rs_error_slot { unsigned int flag; unsigned int kind; unsigned int kernel_id; unsigned int line; unsigned long long index; unsigned long long len; unsigned int block[3]; unsigned int thread[3]; unsigned int assertion; unsigned int arg_types; unsigned long long args[8]; };
extern \"C\" { __device__ rs_error_slot* rs_error_slot_ptr; __device__ unsigned int rs_kernel_id; }
// The slot, claimed for this thread's failure with its common fields filled; null when another
// failure came first.
__device__ __forceinline__ rs_error_slot* rs_claim(unsigned int kind, unsigned int line) {
    rs_error_slot* slot = rs_error_slot_ptr;
    if (slot == 0 || atomicCAS(&slot->flag, 0u, 1u) != 0u) return 0;
    slot->kind = kind; slot->kernel_id = rs_kernel_id; slot->line = line;
    slot->block[0] = blockIdx.x; slot->block[1] = blockIdx.y; slot->block[2] = blockIdx.z;
    slot->thread[0] = threadIdx.x; slot->thread[1] = threadIdx.y; slot->thread[2] = threadIdx.z;
    return slot;
}
__device__ __noinline__ void rs_fail(unsigned int kind, unsigned int line, unsigned long long index, unsigned long long len) {
    rs_error_slot* slot = rs_claim(kind, line);
    if (slot != 0) {
        slot->index = index; slot->len = len;
        __threadfence_system();
    }
    asm volatile(\"exit;\");
}
#endif
#ifdef GPU_CHECKED
__device__ __forceinline__ unsigned long long rs_idx(unsigned long long i, unsigned long long len, unsigned int line) {
    if (i >= len) rs_fail(1u, line, i, len);
    return i;
}
#define RS_CHECK_DIV(a, b, line) if (b == 0) rs_fail(2u, line, (unsigned long long)a, 0ull)
#else
#define rs_idx(i, len, line) (i)
#define RS_CHECK_DIV(a, b, line)
#endif
",
    },
    Helper {
        name: "rs_sub_len",
        needs: &["rs_checked"],
        code: "\
// The length of x[start..end], checked in checked mode to lie within x's `len`.
#ifdef GPU_CHECKED
__device__ __forceinline__ unsigned long long rs_sub_len(unsigned long long start, unsigned long long end, unsigned long long len, unsigned int line) {
    if (end > len) rs_fail(1u, line, end, len);
    if (start > end) rs_fail(1u, line, start, end);
    return end - start;
}
#else
#define rs_sub_len(start, end, len, line) ((end) - (start))
#endif
",
    },
    Helper {
        name: "rs_assert",
        needs: &["rs_asserts_on", "rs_checked"],
        code: "\
// A failed assert! records its number in the kernel's message table and its arguments, a 4-bit
// type code and the bits of each; the host formats the message with Rust's formatting.
struct rs_panic_args { unsigned int types; unsigned long long bits[8]; };
#ifdef GPU_CHECKED
#define RS_DEBUG_ASSERTS true
#else
#define RS_DEBUG_ASSERTS false
#endif
__device__ __forceinline__ void rs_panic_arg(rs_panic_args& a, int i, unsigned int code, unsigned long long bits) { a.types |= code << (4 * i); a.bits[i] = bits; }
__device__ __forceinline__ void rs_panic_arg(rs_panic_args& a, int i, bool v) { rs_panic_arg(a, i, 1u, v ? 1ull : 0ull); }
__device__ __forceinline__ void rs_panic_arg(rs_panic_args& a, int i, int v) { rs_panic_arg(a, i, 2u, (unsigned int)v); }
__device__ __forceinline__ void rs_panic_arg(rs_panic_args& a, int i, signed char v) { rs_panic_arg(a, i, 11u, (unsigned char)v); }
__device__ __forceinline__ void rs_panic_arg(rs_panic_args& a, int i, unsigned char v) { rs_panic_arg(a, i, 12u, v); }
__device__ __forceinline__ void rs_panic_arg(rs_panic_args& a, int i, short v) { rs_panic_arg(a, i, 13u, (unsigned short)v); }
__device__ __forceinline__ void rs_panic_arg(rs_panic_args& a, int i, unsigned short v) { rs_panic_arg(a, i, 14u, v); }
__device__ __forceinline__ void rs_panic_arg(rs_panic_args& a, int i, unsigned int v) { rs_panic_arg(a, i, 3u, v); }
__device__ __forceinline__ void rs_panic_arg(rs_panic_args& a, int i, long long v) { rs_panic_arg(a, i, 4u, (unsigned long long)v); }
__device__ __forceinline__ void rs_panic_arg(rs_panic_args& a, int i, unsigned long long v) { rs_panic_arg(a, i, 5u, v); }
__device__ __forceinline__ void rs_panic_arg(rs_panic_args& a, int i, float v) { rs_panic_arg(a, i, 7u, __float_as_uint(v)); }
__device__ __forceinline__ void rs_panic_arg(rs_panic_args& a, int i, double v) { rs_panic_arg(a, i, 8u, (unsigned long long)__double_as_longlong(v)); }
#ifdef RS_HALF_OPS
__device__ __forceinline__ void rs_panic_arg(rs_panic_args& a, int i, rs_f16 v) { rs_panic_arg(a, i, 9u, v.bits); }
__device__ __forceinline__ void rs_panic_arg(rs_panic_args& a, int i, rs_bf16 v) { rs_panic_arg(a, i, 10u, v.bits); }
#endif
// Never returns, so a device function may end in `panic!` instead of a value.
__device__ __noinline__ __attribute__((noreturn)) void rs_assert_fail(unsigned int id, unsigned int line, const rs_panic_args& a) {
    rs_error_slot* slot = rs_claim(4u, line);
    if (slot != 0) {
        slot->assertion = id; slot->arg_types = a.types;
        for (int i = 0; i < 8; i++) slot->args[i] = a.bits[i];
        __threadfence_system();
    }
    asm volatile(\"exit;\");
    __builtin_unreachable();
}
",
    },
    Helper {
        name: "rs_vec4",
        needs: &[],
        code: "\
// Four elements of a generic `T` moved as one: a 16-byte access for 4-byte types. Alignment is
// capped at 16 bytes, what an index that is a multiple of 4 guarantees for any element size.
template <typename T> struct alignas(4 * sizeof(T) < 16 ? 4 * sizeof(T) : 16) rs_vec4 { T x, y, z, w; };
",
    },
    Helper {
        name: "rs_table",
        needs: &[],
        code: "\
// A `#[constant]` table: passed by value, so each launch carries its own copy in the constant bank.
template <typename T, unsigned long long N> struct rs_table { T v[N]; };
",
    },
    Helper {
        name: "rs_vec2",
        needs: &[],
        code: "\
// Two elements of a 16-bit float or a generic `T` moved as one, aligned to the pair's size (at
// most 16 bytes), which an even index gives.
template <typename T> struct alignas(2 * sizeof(T) < 16 ? 2 * sizeof(T) : 16) rs_vec2 { T x, y; };
",
    },
    Helper {
        name: "rs_incl",
        needs: &[],
        code: "\
// The step of a narrowed `a..=b` loop's counter. A 32-bit counter steps past `b`, as C's
// `i <= b; ++i` does: its range (the emitter's fact of the variable) leaves room for one more,
// and a loop the compiler can count is a loop it can unroll. A 64-bit one stops at `b`, which
// may be its type's maximum: `more` then ends the loop.
__device__ __forceinline__ void rs_incl_next(int& v, int e, bool& more) { ++v; }
__device__ __forceinline__ void rs_incl_next(unsigned int& v, unsigned int e, bool& more) { ++v; }
template <typename T> __device__ __forceinline__ void rs_incl_next(T& v, T e, bool& more) { more = v != e; if (more) ++v; }
",
    },
    Helper {
        name: "rs_step_by",
        needs: &[],
        code: "\
// The step of a narrowed `step_by` loop's counter whose bound plus step fits in `int` where
// `Simple` (a constant only the C++ compiler decides): then C's `i += s`, whose trips the
// compiler counts; else a step clamped at the bound, which never wraps.
template <bool Simple, typename T> __device__ __forceinline__ T rs_step_by(T i, unsigned long long s, T e) {
    if constexpr (Simple) return (T)(i + (T)s);
    else return (unsigned long long)(e - i) > s ? (T)(i + s) : e;
}
",
    },
    Helper {
        name: "rs_narrow",
        needs: &[],
        code: "\
// 32-bit index arithmetic whose fit depends on a constant's value (or on the launch's, through
// `rs_fits`): the emitter's bound of the index, computed saturating (an overflow never looks
// small), picks `int` when it fits and the unchanged 64-bit computation when it does not.
template <bool Fits> struct rs_index_type { typedef unsigned long long type; };
template <> struct rs_index_type<true> { typedef int type; };
// Its unsigned counterpart, for divisions of values known to be non-negative.
template <typename T> struct rs_unsigned_of { typedef T type; };
template <> struct rs_unsigned_of<int> { typedef unsigned int type; };
// Its signed counterpart, for comparisons of signed values that may be negative.
template <typename T> struct rs_signed_of { typedef T type; };
template <> struct rs_signed_of<unsigned long long> { typedef long long type; };
__host__ __device__ constexpr unsigned long long rs_bound_add(unsigned long long a, unsigned long long b) { return a + b < a ? ~0ull : a + b; }
__host__ __device__ constexpr unsigned long long rs_bound_sub(unsigned long long a, unsigned long long b) { return a < b ? 0ull : a - b; }
__host__ __device__ constexpr unsigned long long rs_bound_mul(unsigned long long a, unsigned long long b) { return a != 0ull && b > ~0ull / a ? ~0ull : a * b; }
__host__ __device__ constexpr unsigned long long rs_bound_div(unsigned long long a, unsigned long long b) { return b == 0ull ? a : a / b; }
__host__ __device__ constexpr unsigned long long rs_bound_min(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
__host__ __device__ constexpr unsigned long long rs_bound_max(unsigned long long a, unsigned long long b) { return a < b ? b : a; }
",
    },
    Helper {
        name: "rs_div",
        needs: &["rs_checked"],
        code: "\
// Integer division as Rust's: dividing by zero or MIN / -1 panics in checked mode; unchecked,
// MIN / -1 wraps (it is undefined in C++) and a zero divisor gives the hardware's result.
template <typename T> __device__ __forceinline__ T rs_div(T a, T b, unsigned int line) {
    RS_CHECK_DIV(a, b, line);
    if ((T)-1 < (T)0 && b == (T)-1) {
#ifdef GPU_CHECKED
        if (a == (T)(1ull << (sizeof(T) * 8 - 1))) rs_fail(3u, line, (unsigned long long)a, (unsigned long long)b);
#endif
        return (T)(0 - (unsigned long long)a);
    }
    return a / b;
}
template <typename T> __device__ __forceinline__ T rs_rem(T a, T b, unsigned int line) {
    RS_CHECK_DIV(a, b, line);
    if ((T)-1 < (T)0 && b == (T)-1) {
#ifdef GPU_CHECKED
        if (a == (T)(1ull << (sizeof(T) * 8 - 1))) rs_fail(3u, line, (unsigned long long)a, (unsigned long long)b);
#endif
        return (T)0;
    }
    return a % b;
}
",
    },
    Helper {
        name: "rs_fast_tanh",
        needs: &[],
        code: "\
// The hardware tanh approximation (sm_75 and newer).
__device__ __forceinline__ float rs_fast_tanh(float x) { float y; asm(\"tanh.approx.f32 %0, %1;\" : \"=f\"(y) : \"f\"(x)); return y; }
",
    },
    Helper {
        name: "rs_lane_id",
        needs: &[],
        code: "\
__device__ __forceinline__ unsigned int rs_lane_id() { unsigned int lane; asm(\"mov.u32 %0, %%laneid;\" : \"=r\"(lane)); return lane; }
",
    },
    Helper {
        name: "rs_smem_addr",
        needs: &[],
        code: "\
// A generic pointer to shared memory as the 32-bit shared-window address PTX's ldmatrix and
// cp.async take (CUDA's builtin, which the compiler folds into the pointer's computation).
__device__ __forceinline__ unsigned int rs_smem_addr(const void* p) { return (unsigned int)__cvta_generic_to_shared(p); }
",
    },
    Helper {
        name: "rs_ldmatrix",
        needs: &["rs_smem_addr"],
        code: "\
// ldmatrix: a warp loads 8x8 matrices of 16-bit values, each lane giving one 16-byte row (word
// `index` of `base`); .trans delivers them transposed. The row's address is formed in 32 bits
// from the base's shared address, which stays in a register across a loop.
__device__ __forceinline__ void rs_ldmatrix_x1(unsigned int* d, const unsigned int* base, unsigned int index) {
    asm volatile(\"ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\" : \"=r\"(d[0]) : \"r\"(rs_smem_addr(base) + index * 4u) : \"memory\");
}
__device__ __forceinline__ void rs_ldmatrix_x1_trans(unsigned int* d, const unsigned int* base, unsigned int index) {
    asm volatile(\"ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];\" : \"=r\"(d[0]) : \"r\"(rs_smem_addr(base) + index * 4u) : \"memory\");
}
__device__ __forceinline__ void rs_ldmatrix_x2(unsigned int* d, const unsigned int* base, unsigned int index) {
    asm volatile(\"ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\" : \"=r\"(d[0]), \"=r\"(d[1]) : \"r\"(rs_smem_addr(base) + index * 4u) : \"memory\");
}
__device__ __forceinline__ void rs_ldmatrix_x2_trans(unsigned int* d, const unsigned int* base, unsigned int index) {
    asm volatile(\"ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\" : \"=r\"(d[0]), \"=r\"(d[1]) : \"r\"(rs_smem_addr(base) + index * 4u) : \"memory\");
}
__device__ __forceinline__ void rs_ldmatrix_x4(unsigned int* d, const unsigned int* base, unsigned int index) {
    asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\" : \"=r\"(d[0]), \"=r\"(d[1]), \"=r\"(d[2]), \"=r\"(d[3]) : \"r\"(rs_smem_addr(base) + index * 4u) : \"memory\");
}
__device__ __forceinline__ void rs_ldmatrix_x4_trans(unsigned int* d, const unsigned int* base, unsigned int index) {
    asm volatile(\"ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\" : \"=r\"(d[0]), \"=r\"(d[1]), \"=r\"(d[2]), \"=r\"(d[3]) : \"r\"(rs_smem_addr(base) + index * 4u) : \"memory\");
}
",
    },
    Helper {
        name: "rs_cp_async",
        needs: &["rs_smem_addr", "rs_checked"],
        code: "\
// cp.async: 16 bytes from global to shared memory without passing through registers (.cg:
// cached in L2 only); a source size of 0 reads nothing and writes zeros.
template <typename D, typename S> __device__ __forceinline__ void rs_cp_async_16(D* dst, unsigned int dst_index, const S* src, unsigned long long src_len, unsigned long long index, bool valid, unsigned int line) {
#ifdef GPU_CHECKED
    if (valid) rs_idx(index + (16 / sizeof(S) - 1), src_len, line);
#endif
    // An invalid copy reads nothing: its address is the slice's start, chosen without a branch.
    const S* from = src + (valid ? index : 0ull);
    asm volatile(\"cp.async.cg.shared.global [%0], [%1], 16, %2;\"
                 :: \"r\"(rs_smem_addr(dst) + dst_index * (unsigned int)sizeof(D)), \"l\"(from), \"r\"(valid ? 16u : 0u) : \"memory\");
}
__device__ __forceinline__ void rs_cp_async_commit() { asm volatile(\"cp.async.commit_group;\" ::: \"memory\"); }
// wait_group takes an immediate: a constant argument folds the switch away. Waiting for more
// groups than asked is always correct, so counts past 7 wait for all.
__device__ __forceinline__ void rs_cp_async_wait(unsigned int n) {
    switch (n) {
    case 1: asm volatile(\"cp.async.wait_group 1;\" ::: \"memory\"); break;
    case 2: asm volatile(\"cp.async.wait_group 2;\" ::: \"memory\"); break;
    case 3: asm volatile(\"cp.async.wait_group 3;\" ::: \"memory\"); break;
    case 4: asm volatile(\"cp.async.wait_group 4;\" ::: \"memory\"); break;
    case 5: asm volatile(\"cp.async.wait_group 5;\" ::: \"memory\"); break;
    case 6: asm volatile(\"cp.async.wait_group 6;\" ::: \"memory\"); break;
    case 7: asm volatile(\"cp.async.wait_group 7;\" ::: \"memory\"); break;
    default: asm volatile(\"cp.async.wait_group 0;\" ::: \"memory\"); break;
    }
}
",
    },
    Helper {
        name: "rs_grid_sync",
        needs: &["rs_checked"],
        code: "\
// grid_sync(): a barrier for every thread of a cooperative launch (all blocks resident). The
// runtime passes each launch a zeroed word of its stream as the kernel's last parameter
// (launches on one stream never overlap); the kernel's thread 0 keeps it in shared memory for
// device functions. Sense reversal on the word: thread 0 of each block adds 1, block 0 adds
// 0x80000000 - (blocks - 1), so the sum flips the top bit exactly when the last block arrives
// and leaves the low bits as they were: the word needs no reset between barriers or launches.
// Once a thread of this kernel has panicked (the error slot holds its id) the barrier stops
// waiting, so the launch ends and reports the panic instead of hanging on a thread that exited.
// The block's writes reach thread 0 through the first __syncthreads; its add releases them at
// GPU scope and the load that sees the last block's add acquires every block's, which the last
// __syncthreads hands on to the block (the pattern of CUTLASS's grid barrier; two full
// __threadfence()s instead cost more a barrier).
__shared__ unsigned int* rs_grid_word;
__device__ __noinline__ void rs_grid_sync() {
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
        unsigned int* word = rs_grid_word;
        const unsigned int blocks = gridDim.x * gridDim.y * gridDim.z;
        const bool first = blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0;
        const unsigned int add = first ? 0x80000000u - (blocks - 1u) : 1u;
        unsigned int old;
        unsigned int now;
        asm volatile(\"atom.add.release.gpu.global.u32 %0, [%1], %2;\" : \"=r\"(old) : \"l\"(word), \"r\"(add) : \"memory\");
        do {
            asm volatile(\"ld.acquire.gpu.global.u32 %0, [%1];\" : \"=r\"(now) : \"l\"(word) : \"memory\");
#if defined(GPU_CHECKED) || defined(RS_ASSERTS)
            if (rs_error_slot_ptr != 0 && *(volatile unsigned int*)&rs_error_slot_ptr->flag != 0u
                && *(volatile unsigned int*)&rs_error_slot_ptr->kernel_id == rs_kernel_id) break;
#endif
        } while (((now ^ old) & 0x80000000u) == 0u);
    }
    __syncthreads();
}
",
    },
    Helper {
        name: "rs_uniform_f32",
        needs: &[],
        code: "\
// The top 24 bits as a float in [0, 1): exact, and the same mapping as the host's uniform_f32.
__device__ __forceinline__ float rs_uniform_f32(unsigned int bits) { return (float)(bits >> 8) * 5.9604644775390625e-08f; }
",
    },
    Helper {
        name: "rs_wgmma",
        needs: &["rs_smem_addr"],
        code: "\
// wgmma (sm_90a): a warpgroup's asynchronous matrix multiply from shared memory. A descriptor
// holds the operand's shared address and its leading and stride byte offsets, each in 16-byte
// units, and selects the 128-byte swizzle (bits 62-63 = 1), whose pattern repeats every 1024
// bytes of address: tiles start on 1024-byte boundaries.
template <typename T> __device__ __forceinline__ unsigned long long rs_wgmma_desc(const T* base, unsigned int index, unsigned int lbo, unsigned int sbo) {
    const unsigned int addr = rs_smem_addr(base) + index * (unsigned int)sizeof(T);
    return (unsigned long long)((addr & 0x3FFFFu) >> 4) | ((unsigned long long)((lbo & 0x3FFFFu) >> 4) << 16)
        | ((unsigned long long)((sbo & 0x3FFFFu) >> 4) << 32) | (1ull << 62);
}
__device__ __forceinline__ void rs_wgmma_fence() { asm volatile(\"wgmma.fence.sync.aligned;\" ::: \"memory\"); }
__device__ __forceinline__ void rs_wgmma_commit() { asm volatile(\"wgmma.commit_group.sync.aligned;\" ::: \"memory\"); }
// wait_group takes an immediate: a constant argument folds the switch away; counts past 7 wait
// for all, which is always correct.
__device__ __forceinline__ void rs_wgmma_wait(unsigned int n) {
    switch (n) {
    case 1: asm volatile(\"wgmma.wait_group.sync.aligned 1;\" ::: \"memory\"); break;
    case 2: asm volatile(\"wgmma.wait_group.sync.aligned 2;\" ::: \"memory\"); break;
    case 3: asm volatile(\"wgmma.wait_group.sync.aligned 3;\" ::: \"memory\"); break;
    case 4: asm volatile(\"wgmma.wait_group.sync.aligned 4;\" ::: \"memory\"); break;
    case 5: asm volatile(\"wgmma.wait_group.sync.aligned 5;\" ::: \"memory\"); break;
    case 6: asm volatile(\"wgmma.wait_group.sync.aligned 6;\" ::: \"memory\"); break;
    case 7: asm volatile(\"wgmma.wait_group.sync.aligned 7;\" ::: \"memory\"); break;
    default: asm volatile(\"wgmma.wait_group.sync.aligned 0;\" ::: \"memory\"); break;
    }
}
",
    },
    Helper {
        name: "rs_mbarrier",
        needs: &["rs_smem_addr"],
        code: "\
// mbarriers (sm_80+): a 64-bit shared word counting arrivals per phase. try_wait suspends the
// thread in hardware for a while before reporting, so the loop does not spin hot.
__device__ __forceinline__ void rs_mbarrier_init(unsigned long long* bar, unsigned int count) {
    asm volatile(\"mbarrier.init.shared::cta.b64 [%0], %1;\" :: \"r\"(rs_smem_addr(bar)), \"r\"(count) : \"memory\");
}
__device__ __forceinline__ void rs_mbarrier_arrive(unsigned long long* bar) {
    asm volatile(\"mbarrier.arrive.shared::cta.b64 _, [%0];\" :: \"r\"(rs_smem_addr(bar)) : \"memory\");
}
__device__ __forceinline__ void rs_cp_async_mbarrier_arrive(unsigned long long* bar) {
    asm volatile(\"cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\" :: \"r\"(rs_smem_addr(bar)) : \"memory\");
}
__device__ __forceinline__ void rs_mbarrier_wait(unsigned long long* bar, unsigned int parity) {
    unsigned int done = 0;
    while (!done) {
        asm volatile(\"{\\n.reg .pred p;\\nmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\\nselp.u32 %0, 1, 0, p;\\n}\\n\"
                     : \"=r\"(done) : \"r\"(rs_smem_addr(bar)), \"r\"(parity) : \"memory\");
    }
}
",
    },
    Helper {
        name: "rs_tensor_map",
        needs: &[],
        code: "\
// A tensor-map descriptor as the driver encodes it (CUtensorMap), passed `__grid_constant__`.
struct __align__(64) rs_tensor_map { unsigned long long opaque[16]; };
",
    },
    Helper {
        name: "rs_tma",
        needs: &["rs_smem_addr", "rs_tensor_map", "rs_mbarrier"],
        code: "\
// Hopper's tensor copy (sm_90): the box of `map` at column x, row y into shared memory, its
// bytes completed on `bar`; `map` is the generic address of a __grid_constant__ parameter.
__device__ __forceinline__ void rs_tma_load_2d(void* dst, const rs_tensor_map* map, int x, int y, unsigned long long* bar) {
    asm volatile(\"cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\"
                 :: \"r\"(rs_smem_addr(dst)), \"l\"(reinterpret_cast<unsigned long long>(map)), \"r\"(x), \"r\"(y), \"r\"(rs_smem_addr(bar)) : \"memory\");
}
// Announces `bytes` of tensor copies for the barrier's current phase, then arrives.
__device__ __forceinline__ void rs_mbarrier_arrive_expect_tx(unsigned long long* bar, unsigned int bytes) {
    asm volatile(\"mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\" :: \"r\"(rs_smem_addr(bar)), \"r\"(bytes) : \"memory\");
}
",
    },
    Helper {
        name: "rs_fence_proxy_async",
        needs: &[],
        code: "\
// Orders this thread's generic-proxy writes of shared memory (stores, cp.async) before the
// async proxy's reads (wgmma, bulk copies) that a following barrier releases.
__device__ __forceinline__ void rs_fence_proxy_async() { asm volatile(\"fence.proxy.async.shared::cta;\" ::: \"memory\"); }
",
    },
    Helper {
        name: "rs_dynamic_smem_1024",
        needs: &[],
        code: "\
// 1024-byte aligned, as the 128-byte swizzle of wgmma operand tiles needs.
extern __shared__ __align__(1024) unsigned char rs_dynamic_smem[];
__device__ __forceinline__ unsigned long long rs_dynamic_smem_size() { unsigned int size; asm(\"mov.u32 %0, %%dynamic_smem_size;\" : \"=r\"(size)); return size; }
",
    },
    Helper {
        name: "rs_dynamic_smem",
        needs: &[],
        code: "\
extern __shared__ __align__(16) unsigned char rs_dynamic_smem[];
// The dynamic shared memory of this launch, in bytes.
__device__ __forceinline__ unsigned long long rs_dynamic_smem_size() { unsigned int size; asm(\"mov.u32 %0, %%dynamic_smem_size;\" : \"=r\"(size)); return size; }
",
    },
    Helper {
        name: "rs_philox4x32_10",
        needs: &[],
        code: "\
// Philox4x32-10 (Salmon et al., SC'11), as in Random123; the host reference is gpu_dsl_runtime::random.
__device__ __forceinline__ void rs_philox4x32_10(unsigned int out[4], unsigned int c0, unsigned int c1, unsigned int c2, unsigned int c3, unsigned int k0, unsigned int k1) {
    for (int round = 0; round < 10; ++round) {
        unsigned int hi0 = __umulhi(0xD2511F53u, c0), lo0 = 0xD2511F53u * c0;
        unsigned int hi1 = __umulhi(0xCD9E8D57u, c2), lo1 = 0xCD9E8D57u * c2;
        unsigned int n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
        c0 = n0; c1 = lo1; c2 = n2; c3 = lo0;
        k0 += 0x9E3779B9u; k1 += 0xBB67AE85u;
    }
    out[0] = c0; out[1] = c1; out[2] = c2; out[3] = c3;
}
",
    },
    Helper {
        name: "rs_atomics",
        needs: &[],
        code: "\
// Atomics for every kernel type: CUDA's own where it has one, a compare-and-swap loop where not.
// A volatile load is a relaxed one (ld.volatile), read where the writers' atomics landed.
template <typename T> __device__ __forceinline__ T rs_atomic_load(const T* p) { return *(const volatile T*)p; }
__device__ __forceinline__ int rs_atomic_add(int* p, int v) { return atomicAdd(p, v); }
__device__ __forceinline__ unsigned int rs_atomic_add(unsigned int* p, unsigned int v) { return atomicAdd(p, v); }
__device__ __forceinline__ long long rs_atomic_add(long long* p, long long v) { return (long long)atomicAdd((unsigned long long*)p, (unsigned long long)v); }
__device__ __forceinline__ unsigned long long rs_atomic_add(unsigned long long* p, unsigned long long v) { return atomicAdd(p, v); }
__device__ __forceinline__ float rs_atomic_add(float* p, float v) { return atomicAdd(p, v); }
__device__ __forceinline__ double rs_atomic_add(double* p, double v) { return atomicAdd(p, v); }
template <typename T> __device__ __forceinline__ T rs_atomic_sub(T* p, T v) { return rs_atomic_add(p, (T)(0 - v)); }
__device__ __forceinline__ float rs_atomic_sub(float* p, float v) { return atomicAdd(p, -v); }
__device__ __forceinline__ double rs_atomic_sub(double* p, double v) { return atomicAdd(p, -v); }
__device__ __forceinline__ int rs_atomic_min(int* p, int v) { return atomicMin(p, v); }
__device__ __forceinline__ unsigned int rs_atomic_min(unsigned int* p, unsigned int v) { return atomicMin(p, v); }
__device__ __forceinline__ long long rs_atomic_min(long long* p, long long v) { return atomicMin(p, v); }
__device__ __forceinline__ unsigned long long rs_atomic_min(unsigned long long* p, unsigned long long v) { return atomicMin(p, v); }
__device__ __forceinline__ int rs_atomic_max(int* p, int v) { return atomicMax(p, v); }
__device__ __forceinline__ unsigned int rs_atomic_max(unsigned int* p, unsigned int v) { return atomicMax(p, v); }
__device__ __forceinline__ long long rs_atomic_max(long long* p, long long v) { return atomicMax(p, v); }
__device__ __forceinline__ unsigned long long rs_atomic_max(unsigned long long* p, unsigned long long v) { return atomicMax(p, v); }
__device__ __forceinline__ int rs_atomic_exchange(int* p, int v) { return atomicExch(p, v); }
__device__ __forceinline__ unsigned int rs_atomic_exchange(unsigned int* p, unsigned int v) { return atomicExch(p, v); }
__device__ __forceinline__ long long rs_atomic_exchange(long long* p, long long v) { return (long long)atomicExch((unsigned long long*)p, (unsigned long long)v); }
__device__ __forceinline__ unsigned long long rs_atomic_exchange(unsigned long long* p, unsigned long long v) { return atomicExch(p, v); }
__device__ __forceinline__ float rs_atomic_exchange(float* p, float v) { return atomicExch(p, v); }
__device__ __forceinline__ double rs_atomic_exchange(double* p, double v) { return __longlong_as_double((long long)atomicExch((unsigned long long*)p, (unsigned long long)__double_as_longlong(v))); }
__device__ __forceinline__ int rs_atomic_compare_exchange(int* p, int current, int v) { return atomicCAS(p, current, v); }
__device__ __forceinline__ unsigned int rs_atomic_compare_exchange(unsigned int* p, unsigned int current, unsigned int v) { return atomicCAS(p, current, v); }
__device__ __forceinline__ long long rs_atomic_compare_exchange(long long* p, long long current, long long v) { return (long long)atomicCAS((unsigned long long*)p, (unsigned long long)current, (unsigned long long)v); }
__device__ __forceinline__ unsigned long long rs_atomic_compare_exchange(unsigned long long* p, unsigned long long current, unsigned long long v) { return atomicCAS(p, current, v); }
__device__ __forceinline__ float rs_atomic_compare_exchange(float* p, float current, float v) { return __int_as_float(atomicCAS((int*)p, __float_as_int(current), __float_as_int(v))); }
__device__ __forceinline__ double rs_atomic_compare_exchange(double* p, double current, double v) { return __longlong_as_double((long long)atomicCAS((unsigned long long*)p, (unsigned long long)__double_as_longlong(current), (unsigned long long)__double_as_longlong(v))); }
// Float min/max as Rust's f32::min/max (a NaN operand is ignored): a compare-and-swap loop on
// the bits, so NaN never defeats the comparison.
__device__ __forceinline__ float rs_atomic_min(float* p, float v) {
    int old = *(volatile int*)p;
    for (;;) {
        int next = __float_as_int(fminf(__int_as_float(old), v));
        if (next == old) return __int_as_float(old);
        int seen = atomicCAS((int*)p, old, next);
        if (seen == old) return __int_as_float(old);
        old = seen;
    }
}
__device__ __forceinline__ float rs_atomic_max(float* p, float v) {
    int old = *(volatile int*)p;
    for (;;) {
        int next = __float_as_int(fmaxf(__int_as_float(old), v));
        if (next == old) return __int_as_float(old);
        int seen = atomicCAS((int*)p, old, next);
        if (seen == old) return __int_as_float(old);
        old = seen;
    }
}
__device__ __forceinline__ double rs_atomic_min(double* p, double v) {
    unsigned long long old = *(volatile unsigned long long*)p;
    for (;;) {
        unsigned long long next = (unsigned long long)__double_as_longlong(fmin(__longlong_as_double((long long)old), v));
        if (next == old) return __longlong_as_double((long long)old);
        unsigned long long seen = atomicCAS((unsigned long long*)p, old, next);
        if (seen == old) return __longlong_as_double((long long)old);
        old = seen;
    }
}
__device__ __forceinline__ double rs_atomic_max(double* p, double v) {
    unsigned long long old = *(volatile unsigned long long*)p;
    for (;;) {
        unsigned long long next = (unsigned long long)__double_as_longlong(fmax(__longlong_as_double((long long)old), v));
        if (next == old) return __longlong_as_double((long long)old);
        unsigned long long seen = atomicCAS((unsigned long long*)p, old, next);
        if (seen == old) return __longlong_as_double((long long)old);
        old = seen;
    }
}
__device__ __forceinline__ int rs_atomic_and(int* p, int v) { return atomicAnd(p, v); }
__device__ __forceinline__ unsigned int rs_atomic_and(unsigned int* p, unsigned int v) { return atomicAnd(p, v); }
__device__ __forceinline__ long long rs_atomic_and(long long* p, long long v) { return (long long)atomicAnd((unsigned long long*)p, (unsigned long long)v); }
__device__ __forceinline__ unsigned long long rs_atomic_and(unsigned long long* p, unsigned long long v) { return atomicAnd(p, v); }
__device__ __forceinline__ int rs_atomic_or(int* p, int v) { return atomicOr(p, v); }
__device__ __forceinline__ unsigned int rs_atomic_or(unsigned int* p, unsigned int v) { return atomicOr(p, v); }
__device__ __forceinline__ long long rs_atomic_or(long long* p, long long v) { return (long long)atomicOr((unsigned long long*)p, (unsigned long long)v); }
__device__ __forceinline__ unsigned long long rs_atomic_or(unsigned long long* p, unsigned long long v) { return atomicOr(p, v); }
__device__ __forceinline__ int rs_atomic_xor(int* p, int v) { return atomicXor(p, v); }
__device__ __forceinline__ unsigned int rs_atomic_xor(unsigned int* p, unsigned int v) { return atomicXor(p, v); }
__device__ __forceinline__ long long rs_atomic_xor(long long* p, long long v) { return (long long)atomicXor((unsigned long long*)p, (unsigned long long)v); }
__device__ __forceinline__ unsigned long long rs_atomic_xor(unsigned long long* p, unsigned long long v) { return atomicXor(p, v); }
",
    },
];

/// Every helper, in the order they are written into a source.
pub fn all() -> impl Iterator<Item = &'static Helper> {
    MACHINE.iter().chain(semantics::SEMANTICS)
}
