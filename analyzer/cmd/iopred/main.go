// Command iopred runs programs under libiopred.so and analyses the traces
// they leave: summaries, events, contexts, periodicity, patterns, replay of
// the predictor.
//
// Each subcommand lives in its own file and registers itself in init.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
)

// command is one iopred subcommand.
type command struct {
	name    string
	usage   string // one line: arguments after the name
	summary string // one line: what it does
	run     func(args []string, stdout, stderr io.Writer) error
}

var commands = map[string]*command{}

func register(c *command) {
	if _, dup := commands[c.name]; dup {
		panic("iopred: command registered twice: " + c.name)
	}
	commands[c.name] = c
}

// errUsage makes main print the subcommand's usage and exit with status 2.
var errUsage = errors.New("usage")

// newFlagSet returns a flag set that reports errors instead of exiting, so
// that subcommands stay testable.
func newFlagSet(c *command, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("iopred "+c.name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: iopred %s %s\n%s\n", c.name, c.usage, c.summary)
		fs.PrintDefaults()
	}
	return fs
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: iopred COMMAND [ARGS]")
	fmt.Fprintln(w, "\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'iopred COMMAND -h' for a command's options.")
}

func main() {
	stopProfiles := startProfiles(os.Stderr)
	code := runMain(os.Args[1:], os.Stdout, os.Stderr)
	stopProfiles()
	os.Exit(code)
}

func runMain(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout)
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "iopred: unknown command %q\n", args[0])
		usage(stderr)
		return 2
	}
	err := c.run(args[1:], stdout, stderr)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "usage: iopred %s %s\n", c.name, c.usage)
		return 2
	default:
		fmt.Fprintf(stderr, "iopred %s: %v\n", c.name, err)
		return 1
	}
}

// prefetchReplay runs `iopred replay --prefetch`; the prefetch evaluation
// sets it from its own file so that replay need not import it directly.
var prefetchReplay func(args []string, stdout, stderr io.Writer) error
