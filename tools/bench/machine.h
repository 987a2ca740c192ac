/*
 * machine.h - what the benchmark ran on: CPU, cores, memory, kernel,
 * compiler and flags, and how loaded the machine was.
 */
#ifndef PERCEPT_BENCH_MACHINE_H
#define PERCEPT_BENCH_MACHINE_H

typedef struct bench_machine {
    char cpu[128];
    int cores;
    double memory_gib;
    char kernel[256];
    char compiler[128];
    char cflags[256];
    double load_start[3], load_end[3];
    double clock_read_ns; /* the cost of one clock read */
} bench_machine;

/* Fill in everything but load_end. */
void bench_machine_probe(bench_machine *m);
/* The 1, 5 and 15 minute load averages, or -1 each when unknown. */
void bench_machine_load(double load[3]);

#endif
