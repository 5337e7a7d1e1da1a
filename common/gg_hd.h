/* GG_HD marks small pure functions (descriptor encoders, swizzle maths) that both the
 * kernels and the CPU unit tests call: __host__ __device__ under nvcc, plain C elsewhere. */
#ifndef GG_HD_H
#define GG_HD_H
#ifdef __CUDACC__
#define GG_HD __host__ __device__ __forceinline__
#else
#define GG_HD static inline
#endif
#endif
