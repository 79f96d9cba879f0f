# iopred build. `make` builds the library, the command and the header into
# build/; `make test` runs every test; `make bench` the benchmarks; `make demo`
# traces the bundled example workload and prints its summary.

GO      ?= go
CC      ?= gcc
BUILD   := build
# The library's Go runtime shares the process with the application:
# - asyncpreemptoff: no preemption signals that could become EINTR in the
#   application's threads;
# - containermaxprocs, updatemaxprocs: no cgroup files held open, which
#   would shift the descriptor numbers the application gets.
LIB_LDFLAGS := -X=runtime.godebugDefault=asyncpreemptoff=1,containermaxprocs=0,updatemaxprocs=0
# Packed relative relocations (DT_RELR, binutils >= 2.38 with glibc >= 2.36)
# when the linker makes them without a word: the loader then reads 6 KiB of
# relocations instead of 415 KiB in every traced process (README,
# "Prefetching"). The library then needs glibc >= 2.36 where it runs.
RELR_LDFLAGS := $(shell out=$$(printf 'int x; int *p = &x;\n' | $(CC) -shared -fPIC -x c - \
  -Wl,-z,pack-relative-relocs -o /dev/null 2>&1) && [ -z "$$out" ] && echo -extldflags=-Wl,-z,pack-relative-relocs)
LIB_LDFLAGS += $(RELR_LDFLAGS)

.PHONY: all lib cli header test bench demo fuzz clean FORCE

all: lib cli header

lib: $(BUILD)/libiopred.so
cli: $(BUILD)/iopred
header: $(BUILD)/include/iopred.h

# Go's build cache decides what is stale; make always asks it.
$(BUILD)/libiopred.so: FORCE
	@mkdir -p $(BUILD)
	CGO_ENABLED=1 $(GO) build -buildmode=c-shared -trimpath -ldflags '$(LIB_LDFLAGS)' -o $@ ./preload
	@rm -f $(BUILD)/libiopred.h

$(BUILD)/iopred: FORCE
	@mkdir -p $(BUILD)
	$(GO) build -trimpath -o $@ ./analyzer/cmd/iopred

$(BUILD)/include/iopred.h: preload/iopred.h
	@mkdir -p $(BUILD)/include
	cp preload/iopred.h $@

# One package at a time (-p 1): the period tests time real programs (LAMMPS,
# fio, a C burst loop), and other packages' tests running beside them on a
# two-core machine bend the very periods they measure.
test: all
	$(GO) vet ./...
	$(GO) test -p 1 -count=1 -timeout 60m ./...

# `make bench BASELINE=<commit>` also builds that commit's library into
# build/baseline and runs preload/bench's whole-process benchmarks with both
# libraries side by side (its figures are the old-* ones; the consumer's
# stages are counted with that commit's stage worker when it has one).
bench: all
	@if [ -n "$(BASELINE)" ]; then \
	  rm -rf $(BUILD)/baseline && mkdir -p $(BUILD)/baseline/src && \
	  git archive $(BASELINE) | tar -x -C $(BUILD)/baseline/src && \
	  cd $(BUILD)/baseline/src && CGO_ENABLED=1 $(GO) build -buildmode=c-shared -trimpath \
	    -ldflags '$(LIB_LDFLAGS)' -o ../libiopred.so ./preload; \
	fi
	$(if $(BASELINE),IOPRED_BENCH_BASELINE=$(abspath $(BUILD))/baseline/libiopred.so \
	  IOPRED_BENCH_BASELINE_SRC=$(abspath $(BUILD))/baseline/src) \
	  $(GO) test -run '^$$' -bench . -benchmem -timeout 60m ./...

demo: all
	bash tests/demo.sh

# Every fuzz target in the repository, one after another, each for FUZZTIME
# (a go test -fuzztime: 5m, 30s, 100000x).
FUZZTIME ?= 5m
fuzz:
	@set -e; for f in $$(grep -rl --include='*_test.go' '^func Fuzz' . | sort); do \
	  for t in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$f); do \
	    echo "== $$(dirname $$f) $$t"; \
	    $(GO) test -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) $$(dirname $$f); \
	  done; \
	done

clean:
	rm -rf $(BUILD)
	$(GO) clean -testcache

FORCE:
