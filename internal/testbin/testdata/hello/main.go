// Command hello is the small command that testbin's tests build.
package main

import "fmt"

func main() { fmt.Println("hello") }
