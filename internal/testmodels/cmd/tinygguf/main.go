// Command tinygguf writes lore's tiny random-weight llama model as a GGUF
// file, for `ollama create` in end-to-end tests.
package main

import (
	"fmt"
	"os"

	"lore/internal/testmodels"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: tinygguf OUT.gguf")
		os.Exit(2)
	}
	if err := testmodels.WriteGGUF(os.Args[1], testmodels.TinyLlama); err != nil {
		fmt.Fprintln(os.Stderr, "tinygguf:", err)
		os.Exit(1)
	}
}
