/*
 * gs_test.h - the harness every CUnit suite of gpuscan runs under.
 *
 * gs_test_main() initialises MPI, lets the program register its suites, runs
 * them on every rank (the basic interface prints on rank 0 only), sums the
 * failure records over ranks (a failed suite initialisation counts) and
 * returns 0 only when no rank failed. A program whose tests need hardware
 * that is missing returns 77 (automake's SKIP) by passing skip_if_true.
 */
#ifndef GS_TEST_H
#define GS_TEST_H

#include <CUnit/CUnit.h>
#include <mpi.h>
#include <stdint.h>

/* Register the program's suites; return 0, or non-zero to fail. */
typedef int (*gs_test_register_fn)(void);

int gs_test_main(int argc, char **argv, gs_test_register_fn register_suites);

/* MPI_COMM_WORLD rank and size, valid inside tests. */
int gs_test_rank(void);
int gs_test_size(void);

/* A fresh seed per run (time and rank mixed), printed once on rank 0 so a
 * failure can be replayed with GS_TEST_SEED=... */
uint64_t gs_test_seed(void);

/* Counts every test uses: 0, 1, 2, primes, non-powers of two. */
extern const int64_t gs_test_sizes[];
extern const int gs_test_nsizes;

#endif
