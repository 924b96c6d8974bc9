//! The helpers that give C++ Rust's semantics: saturating float-to-integer casts, wrapping
//! arithmetic, and the number methods C++ spells differently or lacks.

use super::Helper;

/// The Rust-semantics helpers, written after the machine's.
pub(super) const SEMANTICS: &[Helper] = &[
    Helper {
        name: "rs_as_i32",
        needs: &[],
        code: "\
// Rust's float-to-int `as`: round toward zero, saturate, NaN to 0.
__device__ __forceinline__ int rs_as_i32(float x) { return x != x ? 0 : __float2int_rz(x); }
__device__ __forceinline__ int rs_as_i32(double x) { return x != x ? 0 : __double2int_rz(x); }
",
    },
    Helper {
        name: "rs_as_u32",
        needs: &[],
        code: "\
__device__ __forceinline__ unsigned int rs_as_u32(float x) { return x != x ? 0 : __float2uint_rz(x); }
__device__ __forceinline__ unsigned int rs_as_u32(double x) { return x != x ? 0 : __double2uint_rz(x); }
",
    },
    Helper {
        name: "rs_as_i64",
        needs: &[],
        code: "\
__device__ __forceinline__ long long rs_as_i64(float x) { return x != x ? 0 : __float2ll_rz(x); }
__device__ __forceinline__ long long rs_as_i64(double x) { return x != x ? 0 : __double2ll_rz(x); }
",
    },
    Helper {
        name: "rs_as_u64",
        needs: &[],
        code: "\
__device__ __forceinline__ unsigned long long rs_as_u64(float x) { return x != x ? 0 : __float2ull_rz(x); }
__device__ __forceinline__ unsigned long long rs_as_u64(double x) { return x != x ? 0 : __double2ull_rz(x); }
",
    },
    Helper {
        name: "rs_as_small",
        needs: &[],
        code: "\
// Rust's float-to-int `as` for integers narrower than `int`: NaN to 0, saturated to `T`'s
// range (exact in floating point), rounded toward zero; the caller converts the `int` to `T`.
template <typename T> __device__ __forceinline__ int rs_as_small(double x) {
    const bool is_signed = (T)-1 < (T)0;
    const int bits = (int)sizeof(T) * 8;
    const double lo = is_signed ? -(double)(1 << (bits - 1)) : 0.0;
    const double hi = is_signed ? (double)((1 << (bits - 1)) - 1) : (double)((1 << bits) - 1);
    return x != x ? 0 : __double2int_rz(fmin(fmax(x, lo), hi));
}
// From `float`, PTX's conversion to `T`'s own width is that in one instruction: it rounds
// toward zero, clamps to the type's range and gives 0 for NaN (H100: NaN, infinities and
// out-of-range values checked for all four types).
template <typename T> __device__ __forceinline__ int rs_as_small(float x) {
    const bool is_signed = (T)-1 < (T)0;
    int r;
    if (sizeof(T) == 1 && is_signed) asm(\"cvt.rzi.s8.f32 %0, %1;\" : \"=r\"(r) : \"f\"(x));
    else if (sizeof(T) == 1) asm(\"cvt.rzi.u8.f32 %0, %1;\" : \"=r\"(r) : \"f\"(x));
    else if (is_signed) asm(\"cvt.rzi.s16.f32 %0, %1;\" : \"=r\"(r) : \"f\"(x));
    else asm(\"cvt.rzi.u16.f32 %0, %1;\" : \"=r\"(r) : \"f\"(x));
    return r;
}
",
    },
    Helper {
        name: "rs_wrapping_add",
        needs: &[],
        code: "\
// Rust integer arithmetic wraps (release semantics); C++ signed overflow is undefined.
__device__ __forceinline__ int rs_wrapping_add(int a, int b) { return (int)((unsigned int)a + (unsigned int)b); }
__device__ __forceinline__ long long rs_wrapping_add(long long a, long long b) { return (long long)((unsigned long long)a + (unsigned long long)b); }
__device__ __forceinline__ unsigned int rs_wrapping_add(unsigned int a, unsigned int b) { return a + b; }
__device__ __forceinline__ unsigned long long rs_wrapping_add(unsigned long long a, unsigned long long b) { return a + b; }
// Generic kernels instantiated for floats land here.
template <typename T> __device__ __forceinline__ T rs_wrapping_add(T a, T b) { return a + b; }
",
    },
    Helper {
        name: "rs_wrapping_sub",
        needs: &[],
        code: "\
__device__ __forceinline__ int rs_wrapping_sub(int a, int b) { return (int)((unsigned int)a - (unsigned int)b); }
__device__ __forceinline__ long long rs_wrapping_sub(long long a, long long b) { return (long long)((unsigned long long)a - (unsigned long long)b); }
__device__ __forceinline__ unsigned int rs_wrapping_sub(unsigned int a, unsigned int b) { return a - b; }
__device__ __forceinline__ unsigned long long rs_wrapping_sub(unsigned long long a, unsigned long long b) { return a - b; }
template <typename T> __device__ __forceinline__ T rs_wrapping_sub(T a, T b) { return a - b; }
",
    },
    Helper {
        name: "rs_wrapping_mul",
        needs: &[],
        code: "\
__device__ __forceinline__ int rs_wrapping_mul(int a, int b) { return (int)((unsigned int)a * (unsigned int)b); }
__device__ __forceinline__ long long rs_wrapping_mul(long long a, long long b) { return (long long)((unsigned long long)a * (unsigned long long)b); }
__device__ __forceinline__ unsigned int rs_wrapping_mul(unsigned int a, unsigned int b) { return a * b; }
__device__ __forceinline__ unsigned long long rs_wrapping_mul(unsigned long long a, unsigned long long b) { return a * b; }
template <typename T> __device__ __forceinline__ T rs_wrapping_mul(T a, T b) { return a * b; }
",
    },
    Helper {
        name: "rs_wrapping_neg",
        needs: &[],
        code: "\
__device__ __forceinline__ int rs_wrapping_neg(int a) { return (int)(0u - (unsigned int)a); }
__device__ __forceinline__ long long rs_wrapping_neg(long long a) { return (long long)(0ull - (unsigned long long)a); }
template <typename T> __device__ __forceinline__ T rs_wrapping_neg(T a) { return (T)(0 - a); }
",
    },
    Helper {
        name: "rs_wrapping_abs",
        needs: &["rs_wrapping_neg"],
        code: "\
__device__ __forceinline__ int rs_wrapping_abs(int a) { return a < 0 ? rs_wrapping_neg(a) : a; }
__device__ __forceinline__ long long rs_wrapping_abs(long long a) { return a < 0 ? rs_wrapping_neg(a) : a; }
",
    },
    Helper {
        name: "rs_saturating_add",
        needs: &[],
        code: "\
// Rust's saturating integer arithmetic: the exact result clamped to `T`'s range. Narrower
// than 64 bits it is computed exactly in 64 bits; at 64 bits the overflow is read from the
// signs (sums) or the high word (products).
template <typename T> __device__ __forceinline__ T rs_saturate_wide(long long v) {
    const bool is_signed = (T)-1 < (T)0;
    const int bits = (int)sizeof(T) * 8;
    const long long hi = (long long)(~0ull >> (64 - bits + (is_signed ? 1 : 0)));
    const long long lo = is_signed ? -hi - 1 : 0;
    return (T)(v < lo ? lo : (v > hi ? hi : v));
}
// Whether `x` is negative; false for an unsigned `T`, without comparing one with zero.
template <typename T> __device__ __forceinline__ bool rs_negative(T x) { return (T)-1 < (T)0 && (long long)x < 0ll; }
template <typename T> __device__ __forceinline__ T rs_saturating_add(T a, T b) {
    if (sizeof(T) < 8) return rs_saturate_wide<T>((long long)a + (long long)b);
    const T s = (T)((unsigned long long)a + (unsigned long long)b);
    if ((T)-1 > (T)0) return s < a ? (T)~0ull : s;
    const bool overflow = rs_negative(a) == rs_negative(b) && rs_negative(s) != rs_negative(a);
    return overflow ? (rs_negative(a) ? (T)(1ull << 63) : (T)~(1ull << 63)) : s;
}
template <typename T> __device__ __forceinline__ T rs_saturating_sub(T a, T b) {
    if (sizeof(T) < 8) return rs_saturate_wide<T>((long long)a - (long long)b);
    if ((T)-1 > (T)0) return a > b ? (T)(a - b) : (T)0;
    const T d = (T)((unsigned long long)a - (unsigned long long)b);
    const bool overflow = rs_negative(a) != rs_negative(b) && rs_negative(d) != rs_negative(a);
    return overflow ? (rs_negative(a) ? (T)(1ull << 63) : (T)~(1ull << 63)) : d;
}
template <typename T> __device__ __forceinline__ T rs_saturating_mul(T a, T b) {
    const bool is_signed = (T)-1 < (T)0;
    if (sizeof(T) < 4 || (sizeof(T) == 4 && is_signed)) return rs_saturate_wide<T>((long long)a * (long long)b);
    if (sizeof(T) == 4) {
        const unsigned long long p = (unsigned long long)a * (unsigned long long)b;
        return p > 0xffffffffull ? (T)~0u : (T)p;
    }
    if (!is_signed) {
        const unsigned long long x = (unsigned long long)a, y = (unsigned long long)b;
        return __umul64hi(x, y) != 0ull ? (T)~0ull : (T)(x * y);
    }
    const long long x = (long long)a, y = (long long)b;
    const long long lo = (long long)((unsigned long long)x * (unsigned long long)y);
    const long long hi = __mul64hi(x, y);
    const bool overflow = hi != (lo >> 63);
    return overflow ? (((x < 0ll) != (y < 0ll)) ? (T)(1ull << 63) : (T)~(1ull << 63)) : (T)lo;
}
",
    },
    Helper {
        name: "rs_wrapping_pow",
        needs: &["rs_wrapping_mul"],
        code: "\
template <typename T> __device__ __forceinline__ T rs_wrapping_pow(T base, unsigned int exp) {
    T acc = 1;
    while (exp > 0) {
        if (exp & 1u) acc = rs_wrapping_mul(acc, base);
        base = rs_wrapping_mul(base, base);
        exp >>= 1;
    }
    return acc;
}
",
    },
    Helper {
        name: "rs_min",
        needs: &[],
        code: "\
template <typename T> __device__ __forceinline__ T rs_min(T a, T b) { return b < a ? b : a; }
// A type parameter instantiated with a float ignores a NaN operand, as `f32::min` does.
__device__ __forceinline__ float rs_min(float a, float b) { return fminf(a, b); }
__device__ __forceinline__ double rs_min(double a, double b) { return fmin(a, b); }
",
    },
    Helper {
        name: "rs_max",
        needs: &[],
        code: "\
template <typename T> __device__ __forceinline__ T rs_max(T a, T b) { return a < b ? b : a; }
__device__ __forceinline__ float rs_max(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ double rs_max(double a, double b) { return fmax(a, b); }
",
    },
    Helper {
        name: "rs_clamp",
        needs: &[],
        code: "\
// As Rust's clamp: a NaN stays NaN. The bound below, then the one above, which the compiler
// turns into a max and a min of integers (nested, its selects were kept as compares and
// selects: a stereo matcher's clamped window ran at 0.94 x its CUDA C twin's min(max(..))).
// Only bounds Rust rejects (lo > hi, where it panics) give another result.
template <typename T> __device__ __forceinline__ T rs_clamp(T x, T lo, T hi) { T m = x < lo ? lo : x; return m > hi ? hi : m; }
",
    },
    Helper {
        name: "rs_powi",
        needs: &[],
        code: "\
// Repeated squaring, as Rust's powi lowers to.
template <typename T> __device__ __forceinline__ T rs_powi(T base, int exp) {
    unsigned int n = exp < 0 ? 0u - (unsigned int)exp : (unsigned int)exp;
    T acc = 1;
    while (n > 0) {
        if (n & 1u) acc *= base;
        base *= base;
        n >>= 1;
    }
    return exp < 0 ? (T)1 / acc : acc;
}
",
    },
    Helper {
        name: "rs_fract",
        needs: &[],
        code: "\
__device__ __forceinline__ float rs_fract(float x) { return x - truncf(x); }
__device__ __forceinline__ double rs_fract(double x) { return x - trunc(x); }
",
    },
    Helper {
        name: "rs_float_euclid",
        needs: &[],
        code: "\
// Rust's float `log`, `rem_euclid` and `div_euclid`, computed as its own definitions do.
__device__ __forceinline__ float rs_log(float x, float base) { return logf(x) / logf(base); }
__device__ __forceinline__ double rs_log(double x, double base) { return log(x) / log(base); }
__device__ __forceinline__ float rs_rem_euclid_float(float a, float b) { float r = fmodf(a, b); return r < 0.0f ? r + fabsf(b) : r; }
__device__ __forceinline__ double rs_rem_euclid_float(double a, double b) { double r = fmod(a, b); return r < 0.0 ? r + fabs(b) : r; }
__device__ __forceinline__ float rs_div_euclid_float(float a, float b) {
    float q = truncf(a / b);
    if (fmodf(a, b) < 0.0f) return b > 0.0f ? q - 1.0f : q + 1.0f;
    return q;
}
__device__ __forceinline__ double rs_div_euclid_float(double a, double b) {
    double q = trunc(a / b);
    if (fmod(a, b) < 0.0) return b > 0.0 ? q - 1.0 : q + 1.0;
    return q;
}
",
    },
    Helper {
        name: "rs_recip",
        needs: &[],
        code: "\
__device__ __forceinline__ float rs_recip(float x) { return 1.0f / x; }
__device__ __forceinline__ double rs_recip(double x) { return 1.0 / x; }
",
    },
    Helper {
        name: "rs_signum",
        needs: &[],
        code: "\
__device__ __forceinline__ float rs_signum(float x) { return x != x ? x : copysignf(1.0f, x); }
__device__ __forceinline__ double rs_signum(double x) { return x != x ? x : copysign(1.0, x); }
",
    },
    Helper {
        name: "rs_is_nan",
        needs: &[],
        code: "\
__device__ __forceinline__ bool rs_is_nan(float x) { return x != x; }
__device__ __forceinline__ bool rs_is_nan(double x) { return x != x; }
",
    },
    Helper {
        name: "rs_is_sign",
        needs: &[],
        code: "\
// The sign bit, as Rust's `is_sign_negative` / `is_sign_positive` read it (of -0.0 and NaNs too).
__device__ __forceinline__ bool rs_is_sign_negative(float x) { return signbit(x) != 0; }
__device__ __forceinline__ bool rs_is_sign_negative(double x) { return signbit(x) != 0; }
__device__ __forceinline__ bool rs_is_sign_positive(float x) { return signbit(x) == 0; }
__device__ __forceinline__ bool rs_is_sign_positive(double x) { return signbit(x) == 0; }
",
    },
    Helper {
        name: "rs_is_infinite",
        needs: &[],
        code: "\
__device__ __forceinline__ bool rs_is_infinite(float x) { return fabsf(x) == __int_as_float(0x7f800000); }
__device__ __forceinline__ bool rs_is_infinite(double x) { return fabs(x) == __longlong_as_double(0x7ff0000000000000ll); }
",
    },
    Helper {
        name: "rs_is_finite",
        needs: &[],
        code: "\
__device__ __forceinline__ bool rs_is_finite(float x) { return fabsf(x) < __int_as_float(0x7f800000); }
__device__ __forceinline__ bool rs_is_finite(double x) { return fabs(x) < __longlong_as_double(0x7ff0000000000000ll); }
",
    },
    Helper {
        name: "rs_to_degrees",
        needs: &[],
        code: "\
__device__ __forceinline__ float rs_to_degrees(float x) { return x * 57.2957795130823208767981548141051703f; }
__device__ __forceinline__ double rs_to_degrees(double x) { return x * 57.2957795130823208767981548141051703; }
",
    },
    Helper {
        name: "rs_to_radians",
        needs: &[],
        code: "\
__device__ __forceinline__ float rs_to_radians(float x) { return x * 0.017453292519943295769236907684886127f; }
__device__ __forceinline__ double rs_to_radians(double x) { return x * 0.017453292519943295769236907684886127; }
",
    },
    Helper {
        name: "rs_trailing_zeros",
        needs: &[],
        code: "\
__device__ __forceinline__ unsigned int rs_trailing_zeros(int x) { return x == 0 ? 32u : (unsigned int)(__ffs(x) - 1); }
__device__ __forceinline__ unsigned int rs_trailing_zeros(unsigned int x) { return x == 0 ? 32u : (unsigned int)(__ffs((int)x) - 1); }
__device__ __forceinline__ unsigned int rs_trailing_zeros(long long x) { return x == 0 ? 64u : (unsigned int)(__ffsll(x) - 1); }
__device__ __forceinline__ unsigned int rs_trailing_zeros(unsigned long long x) { return x == 0 ? 64u : (unsigned int)(__ffsll((long long)x) - 1); }
// A type parameter narrower than `int` (a sign-extended nonzero value keeps its lowest set bit).
template <typename T> __device__ __forceinline__ unsigned int rs_trailing_zeros(T x) { return x == 0 ? (unsigned int)sizeof(T) * 8u : (unsigned int)(__ffs((int)x) - 1); }
",
    },
    Helper {
        name: "rs_int_bits",
        needs: &["rs_div"],
        code: "\
// Rust's integer methods for every width, templated on the receiver's C++ type: `B` is its
// width, `rs_uint<T>` the unsigned type of that width, and `rs_bits` its bits in 64.
template <typename T> struct rs_uint { typedef T type; };
template <> struct rs_uint<signed char> { typedef unsigned char type; };
template <> struct rs_uint<short> { typedef unsigned short type; };
template <> struct rs_uint<int> { typedef unsigned int type; };
template <> struct rs_uint<long long> { typedef unsigned long long type; };
template <typename T> __device__ __forceinline__ unsigned long long rs_bits(T x) { return (unsigned long long)x & (~0ull >> (64 - sizeof(T) * 8)); }
template <typename T> __device__ __forceinline__ T rs_rem_euclid(T a, T b, unsigned int line) {
    T r = rs_rem(a, b, line);
    if constexpr ((T)-1 < (T)0) {
        if (r < (T)0) r = b < (T)0 ? (T)(r - b) : (T)(r + b);
    }
    return r;
}
// Rust's `div_euclid`: the quotient that makes `rem_euclid` non-negative; MIN / -1 wraps.
template <typename T> __device__ __forceinline__ T rs_div_euclid(T a, T b, unsigned int line) {
    T q = rs_div(a, b, line);
    if constexpr ((T)-1 < (T)0) {
        if (rs_rem(a, b, line) < (T)0) q = b > (T)0 ? (T)(q - 1) : (T)(q + 1);
    }
    return q;
}
template <typename T> __device__ __forceinline__ T rs_div_ceil(T a, T b, unsigned int line) {
    T q = rs_div(a, b, line);
    return a % b != (T)0 ? (T)(q + 1) : q;
}
template <typename T> __device__ __forceinline__ typename rs_uint<T>::type rs_unsigned_abs(T x) {
    typedef typename rs_uint<T>::type U;
    return x < (T)0 ? (U)((U)0 - (U)x) : (U)x;
}
template <typename T> __device__ __forceinline__ unsigned int rs_count_zeros(T x) {
    return (unsigned int)(sizeof(T) * 8) - (unsigned int)__popcll(rs_bits(x));
}
template <typename T> __device__ __forceinline__ unsigned int rs_leading_ones(T x) {
    return (unsigned int)__clzll((long long)~(rs_bits(x) << (64 - sizeof(T) * 8)));
}
template <typename T> __device__ __forceinline__ unsigned int rs_trailing_ones(T x) {
    unsigned long long v = ~rs_bits(x);
    unsigned int n = v == 0ull ? 64u : (unsigned int)(__ffsll((long long)v) - 1);
    return n < sizeof(T) * 8 ? n : (unsigned int)(sizeof(T) * 8);
}
template <typename T> __device__ __forceinline__ typename rs_uint<T>::type rs_abs_diff(T a, T b) {
    typedef typename rs_uint<T>::type U;
    return a > b ? (U)((U)a - (U)b) : (U)((U)b - (U)a);
}
__device__ __forceinline__ unsigned int rs_rotate_left(unsigned int x, unsigned int n) { return __funnelshift_l(x, x, n); }
__device__ __forceinline__ int rs_rotate_left(int x, unsigned int n) { return (int)__funnelshift_l((unsigned int)x, (unsigned int)x, n); }
__device__ __forceinline__ unsigned int rs_rotate_right(unsigned int x, unsigned int n) { return __funnelshift_r(x, x, n); }
__device__ __forceinline__ int rs_rotate_right(int x, unsigned int n) { return (int)__funnelshift_r((unsigned int)x, (unsigned int)x, n); }
template <typename T> __device__ __forceinline__ T rs_rotate_left(T x, unsigned int n) {
    const unsigned int b = sizeof(T) * 8;
    unsigned long long v = rs_bits(x);
    n %= b;
    return (T)(n == 0 ? v : (v << n) | (v >> (b - n)));
}
template <typename T> __device__ __forceinline__ T rs_rotate_right(T x, unsigned int n) {
    const unsigned int b = sizeof(T) * 8;
    return rs_rotate_left(x, (b - n % b) % b);
}
template <typename T> __device__ __forceinline__ T rs_wrapping_shl(T x, unsigned int n) { return (T)(rs_bits(x) << (n & (sizeof(T) * 8 - 1))); }
template <typename T> __device__ __forceinline__ T rs_wrapping_shr(T x, unsigned int n) { return (T)(x >> (n & (sizeof(T) * 8 - 1))); }
template <typename T> __device__ __forceinline__ T rs_wrapping_neg_bits(T x) { return (T)(0ull - (unsigned long long)x); }
template <typename T> __device__ __forceinline__ T rs_reverse_bits(T x) {
    if constexpr (sizeof(T) == 8) return (T)__brevll((unsigned long long)x);
    else return (T)(__brev((unsigned int)rs_bits(x)) >> (32 - sizeof(T) * 8));
}
template <typename T> __device__ __forceinline__ T rs_swap_bytes(T x) {
    if constexpr (sizeof(T) == 8) {
        unsigned long long v = (unsigned long long)x;
        unsigned int lo = __byte_perm((unsigned int)v, 0u, 0x0123u), hi = __byte_perm((unsigned int)(v >> 32), 0u, 0x0123u);
        return (T)(((unsigned long long)lo << 32) | hi);
    } else if constexpr (sizeof(T) == 4) {
        return (T)__byte_perm((unsigned int)x, 0u, 0x0123u);
    } else if constexpr (sizeof(T) == 2) {
        return (T)__byte_perm((unsigned int)rs_bits(x), 0u, 0x01u);
    } else {
        return x;
    }
}
template <typename T> __device__ __forceinline__ T rs_int_signum(T x) { return (T)((x > (T)0) - (x < (T)0)); }
template <typename T> __device__ __forceinline__ bool rs_is_power_of_two(T x) { return x != 0 && (x & (T)(x - 1)) == 0; }
// An overflowing power wraps to 0, as release Rust's does.
template <typename T> __device__ __forceinline__ T rs_next_power_of_two(T x) {
    unsigned long long v = rs_bits(x);
    if (v <= 1) return (T)1;
    unsigned int p = 64u - (unsigned int)__clzll((long long)(v - 1));
    return p >= sizeof(T) * 8 ? (T)0 : (T)(1ull << p);
}
",
    },
    Helper {
        name: "rs_int_roots",
        needs: &[],
        code: "\
// Rust's `ilog2` and `ilog10` (a value below 1 reported in checked mode, as Rust panics) and
// `isqrt` of an unsigned value (a double's root, corrected to the exact floor).
template <typename T> __device__ __forceinline__ unsigned int rs_ilog2(T x, unsigned int line) {
#ifdef GPU_CHECKED
    if (x <= (T)0) rs_fail(5u, line, 0ull, 0ull);
#endif
    return 63u - (unsigned int)__clzll((long long)(unsigned long long)x);
}
template <typename T> __device__ __forceinline__ unsigned int rs_ilog10(T x, unsigned int line) {
#ifdef GPU_CHECKED
    if (x <= (T)0) rs_fail(5u, line, 0ull, 0ull);
#endif
    unsigned long long v = (unsigned long long)x;
    unsigned int n = 0u;
    while (v >= 10ull) { v /= 10ull; n++; }
    return n;
}
template <typename T> __device__ __forceinline__ T rs_isqrt(T x) {
    unsigned long long v = (unsigned long long)x;
    unsigned long long r = (unsigned long long)sqrt((double)v);
    while (r > 0ull && r > v / r) r--;
    while (r + 1ull <= v / (r + 1ull)) r++;
    return (T)r;
}
",
    },
    Helper {
        name: "rs_ascii",
        needs: &[],
        code: "\
// A byte's ASCII classes and case, as Rust's `u8` methods define them (whitespace: space, tab,
// line feed, form feed, carriage return).
__device__ __forceinline__ bool rs_is_ascii_digit(unsigned char c) { return c >= 48 && c <= 57; }
__device__ __forceinline__ bool rs_is_ascii_uppercase(unsigned char c) { return c >= 65 && c <= 90; }
__device__ __forceinline__ bool rs_is_ascii_lowercase(unsigned char c) { return c >= 97 && c <= 122; }
__device__ __forceinline__ bool rs_is_ascii_alphabetic(unsigned char c) { return rs_is_ascii_uppercase(c) || rs_is_ascii_lowercase(c); }
__device__ __forceinline__ bool rs_is_ascii_alphanumeric(unsigned char c) { return rs_is_ascii_alphabetic(c) || rs_is_ascii_digit(c); }
__device__ __forceinline__ bool rs_is_ascii_whitespace(unsigned char c) { return c == 32 || c == 9 || c == 10 || c == 12 || c == 13; }
__device__ __forceinline__ unsigned char rs_to_ascii_uppercase(unsigned char c) { return rs_is_ascii_lowercase(c) ? (unsigned char)(c - 32) : c; }
__device__ __forceinline__ unsigned char rs_to_ascii_lowercase(unsigned char c) { return rs_is_ascii_uppercase(c) ? (unsigned char)(c + 32) : c; }
",
    },
    Helper {
        name: "rs_int_multiples",
        needs: &["rs_div"],
        code: "\
// Rust's `is_multiple_of` (0 is a multiple of 0 only) and `next_multiple_of` (wrapping, as in
// release Rust; a zero divisor reported as `%` reports it).
template <typename T> __device__ __forceinline__ bool rs_is_multiple_of(T a, T b) { return b == (T)0 ? a == (T)0 : a % b == (T)0; }
template <typename T> __device__ __forceinline__ T rs_next_multiple_of(T a, T b, unsigned int line) {
    T r = rs_rem(a, b, line);
    return r == (T)0 ? a : (T)(a + (T)(b - r));
}
",
    },
];
