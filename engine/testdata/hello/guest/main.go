// Command guest does nothing but start and exit: the floor of a run.
package main

import "fmt"

func main() { fmt.Println("hello") }
