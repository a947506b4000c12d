// Command broken is a guest that does not compile: the engine's tests check that the
// build error names the node and carries the compiler's output.
package main

import "fmt"

func main() {
	var n int = "not a number"
	fmt.Println(n)
}
