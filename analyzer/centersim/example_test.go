package centersim_test

import (
	"fmt"

	"iopred/analyzer/centersim"
)

// A center with one checkpointing application, simulated for a day: the
// ground truth gives its pattern as the simulated runs did it.
func ExampleRun() {
	s := &centersim.Scenario{Days: 1, StepS: 5, OSTs: 8, OSTBandwidth: 300e6,
		Apps: []centersim.AppSpec{{User: "ana", Name: "ckpt", Nodes: 16, Class: centersim.ClassIOIntensive, Runs: 3,
			Iterations: [2]int{4, 4}, Cycle: []centersim.Phase{{ComputeS: 200, WriteBytes: 30e9}}, Bandwidth: 1.5e9,
			Layout: centersim.Layout{Model: "n-to-m", Files: 2, Stripe: 2}}}}
	res, err := centersim.Run(s, centersim.Options{Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	a := res.Truth.Apps[0]
	fmt.Printf("%d runs, %d OSTs per burst, %.0f bursts per run of %.0f GB, one every %.0f s at %.1f GB/s\n",
		a.Runs, a.OSTFootprint, a.Pattern.BurstsPerRun, a.Pattern.BurstBytes/1e9, a.Pattern.IntervalS, a.Pattern.Throughput/1e9)
	// Output: 3 runs, 4 OSTs per burst, 4 bursts per run of 30 GB, one every 225 s at 1.2 GB/s
}
