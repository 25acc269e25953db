#!/bin/sh
# bench_wal.sh -- `make bench-wal`: q42wal at growing volume sizes, and
# sqlite3 with synchronous=FULL on the same disk in the same run.
#
# Grows one volume to each size in BENCH_WAL_SIZES (entries; default
# 1000 10000 100000 1000000) with bulk commits (--sync off, 10,000 records a
# batch), then at that size times, each through runstat (wall time and peak
# RSS of the process): BENCH_WAL_COMMITS single-record `q42wal commit`
# processes (--sync full: write, fsync, then the index records), `log` of
# the last entry, `prove` of a random entry, one streaming `verify`, and
# the same number of single-record commits in one process (--batch 1: one
# fsync per record), `pending` and the `approve` of records sent to review
# at that size (the volume has one review key, quorum 1), and `import` of
# the volume exported to a tar archive. sqlite3 (when installed) gets a table grown to the
# same row count and the same two kinds of one-row transactions under
# PRAGMA synchronous=FULL (default rollback journal): one sqlite3 process
# per transaction, and all in one process. Records are about 1 KiB. At
# each size the proofs printed (inclusion of random entries, and
# consistency with the previous size) are checked by the independent
# RFC 6962/9162 verifier tests/tools/rfc6962.py against the root that
# `verify` computed from every frame. Prints a Markdown table (also to
# $BENCH_WAL_DIR/results.md). A benchmark, not
# a test: nothing here is part of `make check`.
set -eu

: "${Q42WAL:?}" "${RUNSTAT:?}"
SIZES=${BENCH_WAL_SIZES:-1000 10000 100000 1000000}
COMMITS=${BENCH_WAL_COMMITS:-20}
DIR=${BENCH_WAL_DIR:-bench-wal.d}
SQLITE=$(command -v sqlite3 || true)
RFC="python3 $(dirname "$0")/rfc6962.py"

rm -rf "$DIR"
mkdir -p "$DIR"
V=$DIR/bench.q42
DB=$DIR/bench.sqlite
openssl genpkey -algorithm ed25519 -out "$DIR/key.pem" 2>/dev/null
openssl pkey -in "$DIR/key.pem" -pubout -out "$DIR/key.pub"
"$Q42WAL" init "$V" --review-key "$DIR/key.pub" --quorum 1
if [ -n "$SQLITE" ]; then
	"$SQLITE" "$DB" "CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT NOT NULL);"
fi

# records FROM TO: one q42-record line per number, about 1 KiB each
records() {
	python3 -c '
import sys
pad = "x" * 960
for i in range(int(sys.argv[1]), int(sys.argv[2])):
    sys.stdout.write("{\"schema\":\"q42-record/1\",\"text\":\"bench %d %s\",\"provenance\":[]}\n" % (i, pad))
' "$1" "$2"
}

# run NAME CMD...: time one command; appends "wall_ms maxrss_kib" to $DIR/NAME
run() {
	name=$1
	shift
	"$RUNSTAT" -o "$DIR/.rs" "$@" > /dev/null
	sed 's/wall_ms=\([0-9.]*\) maxrss_kib=\([0-9]*\)/\1 \2/' "$DIR/.rs" >> "$DIR/$name"
}

# median and max of column 1 / max of column 2 of a stat file
med() { sort -n "$1" | awk '{ a[NR] = $1 } END { printf "%.1f", a[int((NR + 1) / 2)] }'; }
rss() { awk 'BEGIN { m = 0 } { if ($2 > m) m = $2 } END { printf "%.1f", m / 1024 }' "$1"; }

now_ms() { python3 -c 'import time; print("%.1f" % (time.monotonic() * 1e3))'; }

have=0
{
	printf '| entries | volume MB | index MB | commit ms (median of %s processes) | commit RSS MB | log last ms | prove ms | prove RSS MB | verify s | verify RSS MB | q42wal commits/s (1 process) | pending ms | approve ms | approve RSS MB | import s | import RSS MB |' "$COMMITS"
	[ -n "$SQLITE" ] && printf ' sqlite3 ms (1 process per txn) | sqlite3 txns/s (1 process) |'
	printf '\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|'
	[ -n "$SQLITE" ] && printf -- '---|---|'
	printf '\n'
} > "$DIR/results.md"

for size in $SIZES; do
	# grow to size - COMMITS - COMMITS, so the measured commits land at size
	target=$((size - 2 * COMMITS))
	if [ "$target" -gt "$have" ]; then
		records "$have" "$target" | "$Q42WAL" commit "$V" --sync off --batch 10000 > /dev/null
		if [ -n "$SQLITE" ]; then
			"$SQLITE" "$DB" "WITH RECURSIVE c(x) AS (SELECT $have UNION ALL SELECT x + 1 FROM c WHERE x + 1 < $target) INSERT INTO t(body) SELECT 'bench ' || x || ' ' || hex(randomblob(480)) FROM c;"
		fi
		have=$target
	fi
	sync
	rm -f "$DIR"/commit "$DIR"/log "$DIR"/prove "$DIR"/verify "$DIR"/sq "$DIR"/sq1 \
		"$DIR"/pending "$DIR"/approve "$DIR"/import
	# records for review, approved after the commits below
	records "$have" $((have + 3)) | "$Q42WAL" commit "$V" --review | cut -f1 > "$DIR/.pend"
	i=0
	while [ "$i" -lt "$COMMITS" ]; do
		records "$have" $((have + 1)) > "$DIR/.rec"
		run commit sh -c "exec \"\$0\" commit \"\$1\" < \"\$2\"" "$Q42WAL" "$V" "$DIR/.rec"
		have=$((have + 1))
		i=$((i + 1))
	done
	records "$have" $((have + COMMITS)) > "$DIR/.recs"
	t0=$(now_ms)
	"$Q42WAL" commit "$V" --batch 1 < "$DIR/.recs" > /dev/null
	t1=$(now_ms)
	have=$((have + COMMITS))
	per_proc=$(awk -v a="$t0" -v b="$t1" -v n="$COMMITS" 'BEGIN { printf "%.0f", n * 1000 / (b - a) }')
	for k in 1 2 3 4 5; do
		run log "$Q42WAL" log "$V" --from $((have - 1))
		run prove "$Q42WAL" prove "$V" "$(python3 -c "import random; print(random.randrange($have))")"
	done
	run verify "$Q42WAL" verify "$V"
	for k in 1 2 3 4 5; do
		run pending "$Q42WAL" pending "$V"
	done
	for seq in $(cat "$DIR/.pend"); do
		run approve "$Q42WAL" approve "$V" "$seq" --key "$DIR/key.pem"
		have=$((have + 1))
	done
	rm -f "$DIR/x.tar" "$DIR/x.q42"
	"$Q42WAL" export "$V" "$DIR/x.tar"
	run import "$Q42WAL" import "$DIR/x.tar" "$DIR/x.q42"
	rm -f "$DIR/x.tar" "$DIR/x.q42"
	# the proofs, checked independently against the root verify computed
	root=$("$Q42WAL" verify "$V" | cut -f4)
	for k in 1 2 3 4 5; do
		"$Q42WAL" prove "$V" "$(python3 -c "import random; print(random.randrange($have))")" > "$DIR/p$k.json"
		grep -q "\"root\":\"$root\"" "$DIR/p$k.json"
	done
	$RFC inclusion "$DIR"/p?.json > /dev/null
	if [ -n "${prev:-}" ]; then
		"$Q42WAL" consistency "$V" "$prev" "$have" > "$DIR/c.json"
		grep -q "\"new_root\":\"$root\"" "$DIR/c.json"
		grep -q "\"old_root\":\"$prev_root\"" "$DIR/c.json"
		$RFC consistency "$DIR/c.json" > /dev/null
	fi
	prev=$have
	prev_root=$root
	vmb=$(du -m --apparent-size "$V" | cut -f1)
	imb=$(du -m --apparent-size "$V.idx" | cut -f1)
	line="| $have | $vmb | $imb | $(med "$DIR/commit") | $(rss "$DIR/commit") | $(med "$DIR/log") | $(med "$DIR/prove") | $(rss "$DIR/prove") | $(awk '{ printf "%.2f", $1 / 1000 }' "$DIR/verify") | $(rss "$DIR/verify") | $per_proc | $(med "$DIR/pending") | $(med "$DIR/approve") | $(rss "$DIR/approve") | $(awk '{ printf "%.2f", $1 / 1000 }' "$DIR/import") | $(rss "$DIR/import") |"
	if [ -n "$SQLITE" ]; then
		i=0
		while [ "$i" -lt "$COMMITS" ]; do
			run sq "$SQLITE" "$DB" "PRAGMA synchronous=FULL; INSERT INTO t(body) VALUES('one ' || hex(randomblob(480)));"
			i=$((i + 1))
		done
		{
			echo "PRAGMA synchronous=FULL;"
			i=0
			while [ "$i" -lt "$COMMITS" ]; do
				echo "INSERT INTO t(body) VALUES('one ' || hex(randomblob(480)));"
				i=$((i + 1))
			done
		} > "$DIR/.sql"
		t0=$(now_ms)
		"$SQLITE" "$DB" < "$DIR/.sql"
		t1=$(now_ms)
		sq1=$(awk -v a="$t0" -v b="$t1" -v n="$COMMITS" 'BEGIN { printf "%.0f", n * 1000 / (b - a) }')
		line="$line $(med "$DIR/sq") | $sq1 |"
	fi
	echo "$line" >> "$DIR/results.md"
	echo "$line"
done
echo
cat "$DIR/results.md"
