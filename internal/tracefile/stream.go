package tracefile

import (
	"bytes"
	"errors"
	"fmt"
)

// CheckStream checks the message framing of a complete Arrow IPC stream
// held in b, as readers do for segments: every length the Arrow reader
// would trust must fit in b, and the stream must end with the
// end-of-stream marker. Use it before decoding bytes from an untrusted
// source (a peer's request body), since Arrow's reader allocates whatever
// a corrupt length asks for.
func CheckStream(b []byte) error {
	s := scanFrames(bytes.NewReader(b), int64(len(b)))
	if s.stop != "" {
		return fmt.Errorf("tracefile: corrupt stream: %s", s.stop)
	}
	if !s.eos {
		return errors.New("tracefile: stream without end-of-stream marker")
	}
	return nil
}
