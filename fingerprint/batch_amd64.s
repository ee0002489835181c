#include "textflag.h"

// xxHash64 (seed 0) of eight strings at a time, one per 64-bit lane of a
// ZMM register (AVX-512 F and DQ: VPMULLQ, mask registers). Each lane
// runs the scalar algorithm of github.com/cespare/xxhash/v2; a lane whose
// string has no more of a step's input is masked off for that step.
//
// Words are not gathered (with VPGATHERQQ, 48-63-byte strings took 6.9 ns
// each, and 3.8 with the gathers replaced by register moves): each
// string's next 32 bytes are loaded whole and the 8x4 words transposed,
// so that register k holds word k of every string. A load reads up to 32
// bytes a stripe past a string with fewer stripes than the longest in
// its group, and the tail's load up to 31 bytes past a string's end: the
// caller passes only groups whose reads all stay inside data.
//
// Registers:
//   Z0 start offsets, Z1 end offsets, Z2 lengths, Z3 scratch, Z4 a
//   lane's steps left, Z5-Z8 the stripe accumulators v1-v4, Z9 h,
//   Z10-Z13 four words of each lane, Z14, Z15, Z28, Z31 scratch,
//   Z16 0xff, Z17 4, Z18 3, Z19 and Z27 the transposes' indexes,
//   Z20-Z24 prime1-5, Z25 v1's start (prime1+prime2), Z26 v4's start
//   (-prime1), Z29 8, Z30 1.
//   R8-R15 the eight strings' offsets, AX where a load starts.

#define PRIME1 $0x9E3779B185EBCA87
#define PRIME2 $0xC2B2AE3D27D4EB4F
#define PRIME3 $0x165667B19E3779F9
#define PRIME4 $0x85EBCA77C2B2AE63
#define PRIME5 $0x27D4EB2F165667C5

// ROUND sets v (under mask K1) to round(v, w): rotl(v + w*prime2, 31) * prime1.
#define ROUND(w, v) \
	VPMULLQ Z21, w, w \
	VPADDQ  w, v, w \
	VPROLQ  $31, w, w \
	VPMULLQ Z20, w, K1, v

// MERGE folds accumulator v into h: h ^= round(0, v); h = h*prime1 + prime4.
#define MERGE(v) \
	VPMULLQ Z21, v, Z15 \
	VPROLQ  $31, Z15, Z15 \
	VPMULLQ Z20, Z15, Z15 \
	VPXORQ  Z15, Z14, Z14 \
	VPMULLQ Z20, Z14, Z14 \
	VPADDQ  Z23, Z14, Z14

// WORD folds word w into h in lanes with words left (Z4):
// h ^= round(0, w); h = rotl(h, 27)*prime1 + prime4.
#define WORD(w) \
	VPTESTMQ Z4, Z4, K1 \
	VPMULLQ  Z21, w, Z14 \
	VPROLQ   $31, Z14, Z14 \
	VPMULLQ  Z20, Z14, Z14 \
	VPXORQ   Z14, Z9, Z14 \
	VPROLQ   $27, Z14, Z14 \
	VPMULLQ  Z20, Z14, Z14 \
	VPADDQ   Z23, Z14, K1, Z9 \
	VPSUBQ   Z30, Z4, K1, Z4

// BYTE folds the next byte of Z3 into h in lanes with bytes left (Z4):
// h ^= b*prime5; h = rotl(h, 11)*prime1.
#define BYTE \
	VPTESTMQ Z4, Z4, K1 \
	VPANDQ   Z16, Z3, Z14 \
	VPMULLQ  Z24, Z14, Z14 \
	VPXORQ   Z14, Z9, Z14 \
	VPROLQ   $11, Z14, Z14 \
	VPMULLQ  Z20, Z14, K1, Z9 \
	VPSRLQ   $8, Z3, Z3 \
	VPSUBQ   Z30, Z4, K1, Z4

// LOAD4 loads 32 bytes at AX+R8 .. AX+R15 and transposes them: Z10-Z13
// hold words 0-3 of each lane.
#define LOAD4 \
	VMOVDQU      (AX)(R8*1), Y10 \
	VINSERTI64X4 $1, (AX)(R9*1), Z10, Z10 \
	VMOVDQU      (AX)(R10*1), Y11 \
	VINSERTI64X4 $1, (AX)(R11*1), Z11, Z11 \
	VMOVDQU      (AX)(R12*1), Y12 \
	VINSERTI64X4 $1, (AX)(R13*1), Z12, Z12 \
	VMOVDQU      (AX)(R14*1), Y13 \
	VINSERTI64X4 $1, (AX)(R15*1), Z13, Z13 \
	VMOVDQA64    Z19, Z14 \
	VPERMI2Q     Z11, Z10, Z14 \
	VMOVDQA64    Z27, Z15 \
	VPERMI2Q     Z11, Z10, Z15 \
	VMOVDQA64    Z19, Z28 \
	VPERMI2Q     Z13, Z12, Z28 \
	VMOVDQA64    Z27, Z31 \
	VPERMI2Q     Z13, Z12, Z31 \
	VSHUFI64X2   $0x44, Z28, Z14, Z10 \
	VSHUFI64X2   $0xEE, Z28, Z14, Z11 \
	VSHUFI64X2   $0x44, Z31, Z15, Z12 \
	VSHUFI64X2   $0xEE, Z31, Z15, Z13

#define BROADCAST(c, z) \
	MOVQ c, AX \
	VPBROADCASTQ AX, z

// func sum64x8(data *byte, offsets *int32, out *uint64, groups int) int
TEXT ·sum64x8(SB), NOSPLIT, $64-40
	MOVQ data+0(FP), SI
	MOVQ offsets+8(FP), DI
	MOVQ out+16(FP), DX
	MOVQ groups+24(FP), CX
	XORQ BX, BX

	BROADCAST($0xff, Z16)
	BROADCAST($4, Z17)
	BROADCAST($3, Z18)
	BROADCAST(PRIME1, Z20)
	BROADCAST(PRIME2, Z21)
	BROADCAST(PRIME3, Z22)
	BROADCAST(PRIME4, Z23)
	BROADCAST(PRIME5, Z24)
	MOVQ PRIME1, AX
	MOVQ PRIME2, R8
	ADDQ AX, R8
	VPBROADCASTQ R8, Z25
	NEGQ AX
	VPBROADCASTQ AX, Z26
	BROADCAST($8, Z29)
	BROADCAST($1, Z30)
	VMOVDQU64 transpose01<>(SB), Z19
	VMOVDQU64 transpose23<>(SB), Z27

group:
	CMPQ BX, CX
	JGE  done
	VPMOVSXDQ (DI), Z0
	VPMOVSXDQ 4(DI), Z1
	VPSUBQ    Z0, Z1, Z2
	// A string shorter than 8 bytes (or a negative length) is left to
	// the caller.
	VPCMPQ    $1, Z29, Z2, K1
	KORTESTB  K1, K1
	JNZ       done

	// Prefetch as many bytes as this group's, 2 KiB past its end: the
	// strings are read in order, and a batch is mapped from the page
	// cache, where the loads above otherwise waited on memory.
	MOVLQSX 32(DI), AX
	MOVLQSX 0(DI), R9
	SUBQ    AX, R9
	LEAQ    2048(SI)(AX*1), AX

prefetch:
	PREFETCHT0 (AX)
	ADDQ       $64, AX
	ADDQ       $64, R9
	JLT        prefetch

	VMOVDQA64 Z24, Z9
	VPSRLQ    $5, Z2, Z4
	VPTESTMQ  Z4, Z4, K1
	KORTESTB  K1, K1
	JZ        tail
	KMOVB     K1, K7
	VMOVDQA64 Z25, Z5
	VMOVDQA64 Z21, Z6
	VPXORQ    Z7, Z7, Z7
	VMOVDQA64 Z26, Z8
	MOVLQSX   0(DI), R8
	MOVLQSX   4(DI), R9
	MOVLQSX   8(DI), R10
	MOVLQSX   12(DI), R11
	MOVLQSX   16(DI), R12
	MOVLQSX   20(DI), R13
	MOVLQSX   24(DI), R14
	MOVLQSX   28(DI), R15
	MOVQ      SI, AX

stripe:
	LOAD4
	ROUND(Z10, Z5)
	ROUND(Z11, Z6)
	ROUND(Z12, Z7)
	ROUND(Z13, Z8)
	ADDQ        $32, AX
	VPSUBQ      Z30, Z4, K1, Z4
	VPTESTMQ    Z4, Z4, K1
	KORTESTB    K1, K1
	JNZ         stripe

	VPROLQ    $1, Z5, Z14
	VPROLQ    $7, Z6, Z15
	VPADDQ    Z15, Z14, Z14
	VPROLQ    $12, Z7, Z15
	VPADDQ    Z15, Z14, Z14
	VPROLQ    $18, Z8, Z15
	VPADDQ    Z15, Z14, Z14
	MERGE(Z5)
	MERGE(Z6)
	MERGE(Z7)
	MERGE(Z8)
	VMOVDQA64 Z14, K7, Z9

tail:
	VPADDQ    Z2, Z9, Z9
	// The tail (len & 31 bytes) starts at start + (len &^ 31).
	VPSRLQ    $5, Z2, Z3
	VPSLLQ    $5, Z3, Z3
	VPADDQ    Z0, Z3, Z3
	VMOVDQU64 Z3, tails-64(SP)
	MOVQ      tails-64(SP), R8
	MOVQ      tails-56(SP), R9
	MOVQ      tails-48(SP), R10
	MOVQ      tails-40(SP), R11
	MOVQ      tails-32(SP), R12
	MOVQ      tails-24(SP), R13
	MOVQ      tails-16(SP), R14
	MOVQ      tails-8(SP), R15
	MOVQ      SI, AX
	LOAD4

	// Whole 8-byte words: (len >> 3) & 3 of them, in Z10-Z12. Always
	// three masked steps: a branch on the lanes' counts would be
	// mispredicted.
	VPSRLQ   $3, Z2, Z4
	VPANDQ   Z18, Z4, Z4
	VMOVDQA64 Z4, Z0
	WORD(Z10)
	WORD(Z11)
	WORD(Z12)

	// The word after them, Z10-Z13 by their count (Z0), into Z3.
	VMOVDQA64 Z10, Z3
	VPCMPUQ   $0, Z30, Z0, K1
	VMOVDQA64 Z11, K1, Z3
	VPCMPUQ   $6, Z30, Z0, K1
	VPCMPUQ   $1, Z18, Z0, K1, K1
	VMOVDQA64 Z12, K1, Z3
	VPCMPUQ   $0, Z18, Z0, K1
	VMOVDQA64 Z13, K1, Z3

	// A 4-byte word where len & 4: h ^= u32*prime1; h = rotl(h, 23)*prime2 + prime3.
	VPTESTMQ  Z17, Z2, K1
	VPSLLQ    $32, Z3, Z14
	VPSRLQ    $32, Z14, Z14
	VPMULLQ   Z20, Z14, Z14
	VPXORQ    Z14, Z9, Z14
	VPROLQ    $23, Z14, Z14
	VPMULLQ   Z21, Z14, Z14
	VPADDQ    Z22, Z14, K1, Z9
	VPSRLQ    $32, Z3, K1, Z3

	// Single bytes, len & 3 of them: h ^= b*prime5; h = rotl(h, 11)*prime1.
	VPANDQ Z18, Z2, Z4
	BYTE
	BYTE
	BYTE

	VPSRLQ    $33, Z9, Z14
	VPXORQ    Z14, Z9, Z9
	VPMULLQ   Z21, Z9, Z9
	VPSRLQ    $29, Z9, Z14
	VPXORQ    Z14, Z9, Z9
	VPMULLQ   Z22, Z9, Z9
	VPSRLQ    $32, Z9, Z14
	VPXORQ    Z14, Z9, Z9
	VMOVDQU64 Z9, (DX)

	ADDQ $32, DI
	ADDQ $64, DX
	INCQ BX
	JMP  group

done:
	VZEROUPPER
	MOVQ BX, ret+32(FP)
	RET

// The transposes' indexes: words 0 and 1, then 2 and 3, of four strings
// held two to a register (see LOAD4).
DATA transpose01<>+0(SB)/8, $0
DATA transpose01<>+8(SB)/8, $4
DATA transpose01<>+16(SB)/8, $8
DATA transpose01<>+24(SB)/8, $12
DATA transpose01<>+32(SB)/8, $1
DATA transpose01<>+40(SB)/8, $5
DATA transpose01<>+48(SB)/8, $9
DATA transpose01<>+56(SB)/8, $13
GLOBL transpose01<>(SB), RODATA|NOPTR, $64
DATA transpose23<>+0(SB)/8, $2
DATA transpose23<>+8(SB)/8, $6
DATA transpose23<>+16(SB)/8, $10
DATA transpose23<>+24(SB)/8, $14
DATA transpose23<>+32(SB)/8, $3
DATA transpose23<>+40(SB)/8, $7
DATA transpose23<>+48(SB)/8, $11
DATA transpose23<>+56(SB)/8, $15
GLOBL transpose23<>(SB), RODATA|NOPTR, $64
