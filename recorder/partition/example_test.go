package partition_test

import (
	"fmt"

	"github.com/crawltrace/crawltrace/recorder/partition"
)

func Example() {
	p, _ := partition.New("host", 4, 0)
	fmt.Println(p.Name(), p.Nodes())
	// All URLs of a host go to the same node.
	fmt.Println(p.Node("http://example.com/a") == p.Node("http://example.com/b?c"))
	fmt.Println(partition.HostOf("https://www.example.com:8443/x"), partition.DomainOf("http://a.b.example.co.uk/"))

	// Consistent hashing: losing node 2 moves only node 2's hosts.
	ring := partition.NewConsistent([]int{0, 1, 2, 3}, 100)
	smaller := ring.Without(2)
	moved, kept := 0, 0
	for i := 0; i < 1000; i++ {
		u := fmt.Sprintf("http://host%d.example/", i)
		if before, after := ring.Node(u), smaller.Node(u); before != after {
			if before != 2 {
				panic("contravariance violated")
			}
			moved++
		} else {
			kept++
		}
	}
	fmt.Println(smaller.IDs(), moved+kept)
	// Output:
	// host 4
	// true
	// www.example.com example.co.uk
	// [0 1 3] 1000
}
