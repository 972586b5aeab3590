// A static Go program: no libc, no interpreter, no loader work.
package main

import "fmt"

func main() {
	fmt.Println("hello from go")
}
