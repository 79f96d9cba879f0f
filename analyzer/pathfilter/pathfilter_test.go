package pathfilter

import (
	"fmt"
	"strings"
	"testing"
)

// TestMatch: the default filter leaves out the system directories and the
// files the MPI runtimes created in real traced jobs (Open MPI 4 and
// MPICH 4 on Debian, taken from their traces), and keeps the
// application's files, including ones whose names merely resemble a
// system directory or sit beside the runtime's lock files.
func TestMatch(t *testing.T) {
	f := Default()
	for _, c := range []struct {
		path  string
		kind  Kind // 0: kept
		owner string
	}{
		{"/etc/openmpi/openmpi-mca-params.conf", System, "Darshan"},
		{"/etc", System, "Darshan"},
		{"/proc/cpuinfo", System, "Darshan"},
		{"/proc/29206/fd/24", System, "Darshan"},
		{"/sys/fs/cgroup/cpuset//cpuset.cpus", System, "Darshan"},
		{"/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/mca_io_ompio.so", System, "Darshan"},
		{"/dev/shm/vader_segment.vm.0.6de0001.0", System, "Darshan"},
		{"/dev/shm/mpich_shar_tmpCO5etH", System, "Darshan"},
		{"/var/tmp/x", System, "Darshan"},
		{"/lib64/ld-linux-x86-64.so.2", System, "lib64"},
		{"/run/udev/data/b254:0", System, "/var/run"},
		{"/tmp/ompi.vm.0/pid.27168/1/ckpt.dat_cid--1-0.sm", MPIRuntime, "Open MPI session"},
		{"/tmp/ompi.vm.0/pid.27168/pmix_dstor_ds21_27168/smlockseg-115212289", MPIRuntime, "Open MPI session"},
		{"/scratch/tmp/prte.node1.1000/dvm/x", MPIRuntime, "PRRTE"},
		{"/tmp/pmix-12345/pmix.sock", MPIRuntime, "PMIx"},
		{"/root/.openmpi/mca-params.conf", MPIRuntime, "~/.openmpi"},
		{"/home/u/.pmix/mca-params.conf", MPIRuntime, "~/.pmix"},
		{"/tmp/rep/data/ckpt.dat.locktest.3", MPIRuntime, "lock test"},
		{"/lustre/u/run/out.h5.lockedfile", MPIRuntime, "lockedfile"},
		{"/lustre/u/run/.out.h5.shfp.1234", MPIRuntime, "ROMIO"},
		{"/scratch/vader_segment.n1.2.0", MPIRuntime, "shared-memory"},
		{"/tmp/mpich_shar_tmpabc", MPIRuntime, "MPICH"},
		{"/tmp/ucx_shm_posix_2a585768", MPIRuntime, "UCX"},
		{"/tmp/rep/data/ckpt.dat", 0, ""},
		{"/tmp/rep/data/n1_coll.dat", 0, ""},
		{"/home/u/lib/data.bin", 0, ""},
		{"/usrdata/x", 0, ""},
		{"/etcetera", 0, ""},
		{"/tmp/rep/data/preinit.27174", 0, ""},
		{"data/ompi.txt", 0, ""},            // a file, not a session directory
		{"/home/u/myompi.d/x", 0, ""},       // the prefix must start the name
		{"/home/u/out.locktest", 0, ""},     // no rank after the marker
		{"/lustre/u/run/out.shfp.1", 0, ""}, // ROMIO's names start with a dot
		{"", 0, ""},
	} {
		r, ok := f.Match(c.path)
		switch {
		case c.kind == 0 && ok:
			t.Errorf("%q excluded by %s (%s), want kept", c.path, r.Pattern, r.Owner)
		case c.kind != 0 && !ok:
			t.Errorf("%q kept, want excluded as %s", c.path, c.kind)
		case ok && (r.Kind != c.kind || !strings.Contains(r.Owner, c.owner)):
			t.Errorf("%q excluded by %s rule %s (%s), want %s by %q", c.path, r.Kind, r.Pattern, r.Owner, c.kind, c.owner)
		}
		if f.Excludes(c.path) != ok {
			t.Errorf("%q: Excludes disagrees with Match", c.path)
		}
	}
}

// TestNilFilter: the nil filter (--all-paths) keeps every path.
func TestNilFilter(t *testing.T) {
	var f *Filter
	for _, p := range []string{"/etc/passwd", "/tmp/ompi.vm.0/x", "/d/x"} {
		if f.Excludes(p) {
			t.Errorf("nil filter excludes %q", p)
		}
	}
	if len(f.Rules()) != 0 || f.Describe() != "nothing" {
		t.Errorf("nil filter has rules %v, %q", f.Rules(), f.Describe())
	}
}

// TestDescribe: the one-line description names every Darshan default and
// the MPI runtime's patterns, so that a person can tell what was left
// out.
func TestDescribe(t *testing.T) {
	d := Default().Describe()
	for _, want := range []string{"/etc", "/dev", "/usr", "/bin", "/boot", "/lib", "/opt", "/sbin", "/sys", "/proc", "/var", "ompi.*", "*.locktest.*", "mpich_shar_tmp*"} {
		if !strings.Contains(d, want) {
			t.Errorf("description %q lacks %q", d, want)
		}
	}
}

// TestTally: each excluded path counts once, under its kind.
func TestTally(t *testing.T) {
	f := Default()
	var tl Tally
	for _, p := range []string{"/etc/a", "/proc/b", "/tmp/ompi.h.0/c"} {
		r, _ := f.Match(p)
		tl.Add(r)
	}
	if tl.Files != 3 || tl.ByKind["system"] != 2 || tl.ByKind["MPI runtime"] != 1 {
		t.Errorf("tally %+v", tl)
	}
}

func ExampleFilter_Match() {
	f := Default()
	for _, p := range []string{"/proc/cpuinfo", "/tmp/ompi.node1.1000/pid.42/1/out.dat_cid-0-42.sm", "/scratch/run/out.dat"} {
		if r, ok := f.Match(p); ok {
			fmt.Printf("%s: excluded (%s, %s)\n", p, r.Kind, r.Owner)
		} else {
			fmt.Printf("%s: kept\n", p)
		}
	}
	// Output:
	// /proc/cpuinfo: excluded (system, Darshan's default)
	// /tmp/ompi.node1.1000/pid.42/1/out.dat_cid-0-42.sm: excluded (MPI runtime, Open MPI session directory (ompi.<host>.<uid>))
	// /scratch/run/out.dat: kept
}

// BenchmarkMatch measures the filter on the mix of paths an MPI job's
// trace holds; the job view calls it once per file of a trace, not per
// event.
func BenchmarkMatch(b *testing.B) {
	f := Default()
	paths := []string{"/proc/cpuinfo", "/sys/devices/system/cpu/cpu0/topology/core_id", "/tmp/ompi.vm.0/pid.1/1/x.sm",
		"/lustre/project/run42/checkpoint.0007.h5", "/tmp/rep/data/ckpt.dat.locktest.3"}
	for i := 0; b.Loop(); i++ {
		f.Excludes(paths[i%len(paths)])
	}
}
