/* runstat.c -- run a command and report its wall time and peak RSS.
 *
 * `make bench` measures q42run and llama.cpp's llamapeer the same way with
 * this: fork, exec, wait4, then one line "wall_ms=W maxrss_kib=R" (the
 * child's ru_maxrss) written to the file named by -o, so the command's own
 * output stays untouched. Exits with the command's status (128 + signal
 * when it was killed, 127 when it could not be run). A build helper, not
 * part of libq42.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	struct rusage ru;
	const char *out_path;
	FILE *out;
	double t0;
	pid_t pid;
	int status = 0;

	if (argc < 4 || strcmp(argv[1], "-o") != 0) {
		fputs("usage: runstat -o FILE COMMAND [ARG]...\n", stderr);
		return 2;
	}
	out_path = argv[2];
	t0 = now_ms();
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "runstat: fork: %s\n", strerror(errno));
		return 127;
	}
	if (pid == 0) {
		execvp(argv[3], argv + 3);
		fprintf(stderr, "runstat: %s: %s\n", argv[3], strerror(errno));
		_exit(127);
	}
	while (wait4(pid, &status, 0, &ru) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "runstat: wait4: %s\n", strerror(errno));
			return 127;
		}
	}
	out = fopen(out_path, "w");
	if (out == NULL) {
		fprintf(stderr, "runstat: %s: %s\n", out_path, strerror(errno));
		return 127;
	}
	fprintf(out, "wall_ms=%.3f maxrss_kib=%ld\n", now_ms() - t0, ru.ru_maxrss);
	if (fclose(out) != 0) {
		fprintf(stderr, "runstat: %s: write failed\n", out_path);
		return 127;
	}
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
