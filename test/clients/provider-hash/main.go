// provider-hash prints, for each provider package zip named on the command
// line, the h1: hash Terraform records for it: golang.org/x/mod's
// dirhash.HashZip with Hash1, the call Terraform's getproviders.PackageHashV1
// makes for a zip (Debian's golang-golang-x-mod-dev). One line per file:
// "h1:...  FILE". On failure, the error on stderr and exit code 1.
package main

import (
	"fmt"
	"os"

	"golang.org/x/mod/sumdb/dirhash"
)

func main() {
	for _, file := range os.Args[1:] {
		hash, err := dirhash.HashZip(file, dirhash.Hash1)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Printf("%s  %s\n", hash, file)
	}
}
