package main

import (
	"fmt"
	"io"
)

// Version is the iopred release; the library writes the same string into
// every trace header.
const Version = "0.1.0"

func init() {
	register(&command{
		name:    "version",
		summary: "print the iopred version",
		run: func(args []string, stdout, stderr io.Writer) error {
			_, err := fmt.Fprintln(stdout, "iopred", Version)
			return err
		},
	})
}
