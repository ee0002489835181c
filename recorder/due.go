package recorder

import "github.com/crawltrace/crawltrace/recorder/due"

// DUE is the in-memory duplicate URL eliminator, [due.Memory].
type DUE = due.Memory

// NewDUE returns an empty in-memory DUE sized for about hint fingerprints.
func NewDUE(hint int) *DUE { return due.NewMemory(hint) }
