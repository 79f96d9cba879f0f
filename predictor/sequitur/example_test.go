package sequitur_test

import (
	"fmt"

	"iopred/predictor/sequitur"
)

// The grammar of a short byte string, as in Nevill-Manning and Witten.
func ExampleGrammar() {
	g := sequitur.New()
	for _, c := range "abbbabcbb" {
		g.Append(int(c))
	}
	fmt.Print(g)
	fmt.Println(g.Size(), g.Len(), g.Check())
	// Output:
	// S -> A B A c B
	// A -> a b
	// B -> b b
	// 9 9 <nil>
}

// A predictor learns a loop and predicts its next symbols.
func ExamplePredictor() {
	p := sequitur.NewPredictor()
	for i := 0; i < 30; i++ {
		p.Append([]int{7, 8, 9}[i%3])
	}
	for _, c := range p.Candidates() {
		fmt.Printf("next %d weight %.2f paper %.2f\n", c.Symbol, c.Weight, c.Uniform)
	}
	for _, s := range p.Lookahead(4) {
		fmt.Printf("%d (%.2f) ", s.Symbol, s.Prob)
	}
	fmt.Println()
	// Output:
	// next 7 weight 1.00 paper 1.00
	// 7 (1.00) 8 (1.00) 9 (1.00) 7 (1.00)
}
