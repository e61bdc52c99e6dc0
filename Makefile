# SPDX-License-Identifier: GPL-2.0
#
# xdp_flow top-level build.
#
#   make                 module (for the running kernel), helper and CLI
#   make module KDIR=... the module against another kernel's build tree
#   make umh cli         user space only (no kernel tree needed)
#   make fuzz            selftests/guest/fuzz_genl, the generic netlink
#                        fuzzer of selftests/guest/test_44_fuzz.sh
#   make install         the module (with its helper inside), the CLI and
#                        its manual page, xdp-flow(8)
#   make dkms            the sources under /usr/src, built and installed by
#                        dkms for the running kernel and each new one
#   make dkms-src        only the copy under $(DESTDIR)/usr/src
#   make test            the whole test suite (selftests/README.md)
#   make demo            the demonstration (README.md)
#   make bench           every benchmark, one results table (bench/README.md)

KDIR ?= /lib/modules/$(shell uname -r)/build
PREFIX ?= /usr/local
SBINDIR ?= $(PREFIX)/sbin
MANDIR ?= $(PREFIX)/share/man
DESTDIR ?=

# One version, dkms.conf's.
VERSION := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"$$/\1/p' dkms.conf)
DKMS_SRC := $(DESTDIR)/usr/src/xdp_flow-$(VERSION)

.PHONY: all module umh cli fuzz install dkms dkms-src clean test demo bench

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

# A test program (never installed): only libc and the uapi header.
FUZZ := selftests/guest/fuzz_genl
fuzz: $(FUZZ)

$(FUZZ): $(FUZZ).c include/uapi/linux/xdp_flow.h
	$(CC) -O2 -g -Wall -Wextra -std=gnu11 -Iinclude/uapi -o $@ $<

# The helper is inside the module: nothing else to install for it. Under
# $(DESTDIR), the module goes to $(DESTDIR)/lib/modules (kbuild's
# INSTALL_MOD_PATH, whose depmod runs there); the running system's module
# index is left alone.
install: all
	$(MAKE) -C $(KDIR) M=$(CURDIR)/net/xdp_flow \
		XDP_FLOW_UMH=$(CURDIR)/umh/xdp_flow_umh \
		$(if $(DESTDIR),INSTALL_MOD_PATH=$(DESTDIR)) modules_install
	$(MAKE) -C tools/xdp-flow install DESTDIR=$(DESTDIR) SBINDIR=$(SBINDIR) \
		MANDIR=$(MANDIR)
	$(if $(DESTDIR),,-depmod -a)

# What the module and its helper are built from, and dkms.conf: no build
# products (kbuild's *.mod.c, bpftool's skeleton), tests or caches.
DKMS_MOD := $(filter-out %.mod.c,$(wildcard net/xdp_flow/*.[chS]))
DKMS_UMH := $(filter-out %.skel.h,$(wildcard umh/*.[ch]))

dkms-src:
	rm -rf $(DKMS_SRC)
	install -d $(DKMS_SRC)/net/xdp_flow $(DKMS_SRC)/include/uapi/linux \
		$(DKMS_SRC)/umh
	install -m 644 Makefile Kconfig dkms.conf $(DKMS_SRC)/
	install -m 644 net/xdp_flow/Makefile $(DKMS_MOD) $(DKMS_SRC)/net/xdp_flow/
	install -m 644 include/uapi/linux/xdp_flow.h $(DKMS_SRC)/include/uapi/linux/
	install -m 644 umh/Makefile umh/objs.mk $(DKMS_UMH) $(DKMS_SRC)/umh/

# Again after an update: the version dkms had goes first, from every
# kernel. dkms asks make for the kernel's CC; run under make, that make
# would print "Entering directory" into it: dkms runs as from a shell.
DKMS := env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL dkms
dkms: dkms-src
	-$(DKMS) remove -m xdp_flow -v $(VERSION) --all >/dev/null 2>&1
	$(DKMS) add -m xdp_flow -v $(VERSION)
	$(DKMS) install -m xdp_flow -v $(VERSION)

clean:
	-test -f $(KDIR)/Makefile && $(MAKE) -C $(KDIR) M=$(CURDIR)/net/xdp_flow clean
	$(MAKE) -C umh clean
	$(MAKE) -C tools/xdp-flow clean
	rm -f $(FUZZ)

test:
	selftests/run.sh

demo:
	tools/demo.sh

bench:
	bench/run.sh
