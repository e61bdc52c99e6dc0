# SPDX-License-Identifier: GPL-2.0
#
# xdp_flow top-level build.
#
#   make                 module (for the running kernel), helper and CLI
#   make module KDIR=... the module against another kernel's build tree
#   make umh cli         user space only (no kernel tree needed)
#   make install         module, helper and CLI under $(PREFIX)
#   make test            the whole test suite (see README.md)
#   make demo            the demonstration (see README.md)
#   make bench           every benchmark, one results table (bench/README.md)

KDIR ?= /lib/modules/$(shell uname -r)/build
PREFIX ?= /usr/local
SBINDIR ?= $(PREFIX)/sbin
DESTDIR ?=

.PHONY: all module umh cli install clean test demo bench

all: module umh cli

module:
	@test -f $(KDIR)/Makefile || { \
		echo "No kernel build tree at $(KDIR): install the headers of the" \
		     "running kernel or pass KDIR=<tree>" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(CURDIR)/net/xdp_flow modules

umh:
	$(MAKE) -C umh

cli:
	$(MAKE) -C tools/xdp-flow

install: all
	$(MAKE) -C $(KDIR) M=$(CURDIR)/net/xdp_flow modules_install
	$(MAKE) -C umh install DESTDIR=$(DESTDIR) SBINDIR=$(SBINDIR)
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
