package recorder_test

import (
	"fmt"

	"github.com/crawltrace/crawltrace/recorder"
)

func ExampleParseResolve() {
	host, addr, err := recorder.ParseResolve("example.com:127.0.0.1:8080")
	fmt.Println(host, addr, err)
	host, addr, err = recorder.ParseResolve("*:10.0.0.7")
	fmt.Println(host, addr, err)
	_, _, err = recorder.ParseResolve("example.com")
	fmt.Println(err)
	// Output:
	// example.com 127.0.0.1:8080 <nil>
	// * 10.0.0.7 <nil>
	// recorder: bad configuration: --resolve "example.com": want HOST:ADDR (e.g. example.com:127.0.0.1:8080 or *:127.0.0.1:8080)
}

func ExampleDUE() {
	d := recorder.NewDUE(0)
	fmt.Println(d.Add(42), d.Add(42), d.Len())
	// Output: true false 1
}
