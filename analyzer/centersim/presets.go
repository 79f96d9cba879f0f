package centersim

import (
	"fmt"
	"sort"
	"strings"
)

const (
	gb = 1e9
	tb = 1e12
)

// presets are the built-in scenarios, by name.
var presets = map[string]func() *Scenario{
	"iosi":           iosiScenario,
	"iosi-scale":     iosiScaleScenario,
	"aid":            aidScenario,
	"aid-replay":     aidReplayScenario,
	"aid-contention": aidContentionScenario,
	"small":          smallScenario,
	"drift":          driftIOSIScenario,
	"drift-aid":      driftAIDScenario,
}

// PresetNames lists the built-in scenarios.
func PresetNames() []string {
	var n []string
	for k := range presets {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// Preset returns a fresh copy of a built-in scenario:
//   - iosi: 14 days at 2 s on 64 OSTs; seven target applications with
//     identical runs (the IOSI paper's IOR_A, IOR_B and IOR_C at 2-3
//     GB/s, a read-then-write one, and three taken from real traces: the
//     IOR-like MPI-IO workload, LAMMPS and fio), 10-12 runs each, among
//     2,500 foreign jobs, interactive transfers and background;
//   - iosi-scale: the same targets over 90 days with 80,000 jobs in all;
//   - aid: a month at 5 s on 256 OSTs; 8 I/O-intensive applications with
//     n-to-1, n-to-m and n-to-n layouts and varied iteration counts, each
//     with 1-5 runs without I/O; 2 with too few runs; light, non-periodic,
//     nested (inside I/O-intensive runs) and compute-only applications;
//     150 foreign applications (2,500 jobs), interactive transfers;
//   - aid-replay: the aid center for 3 days on a 4,096-node machine with
//     a queue of jobs that keeps it full, for scheduling with and without
//     advice;
//   - aid-contention: 6 days of the aid center's file system where six
//     I/O-intensive applications are storage-bound (each burst drives
//     its OSTs at their full bandwidth for about two minutes, half of
//     each iteration), 30 runs each on a 4,096-node machine among 600
//     foreign jobs: the bursts of concurrent runs collide, which is what
//     I/O-aware scheduling is for (advice may hold a job 3 hours); learn
//     from a longer, calmer period (--days 30), replay another seed;
//   - small: one day at 5 s on 16 OSTs, three targets and a few foreign
//     jobs, for quick tests;
//   - drift: the second family (FamilyDrift), 3 days; the OST count (24
//     to 1,000), the step (2 to 10 s) and six target applications, each
//     with 8 to 11 runs and 1 to 3 restarts without I/O, drawn from the
//     seed, among foreign jobs whose bursts look like the targets';
//   - drift-aid: the second family over 20 days for AID: six targets
//     (hourly checkpoints and modest few-OST writers among them) with 2
//     to 4 restarts each, two applications on probation (3 and 4 runs),
//     two light, two irregular and two piggy-back ones.
func Preset(name string) (*Scenario, error) {
	f, ok := presets[name]
	if !ok {
		return nil, fmt.Errorf("no scenario %q (have %s)", name, strings.Join(PresetNames(), ", "))
	}
	s := f()
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", name, err)
	}
	return s, nil
}

func iosiTargets(runs int) []AppSpec {
	ior := func(name string, nodes int, cycle []Phase, iters int, bw float64) AppSpec {
		return AppSpec{User: "iosi", Name: name, Nodes: nodes, Class: ClassIOIntensive, Runs: runs,
			Iterations: [2]int{iters, iters}, Cycle: cycle, TailS: 60, Bandwidth: bw,
			Layout: Layout{Model: "n-to-n", Files: nodes, Stripe: 4}, Jitter: 0.02, RunNoise: 0.02}
	}
	a := []AppSpec{
		// 128 GB every 300 s, five times.
		ior("IOR_A", 256, []Phase{{ComputeS: 250, WriteBytes: 128 * gb}}, 5, 2.6*gb),
		// 64 GB and 16 GB in turn, a burst every 120 s.
		ior("IOR_B", 256, []Phase{{ComputeS: 95, WriteBytes: 64 * gb}, {ComputeS: 114, WriteBytes: 16 * gb}}, 8, 2.6*gb),
		// 64, 32 and 16 GB in turn, every 120 s.
		ior("IOR_C", 256, []Phase{{ComputeS: 95, WriteBytes: 64 * gb}, {ComputeS: 108, WriteBytes: 32 * gb},
			{ComputeS: 114, WriteBytes: 16 * gb}}, 9, 2.6*gb),
	}
	rd := ior("IOR_R", 128, []Phase{{ComputeS: 180, WriteBytes: 48 * gb}}, 6, 2.2*gb)
	rd.Prologue = &Phase{ComputeS: 30, ReadBytes: 96 * gb}
	a = append(a, rd)
	trace := func(name, src string, nodes int, ival, vol, bw float64) AppSpec {
		return AppSpec{User: "iosi", Name: name, Nodes: nodes, Class: ClassIOIntensive, Runs: runs, Iterations: [2]int{1, 1},
			Trace: src, TraceIntervalS: ival, TraceBurstBytes: vol, Bandwidth: bw,
			Layout: Layout{Model: "n-to-m", Files: 16, Stripe: 4}, Jitter: 0.02, RunNoise: 0.02}
	}
	a = append(a,
		trace("mpiio_ior", "builtin:ior", 128, 150, 48*gb, 2.4*gb),
		trace("lammps_melt", "builtin:lammps", 64, 120, 40*gb, 2.0*gb),
		trace("fio_ckpt", "builtin:fio", 64, 180, 64*gb, 2.5*gb),
	)
	return a
}

func iosiScenario() *Scenario {
	return &Scenario{Name: "iosi", Days: 14, StepS: 2, FS: "iosi", OSTs: 64, OSTBandwidth: 250e6, ContentionPenalty: 0.1,
		Outages: 1, Background: Background{WriteMean: 4e6, ReadMean: 2.5e6, Sigma: 0.5, Correlation: 0.98, Diurnal: 0.4},
		Interactive: Interactive{PerHour: 2, MedianBytes: 30 * gb, Sigma: 1, Bandwidth: 1 * gb, MaxOSTs: 8, ReadFraction: 0.5},
		Apps:        iosiTargets(11),
		Foreign: Foreign{Jobs: 2500, Apps: 150, Users: 40, MedianS: 1800, Sigma: 1, MaxS: 86400, Light: 0.3, Random: 0.15,
			LightRate: 15e6, RandomPerHour: 3, RandomBytes: 8 * gb, Failed: 0.03, Cancelled: 0.02}}
}

func iosiScaleScenario() *Scenario {
	s := iosiScenario()
	s.Name, s.Days, s.OSTs, s.Outages = "iosi-scale", 90, 16, 4
	s.OSTBandwidth = 1e9
	s.Apps = iosiTargets(30)
	runs := 0
	for _, a := range s.Apps {
		runs += a.Runs
	}
	s.Foreign.Jobs, s.Foreign.Apps, s.Foreign.Users = 80000-runs, 4000, 600
	return s
}

// aidApps are the applications of the aid scenarios, with nruns scaling
// their run counts.
func aidApps(nruns func(int) int) []AppSpec {
	target := func(user, name string, nodes int, l Layout, cycle Phase, iters [2]int, runs, off int, bw float64) AppSpec {
		return AppSpec{User: user, Name: name, Nodes: nodes, Class: ClassIOIntensive, Runs: nruns(runs), RunsWithoutIO: off,
			Iterations: iters, Cycle: []Phase{cycle}, TailS: 120, Layout: l, Bandwidth: bw, Jitter: 0.03, RunNoise: 0.03}
	}
	apps := []AppSpec{
		target("ana", "wrf_ens", 256, Layout{Model: "n-to-n", Files: 4096, Stripe: 1}, Phase{ComputeS: 240, WriteBytes: 1.2 * tb}, [2]int{6, 8}, 10, 3, 20*gb),
		target("ben", "s3d_run", 512, Layout{Model: "n-to-m", Files: 32, Stripe: 4}, Phase{ComputeS: 200, WriteBytes: 1.5 * tb}, [2]int{6, 10}, 9, 2, 30*gb),
		target("cara", "chimera", 128, Layout{Model: "n-to-1", Stripe: 64}, Phase{ComputeS: 400, WriteBytes: 600 * gb}, [2]int{4, 6}, 8, 4, 12*gb),
		target("dan", "xgc1", 1024, Layout{Model: "n-to-m", Files: 48, Stripe: 4}, Phase{ComputeS: 550, WriteBytes: 2 * tb}, [2]int{4, 5}, 7, 1, 40*gb),
		target("fay", "nek5000", 128, Layout{Model: "n-to-m", Files: 16, Stripe: 4}, Phase{ComputeS: 65, WriteBytes: 150 * gb}, [2]int{15, 25}, 10, 2, 10*gb),
		target("gus", "qmcpack", 256, Layout{Model: "n-to-n", Files: 256, Stripe: 1}, Phase{ComputeS: 550, WriteBytes: 1.2 * tb}, [2]int{12, 20}, 8, 3, 25*gb),
		target("hal", "ior_small", 64, Layout{Model: "n-to-1", Stripe: 16}, Phase{ComputeS: 460, WriteBytes: 200 * gb}, [2]int{4, 6}, 9, 2, 5*gb),
	}
	// The restart-reading application reads its input first.
	apps[5].Prologue = &Phase{ComputeS: 60, ReadBytes: 800 * gb}
	// The LAMMPS trace's snapshots, one every 100 s, stretched to a center
	// job; a run replays 10 to 16 passes... one pass is the traced run.
	lmp := AppSpec{User: "eve", Name: "lammps_big", Nodes: 128, Class: ClassIOIntensive, Runs: nruns(12), RunsWithoutIO: 5,
		Iterations: [2]int{1, 1}, Trace: "builtin:lammps", TraceIntervalS: 100, TraceBurstBytes: 200 * gb, TailS: 120,
		Layout: Layout{Model: "n-to-1", Stripe: 32}, Bandwidth: 8 * gb, Jitter: 0.03, RunNoise: 0.03}
	apps = append(apps, lmp)
	// Too few runs to be trusted yet: probation.
	probation := []AppSpec{
		target("pia", "flash_test", 64, Layout{Model: "n-to-m", Files: 8, Stripe: 4}, Phase{ComputeS: 170, WriteBytes: 300 * gb}, [2]int{5, 8}, 3, 0, 10*gb),
		target("pat", "e3sm_dev", 512, Layout{Model: "n-to-n", Files: 8192, Stripe: 1}, Phase{ComputeS: 300, WriteBytes: 800 * gb}, [2]int{4, 6}, 4, 0, 20*gb),
	}
	for i := range probation {
		probation[i].Runs = 3 + i // not scaled: stays below the minimum support
	}
	apps = append(apps, probation...)
	other := func(user, name string, nodes int, class string, runs int, d [2]float64) AppSpec {
		return AppSpec{User: user, Name: name, Nodes: nodes, Class: class, Runs: nruns(runs), DurationS: d, Bandwidth: 3 * gb,
			Layout: Layout{Model: "n-to-m", Files: 4, Stripe: 4}}
	}
	for i, r := range []float64{40e6, 80e6, 150e6, 60e6} {
		a := other(fmt.Sprintf("lou%d", i), fmt.Sprintf("stream_%d", i), 16<<i, ClassLight, 10+3*i, [2]float64{1800, 14400})
		a.LightRate = r
		apps = append(apps, a)
	}
	for i, v := range []float64{60 * gb, 150 * gb, 300 * gb, 100 * gb} {
		a := other(fmt.Sprintf("ray%d", i), fmt.Sprintf("adhoc_%d", i), 32<<i, ClassRandom, 8+2*i, [2]float64{3600, 21600})
		a.RandomPerHour, a.RandomBytes, a.Bandwidth = 2+float64(i), v, 6*gb
		a.Layout = Layout{Model: "n-to-m", Files: 4 << i, Stripe: 4}
		apps = append(apps, a)
	}
	for i, host := range []string{"ana/wrf_ens/256", "dan/xgc1/1024", "gus/qmcpack/256"} {
		a := other(fmt.Sprintf("nia%d", i), fmt.Sprintf("monitor_%d", i), 1, ClassNested, 6, [2]float64{600, 600})
		a.Within = host
		apps = append(apps, a)
	}
	for i := range 4 {
		apps = append(apps, other(fmt.Sprintf("cal%d", i), fmt.Sprintf("solver_%d", i), 64<<i, ClassNone, 10+5*i, [2]float64{1800, 28800}))
	}
	return apps
}

func aidScenario() *Scenario {
	return &Scenario{Name: "aid", Days: 30, StepS: 5, FS: "aid", OSTs: 256, OSTBandwidth: 400e6, ContentionPenalty: 0.15,
		Outages:     2,
		Background:  Background{WriteMean: 3e6, ReadMean: 2e6, Sigma: 0.5, Correlation: 0.98, Diurnal: 0.5},
		Interactive: Interactive{PerHour: 2, MedianBytes: 100 * gb, Sigma: 1, Bandwidth: 2 * gb, MaxOSTs: 16, ReadFraction: 0.5},
		Apps:        aidApps(func(n int) int { return n }),
		Foreign: Foreign{Jobs: 2500, Apps: 150, Users: 40, MedianS: 2400, Sigma: 1, MaxS: 86400, Light: 0.3, Random: 0.15,
			LightRate: 20e6, RandomPerHour: 3, RandomBytes: 20 * gb, Failed: 0.03, Cancelled: 0.02}}
}

func aidReplayScenario() *Scenario {
	s := aidScenario()
	s.Name, s.Days, s.Nodes, s.Outages = "aid-replay", 3, 4096, 0
	// Every I/O-intensive application submits a run every few hours, and
	// foreign jobs keep the machine busy.
	s.Apps = aidApps(func(n int) int { return max(2, n*3/4) })
	var keep []AppSpec
	for _, a := range s.Apps {
		if a.Class == ClassIOIntensive && a.Runs >= 5 {
			a.RunsWithoutIO = 0
			keep = append(keep, a)
		}
	}
	s.Apps = keep
	s.Foreign.Jobs, s.Foreign.Cancelled, s.Foreign.Failed = 900, 0, 0.02
	return s
}

func aidContentionScenario() *Scenario {
	s := aidScenario()
	s.Name, s.Days, s.Nodes, s.Outages = "aid-contention", 6, 4096, 0
	// Advice may hold a job for up to three hours: a run lasts one to two.
	s.MaxDelayS = 3 * 3600
	app := func(user, name string, nodes int, l Layout, compute, bytes float64, iters [2]int) AppSpec {
		k := float64(l.footprint(s.OSTs))
		return AppSpec{User: user, Name: name, Nodes: nodes, Class: ClassIOIntensive, Runs: 30, Iterations: iters,
			Cycle: []Phase{{ComputeS: compute, WriteBytes: bytes}}, TailS: 60, Layout: l, Bandwidth: 1.2 * k * s.OSTBandwidth,
			Jitter: 0.03, RunNoise: 0.03}
	}
	s.Apps = []AppSpec{
		app("kim", "climate_ens", 512, Layout{Model: "n-to-m", Files: 32, Stripe: 4}, 150, 6*tb, [2]int{10, 14}),
		app("lee", "turb_dns", 1024, Layout{Model: "n-to-n", Files: 1024, Stripe: 1}, 120, 10*tb, [2]int{8, 12}),
		app("max", "astro_ckpt", 256, Layout{Model: "n-to-1", Stripe: 64}, 200, 3*tb, [2]int{8, 12}),
		app("ned", "fusion_io", 768, Layout{Model: "n-to-m", Files: 48, Stripe: 4}, 180, 8*tb, [2]int{6, 10}),
		app("ola", "md_traj", 128, Layout{Model: "n-to-1", Stripe: 32}, 100, 1.5*tb, [2]int{12, 16}),
		app("pim", "cfd_out", 256, Layout{Model: "n-to-m", Files: 16, Stripe: 4}, 250, 2.5*tb, [2]int{6, 8}),
	}
	s.Foreign.Jobs, s.Foreign.Cancelled, s.Foreign.Failed = 600, 0, 0.02
	return s
}

func smallScenario() *Scenario {
	return &Scenario{Name: "small", Days: 1, StepS: 5, FS: "small", OSTs: 16, OSTBandwidth: 300e6, ContentionPenalty: 0.15,
		Background:  Background{WriteMean: 2e6, ReadMean: 1e6, Sigma: 0.4, Correlation: 0.95, Diurnal: 0.3},
		Interactive: Interactive{PerHour: 1, MedianBytes: 10 * gb, Sigma: 0.8, Bandwidth: 1 * gb, MaxOSTs: 4, ReadFraction: 0.5},
		Apps: []AppSpec{
			{User: "ana", Name: "ckpt", Nodes: 64, Class: ClassIOIntensive, Runs: 4, RunsWithoutIO: 1, Iterations: [2]int{4, 6},
				Cycle: []Phase{{ComputeS: 240, WriteBytes: 60 * gb}}, TailS: 60, Bandwidth: 3 * gb,
				Layout: Layout{Model: "n-to-m", Files: 2, Stripe: 4}, Jitter: 0.03},
			{User: "eve", Name: "lammps", Nodes: 16, Class: ClassIOIntensive, Runs: 3, Iterations: [2]int{1, 1},
				Trace: "builtin:lammps", TraceIntervalS: 90, TraceBurstBytes: 20 * gb, Bandwidth: 2 * gb,
				Layout: Layout{Model: "n-to-1", Stripe: 8}},
			{User: "ray", Name: "adhoc", Nodes: 8, Class: ClassRandom, Runs: 3, DurationS: [2]float64{1800, 7200},
				RandomPerHour: 4, RandomBytes: 20 * gb, Bandwidth: 2 * gb, Layout: Layout{Model: "n-to-m", Files: 2, Stripe: 2}},
		},
		Foreign: Foreign{Jobs: 60, Apps: 10, Users: 4, MedianS: 1800, Light: 0.3, Random: 0.2, LightRate: 10e6,
			RandomPerHour: 2, RandomBytes: 5 * gb, Failed: 0.05, Cancelled: 0.05}}
}
