// A static Go program: no libc, no interpreter, no loader work.
package main

import (
	"fmt"
	"runtime"
)

func main() {
	// The runtime sized itself from the CPU affinity mask before main.main ran.
	fmt.Println("hello from go, GOMAXPROCS", runtime.GOMAXPROCS(0))
}
