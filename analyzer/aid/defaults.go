package aid

// defaultWeights were fitted on the simulated center; README.md,
// "Default weights", has the commands that regenerate them.
var defaultWeights = Weights{BandWidth: 30e6, TrainRate: 100e6,
	W: []float64{1, 1, 1.05, 1.1, 1.2, 1.3, 1.45, 1.6, 1.8, 2, 2.2, 2.4, 2.6, 2.8}, Source: "placeholder until fitted"}
