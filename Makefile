# SPDX-License-Identifier: GPL-2.0
#
# xdp_flow top-level build.
#
#   make                 module (for the running kernel), helper and CLI
#   make module KDIR=... the module against another kernel's build tree
#   make umh cli         user space only (no kernel tree needed)
#   make install         the module (with its helper inside) and the CLI
#   make test            the whole test suite (see README.md)
#   make demo            the demonstration (see README.md)
#   make bench           every benchmark, one results table (bench/README.md)

KDIR ?= /lib/modules/$(shell uname -r)/build
PREFIX ?= /usr/local
SBINDIR ?= $(PREFIX)/sbin
DESTDIR ?=

.PHONY: all module umh cli install clean test demo bench

all: module umh cli

# The module carries the helper: build it first.
module: umh
	@test -f $(KDIR)/Makefile || { \
		echo "No kernel build tree at $(KDIR): install the headers of the" \
		     "running kernel or pass KDIR=<tree>" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR)/net/xdp_flow \
		XDP_FLOW_UMH=$(CURDIR)/umh/xdp_flow_umh modules

umh:
	$(MAKE) -C umh

cli:
	$(MAKE) -C tools/xdp-flow

# The helper is inside the module: nothing else to install for it.
install: all
	$(MAKE) -C $(KDIR) M=$(CURDIR)/net/xdp_flow \
		XDP_FLOW_UMH=$(CURDIR)/umh/xdp_flow_umh modules_install
	$(MAKE) -C tools/xdp-flow install DESTDIR=$(DESTDIR) SBINDIR=$(SBINDIR)
	-depmod -a

clean:
	-test -f $(KDIR)/Makefile && $(MAKE) -C $(KDIR) M=$(CURDIR)/net/xdp_flow clean
	$(MAKE) -C umh clean
	$(MAKE) -C tools/xdp-flow clean

test:
	selftests/run.sh

demo:
	tools/demo.sh

bench:
	bench/run.sh
