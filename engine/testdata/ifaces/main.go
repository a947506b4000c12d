// Command ifaces prints the network interfaces and addresses the process sees, one
// line each, for the engine's net.Interfaces test.
package main

import (
	"fmt"
	"net"
	"os"
)

func main() {
	// A server asks for its interfaces to advertise an address it listens on (NATS
	// does); the listener also makes the overlay's host imports part of the program.
	ln, err := net.Listen("tcp", ":4222")
	if err != nil {
		fmt.Println("listen:", err)
		os.Exit(1)
	}
	defer ln.Close()
	ifs, err := net.Interfaces()
	if err != nil {
		fmt.Println("interfaces:", err)
		os.Exit(1)
	}
	for _, ifi := range ifs {
		addrs, err := ifi.Addrs()
		if err != nil {
			fmt.Println("addrs:", err)
			os.Exit(1)
		}
		fmt.Printf("interface %s %s %v\n", ifi.Name, ifi.Flags, addrs)
	}
	all, err := net.InterfaceAddrs()
	if err != nil {
		fmt.Println("interface addrs:", err)
		os.Exit(1)
	}
	fmt.Printf("all %v\n", all)
}
