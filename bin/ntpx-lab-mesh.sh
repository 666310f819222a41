# SPDX-License-Identifier: ISC
# ntpx-lab-mesh.sh - ntpx-lab's mesh of N hosts (--hosts N), sourced by
# bin/ntpx-lab after its options are read; not a command.  See the top of
# bin/ntpx-lab and doc/ntpx-lab.1.
#
#   hosts   A, B, ... (3..6): namespace ntpx-LAB-X, its sim clock
#           $rundir/LAB.mesh/X.clock (offset and frequency from --seed)
#   links   every pair, or --links A-B,...: in host X, interface toY,
#           address 10.79.IJ.I/24 (I, J the hosts' numbers, I < J)
#   middle  a link with a delay or a rate in either direction runs through
#           namespace ntpx-LAB-XY, interfaces X and Y: bin/wiredelay
#           bridges them (holding each frame its direction's delay) or,
#           with rates only, a Linux bridge; FROM->TO's HTB and byte FIFO
#           sit on the middle's egress toward TO
#
# Everything is inside the namespaces and the run directory: `down`
# removes them whatever `up` got to.
#
# ntpx-lab sets lab, rundir, state, cmd and the options before sourcing.
# shellcheck disable=SC2154

mesh_letters="A B C D E F"

# The configuration: options first, then what `up` recorded (but for
# `up` itself, which makes what its options say: "fresh").
mesh_config() {
	c_hosts= c_links= c_seed= c_delays= c_rates= c_queue= c_mtu=
	if [ "${1:-}" != fresh ] && [ -r "$state" ]; then
		# shellcheck disable=SC1090
		. "$state"
	fi
	hosts=${hosts:-${c_hosts:-}}
	links=${links:-${c_links:-}}
	seed=${seed:-${c_seed:-1}}
	delays=${delays:-${c_delays:-}}
	rates=${rates:-${c_rates:-}}
	queue=${queue:-${c_queue:-2ms}}
	mtu=${mtu:-${c_mtu:-1500}}
	case $hosts in ''|*[!0-9]*) usage_error "bad --hosts '$hosts' (3..6)" ;; esac
	[ "$hosts" -ge 3 ] && [ "$hosts" -le 6 ] || usage_error "--hosts $hosts out of range (3..6)"
	case $seed in ''|*[!0-9]*) usage_error "bad --seed '$seed' (a number)" ;; esac
	[ ${#seed} -le 9 ] || usage_error "--seed '$seed' is more than 9 digits"
	case $mtu in ''|*[!0-9]*) usage_error "bad mtu '$mtu'" ;; esac
	qns=$(delay_ns "$queue") || usage_error "bad queue delay '$queue' (expected e.g. 2ms, 500us)"
	names=$(echo $mesh_letters | cut -d' ' -f1-"$hosts")
	[ -n "$links" ] || links=$(mesh_full)
	mesh_links_check
	mesh_dirs_check
}

# The index (1..6) of host X.
mesh_idx() {
	case $1 in A) echo 1 ;; B) echo 2 ;; C) echo 3 ;; D) echo 4 ;; E) echo 5 ;; F) echo 6 ;; *) return 1 ;; esac
}

mesh_is_host() {
	for _h in $names; do [ "$_h" = "$1" ] && return 0; done
	return 1
}

# Every pair, in order: A-B,A-C,...
mesh_full() {
	_l=
	for _a in $names; do
		for _b in $names; do
			[ "$(mesh_idx "$_a")" -lt "$(mesh_idx "$_b")" ] && _l="$_l,$_a-$_b"
		done
	done
	echo "${_l#,}"
}

# The links as "X-Y" with X before Y, checked, in mesh_list.
mesh_links_check() {
	mesh_list=
	for _l in $(echo "$links" | tr ',' ' '); do
		case $_l in
		?-?) ;;
		*) usage_error "bad link '$_l' in --links (HOST-HOST: A-B)" ;;
		esac
		_a=${_l%-*} _b=${_l#*-}
		mesh_is_host "$_a" && mesh_is_host "$_b" ||
			usage_error "link '$_l': hosts are $(echo $names | tr ' ' ',') with --hosts $hosts"
		[ "$_a" != "$_b" ] || usage_error "link '$_l' joins a host to itself"
		[ "$(mesh_idx "$_a")" -lt "$(mesh_idx "$_b")" ] || { _t=$_a; _a=$_b; _b=$_t; }
		case " $mesh_list " in *" $_a-$_b "*) usage_error "link '$_l' named twice" ;; esac
		mesh_list="$mesh_list $_a-$_b"
	done
	[ -n "$mesh_list" ] || usage_error "--links names no link"
	# Every host on one connected graph: what ntpmesh fits.
	_seen=$(echo $names | cut -d' ' -f1) _grew=1
	while [ "$_grew" = 1 ]; do
		_grew=0
		for _l in $mesh_list; do
			_a=${_l%-*} _b=${_l#*-}
			case " $_seen " in
			*" $_a "*) case " $_seen " in *" $_b "*) ;; *) _seen="$_seen $_b" _grew=1 ;; esac ;;
			*) case " $_seen " in *" $_b "*) _seen="$_seen $_a" _grew=1 ;; esac ;;
			esac
		done
	done
	for _h in $names; do
		case " $_seen " in *" $_h "*) ;; *) usage_error "host $_h is on no path from A (--links)" ;; esac
	done
}

mesh_has_link() {
	case " $mesh_list " in *" $1-$2 "*|*" $2-$1 "*) return 0 ;; esac
	return 1
}

# --delay and --rate: FROM:TO=VALUE, each direction of a link once;
# the values into d_FROM_TO (ns) and r_FROM_TO (bit/s).
mesh_dirs_check() {
	for _x in $mesh_list; do
		_a=${_x%-*} _b=${_x#*-}
		eval "d_${_a}_$_b= d_${_b}_$_a= r_${_a}_$_b= r_${_b}_$_a="
	done
	for _kind in delay rate; do
		if [ $_kind = delay ]; then _vals=$delays; else _vals=$rates; fi
		for _v in $_vals; do
			case $_v in
			?:?=*) ;;
			*) usage_error "bad --$_kind '$_v' (FROM:TO=VALUE: A:B=1ms)" ;;
			esac
			_f=${_v%%:*} _t=${_v#*:} _t=${_t%%=*} _n=${_v#*=}
			mesh_has_link "$_f" "$_t" || usage_error "--$_kind '$_v': no link $_f-$_t in the mesh"
			if [ $_kind = delay ]; then
				_ns=$(delay_ns "$_n") ||
					usage_error "bad delay '$_n' in '$_v' (1us..10s, a unit: 1ms, 100us)"
				eval "_old=\$d_${_f}_$_t"
				[ -z "$_old" ] || usage_error "--delay $_f:$_t given twice"
				eval "d_${_f}_$_t=$_ns"
			else
				_bps=$(rate_bps "$_n") || usage_error "bad rate '$_n' in '$_v' (expected e.g. 1G, 800M)"
				eval "_old=\$r_${_f}_$_t"
				[ -z "$_old" ] || usage_error "--rate $_f:$_t given twice"
				eval "r_${_f}_$_t=$_bps"
			fi
		done
	done
}

mesh_ns() { echo "ntpx-$lab-$1"; }

# Host Y's address on the link from X.
mesh_addr() {
	_i=$(mesh_idx "$1") _j=$(mesh_idx "$2")
	if [ "$_i" -lt "$_j" ]; then echo "10.79.$_i$_j.$_j"; else echo "10.79.$_j$_i.$_j"; fi
}

# Whether link X-Y runs through a middle namespace: it has a delay or a
# rate in either direction.
mesh_middle() {
	eval "_m=\${d_$1_$2}\${d_$2_$1}\${r_$1_$2}\${r_$2_$1}"
	[ -n "$_m" ]
}

mesh_dir() { echo "$rundir/$lab.mesh"; }

# The seeded generator (an LCG in shell arithmetic, so that a seed gives
# the same clocks everywhere): the next value in 0..2^31-1.
mesh_rand() {
	mesh_x=$(((mesh_x * 1103515245 + 12345) % 2147483648))
}

# Each host's clock: offset in -5..5 ms (us), frequency in -20..20 ppm
# (ppb), as "X OFFSET_US FREQ_PPB" lines.
mesh_clocks() {
	mesh_x=$seed
	for _h in $names; do
		mesh_rand; mesh_rand
		_o=$((mesh_x % 10001 - 5000))
		mesh_rand
		_f=$((mesh_x % 40001 - 20000))
		echo "$_h $_o $_f"
	done
}

mesh_ppm() {	# ppb -> "N.NNNppm"
	_p=$1 _s=
	[ "$_p" -ge 0 ] || { _s=-; _p=$((-_p)); }
	printf '%s%d.%03dppm\n' "$_s" $((_p / 1000)) $((_p % 1000))
}

mesh_tool() { echo "$(dirname "$0")/$1"; }

# HTB at RATE bit/s with a byte FIFO of the queue's worth under it, on DEV in NS.
mesh_shaper() {
	_qb=$(awk -v b="$3" -v q="$qns" 'BEGIN { v = b * q / 8e9; if (v < 70000) v = 70000; printf "%.0f\n", v }')
	_bu=$(awk -v b="$3" 'BEGIN { v = b / 8e3; if (v < 70000) v = 70000; printf "%.0f\n", v }')
	run tc -n "$1" qdisc replace dev "$2" root handle 1: htb default 1
	run tc -n "$1" class replace dev "$2" parent 1: classid 1:1 htb \
		rate "${3}bit" ceil "${3}bit" burst "$_bu" cburst "$_bu"
	run tc -n "$1" qdisc replace dev "$2" parent 1:1 handle 10: bfifo limit "$_qb"
}

mesh_veth() {	# NS1 DEV1 NS2 DEV2
	_out=$(ip link add "$2" netns "$1" type veth peer name "$4" netns "$3" 2>&1) ||
		fail_up "cannot make veth pair $1/$2 - $3/$4 (${_out:-no veth in this kernel?})"
	for _e in "$1:$2" "$3:$4"; do
		run ip -n "${_e%%:*}" link set dev "${_e#*:}" mtu "$mtu" up
		# Complete checksums from the sender: a frame that a relay
		# copies through a packet socket keeps none of the offload's
		# state (as on ntpx-lab's fast path).
		run ip netns exec "${_e%%:*}" ethtool -K "${_e#*:}" tx off
	done
}

# The relay of link X-Y in its middle namespace (bin/wiredelay), each
# direction held its delay, under SCHED_FIFO so that the holds stay exact
# when every core is busy; its summary in XY.wiredelay.stats when it ends.
# Returns once it is ready, or 1 with mesh_relay_err.
mesh_relay_start() {
	eval "_dab=\${d_$1_$2} _dba=\${d_$2_$1}"
	_wd=$(mesh_tool wiredelay)
	[ -x "$_wd" ] || { mesh_relay_err="--delay needs $_wd (the relay that holds each frame)"; return 1; }
	_md=$(mesh_dir)
	rm -f "$_md/$1$2.ready" "$_md/$1$2.wiredelay.stats"
	_wo=
	[ -z "$_dab" ] || _wo="$_wo --delay-ab ${_dab}ns"
	[ -z "$_dba" ] || _wo="$_wo --delay-ba ${_dba}ns"
	# shellcheck disable=SC2086
	ip netns exec "$(mesh_ns "$1$2")" "$_wd" $_wo --priority 50 --ready "$_md/$1$2.ready" \
		--stats "$_md/$1$2.wiredelay.stats" "$1" "$2" </dev/null >/dev/null \
		2>"$_md/$1$2.wiredelay.log" &
	_wpid=$!
	echo "$_wpid" >"$_md/$1$2.wiredelay.pid"
	# Its ready file, or its end: no guess at how long it takes.
	while [ ! -e "$_md/$1$2.ready" ]; do
		kill -0 "$_wpid" 2>/dev/null || {
			mesh_relay_err="wiredelay on $1-$2 ended: $(tail -n 1 "$_md/$1$2.wiredelay.log")"
			return 1
		}
		sleep 0.01
	done
}

# Ends the relay of X-Y (its summary written) and waits for it.
mesh_relay_stop() {
	_wpid=$(cat "$(mesh_dir)/$1$2.wiredelay.pid" 2>/dev/null) || return 0
	kill "$_wpid" 2>/dev/null
	while kill -0 "$_wpid" 2>/dev/null; do sleep 0.01; done
	rm -f "$(mesh_dir)/$1$2.wiredelay.pid"
}

# The links that have a relay: "X Y" lines.
mesh_relays() {
	for _l in $mesh_list; do
		eval "_r=\${d_${_l%-*}_${_l#*-}}\${d_${_l#*-}_${_l%-*}}"
		[ -z "$_r" ] || echo "${_l%-*} ${_l#*-}"
	done
}

mesh_link() {	# A B
	_na=$(mesh_ns "$1") _nb=$(mesh_ns "$2")
	if ! mesh_middle "$1" "$2"; then
		mesh_veth "$_na" "to$2" "$_nb" "to$1"
	else
		_nm=$(mesh_ns "$1$2")
		_out=$(ip netns add "$_nm" 2>&1) || fail_up "cannot make namespace $_nm (${_out:-failed})"
		run ip -n "$_nm" link set dev lo up
		mesh_veth "$_na" "to$2" "$_nm" "$1"
		mesh_veth "$_nb" "to$1" "$_nm" "$2"
		# FROM->TO leaves the middle toward TO.
		eval "_ab=\${r_$1_$2} _ba=\${r_$2_$1}"
		[ -z "$_ab" ] || mesh_shaper "$_nm" "$2" "$_ab"
		[ -z "$_ba" ] || mesh_shaper "$_nm" "$1" "$_ba"
		eval "_dab=\${d_$1_$2} _dba=\${d_$2_$1}"
		if [ -n "$_dab$_dba" ]; then
			mesh_relay_start "$1" "$2" || fail_up "$mesh_relay_err"
		else
			run ip -n "$_nm" link add br0 type bridge
			run ip -n "$_nm" link set dev "$1" master br0
			run ip -n "$_nm" link set dev "$2" master br0
			run ip -n "$_nm" link set dev br0 up
		fi
	fi
	run ip -n "$_na" addr replace "$(mesh_addr "$2" "$1")/24" dev "to$2"
	run ip -n "$_nb" addr replace "$(mesh_addr "$1" "$2")/24" dev "to$1"
}

mesh_up() {
	need_root
	mesh_config fresh
	[ -z "${NTPX_LEDGER:-}" ] || echo "$lab" >> "$NTPX_LEDGER" ||
		die "cannot write the ledger $NTPX_LEDGER"
	# A lab of this name is made anew.
	mesh_teardown
	mkdir -p "$(mesh_dir)" || fail_up "cannot make $(mesh_dir)"
	# The record first: `down` finds what up made even if up fails.
	printf 'c_hosts=%s\nc_links=%s\nc_seed=%s\nc_delays="%s"\nc_rates="%s"\nc_queue=%s\nc_mtu=%s\n' \
		"$hosts" "$(echo $mesh_list | tr ' ' ',')" "$seed" "$delays" "$rates" "$queue" "$mtu" \
		>"$state.tmp" && mv "$state.tmp" "$state" || fail_up "cannot write $state"
	mesh_clocks >"$(mesh_dir)/clocks"
	while read -r _h _o _f; do
		_n=$(mesh_ns "$_h")
		_out=$(ip netns add "$_n" 2>&1) || fail_up "cannot make namespace $_n (${_out:-failed})"
		run ip -n "$_n" link set dev lo up
		run "$(mesh_tool clockstep)" --clock "sim:$(mesh_dir)/$_h.clock" --create \
			--offset "${_o}us" --freq "$(mesh_ppm "$_f")"
	done <"$(mesh_dir)/clocks"
	for _l in $mesh_list; do
		mesh_link "${_l%-*}" "${_l#*-}"
	done
}

# What up made: the namespaces (their processes ended first), the clocks.
mesh_teardown() {
	for _n in $(ip netns list 2>/dev/null | awk '{ print $1 }' | grep -E "^ntpx-$lab-[A-F]{1,2}\$"); do
		_pids=$(ip netns pids "$_n" 2>/dev/null)
		[ -n "$_pids" ] && kill $_pids 2>/dev/null
		ip netns del "$_n" 2>/dev/null
	done
	rm -rf "$(mesh_dir)"
	rm -f "$state" "$state.tmp"
	rmdir "$rundir" 2>/dev/null
	return 0
}

mesh_left() { ip netns list 2>/dev/null | awk '{ print $1 }' | grep -qE "^ntpx-$lab-[A-F]{1,2}\$"; }

mesh_down() {
	need_root
	mesh_teardown
	! mesh_left || die "cannot remove namespaces of lab $lab"
}

mesh_is_up() {
	[ -r "$state" ] || return 1
	for _h in $names; do ns_exists "$(mesh_ns "$_h")" || return 1; done
	for _l in $mesh_list; do
		link_exists "$(mesh_ns "${_l%-*}")" "to${_l#*-}" || return 1
	done
}

mesh_env() {
	mesh_config
	echo "NTPX_LAB=$lab"
	echo "NTPX_MESH_HOSTS=\"$names\""
	echo "NTPX_MESH_LINKS=\"$mesh_list\""
	_ex="NTPX_LAB NTPX_MESH_HOSTS NTPX_MESH_LINKS"
	while read -r _h _o _f; do
		echo "NTPX_NS_$_h=$(mesh_ns "$_h")"
		echo "NTPX_CLOCK_$_h=sim:$(mesh_dir)/$_h.clock"
		echo "NTPX_CLOCK_OFFSET_US_$_h=$_o"
		echo "NTPX_CLOCK_FREQ_PPB_$_h=$_f"
		_ex="$_ex NTPX_NS_$_h NTPX_CLOCK_$_h NTPX_CLOCK_OFFSET_US_$_h NTPX_CLOCK_FREQ_PPB_$_h"
	done <<EOF
$(mesh_clocks)
EOF
	for _l in $mesh_list; do
		_a=${_l%-*} _b=${_l#*-}
		for _d in "$_a $_b" "$_b $_a"; do
			set -- $_d
			eval "_dl=\${d_$1_$2} _rt=\${r_$1_$2}"
			echo "NTPX_ADDR_$1_$2=$(mesh_addr "$1" "$2")"
			echo "NTPX_DELAY_NS_$1_$2=${_dl:-0}"
			echo "NTPX_RATE_$1_$2=${_rt:-0}"
			_ex="$_ex NTPX_ADDR_$1_$2 NTPX_DELAY_NS_$1_$2 NTPX_RATE_$1_$2"
		done
	done
	echo "export $_ex"
}

mesh_status() {
	mesh_config
	if ! mesh_is_up; then
		echo "lab $lab: down"
		return 1
	fi
	echo "lab $lab: up, a mesh of $hosts hosts, seed $seed"
	while read -r _h _o _f; do
		echo "  $_h  namespace $(mesh_ns "$_h")  clock $(mesh_dir)/$_h.clock: offset ${_o} us, freq $(mesh_ppm "$_f")"
	done <"$(mesh_dir)/clocks"
	for _l in $mesh_list; do
		_a=${_l%-*} _b=${_l#*-}
		_line="  $_a-$_b  $(mesh_addr "$_b" "$_a") - $(mesh_addr "$_a" "$_b")"
		for _d in "$_a $_b" "$_b $_a"; do
			set -- $_d
			eval "_dl=\${d_$1_$2} _rt=\${r_$1_$2}"
			[ -z "$_dl" ] || _line="$_line, $1->$2 delay $_dl ns"
			[ -z "$_rt" ] || _line="$_line, $1->$2 rate $_rt bit/s queue $queue"
		done
		if mesh_middle "$_a" "$_b"; then
			_line="$_line (through $(mesh_ns "$_a$_b"))"
		fi
		echo "$_line"
	done
}

mesh_exec() {
	[ $# -ge 1 ] || usage_error "exec needs a host ($(echo $names | tr ' ' ','))"
	mesh_is_host "$1" || usage_error "exec: unknown host '$1' ($(echo $names | tr ' ' ','))"
	_n=$(mesh_ns "$1")
	shift
	[ $# -ge 1 ] || usage_error "exec: missing command"
	need_root
	ns_exists "$_n" || die "lab $lab is not up (no namespace $_n)"
	exec ip netns exec "$_n" "$@"
}

# mesh-run: every host serves, every host probes each neighbour.
mesh_run() {
	_odir= _dur=10s _int=10ms _loads=
	while [ $# -gt 0 ]; do
		case $1 in
		-o|--output) [ $# -ge 2 ] || usage_error "option '$1' needs a value"; _odir=$2; shift 2 ;;
		-d|--duration) [ $# -ge 2 ] || usage_error "option '$1' needs a value"; _dur=$2; shift 2 ;;
		-i|--interval) [ $# -ge 2 ] || usage_error "option '$1' needs a value"; _int=$2; shift 2 ;;
		--load) [ $# -ge 2 ] || usage_error "option '$1' needs a value"; _loads="$_loads $2"; shift 2 ;;
		*) usage_error "mesh-run: unknown argument '$1'" ;;
		esac
	done
	[ -n "$_odir" ] || usage_error "mesh-run needs -o DIR"
	_dns=$(units duration "$_dur") && [ "$_dns" -gt 0 ] || usage_error "bad duration '$_dur'"
	_ins=$(units duration "$_int") && [ "$_ins" -gt 0 ] || usage_error "bad interval '$_int'"
	for _v in $_loads; do
		case $_v in ?:?=*) ;; *) usage_error "bad --load '$_v' (FROM:TO=RATE: A:B=500M)" ;; esac
		_f=${_v%%:*} _t=${_v#*:} _t=${_t%%=*}
		mesh_has_link "$_f" "$_t" || usage_error "--load '$_v': no link $_f-$_t in the mesh"
		rate_bps "${_v#*=}" >/dev/null || usage_error "bad rate in --load '$_v'"
	done
	need_root
	mesh_is_up || die "lab $lab is not up"
	mkdir -p "$_odir" || die "cannot make $_odir"
	_pids= _rpids= _lpids=
	mesh_run_stop() {
		for _p in $_pids $_lpids $_rpids; do kill "$_p" 2>/dev/null; done
		for _p in $_pids $_lpids $_rpids; do wait "$_p" 2>/dev/null; done
	}
	trap 'mesh_run_stop; exit 1' INT TERM HUP
	# Each host serves on its own clock; the probes once all listen.
	for _h in $names; do
		ip netns exec "$(mesh_ns "$_h")" "$(mesh_tool ntpreflect)" --quiet \
			--clock "sim:$(mesh_dir)/$_h.clock" udp://0.0.0.0:123 \
			</dev/null 2>"$_odir/$_h.reflect.err" &
		_rpids="$_rpids $!"
	done
	for _h in $names; do
		_n=$(mesh_ns "$_h")
		_end=$(($(date +%s) + 10))
		until ip netns exec "$_n" ss -Hlun 'sport = :123' | grep -q .; do
			[ "$(date +%s)" -lt "$_end" ] || { mesh_run_stop; die "ntpreflect on $_h did not start: $(tail -n 1 "$_odir/$_h.reflect.err")"; }
			sleep 0.01
		done
	done
	# Each relay afresh, so that its summary is of this run's frames.
	mesh_relays >"$_odir/.relays"
	while read -r _a _b; do
		mesh_relay_stop "$_a" "$_b"
		mesh_relay_start "$_a" "$_b" || { mesh_run_stop; die "$mesh_relay_err"; }
	done <"$_odir/.relays"
	# Directional load: a sink on TO, a flood from FROM until the probes
	# are done.
	rm -f "$_odir/.loads"
	for _v in $_loads; do
		_f=${_v%%:*} _t=${_v#*:} _t=${_t%%=*}
		ip netns exec "$(mesh_ns "$_t")" "$(mesh_tool loadgen)" --sink -d 0 \
			"udp://$(mesh_addr "$_f" "$_t"):9000" </dev/null >"$_odir/$_f-$_t.sink" 2>&1 &
		_lpids="$_lpids $!"
		ip netns exec "$(mesh_ns "$_f")" "$(mesh_tool loadgen)" -r "${_v#*=}" -d 0 \
			"udp://$(mesh_addr "$_f" "$_t"):9000" </dev/null >"$_odir/$_f-$_t.load" 2>&1 &
		_lpids="$_lpids $!"
		echo "$_f $_t $! ${_v#*=}" >>"$_odir/.loads"
	done
	# The probes once every load is what it says, not from its first
	# datagram: a sender on a busy machine takes a while to start and to
	# reach its rate, and a probe meanwhile would see a link with no load
	# (or a shaper's queue not yet built).  The event is the sender's
	# interval line with the sink's report (loadgen(1)): load arriving, and
	# on a link whose rate the load exceeds, datagrams lost, its queue
	# full.  The deadline is only for a load that never gets there.
	if [ -s "$_odir/.loads" ]; then
		_end=$(($(date +%s) + 60))
		while read -r _f _t _lp _lr; do
			eval "_rt=\${r_${_f}_$_t}"
			_full=0
			[ -z "$_rt" ] || [ "$(rate_bps "$_lr")" -le "$_rt" ] || _full=1
			until awk -v full=$_full '!/^#/ && $2 ~ /^[0-9]+$/ && $2 > 0 && (!full || $5 > 0) { ok = 1; exit } END { exit !ok }' \
				"$_odir/$_f-$_t.load" 2>/dev/null; do
				kill -0 "$_lp" 2>/dev/null || { mesh_run_stop; die "the load $_f->$_t ended: $(tail -n 1 "$_odir/$_f-$_t.load")"; }
				[ "$(date +%s)" -lt "$_end" ] ||
					{ mesh_run_stop; die "the load $_f->$_t: $([ $_full = 1 ] && echo "no queue on the link (nothing lost)" || echo "nothing at the sink") within 60 s"; }
				sleep 0.1
			done
		done <"$_odir/.loads"
	fi
	rm -f "$_odir/.loads"
	for _l in $mesh_list; do
		for _d in "${_l%-*} ${_l#*-}" "${_l#*-} ${_l%-*}"; do
			set -- $_d
			ip netns exec "$(mesh_ns "$1")" "$(mesh_tool ntpprobe)" --xleave -i "$_int" -d "$_dur" \
				--clock "sim:$(mesh_dir)/$1.clock" --server-clock "sim:$(mesh_dir)/$2.clock" \
				--pair "$1,$2" "udp://$(mesh_addr "$1" "$2"):123" \
				</dev/null >"$_odir/$1-$2.rec" 2>"$_odir/$1-$2.err" &
			_pids="$_pids $!"
		done
	done
	_rc=0
	for _p in $_pids; do wait "$_p" || _rc=1; done
	_pids=
	for _p in $_lpids; do kill "$_p" 2>/dev/null; wait "$_p"; done
	_lpids=
	for _p in $_rpids; do kill "$_p" 2>/dev/null; wait "$_p"; done
	_rpids=
	# The relays' summaries of the run (how exactly each delay was
	# held), then the relays again for the lab.
	while read -r _a _b; do
		mesh_relay_stop "$_a" "$_b"
		cp "$(mesh_dir)/$_a$_b.wiredelay.stats" "$_odir/$_a$_b.wiredelay.stats" ||
			_rc=1
		mesh_relay_start "$_a" "$_b" || die "$mesh_relay_err"
	done <"$_odir/.relays"
	rm -f "$_odir/.relays"
	trap - INT TERM HUP
	# What the run was, for whoever reads it without the lab.
	{
		echo "# ntpx-lab mesh-run: lab $lab, $hosts hosts, seed $seed, interval $_int, duration $_dur"
		echo "# host offset_us freq_ppb"
		cat "$(mesh_dir)/clocks"
		echo "# from to delay_ns rate_bps load"
		for _l in $mesh_list; do
			for _d in "${_l%-*} ${_l#*-}" "${_l#*-} ${_l%-*}"; do
				set -- $_d
				eval "_dl=\${d_$1_$2} _rt=\${r_$1_$2}"
				_ld=-
				for _v in $_loads; do
					case $_v in "$1:$2="*) _ld=${_v#*=} ;; esac
				done
				echo "$1 $2 ${_dl:-0} ${_rt:-0} $_ld"
			done
		done
	} >"$_odir/mesh.txt" || die "cannot write $_odir/mesh.txt"
	[ "$_rc" = 0 ] || die "a probe failed: see $_odir/*.err"
}

mesh_main() {
	case $cmd in
	up) mesh_up ;;
	down) mesh_down ;;
	status) ntpx_out mesh_status ;;
	env) ntpx_out mesh_env ;;
	exec) mesh_config; mesh_exec "$@" ;;
	mesh-run) mesh_config; mesh_run "$@" ;;
	*) usage_error "unknown command '$cmd' (up, down, status, env, exec, mesh-run)" ;;
	esac
}

# ntpx-lab's run() and fail_up() undo what up made: the mesh's.
teardown() { mesh_teardown; }
