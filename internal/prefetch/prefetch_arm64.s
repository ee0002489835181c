#include "textflag.h"

// func Addrs(addrs []uintptr)
TEXT ·Addrs(SB), NOSPLIT, $0-24
	MOVD addrs_base+0(FP), R0
	MOVD addrs_len+8(FP), R1
	CBZ R1, done
loop:
	MOVD.P 8(R0), R2
	PRFM (R2), PLDL1KEEP
	SUB $1, R1, R1
	CBNZ R1, loop
done:
	RET
