package fingerprint

import "golang.org/x/sys/cpu"

const lanes = 8

// useLanes says whether AppendOffsets hashes eight strings at a time. A
// variable so that tests can compare both paths on the same machine.
var useLanes = cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ

// sum64Lanes hashes groups of eight strings (xxHash64, seed 0), the
// strings data[offsets[i]:offsets[i+1]], into out, for at most groups
// groups. It stops before the first group that has a string shorter
// than 8 bytes (or a negative length) and returns how many it hashed.
func sum64Lanes(data []byte, offsets []int32, out []uint64, groups int) int {
	if groups <= 0 || len(data) == 0 {
		return 0
	}
	_ = offsets[groups*lanes] // bounds: the asm reads offsets[0..groups*8]
	_ = out[groups*lanes-1]
	return sum64x8(&data[0], &offsets[0], &out[0], groups)
}

//go:noescape
func sum64x8(data *byte, offsets *int32, out *uint64, groups int) int
