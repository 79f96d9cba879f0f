package aid

// defaultWeights were fitted on the simulated center, by the commands of
// README.md, "Default weights":
//
//	iopred aid trials --scenario aid-replay --trials 400 --rate 100e6 --seed 1 --out trials.csv
//	iopred aid train trials.csv
//
// 400 training jobs (n-to-n over all 256 OSTs, 100 MB/s per OST, 90 s of
// I/O alone) dispatched at random times; rms of the fit 0.163.
var defaultWeights = Weights{BandWidth: 30e6, TrainRate: 100e6, Trials: 400, RMS: 0.163,
	W:      []float64{1.061, 1.061, 1.061, 1.061, 1.061, 1.061, 1.061, 1.107, 2.222, 2.222, 2.222, 2.884, 9.583, 9.583},
	Source: "iopred aid trials --scenario aid-replay --trials 400 --rate 100e6 --seed 1; iopred aid train"}
