# SPDX-License-Identifier: ISC
# ntpx — one Makefile.  `make` builds lib/libntpx.a and every tool into bin/;
# `make check` runs every test this machine can run through prove.
#
# Layout it relies on, so that new files need no edit here:
#   lib/*.c           -> lib/libntpx.a
#   src/TOOL.c        -> bin/TOOL
#   src/TOOL/*.c      -> bin/TOOL   (a tool of several files)
#   tests/unit/*.c    -> build/unit/NAME.t  (cmocka, TAP through prove)
#   tests/unit/support/*.c -> linked into the unit tests that name it
#   tests/fuzz/*.c    -> build/fuzz/NAME    (libFuzzer, `make fuzz`)
#   tests/bench/*.c   -> build/bench/NAME   (`make bench`)
#   tests/helpers/*.c -> build/helpers/NAME (programs the shell tests drive)
#   tests/helpers/*.so.c -> build/helpers/NAME.so (LD_PRELOAD shims)

.DEFAULT_GOAL := all

VERSION  := 0.1.0
PREFIX   ?= /usr/local
DESTDIR  ?=
CC       ?= cc
CLANG    ?= clang

# The libraries' flags, PKG_CFLAGS and PKG_LIBS, are in build/pkg.mk.
# GNU make brings an included makefile up to date before any goal and,
# when it changed, reads everything afresh; so pkg-config is asked after
# the install, never while this file is read.  The goals that build what
# they need on a fresh machine (DEPS_GOALS), and `make deps GOAL`, run
# scripts/deps first, once (MAKE_RESTARTS is set in the make that reads
# afresh).  Any other goal only asks pkg-config, and without the packages
# stops with one line that names them.  clean, deps and check-fresh build
# nothing and ask nothing (doc/hacking.md, First time on a machine).
#
# Two paths are optional, each built only when pkg-config finds all of
# its libraries (or not at all with NO_VERBS=1, NO_XDP=1): the verbs
# path (ib:// and uudp's via=verbs) and the AF_XDP path (uudp's via=xdp).
# Without one its files are left out, lib/absent.c stands in with one
# line that says what the build lacked, and build/features, which the
# suites and scripts/hwcheck read, does not name it: they skip it with
# that reason.
PKGS_BASE  := libmnl gnutls
PKGS_VERBS := libibverbs libmlx5 librdmacm
PKGS_XDP   := libxdp libbpf
PKGS       := $(PKGS_BASE) $(PKGS_VERBS) $(PKGS_XDP)
DEPS_GOALS := demo check bench soak repeat fuzz
ifneq ($(filter-out clean deps lint check-fresh,$(or $(MAKECMDGOALS),all)),)
include build/pkg.mk
endif
build/pkg.mk: FORCE $(if $(MAKE_RESTARTS),,$(if $(filter deps $(DEPS_GOALS),$(MAKECMDGOALS)),deps))
	@mkdir -p $(@D)
	@pkg-config --exists $(PKGS_BASE) 2>/dev/null || { echo "make: pkg-config does not find all of $(PKGS_BASE): run 'make deps' as root (make demo, check and bench run it first)" >&2; exit 1; }
	@{ echo "PKG_BASE_CFLAGS := $$(pkg-config --cflags $(PKGS_BASE))"; \
	   echo "PKG_BASE_LIBS := $$(pkg-config --libs $(PKGS_BASE))"; \
	   if pkg-config --exists $(PKGS_VERBS) 2>/dev/null; then \
		echo "VERBS_FOUND := 1"; \
		echo "PKG_VERBS_CFLAGS := $$(pkg-config --cflags $(PKGS_VERBS))$$(scripts/rdma-core-defs)"; \
		echo "PKG_VERBS_LIBS := $$(pkg-config --libs $(PKGS_VERBS))"; \
	   fi; \
	   if pkg-config --exists $(PKGS_XDP) 2>/dev/null; then \
		echo "XDP_FOUND := 1"; \
		echo "PKG_XDP_CFLAGS := $$(pkg-config --cflags $(PKGS_XDP))"; \
		echo "PKG_XDP_LIBS := $$(pkg-config --libs $(PKGS_XDP))"; \
	   fi; } >$@.tmp; \
	 cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@
HAVE_VERBS := $(if $(NO_VERBS),,$(VERBS_FOUND))
HAVE_XDP   := $(if $(NO_XDP),,$(XDP_FOUND))
PKG_CFLAGS  = $(PKG_BASE_CFLAGS) $(if $(HAVE_VERBS),$(PKG_VERBS_CFLAGS),-DNTPX_NO_VERBS) \
	      $(if $(HAVE_XDP),$(PKG_XDP_CFLAGS),-DNTPX_NO_XDP)
PKG_LIBS    = $(if $(HAVE_VERBS),$(PKG_VERBS_LIBS)) $(if $(HAVE_XDP),$(PKG_XDP_LIBS)) \
	      $(PKG_BASE_LIBS)

WARN     := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
            -Wmissing-prototypes -Wformat=2 -Wno-unused-parameter \
            -Wvla -Wpointer-arith
CFLAGS   ?= -O2 -g
ALL_CFLAGS = -std=gnu11 $(WARN) $(CFLAGS) -D_GNU_SOURCE -Ilib -Ibuild $(PKG_CFLAGS)
LDLIBS   = lib/libntpx.a $(PKG_LIBS) -lm

ifeq ($(SAN),1)
  CFLAGS  := -O1 -g -fno-omit-frame-pointer
  ALL_CFLAGS += -fsanitize=address,undefined -fno-sanitize-recover=all
  LDFLAGS += -fsanitize=address,undefined
endif

# The optional paths' files (above), and their unit tests.
VERBS_SRC  := $(wildcard lib/ib*.c) lib/port_verbs.c lib/verbs_stamp.c
XDP_SRC    := lib/port_xdp.c lib/xdp_own.c lib/xdp_quiet.c
VERBS_UNIT := tests/unit/ib.c tests/unit/ib_fabric.c tests/unit/port_verbs.c
XDP_UNIT   := tests/unit/xdp_quiet.c
NOT_BUILT  := $(if $(HAVE_VERBS),,$(VERBS_SRC) $(VERBS_UNIT)) $(if $(HAVE_XDP),,$(XDP_SRC) $(XDP_UNIT))
LIB_SRC  := $(filter-out $(NOT_BUILT),$(sort $(wildcard lib/*.c)))
LIB_OBJ  := $(patsubst lib/%.c,build/lib/%.o,$(LIB_SRC))
TOOL_DIRS := $(patsubst src/%/,%,$(sort $(dir $(wildcard src/*/*.c))))
TOOLS    := $(sort $(patsubst src/%.c,bin/%,$(wildcard src/*.c)) $(addprefix bin/,$(TOOL_DIRS)))
UNIT     := $(patsubst tests/unit/%.c,build/unit/%.t,$(filter-out $(NOT_BUILT),$(sort $(wildcard tests/unit/*.c))))
BENCH    := $(patsubst tests/bench/%.c,build/bench/%,$(sort $(wildcard tests/bench/*.c)))
FUZZ     := $(patsubst tests/fuzz/%.c,build/fuzz/%,$(sort $(wildcard tests/fuzz/*.c)))
HELPERS  := $(patsubst tests/helpers/%.c,build/helpers/%,$(sort $(wildcard tests/helpers/*.c)))
# The tracked shell commands (bin/ntpx-*, made executable by make check)
# and the libraries they read (bin/ntpx-*.sh and .awk: not commands,
# installed under share/ntpx).  bin/ntpx-setup.sh, which every command
# sources, is made from its .in with the version in it.
SHGEN    := bin/ntpx-setup.sh
COMMANDS := $(filter-out %.sh %.awk %.in $(TOOLS),$(wildcard bin/ntpx-*))
SHLIBS   := $(sort $(wildcard bin/ntpx-*.sh bin/ntpx-*.awk) $(SHGEN))
ANALYSIS := $(wildcard analysis/ntpx-*)
SCRIPTS  := $(COMMANDS) $(ANALYSIS)
MAN1     := $(wildcard doc/*.1)
MAN5     := $(wildcard doc/*.5)
MAN7     := $(wildcard doc/*.7)

# Tests: unit binaries first, then the shell suites (chrony's order).
TESTS    = $(UNIT) $(sort $(wildcard tests/cli/*.t tests/net/*.t tests/interop/*.t tests/hw/*.t))

.PHONY: all deps check lint repeat check-timing check-fresh bench bench-quick bench-ab fuzz fuzz-merge soak demo install clean hwcheck FORCE
.DELETE_ON_ERROR:

all: lib/libntpx.a $(TOOLS) $(SHGEN) build/features

# The optional paths this build has, one a line (verbs, xdp), for the
# suites (tests/lib.sh: need_built) and scripts/hwcheck.
build/features: FORCE
	@mkdir -p build
	@printf '%s' '$(if $(HAVE_VERBS),verbs )$(if $(HAVE_XDP),xdp )' | tr ' ' '\n' > $@.tmp; \
	 cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@

bin/ntpx-setup.sh: bin/ntpx-setup.sh.in Makefile
	sed 's/@VERSION@/$(VERSION)/g' $< >$@.tmp && mv $@.tmp $@

# The goals go along: what only the tests need is left out of make demo.
deps:
	@scripts/deps $(filter $(DEPS_GOALS),$(MAKECMDGOALS))

# The version stamp is rewritten only when it changes, so that a rebuild
# after `git commit` recompiles only what names the version.
build/version.h: FORCE
	@mkdir -p build
	@v=$$(git describe --tags --dirty 2>/dev/null || echo $(VERSION)); \
	 printf '#define NTPX_VERSION "%s"\n' "$$v" > $@.tmp; \
	 cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@

# The compiler and flags the objects were built with, rewritten only
# when they change: every object and program depends on it, so that
# `make SAN=1` after a plain build (or a plain one after it) builds
# everything again rather than linking the sanitizers' objects with the
# others, or testing the plain build under the sanitizers' name.
build/flags: FORCE
	@mkdir -p build
	@printf '%s\n' '$(CC) $(ALL_CFLAGS) $(LDFLAGS)' > $@.tmp; \
	 cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@

build/lib/%.o: lib/%.c build/version.h build/flags
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

lib/libntpx.a: $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

build/src/%.o: src/%.c build/version.h build/flags
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

bin/%: build/src/%.o lib/libntpx.a
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -o $@ $< $(LDLIBS)

# A tool of several files: every src/TOOL/*.c, linked together.
define tool_dir_rule
bin/$(1): $(patsubst src/%.c,build/src/%.o,$(sort $(wildcard src/$(1)/*.c))) lib/libntpx.a
	@mkdir -p $$(@D)
	$$(CC) $$(LDFLAGS) -o $$@ $$(filter %.o,$$^) $$(LDLIBS)
endef
$(foreach d,$(TOOL_DIRS),$(eval $(call tool_dir_rule,$(d))))

build/unit/%.t: tests/unit/%.c lib/libntpx.a build/flags
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Itests/unit -MMD -MP $(LDFLAGS) -o $@ $< $(filter %.o,$^) $(LDLIBS) -lcmocka

# Code that some unit tests share (tests/unit/support/NAME.c), linked into
# those that name it here: the verbs mocks define ibv_* calls, which must
# not reach the other tests.
UNIT_SUPPORT := $(patsubst tests/unit/support/%.c,build/unit/support/%.o,$(wildcard tests/unit/support/*.c))
build/unit/support/%.o: tests/unit/support/%.c build/flags
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -Itests/unit -MMD -MP -c -o $@ $<
build/unit/port_verbs.t build/unit/ib_fabric.t: build/unit/support/verbs_mock.o
build/unit/port_verbs.t build/unit/ib_fabric.t build/unit/phc.t build/unit/hwts.t \
  build/unit/udp_hwts.t: build/unit/support/phc_mock.o

build/helpers/%: tests/helpers/%.c lib/libntpx.a build/flags
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -MMD -MP $(LDFLAGS) -o $@ $< $(LDLIBS)

# A shim for LD_PRELOAD: a shared object, without libntpx and without the
# sanitizers (it is loaded into programs that were not built with them).
build/helpers/%.so: tests/helpers/%.so.c
	@mkdir -p $(@D)
	$(CC) -std=gnu11 $(WARN) -O2 -g -D_GNU_SOURCE -fPIC -shared -MMD -MP -o $@ $<

build/bench/%: tests/bench/%.c lib/libntpx.a build/flags
	@mkdir -p $(@D)
	$(CC) $(ALL_CFLAGS) -MMD -MP $(LDFLAGS) -o $@ $< $(LDLIBS)

# libFuzzer targets build with clang and the sanitizers whatever SAN says.
build/fuzz/%: tests/fuzz/%.c $(LIB_SRC) build/version.h
	@mkdir -p $(@D)
	$(CLANG) -std=gnu11 -g -O1 -D_GNU_SOURCE -Ilib -Ibuild $(PKG_CFLAGS) \
	  -fsanitize=fuzzer,address,undefined -o $@ $< $(LIB_SRC) $(PKG_LIBS) -lm

# The uudp transport's XDP program (lib/bpf/NAME.bpf.c), compiled for the
# BPF target and embedded in libntpx as a byte array (build/bpf/NAME.h), so
# that nothing needs to be found at run time.
BPF_CFLAGS := -O2 -g -target bpf -Wall -Werror \
              -I/usr/include/$(shell $(CC) -print-multiarch 2>/dev/null)
build/bpf/%.o: lib/bpf/%.bpf.c lib/bpf/ntpx_xdp_meta.h
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c -o $@ $<
build/bpf/%.h: build/bpf/%.o
	{ echo 'static const unsigned char $*_bpf_obj[] = {'; \
	  od -An -v -tx1 $< | sed 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'; echo '};'; } > $@
build/lib/port_xdp.o $(if $(HAVE_XDP),$(FUZZ)): build/bpf/ntpx_xdp.h
.PRECIOUS: build/bpf/%.o

# After prove, scripts/leftovers fails the run if a process started from
# this checkout or a namespace the suite made (both found through the
# ledger, NTPX_LEDGER) is still there.
LEDGER := $(CURDIR)/build/check-ledger
PROVE   = CMOCKA_MESSAGE_OUTPUT=TAP NTPX_LEDGER=$(LEDGER) prove -e '' $(PROVE_FLAGS)

check: all $(UNIT) $(HELPERS) build/bench/xlflood
	@chmod +x $(SCRIPTS) tests/*/*.t 2>/dev/null || true
	@: > $(LEDGER)
	$(PROVE) $(TESTS); rc=$$?; scripts/leftovers $(CURDIR) $(LEDGER) || rc=1; exit $$rc

# make hwcheck [HWCHECK_ARGS="--peer HOST"]: what a user with RDMA or
# PTP-capable NICs runs once and sends back (scripts/hwcheck,
# doc/hardware.md): inventory, every path the machine offers, a package
# with a MANIFEST, one line per check; a skip says what was missing.
hwcheck: all
	@chmod +x scripts/hwcheck tests/*/*.t 2>/dev/null || true
	scripts/hwcheck $(HWCHECK_ARGS)

# make lint: every shell file (the commands, their libraries, analysis/,
# scripts/, .ci/run, the tests) through shellcheck at warning level
# (.shellcheckrc, tests/.shellcheckrc) and dash -n.  Needs no build.
LINT_SH = $(sort $(COMMANDS) $(filter-out $(SHGEN),$(wildcard bin/ntpx-*.sh)) bin/ntpx-setup.sh.in \
	  $(ANALYSIS) $(wildcard scripts/*) .ci/run $(wildcard tests/*.sh tests/*/*.sh tests/*/*.t))
lint:
	shellcheck -S warning $(LINT_SH)
	@for f in $(LINT_SH); do dash -n "$$f" || exit 1; done
	@echo "lint: $(words $(LINT_SH)) shell files clean"

# make repeat T=TEST [N=20] [HOG=K]: TEST through prove N times, stopping
# at the first failure; prints how many passed, and fails unless all did.
# HOG=K keeps K CPU-bound processes running meanwhile, at normal priority:
# every timing bound must hold with the other core busy (HOG=1) and with
# every core busy (HOG=2 on this kind of machine), which is harder than a
# slower machine at rest.
N ?= 20
ifneq ($(filter repeat,$(MAKECMDGOALS)),)
  ifeq ($(T),)
    $(error make repeat: T=TEST missing (make repeat T=tests/cli/truth.t N=20))
  endif
  ifeq ($(shell echo '$(N)' | grep -xE '[1-9][0-9]*'),)
    $(error make repeat: N='$(N)' is not a count)
  endif
  ifneq ($(HOG),)
    ifeq ($(shell echo '$(HOG)' | grep -xE '[0-9]+'),)
      $(error make repeat: HOG='$(HOG)' is not a count of CPU hogs)
    endif
  endif
endif
repeat: all $(UNIT) $(HELPERS) build/bench/xlflood
	@chmod +x $(SCRIPTS) tests/*/*.t 2>/dev/null || true
	@: > $(LEDGER)
	@hog=; k=0; while [ $$k -lt $(or $(HOG),0) ]; do \
	   sh -c 'while :; do :; done' & hog="$$hog $$!"; k=$$((k + 1)); done; \
	 if [ -n "$$hog" ]; then trap 'kill $$hog' EXIT; echo "== repeat: CPU hogs$$hog running"; fi; \
	 i=0; while [ $$i -lt $(N) ]; do \
	   echo "== repeat: run $$((i + 1)) of $(N): $(T)"; \
	   $(PROVE) $(T) || break; i=$$((i + 1)); \
	 done; \
	 echo "repeat: $(T) passed $$i of $(N)$${hog:+ with $(HOG) CPU hog(s)}"; \
	 [ -z "$$hog" ] || { kill $$hog; wait $$hog 2>/dev/null; trap - EXIT; }; \
	 rc=0; [ $$i = $(N) ] || rc=1; scripts/leftovers $(CURDIR) $(LEDGER) || rc=1; exit $$rc

# The suites whose bounds depend on timing (doc/hacking.md, Timing
# bounds): make check-timing runs them once more with a CPU hog on each
# core, harder than a slower machine at rest.  CI runs it after make
# check, so that a bound that holds only some of the time shows before it
# lands.  (tests/cli/nts.t is here for how long its cookies live: its
# server key rotates every 500 ms; tests/cli/nts-ke.t for the 1 s in
# which a client must get its keys while NTS-KE is under attack.)
TIMING_TESTS := tests/cli/truth.t tests/cli/discipline.t tests/cli/nts.t tests/cli/nts-ke.t tests/cli/late.t \
                tests/net/attack.t tests/net/flood.t tests/net/bias.t
check-timing:
	@$(MAKE) --no-print-directory repeat T="$(TIMING_TESTS)" N=1 HOG=2

# The fresh-machine test: removes a package the build links against and
# runs make demo and make check in a clone of this checkout (tests/fresh/,
# doc/hacking.md).
# Not in check: nothing else may build while the package is gone.
check-fresh: deps
	@: > $(LEDGER)
	$(PROVE) tests/fresh/*.t; rc=$$?; scripts/leftovers $(CURDIR) $(LEDGER) || rc=1; exit $$rc

# Every script runs to its end, whatever an earlier one said; those that
# failed (a target some exit 1 for, or a broken run) are named at the end.
bench: all $(BENCH) build/helpers/meshgen build/helpers/garbage
	@failed=; for b in $(filter-out tests/bench/quick.sh tests/bench/ab.sh tests/bench/figures.sh tests/bench/climb.sh tests/bench/ntp-capacity-loopback.sh,$(wildcard tests/bench/*.sh)); do \
	  echo "== $$b"; sh $$b || failed="$$failed $$b"; done; \
	if [ -n "$$failed" ]; then echo "make bench: exited non-zero:$$failed" >&2; exit 1; fi

# What a change to the hot path costs, in under 40 s (about 25), before committing
# it (doc/hacking.md): same-run ratios with their targets; fails nothing.
bench-quick: all build/bench/pingpong build/helpers/meshgen
	@sh tests/bench/quick.sh

# The figures of this tree against those of commit REF, built in a
# worktree under build/ab/, in alternating blocks of one run.
bench-ab: all build/bench/pingpong build/bench/genrec
	@test -n "$(REF)" || { echo "make: bench-ab needs REF=<commit>" >&2; exit 2; }
	@sh tests/bench/ab.sh "$(REF)"

# Each target runs FUZZ_SECONDS from its committed corpus
# (tests/fuzz/corpus/NAME, read) into build/corpus/NAME (written).  A
# crash, leak or timeout fails: the log's end is shown and the input is
# kept as build/fuzz/NAME-crash-... (libFuzzer's artifact).
# `make fuzz-merge` then adds to the committed corpus only the inputs
# that reach new coverage.
FUZZ_SECONDS ?= 30
fuzz: $(FUZZ)
	@for f in $(FUZZ); do n=$${f##*/}; echo "== $$n"; \
	  mkdir -p build/corpus/$$n tests/fuzz/corpus/$$n; \
	  if $$f -max_total_time=$(FUZZ_SECONDS) -timeout=10 -artifact_prefix=build/fuzz/$$n- \
	      build/corpus/$$n tests/fuzz/corpus/$$n >build/fuzz/$$n.log 2>&1; then \
	    tail -n 1 build/fuzz/$$n.log; \
	  else tail -n 40 build/fuzz/$$n.log; echo "fuzz: $$n failed" >&2; exit 1; fi; done

fuzz-merge: $(FUZZ)
	@for f in $(FUZZ); do n=$${f##*/}; mkdir -p build/corpus/$$n tests/fuzz/corpus/$$n; \
	  $$f -merge=1 tests/fuzz/corpus/$$n build/corpus/$$n >build/fuzz/$$n.merge 2>&1 || \
	  { tail -n 20 build/fuzz/$$n.merge; exit 1; }; \
	  echo "$$n: $$(ls tests/fuzz/corpus/$$n | wc -l) inputs"; done

# The soak (tests/soak, not in check): 10 minutes over udp and uudp at
# once, at 1 kHz with loss, restarts and link flaps (SOAK_DURATION,
# SOAK_RESTART, SOAK_FLAP, SOAK_OUTAGE in seconds shorten it).
soak: all $(HELPERS)
	@chmod +x tests/soak/*.t 2>/dev/null || true
	prove -v -j2 -e '' tests/soak/udp.t tests/soak/uudp.t

demo: all
	@sh scripts/demo

# Exactly the built tools, the ntpx-* commands and the analysis scripts
# go into bin; the shell libraries the commands source go into
# share/ntpx, where a command looks when they are not beside it
# (doc/hacking.md, Install).  Nothing else in bin/ is installed.
install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib \
	  $(DESTDIR)$(PREFIX)/include/ntpx $(DESTDIR)$(PREFIX)/share/ntpx \
	  $(DESTDIR)$(PREFIX)/share/man/man1 \
	  $(DESTDIR)$(PREFIX)/share/man/man5 $(DESTDIR)$(PREFIX)/share/man/man7
	install -m 755 $(TOOLS) $(COMMANDS) $(ANALYSIS) $(DESTDIR)$(PREFIX)/bin
	$(if $(SHLIBS),install -m 644 $(SHLIBS) $(DESTDIR)$(PREFIX)/share/ntpx)
	install -m 644 lib/libntpx.a $(DESTDIR)$(PREFIX)/lib
	install -m 644 $(filter-out lib/%_private.h,$(wildcard lib/*.h)) $(DESTDIR)$(PREFIX)/include/ntpx
	$(if $(MAN1),install -m 644 $(MAN1) $(DESTDIR)$(PREFIX)/share/man/man1)
	$(if $(MAN5),install -m 644 $(MAN5) $(DESTDIR)$(PREFIX)/share/man/man5)
	$(if $(MAN7),install -m 644 $(MAN7) $(DESTDIR)$(PREFIX)/share/man/man7)

clean:
	rm -rf build lib/libntpx.a $(TOOLS) $(SHGEN)

-include $(LIB_OBJ:.o=.d) $(patsubst bin/%,build/src/%.d,$(TOOLS)) $(patsubst src/%.c,build/src/%.d,$(wildcard src/*/*.c)) $(UNIT:.t=.d) $(UNIT_SUPPORT:.o=.d) $(BENCH:=.d) $(HELPERS:=.d)

