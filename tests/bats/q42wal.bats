#!/usr/bin/env bats
# q42wal.bats -- q42wal(1): every command, option and exit status; tamper
# evidence byte by byte; proofs checked by tests/tools/rfc6962.py (an
# independent RFC 6962/9162 implementation in Python that also reads the
# volume format on its own); crash safety with 200 SIGKILLs.

load helpers

setup() {
	W=$(q42_bin q42wal)
	RFC="python3 $Q42_SRCDIR/tests/tools/rfc6962.py"
	T=$BATS_TEST_TMPDIR
	V=$T/v.q42
}

# rec N: one q42-record line with a quin.
rec() {
	printf '{"schema":"q42-record/1","text":"output %s","quin":"<urn:q42:s%s> <urn:q42:p> \\"o%s\\" .","provenance":[]}\n' "$1" "$1" "$1"
}

recs() { for i in $(seq 1 "$1"); do rec "$i"; done; }

keygen() {
	openssl genpkey -algorithm ed25519 -out "$T/$1.pem" 2>/dev/null
	openssl pkey -in "$T/$1.pem" -pubout -out "$T/$1.pub" 2>/dev/null
}

@test "--help, --version, usage errors exit 2" {
	run "$W" --help
	[ "$status" -eq 0 ]
	[[ "$output" == *"consistency VOL OLD NEW"* ]]
	run "$W" --version
	[ "$status" -eq 0 ]
	[[ "$output" == "q42wal "* ]]
	run "$W"
	[ "$status" -eq 2 ]
	run "$W" frobnicate x
	[ "$status" -eq 2 ]
	[[ "$output" == *"unknown command"* ]]
	run "$W" init
	[ "$status" -eq 2 ]
	run "$W" log "$V" --sign k.pem
	[ "$status" -eq 2 ]
	[[ "$output" == *"--sign does not apply to log"* ]]
	run "$W" commit "$V" --sync sometimes
	[ "$status" -eq 2 ]
	run "$W" commit "$V" --batch 0
	[ "$status" -eq 2 ]
	run "$W" show "$V" minus-one
	[ "$status" -eq 2 ]
	run "$W" init "$V" --quorum 1
	[ "$status" -eq 2 ]
	run "$W" verify "$V" --pub x.pub
	[ "$status" -eq 2 ]
}

@test "init creates a verifying volume, never overwrites one; missing volume is exit 3" {
	run "$W" init "$V"
	[ "$status" -eq 0 ]
	run "$W" verify "$V"
	[ "$status" -eq 0 ]
	[[ "$output" == "ok	1 frames	0 entries	e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855" ]]
	cp "$V" "$T/before"
	run "$W" init "$V"
	[ "$status" -eq 3 ]
	cmp "$V" "$T/before"
	only_files "$T" v.q42 before
	run "$W" verify "$T/absent.q42"
	[ "$status" -eq 3 ]
}

@test "commit prints index, hash, kind; independent reader agrees on every leaf and the root" {
	"$W" init "$V"
	run bash -c "$(declare -f rec recs); recs 5 | '$W' commit '$V'"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 10 ]
	[[ "${lines[0]}" =~ ^0$'\t'[0-9a-f]{64}$'\t'record$ ]]
	[[ "${lines[1]}" =~ ^1$'\t'[0-9a-f]{64}$'\t'quin$ ]]
	printf '%s\n' "${lines[@]}" | cut -f2 > "$T/acked"
	$RFC leaves "$V" > "$T/indep"
	diff "$T/acked" "$T/indep"
	root=$($RFC root "$V" | cut -d' ' -f2)
	run "$W" head "$V"
	[[ "$output" == *"\"size\":10,\"root\":\"$root\""* ]]
}

@test "commit: --sync full|normal|off and --batch all give the same entries" {
	for s in full normal off; do
		for b in 1 3; do
			rm -f "$V"
			"$W" init "$V"
			recs 7 | "$W" commit "$V" --sync $s --batch $b > "$T/out.$s.$b"
			"$W" verify "$V"
			cut -f3 "$T/out.$s.$b" > "$T/kinds.$s.$b"
			diff "$T/kinds.full.1" "$T/kinds.$s.$b"
		done
	done
	[ "$(wc -l < "$T/out.off.3")" -eq 14 ]
}

@test "commit: a bad record is reported with its line and skipped (exit 1), others commit" {
	"$W" init "$V"
	run bash -c "{ $(declare -f rec); rec 1; echo 'not json'; echo '{\"schema\":\"other\"}'; echo '{\"schema\":\"q42-record/1\",\"quin\":\"<bad\"}'; rec 2; } | '$W' commit '$V'"
	[ "$status" -eq 1 ]
	[[ "$output" == *"stdin line 2: record: not JSON"* ]]
	[[ "$output" == *"stdin line 3: record: \"schema\""* ]]
	[[ "$output" == *"stdin line 4: record: quin"* ]]
	run "$W" verify "$V"
	[[ "$output" == *"4 entries"* ]]
}

@test "commit --review without review keys is refused (exit 1)" {
	"$W" init "$V"
	run bash -c "$(declare -f rec); rec 1 | '$W' commit '$V' --review"
	[ "$status" -eq 1 ]
	[[ "$output" == *"no review keys"* ]]
}

@test "log, log --json and show" {
	"$W" init "$V"
	recs 2 | "$W" commit "$V" > /dev/null
	run "$W" log "$V"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 4 ]
	[[ "${lines[1]}" =~ ^1$'\t'quin$'\t'2$'\t'[0-9a-f]{64}$'\t'0$'\t'-$'\t'[0-9]+$ ]]
	"$W" log "$V" --json | json_lines
	run "$W" show "$V" 2
	[ "$status" -eq 0 ]
	[ "$output" = "$(rec 2)" ]
	run "$W" show "$V" 3
	[ "$output" = '<urn:q42:s2> <urn:q42:p> "o2" .' ]
	run "$W" show "$V" 4
	[ "$status" -eq 1 ]
}

@test "tamper evidence: inverting any byte makes verify fail (exit 1) and name the frame" {
	"$W" init "$V"
	recs 2 | "$W" commit "$V" > /dev/null
	size=$(stat -c %s "$V")
	# frame offsets from the independent reader's view of the layout
	offs=$(python3 - "$V" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read(); o = 64; out = []
while o < len(d):
    out.append(o); o += 52 + struct.unpack_from("<I", d, o)[0]
print(" ".join(map(str, out)))
PY
)
	read -r -a fo <<< "$offs"
	python3 - "$V" "$T" <<'PY'
import sys
d = open(sys.argv[1], "rb").read()
for i in range(len(d)):
    b = bytearray(d); b[i] ^= 0xFF
    open("%s/t%d.q42" % (sys.argv[2], i), "wb").write(b)
PY
	for ((i = 0; i < size; i++)); do
		run "$W" verify "$T/t$i.q42"
		[ "$status" -eq 1 ] || { echo "byte $i: status $status"; return 1; }
		if [ "$i" -lt 64 ]; then
			[[ "$output" == *header* ]] || { echo "byte $i: $output"; return 1; }
		else
			f=0
			while [ $((f + 1)) -lt ${#fo[@]} ] && [ "${fo[$((f + 1))]}" -le "$i" ]; do f=$((f + 1)); done
			[[ "$output" == *"frame $f at offset ${fo[$f]}"* ]] || { echo "byte $i: $output"; return 1; }
		fi
	done
}

@test "prove: every inclusion proof verifies independently; a wrong leaf does not" {
	"$W" init "$V"
	recs 7 | "$W" commit "$V" > /dev/null   # 14 entries
	for n in 1 2 3 7 8 13 14; do
		for ((i = 0; i < n; i++)); do
			"$W" prove "$V" $i --size $n > "$T/p.$n.$i.json"
		done
	done
	$RFC inclusion "$T"/p.*.json
	[ "$(ls "$T"/p.*.json | wc -l)" -eq 48 ]
	"$W" prove "$V" 3 > "$T/p.json"
	sed -i 's/"index":3/"index":4/' "$T/p.json"
	run $RFC inclusion "$T/p.json"
	[ "$status" -eq 1 ]
	run "$W" prove "$V" 14
	[ "$status" -eq 1 ]
	run "$W" prove "$V" 0 --size 15
	[ "$status" -eq 1 ]
}

@test "consistency: every proof verifies independently; roots match the independent reader" {
	"$W" init "$V"
	recs 7 | "$W" commit "$V" > /dev/null
	for n in 1 2 5 8 9 14; do
		for ((m = 1; m <= n; m++)); do
			"$W" consistency "$V" $m $n > "$T/c.$m.$n.json"
		done
	done
	$RFC consistency "$T"/c.*.json
	for m in 1 5 9 14; do
		r=$($RFC root "$V" $m | cut -d' ' -f2)
		grep -q "\"old_root\":\"$r\"" "$T/c.$m.14.json"
	done
	run "$W" consistency "$V" 0 3
	[ "$status" -eq 1 ]
	run "$W" consistency "$V" 5 3
	[ "$status" -eq 1 ]
	run "$W" consistency "$V" 3 15
	[ "$status" -eq 1 ]
}

@test "head --size, --sign; verify --head [--pub] accepts it and rejects a forged one" {
	keygen signer
	keygen other
	"$W" init "$V"
	recs 3 | "$W" commit "$V" > /dev/null
	"$W" head "$V" --size 4 --sign "$T/signer.pem" > "$T/h.json"
	grep -q '"size":4' "$T/h.json"
	run "$W" verify "$V" --head "$T/h.json" --pub "$T/signer.pub"
	[ "$status" -eq 0 ]
	run "$W" verify "$V" --head "$T/h.json" --pub "$T/other.pub"
	[ "$status" -eq 1 ]
	sed 's/"size":4/"size":5/' "$T/h.json" > "$T/forged.json"
	run "$W" verify "$V" --head "$T/forged.json"
	[ "$status" -eq 1 ]
	run "$W" head "$V" --size 7
	[ "$status" -eq 1 ]
	run "$W" head "$V" --sign "$T/absent.pem"
	[ "$status" -eq 3 ]
}

@test "recover: clean volume, torn tail cut (and --dry-run), corruption refused, --force" {
	"$W" init "$V"
	recs 3 | "$W" commit "$V" > /dev/null
	run "$W" recover "$V"
	[ "$status" -eq 0 ]
	[[ "$output" == "clean	7 frames	6 entries" ]]
	size=$(stat -c %s "$V")
	truncate -s $((size - 10)) "$V"
	run "$W" verify "$V"
	[ "$status" -eq 1 ]
	[[ "$output" == *"frame 6 at offset"*"truncated"* ]]
	run "$W" commit "$V" < /dev/null
	[ "$status" -eq 1 ]
	[[ "$output" == *"recover"* ]]
	run "$W" recover "$V" --dry-run
	[ "$status" -eq 0 ]
	[[ "$output" == would-cut* ]]
	[ "$(stat -c %s "$V")" -eq $((size - 10)) ]
	run "$W" recover "$V"
	[ "$status" -eq 0 ]
	[[ "$output" == cut$'\t'*$'\t'6$'\t'* ]]
	run "$W" verify "$V"
	[ "$status" -eq 0 ]
	[[ "$output" == *"5 entries"* ]]
	flip_byte "$V" 200
	run "$W" recover "$V"
	[ "$status" -eq 1 ]
	[[ "$output" == *"not a torn tail"* ]]
	run "$W" recover "$V" --force
	[ "$status" -eq 0 ]
	run "$W" verify "$V"
	[ "$status" -eq 0 ]
}

@test "export and import: tar and tar.zst round trip; damaged archives and existing targets refused" {
	"$W" init "$V"
	recs 3 | "$W" commit "$V" > /dev/null
	root=$($RFC root "$V" | cut -d' ' -f2)
	for a in vol.tar vol.tar.zst; do
		"$W" export "$V" "$T/$a"
		run "$W" import "$T/$a" "$T/in-$a.q42"
		[ "$status" -eq 0 ]
		[[ "$output" == "imported	6 entries	$root" ]]
		cmp "$V" "$T/in-$a.q42"
	done
	tar -tf "$T/vol.tar" | sort | tr '\n' ' ' | grep -q "head.json volume.q42"
	run "$W" import "$T/vol.tar" "$T/in-vol.tar.q42"
	[ "$status" -eq 3 ]
	# a volume that fails verification inside the archive
	mkdir "$T/x" && tar -xf "$T/vol.tar" -C "$T/x"
	flip_byte "$T/x/volume.q42" 300
	tar -cf "$T/bad.tar" -C "$T/x" volume.q42 head.json
	run "$W" import "$T/bad.tar" "$T/bad.q42"
	[ "$status" -eq 1 ]
	[ ! -e "$T/bad.q42" ]
	# a head that does not match
	tar -xf "$T/vol.tar" -C "$T/x"
	echo '{"size":6,"root":"00'"${root:2}"'"}' > "$T/x/head.json"
	tar -cf "$T/badhead.tar" -C "$T/x" volume.q42 head.json
	run "$W" import "$T/badhead.tar" "$T/bh.q42"
	[ "$status" -eq 1 ]
	[ ! -e "$T/bh.q42" ]
	run "$W" export "$T/absent.q42" "$T/z.tar"
	[ "$status" -eq 3 ]
	[ ! -e "$T/z.tar" ]
}

@test "review: pending records wait until K of N keys approve; rejection; wrong keys refused" {
	keygen a; keygen b; keygen c; keygen stranger
	run "$W" init "$V" --review-key "$T/a.pub" --review-key "$T/b.pub" --review-key "$T/c.pub" --quorum 2
	[ "$status" -eq 0 ]
	run bash -c "$(declare -f rec recs); recs 2 | '$W' commit '$V' --review"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == 1$'\t'*$'\t'pending ]]
	[[ "${lines[1]}" == 2$'\t'*$'\t'pending ]]
	run "$W" pending "$V"
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[0]}" == 1$'\t'open$'\t'0/2$'\t'0* ]]
	run "$W" approve "$V" 1 --key "$T/a.pem"
	[ "$status" -eq 0 ]
	[ "$output" = "1	open" ]
	run "$W" approve "$V" 1 --key "$T/a.pem"
	[ "$status" -eq 2 ]
	[[ "$output" == *"already voted"* ]]
	run "$W" approve "$V" 1 --key "$T/stranger.pem"
	[ "$status" -eq 2 ]
	run "$W" approve "$V" 1
	[ "$status" -eq 2 ]
	run "$W" approve "$V" 1 --key "$T/b.pem"
	[ "$status" -eq 0 ]
	[ "${lines[0]}" = "1	committed" ]
	[[ "${lines[1]}" == 0$'\t'*$'\t'record ]]
	[[ "${lines[2]}" == 1$'\t'*$'\t'quin ]]
	run "$W" show "$V" 0
	[ "$output" = "$(rec 1)" ]
	run "$W" reject "$V" 2 --key "$T/c.pem"
	[ "$output" = "2	open" ]
	run "$W" reject "$V" 2 --key "$T/b.pem"
	[ "$status" -eq 0 ]
	[ "$output" = "2	rejected" ]
	run "$W" approve "$V" 2 --key "$T/a.pem"
	[ "$status" -eq 2 ]
	[[ "$output" == *rejected* ]]
	run "$W" approve "$V" 0 --key "$T/a.pem"
	[ "$status" -eq 1 ]
	run "$W" pending "$V" --all
	[ "${#lines[@]}" -eq 2 ]
	[[ "${lines[1]}" == 2$'\t'rejected* ]]
	run "$W" verify "$V"
	[ "$status" -eq 0 ]
	[[ "$output" == *"2 entries"* ]]
	$RFC root "$V" > /dev/null
}

@test "review state (VOL.rev): pending and votes start from it; absent, stale, damaged or forged files never change an answer" {
	keygen a; keygen b; keygen c
	"$W" init "$V" --review-key "$T/a.pub" --review-key "$T/b.pub" --review-key "$T/c.pub" --quorum 2
	bash -c "$(declare -f rec recs); recs 3 | '$W' commit '$V' --review" > /dev/null
	run "$W" approve "$V" 1 --key "$T/a.pem"
	[ "$output" = "1	open" ]
	[ -f "$V.rev" ]
	run $RFC review "$V"
	[ "$status" -eq 0 ]
	rec 7 | "$W" commit "$V" > /dev/null
	run $RFC review "$V"
	[ "$status" -eq 0 ]
	cp "$V.rev" "$T/stale.rev"
	run "$W" approve "$V" 1 --key "$T/b.pem"
	[ "${lines[0]}" = "1	committed" ]
	want=$("$W" pending "$V" --all)
	[[ "$want" == *"1	committed	2/2	0	"* ]]
	# an older state file: the frames after its frame are read again
	cp "$T/stale.rev" "$V.rev"
	[ "$("$W" pending "$V" --all)" = "$want" ]
	run "$W" approve "$V" 1 --key "$T/c.pem"
	[ "$status" -eq 2 ]
	[[ "$output" == *"already committed"* ]]
	run "$W" approve "$V" 2 --key "$T/a.pem"
	[ "$output" = "2	open" ]
	run $RFC review "$V"
	[ "$status" -eq 0 ]
	want=$("$W" pending "$V" --all)
	# no state file: every frame is read, and the next writer writes one
	rm "$V.rev"
	[ "$("$W" pending "$V" --all)" = "$want" ]
	run "$W" approve "$V" 2 --key "$T/c.pem"
	[ "${lines[0]}" = "2	committed" ]
	run $RFC review "$V"
	[ "$status" -eq 0 ]
	want=$("$W" pending "$V" --all)
	# damaged (one byte): ignored, and verify says so without failing
	python3 -c 'import sys; p = sys.argv[1]; b = bytearray(open(p, "rb").read()); b[150] ^= 1; open(p, "wb").write(b)' "$V.rev"
	[ "$("$W" pending "$V" --all)" = "$want" ]
	run "$W" verify "$V"
	[ "$status" -eq 0 ]
	[[ "$output" == *"review state: "*"damaged"* ]]
	# forged with a correct CRC: a vote on frame 3 that the frames lack
	"$W" index "$V" --rebuild > /dev/null
	python3 - "$V.rev" "$Q42_SRCDIR/tests/tools" <<-'PY'
		import struct, sys
		sys.path.insert(0, sys.argv[2])
		from rfc6962 import crc32c
		p = sys.argv[1]
		b = bytearray(open(p, "rb").read())
		for i in range(struct.unpack_from("<Q", b, 128)[0]):
		    o = 136 + 112 * i
		    if struct.unpack_from("<Q", b, o)[0] == 3:
		        struct.pack_into("<II", b, o + 24, 1, 0)
		        struct.pack_into("<I", b, o + 32, 1)
		struct.pack_into("<I", b, len(b) - 4, crc32c(bytes(b[64:-4])))
		open(p, "wb").write(b)
	PY
	run "$W" verify "$V"
	[ "$status" -eq 1 ]
	[[ "$output" == *"pending frame 3 differs from the frames"* ]]
	run "$W" index "$V" --rebuild
	[ "$status" -eq 0 ]
	run "$W" verify "$V"
	[ "$status" -eq 0 ]
	run $RFC review "$V"
	[ "$status" -eq 0 ]
	[ "$("$W" pending "$V" --all)" = "$want" ]
}

@test "bind MODEL.p64; records of that model reference it; verify --outputs" {
	need_model gguf stories260K.gguf
	p64c=$(q42_bin p64c)
	"$p64c" "$gguf" -o "$T/m.p64" 2>/dev/null
	"$W" init "$V"
	run "$W" bind "$V" "$T/m.p64"
	[ "$status" -eq 0 ]
	[[ "$output" == 0$'\t'*$'\t'binding ]]
	run "$W" show "$V" 0
	p64sha=$(sha256sum "$T/m.p64" | cut -c1-64)
	srcsha=$(sha256sum "$gguf" | cut -c1-64)
	[[ "$output" == *"<urn:sha256:$p64sha> <https://q42.dev/ns/p64#source> <urn:sha256:$srcsha>"* ]]
	[[ "$output" == *"#tensor/token_embd.weight> <https://q42.dev/ns/p64#crc32c>"* ]]
	printf '{"schema":"q42-record/1","text":"x","model":{"container":"p64","sha256":"%s","source_sha256":"%s"}}\n' "$p64sha" "$srcsha" | "$W" commit "$V" > /dev/null
	run "$W" log "$V"
	[[ "${lines[1]}" == 1$'\t'record$'\t'2$'\t'*$'\t'0$'\t'-* ]]
	run "$W" verify "$V" --outputs
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "1	bound	0	$srcsha" ]]
	rec 9 | "$W" commit "$V" > /dev/null
	run "$W" verify "$V" --outputs
	[ "$status" -eq 1 ]
	[[ "$output" == *"unbound"* ]]
	run "$W" bind "$V" "$gguf"
	[ "$status" -eq 1 ]
}

@test "locking: one writer at a time (--no-wait exits 3); readers are never blocked" {
	"$W" init "$V"
	rec 1 | "$W" commit "$V" > /dev/null
	# the writer's lock held by this shell while the others run (a
	# reader that waited for it would run into the timeout, which is
	# long enough for a slow machine or valgrind)
	exec 9>>"$V"
	flock 9
	run "$W" commit "$V" --no-wait < /dev/null 9>&-
	[ "$status" -eq 3 ]
	[[ "$output" == *"locked"* ]]
	run timeout 60 "$W" verify "$V" 9>&-
	[ "$status" -eq 0 ]
	run timeout 60 "$W" log "$V" 9>&-
	[ "$status" -eq 0 ]
	exec 9>&-
	rec 2 | "$W" commit "$V" --no-wait > /dev/null
}

@test "crash safety: 200 SIGKILLs mid-commit, torn tails; every acknowledged entry survives recovery" {
	ct="$Q42_BUILDDIR/tests/tools/crashtest"
	[ -x "$ct" ] || { echo "crashtest not built"; return 1; }
	run "$ct" --kills 200 --q42wal "$W" --dir "$T"
	echo "$output"
	[ "$status" -eq 0 ]
	[[ "$output" == *"200 kills"* ]]
	run "$W" verify "$T/crash.q42"
	[ "$status" -eq 0 ]
}

@test "index: VOL.idx kept by writers; an old volume (no index) is read, then upgraded in place by the next writer or q42wal index" {
	"$W" init "$V"
	recs 4 | "$W" commit "$V" > /dev/null
	[ -f "$V.idx" ]
	run "$W" verify "$V"
	[ "$status" -eq 0 ]
	[ -z "$(echo "$output" | grep index)" ]
	# a volume written before the index existed: the same bytes, no VOL.idx
	rm "$V.idx"
	cp "$V" "$T/old.q42"
	run "$W" log "$V" --from 7
	[ "$status" -eq 0 ]
	[[ "$output" == 7$'\t'quin$'\t'* ]]
	"$W" prove "$V" 5 > "$T/p.json"
	$RFC inclusion "$T/p.json"
	run "$W" index "$V"
	[ "$status" -eq 0 ]
	[ "$output" = "index	0 entries matched	8 entries now" ]
	cmp "$V" "$T/old.q42"       # the volume itself is not rewritten
	run "$W" index "$V"
	[ "$output" = "index	8 entries matched	8 entries now" ]
	# the next commit to an old volume upgrades it the same way
	rm "$V.idx"
	rec 9 | "$W" commit "$V" > /dev/null
	run "$W" index "$V"
	[ "$output" = "index	10 entries matched	10 entries now" ]
	cmp -n "$(stat -c %s "$T/old.q42")" "$V" "$T/old.q42"
	# --from/--count; a damaged record (entry 3's, read for the proof of
	# entry 2, not at open) is never trusted: the reader falls back to the frames
	run "$W" log "$V" --from 8 --count 1
	[ "${#lines[@]}" -eq 1 ]
	[[ "${lines[0]}" == 8$'\t'record* ]]
	"$W" prove "$V" 2 > "$T/good.json"
	printf '\xff' | dd of="$V.idx" bs=1 seek=416 conv=notrunc 2>/dev/null
	"$W" prove "$V" 2 > "$T/p2.json" 2> "$T/err"
	cmp "$T/good.json" "$T/p2.json"
	grep -q "failed a check" "$T/err"
	run "$W" verify "$V"
	[ "$status" -eq 1 ]
	[[ "$output" == *"v.q42.idx: record"* ]]
	run "$W" index "$V" --rebuild
	[ "$output" = "index	0 entries matched	10 entries now" ]
	run "$W" verify "$V"
	[ "$status" -eq 0 ]
	$RFC index "$V"
}

@test "concurrency: 4 writers of single-record commits and readers during them; nothing acknowledged is lost, every reader sees a valid prefix" {
	"$W" init "$V"
	writer() {
		for i in $(seq 1 15); do
			rec "$1-$i" | "$W" commit "$V" || return 1
		done
	}
	reader() {
		local k=0
		while [ ! -e "$T/stop" ]; do
			"$W" verify "$V" > "$T/r$1.v.$k" 2>/dev/null || { echo "verify failed" > "$T/r$1.fail"; return 1; }
			"$W" head "$V" > "$T/r$1.h.$k" 2>/dev/null || { echo "head failed" > "$T/r$1.fail"; return 1; }
			k=$((k + 1))
		done
	}
	for r in 1 2; do reader $r & done
	pids=
	for w in 1 2 3 4; do writer $w > "$T/w$w.out" & pids="$pids $!"; done
	for p in $pids; do wait $p; done
	touch "$T/stop"
	wait
	[ ! -e "$T/r1.fail" ]
	[ ! -e "$T/r2.fail" ]
	# 60 records, 2 entries each: every acknowledged entry is at its index
	cat "$T"/w*.out | sort -n > "$T/acked"
	[ "$(wc -l < "$T/acked")" -eq 120 ]
	[ "$(cut -f1 "$T/acked" | sort -un | wc -l)" -eq 120 ]
	"$W" log "$V" | cut -f1,4 > "$T/log"
	cut -f1,2 "$T/acked" | diff - "$T/log"
	run "$W" verify "$V"
	[ "$status" -eq 0 ]
	[[ "$output" == *"120 entries"* ]]
	# every tree head a reader printed is the root of a prefix, and every
	# verify line names one too
	$RFC roots "$V" > "$T/roots"
	n=0
	for h in "$T"/r*.h.*; do
		line=$(sed 's/.*"size":\([0-9]*\),"root":"\([0-9a-f]*\)".*/\1 \2/' "$h")
		grep -qx "$line" "$T/roots" || { echo "head $h: $(cat "$h")"; return 1; }
		n=$((n + 1))
	done
	[ "$n" -gt 0 ]
	for v in "$T"/r*.v.*; do
		line=$(awk -F'\t' '{ split($3, a, " "); print a[1], $4 }' "$v")
		grep -qx "$line" "$T/roots" || { echo "verify $v: $(cat "$v")"; return 1; }
	done
	$RFC index "$V"
}

@test "proofs from the node store: 600 entries, index whole and cut short; every proof checks independently against the independent roots" {
	"$W" init "$V"
	python3 -c '
for i in range(600):
    print("{\"schema\":\"q42-record/1\",\"text\":\"n%d\"}" % i)' | "$W" commit "$V" --sync off --batch 97 > /dev/null
	$RFC index "$V"
	$RFC roots "$V" > "$T/roots"
	for cut in none 5000; do
		# cut: the index covers only the first entries, the rest come from the frames
		[ "$cut" = none ] || truncate -s "$cut" "$V.idx"
		for n in 1 2 3 255 256 257 511 512 599 600; do
			i=$(( (n * 7919) % n ))
			"$W" prove "$V" "$i" --size "$n" > "$T/p.$cut.$n.json"
			grep -q "\"root\":\"$(awk -v n="$n" '$1 == n { print $2 }' "$T/roots")\"" "$T/p.$cut.$n.json"
			"$W" prove "$V" $((n - 1)) --size "$n" > "$T/q.$cut.$n.json"
			m=$(( (n + 1) / 2 ))
			"$W" consistency "$V" "$m" "$n" > "$T/c.$cut.$n.json"
			grep -q "\"old_root\":\"$(awk -v n="$m" '$1 == n { print $2 }' "$T/roots")\"" "$T/c.$cut.$n.json"
		done
		$RFC inclusion "$T"/p.$cut.*.json "$T"/q.$cut.*.json
		$RFC consistency "$T"/c.$cut.*.json
		run "$W" head "$V"
		[[ "$output" == *"\"root\":\"$(awk '$1 == 600 { print $2 }' "$T/roots")\""* ]]
	done
	rec 1 | "$W" commit "$V" > /dev/null   # the writer completes the cut index
	$RFC index "$V"
}

@test "index forged with a valid CRC: verify names the record and field, head --sign refuses to sign it, index --rebuild restores it" {
	keygen signer
	"$W" init "$V"
	recs 4 | "$W" commit "$V" > /dev/null   # 8 entries: record 7 holds the 8-leaf root
	good=$("$W" head "$V")
	python3 - "$V.idx" "$Q42_SRCDIR/tests/tools" <<'PY'
import struct, sys
sys.path.insert(0, sys.argv[2])
from rfc6962 import crc32c
p = sys.argv[1]
d = bytearray(open(p, "rb").read())
off = 64 + 100 * 7 + 32 * (7 - 3)          # record 7: 3 nodes
n = 96 + 32 * 3
d[off + 96 + 64] ^= 0x01                   # its level-3 node
d[off + n:off + n + 4] = struct.pack("<I", crc32c(bytes(d[off:off + n])))
open(p, "wb").write(bytes(d))
PY
	run "$W" verify "$V"
	[ "$status" -eq 1 ]
	[[ "$output" == *"v.q42.idx: record 7 at offset 892: Merkle nodes differs from the volume's entry 7"* ]]
	run "$W" head "$V" --sign "$T/signer.pem"
	[ "$status" -eq 1 ]
	[[ "$output" == *"not signing"* ]]
	run "$W" index "$V" --rebuild
	[ "$status" -eq 0 ]
	run "$W" head "$V"
	[ "$output" = "$good" ]
	run "$W" head "$V" --sign "$T/signer.pem"
	[ "$status" -eq 0 ]
}
