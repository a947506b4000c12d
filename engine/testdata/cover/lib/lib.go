// Package lib is a dependency of the coverage tests' server, for patterns that name a
// library and not the main package.
package lib

// Greeting is what the server prints at start.
func Greeting(life string) string {
	if life == "" {
		return "hello"
	}
	return "hello, " + life
}
