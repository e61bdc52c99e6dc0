#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Host checks of the xdp-flow command that need no module: argument
# handling and exit codes, the error for a missing module, and the text
# and JSON output of crafted module replies (print_test.c).
# Run from tools/xdp-flow: `make check`.

cd "$(dirname "$0")/.." || exit 1
CLI=./xdp-flow
fails=0
n=0

ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1 # $2"; }

# expect_rc RC STDERR-SUBSTRING ARGS...
expect_rc()
{
	local want=$1 msg=$2 err rc
	shift 2
	err=$($CLI "$@" 2>&1 >/dev/null)
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		nok "xdp-flow $* exits $want" "exit code $rc: $err"
	elif [[ "$err" != *"$msg"* ]]; then
		nok "xdp-flow $* says '$msg'" "said: $err"
	else
		ok "xdp-flow $* exits $want with '$msg'"
	fi
}

expect_rc 2 "no command given"
expect_rc 2 "unknown command 'frob'" frob
expect_rc 2 "invalid option -- 'x'" -x status
expect_rc 2 "'enable' needs 'dev DEV'" enable
expect_rc 2 "'dev' needs a device name" show dev
expect_rc 2 "unexpected argument 'bogus'" enable dev lo bogus
expect_rc 2 "unexpected argument 'generic'" disable dev lo generic
expect_rc 2 "unexpected argument 'dev'" status dev lo
expect_rc 2 "invalid device name" enable dev 0123456789abcdefXYZ
expect_rc 2 "'timeout' needs a number of seconds" wait timeout
expect_rc 2 "invalid timeout 'x'" wait timeout x
expect_rc 2 "invalid timeout '-1'" wait timeout -1
expect_rc 2 "unexpected argument 'dev'" wait dev lo
expect_rc 0 "" -h
expect_rc 1 "unknown device 'nosuchdev0'" enable dev nosuchdev0
expect_rc 1 "unknown device 'nosuchdev0'" show dev nosuchdev0

if [ -e /sys/module/xdp_flow ]; then
	echo "# the xdp_flow module is loaded: skipping the missing-module checks"
else
	expect_rc 1 "the xdp_flow module is not loaded (modprobe xdp_flow)" status
	expect_rc 1 "the xdp_flow module is not loaded (modprobe xdp_flow)" -j show
	expect_rc 1 "the xdp_flow module is not loaded (modprobe xdp_flow)" enable dev lo generic
	expect_rc 1 "the xdp_flow module is not loaded (modprobe xdp_flow)" wait
	out=$($CLI -j status 2>/dev/null)
	if [ -z "$out" ]; then ok "no JSON on stdout on error"; else nok "no JSON on stdout on error" "$out"; fi
fi

# expect_json NAME JQ-FILTER WANT: print_test's JSON, through the filter
expect_json()
{
	local got

	got=$("$pt" j | jq -c "$2" 2>&1)
	if [ "$got" = "$3" ]; then
		ok "$1"
	else
		nok "$1" "got: $got"
	fi
}

pt=$(mktemp)
trap 'rm -f "$pt"' EXIT
if ! ${CC:-cc} -Wall -Wextra -Werror -I../../include $(pkg-config --cflags libnl-genl-3.0) \
	-o "$pt" tests/print_test.c $(pkg-config --libs libnl-genl-3.0); then
	nok "print_test builds" "compiler failed"
else
	if diff -u tests/expected.txt <("$pt"); then
		ok "text output of rules and devices"
	else
		nok "text output of rules and devices" "differs from tests/expected.txt"
	fi
	for mode in j jp; do
		got=$("$pt" $mode | jq -c '[.rules[] | [.dev, .source, .prio, .software, .waiting, .why, .key.dst_ip, .actions[0].kind, .stats.packets, .stats.lastused_ms_ago]], [.devices[] | [.state, .hook, .xdp_mode, .hook_why, .switch, .rule_count, .error]]' 2>&1)
		want='[["lo","tc",1,false,false,null,"10.0.2.1/32","drop",50,null],["lo","tc",2,true,false,"cannot offload a match of this rule","10.1.0.1/255.0.255.255","pass",0,null],["lo","tc",2,true,true,"no room in the XDP tables","10.1.0.1/255.0.255.255","pass",0,null],["lo","tc",49152,false,false,null,"2001:db8::1/128","redirect",7,2500],["lo","nftables",10,false,false,null,"10.0.3.1/32","drop",3,null],["lo","flowtable",0,false,false,null,"192.0.2.1/32","ft_route",2,null],["lo","flowtable",0,false,false,null,null,"ft_route",2,null],["lo","tc",5,false,false,null,null,"mirror",2,null],["lo","tc",6,false,false,null,null,"tunnel_set",2,null],["lo","tc",8,false,false,null,null,"tunnel_set",2,null],["lo","tc",7,false,false,null,null,"tunnel_unset",2,null],["lo","tc",20,false,false,null,null,"tunnel_unset",2,null]]
[["attached","xdp","native",null,"xdp-flow",2,null],["error","xdp","generic",null,"xdp-flow",2,"attach \"failed\""],["idle","tc","tcx","auto: \"virtual\" device","hw-tc-offload",0,null]]'
		if [ "$got" = "$want" ]; then
			ok "JSON output (-$mode) parses with the documented keys"
		else
			nok "JSON output (-$mode) parses with the documented keys" "got: $got"
		fi
	done
	expect_json "JSON output of PPPoE keys and actions" \
		'[.rules[] | select(.source == "flowtable") | [.key.pppoe_sid, .key.ppp_proto, [.actions[] | [.kind, .op, .sid]]]]' \
		'[[4660,"ip",[["ft_route",null,null],["ft_nat",null,null],["pppoe","pop",null],["redirect",null,null]]],[null,null,[["ft_route",null,null],["ft_nat",null,null],["pppoe","push",4660],["redirect",null,null]]]]'
	expect_json "JSON output of mirrors and mirred ingress" \
		'[.rules[] | select(.prio == 5) | .actions[] | [.kind, .dev, .ifindex]]' \
		'[["mirror","lo",1],["vlan",null,null],["mirror_ingress","lo",1],["ptype",null,null],["redirect_ingress","lo",1]]'
	expect_json "JSON output of tunnel_key set" \
		'[.rules[] | select(.prio == 6) | .actions[0] | [.kind, .src_ip, .dst_ip, .key_id, .tos, .ttl, .csum, .nofrag]]' \
		'[["tunnel_set","192.0.2.1","192.0.2.2",42,16,64,false,true]]'
	expect_json "JSON output of Geneve options" \
		'[.rules[] | select(.prio == 8) | .actions[1] | [.kind, .geneve_opts]]' \
		'[["tunnel_opts","0102:80:0000002a"]]'
	expect_json "JSON output of tunnel metadata keys and tunnel_key unset" \
		'[.rules[] | select(.prio == 7) | [.key.enc_src_ip, .key.enc_dst_ip, .key.enc_key_id, .key.enc_tos, .key.enc_ttl, .key.geneve_opts, .actions[0].kind]]' \
		'[["192.0.2.2/32","192.0.2.0/24",42,"0x10/0xfc",64,"0102:80:00010000/ffff:ff:ffff0000","tunnel_unset"]]'
	expect_json "JSON output of outer IPv6 addresses" \
		'[.rules[] | select(.prio == 20) | [.key.enc_src_ip, .key.enc_dst_ip, .key.enc_key_id]]' \
		'[["2001:db8::2/128","2001:db8::1/128",42]]'
fi

echo "1..$n"
[ $fails -eq 0 ]
