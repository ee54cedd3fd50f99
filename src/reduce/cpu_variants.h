// How the reduction loops are specialised for the CPU.
// COMM_CPU_CLONES: the attribute that compiles a hot loop for AVX-512, AVX2
// and baseline x86-64 and picks one by the CPU once at load time (an ifunc).
// COMM_FLOAT16_INTRINSICS: whether the float16 loops written with F16C and
// AVX-512 intrinsics are built (else float16 takes the portable loop).
// gcc builds the library. clang builds only the sanitizer and fuzz checks
// (scripts/test-sanitized.sh), and clang 14 takes neither target_clones on
// templates nor vectors passed by value to the ops outside their target,
// so there every loop is compiled for the baseline alone.
#pragma once

#if defined(__clang__)
#define COMM_CPU_CLONES
#define COMM_FLOAT16_INTRINSICS 0
#else
#define COMM_CPU_CLONES gnu::target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")
#define COMM_FLOAT16_INTRINSICS 1
#endif
