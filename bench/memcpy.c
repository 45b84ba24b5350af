/* memcpy bandwidth of this machine: the physical limit for `latkit frame --op copy`.
 * usage: memcpy BYTES ITERATIONS — prints GB/s (decimal) of the best of 5 rounds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    size_t bytes = argc > 1 ? strtoull(argv[1], NULL, 10) : 1382400;
    int iterations = argc > 2 ? atoi(argv[2]) : 1000;
    char *src = malloc(bytes), *dst = malloc(bytes);
    memset(src, 1, bytes);
    memset(dst, 0, bytes);
    double best = 0;
    for (int round = 0; round < 5; round++) {
        double t0 = now();
        for (int i = 0; i < iterations; i++) {
            memcpy(dst, src, bytes);
            __asm__ volatile("" : : "r"(dst) : "memory");
        }
        double rate = (double)bytes * iterations / (now() - t0) / 1e9;
        if (rate > best) best = rate;
    }
    printf("%.2f\n", best);
    return dst[bytes / 2] == 1 ? 0 : 1;
}
