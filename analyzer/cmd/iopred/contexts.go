package main

import (
	"encoding/json"
	"io"

	"iopred/analyzer/summary"
)

func init() {
	register(&command{
		name:    "contexts",
		usage:   "[--json] TRACE",
		summary: "print a trace's context table: ids, use counts, symbolised frames",
		run:     runContexts,
	})
}

func runContexts(args []string, stdout, stderr io.Writer) error {
	c := commands["contexts"]
	fs := newFlagSet(c, stderr)
	asJSON := fs.Bool("json", false, "print the table as a JSON array")
	paths, err := parseFlagsAnywhere(fs, args)
	if err != nil {
		return err
	}
	if len(paths) != 1 {
		return errUsage
	}
	ctxs, readErr := summary.Contexts(paths[0])
	if ctxs == nil && readErr != nil {
		return readErr
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(ctxs)
	} else {
		err = summary.WriteContextsText(stdout, ctxs)
	}
	if err != nil {
		return err
	}
	return readErr
}
