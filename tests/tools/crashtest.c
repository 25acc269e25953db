/* crashtest.c -- kill committing q42wal processes with SIGKILL at random
 * moments and check that recovery keeps every acknowledged entry.
 *
 * Optionally the volume is first grown to --grow N entries. Each round
 * starts `q42wal commit --sync full` with a random batch size, feeds it
 * records, and kills it after a random delay (0..25 ms). Every "INDEX HASH
 * KIND" line read from its stdout before the kill is an acknowledgement.
 * The test then tears what a power cut could tear: the unsynced tail of
 * the volume, and on some rounds the end of its index (VOL.idx: cut at a
 * random byte, or junk appended). Then q42_wal_recover must succeed, every
 * entry acknowledged in any round must be at its index with its hash as
 * the indexed reader serves it, and (every 25 rounds, and at the end) the
 * volume must verify completely with an index that never contradicts it.
 * Used by `make check` (200 kills, from bats) and `make crashtest`
 * (CRASH_KILLS at CRASH_GROW entries). Prints one summary line; exit 0 or 1.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "formats/q42_digest.h"
#include "wal/q42_wal.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

typedef struct acked {
	uint64_t n, cap;
	uint8_t (*hash)[32];
	uint8_t *have;
} acked;

static int note_ack(acked *a, const char *line)
{
	char hex[65];
	uint64_t idx;
	uint8_t h[32];
	if (sscanf(line, "%" SCNu64 "\t%64s", &idx, hex) != 2 || q42_hex_decode(hex, h, 32, NULL))
		return -1;
	if (idx >= a->cap) {
		uint64_t cap = a->cap ? a->cap : 1024;
		while (cap <= idx)
			cap *= 2;
		a->hash = realloc(a->hash, cap * 32);
		a->have = realloc(a->have, cap);
		if (!a->hash || !a->have)
			return -1;
		memset(a->have + a->cap, 0, cap - a->cap);
		a->cap = cap;
	}
	if (a->have[idx] && memcmp(a->hash[idx], h, 32)) {
		fprintf(stderr, "crashtest: entry %" PRIu64 " acknowledged twice with different hashes\n", idx);
		return -1;
	}
	memcpy(a->hash[idx], h, 32);
	a->have[idx] = 1;
	if (idx + 1 > a->n)
		a->n = idx + 1;
	return 0;
}

/* The acknowledged lines in buf[0, n), the current line's start kept in
 * line (cap bytes, *rl used) across reads; 1 after a malformed one. */
static int take_acks(acked *a, const char *buf, size_t n, char *line, size_t cap, size_t *rl)
{
	for (size_t i = 0; i < n; i++) {
		if (buf[i] == '\n') {
			line[*rl] = 0;
			if (note_ack(a, line)) {
				fprintf(stderr, "crashtest: bad ack '%s'\n", line);
				return 1;
			}
			*rl = 0;
		} else if (*rl + 1 < cap) {
			line[(*rl)++] = buf[i];
		}
	}
	return 0;
}

/* Grow the volume to n entries quickly (one process, no fsync per batch). */
static int grow_volume(const char *vol, uint64_t n, q42_err *err)
{
	q42_wal w;
	q42_wal_ack acks[2];
	uint32_t na;
	int rc;
	if (n == 0)
		return Q42_OK;
	if ((rc = q42_wal_open(&w, vol, Q42_WAL_SYNC_NORMAL, false, err)) != Q42_OK)
		return rc;
	for (uint64_t i = 0; i < n && rc == Q42_OK; i++) {
		char rec[128];
		int len = snprintf(rec, sizeof rec,
				   "{\"schema\":\"q42-record/1\",\"text\":\"grown %" PRIu64 "\"}", i);
		rc = q42_wal_stage_record(&w, rec, (uint64_t)len, false, acks, &na, err);
		if (rc == Q42_OK && (i + 1) % 4096 == 0)
			rc = q42_wal_flush(&w, err);
	}
	int rc2 = q42_wal_close(&w, rc == Q42_OK ? err : NULL);
	return rc == Q42_OK ? rc2 : rc;
}

/* Cut the index at a random byte of its last 4 KiB, or append junk. */
static int tear_index(const char *idx)
{
	struct stat st;
	if (stat(idx, &st) != 0 || st.st_size <= 64)
		return 0;
	uint64_t size = (uint64_t)st.st_size;
	if (rand() % 2) {
		uint64_t span = size - 64 < 4096 ? size - 64 : 4096;
		return truncate(idx, (off_t)(size - 1 - (uint64_t)rand() % span)) == 0 ? 1 : -1;
	}
	int fd = open(idx, O_WRONLY | O_APPEND);
	uint8_t junk[300];
	size_t jn = 1 + (size_t)(rand() % (int)sizeof junk);
	for (size_t j = 0; j < jn; j++)
		junk[j] = (uint8_t)rand();
	int ok = fd >= 0 && write(fd, junk, jn) == (ssize_t)jn;
	if (fd >= 0)
		close(fd);
	return ok ? 1 : -1;
}

int main(int argc, char **argv)
{
	uint64_t kills = 200, seed = (uint64_t)time(NULL), grow = 0;
	const char *bin = NULL, *dir = ".";
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--kills"))
			kills = strtoull(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--q42wal"))
			bin = argv[i + 1];
		else if (!strcmp(argv[i], "--dir"))
			dir = argv[i + 1];
		else if (!strcmp(argv[i], "--seed"))
			seed = strtoull(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--grow"))
			grow = strtoull(argv[i + 1], NULL, 10);
	}
	if (!bin) {
		fprintf(stderr, "usage: crashtest --q42wal PATH [--kills N] [--dir D] [--seed S] [--grow N]\n");
		return 2;
	}
	srand((unsigned)seed);
	if (kills == 0)
		return 2;
	char vol[4096], idx[4200];
	snprintf(vol, sizeof vol, "%s/crash.q42", dir);
	snprintf(idx, sizeof idx, "%s.idx", vol);
	unlink(vol);
	unlink(idx);
	q42_vol_config cfg = {0};
	q42_err err;
	if (q42_wal_create(vol, &cfg, &err) != Q42_OK || grow_volume(vol, grow, &err) != Q42_OK) {
		fprintf(stderr, "crashtest: %s\n", err.msg);
		return 1;
	}
	uint64_t idx_tears = 0, verifies = 0, base_end;
	{
		/* what init and the growth made durable: never torn */
		struct stat bst;
		if (stat(vol, &bst) != 0)
			return perror("stat"), 1;
		base_end = (uint64_t)bst.st_size;
	}
	acked a = {0};
	uint64_t tears = 0, cuts = 0, cut_bytes = 0, sent_total = 0, rec_no = 0;
	double t0 = now_ms();
	signal(SIGPIPE, SIG_IGN);
	for (uint64_t k = 0; k < kills; k++) {
		int in[2], out[2];
		if (pipe(in) || pipe(out))
			return perror("pipe"), 1;
		char batch[16];
		snprintf(batch, sizeof batch, "%d", 1 + rand() % 8);
		pid_t pid = fork();
		if (pid == 0) {
			dup2(in[0], 0);
			dup2(out[1], 1);
			close(in[0]); close(in[1]); close(out[0]); close(out[1]);
			execl(bin, bin, "commit", vol, "--sync", "full", "--batch", batch, (char *)NULL);
			_exit(127);
		}
		close(in[0]);
		close(out[1]);
		fcntl(in[1], F_SETFL, O_NONBLOCK);
		double deadline = now_ms() + (double)(rand() % 2500) / 100.0;
		char rbuf[65536], line[8192];
		size_t rl = 0;
		char rec[512];
		size_t rec_len = 0, rec_off = 0;
		bool in_open = true;
		for (;;) {
			double left = deadline - now_ms();
			if (left <= 0)
				break;
			struct pollfd p[2] = {{.fd = out[0], .events = POLLIN},
					      {.fd = in_open ? in[1] : -1, .events = POLLOUT}};
			if (poll(p, 2, (int)left + 1) < 0)
				continue;
			if (p[1].revents & POLLOUT) {
				if (rec_off == rec_len) {
					rec_len = (size_t)snprintf(rec, sizeof rec,
						"{\"schema\":\"q42-record/1\",\"text\":\"crash round %" PRIu64
						" record %" PRIu64 " %0*d\",\"provenance\":[]}\n",
						k, rec_no++, rand() % 200, 0);
					rec_off = 0;
					sent_total++;
				}
				ssize_t w = write(in[1], rec + rec_off, rec_len - rec_off);
				if (w > 0)
					rec_off += (size_t)w;
				else if (w < 0 && errno != EAGAIN)
					in_open = false;
			}
			if (p[0].revents & (POLLIN | POLLHUP)) {
				ssize_t r = read(out[0], rbuf, sizeof rbuf);
				if (r <= 0)
					break;
				if (take_acks(&a, rbuf, (size_t)r, line, sizeof line, &rl))
					return 1;
			}
		}
		kill(pid, SIGKILL);
		int st;
		waitpid(pid, &st, 0);
		close(in[1]);
		/* Lines printed before the kill are still in the pipe. */
		for (;;) {
			ssize_t r = read(out[0], rbuf, sizeof rbuf);
			if (r <= 0)
				break;
			if (take_acks(&a, rbuf, (size_t)r, line, sizeof line, &rl))
				return 1;
		}
		close(out[0]);
		/* Simulate what a power cut adds to a kill: unsynced bytes after the
		 * last acknowledged frame are torn at a random offset, or, when
		 * there are none, a random partial frame is left at the end. */
		{
			q42_wal_reader v;
			if (q42_wal_reader_open(&v, vol, &err) == Q42_OK && !v.in_progress) {
				uint64_t keep = base_end;
				for (uint64_t i = 0; i < a.n && i < v.n_leaves; i++) {
					q42_vol_entry e;
					uint64_t seq;
					uint8_t h[32];
					if (!a.have[i])
						continue;
					if (q42_wal_reader_entry(&v, i, &e, &seq, h, &err) != Q42_OK) {
						fprintf(stderr, "crashtest: round %" PRIu64 ": %s\n", k, err.msg);
						return 1;
					}
					if (v.last_end > keep)
						keep = v.last_end;
				}
				struct stat vst;
				uint64_t size = stat(vol, &vst) == 0 ? (uint64_t)vst.st_size : 0;
				q42_wal_reader_close(&v);
				if (size > keep + 1) {
					if (truncate(vol, (off_t)(keep + 1 + (uint64_t)rand() % (size - keep - 1))))
						return perror("truncate"), 1;
					tears++;
				} else if (rand() % 2) {
					int fd = open(vol, O_WRONLY | O_APPEND);
					uint8_t junk[128];
					size_t jn = 1 + (size_t)(rand() % (int)sizeof junk);
					for (size_t j = 0; j < jn; j++)
						junk[j] = (uint8_t)rand();
					if (fd < 0 || write(fd, junk, jn) != (ssize_t)jn)
						return perror("append"), 1;
					close(fd);
					tears++;
				}
			} else {
				q42_wal_reader_close(&v);
			}
			if (rand() % 3 == 0) {
				int t = tear_index(idx);
				if (t < 0)
					return perror("index"), 1;
				idx_tears += (uint64_t)t;
			}
		}
		q42_wal_recovery rep;
		if (q42_wal_recover(vol, false, false, &rep, &err) != Q42_OK) {
			fprintf(stderr, "crashtest: round %" PRIu64 ": recover: %s\n", k, err.msg);
			return 1;
		}
		if (rep.cut) {
			cuts++;
			cut_bytes += rep.bytes;
		}
		q42_wal_reader v;
		if (q42_wal_reader_open(&v, vol, &err) != Q42_OK || v.in_progress) {
			fprintf(stderr, "crashtest: round %" PRIu64 ": open after recover: %s\n", k, err.msg);
			return 1;
		}
		for (uint64_t i = 0; i < a.n; i++) {
			q42_vol_entry e;
			uint64_t seq;
			uint8_t h[32];
			if (!a.have[i])
				continue;
			if (i >= v.n_leaves || q42_wal_reader_entry(&v, i, &e, &seq, h, &err) != Q42_OK ||
			    memcmp(h, a.hash[i], 32)) {
				fprintf(stderr, "crashtest: round %" PRIu64 ": acknowledged entry %" PRIu64
					" is %s after recovery\n", k, i,
					i >= v.n_leaves ? "missing" : "different");
				return 1;
			}
		}
		if (k % 25 == 24 || k + 1 == kills) {
			q42_wal_verify_report vr;
			uint8_t root[32];
			if (q42_wal_verify(vol, Q42_VOL_NONE, NULL, NULL, &vr, &err) != Q42_OK || vr.idx_bad ||
			    q42_wal_reader_root(&v, v.n_leaves, root, &err) != Q42_OK ||
			    vr.n_leaves != v.n_leaves || memcmp(root, vr.root, 32)) {
				fprintf(stderr, "crashtest: round %" PRIu64 ": verify: %s %s\n", k,
					err.msg, vr.idx_msg);
				return 1;
			}
			verifies++;
		}
		q42_wal_reader_close(&v);
	}
	uint64_t n_acked = 0;
	for (uint64_t i = 0; i < a.n; i++)
		n_acked += a.have[i];
	printf("crashtest: %" PRIu64 " kills on a volume grown to %" PRIu64 " entries, %" PRIu64
	       " records sent, %" PRIu64 " entries acknowledged and all present after recovery, %" PRIu64
	       " tails torn by the test, %" PRIu64 " cut by recovery (%" PRIu64 " bytes), %" PRIu64
	       " index ends torn, %" PRIu64 " full verifies, seed %" PRIu64 ", %.1f s\n",
	       kills, grow, sent_total, n_acked, tears, cuts, cut_bytes, idx_tears, verifies, seed,
	       (now_ms() - t0) / 1e3);
	free(a.hash);
	free(a.have);
	return 0;
}
