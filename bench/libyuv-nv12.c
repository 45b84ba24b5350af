// Times libyuv's NV12 → RGBA conversion (NV12ToABGR: R, G, B, A byte order in memory, as
// latkit's RGBA) of a WIDTH x HEIGHT frame, ITERATIONS times, and prints the median
// milliseconds per frame. Built and run by bench/frame-vs-libyuv.sh.
#include <libyuv.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  int width = argc > 1 ? atoi(argv[1]) : 1280, height = argc > 2 ? atoi(argv[2]) : 720;
  int iterations = argc > 3 ? atoi(argv[3]) : 300;
  size_t luma = (size_t)width * height;
  uint8_t *src = malloc(luma * 3 / 2), *dst = malloc(luma * 4);
  double *ms = malloc(sizeof(double) * iterations);
  // The same test pattern as latkit's frame probe.
  for (size_t i = 0; i < luma * 3 / 2; i++) src[i] = (uint8_t)((i * 31) >> 3);
  for (int i = 0; i < iterations + 10; i++) {
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    NV12ToABGR(src, width, src + luma, width, dst, width * 4, width, height);
    clock_gettime(CLOCK_MONOTONIC, &b);
    if (i >= 10) ms[i - 10] = (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6;
  }
  qsort(ms, iterations, sizeof(double), by_value);
  printf("%.4f\n", ms[iterations / 2]);
  return dst[0] == 0x5a;  // keep the conversion observable
}
