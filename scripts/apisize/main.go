// Command apisize counts the exported names of Go packages as go/doc sees
// them: constants, variables, functions, types, methods, and the exported
// fields of structs and methods of interfaces. scripts/size.sh prints it
// per package.
//
//	go run ./scripts/apisize DIR...
//
// One line per folder: the count, then the folder.
package main

import (
	"fmt"
	"os"

	"github.com/vesta-go/vesta/internal/apicount"
)

func main() {
	for _, dir := range os.Args[1:] {
		n, err := apicount.Count(dir)
		if err != nil {
			fmt.Fprintln(os.Stderr, "apisize:", err)
			os.Exit(1)
		}
		fmt.Printf("%d %s\n", n, dir)
	}
}
