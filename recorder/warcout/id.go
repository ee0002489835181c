package warcout

import (
	"bufio"
	"crypto/rand"
	"fmt"

	"github.com/google/uuid"
)

// ids makes record ids, random (version 4) UUID URNs in angle brackets.
// Its randomness is crypto/rand's read 4 KiB at a time, one read per 256
// ids where uuid.New reads for each; it is owned by one goroutine.
type ids struct{ r *bufio.Reader }

func (g *ids) next() (string, error) {
	if g.r == nil {
		g.r = bufio.NewReaderSize(rand.Reader, 4096)
	}
	u, err := uuid.NewRandomFromReader(g.r)
	if err != nil {
		return "", fmt.Errorf("warcout: record id: %w", err)
	}
	return "<" + u.URN() + ">", nil
}
