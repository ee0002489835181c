#include "textflag.h"

// xxHash64 (seed 0) of eight strings at a time, one per 64-bit lane of a
// ZMM register (AVX-512 F and DQ: VPMULLQ, mask registers). Each lane
// runs the scalar algorithm of github.com/cespare/xxhash/v2; a lane whose
// string has no more of a step's input is masked off for that step.
// Words are gathered from each string's own offset; the last 1-7 bytes
// come from the string's final 8 bytes, shifted, so nothing outside a
// string is read.
//
// Registers:
//   Z0 start offsets, Z1 end offsets, Z2 lengths, Z3 read offsets,
//   Z4 a lane's steps left, Z5-Z8 the stripe accumulators v1-v4,
//   Z9 h, Z10-Z15 scratch,
//   Z16 0xff, Z17 4, Z18 3, Z19 64, Z20-Z24 prime1-5, Z25 v1's start
//   (prime1+prime2), Z26 v4's start (-prime1), Z27 7, Z28 32, Z29 8,
//   Z30 1.

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

#define BROADCAST(c, z) \
	MOVQ c, AX \
	VPBROADCASTQ AX, z

// func sum64x8(data *byte, offsets *int32, out *uint64, groups int) int
TEXT ·sum64x8(SB), NOSPLIT, $0-40
	MOVQ data+0(FP), SI
	MOVQ offsets+8(FP), DI
	MOVQ out+16(FP), DX
	MOVQ groups+24(FP), CX
	XORQ BX, BX

	BROADCAST($0xff, Z16)
	BROADCAST($4, Z17)
	BROADCAST($3, Z18)
	BROADCAST($64, Z19)
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
	BROADCAST($7, Z27)
	BROADCAST($32, Z28)
	BROADCAST($8, Z29)
	BROADCAST($1, Z30)

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

	VMOVDQA64 Z0, Z3
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

stripe:
	KMOVB       K1, K2
	VPGATHERQQ  (SI)(Z3*1), K2, Z10
	KMOVB       K1, K2
	VPGATHERQQ  8(SI)(Z3*1), K2, Z11
	KMOVB       K1, K2
	VPGATHERQQ  16(SI)(Z3*1), K2, Z12
	KMOVB       K1, K2
	VPGATHERQQ  24(SI)(Z3*1), K2, Z13
	ROUND(Z10, Z5)
	ROUND(Z11, Z6)
	ROUND(Z12, Z7)
	ROUND(Z13, Z8)
	VPADDQ      Z28, Z3, K1, Z3
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
	VPADDQ   Z2, Z9, Z9
	// Whole 8-byte words left: (len >> 3) & 3.
	VPSRLQ   $3, Z2, Z4
	VPANDQ   Z18, Z4, Z4
	VPTESTMQ Z4, Z4, K1
	KORTESTB K1, K1
	JZ       last

word:
	KMOVB      K1, K2
	VPGATHERQQ (SI)(Z3*1), K2, Z10
	VPMULLQ    Z21, Z10, Z10
	VPROLQ     $31, Z10, Z10
	VPMULLQ    Z20, Z10, Z10
	VPXORQ     Z10, Z9, Z14
	VPROLQ     $27, Z14, Z14
	VPMULLQ    Z20, Z14, Z14
	VPADDQ     Z23, Z14, K1, Z9
	VPADDQ     Z29, Z3, K1, Z3
	VPSUBQ     Z30, Z4, K1, Z4
	VPTESTMQ   Z4, Z4, K1
	KORTESTB   K1, K1
	JNZ        word

last:
	// The string's last 8 bytes; its rem = len & 7 trailing bytes are
	// their top rem bytes: t = w >> (64 - 8*rem) (0 when rem is 0).
	KXNORB     K2, K2, K2
	VPGATHERQQ -8(SI)(Z1*1), K2, Z10
	VPANDQ     Z27, Z2, Z11
	VPSLLQ     $3, Z11, Z11
	VPSUBQ     Z11, Z19, Z11
	VPSRLVQ    Z11, Z10, Z10

	// A 4-byte word where len & 4: h ^= u32*prime1; h = rotl(h, 23)*prime2 + prime3.
	VPTESTMQ  Z17, Z2, K1
	VPSLLQ    $32, Z10, Z14
	VPSRLQ    $32, Z14, Z14
	VPMULLQ   Z20, Z14, Z14
	VPXORQ    Z14, Z9, Z14
	VPROLQ    $23, Z14, Z14
	VPMULLQ   Z21, Z14, Z14
	VPADDQ    Z22, Z14, K1, Z9
	VPSRLQ    $32, Z10, K1, Z10

	// Single bytes, len & 3 of them: h ^= b*prime5; h = rotl(h, 11)*prime1.
	VPANDQ   Z18, Z2, Z4
	VPTESTMQ Z4, Z4, K1
	KORTESTB K1, K1
	JZ       avalanche

byte:
	VPANDQ   Z16, Z10, Z14
	VPMULLQ  Z24, Z14, Z14
	VPXORQ   Z14, Z9, Z14
	VPROLQ   $11, Z14, Z14
	VPMULLQ  Z20, Z14, K1, Z9
	VPSRLQ   $8, Z10, Z10
	VPSUBQ   Z30, Z4, K1, Z4
	VPTESTMQ Z4, Z4, K1
	KORTESTB K1, K1
	JNZ      byte

avalanche:
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
