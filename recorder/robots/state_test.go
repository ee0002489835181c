package robots

import (
	"bytes"
	"encoding/gob"
	"encoding/hex"
	"reflect"
	"testing"
	"time"
)

// stateGob is the gob encoding of testState() by the recorder before this
// package existed (its type then was recorder.robotsState, with the same
// fields): a checkpoint written then must read back, and one written now
// must be byte for byte what it was.
const stateGob = "ff9f7f0301010b726f626f7473537461746501ff8000010b01065374617475730104000104426f6479010c000108416c6c6f77416c6c010200010744656e79416c6c010200010a437261776c44656c617901040001064f726967696e010c00010946657463686564417401ff820001074578706972657301ff820001084661696c7572657301040001085265747279696e6701020001044e65787401ff8000000010ff810501010454696d6501ff82000000ff88ff8001fe03ee0301020e68747470733a2f2f612e74657374010f010000000edce5e80000000005ffff010f010000000edce5e83c00000005ffff010401010101fe0190011b557365722d6167656e743a202a0a446973616c6c6f773a202f780a03fc77359400010d687474703a2f2f612e74657374010f010000000edce5e80000000005ffff0000"

func testState() *State {
	at := time.Unix(1700000000, 5).UTC()
	return &State{Status: 503, DenyAll: true, Origin: "https://a.test", FetchedAt: at, Expires: at.Add(time.Minute), Failures: 2, Retrying: true,
		Next: &State{Status: 200, Body: "User-agent: *\nDisallow: /x\n", CrawlDelay: time.Second, Origin: "http://a.test", FetchedAt: at}}
}

func TestStateGob(t *testing.T) {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(testState()); err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(b.Bytes()); got != stateGob {
		t.Errorf("gob encoding changed:\n got %s\nwant %s", got, stateGob)
	}
	old, _ := hex.DecodeString(stateGob)
	var s State
	if err := gob.NewDecoder(bytes.NewReader(old)).Decode(&s); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&s, testState()) {
		t.Errorf("decoded %+v, want %+v", s, testState())
	}
}

// TestStateRoundTrip: rules survive State and back, the list included.
func TestStateRoundTrip(t *testing.T) {
	r := testState().Rules()
	if r.ForOrigin("http://a.test").crawlDelay != time.Second || !r.ForOrigin("https://a.test").WaitingRetry(r.fetchedAt) {
		t.Fatalf("rules %+v", r)
	}
	if got := r.State(); !reflect.DeepEqual(got, testState()) {
		t.Errorf("state %+v, want %+v", got, testState())
	}
	if (*Rules)(nil).State() != nil || (*State)(nil).Rules() != nil {
		t.Error("nil must stay nil")
	}
}
