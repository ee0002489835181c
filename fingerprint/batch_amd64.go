package fingerprint

import "golang.org/x/sys/cpu"

const lanes = 8

// useLanes says whether AppendOffsets hashes eight strings at a time. A
// variable so that tests can compare both paths on the same machine.
var useLanes = cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ

// sum64Lanes hashes groups of eight strings (xxHash64, seed 0), the
// strings data[offsets[i]:offsets[i+1]], into out, for at most groups
// groups. It stops before the first group that has a string shorter
// than 8 bytes (or a negative length), and before the first whose loads
// could reach past data, and returns how many groups it hashed.
func sum64Lanes(data []byte, offsets []int32, out []uint64, groups int) int {
	if groups <= 0 || len(data) == 0 {
		return 0
	}
	_ = offsets[groups*lanes] // bounds: the asm reads offsets[0..groups*8]
	_ = out[groups*lanes-1]
	// A group's loads end before its last string's end + 32 bytes a
	// stripe of its longest string (at least one).
	longest := int32(0)
	for i := range groups * lanes {
		longest = max(longest, offsets[i+1]-offsets[i])
	}
	reach := int64(max(longest, 32)) + 32
	for groups > 0 && int64(offsets[groups*lanes])+reach > int64(len(data)) {
		groups--
	}
	if groups == 0 {
		return 0
	}
	return sum64x8(&data[0], &offsets[0], &out[0], groups)
}

//go:noescape
func sum64x8(data *byte, offsets *int32, out *uint64, groups int) int
