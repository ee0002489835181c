package fetch_test

import (
	"fmt"

	"github.com/crawltrace/crawltrace/recorder/fetch"
)

func ExampleParseResolve() {
	key, addr, err := fetch.ParseResolve("example.com:127.0.0.1:8080")
	fmt.Println(key, addr, err)
	key, addr, err = fetch.ParseResolve("*:10.0.0.7")
	fmt.Println(key, addr, err)
	// curl's form: only connections to port 443.
	key, addr, err = fetch.ParseResolve("example.com:443:127.0.0.1:8443")
	fmt.Println(key, addr, err)
	_, _, err = fetch.ParseResolve("example.com")
	fmt.Println(err)
	// Output:
	// example.com 127.0.0.1:8080 <nil>
	// * 10.0.0.7 <nil>
	// example.com:443 127.0.0.1:8443 <nil>
	// fetch: bad --resolve entry "example.com": want HOST:ADDR or HOST:PORT:ADDR (e.g. *:127.0.0.1:8080 or example.com:443:127.0.0.1:8443)
}
