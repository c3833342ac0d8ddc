// Command lore answers questions from your own documents.
package main

import "os"

func main() {
	os.Exit(Main(os.Args[1:], newIO()))
}
